"""Vessel controllers, many to a process: the contract every controller follows, its registry, and the
`controller_host` node that hosts a list of them (docs/autonomy.md).

The contract. A vessel controller is a class

    class MyController:
        TYPE = "my_type"                        # the scenario's `controllers[i].type`
        SETPOINT_KEYS = ("depth_m", ...)        # the scenario `setpoints:` keys it accepts (scenario.SETPOINT_KEYS)
        REQUIRED_SETPOINTS = ("depth_m",)       # of which these must be given

        @classmethod
        def cannot_drive(cls, spec: VehicleSpec) -> str | None:
            '''ROS-free: why this controller cannot drive a vehicle of this spec, or None if it can.'''

        def __init__(self, node: rclpy.node.Node, vessel: str, params: dict[str, Any]) -> None:
            '''Create its subscriptions, publishers, services and timers on `node`, with names relative to the
            vessel and no leading slash (f"{vessel}/odom", f"{vessel}/thrusters/{name}/cmd", ...), so that
            the host's namespace and remappings apply; its vessel's states through
            VesselController.listen_for_states (the odometry topic, or the host's fleet-state intake). Raise
            ValueError("<vessel>: <key>: <reason>") on a bad parameter.'''

        def close(self) -> None:
            '''Destroy what it created on the node (the host calls it on shutdown or removal).'''

and is registered in CONTROLLER_TYPES under its TYPE. `params` (a plain dict, the same keys whether they come from
the scenario, a `controllers_yaml` entry or the ROS parameters of a standalone node) holds:

    model                       catalogue model of the vessel (config/vehicles/<model>.yaml), required
    origin_latitude_deg, origin_longitude_deg, origin_altitude_m
                                the world origin (WGS84) of `map`, for geodetic set-points
    setpoints                   dict: the scenario's set-points after validation (scenario.py), applied at start;
                                the runtime topics/services of the controller change them later
    <anything else>             the controller's own tuning parameters (gains); unknown keys are an error

Helpers for writing one (controller_base.py, re-exported here): ParamReader (typed reads of params with
`where: key: reason` errors; `finish()` rejects unknown keys), SingleControllerNode and main_for (the standalone
executable of a type). Controller modules import controller_base, not this module (which imports them all).

A standalone node (one per type, for `ros2 run`) wraps one controller: its ROS parameters, with dotted names
nested (`setpoints.depth_m` -> params["setpoints"]["depth_m"]), become `params`; `vessel` names the vessel.
The host node's parameter `controllers_yaml` is a YAML list of {type, vessel, params}.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rclpy.node import Node

from lotusim_autonomy.command_outbox import CommandOutbox
from lotusim_autonomy.controller_base import (  # noqa: F401 - re-exported: the contract's helpers
    COMMON_KEYS,
    DEFAULT_ORIGIN,
    DEFAULT_STATE_RATE_HZ,
    STATE_SOURCES,
    ParamReader,
    SingleControllerNode,
    main_for,
    nest,
    parse_controllers_yaml,
)
from lotusim_core.ros.node_runner import with_sim_time


def build_controller(node: Node, kind: str, vessel: str, params: Mapping[str, Any]):
    """One controller of type `kind` for `vessel` on `node`; ValueError with the reason if it cannot be built."""
    if kind not in CONTROLLER_TYPES:
        raise ValueError(f"{vessel}: type: expected one of {sorted(CONTROLLER_TYPES)}, got {kind!r}")
    return CONTROLLER_TYPES[kind](node, vessel, dict(params))


class ControllerHost(Node):
    """Hosts the controllers listed in the `controllers_yaml` parameter (a YAML list of {type, vessel, params})
    on this one node; each controller keeps its own per-vessel topics and services. Its controllers take their
    vessels' states from /lotusim/fleet_state (parameter `state_source`, the default of each controller's own):
    the vessel controllers at `state_rate_hz` of sim time (lotusim_autonomy.fleet_state_intake), the flight
    controllers on every fleet state, stepped together (multirotor_controller.py, FlightFleetIntake).
    `state_source: odom` (the host's, or one controller's) reads the `<vessel>/odom` topics instead: for a stack
    that remaps them."""

    def __init__(self, batch_commands: bool = False, **node_kwargs) -> None:
        """batch_commands: the default of the parameter of that name, True when the host runs as its own process
        (main: its spin loop sends the held commands, lotusim_core.ros.node_runner.spin), False for a host built
        and spun in another program, whose controllers then publish on their command topics."""
        overrides = with_sim_time(node_kwargs.pop("parameter_overrides", []))
        super().__init__(node_kwargs.pop("node_name", "controller_host"), parameter_overrides=overrides, **node_kwargs)
        text = self.declare_parameter("controllers_yaml", "[]").value
        self.default_state_source = self.declare_parameter("state_source", "fleet_state").value
        if self.default_state_source not in STATE_SOURCES:
            raise ValueError(f"state_source: expected one of {STATE_SOURCES}, got {self.default_state_source!r}")
        self.state_rate_hz = self.declare_parameter("state_rate_hz", DEFAULT_STATE_RATE_HZ).value
        if not isinstance(self.state_rate_hz, float) or not self.state_rate_hz > 0.0:
            raise ValueError(f"state_rate_hz: expected a rate > 0 Hz, got {self.state_rate_hz!r}")
        # the controllers' actuator commands in one message per burst (command_outbox), unless a stack remaps them
        self.outbox = CommandOutbox(self) if self.declare_parameter("batch_commands", batch_commands).value else None
        entries = parse_controllers_yaml(text)
        self.controllers: dict[tuple[str, str], Any] = {}
        for i, entry in enumerate(entries):
            key = (entry["type"], entry["vessel"])
            if key in self.controllers:
                raise ValueError(f"controllers_yaml[{i}]: {entry['vessel']} already has a {entry['type']}")
            try:
                self.controllers[key] = build_controller(self, entry["type"], entry["vessel"], entry["params"])
            except ValueError as exc:
                raise ValueError(f"controllers_yaml[{i}] ({entry['type']}): {exc}") from None
        self.get_logger().info(f"hosting {len(self.controllers)} controller(s)")

    def close(self) -> None:
        for controller in self.controllers.values():
            close = getattr(controller, "close", None)
            if close is not None:
                close()
        self.controllers.clear()


def main(args: list[str] | None = None) -> None:
    """Entry point of `ros2 run lotusim controller_host --ros-args -p controllers_yaml:='[{type: ..., ...}]'`."""
    main_for(lambda: ControllerHost(batch_commands=True), "controller_host", args)


def _registry() -> dict[str, type]:
    from lotusim_autonomy.depth_heading_autopilot import DepthHeadingAutopilot
    from lotusim_autonomy.multirotor_controller import FlightController
    from lotusim_autonomy.rov_controller import StationKeeper
    from lotusim_autonomy.usv_controller import UsvController
    from lotusim_autonomy.waypoint_follower import WaypointFollower

    kinds = (WaypointFollower, DepthHeadingAutopilot, StationKeeper, FlightController, UsvController)
    types: dict[str, type] = {c.TYPE: c for c in kinds}
    return types


CONTROLLER_TYPES: dict[str, type] = _registry()
