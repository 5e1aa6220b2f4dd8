"""The console node's ROS-free parts: its settings (start checks, the map's origin), its services (login, watch,
command: the answers, the checks before anything runs, the audit entries) and its channels (what goes out, when:
the page's columns, vessels gone from the scene, the slow channels on a change or after SLOW_PUBLISH_S, the
catalogue asked until it answers, the world once per revision)."""

from __future__ import annotations

import json
import math
from concurrent.futures import Future
from types import SimpleNamespace

import numpy as np
import pytest

pytest.importorskip("foxglove")

from lotusim_core.base.geodesy import GeodeticOrigin  # noqa: E402
from lotusim_core.console import channels as ch  # noqa: E402
from lotusim_core.console import commands as cmd  # noqa: E402
from lotusim_core.console.fleet_view import FleetView, WorkerState  # noqa: E402
from lotusim_core.console.operators import AuditLog, Operators  # noqa: E402
from lotusim_core.console.services import COMMAND_WAIT_S, Services, summary  # noqa: E402
from lotusim_core.console.settings import PARAMETERS, Settings  # noqa: E402


# --- settings -----------------------------------------------------------------------------------------------------
def test_settings_take_the_origin_only_when_both_angles_are_given():
    assert Settings.from_parameters(PARAMETERS).origin is None  # NaN by default: from /lotusim/environment
    given = Settings.from_parameters(PARAMETERS | {"origin_latitude_deg": 48.3, "origin_longitude_deg": -4.6,
                                                   "origin_altitude_m": 2.0})  # fmt: skip
    assert given.origin == GeodeticOrigin(48.3, -4.6, 2.0)
    assert Settings.from_parameters(PARAMETERS | {"origin_latitude_deg": 48.3}).origin is None
    s = Settings.from_parameters(PARAMETERS | {"port": 0, "http_port": -1, "rate_hz": 5})
    assert (s.host, s.port, s.http_port, s.rate_hz, s.master_node) == ("127.0.0.1", 0, -1, 5.0, "dynamics_0")


def test_settings_refuse_a_remote_bind_without_a_token_and_a_bad_rate():
    with pytest.raises(ValueError, match="needs a token"):
        Settings.from_parameters(PARAMETERS | {"host": "0.0.0.0"})
    assert Settings.from_parameters(PARAMETERS | {"host": "0.0.0.0", "token": "t"}).token == "t"
    with pytest.raises(ValueError, match="rate_hz"):
        Settings.from_parameters(PARAMETERS | {"rate_hz": 101.0})


# --- services -----------------------------------------------------------------------------------------------------
class _Desk:
    """Services over real Operators and AuditLog, a submit whose answers the test sets, entries collected."""

    def __init__(self, token: str | None = None) -> None:
        self.operators, self.audit = Operators(token), AuditLog()
        self.submitted, self.watched, self.entries = [], [], []
        self.result: object = (True, "done")
        self.services = Services(self.operators, self.audit, self._submit, self.watched.append, lambda: 12.5,
                                 self.entries.append)  # fmt: skip

    def _submit(self, command) -> Future:
        self.submitted.append(command)
        future: Future = Future()
        if isinstance(self.result, BaseException):
            future.set_exception(self.result)
        elif self.result is not None:  # None: never answered
            future.set_result(self.result)
        return future

    def call(self, service: str, client_id: int, body) -> dict:
        payload = body if isinstance(body, bytes) else json.dumps(body).encode()
        return json.loads(getattr(self.services, service)(client_id, payload))


def test_login_answers_the_role_and_refuses_a_bad_one_with_its_reason():
    desk = _Desk(token="s3cret")
    assert desk.call("login", 1, {"name": "alice", "role": "operator", "token": "s3cret"}) == {
        "ok": True, "message": "logged in as operator", "role": "operator", "name": "alice"}  # fmt: skip
    refused = desk.call("login", 2, {"name": "bob", "role": "operator", "token": "nope"})
    assert refused["ok"] is False and "token" in refused["message"]
    expected = {"ok": False, "message": "login: expected a JSON object {name, role, token}"}
    assert desk.call("login", 2, b"[1]") == expected
    assert desk.call("login", 2, b"\xff")["ok"] is False  # not UTF-8: refused, no exception
    assert desk.entries == []  # logins are not commands: nothing audited


def test_watch_takes_a_valid_vessel_name_only():
    desk = _Desk()
    assert desk.call("watch", 1, {"name": "usv_1"}) == {"ok": True, "message": "watching usv_1"}
    for bad in ({"name": "../x"}, {"name": 3}, [1], b"{"):
        assert desk.call("watch", 1, bad)["message"].startswith("watch: name: ")
    assert desk.watched == ["usv_1"]


def test_a_command_runs_only_for_an_operator_and_every_one_is_audited():
    desk = _Desk()
    spawn = {"op": "spawn", "name": "usv_9", "model": "wamv", "lat": 48.3, "lon": -4.6}
    assert desk.call("command", 1, spawn) == {"ok": False, "message": "guest-1 is a spectator: log in as an "
                                              "operator to command"}  # fmt: skip
    assert desk.submitted == []  # nothing asked of the simulation
    desk.call("login", 1, {"name": "alice", "role": "operator"})
    assert desk.call("command", 1, spawn) == {"ok": True, "message": "done"}
    assert desk.submitted == [cmd.Spawn("usv_9", "wamv", cmd.Placement(48.3, -4.6, 0.0, 0.0))]
    bad = b'{"op": "explode"}'
    assert desk.call("command", 1, bad)["ok"] is False and len(desk.submitted) == 1
    who = [(e.operator, e.command.split(" (")[0], e.ok, e.sim_time_s) for e in desk.entries]
    assert who == [("guest-1", "spawn usv_9", False, 12.5), ("alice", "spawn usv_9", True, 12.5),
                   ("alice", summary(bad), False, 12.5)]  # fmt: skip
    assert [e["seq"] for e in desk.audit.recent()] == [1, 2, 3]


def test_a_pause_is_remembered_only_when_the_simulation_accepted_it():
    desk = _Desk()
    desk.call("login", 1, {"name": "alice", "role": "operator"})
    desk.result = (False, "the clock master (/dynamics_0/set_parameters) is not running")
    assert desk.call("command", 1, {"op": "pause"})["ok"] is False and desk.services.paused is False
    desk.result = (True, "done")
    desk.call("command", 1, {"op": "pause"})
    assert desk.services.paused is True
    desk.call("command", 1, {"op": "resume"})
    assert desk.services.paused is False


def test_a_failing_or_silent_simulation_is_the_operators_answer(monkeypatch):
    desk = _Desk()
    desk.call("login", 1, {"name": "alice", "role": "operator"})
    desk.result = TimeoutError("/lotusim/fleet_command: no answer")
    # a TimeoutError raised by the command itself is the wait's too (concurrent.futures.TimeoutError is TimeoutError)
    assert "no answer within" in desk.call("command", 1, {"op": "delete", "name": "a"})["message"]
    desk.result = RuntimeError("the MAS server died")
    assert desk.call("command", 1, {"op": "delete", "name": "a"})["message"] == "RuntimeError: the MAS server died"
    monkeypatch.setattr("lotusim_core.console.services.COMMAND_WAIT_S", 0.01)
    desk.result = None  # never answered
    answer = desk.call("command", 1, {"op": "delete", "name": "a"})
    assert answer == {"ok": False, "message": "no answer within 0.01 s (it may still be carried out)"}
    assert COMMAND_WAIT_S == 60.0 and [e.ok for e in desk.entries] == [False, False, False]


def test_long_payloads_are_summarised_in_the_audit_log():
    assert summary(b"x" * 120) == "x" * 120 and summary(b"x" * 121) == "x" * 120 + "..."
    assert summary(b"\xff") == "\ufffd"


def test_the_foxglove_services_call_the_answers_with_the_client_and_payload():
    desk = _Desk()
    services = {s.name: s for s in desk.services.foxglove_services()}
    assert set(services) == {"login", "watch", "command"}
    answer = services["watch"].handler(SimpleNamespace(client_id=3, payload=b'{"name": "usv_1"}'))
    assert json.loads(answer)["ok"] and desk.watched == ["usv_1"]
    answer = services["login"].handler(SimpleNamespace(client_id=3, payload=b'{"name": "bob", "role": "spectator"}'))
    assert json.loads(answer)["name"] == "bob" and desk.operators.listing()[0]["id"] == 3


# --- channels -----------------------------------------------------------------------------------------------------
class _Sink:
    """A channel that a client subscribes to; keeps what was logged."""

    def __init__(self) -> None:
        self.logged: list = []

    def has_sinks(self) -> bool:
        return True

    def log(self, message, log_time=None) -> None:
        self.logged.append(message)


def _channels(ask=None) -> ch.Channels:
    out = ch.Channels(ask or (lambda: Future()))
    for name in vars(out).copy():
        if name.endswith("_channel"):
            setattr(out, name, _Sink())
    return out


def _snapshot(names):
    view = FleetView(GeodeticOrigin(48.3, -4.6))
    n = len(names)
    still = np.tile([0.0, 0.0, 0.0, 1.0], (n, 1))
    zeros = np.zeros((n, 6))
    status = np.zeros(n, np.uint8)
    view.on_state("w", WorkerState(list(names), np.zeros((n, 3)), still, zeros, zeros, status, 2 * 10**9))
    return view.snapshot()


def test_the_page_gets_its_columns_and_a_vessel_gone_is_deleted_from_the_scene(monkeypatch):
    drawn = []
    scene_update = ch.scene.scene_update
    monkeypatch.setattr(ch.scene, "scene_update", lambda snap, gone: drawn.append(gone) or scene_update(snap, gone))
    out = _channels()
    out.send_fleet(_snapshot(["a", "b"]), None, 0.75, True, lambda: {"server_us": 3.5, "controllers": {}})
    columns = json.loads(out.fleet_channel.logged[0])
    assert (columns["t"], columns["rtf"], columns["paused"], columns["name"]) == (2.0, 0.75, True, ["a", "b"])
    assert columns["server_us"] == 3.5 and columns["controllers"] == {}
    assert [v["name"] for v in json.loads(out.vessels_channel.logged[0])["vessels"]] == ["a", "b"]
    out.send_fleet(_snapshot(["b"]), None, 0.75, True, dict)
    assert drawn == [[], ["a"]] and len(out.scene_channel.logged) == 2
    assert len(out.tf_channel.logged) == len(out.locations_channel.logged) == 2
    assert out.environment_channel.logged == []  # no environment yet: nothing drawn


def test_the_slow_channels_go_out_on_a_change_or_after_their_period(monkeypatch):
    clock = SimpleNamespace(now=100.0)
    monkeypatch.setattr(ch.time, "monotonic", lambda: clock.now)
    answers: list[Future] = []

    def ask() -> Future:
        answers.append(Future())
        return answers[-1]

    out, operators, audit = _channels(ask), Operators(), AuditLog()
    out.send_slow(operators, audit)
    out.send_slow(operators, audit)  # no change, within SLOW_PUBLISH_S
    assert len(out.operators_channel.logged) == len(out.audit_channel.logged) == 1 and len(answers) == 1
    audit.add("alice", "pause", True, "done", 1.0)  # a change: out at the next update
    out.send_slow(operators, audit)
    assert len(out.audit_channel.logged) == 2 and json.loads(out.audit_channel.logged[1])[0]["command"] == "pause"
    answers[0].set_exception(TimeoutError("/lotusim/list_models: no answer"))
    clock.now += ch.SLOW_PUBLISH_S  # late joiners: again after the period; the failed ask is asked again
    out.send_slow(operators, audit)
    assert len(out.operators_channel.logged) == 3 and len(answers) == 2 and out.models_channel.logged == []
    answers[1].set_result([{"name": "wamv", "domain": "surface", "description": "WAM-V"}])
    operators.seen(7)
    out.send_slow(operators, audit)
    assert json.loads(out.models_channel.logged[0])[0]["name"] == "wamv" and len(answers) == 2


def test_the_world_goes_out_once_per_revision_and_on_a_subscription():
    from lotusim_env.world import build_world

    config = {"objects": [{"name": "buoy_1", "kind": "buoy", "position": [1.0, 2.0, 0.0]}]}
    environment = SimpleNamespace(world=build_world(config, "world", None, GeodeticOrigin(48.3, -4.6)))
    out, operators = _channels(), Operators()
    out.send_world(environment, 1.0, GeodeticOrigin(48.3, -4.6))
    assert out.world_channel.logged == []  # not due
    listener = ch.Listener(operators, out)
    listener.on_subscribe(SimpleNamespace(id=4), SimpleNamespace(topic=ch.WORLD_MAP))
    assert operators.listing()[0]["name"] == "guest-4" and out.world_due
    out.send_world(environment, 1.0, None)  # origin unknown: the 3-D world only
    assert len(out.world_channel.logged) == 1 and out.world_map_channel.logged == [] and not out.world_due
    out.world_due = True
    out.send_world(environment, 1.0, GeodeticOrigin(48.3, -4.6))
    page = json.loads(out.world_map_channel.logged[0])
    assert len(out.world_channel.logged) == 2 and "buoy_1" in json.dumps(page)
    assert math.isclose(page["objects"][0]["lat"], 48.3, abs_tol=1e-3)
    listener.on_unsubscribe(SimpleNamespace(id=4), SimpleNamespace(topic=ch.FLEET))
    assert len(operators.listing()) == 1  # only leaving the operators channel is leaving
    listener.on_unsubscribe(SimpleNamespace(id=4), SimpleNamespace(topic=ch.OPERATORS))
    assert operators.listing() == []


def test_an_audit_entry_is_a_log_line_a_refusal_a_warning(monkeypatch):
    from foxglove.messages import LogLevel

    monkeypatch.setattr(ch, "Log", lambda **fields: SimpleNamespace(**fields))  # foxglove's Log hides its fields
    out, audit = _channels(), AuditLog()
    out.log_entry(audit.add("alice", "delete a", True, "done", 0.0))
    out.log_entry(audit.add("bob", "pause", False, "bob is a spectator", 0.0))
    lines = out.log_channel.logged
    assert [(x.level, x.message) for x in lines] == [(LogLevel.Info, "alice: delete a: done"),
                                                    (LogLevel.Warning, "bob: pause: bob is a spectator")]  # fmt: skip
