"""waypoint_follower node: drives a differential-thrust surface vessel (WAM-V, kayak USV) through WGS84
waypoints, using the standard per-vessel topics only (docs/autonomy.md).

  in   /<vessel>/odom                     nav_msgs/Odometry (map ENU, base_link FLU)
  in   /<vessel>/waypoints/set            lotusim_interfaces/srv/SetWaypoints (lat/lon deg; empty list = stop)
  in   /lotusim/environment               lotusim_interfaces/EnvironmentConfig (latched; its `origin`, if set,
                                          replaces the origin_* parameters)
  out  /<vessel>/thrusters/<name>/cmd     std_msgs/Float64 (names and units from config/vehicles/<model>.yaml)
  out  /<vessel>/waypoints/status         std_msgs/Float64MultiArray, layout label STATUS_LABEL:
                                          [stamp_s, index, count, distance_m, cross_track_m, done]

One control step per odometry message; the step h is the difference of the message stamps (sim time), so the
loop runs at the odometry rate of the dynamics node whatever the wall-clock speed of the simulation. Guidance:
guidance.WaypointGuidance (LOS course, "pid" or "bang_bang" speed), control: surface.SurfaceController.
"""

from __future__ import annotations

import math

import numpy as np
import yaml
from nav_msgs.msg import Odometry
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import Float64, Float64MultiArray, MultiArrayDimension

from lotusim_autonomy.guidance import GUIDANCE_MODES, WaypointGuidance
from lotusim_autonomy.odometry import NedState, from_odometry, is_finite, step_since
from lotusim_autonomy.pid import Pid
from lotusim_autonomy.surface import SurfaceController, SurfaceGains
from lotusim_core import frames
from lotusim_core.catalogue import load_vehicle
from lotusim_core.geodesy import GeodeticOrigin, geodetic_to_enu
from lotusim_core.node_runner import run_node_main, with_sim_time
from lotusim_env.environment import build_environment
from lotusim_interfaces.msg import EnvironmentConfig
from lotusim_interfaces.srv import SetWaypoints

LATCHED = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE)
STATUS_LABEL = "stamp_s,index,count,distance_m,cross_track_m,done"
MAX_WAYPOINTS = 10_000


class WaypointFollower(Node):
    """One vessel's waypoint follower."""

    def __init__(self, **node_kwargs) -> None:
        overrides = with_sim_time(node_kwargs.pop("parameter_overrides", []))  # ARCHITECTURE principle 6
        super().__init__(
            node_kwargs.pop("node_name", "waypoint_follower"), parameter_overrides=overrides, **node_kwargs
        )
        self.vessel = self.declare_parameter("vessel", "usv").value
        self.model = self.declare_parameter("model", "wamv").value
        spec = load_vehicle(self.model)
        gains = SurfaceGains(
            heading_omega_rad_s=float(self.declare_parameter("heading_omega_rad_s", 0.5).value),
            heading_zeta=float(self.declare_parameter("heading_zeta", 1.0).value),
            ref_omega_rad_s=float(self.declare_parameter("heading_ref_omega_rad_s", 0.4).value),
            yaw_rate_max_rad_s=math.radians(float(self.declare_parameter("yaw_rate_max_deg_s", 10.0).value)),
            surge_k_per_s=float(self.declare_parameter("surge_k_per_s", 0.5).value),
            surge_ki=float(self.declare_parameter("surge_ki", 5.0).value),
        )
        rho = float(self.declare_parameter("water_density_kgm3", spec.water_density_kgm3).value)
        self.controller = SurfaceController(spec, gains, rho)
        mode = self.declare_parameter("guidance_mode", "pid").value
        if mode not in GUIDANCE_MODES:
            raise ValueError(f"parameter guidance_mode: expected one of {GUIDANCE_MODES}, got {mode!r}")
        self.default_radius_m = float(self.declare_parameter("acceptance_radius_m", 3.0).value)
        self.default_speed_mps = float(self.declare_parameter("cruise_speed_mps", 1.5).value)
        self.guidance = WaypointGuidance(
            mode=mode,
            acceptance_radius_m=self.default_radius_m,
            lookahead_m=float(self.declare_parameter("lookahead_m", 8.0).value),
            u_max=self.default_speed_mps,
            u_min=float(self.declare_parameter("min_speed_mps", 0.2).value),
            a_max=float(self.declare_parameter("accel_limit_mps2", 0.2).value),
            # LOTUSim's linear_pid defaults (0.5, 0.05, 0.1), lotusim_reference.md sec. 8
            speed_pid=Pid(
                float(self.declare_parameter("speed_kp", 0.5).value),
                float(self.declare_parameter("speed_ki", 0.05).value),
                float(self.declare_parameter("speed_kd", 0.1).value),
                integral_limit=self.default_speed_mps,
            ),
            turn_rate_max_rad_s=0.8 * gains.yaw_rate_max_rad_s,
        )
        self._origin_param = GeodeticOrigin(
            float(self.declare_parameter("origin_latitude_deg", 48.3904).value),
            float(self.declare_parameter("origin_longitude_deg", -4.4861).value),
            float(self.declare_parameter("origin_altitude_m", 0.0).value),
        )
        self._origin_env: GeodeticOrigin | None = None
        v = self.vessel
        self._thruster_pubs = [
            self.create_publisher(Float64, f"/{v}/thrusters/{t.name}/cmd", 10) for t in spec.thrusters
        ]
        self._status_pub = self.create_publisher(Float64MultiArray, f"/{v}/waypoints/status", 10)
        self.create_subscription(Odometry, f"/{v}/odom", self._on_odom, 10)
        self.create_subscription(EnvironmentConfig, "/lotusim/environment", self._on_environment, LATCHED)
        self.create_service(SetWaypoints, f"/{v}/waypoints/set", self._on_set_waypoints)
        self.state: NedState | None = None
        self.updates = 0  # control steps done
        self.odom_count = 0  # odometry messages handled (the first one only initialises the step h)
        self.last_commands = np.zeros(len(spec.thrusters))
        self.get_logger().info(f"waypoint follower for {v} ({self.model}), guidance {mode}")

    @property
    def origin(self) -> GeodeticOrigin:
        return self._origin_env if self._origin_env is not None else self._origin_param

    def _on_environment(self, msg: EnvironmentConfig) -> None:
        try:
            self._origin_env = build_environment(yaml.safe_load(msg.config_yaml)).origin
        except Exception as exc:  # noqa: BLE001 - a bad environment must not stop the follower
            self.get_logger().error(f"environment revision {msg.revision} ignored: {exc}")

    def _on_set_waypoints(self, request: SetWaypoints.Request, response: SetWaypoints.Response):
        lat = np.asarray(request.latitude_deg, dtype=float)
        lon = np.asarray(request.longitude_deg, dtype=float)
        where = f"/{self.vessel}/waypoints/set"
        problem = None
        if lat.shape != lon.shape:
            problem = f"expected as many latitudes as longitudes, got {lat.size} and {lon.size}"
        elif lat.size > MAX_WAYPOINTS:
            problem = f"expected at most {MAX_WAYPOINTS} waypoints, got {lat.size}"
        elif not (np.all(np.isfinite(lat)) and np.all(np.isfinite(lon))):
            problem = "expected finite latitudes and longitudes, got NaN or infinity"
        elif np.any(np.abs(lat) > 90.0) or np.any((lon < -180.0) | (lon > 360.0)):
            problem = "expected latitudes in [-90, 90] and longitudes in [-180, 360] deg"
        elif not (math.isfinite(request.acceptance_radius_m) and math.isfinite(request.speed_mps)):
            problem = "expected a finite acceptance_radius_m and speed_mps"
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
        self.get_logger().info(f"{self.vessel}: {response.message}")
        return response

    def _on_odom(self, msg: Odometry) -> None:
        self.odom_count += 1
        s = from_odometry(msg)
        if not is_finite(s):
            self.get_logger().warning(f"{self.vessel}: non-finite odometry ignored")
            return
        h = step_since(self.state, s)
        self.state = s
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
            self.get_logger().error(f"{self.vessel}: control step at t = {s.t_s:.3f} s failed ({exc}); thrust off")
            self._publish_commands(self.controller.stop())
            return
        self._publish_commands(cmd)
        out = Float64MultiArray()
        out.layout.dim = [MultiArrayDimension(label=STATUS_LABEL, size=6, stride=6)]
        out.data = [s.t_s, float(status.index), float(status.count), status.distance_m, status.cross_track_m,
                    float(status.done)]  # fmt: skip
        self._status_pub.publish(out)
        self.updates += 1

    def _publish_commands(self, commands: np.ndarray) -> None:
        self.last_commands = np.asarray(commands, dtype=float)
        for pub, value in zip(self._thruster_pubs, self.last_commands, strict=True):
            pub.publish(Float64(data=float(value)))


def main(args: list[str] | None = None) -> None:
    """Entry point of `ros2 run lotusim waypoint_follower --ros-args -p vessel:=usv -p model:=wamv`."""
    run_node_main(WaypointFollower, args)
