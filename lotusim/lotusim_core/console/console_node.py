"""The console node: the simulation read over DDS, served to Foxglove clients and to the console page, and the
operators' commands carried out through the simulation's own interfaces.

In: /lotusim/fleet_state and /lotusim/fleet_roster (every worker), /lotusim/stats, /lotusim/environment.
Out: a Foxglove WebSocket server on (`host`, `port`) with the channels of `channels.CHANNELS` and the services
`login`, `watch` and `command` (JSON, `services`); the page on `http_port` (-1: none); `/lotusim/console/audit`
(std_msgs/String, one JSON audit entry each, recorded with the rest). Commands: spawn/move/delete through the
FleetCommand action (FleetClient), waypoints through `/<vessel>/waypoints/set`, pause/resume and the real-time
factor through the clock master's parameters (`master_node`: `paused`, `real_time_factor`). They run one at a time
on a thread of their own (`command_runner`), so the view keeps updating meanwhile. The parameters: `settings`.
docs/console.md.
"""

from __future__ import annotations

import json
import time

import foxglove
import numpy as np
from foxglove.websocket import Capability
from rclpy.node import Node
from rclpy.serialization import deserialize_message
from std_msgs.msg import String

from lotusim_core.base import safe_yaml
from lotusim_core.base.geodesy import GeodeticOrigin
from lotusim_core.console.channels import AUDIT, Channels, Listener
from lotusim_core.console.command_runner import CommandRunner
from lotusim_core.console.controller_watch import ControllerWatch
from lotusim_core.console.fleet_view import FleetView, WorkerState
from lotusim_core.console.operators import AuditEntry, AuditLog, Operators
from lotusim_core.console.services import Services
from lotusim_core.console.settings import PARAMETERS, Settings
from lotusim_core.console.web_server import PageServer
from lotusim_core.ros.node_runner import run_node_main
from lotusim_core.ros.qos import LATCHED
from lotusim_core.ros.ros_arrays import from_float64_array
from lotusim_core.sim.run_clock import fleet_state_head
from lotusim_env.environment import build_environment
from lotusim_interfaces.msg import EnvironmentConfig, FleetRoster, FleetState, SimStats


class ConsoleNode(Node):
    """The console: a FleetView fed over DDS, Foxglove channels and services, the page, the command runner."""

    def __init__(self, **node_kwargs) -> None:
        super().__init__(node_kwargs.pop("node_name", "console"), **node_kwargs)
        s = Settings.from_parameters({k: self.declare_parameter(k, v).value for k, v in PARAMETERS.items()})
        self.view = FleetView(s.origin or GeodeticOrigin())
        self._origin_given = s.origin is not None
        self.operators, self.audit = Operators(s.token or None), AuditLog()
        self.stats: dict[str, SimStats] = {}
        self._raw_states: dict[str, bytes] = {}  # worker -> its newest FleetState, serialized
        self.environment = None  # lotusim_env.environment.Environment, once /lotusim/environment came
        self.publish_cost_us = 0.0  # wall time of one update (views built and handed to the server), averaged
        self._subscribe()
        self._audit_pub = self.create_publisher(String, AUDIT, 100)
        self.runner = CommandRunner(self.context, s.master_node)
        self.watch = ControllerWatch(self)  # the selected vessels' controller status
        self.channels = Channels(self.runner.list_models)
        self.answers = Services(self.operators, self.audit, self.runner.submit, self.watch.watch,
                                 self.view.snapshot_time_s, self._on_audit_entry)  # fmt: skip
        self._serve(s)
        self.create_timer(1.0 / s.rate_hz, self._publish)

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
            msg = deserialize_message(raw, FleetState)
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
        """The environment function (the sea surface, seabed and world drawn for Foxglove) and, unless given as
        parameters, the map's origin."""
        try:
            self.environment = build_environment(safe_yaml.load(msg.config_yaml) or {})
        except (ValueError, OSError) as exc:  # ConfigError is a ValueError
            self.get_logger().warning(f"/lotusim/environment revision {msg.revision}: {exc}")
            return
        if not self._origin_given and self.environment.origin is not None:
            self.view.origin, self._origin_given = self.environment.origin, True
        self.channels.world_due = True

    # --- servers ----------------------------------------------------------------------------------------------
    def _serve(self, s: Settings) -> None:
        self.server = foxglove.start_server(
            name=s.name, host=s.host, port=s.port, context=self.channels.fox,
            services=self.answers.foxglove_services(), capabilities=[Capability.Services],
            supported_encodings=["json"], server_listener=Listener(self.operators, self.channels),
        )  # fmt: skip
        self.page = None
        if s.http_port >= 0:
            self.page = PageServer(s.host, s.http_port, {"ws_port": self.server.port, "name": s.name,
                                                         "token_required": bool(s.token)})  # fmt: skip
        where = f"page http://{s.host}:{self.page.port}/, " if self.page else ""
        self.get_logger().info(f"console: {where}Foxglove ws://{s.host}:{self.server.port}")

    # --- out --------------------------------------------------------------------------------------------------
    def _publish(self) -> None:
        start = time.perf_counter()
        self._decode_states()
        if self._origin_given:  # positions in WGS84 need the map's origin: shown once it is known
            rtf = sum(s.real_time_factor for s in self.stats.values()) / len(self.stats) if self.stats else 0.0
            self.channels.send_fleet(self.view.snapshot(), self.environment, rtf, self.answers.paused, self._extra)
        else:
            self.get_logger().info(
                "waiting for /lotusim/environment (the map's origin) or parameters origin_*", throttle_duration_sec=10.0
            )
        self.channels.send_slow(self.operators, self.audit)
        origin = self.view.origin if self._origin_given else None
        self.channels.send_world(self.environment, self.view.snapshot_time_s(), origin)
        cost_us = (time.perf_counter() - start) * 1e6
        self.publish_cost_us += 0.1 * (cost_us - self.publish_cost_us)  # moving average, shown to clients

    def _extra(self) -> dict:
        """The page's columns beside the fleet's: this update's cost and the watched vessels' controllers."""
        return {"server_us": round(self.publish_cost_us, 1), "controllers": self.watch.refresh()}

    def _on_audit_entry(self, entry: AuditEntry) -> None:
        self._audit_pub.publish(String(data=json.dumps(entry.__dict__)))
        self.channels.log_entry(entry)

    def destroy_node(self) -> None:
        self.runner.close()
        self.server.stop()
        if self.page is not None:
            self.page.close()
        super().destroy_node()


def main(args=None) -> None:
    run_node_main(ConsoleNode, args, refused=(ValueError,), what="console")
