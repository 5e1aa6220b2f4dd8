"""waypoint_follower node: drives a surface vessel (WAM-V, kayak USV by differential thrust; the ships by their
rudders) through WGS84 waypoints, using the standard per-vessel topics only (docs/autonomy.md).

  in   <vessel>/odom                     nav_msgs/Odometry (map ENU, base_link FLU)
  in   <vessel>/waypoints/set            lotusim_interfaces/srv/SetWaypoints (lat/lon deg; empty list = stop)
  in   /lotusim/environment               lotusim_interfaces/EnvironmentConfig (latched; its `origin`, if set,
                                          replaces the origin_* parameters)
  out  <vessel>/thrusters/<name>/cmd     std_msgs/Float64 (names and units from config/vehicles/<model>.yaml)
  out  <vessel>/fins/<name>/cmd          std_msgs/Float64, rad (vessels with rudder fins: the ships)
  out  <vessel>/waypoints/status         std_msgs/Float64MultiArray, layout label STATUS_LABEL:
                                          [stamp_s, index, count, distance_m, cross_track_m, done]

One control step per odometry message; the step h is the difference of the message stamps (sim time), so the
loop runs at the odometry rate of the dynamics node whatever the wall-clock speed of the simulation. Guidance:
guidance.WaypointGuidance (LOS course, "pid" or "bang_bang" speed), control: surface.SurfaceController. Defaults
that scale with the vessel (surface.path_scales): acceptance radius and LOS lookahead from its length and turning
radius (the WAM-V and the kayak keep 3 m and 8 m, a 142 m ship at 8 m/s gets ~97 m and ~350 m).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from rclpy.node import Node
from std_msgs.msg import Float64MultiArray

from lotusim_autonomy.allocation import DifferentialThrustAllocation
from lotusim_autonomy.controller_base import VesselController, main_for, standalone_node, status_message
from lotusim_autonomy.guidance import GUIDANCE_MODES, WaypointGuidance
from lotusim_autonomy.odometry import NedState
from lotusim_autonomy.pid import Pid
from lotusim_autonomy.surface import (
    SurfaceController,
    SurfaceGains,
    default_cruise_speed,
    path_scales,
    rudder_allocation,
    steerage_speed,
)
from lotusim_core.base import frames, safe_yaml
from lotusim_core.base.geodesy import GeodeticOrigin, enu_to_geodetic, geodetic_to_enu
from lotusim_core.base.vehicle_spec import VehicleSpec
from lotusim_core.ros.qos import LATCHED
from lotusim_env.environment import build_environment
from lotusim_interfaces.msg import EnvironmentConfig
from lotusim_interfaces.srv import SetWaypoints

STATUS_LABEL = "stamp_s,index,count,distance_m,cross_track_m,done"
MAX_WAYPOINTS = 10_000


class WaypointFollower(VesselController):
    """One vessel's waypoint follower, on a host node (contract: controller_host.py)."""

    TYPE = "waypoint_follower"
    SETPOINT_KEYS = ("waypoints", "acceptance_radius_m", "speed_mps", "loop")
    REQUIRED_SETPOINTS = ()

    @classmethod
    def cannot_drive(cls, spec: VehicleSpec) -> str | None:
        """Why the follower cannot drive this vehicle (it steers a surface vessel by differential thrust or by its
        rudders, and allocates surge to its thrusters)."""
        if spec.domain != "surface":
            return f"the waypoint follower drives surface vessels; {spec.name} is an {spec.domain} vehicle"
        try:
            DifferentialThrustAllocation(spec.thrusters, spec.water_density_kgm3)
            rudder_allocation(spec, spec.water_density_kgm3)
        except ValueError as exc:
            return f"the waypoint follower steers by differential thrust or rudders; {spec.name}: {exc}"
        return None

    def __init__(self, node: Node, vessel: str, params: dict[str, Any]) -> None:
        read, spec = self.open(node, vessel, params)
        gains = SurfaceGains(
            heading_omega_rad_s=read.number("heading_omega_rad_s", 0.5, 0.0),
            heading_zeta=read.number("heading_zeta", 1.0, 0.0),
            ref_omega_rad_s=read.number("heading_ref_omega_rad_s", 0.4, 0.0),
            yaw_rate_max_rad_s=math.radians(read.number("yaw_rate_max_deg_s", 10.0, 0.0)),
            surge_k_per_s=read.number("surge_k_per_s", 0.5, 0.0),
            surge_ki=read.number("surge_ki", 5.0, 0.0),
        )
        rho = read.number("water_density_kgm3", spec.water_density_kgm3, 900.0, 1100.0)
        mode = read.text("guidance_mode", "pid", GUIDANCE_MODES)
        self.default_speed_mps = read.number("cruise_speed_mps", default_cruise_speed(spec, rho), 0.0)
        self.controller = SurfaceController(spec, gains, rho, cruise_speed_mps=self.default_speed_mps)
        gains = self.controller.gains  # within what the vessel's actuators allow (surface.bounded_gains)
        # a ship's path geometry scales with its length and turning radius
        radius, lookahead = path_scales(spec, self.default_speed_mps, gains.yaw_rate_max_rad_s)
        self.default_radius_m = read.number("acceptance_radius_m", radius, 0.0)
        self.guidance = WaypointGuidance(
            mode=mode,
            acceptance_radius_m=self.default_radius_m,
            lookahead_m=read.number("lookahead_m", lookahead, 0.0),
            u_max=self.default_speed_mps,
            u_min=read.number("min_speed_mps", 0.2, 0.0),
            a_max=read.number("accel_limit_mps2", 0.2, 0.0),
            # LOTUSim's linear_pid defaults (0.5, 0.05, 0.1), [Buche2025] code, its waypoint follower
            speed_pid=Pid(
                read.number("speed_kp", 0.5),
                read.number("speed_ki", 0.05),
                read.number("speed_kd", 0.1),
                integral_limit=self.default_speed_mps,
            ),
            turn_rate_max_rad_s=0.8 * gains.yaw_rate_max_rad_s,
            u_steer=steerage_speed(self.controller, self.default_speed_mps),
        )
        self._origin_param = read.origin()
        setpoints = read.setpoints()
        read.finish()
        self._origin_env: GeodeticOrigin | None = None
        self._pending: SetWaypoints.Request | None = self._initial_route(setpoints)
        v = vessel
        made = self._endpoints
        self._thruster_pubs = [made.command(f"{v}/thrusters/{t.name}/cmd") for t in spec.thrusters]
        self._fin_pubs = [made.command(f"{v}/fins/{f.name}/cmd") for f in spec.fins]
        self._status_pub = made.publisher(Float64MultiArray, f"{v}/waypoints/status")
        self.listen_for_states()
        made.subscription(EnvironmentConfig, "/lotusim/environment", self._on_environment, LATCHED)
        made.service(SetWaypoints, f"{v}/waypoints/set", self._on_set_waypoints)
        self.last_commands = np.zeros(len(spec.thrusters))
        route = (
            "no route" if self._pending is None else f"{len(self._pending.latitude_deg)} waypoints from its set-points"
        )
        node.get_logger().info(f"waypoint follower for {v} ({self.model}), guidance {mode}, {route}")

    def _initial_route(self, setpoints: dict[str, Any]) -> SetWaypoints.Request | None:
        """The scenario's route (latitude_deg / longitude_deg lists, or waypoints_enu [[x, y], ...] or flat
        [x0, y0, ...] in map ENU metres), applied at the first odometry so its first leg starts at the vessel."""
        where = f"{self.TYPE} {self.vessel}: setpoints"
        known = {"latitude_deg", "longitude_deg", "waypoints_enu", "acceptance_radius_m", "speed_mps", "loop"}
        unknown = sorted(set(setpoints) - known)
        if unknown:
            raise ValueError(f"{where}: unknown key(s) {unknown}; expected some of {sorted(known)}")
        req = SetWaypoints.Request()
        try:
            lat = [float(x) for x in setpoints.get("latitude_deg") or []]
            lon = [float(x) for x in setpoints.get("longitude_deg") or []]
            if not lat and setpoints.get("waypoints_enu"):
                enu = np.asarray(setpoints["waypoints_enu"], dtype=float).reshape(-1, 2)
                geo = enu_to_geodetic(np.column_stack([enu, np.zeros(len(enu))]), self._origin_param)
                lat, lon = geo[:, 0].tolist(), geo[:, 1].tolist()
            req.acceptance_radius_m = float(setpoints.get("acceptance_radius_m", 0.0))
            req.speed_mps = float(setpoints.get("speed_mps", 0.0))
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{where}: expected numbers and lists of numbers ({exc})") from None
        req.loop = bool(setpoints.get("loop", False))
        if not lat:
            return None
        req.latitude_deg, req.longitude_deg = lat, lon
        problem = route_problem(np.asarray(lat), np.asarray(lon), req.acceptance_radius_m, req.speed_mps)
        if problem is not None:
            raise ValueError(f"{where}: {problem}")
        return req

    @property
    def origin(self) -> GeodeticOrigin:
        return self._origin_env if self._origin_env is not None else self._origin_param

    def _on_environment(self, msg: EnvironmentConfig) -> None:
        try:
            self._origin_env = build_environment(safe_yaml.load(msg.config_yaml)).origin
        except Exception as exc:  # noqa: BLE001 - a bad environment must not stop the follower
            self.node.get_logger().error(f"environment revision {msg.revision} ignored: {exc}")

    def _on_set_waypoints(self, request: SetWaypoints.Request, response: SetWaypoints.Response):
        lat = np.asarray(request.latitude_deg, dtype=float)
        lon = np.asarray(request.longitude_deg, dtype=float)
        where = f"{self.vessel}/waypoints/set"
        problem = route_problem(lat, lon, request.acceptance_radius_m, request.speed_mps)
        if problem is not None:
            response.success, response.message = False, f"{where}: {problem}; route unchanged"
            return response
        enu = geodetic_to_enu(np.column_stack([lat, lon, np.zeros_like(lat)]), self.origin)[:, :2]
        g = self.guidance
        g.acceptance_radius_m = (
            request.acceptance_radius_m if request.acceptance_radius_m > 0 else self.default_radius_m
        )
        g.u_max = request.speed_mps if request.speed_mps > 0 else self.default_speed_mps
        start = self.state.position_enu_xy if self.state is not None else (enu[0] if len(enu) else np.zeros(2))
        g.set_route(enu, start, loop=bool(request.loop))
        if not len(enu):
            self._publish_commands(self.controller.stop())
        response.success = True
        response.message = f"{len(enu)} waypoints, acceptance radius {g.acceptance_radius_m} m, {g.u_max} m/s"
        self.node.get_logger().info(f"{self.vessel}: {response.message}")
        return response

    def control(self, s: NedState, h: float) -> None:
        """The scenario's route at the first state, then one guidance and control step per new stamp."""
        if self._pending is not None:  # the scenario's route: its first leg starts where the vessel is now
            request, self._pending = self._pending, None
            answer = self._on_set_waypoints(request, SetWaypoints.Response())
            if not answer.success:
                self.node.get_logger().error(f"{self.vessel}: scenario route rejected: {answer.message}")
        if h <= 0.0:  # first message, or a stamp that did not advance (e.g. after a restore): no step
            return
        try:
            u_d, chi_d, status = self.guidance.update(s.position_enu_xy, s.nu_frd[0], s.yaw_enu_rad, s.t_s, h)
            if status.done:
                cmd = self.controller.stop()
            else:
                psi_d = float(frames.yaw_enu_to_ned(chi_d))
                cmd = self.controller.step(s.nu_frd[0], s.rpy_ned_rad[2], s.nu_frd[5], u_d, psi_d, h)
            if not np.all(np.isfinite(cmd)):
                raise ValueError(f"non-finite thruster commands {cmd.tolist()}")
        except (ValueError, FloatingPointError, IndexError) as exc:  # a bad step stops the vessel, not the node
            self.node.get_logger().error(f"{self.vessel}: control step at t = {s.t_s:.3f} s failed ({exc}); thrust off")
            self._publish_commands(self.controller.stop())
            return
        self._publish_commands(cmd)
        values = [s.t_s, float(status.index), float(status.count), status.distance_m, status.cross_track_m,
                    float(status.done)]  # fmt: skip
        self._status_pub.publish(status_message(STATUS_LABEL, values))
        self.updates += 1

    def _publish_commands(self, commands: np.ndarray) -> None:
        self.last_commands = np.asarray(commands, dtype=float)
        for send, value in zip(self._thruster_pubs, self.last_commands, strict=True):
            send(float(value))
        for send, angle in zip(self._fin_pubs, self.controller.last_fins, strict=True):  # rudders (ships), rad
            send(float(angle))


def route_problem(lat: np.ndarray, lon: np.ndarray, radius_m: float, speed_mps: float) -> str | None:
    """What is wrong with a route (WGS84 deg), or None."""
    if lat.shape != lon.shape:
        return f"expected as many latitudes as longitudes, got {lat.size} and {lon.size}"
    if lat.size > MAX_WAYPOINTS:
        return f"expected at most {MAX_WAYPOINTS} waypoints, got {lat.size}"
    if not (np.all(np.isfinite(lat)) and np.all(np.isfinite(lon))):
        return "expected finite latitudes and longitudes, got NaN or infinity"
    if np.any(np.abs(lat) > 90.0) or np.any((lon < -180.0) | (lon > 360.0)):
        return "expected latitudes in [-90, 90] and longitudes in [-180, 360] deg"
    if not (math.isfinite(radius_m) and math.isfinite(speed_mps)):
        return "expected a finite acceptance_radius_m and speed_mps"
    return None


WaypointFollowerNode = standalone_node(WaypointFollower)


def main(args: list[str] | None = None) -> None:
    """Entry point of `ros2 run lotusim waypoint_follower --ros-args -p vessel:=usv -p model:=wamv`."""
    main_for(WaypointFollowerNode, WaypointFollower.TYPE, args)
