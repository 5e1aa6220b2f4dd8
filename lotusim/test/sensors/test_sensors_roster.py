"""The sensor layer's fleet table (lotusim_sensors.roster) and the three sources of a vessel's sensor suite
(lotusim_sensors.suite_sources), without ROS."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from lotusim_sensors.roster import Roster, shape_errors
from lotusim_sensors.suite_sources import ListingRequests, SuiteSources, parse_vessels_yaml, spawn_sensors


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


def never(worker: str) -> bool:
    return False


def test_the_model_comes_from_vessels_yaml_else_the_name_else_the_default():
    sources = SuiteSources({"boat": {"model": "wamv"}}, default_model="kayak_usv")
    assert sources.model_from_name("lrauv") == "lrauv"
    assert sources.model_from_name("lrauv_12") == "lrauv"
    assert sources.model_from_name("lrauv_x") == "kayak_usv"
    assert sources.model_from_name("bluerov2_heavy_1") == "bluerov2_heavy"
    assert sources.resolve("boat", "w0", never)[1] == "wamv"
    suite, model = sources.resolve("lrauv_2", "w0", never)
    assert model == "lrauv" and set(suite) == {"dvl", "gps", "imu", "magnetometer", "modem", "pressure", "usbl"}
    assert sources.resolve("thing", "w0", never)[1] == "kayak_usv"


def test_vessels_yaml_sensors_are_merged_over_the_catalogue():
    sources = SuiteSources({"lrauv_1": {"sensors": {"imu": {"rate_hz": 7}, "usbl": {"enabled": False}}}}, "")
    suite, _ = sources.resolve("lrauv_1", "w0", never)
    assert suite["imu"]["rate_hz"] == 7.0 and "usbl" not in suite and "dvl" in suite
    nameless, model = SuiteSources({}, "").resolve("thing", "w0", never)
    assert nameless == {} and model == ""


def test_a_vessel_waits_for_its_workers_listing_then_gets_the_listed_model_and_creation_overrides():
    asked: list[str] = []

    def ask(worker: str) -> bool:
        asked.append(worker)
        return True

    sources = SuiteSources({}, "")
    assert sources.resolve("tethys", "w0", ask) == ({}, "")
    assert asked == ["w0"] and sources.pending == {"tethys": "w0"} and "tethys" in sources.unsuited
    again = sources.on_listing("w0", {"tethys": ("wamv", {"gps": {"rate_hz": 2}})})
    assert again == ["tethys"] and sources.pending == {} and not sources.unsuited
    suite, model = sources.resolve("tethys", "w0", ask)
    assert model == "wamv" and suite["gps"]["rate_hz"] == 2.0 and set(suite) == {"ais", "gps", "imu", "magnetometer"}
    assert asked == ["w0"]  # listed: not asked again


def test_a_vessel_whose_model_vessels_yaml_gives_starts_at_once_and_is_redone_only_for_creation_overrides():
    sources = SuiteSources({"a": {"model": "lrauv"}, "b": {"model": "lrauv"}}, "")
    assert sources.resolve("a", "w0", lambda w: True)[1] == "lrauv"
    assert sources.resolve("b", "w0", lambda w: True)[1] == "lrauv"
    assert sources.pending == {"a": "w0", "b": "w0"} and not sources.unsuited
    # a: created without sensor overrides (nothing to redo); b: with some; "c" waits for another worker
    sources.pending["c"] = "w1"
    assert sources.on_listing("w0", {"a": ("lrauv", None), "b": ("lrauv", {"imu": {"rate_hz": 5}})}) == ["b"]
    assert sources.pending == {"c": "w1"}
    assert sources.resolve("b", "w0", never)[0]["imu"]["rate_hz"] == 5.0


def test_a_vessel_missing_from_the_listing_gets_its_suite_from_its_name_and_forget_clears_it():
    sources = SuiteSources({}, "")
    sources.resolve("remus100_4", "w0", lambda w: True)
    assert sources.on_listing("w0", {}) == ["remus100_4"]
    assert sources.listed["remus100_4"] == ("", None)
    assert sources.resolve("remus100_4", "w0", never)[1] == "remus100"
    sources.forget("remus100_4")
    assert "remus100_4" not in sources.listed


class FakeFuture:
    def __init__(self) -> None:
        self.callbacks: list = []
        self.finished = False
        self.reply = None  # None: the request failed

    def result(self):
        if self.reply is None:
            raise RuntimeError("service call failed")
        return self.reply

    def add_done_callback(self, callback) -> None:
        self.callbacks.append(callback)

    def done(self) -> bool:
        return self.finished

    def finish(self) -> None:
        self.finished = True
        for callback in self.callbacks:
            callback(self)


class FakeClient:
    def __init__(self, ready: bool = True) -> None:
        self.ready, self.sent, self.removed = ready, [], []

    def service_is_ready(self) -> bool:
        return self.ready

    def call_async(self, request) -> FakeFuture:
        self.sent.append(FakeFuture())
        return self.sent[-1]

    def remove_pending_request(self, future) -> None:
        self.removed.append(future)


def test_listing_requests_one_in_flight_per_worker_and_asked_again_after_the_retry_time():
    clients = {"w0": FakeClient(), "down": FakeClient(ready=False)}
    now = [100.0]
    answers: list[tuple[str, list, str]] = []
    requests = ListingRequests(clients.__getitem__, object, lambda *a: answers.append(a), clock=lambda: now[0])
    assert requests.client("") is None and not requests.ask("")
    assert not requests.ask("down") and clients["down"].sent == []
    assert requests.ask("w0") and requests.ask("w0")
    assert len(clients["w0"].sent) == 1  # the request in flight serves both
    now[0] += 4.0
    assert requests.ask_again(5.0) == []
    now[0] += 2.0
    assert requests.ask_again(5.0) == ["w0"]
    lost, second = clients["w0"].sent
    assert clients["w0"].removed == [lost] and requests.inflight["w0"] == (second, 106.0)
    second.reply = SimpleNamespace(vessels=["listing"])
    second.finish()
    assert answers == [("w0", ["listing"], "")] and requests.inflight == {}
    assert requests.ask("w0") and len(clients["w0"].sent) == 3  # answered: a new vessel asks again
    clients["w0"].sent[-1].finish()  # failed: no vessels, and why
    assert answers[-1] == ("w0", [], "service call failed") and requests.inflight == {}
