"""Per-slot arrays of one sensor kind: presence, schedule, noise stream, parameters, state (ROS-free).

Rows are the slots of lotusim_sensors.roster. Time is sim time in integer nanoseconds. Schedule: a sensor of
period T samples at the first state after it is configured, then at the first state whose stamp reaches the
previous due time + T (a 50 Hz IMU on a 100 Hz physics step samples exactly every second step; a late state
restarts the grid from its own stamp). Noise: one counter-based stream per vessel and sensor
(lotusim_sensors.noise), sample number = the sensor's counter, which each sample advances by one.
State: IMU accelerometer and gyro biases (m/s^2, rad/s, body FLU), the GPS "last sample had a fix" flag.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from lotusim_sensors import imu, noise
from lotusim_sensors.checkpoint import STATE_KEYS, SensorRows
from lotusim_sensors.roster import grown
from lotusim_sensors.suite import numeric_keys

NS_PER_S = 1_000_000_000


@dataclass
class Bank:
    """Per-slot arrays of one sensor kind."""

    kind: str
    capacity: int
    present: np.ndarray = field(init=False)
    next_due_ns: np.ndarray = field(init=False)
    last_ns: np.ndarray = field(init=False)  # -1: no sample since configured (or since sim time went back)
    counter: np.ndarray = field(init=False)
    key: np.ndarray = field(init=False)
    params: dict[str, np.ndarray] = field(init=False)  # lotusim_sensors.suite.numeric_keys
    state: dict[str, np.ndarray] = field(default_factory=dict)
    extra: dict[int, dict[str, Any]] = field(default_factory=dict)  # non-numeric parameters per slot

    def __post_init__(self) -> None:
        n = self.capacity
        self.present = np.zeros(n, dtype=bool)
        self.next_due_ns = np.zeros(n, dtype=np.int64)
        self.last_ns = np.full(n, -1, dtype=np.int64)
        self.counter = np.zeros(n, dtype=np.uint64)
        self.key = np.zeros(n, dtype=np.uint64)
        self.params = {k: np.zeros(n) for k in numeric_keys(self.kind)}
        widths = STATE_KEYS.get(self.kind, {})  # key -> width, 0: one bool per slot
        self.state = {k: np.zeros((n, w)) if w else np.zeros(n, dtype=bool) for k, w in widths.items()}

    def grow(self, capacity: int) -> None:
        """Enlarge every per-slot array to `capacity` rows (keeping the existing rows)."""
        for name in ("present", "next_due_ns", "last_ns", "counter", "key"):
            setattr(self, name, grown(getattr(self, name), capacity))
        self.params = {k: grown(v, capacity) for k, v in self.params.items()}
        self.state = {k: grown(v, capacity) for k, v in self.state.items()}
        self.capacity = capacity

    def configure(self, slot: int, params: Mapping[str, Any], seed: int, vessel: str, t_ns: int) -> None:
        """Start this sensor of `vessel` at `slot` with its parsed parameters (lotusim_sensors.suite): due now,
        counter 0, noise key of (seed, vessel, kind); an IMU draws its turn-on biases, a GPS has no fix yet."""
        self.present[slot] = True
        self.next_due_ns[slot] = t_ns
        self.last_ns[slot] = -1
        self.counter[slot] = 0
        self.key[slot] = noise.stream_key(seed, vessel, self.kind)
        for key, column in self.params.items():
            column[slot] = params[key]
        self.extra[slot] = {k: v for k, v in params.items() if k not in self.params}
        if self.kind == "imu":
            n6 = noise.normal(np.array([noise.stream_key(seed, vessel, "imu/turn_on")]), [0], 6)
            a, g = imu.turn_on_bias({k: v[slot : slot + 1] for k, v in self.params.items()}, n6)
            self.state["accel_bias"][slot], self.state["gyro_bias"][slot] = a[0], g[0]
        elif self.kind == "gps":
            self.state["had_fix"][slot] = False

    def clear(self, slot: int) -> bool:
        """Remove this sensor from `slot`; whether it was there."""
        if not self.present[slot]:
            return False
        self.present[slot] = False
        self.extra.pop(slot, None)
        return True

    def due(self, slots: np.ndarray, t_ns: int) -> np.ndarray:
        """The slots among `slots` that carry this sensor and are due at `t_ns`."""
        return slots[self.present[slots] & (self.next_due_ns[slots] <= t_ns)]

    def take(self, due: np.ndarray) -> dict[str, np.ndarray]:
        """The numeric parameters of the `due` slots, {key: (N,) array}."""
        return {k: v[due] for k, v in self.params.items()}

    def draw(self, due: np.ndarray, dim: int) -> np.ndarray:
        """dim standard normals per due slot from its stream at its current sample number, (N, dim)."""
        return noise.normal(self.key[due], self.counter[due], dim)

    def schedule(self, due: np.ndarray, t_ns: int, period_s: np.ndarray | float) -> None:
        """Record a sample of the `due` slots at t_ns; the next is due one period (s, >= 1 ns) after the previous
        due time, or one period after t_ns if that is already past."""
        period_ns = np.maximum(np.round(period_s * NS_PER_S).astype(np.int64), 1)
        nxt = self.next_due_ns[due] + period_ns
        self.next_due_ns[due] = np.where(nxt <= t_ns, t_ns + period_ns, nxt)
        self.last_ns[due] = t_ns
        self.counter[due] += np.uint64(1)

    def restart_after(self, t_ns: int) -> None:
        """Sim time went back to t_ns (a reset): nothing is due later than t_ns, no sample is remembered."""
        self.next_due_ns[:] = np.minimum(self.next_due_ns, t_ns)
        self.last_ns[:] = -1


class SensorBanks(dict[str, Bank]):
    """One bank per sensor kind (kind -> Bank), all with the same slots, and the saved sensor states of a restored
    checkpoint not yet applied (`saved`: vessel -> kind -> row, lotusim_sensors.checkpoint.SensorState.per_vessel)."""

    def __init__(self, kinds: tuple[str, ...], capacity: int) -> None:
        super().__init__((kind, Bank(kind, capacity)) for kind in kinds)
        self.saved: dict[str, dict[str, dict]] = {}

    def grow(self, capacity: int) -> None:
        """Enlarge every bank to `capacity` slots if it has fewer."""
        for bank in self.values():
            if bank.capacity < capacity:
                bank.grow(capacity)

    def clear(self, slot: int) -> list[str]:
        """Remove every sensor of `slot`; the kinds it had."""
        return [kind for kind, bank in self.items() if bank.clear(slot)]

    def start_at(self, slot: int, t_ns: int) -> None:
        """The vessel at `slot`, configured before any state of it (from its roster), has its first state at t_ns:
        its sensors are first due then (not earlier: their periods count from the first sample), or at their
        restored due times if later."""
        for bank in self.values():
            if bank.present[slot]:
                bank.next_due_ns[slot] = max(int(bank.next_due_ns[slot]), t_ns)

    def restart_after(self, t_ns: int) -> None:
        """Sim time went back to t_ns: Bank.restart_after for every kind."""
        for bank in self.values():
            bank.restart_after(t_ns)

    def capture(self, names: list[str | None]) -> dict[str, SensorRows]:
        """capture_rows of every kind."""
        return capture_rows(self, names)

    def hold(self, saved: dict[str, dict[str, dict]]) -> None:
        """Keep these saved states (replacing those held) until their vessels' sensors are configured."""
        self.saved.clear()
        self.saved.update(saved)

    def apply_saved(self, name: str, slot: int) -> None:
        """Give vessel `name` (at `slot`) its held state, once every saved sensor of it is configured there."""
        if name in self.saved and apply_saved(self, slot, self.saved[name]):
            del self.saved[name]


def capture_rows(banks: Mapping[str, Bank], names: list[str | None]) -> dict[str, SensorRows]:
    """Checkpoint rows (lotusim_sensors.checkpoint) of every configured sensor of the named slots (names[slot],
    None: a free slot), per kind, in slot order."""
    named = np.array([n is not None for n in names])
    kinds = {}
    for kind, bank in banks.items():
        slots = np.flatnonzero(named & bank.present[: len(named)])
        if slots.size:
            kinds[kind] = SensorRows(
                [names[s] for s in slots.tolist()], bank.next_due_ns[slots], bank.last_ns[slots],
                bank.counter[slots], {k: v[slots] for k, v in bank.state.items()},
            )  # fmt: skip
    return kinds


def apply_saved(banks: Mapping[str, Bank], slot: int, saved: Mapping[str, Mapping]) -> bool:
    """Give `slot` its saved rows {kind: {"next_due_ns", "last_ns", "counter", "state": {key: row}}}
    (lotusim_sensors.checkpoint.SensorState.per_vessel) if every saved kind is configured there; whether done."""
    if not all(banks[kind].present[slot] for kind in saved):
        return False
    for kind, s in saved.items():
        bank = banks[kind]
        bank.next_due_ns[slot], bank.last_ns[slot], bank.counter[slot] = s["next_due_ns"], s["last_ns"], s["counter"]
        for key, value in s["state"].items():
            bank.state[key][slot] = value
    return True
