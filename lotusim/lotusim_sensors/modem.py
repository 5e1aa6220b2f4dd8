"""Acoustic modem: which vessels receive a transmission, and the messages in flight until they arrive (ROS-free).

A message a vessel sends (its modem/tx) reaches every other live vessel with a modem (or only its destination)
with the loss probability of lotusim_sensors.acoustic.modem_delivery over their range, range / sound speed later
(sim time, integer ns). Loss draws: one uniform per link from the stream (seed, source, "modem-><receiver>") at
the source's send number (its modem counter). Messages in flight are kept in arrival order (ties: send order) as
lotusim_sensors.checkpoint.ModemInFlight, which is also what a checkpoint saves.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator

import numpy as np

from lotusim_sensors import acoustic, noise
from lotusim_sensors.banks import NS_PER_S, Bank
from lotusim_sensors.checkpoint import ModemInFlight
from lotusim_sensors.roster import Roster


class ModemQueue:
    """Modem messages in flight, by arrival time (sim ns) then sequence number."""

    def __init__(self) -> None:
        self._heap: list[tuple[int, int, ModemInFlight]] = []
        self.next_seq = 0  # sequence number of the next message queued

    def __len__(self) -> int:
        return len(self._heap)

    def send(
        self, bank: Bank, fleet: Roster, source: str, destination: str, data: bytes, seed: int, t_ns: int,
        sound_speed_mps: float,
    ) -> str | None:  # fmt: skip
        """Queue the deliveries of a message `source` sends at t_ns (`destination` "" = every modem). Returns why
        nothing was queued when the destination has no modem (None otherwise: sent, lost or nobody to hear)."""
        src = fleet.slot_of.get(source)
        if src is None or not bank.present[src]:
            return None
        receivers = np.flatnonzero(bank.present & fleet.alive)
        receivers = receivers[receivers != src]
        if destination:
            receivers = receivers[[fleet.names[r] == destination for r in receivers.tolist()]]
            if receivers.size == 0:
                return f"{source} modem/tx: no modem on {destination!r}"
        if receivers.size == 0:
            return None
        seq = int(bank.counter[src])
        bank.counter[src] += np.uint64(1)
        names = [fleet.names[r] for r in receivers.tolist()]
        keys = np.array([noise.stream_key(seed, source, f"modem->{name}") for name in names], dtype=np.uint64)
        u = noise.uniform(keys, np.full(len(receivers), seq), 1)[:, 0]
        n, p = len(receivers), bank.params
        ok, rng, delay = acoustic.modem_delivery(
            fleet.pos[src], fleet.pos[receivers], np.full(n, p["reliable_range_m"][src]),
            np.full(n, p["max_range_m"][src]), np.full(n, p["drop_probability_min"][src]), u, sound_speed_mps,
        )  # fmt: skip
        for name, delivered, dist, dt in zip(names, ok.tolist(), rng.tolist(), delay.tolist(), strict=True):
            if delivered:
                t_rx = t_ns + int(round(dt * NS_PER_S))
                self.push(ModemInFlight(t_rx, self.next_seq, name, source, destination, data, dist, dt))
                self.next_seq += 1
        return None

    def push(self, msg: ModemInFlight) -> None:
        """Queue one message (its t_rx_ns and seq order it)."""
        heapq.heappush(self._heap, (msg.t_rx_ns, msg.seq, msg))

    def arrived(self, t_ns: int) -> Iterator[ModemInFlight]:
        """Take out, in order, the messages that arrive at or before t_ns."""
        while self._heap and self._heap[0][0] <= t_ns:
            yield heapq.heappop(self._heap)[2]

    def drop(self, receiver: str) -> None:
        """Forget the messages on their way to `receiver` (it left the fleet)."""
        self._heap = [item for item in self._heap if item[2].receiver != receiver]
        heapq.heapify(self._heap)

    def clear(self) -> None:
        """Forget every message in flight (sim time went back); sequence numbers keep counting."""
        self._heap.clear()

    def in_flight(self) -> list[ModemInFlight]:
        """The messages in flight in arrival order (for a checkpoint)."""
        return [item[2] for item in sorted(self._heap, key=lambda item: item[:2])]

    def restore(self, messages: list[ModemInFlight], next_seq: int) -> None:
        """Replace the messages in flight and the next sequence number (from a checkpoint)."""
        self._heap = [(m.t_rx_ns, m.seq, m) for m in messages]
        heapq.heapify(self._heap)
        self.next_seq = next_seq
