"""The sensor layer's fleet table (lotusim_sensors.roster) and the sources of a vessel's sensor suite
(lotusim_sensors.suite_sources: workers' rosters and vessels_yaml), without ROS."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from lotusim_sensors.roster import Roster, shape_errors
from lotusim_sensors.suite_sources import SuiteSources, entries_of, parse_vessels_yaml, spawn_sensors


def test_vessels_take_slots_in_order_and_a_freed_slot_is_reused():
    roster = Roster(capacity=4)
    first = roster.update("w0", ("a", "b", "c"))
    assert first.slots.tolist() == [0, 1, 2]
    assert first.added == [("a", 0), ("b", 1), ("c", 2)] and first.removed == []
    assert roster.alive.tolist() == [True, True, True, False]
    second = roster.update("w0", ("a", "c", "d"))  # b leaves, d arrives in b's slot
    assert second.removed == [("b", 1)] and second.added == [("d", 1)]
    assert second.slots.tolist() == [0, 2, 1]
    assert roster.names == ["a", "d", "c", None]
    assert roster.slot_of == {"a": 0, "c": 2, "d": 1}


def test_an_unchanged_list_returns_the_same_slots_without_changes():
    roster = Roster()
    slots = roster.update("w0", ("a", "b")).slots
    again = roster.update("w0", ("a", "b"))
    assert again.slots is slots and again.added == [] and again.removed == []


def test_capacity_doubles_and_keeps_the_state_rows():
    roster = Roster(capacity=2)
    slots = roster.update("w0", ("a", "b")).slots
    q = np.array([[0.0, 0.0, np.sin(0.3), np.cos(0.3)]] * 2)
    roster.set_state(slots, np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]), q, np.ones((2, 6)), np.zeros((2, 6)), None)
    update = roster.update("w0", ("a", "b", "c"))
    assert roster.capacity == 4 and update.added == [("c", 2)]
    np.testing.assert_array_equal(roster.pos[:2], [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    np.testing.assert_array_equal(roster.quat[2:], [[0.0, 0.0, 0.0, 1.0]] * 2)  # new rows: identity attitude
    assert roster.alive.tolist() == [True, True, True, False]


def test_a_vessel_moving_to_another_worker_keeps_its_slot():
    """The old worker's next list no longer has it: it stays, owned by the new worker, until that one drops it."""
    roster = Roster()
    roster.update("w0", ("a", "b"))
    moved = roster.update("w1", ("b",))
    assert moved.added == [] and moved.slots.tolist() == [1] and roster.owner["b"] == "w1"
    assert roster.update("w0", ("a",)).removed == []
    assert roster.update("w1", ()).removed == [("b", 1)]
    assert "b" not in roster.slot_of


def test_state_rows_with_non_finite_values_or_no_attitude_are_skipped_and_quaternions_normalised():
    roster = Roster()
    slots = roster.update("w0", ("a", "b", "c")).slots
    pos = np.array([[1.0, 0.0, 0.0], [np.nan, 0.0, 0.0], [3.0, 0.0, 0.0]])
    quat = np.array([[0.0, 0.0, 0.0, 2.0], [0.0, 0.0, 0.0, 1.0], [0.0, 0.0, 0.0, 0.1]])  # c: norm 0.1 < 0.5
    current = np.array([[0.1, 0.2, 0.0]] * 3)
    kept = roster.set_state(slots, pos, quat, np.zeros((3, 6)), np.zeros((3, 6)), current)
    assert kept.tolist() == [0]
    np.testing.assert_array_equal(roster.quat[0], [0.0, 0.0, 0.0, 1.0])
    np.testing.assert_array_equal(roster.pos[1], [0.0, 0.0, 0.0])  # the skipped rows are left as they were
    np.testing.assert_array_equal(roster.current[0], [0.1, 0.2, 0.0])


def test_shape_errors_name_the_array_and_the_expected_size():
    assert shape_errors(2, {"position": (6, 3), "twist": (12, 6)}) == []
    assert shape_errors(2, {"position": (3, 3)}) == ["position has 3 values, expected 2 x 3"]


def test_vessels_yaml_is_read_as_json_or_yaml_and_checked():
    assert parse_vessels_yaml("") == {}
    assert parse_vessels_yaml('{"a": {"model": "lrauv"}}') == {"a": {"model": "lrauv"}}
    assert parse_vessels_yaml("a: {sensors: {imu: null}}") == {"a": {"sensors": {"imu": None}}}
    with pytest.raises(ValueError, match="invalid YAML"):
        parse_vessels_yaml("a: [")
    with pytest.raises(ValueError, match="got a non-mapping vessel entry"):
        parse_vessels_yaml("a: 3")
    with pytest.raises(ValueError, match="got list"):
        parse_vessels_yaml("[1, 2]")


def test_creation_overrides_give_their_sensors_mapping_or_none():
    assert spawn_sensors("") is None
    assert spawn_sensors("mass_kg: 10") is None
    assert spawn_sensors("sensors: {gps: {rate_hz: 2}}") == {"gps": {"rate_hz": 2}}
    assert spawn_sensors("sensors: [") is None  # unreadable: none


def test_the_model_comes_from_vessels_yaml_else_the_roster_and_nothing_is_guessed():
    sources = SuiteSources({"boat": {"model": "wamv"}})
    assert sources.resolve("boat", "w0")[1] == "wamv"  # no roster needed
    assert sources.resolve("lrauv_2", "w0") == ({}, "")  # a model's name is not a model: it waits
    assert sources.unsuited == {"lrauv_2"}
    assert sources.on_roster("w0", {"lrauv_2": ("lrauv", None), "boat": ("kayak_usv", None)}) == ["lrauv_2"]
    suite, model = sources.resolve("lrauv_2", "w0")
    assert model == "lrauv" and set(suite) == {"dvl", "gps", "imu", "magnetometer", "modem", "pressure", "usbl"}
    assert sources.resolve("boat", "w0")[1] == "wamv"  # vessels_yaml's model wins over the roster's
    assert not sources.unsuited


def test_vessels_yaml_sensors_are_merged_over_the_catalogue():
    sources = SuiteSources(
        {"lrauv_1": {"model": "lrauv", "sensors": {"imu": {"rate_hz": 7}, "usbl": {"enabled": False}}}}
    )
    suite, _ = sources.resolve("lrauv_1", "w0")
    assert suite["imu"]["rate_hz"] == 7.0 and "usbl" not in suite and "dvl" in suite
    modelless = SuiteSources({"thing": {"sensors": {"gps": {"rate_hz": 2}}}})
    assert modelless.resolve("thing", "w0") == ({}, "")  # no model yet: waits
    modelless.on_roster("w0", {"thing": ("", None)})  # a roster entry without a model: only vessels_yaml's sensors
    suite, model = modelless.resolve("thing", "w0")
    assert model == "" and set(suite) == {"gps"} and suite["gps"]["rate_hz"] == 2.0


def test_a_vessel_waits_for_its_workers_roster_then_gets_the_model_and_creation_overrides():
    sources = SuiteSources({})
    assert sources.resolve("tethys", "w0") == ({}, "")
    assert sources.unsuited == {"tethys"}
    assert sources.on_roster("w1", {"other": ("lrauv", None)}) == []  # another worker's roster: still waits
    again = sources.on_roster("w0", {"tethys": ("wamv", {"gps": {"rate_hz": 2}})})
    assert again == ["tethys"]
    suite, model = sources.resolve("tethys", "w0")
    assert model == "wamv" and suite["gps"]["rate_hz"] == 2.0 and set(suite) == {"ais", "gps", "imu", "magnetometer"}
    assert not sources.unsuited
    assert sources.on_roster("w0", {"tethys": ("wamv", {"gps": {"rate_hz": 2}})}) == []  # unchanged: not redone


def test_a_vessel_whose_model_vessels_yaml_gives_starts_at_once_and_is_redone_only_for_creation_overrides():
    sources = SuiteSources({"a": {"model": "lrauv"}, "b": {"model": "lrauv"}})
    assert sources.resolve("a", "w0")[1] == "lrauv"
    assert sources.resolve("b", "w0")[1] == "lrauv"
    assert not sources.unsuited
    # a: created without sensor overrides (nothing to redo); b: with some
    assert sources.on_roster("w0", {"a": ("lrauv", None), "b": ("lrauv", {"imu": {"rate_hz": 5}})}) == ["b"]
    assert sources.resolve("b", "w0")[0]["imu"]["rate_hz"] == 5.0


def test_a_vessel_created_again_with_another_model_is_redone_and_one_left_out_keeps_its_suite():
    sources = SuiteSources({})
    sources.on_roster("w0", {"x": ("lrauv", None), "y": ("wamv", None)})
    assert sources.resolve("x", "w0")[1] == "lrauv" and sources.resolve("y", "w0")[1] == "wamv"
    assert sources.on_roster("w0", {"x": ("lrauv", None)}) == []  # y deleted: its fleet state removes it
    assert sources.on_roster("w0", {"x": ("wamv", None)}) == ["x"]  # deleted and created again as a WAM-V
    assert sources.resolve("x", "w0")[1] == "wamv"
    sources.forget("x")
    assert "x" not in sources.used and sources.on_roster("w0", {"x": ("lrauv", None)}) == []


def test_a_vessel_that_moved_to_another_worker_takes_its_entry_from_that_roster():
    sources = SuiteSources({})
    sources.on_roster("w1", {"m": ("remus100", None)})
    assert sources.resolve("m", "w0")[1] == "remus100"  # its fleet state still came from w0
    assert sources.on_roster("w0", {}) == []


def test_roster_entries_of_vessel_infos():
    infos = [
        SimpleNamespace(name="a", model="lrauv", overrides_yaml=""),
        SimpleNamespace(name="b", model="wamv", overrides_yaml="{sensors: {gps: {rate_hz: 2}}, mass: 10}"),
    ]
    assert entries_of(infos) == {"a": ("lrauv", None), "b": ("wamv", {"gps": {"rate_hz": 2}})}


def test_a_roster_announces_vessels_before_their_fleet_state_without_making_them_alive():
    """A worker's latched roster gives a sensor node started late its vessels' slots (and so their topics) before
    the first fleet state; they are no targets (not alive) until a fleet state lists them, an older fleet state
    without them does not remove them, and one the roster drops before any fleet state is removed."""
    roster = Roster(capacity=4)
    roster.update("w0", ("a",))
    announced = roster.announce("w0", ["a", "b", "c"])
    assert announced.added == [("b", 1), ("c", 2)] and announced.removed == [] and announced.slots.size == 0
    assert roster.alive.tolist() == [True, False, False, False] and roster.owner == {"a": "w0", "b": "w0", "c": "w0"}
    assert roster.update("w0", ("a",)).removed == []  # a fleet state published before the create
    update = roster.update("w0", ("a", "b"))
    assert update.added == [] and update.removed == [] and update.slots.tolist() == [0, 1]
    assert update.seen == [("b", 1)] and roster.update("w0", ("b", "a")).seen == []
    assert roster.alive.tolist() == [True, True, False, False] and roster.announced == {"c": "w0"}
    gone = roster.announce("w0", ["a", "b"])  # c deleted before any fleet state showed it
    assert gone.removed == [("c", 2)] and gone.added == [] and roster.slot_of == {"a": 0, "b": 1}
    assert roster.announce("w1", ["a"]).added == []  # known vessels are left to the fleet states
