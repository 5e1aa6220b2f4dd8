"""station_keeper: station keeping and waypoints at a depth for a thruster-vectored ROV (BlueROV2 Heavy), a vessel
controller (contract: controller_host.py) on the standard per-vessel topics (docs/autonomy.md).

  in   <vessel>/odom                      nav_msgs/Odometry (map ENU, base_link FLU)
  in   <vessel>/goal_pose                 geometry_msgs/PoseStamped in `map` ENU: the new station (x, y), its depth
                                           (-z) and heading (the orientation's yaw; an all-zero quaternion keeps
                                           the current heading); replaces any waypoints
  in   <vessel>/setpoint/depth            std_msgs/Float64, depth of the station, m (positive down)
  in   <vessel>/setpoint/heading          std_msgs/Float64, compass heading, deg (0 north, 90 east)
  out  <vessel>/thrusters/<name>/cmd      std_msgs/Float64, the thruster's command_unit (normalised for the T200)
  out  <vessel>/station_keeper/status     std_msgs/Float64MultiArray, layout label STATUS_LABEL (while subscribed)

Set-points from params["setpoints"] (all optional; what is missing is taken from the vessel's pose at the first
odometry, so a bare `station_keeper` holds the vessel where it is):
  position         [x, y], the station in map ENU, m
  depth_m          depth of the station and of every waypoint, m, positive down
  heading_deg      compass heading held throughout, deg (the ROV crabs: it does not turn along a leg)
  waypoints        [[x, y], ...] (map ENU, m), a flat [x0, y0, x1, y1, ...] or [{latitude_deg, longitude_deg},
                   ...] (WGS84 around the origin_* params); or, as scenario.py hands them on, latitude_deg and
                   longitude_deg lists / waypoints_enu. Flown in order, the last one then held (replaces
                   `position`)
  acceptance_radius_m   horizontal distance that counts a waypoint as reached (0: 1 m); also within 0.5 m of depth
  speed_mps        horizontal speed along a leg (0: speed_max_mps, 0.5 m/s)
  loop             true: after the last waypoint, the first again
One control step per odometry message (or per `min_step_s` of sim time at most, if set), h = difference of the
stamps (sim time); control law rov.RovController, every gain a parameter under its RovGains field name.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from geometry_msgs.msg import PoseStamped
from rclpy.node import Node
from std_msgs.msg import Float64, Float64MultiArray

from lotusim_autonomy.controller_base import VesselController, main_for, standalone_node, status_message
from lotusim_autonomy.odometry import NedState
from lotusim_autonomy.pid import ssa
from lotusim_autonomy.rov import (
    SETPOINT_KEYS,
    RovController,
    RovGains,
    RovMission,
    RovTarget,
    cannot_station_keep,
    parse_setpoints,
)
from lotusim_core.base import frames, rotations
from lotusim_core.base.vehicle_spec import VehicleSpec

STATUS_LABEL = (
    "stamp_s,waypoint_index,waypoint_count,horizontal_error_m,depth_m,depth_error_m,heading_deg,heading_error_deg,done"
)
MAX_DEPTH_M = 11_000.0
DEFAULT_RADIUS_M = 1.0  # a waypoint counts as reached within this horizontal distance (and 0.5 m of depth)


class StationKeeper(VesselController):
    """One ROV's station keeper on a host node (contract: controller_host.py)."""

    TYPE = "station_keeper"
    SETPOINT_KEYS = SETPOINT_KEYS
    REQUIRED_SETPOINTS = ()

    @classmethod
    def cannot_drive(cls, spec: VehicleSpec) -> str | None:
        """Why the station keeper cannot drive this vehicle (it needs thrusters for surge, sway, heave and yaw)."""
        return cannot_station_keep(spec)

    def __init__(self, node: Node, vessel: str, params: dict[str, Any]) -> None:
        read, spec = self.open(node, vessel, params)
        where = read.where
        gains = read.gains(RovGains, low=0.0)
        rho = read.number("water_density_kgm3", spec.water_density_kgm3, 900.0, 1100.0)
        # step at most once per min_step_s of sim time (0: on every odometry); slow loops need no 10 Hz, and a
        # host carrying many vessels then spends its time on those that do
        self.min_step_s = read.number("min_step_s", 0.0, 0.0, 10.0)
        origin = read.origin()
        setpoints = read.setpoints()
        read.finish()
        self.controller = RovController(spec, gains, rho)
        self._initial = parse_setpoints(setpoints, origin, f"{where}: setpoints")
        self.mission: RovMission | None = None
        self.depth_m: float | None = None
        self.heading_rad: float | None = None
        v = vessel
        made = self._endpoints
        self._pubs = [made.command(f"{v}/thrusters/{t.name}/cmd") for t in spec.thrusters]
        self._status_pub = made.publisher(Float64MultiArray, f"{v}/station_keeper/status")
        self.listen_for_states()
        made.subscription(PoseStamped, f"{v}/goal_pose", self._on_goal)
        made.subscription(Float64, f"{v}/setpoint/depth", self._on_depth)
        made.subscription(Float64, f"{v}/setpoint/heading", self._on_heading)
        self.target: RovTarget | None = None
        self.last_commands = np.zeros(len(spec.thrusters))
        node.get_logger().info(f"station keeper for {v} ({self.model}), set-points {self._initial}")

    # --- set-points ----------------------------------------------------------------------------------------------
    def _start(self, s: NedState) -> None:
        """At the first odometry: the scenario's set-points, the vessel's own pose for what they leave out."""
        sp, self._initial = self._initial, None
        self.depth_m = sp.get("depth_m", s.depth_m)
        self.heading_rad = sp.get("heading_rad", float(s.rpy_ned_rad[2]))
        if "speed_mps" in sp:
            self.controller.gains.speed_max_mps = sp["speed_mps"]
        points = sp.get("waypoints_enu") or [sp.get("position_enu", s.position_enu_xy)]
        self._set_route(points, sp.get("acceptance_radius_m", DEFAULT_RADIUS_M), sp.get("loop", False))

    def _set_route(self, points_enu, radius_m: float, loop: bool = False) -> None:
        targets = [RovTarget(float(y), float(x), self.depth_m, self.heading_rad) for x, y in points_enu]
        self.mission = RovMission(targets, acceptance_radius_m=radius_m, loop=loop)

    def _retarget(self, depth_m: float | None = None, heading_rad: float | None = None) -> None:
        """New depth and/or heading for every remaining target of the mission."""
        self.depth_m = self.depth_m if depth_m is None else depth_m
        self.heading_rad = self.heading_rad if heading_rad is None else heading_rad
        if self.mission is not None:
            self.mission.targets = [
                RovTarget(t.north_m, t.east_m, self.depth_m, self.heading_rad) for t in self.mission.targets
            ]

    def _warn(self, topic: str, reason: str) -> None:
        self.node.get_logger().warning(f"{self.vessel}/{topic}: {reason}; ignored")

    def _on_goal(self, msg: PoseStamped) -> None:
        p, q = msg.pose.position, msg.pose.orientation
        if msg.header.frame_id not in ("", "map"):
            return self._warn("goal_pose", f"expected frame_id 'map' (ENU), got {msg.header.frame_id!r}")
        values = [p.x, p.y, p.z, q.x, q.y, q.z, q.w]
        if not all(math.isfinite(x) for x in values):
            return self._warn("goal_pose", "expected finite numbers")
        if not 0.0 <= -p.z <= MAX_DEPTH_M:
            return self._warn("goal_pose", f"expected z in [-{MAX_DEPTH_M}, 0] (map ENU, below the surface)")
        if self.state is None:
            return self._warn("goal_pose", "no odometry yet")
        heading = None
        if q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w > 1e-12:
            yaw_enu = rotations.yaw_one(q.x, q.y, q.z, q.w)
            heading = float(frames.yaw_enu_to_ned(yaw_enu))
        self._retarget(-p.z, heading)
        self._set_route([(p.x, p.y)], self.mission.acceptance_radius_m if self.mission else DEFAULT_RADIUS_M)
        self.node.get_logger().info(f"{self.vessel}: goal ({p.x:.2f}, {p.y:.2f}) m, depth {-p.z:.2f} m")

    def _on_depth(self, msg: Float64) -> None:
        if not (math.isfinite(msg.data) and 0.0 <= msg.data <= MAX_DEPTH_M):
            return self._warn("setpoint/depth", f"expected a depth in [0, {MAX_DEPTH_M}] m, got {msg.data!r}")
        if self.state is None:
            return self._warn("setpoint/depth", "no odometry yet")
        self._retarget(depth_m=float(msg.data))

    def _on_heading(self, msg: Float64) -> None:
        if not math.isfinite(msg.data):
            return self._warn("setpoint/heading", f"expected a finite compass heading in deg, got {msg.data!r}")
        if self.state is None:
            return self._warn("setpoint/heading", "no odometry yet")
        self._retarget(heading_rad=math.radians(msg.data))

    # --- control ---------------------------------------------------------------------------------------------
    def skip_state(self, t_s: float) -> bool:
        """A state less than min_step_s of sim time after the last one taken is left untaken."""
        if self.state is not None and self.min_step_s > 0.0:
            return 0.0 <= t_s - self.state.t_s < self.min_step_s - 1e-6
        return False

    def control(self, s: NedState, h: float) -> None:
        """The scenario's set-points at the first state, then one station-keeping step per new stamp."""
        if self._initial is not None:
            self._start(s)
        if h <= 0.0:  # first message, or a stamp that did not advance: no step
            return
        try:
            self.target = self.mission.current(s)
            cmd = self.controller.step(s, self.target, h)
            if not np.all(np.isfinite(cmd)):
                raise ValueError(f"non-finite thruster commands {cmd.tolist()}")
        except (ValueError, FloatingPointError) as exc:  # a bad step stops the thrusters, not the node
            self.node.get_logger().error(f"{self.vessel}: control step at t = {s.t_s:.3f} s failed ({exc}); thrust off")
            cmd = self.controller.stop()
        self.last_commands = cmd
        for send, value in zip(self._pubs, cmd, strict=True):
            send(float(value))
        if self._status_pub.get_subscription_count() > 0:  # nobody listening: save the host the message
            self._publish_status(s)
        self.updates += 1

    def _publish_status(self, s: NedState) -> None:
        t, m = self.target, self.mission
        values = [
            s.t_s,
            float(m.index),
            float(len(m.targets)),
            math.hypot(t.north_m - s.position_ned_m[0], t.east_m - s.position_ned_m[1]),
            s.depth_m,
            s.depth_m - t.depth_m,
            math.degrees(s.rpy_ned_rad[2]) % 360.0,
            math.degrees(float(ssa(s.rpy_ned_rad[2] - t.heading_rad))),
            float(m.done),
        ]
        self._status_pub.publish(status_message(STATUS_LABEL, values))


StationKeeperNode = standalone_node(StationKeeper)


def main(args: list[str] | None = None) -> None:
    """Entry point of `ros2 run lotusim station_keeper --ros-args -p vessel:=rov -p model:=bluerov2_heavy`."""
    main_for(StationKeeperNode, StationKeeper.TYPE, args)
