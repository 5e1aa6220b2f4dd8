"""The console node: the simulation read over DDS, served to Foxglove clients and to the console page, and the
operators' commands carried out through the simulation's own interfaces.

In: /lotusim/fleet_state and /lotusim/fleet_roster (every worker), /lotusim/stats, /lotusim/environment.
Out: a Foxglove WebSocket server on (`host`, `port`) with the channels of CHANNELS and the services `login` and
`command` (JSON); the page on `http_port` (0: none); `/lotusim/console/audit` (std_msgs/String, one JSON audit entry
each, recorded with the rest). Commands: spawn/move/delete through the FleetCommand action (FleetClient), waypoints
through `/<vessel>/waypoints/set`, pause/resume and the real-time factor through the clock master's parameters
(`master_node`: `paused`, `real_time_factor`). They run one at a time on a thread of their own, so the view keeps
updating meanwhile. docs/console.md.
"""

from __future__ import annotations

import ipaddress
import json
import math
import time
from concurrent.futures import Future

import foxglove
import numpy as np
from foxglove.channels import FrameTransformsChannel, LocationFixesChannel, LogChannel, SceneUpdateChannel
from foxglove.messages import Log, LogLevel, SceneUpdate
from foxglove.websocket import Capability
from rclpy.node import Node
from rclpy.serialization import deserialize_message
from std_msgs.msg import String

from lotusim_core.base import safe_yaml
from lotusim_core.base.geodesy import GeodeticOrigin
from lotusim_core.base.names import name_problem
from lotusim_core.console import commands as cmd
from lotusim_core.console import environment_view, scene, world_view
from lotusim_core.console.command_runner import CommandRunner
from lotusim_core.console.controller_watch import ControllerWatch
from lotusim_core.console.fleet_view import FleetView, WorkerState
from lotusim_core.console.operators import AuditLog, LoginError, Operators
from lotusim_core.console.web_server import PageServer
from lotusim_core.ros.node_runner import run_node_main
from lotusim_core.ros.qos import LATCHED
from lotusim_core.ros.ros_arrays import from_float64_array
from lotusim_core.sim.run_clock import fleet_state_head
from lotusim_env.environment import build_environment
from lotusim_interfaces.msg import EnvironmentConfig, FleetRoster, FleetState, SimStats

PARAMETERS = {
    "host": "127.0.0.1",  # the address both servers bind to; another than the loopback needs `token`
    "port": 8765,  # Foxglove WebSocket server (0: any free port)
    "http_port": 8080,  # the console page (0: any free port; -1: no page)
    "token": "",  # needed to log in as an operator ("" : anyone may, allowed on the loopback only)
    "rate_hz": 10.0,  # updates per wall second to every client
    "master_node": "dynamics_0",  # the clock master: pause, resume and the real-time factor
    "name": "lotusim",  # the server's name, shown by Foxglove
    "origin_latitude_deg": math.nan,  # the map's origin (NaN: from /lotusim/environment's `origin`)
    "origin_longitude_deg": math.nan,
    "origin_altitude_m": 0.0,
}
FLEET, OPERATORS, AUDIT = "/lotusim/console/fleet", "/lotusim/console/operators", "/lotusim/console/audit"
MODELS, VESSELS = "/lotusim/console/models", "/lotusim/console/vessels"
WORLD, WORLD_MAP = "/lotusim/console/world", "/lotusim/console/world_map"
CHANNELS = {
    VESSELS: "one object per vessel: name, model, latitude, longitude, depth, speed, heading (JSON, for plots)",
    MODELS: "the catalogue's models: name, domain, description (JSON)",
    FLEET: "every vessel as columns (the page's view; JSON)",
    OPERATORS: "who is connected, as what (JSON)",
    AUDIT: "the last commands, accepted or refused (JSON)",
    "/lotusim/console/scene": "foxglove.SceneUpdate: a box and a label per vessel in map",
    "/lotusim/console/tf": "foxglove.FrameTransforms: map -> <vessel>/base_link",
    "/lotusim/console/locations": "foxglove.LocationFixes: WGS84 positions for a Map panel",
    "/lotusim/console/log": "foxglove.Log: the audit log as log lines",
    "/lotusim/console/environment": "foxglove.SceneUpdate: the seabed and the sea surface (waves) around the fleet",
    WORLD: "foxglove.SceneUpdate: the world's land (top, walls, outline) and objects in map",
    WORLD_MAP: "the world's land polygons and objects in WGS84 (JSON, the page's map)",
}
COMMAND_WAIT_S = 60.0  # wall seconds a command may take (a spawn of a new model compiles nothing; 60 is ample)
ENVIRONMENT_PERIOD_S = 0.5  # wall seconds between two drawings of the sea surface and seabed (while subscribed)
SLOW_PUBLISH_S = 1.0  # the operators and audit channels are sent again at least this often (late joiners)


def config_problem(host: str, token: str, rate_hz: float) -> str:
    """Why the console cannot start with these parameters ("" if it can)."""
    try:
        loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        return f"host: expected an IP address or localhost, got {host!r}"
    if not loopback and not token:
        return f"host {host}: binding beyond the loopback needs a token (parameter token, lotusim console --token)"
    if not (0.0 < rate_hz <= 100.0):
        return f"rate_hz: expected a rate in (0, 100] Hz, got {rate_hz}"
    return ""


class ConsoleNode(Node):
    """The console: a FleetView fed over DDS, Foxglove channels and services, the page, the command runner."""

    def __init__(self, **node_kwargs) -> None:
        super().__init__(node_kwargs.pop("node_name", "console"), **node_kwargs)
        p = {name: self.declare_parameter(name, default).value for name, default in PARAMETERS.items()}
        token = str(p["token"])
        problem = config_problem(str(p["host"]), token, float(p["rate_hz"]))
        if problem:
            raise ValueError(problem)
        self.view = FleetView(_origin(p) or GeodeticOrigin())
        self._origin_given = _origin(p) is not None
        self.operators, self.audit = Operators(token or None), AuditLog()
        self.stats: dict[str, SimStats] = {}
        self._raw_states: dict[str, bytes] = {}  # worker -> its newest FleetState, serialized
        self.paused = False
        self._shown: set[str] = set()
        self._sent_revision, self._slow_due = -1, 0.0
        self.models: list[dict] | None = None
        self.environment = None  # lotusim_env.environment.Environment, once /lotusim/environment came
        self._environment_due = 0.0
        self.world_due = False  # the world goes out again: a new environment, or a client subscribed to it
        self.publish_cost_us = 0.0  # wall time of one update (views built and handed to the server), averaged
        self._models_asked: Future | None = None
        self._subscribe()
        self._audit_pub = self.create_publisher(String, AUDIT, 100)
        self.runner = CommandRunner(self.context, str(p["master_node"]))
        self.watch = ControllerWatch(self)  # the selected vessels' controller status
        self._serve(str(p["host"]), int(p["port"]), int(p["http_port"]), str(p["name"]), token)
        self.create_timer(1.0 / float(p["rate_hz"]), self._publish)

    # --- in ---------------------------------------------------------------------------------------------------
    def _subscribe(self) -> None:
        # raw: a worker publishes its state every step (50 Hz at 0.02 s); only the newest is decoded, at rate_hz
        self.create_subscription(FleetState, "/lotusim/fleet_state", self._on_raw_state, 10, raw=True)
        self.create_subscription(FleetRoster, "/lotusim/fleet_roster", self._on_roster, LATCHED)
        self.create_subscription(SimStats, "/lotusim/stats", lambda m: self.stats.__setitem__(m.worker, m), 10)
        self.create_subscription(EnvironmentConfig, "/lotusim/environment", self._on_environment, LATCHED)

    def _on_raw_state(self, raw: bytes) -> None:
        self._raw_states[fleet_state_head(raw)[1]] = raw

    def _decode_states(self) -> None:
        """Decode the newest state of each worker that sent one since the last update."""
        raws, self._raw_states = self._raw_states, {}
        for raw in raws.values():
            self._on_state(deserialize_message(raw, FleetState))

    def _on_state(self, msg: FleetState) -> None:
        state = WorkerState(
            names=list(msg.names),
            position=from_float64_array(msg.position, 3),
            orientation=from_float64_array(msg.orientation, 4),
            twist=from_float64_array(msg.twist, 6),
            environment=from_float64_array(msg.environment, 6),
            status=np.frombuffer(bytes(msg.status), dtype=np.uint8),
            stamp_ns=msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec,
        )
        self.view.on_state(msg.worker, state)

    def _on_roster(self, msg: FleetRoster) -> None:
        self.view.on_roster(msg.worker, [(v.name, v.model, v.domain) for v in msg.vessels])

    def _on_environment(self, msg: EnvironmentConfig) -> None:
        """The environment function (the sea surface and seabed drawn for Foxglove) and, unless given as
        parameters, the map's origin."""
        try:
            self.environment = build_environment(safe_yaml.load(msg.config_yaml) or {})
        except (ValueError, OSError) as exc:  # ConfigError is a ValueError
            self.get_logger().warning(f"/lotusim/environment revision {msg.revision}: {exc}")
            return
        if not self._origin_given and self.environment.origin is not None:
            self.view.origin, self._origin_given = self.environment.origin, True
        self.world_due = True

    # --- servers ----------------------------------------------------------------------------------------------
    def _serve(self, host: str, port: int, http_port: int, name: str, token: str) -> None:
        self.fox = foxglove.Context()
        json_channel = lambda topic: foxglove.Channel(topic, message_encoding="json", context=self.fox)  # noqa: E731
        self.fleet_channel, self.operators_channel, self.audit_channel, self.models_channel, self.vessels_channel = map(
            json_channel, (FLEET, OPERATORS, AUDIT, MODELS, VESSELS)
        )
        self.world_map_channel = json_channel(WORLD_MAP)
        self.world_channel = SceneUpdateChannel(WORLD, context=self.fox)
        self.scene_channel = SceneUpdateChannel("/lotusim/console/scene", context=self.fox)
        self.tf_channel = FrameTransformsChannel("/lotusim/console/tf", context=self.fox)
        self.locations_channel = LocationFixesChannel("/lotusim/console/locations", context=self.fox)
        self.log_channel = LogChannel("/lotusim/console/log", context=self.fox)
        self.environment_channel = SceneUpdateChannel("/lotusim/console/environment", context=self.fox)
        json_schema = foxglove.MessageSchema(encoding="json", schema=foxglove.Schema(name="", encoding="", data=b""))
        services = [
            foxglove.Service(name="login", schema=foxglove.ServiceSchema(name="lotusim.Login", request=json_schema,
                             response=json_schema), handler=self._on_login),
            foxglove.Service(name="watch", schema=foxglove.ServiceSchema(name="lotusim.Watch", request=json_schema,
                             response=json_schema), handler=self._on_watch),
            foxglove.Service(name="command", schema=foxglove.ServiceSchema(name="lotusim.Command",
                             request=json_schema, response=json_schema), handler=self._on_command),
        ]  # fmt: skip
        self.server = foxglove.start_server(
            name=name, host=host, port=port, context=self.fox, services=services,
            capabilities=[Capability.Services], supported_encodings=["json"],
            server_listener=_Listener(self),
        )  # fmt: skip
        self.page = None
        if http_port >= 0:
            config = {"ws_port": self.server.port, "name": name, "token_required": bool(token)}
            self.page = PageServer(host, http_port, config)
        where = f"page http://{host}:{self.page.port}/, " if self.page else ""
        self.get_logger().info(f"console: {where}Foxglove ws://{host}:{self.server.port}")

    # --- out --------------------------------------------------------------------------------------------------
    def _publish(self) -> None:
        start = time.perf_counter()
        self._decode_states()
        if self._origin_given:  # positions in WGS84 need the map's origin: shown once it is known
            self._publish_fleet(self.view.snapshot())
        else:
            self.get_logger().info(
                "waiting for /lotusim/environment (the map's origin) or parameters origin_*", throttle_duration_sec=10.0
            )
        self._publish_slow()
        self._publish_world()
        cost_us = (time.perf_counter() - start) * 1e6
        self.publish_cost_us += 0.1 * (cost_us - self.publish_cost_us)  # moving average, shown to clients

    def _publish_fleet(self, snap) -> None:
        """The fleet's channels that a client subscribes to (the others cost nothing)."""
        t_ns = round(snap.sim_time_s * 1e9)
        if self.fleet_channel.has_sinks():
            rtf = sum(s.real_time_factor for s in self.stats.values()) / len(self.stats) if self.stats else 0.0
            columns = snap.to_json_columns(rtf, self.paused)
            columns["server_us"] = round(self.publish_cost_us, 1)
            columns["controllers"] = self.watch.refresh()
            self.fleet_channel.log(json.dumps(columns, separators=(",", ":")).encode(), log_time=t_ns)
        if self.vessels_channel.has_sinks():
            self.vessels_channel.log(json.dumps(snap.to_json_rows()).encode(), log_time=t_ns)
        if self.scene_channel.has_sinks():
            gone = sorted(self._shown - set(snap.names))
            self.scene_channel.log(scene.scene_update(snap, gone), log_time=t_ns)
        self._shown = set(snap.names)
        if self.tf_channel.has_sinks():
            self.tf_channel.log(scene.frame_transforms(snap), log_time=t_ns)
        if self.locations_channel.has_sinks():
            self.locations_channel.log(scene.location_fixes(snap), log_time=t_ns)
        now = time.monotonic()
        if self.environment is not None and now >= self._environment_due and self.environment_channel.has_sinks():
            self._environment_due = now + ENVIRONMENT_PERIOD_S
            x, y = environment_view.grid_around(snap.position)
            stamp = scene.stamp(snap.sim_time_s)
            surface = environment_view.sea_surface(self.environment, snap.sim_time_s, x, y, stamp)
            entities = [environment_view.seabed(self.environment, x, y, stamp), *([surface] if surface else [])]
            self.environment_channel.log(SceneUpdate(entities=entities), log_time=t_ns)

    def _publish_slow(self) -> None:
        """Operators, audit log and models: on a change, and every SLOW_PUBLISH_S for clients that came later."""
        now = time.monotonic()
        if self.operators.revision != self._sent_revision or now >= self._slow_due:
            self._sent_revision, self._slow_due = self.operators.revision, now + SLOW_PUBLISH_S
            self.operators_channel.log(json.dumps(self.operators.listing()).encode())
            self.audit_channel.log(json.dumps(self.audit.recent()).encode())
            self._publish_models()

    def _publish_world(self) -> None:
        """The world (static): once per environment revision and again when a client subscribes to it."""
        if not self.world_due or self.environment is None:
            return
        self.world_due = False
        world = self.environment.world
        if self.world_channel.has_sinks():
            self.world_channel.log(world_view.world_scene(world, scene.stamp(self.view.snapshot_time_s())))
        if self._origin_given and self.world_map_channel.has_sinks():  # WGS84 needs the map's origin
            page = world_view.world_wgs84(world, self.view.origin)
            self.world_map_channel.log(json.dumps(page, separators=(",", ":")).encode())

    def _publish_models(self) -> None:
        """The catalogue, asked of the MAS server until it answers, then sent with the slow channels."""
        if self.models is None and (self._models_asked is None or self._models_asked.done()):
            if self._models_asked is not None and self._models_asked.exception() is None:
                self.models = self._models_asked.result()
            else:
                self._models_asked = self.runner.list_models()
        if self.models is not None:
            self.models_channel.log(json.dumps(self.models).encode())

    # --- services (called on the Foxglove server's threads) ----------------------------------------------------
    def _on_login(self, request) -> bytes:
        try:
            body = json.loads(request.payload)
            if not isinstance(body, dict):
                raise LoginError("login: expected a JSON object {name, role, token}")
            operator = self.operators.login(request.client_id, body.get("name"), body.get("role"), body.get("token"))
        except (LoginError, json.JSONDecodeError, UnicodeDecodeError) as exc:
            return _answer(False, str(exc))
        return _answer(True, f"logged in as {operator.role}", role=operator.role, name=operator.name)

    def _on_watch(self, request) -> bytes:
        """{"name": vessel}: its controllers' status in the fleet updates for a while (controller_watch)."""
        try:
            name = json.loads(request.payload).get("name")
        except (json.JSONDecodeError, UnicodeDecodeError, AttributeError):
            name = None
        problem = name_problem(name)
        if problem:
            return _answer(False, f"watch: name: {problem}")
        self.watch.watch(name)
        return _answer(True, f"watching {name}")

    def _on_command(self, request) -> bytes:
        who = self.operators.seen(request.client_id).name
        try:
            command = cmd.parse_command(request.payload)
        except cmd.CommandError as exc:
            self._record(who, _summary(request.payload), False, str(exc))
            return _answer(False, str(exc))
        try:
            operator = self.operators.commander(request.client_id)
        except LoginError as exc:
            self._record(who, cmd.describe(command), False, str(exc))
            return _answer(False, str(exc))
        try:
            ok, message = self.runner.submit(command).result(timeout=COMMAND_WAIT_S)
        except TimeoutError:
            ok, message = False, f"no answer within {COMMAND_WAIT_S:g} s (it may still be carried out)"
        except Exception as exc:  # noqa: BLE001 (the simulation's failure is the operator's answer)
            ok, message = False, f"{type(exc).__name__}: {exc}"
        if isinstance(command, cmd.Pause) and ok:
            self.paused = command.paused
        self._record(operator.name, cmd.describe(command), ok, message)
        return _answer(ok, message)

    def _record(self, who: str, what: str, ok: bool, message: str) -> None:
        entry = self.audit.add(who, what, ok, message, self.view.snapshot_time_s())
        self._audit_pub.publish(String(data=json.dumps(entry.__dict__)))
        level = LogLevel.Info if ok else LogLevel.Warning
        self.log_channel.log(Log(level=level, message=f"{who}: {what}: {message}", name="console"))
        self._sent_revision = -1  # the audit channel goes out at the next update

    def destroy_node(self) -> None:
        self.runner.close()
        self.server.stop()
        if self.page is not None:
            self.page.close()
        super().destroy_node()


class _Listener:
    """Foxglove server events: a client that subscribes is seen (a spectator until it logs in), and gets the world
    (static: sent on a subscription to it); one that unsubscribes from the operators channel (every client of the
    page does, when it leaves) is gone."""

    def __init__(self, node: ConsoleNode) -> None:
        self.operators = node.operators
        self.node = node

    def on_subscribe(self, client, channel) -> None:
        self.operators.seen(client.id)
        if channel.topic in (WORLD, WORLD_MAP):
            self.node.world_due = True

    def on_unsubscribe(self, client, channel) -> None:
        if channel.topic == OPERATORS:
            self.operators.left(client.id)


def _answer(ok: bool, message: str, **extra) -> bytes:
    return json.dumps({"ok": ok, "message": message, **extra}).encode()


def _summary(payload: bytes) -> str:
    text = bytes(payload[:120]).decode("utf-8", "replace")
    return text + ("..." if len(payload) > 120 else "")


def _origin(p: dict) -> GeodeticOrigin | None:
    lat, lon = float(p["origin_latitude_deg"]), float(p["origin_longitude_deg"])
    if math.isnan(lat) or math.isnan(lon):
        return None
    return GeodeticOrigin(lat, lon, float(p["origin_altitude_m"]))


def main(args=None) -> None:
    run_node_main(ConsoleNode, args, refused=(ValueError,), what="console")
