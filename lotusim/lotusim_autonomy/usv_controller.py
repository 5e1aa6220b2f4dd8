"""usv_controller: the velocity, position, trajectory-tracking and path-following controllers of
[SaldarriagaMesa2025] sec. 5 for a differential-thrust USV (kayak_usv, wamv), on standard messages
(docs/autonomy.md). Laws: usv_control.UsvAutopilot; this module only wires ROS.

  in   <vessel>/odom                 nav_msgs/Odometry (map ENU, base_link FLU): the state, one step per message
  in   <vessel>/cmd_vel              geometry_msgs/Twist (base_link FLU): linear.x surge m/s, angular.z yaw rate
                                     rad/s counter-clockwise (REP 103); linear.y is ignored (no sway force)
  in   <vessel>/goal_pose            geometry_msgs/PoseStamped (frame map or empty): go there and stop within
                                     stop_radius_m (the orientation is not used: an under-actuated vessel)
  in   <vessel>/path                 nav_msgs/Path (frame map or empty): poses all stamped 0 -> path following at
                                     path_speed_mps; stamps increasing (sim time) -> trajectory tracking, the
                                     vessel at each pose at its stamp; an empty path stops the vessel
  out  <vessel>/thrusters/<name>/cmd std_msgs/Float64 (the vehicle file's thrusters and command units)
  out  <vessel>/usv_controller/status std_msgs/Float64MultiArray, label STATUS_LABEL (published while subscribed)

The last command received sets the mode. With cmd_vel_timeout_s > 0, a velocity command older than that (sim
time) stops the vessel.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from geometry_msgs.msg import PoseStamped, Twist
from nav_msgs.msg import Path
from rclpy.node import Node
from std_msgs.msg import Float64MultiArray

from lotusim_autonomy.allocation import DifferentialThrustAllocation
from lotusim_autonomy.controller_base import VesselController, main_for, standalone_node, status_message
from lotusim_autonomy.odometry import NedState
from lotusim_autonomy.usv_control import MODES, UsvAutopilot, UsvGains
from lotusim_core.base import frames
from lotusim_core.base.vehicle_spec import VehicleSpec

STATUS_LABEL = "stamp_s,mode,u_ref,r_ref,u,r,distance_m,path_error_m,done"
MAP_FRAMES = ("", "map")


class UsvController(VesselController):
    """One vessel's USV controller on a host node (contract: controller_host.py)."""

    TYPE = "usv_controller"
    SETPOINT_KEYS = ("waypoints", "acceptance_radius_m", "speed_mps", "loop", "goal_enu")
    REQUIRED_SETPOINTS = ()

    @classmethod
    def cannot_drive(cls, spec: VehicleSpec) -> str | None:
        """Why it cannot drive this vehicle (a surface vessel steered by differential thrust)."""
        if spec.domain != "surface":
            return f"the USV controller drives surface vessels; {spec.name} is an {spec.domain} vehicle"
        try:
            DifferentialThrustAllocation(spec.thrusters, spec.water_density_kgm3)
        except ValueError as exc:
            return f"the USV controller steers by differential thrust; {spec.name}: {exc}"
        return None

    def __init__(self, node: Node, vessel: str, params: dict[str, Any]) -> None:
        read, spec = self.open(node, vessel, params)
        gains = read.gains(UsvGains, low=0.0)
        self.path_speed_mps = read.number("path_speed_mps", 0.5, 0.0)
        self.cmd_vel_timeout_s = read.number("cmd_vel_timeout_s", 0.0, 0.0)
        setpoints = read.setpoints()
        read.finish()
        self.pilot = UsvAutopilot(spec, gains)
        self._initial(setpoints)
        v = vessel
        made = self._endpoints
        self._thruster_pubs = [made.command(f"{v}/thrusters/{t.name}/cmd") for t in spec.thrusters]
        self._status_pub = made.publisher(Float64MultiArray, f"{v}/usv_controller/status")
        self.listen_for_states()
        made.subscription(Twist, f"{v}/cmd_vel", self._on_cmd_vel)
        made.subscription(PoseStamped, f"{v}/goal_pose", self._on_goal)
        made.subscription(Path, f"{v}/path", self._on_path)
        self._cmd_vel_at: float | None = None
        self.last_commands = np.zeros(len(spec.thrusters))
        lim = self.pilot.limits
        node.get_logger().info(
            f"USV controller for {v} ({self.model}): u_max {lim.u_max_mps:.2f} m/s, r_max {lim.r_max_rad_s:.3f} rad/s, "
            f"look-ahead {lim.lookahead_m:.2f} m, mode {self.pilot.mode}"
        )

    def _initial(self, setpoints: dict[str, Any]) -> None:
        """The scenario's set-points: goal_enu [x, y] (map ENU m), or waypoints (a path at speed_mps)."""
        where = f"{self.TYPE} {self.vessel}: setpoints"
        known = {"goal_enu", "waypoints_enu", "latitude_deg", "longitude_deg", "acceptance_radius_m", "speed_mps",
                 "loop"}  # fmt: skip
        unknown = sorted(set(setpoints) - known)
        if unknown:
            raise ValueError(f"{where}: unknown key(s) {unknown}; expected some of {sorted(known)}")
        try:
            if setpoints.get("goal_enu") is not None:
                goal = np.asarray(setpoints["goal_enu"], dtype=float).reshape(2)
                if not np.all(np.isfinite(goal)):
                    raise ValueError("not finite")
                self.pilot.set_goal(goal)
            elif setpoints.get("waypoints_enu"):
                speed = float(setpoints.get("speed_mps") or self.path_speed_mps)
                self.pilot.set_path(np.asarray(setpoints["waypoints_enu"], dtype=float).reshape(-1, 2), speed)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{where}: expected goal_enu [x, y] or waypoints [[x, y], ...] in m ({exc})") from None

    # --- commands ----------------------------------------------------------------------------------------------
    def _on_cmd_vel(self, msg: Twist) -> None:
        twist = [msg.linear.x, msg.linear.y, msg.linear.z, msg.angular.x, msg.angular.y, msg.angular.z]
        if not np.all(np.isfinite(twist)):
            self.node.get_logger().warning(f"{self.vessel}: non-finite cmd_vel ignored")
            return
        nu = frames.twist_flu_to_frd(np.array(twist, dtype=float))  # REP 103 FLU -> the laws' FRD
        self.pilot.set_velocity(float(nu[0]), float(nu[5]))
        self._cmd_vel_at = self.state.t_s if self.state is not None else None

    def _on_goal(self, msg: PoseStamped) -> None:
        p = msg.pose.position
        if msg.header.frame_id not in MAP_FRAMES or not np.all(np.isfinite([p.x, p.y])):
            self.node.get_logger().warning(
                f"{self.vessel}: goal_pose ignored: expected finite x, y in frame 'map', got frame "
                f"{msg.header.frame_id!r} ({p.x}, {p.y})"
            )
            return
        self.pilot.set_goal([p.x, p.y])
        self.node.get_logger().info(f"{self.vessel}: goal ({p.x:.2f}, {p.y:.2f}) m map ENU")

    def _on_path(self, msg: Path) -> None:
        if msg.header.frame_id not in MAP_FRAMES:
            self.node.get_logger().warning(f"{self.vessel}: path ignored: frame {msg.header.frame_id!r}, not 'map'")
            return
        if not msg.poses:
            self.pilot.stop()
            return
        pts = np.array([[ps.pose.position.x, ps.pose.position.y] for ps in msg.poses], dtype=float)
        stamps = np.array([ps.header.stamp.sec + ps.header.stamp.nanosec * 1e-9 for ps in msg.poses])
        try:
            if np.all(stamps == 0.0):
                self.pilot.set_path(pts, self.path_speed_mps)
            else:
                self.pilot.set_trajectory(pts, stamps, 0.0)  # stamps are sim times: the reference at time t
        except ValueError as exc:
            self.node.get_logger().warning(f"{self.vessel}: path ignored: {exc}")
            return
        self.node.get_logger().info(f"{self.vessel}: {self.pilot.mode} of {len(pts)} poses")

    # --- control step --------------------------------------------------------------------------------------------
    def control(self, s: NedState, h: float) -> None:
        """One step of the USV's law on the new state (none at the first or at a stamp that did not advance)."""
        if h <= 0.0:
            return
        pilot = self.pilot
        if pilot.mode == "velocity" and self.cmd_vel_timeout_s > 0.0:
            if self._cmd_vel_at is None:
                self._cmd_vel_at = s.t_s
            elif s.t_s - self._cmd_vel_at > self.cmd_vel_timeout_s:
                pilot.stop()
        try:
            cmd = pilot.step(s.t_s, s.position_enu_xy, s.yaw_enu_rad, s.nu_frd[[0, 1, 5]], h)
            if not np.all(np.isfinite(cmd)):
                raise ValueError(f"non-finite thruster commands {cmd.tolist()}")
        except (ValueError, FloatingPointError, IndexError) as exc:  # a bad step stops the vessel, not the node
            self.node.get_logger().error(f"{self.vessel}: control step at t = {s.t_s:.3f} s failed ({exc}); thrust off")
            pilot.stop()
            cmd = pilot.velocity.stop()
        self.last_commands = np.asarray(cmd, dtype=float)
        for send, value in zip(self._thruster_pubs, self.last_commands, strict=True):
            send(float(value))
        self.updates += 1
        if self._status_pub.get_subscription_count() > 0:
            st = pilot.status
            values = [s.t_s, float(MODES.index(st.mode)), st.u_ref, st.r_ref, float(s.nu_frd[0]),
                        float(s.nu_frd[5]), st.distance_m, st.path_error_m, float(st.done)]  # fmt: skip
            self._status_pub.publish(status_message(STATUS_LABEL, values))


UsvControllerNode = standalone_node(UsvController)


def main(args: list[str] | None = None) -> None:
    """Entry point of `ros2 run lotusim usv_controller --ros-args -p vessel:=usv -p model:=kayak_usv`."""
    main_for(UsvControllerNode, UsvController.TYPE, args)
