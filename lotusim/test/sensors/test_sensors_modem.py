"""The acoustic modem queue (lotusim_sensors.modem): who hears a transmission, when it arrives, what a checkpoint
keeps, without ROS."""

from __future__ import annotations

import numpy as np
import pytest

from lotusim_sensors.banks import SensorBanks
from lotusim_sensors.checkpoint import ModemInFlight
from lotusim_sensors.modem import ModemQueue
from lotusim_sensors.roster import Roster
from lotusim_sensors.suite import parse_suite

C = 1500.0  # sound speed, m/s


def fleet(positions: dict[str, list[float]], with_modem: set[str], **modem):
    """A roster of vessels at `positions` (m, ENU); the `with_modem` ones carry a modem (parameters `modem`)."""
    roster = Roster()
    slots = roster.update("w0", tuple(positions)).slots
    n = len(positions)
    pos = np.array(list(positions.values()), dtype=float)
    roster.set_state(slots, pos, np.tile([0.0, 0.0, 0.0, 1.0], (n, 1)), np.zeros((n, 6)), np.zeros((n, 6)), None)
    banks = SensorBanks(("modem",), roster.capacity)
    params = parse_suite({"modem": modem}, "test")["modem"]
    for name in with_modem:
        banks["modem"].configure(roster.slot_of[name], params, 1, name, 0)
    return roster, banks["modem"]


def test_a_broadcast_reaches_every_other_modem_range_over_sound_speed_later():
    roster, bank = fleet({"a": [0, 0, 0], "b": [300, 400, 0], "c": [0, 150, 0], "d": [10, 0, 0]}, {"a", "b", "c"})
    queue = ModemQueue()
    assert queue.send(bank, roster, "a", "", b"hi", 1, 1_000_000_000, C) is None
    assert len(queue) == 2 and bank.counter[roster.slot_of["a"]] == 1  # d has no modem
    assert list(queue.arrived(1_099_999_999)) == []  # c: 150 m = 0.1 s
    (to_c,) = queue.arrived(1_100_000_000)
    assert (to_c.receiver, to_c.source, to_c.destination, to_c.data) == ("c", "a", "", b"hi")
    assert to_c.range_m == pytest.approx(150.0) and to_c.travel_time_s == pytest.approx(0.1)
    (to_b,) = queue.arrived(2_000_000_000)  # b: 500 m = 1/3 s
    assert to_b.receiver == "b" and to_b.t_rx_ns == 1_000_000_000 + round(1e9 * 500 / C)
    assert len(queue) == 0


def test_a_message_to_a_vessel_without_modem_says_so_and_one_from_a_vessel_without_modem_is_ignored():
    roster, bank = fleet({"a": [0, 0, 0], "b": [10, 0, 0], "d": [20, 0, 0]}, {"a", "b"})
    queue = ModemQueue()
    assert queue.send(bank, roster, "a", "d", b"x", 1, 0, C) == "a modem/tx: no modem on 'd'"
    assert queue.send(bank, roster, "d", "", b"x", 1, 0, C) is None
    assert queue.send(bank, roster, "ghost", "", b"x", 1, 0, C) is None
    assert len(queue) == 0
    assert queue.send(bank, roster, "a", "b", b"x", 1, 0, C) is None and len(queue) == 1


def test_messages_beyond_the_maximum_range_are_lost():
    roster, bank = fleet({"a": [0, 0, 0], "near": [50, 0, 0], "far": [3000, 0, 0]}, {"a", "near", "far"})
    queue = ModemQueue()
    queue.send(bank, roster, "a", "", b"x", 1, 0, C)
    assert [m.receiver for m in queue.in_flight()] == ["near"]  # far: 3000 m > 2000 m (default max_range_m)


def test_loss_follows_the_drop_probability_between_reliable_and_maximum_range():
    """Half-way between 100 m (reliable) and 300 m (max) with drop_probability_min 0: lost half of the time."""
    roster, bank = fleet({"a": [0, 0, 0], "b": [200, 0, 0]}, {"a", "b"}, reliable_range_m=100.0, max_range_m=300.0)
    queue = ModemQueue()
    for _ in range(2000):
        queue.send(bank, roster, "a", "b", b"x", 1, 0, C)
    assert len(queue) / 2000 == pytest.approx(0.5, abs=4 * np.sqrt(0.25 / 2000))


def test_arrivals_keep_send_order_on_ties_and_drop_and_clear_forget_messages():
    queue = ModemQueue()
    for seq, (t, receiver) in enumerate([(5, "b"), (3, "c"), (5, "a"), (3, "b")]):
        queue.push(ModemInFlight(t, seq, receiver, "s", "", b"", 0.0, 0.0))
    assert [(m.t_rx_ns, m.receiver) for m in queue.in_flight()] == [(3, "c"), (3, "b"), (5, "b"), (5, "a")]
    queue.drop("b")
    assert [m.receiver for m in queue.arrived(10)] == ["c", "a"]
    queue.push(ModemInFlight(1, 9, "a", "s", "", b"", 0.0, 0.0))
    queue.clear()
    assert len(queue) == 0


def test_restore_replaces_the_messages_in_flight_and_the_sequence():
    roster, bank = fleet({"a": [0, 0, 0], "b": [15, 0, 0], "c": [30, 0, 0]}, {"a", "b", "c"})
    queue = ModemQueue()
    queue.send(bank, roster, "a", "", b"one", 1, 0, C)
    saved, seq = queue.in_flight(), queue.next_seq
    assert seq == 2 and [m.seq for m in saved] == [0, 1]
    other = ModemQueue()
    other.restore(saved, seq)
    assert other.in_flight() == saved and other.next_seq == 2
    other.send(bank, roster, "b", "a", b"two", 1, 0, C)
    # arrival order: a -> b (15 m, seq 0) and b -> a (15 m, seq 2) before a -> c (30 m, seq 1)
    assert [(m.seq, m.receiver) for m in other.in_flight()] == [(0, "b"), (2, "a"), (1, "c")]
