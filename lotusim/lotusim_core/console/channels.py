"""The console's Foxglove channels and what goes out on each, when (ROS-free; foxglove-sdk).

Every update (the node's timer, `rate_hz`) sends the fleet's channels that a client subscribes to (the others
cost nothing): the page's columns, one object per vessel, the 3-D scene, the frame transforms and the WGS84 fixes;
the sea surface and the seabed at most every ENVIRONMENT_PERIOD_S. The operators, the audit log and the
catalogue's models go out on a change and every SLOW_PUBLISH_S for clients that came later; the static world once
per environment revision and again when a client subscribes to it (`Listener`). docs/console.md.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from concurrent.futures import Future

import foxglove
from foxglove.channels import FrameTransformsChannel, LocationFixesChannel, LogChannel, SceneUpdateChannel
from foxglove.messages import Log, LogLevel, SceneUpdate

from lotusim_core.base.geodesy import GeodeticOrigin
from lotusim_core.console import environment_view, scene, world_view
from lotusim_core.console.fleet_view import Snapshot
from lotusim_core.console.operators import AuditEntry, AuditLog, Operators

FLEET, OPERATORS, AUDIT = "/lotusim/console/fleet", "/lotusim/console/operators", "/lotusim/console/audit"
MODELS, VESSELS = "/lotusim/console/models", "/lotusim/console/vessels"
WORLD, WORLD_MAP = "/lotusim/console/world", "/lotusim/console/world_map"
SCENE, TF, LOCATIONS = "/lotusim/console/scene", "/lotusim/console/tf", "/lotusim/console/locations"
LOG, ENVIRONMENT = "/lotusim/console/log", "/lotusim/console/environment"
CHANNELS = {
    VESSELS: "one object per vessel: name, model, latitude, longitude, depth, speed, heading (JSON, for plots)",
    MODELS: "the catalogue's models: name, domain, description (JSON)",
    FLEET: "every vessel as columns (the page's view; JSON)",
    OPERATORS: "who is connected, as what (JSON)",
    AUDIT: "the last commands, accepted or refused (JSON)",
    SCENE: "foxglove.SceneUpdate: a box and a label per vessel in map",
    TF: "foxglove.FrameTransforms: map -> <vessel>/base_link",
    LOCATIONS: "foxglove.LocationFixes: WGS84 positions for a Map panel",
    LOG: "foxglove.Log: the audit log as log lines",
    ENVIRONMENT: "foxglove.SceneUpdate: the seabed and the sea surface (waves) around the fleet",
    WORLD: "foxglove.SceneUpdate: the world's land (top, walls, outline) and objects in map",
    WORLD_MAP: "the world's land polygons and objects in WGS84 (JSON, the page's map)",
}
ENVIRONMENT_PERIOD_S = 0.5  # wall seconds between two drawings of the sea surface and seabed (while subscribed)
SLOW_PUBLISH_S = 1.0  # the operators and audit channels are sent again at least this often (late joiners)


def _json(value) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


class Channels:
    """The channels of CHANNELS in a foxglove.Context of their own (`fox`, for the server).

    ask_models: asks the MAS server for the catalogue's models, a Future of a list of dicts (asked again until
    one answers)."""

    def __init__(self, ask_models: Callable[[], Future]) -> None:
        self.fox = foxglove.Context()
        json_channel = lambda topic: foxglove.Channel(topic, message_encoding="json", context=self.fox)  # noqa: E731
        self.fleet_channel, self.operators_channel, self.audit_channel = map(json_channel, (FLEET, OPERATORS, AUDIT))
        self.models_channel, self.vessels_channel = json_channel(MODELS), json_channel(VESSELS)
        self.world_map_channel = json_channel(WORLD_MAP)
        self.world_channel = SceneUpdateChannel(WORLD, context=self.fox)
        self.scene_channel = SceneUpdateChannel(SCENE, context=self.fox)
        self.tf_channel = FrameTransformsChannel(TF, context=self.fox)
        self.locations_channel = LocationFixesChannel(LOCATIONS, context=self.fox)
        self.log_channel = LogChannel(LOG, context=self.fox)
        self.environment_channel = SceneUpdateChannel(ENVIRONMENT, context=self.fox)
        self.world_due = False  # the world goes out again: a new environment, or a client subscribed to it
        self.models: list[dict] | None = None
        self._ask_models, self._models_asked = ask_models, None
        self._shown: set[str] = set()  # the vessels of the last scene (those gone are deleted from it)
        self._sent: tuple[int, int] | None = None  # (operators' revision, audit's seq) last sent
        self._slow_due = self._environment_due = 0.0  # time.monotonic()

    def send_fleet(self, snap: Snapshot, environment, rtf: float, paused: bool, extra: Callable[[], dict]) -> None:
        """The fleet's channels that a client subscribes to. environment: lotusim_env's Environment or None;
        extra: more keys of the page's columns (asked only while the page's channel has a subscriber)."""
        t_ns = round(snap.sim_time_s * 1e9)
        if self.fleet_channel.has_sinks():
            self.fleet_channel.log(_json(snap.to_json_columns(rtf, paused) | extra()), log_time=t_ns)
        if self.vessels_channel.has_sinks():
            self.vessels_channel.log(json.dumps(snap.to_json_rows()).encode(), log_time=t_ns)
        if self.scene_channel.has_sinks():
            self.scene_channel.log(scene.scene_update(snap, sorted(self._shown - set(snap.names))), log_time=t_ns)
        self._shown = set(snap.names)
        if self.tf_channel.has_sinks():
            self.tf_channel.log(scene.frame_transforms(snap), log_time=t_ns)
        if self.locations_channel.has_sinks():
            self.locations_channel.log(scene.location_fixes(snap), log_time=t_ns)
        now = time.monotonic()
        if environment is not None and now >= self._environment_due and self.environment_channel.has_sinks():
            self._environment_due = now + ENVIRONMENT_PERIOD_S
            x, y = environment_view.grid_around(snap.position)
            stamp = scene.stamp(snap.sim_time_s)
            surface = environment_view.sea_surface(environment, snap.sim_time_s, x, y, stamp)
            entities = [environment_view.seabed(environment, x, y, stamp), *([surface] if surface else [])]
            self.environment_channel.log(SceneUpdate(entities=entities), log_time=t_ns)

    def send_slow(self, operators: Operators, audit: AuditLog) -> None:
        """Operators, audit log and models: on a change, and every SLOW_PUBLISH_S for clients that came later."""
        now, sent = time.monotonic(), (operators.revision, audit.seq)
        if sent != self._sent or now >= self._slow_due:
            self._sent, self._slow_due = sent, now + SLOW_PUBLISH_S
            self.operators_channel.log(json.dumps(operators.listing()).encode())
            self.audit_channel.log(json.dumps(audit.recent()).encode())
            self._send_models()

    def _send_models(self) -> None:
        """The catalogue, asked until it comes, then sent with the slow channels."""
        asked = self._models_asked
        if self.models is None and (asked is None or asked.done()):
            if asked is not None and asked.exception() is None:
                self.models = asked.result()
            else:
                self._models_asked = self._ask_models()
        if self.models is not None:
            self.models_channel.log(json.dumps(self.models).encode())

    def send_world(self, environment, sim_time_s: float, origin: GeodeticOrigin | None) -> None:
        """The world (static), when due; its WGS84 drawing only once the map's origin is known (`origin`)."""
        if not self.world_due or environment is None:
            return
        self.world_due = False
        if self.world_channel.has_sinks():
            self.world_channel.log(world_view.world_scene(environment.world, scene.stamp(sim_time_s)))
        if origin is not None and self.world_map_channel.has_sinks():
            self.world_map_channel.log(_json(world_view.world_wgs84(environment.world, origin)))

    def log_entry(self, entry: AuditEntry) -> None:
        """An audit entry as a Foxglove log line (a refusal as a warning)."""
        level = LogLevel.Info if entry.ok else LogLevel.Warning
        self.log_channel.log(Log(level=level, message=f"{entry.operator}: {entry.command}: {entry.message}",
                                 name="console"))  # fmt: skip


class Listener:
    """Foxglove server events: a client that subscribes is seen (a spectator until it logs in), and gets the world
    (static: sent on a subscription to it); one that unsubscribes from the operators channel (every client of the
    page does, when it leaves) is gone."""

    def __init__(self, operators: Operators, channels: Channels) -> None:
        self.operators, self.channels = operators, channels

    def on_subscribe(self, client, channel) -> None:
        self.operators.seen(client.id)
        if channel.topic in (WORLD, WORLD_MAP):
            self.channels.world_due = True

    def on_unsubscribe(self, client, channel) -> None:
        if channel.topic == OPERATORS:
            self.operators.left(client.id)
