"""depth_heading_autopilot node: depth, heading and speed (or propeller) set-points for a torpedo AUV (REMUS 100,
LRAUV), driving its fins and propeller through the standard per-vessel topics (docs/autonomy.md).

  in   /<vessel>/odom                   nav_msgs/Odometry (map ENU, base_link FLU)
  in   /<vessel>/setpoint/depth         std_msgs/Float64, depth below the surface, m (positive down)
  in   /<vessel>/setpoint/heading       std_msgs/Float64, compass heading, deg (0 north, 90 east)
  in   /<vessel>/setpoint/speed         std_msgs/Float64, surge speed through the water, m/s
  in   /<vessel>/setpoint/propeller     std_msgs/Float64, propeller command in the thruster's command_unit
                                        (rpm for remus100, rad/s for lrauv); the last of speed / propeller wins
  out  /<vessel>/fins/<name>/cmd        std_msgs/Float64, rad
  out  /<vessel>/thrusters/<name>/cmd   std_msgs/Float64, the thruster's command_unit
  out  /<vessel>/autopilot/status       std_msgs/Float64MultiArray, layout label STATUS_LABEL

One control step per odometry message, h = difference of the message stamps (sim time). Until a set-point
arrives its channel stays neutral (fins at 0 for depth/heading, propeller stopped). The control laws are in
torpedo.TorpedoAutopilot; every gain is a parameter (names as the TorpedoGains fields).
"""

from __future__ import annotations

import math
from dataclasses import fields

import numpy as np
from nav_msgs.msg import Odometry
from rclpy.node import Node
from std_msgs.msg import Float64, Float64MultiArray, MultiArrayDimension

from lotusim_autonomy.odometry import NedState, from_odometry, is_finite, step_since
from lotusim_autonomy.torpedo import TorpedoAutopilot, TorpedoGains
from lotusim_core.catalogue import load_vehicle
from lotusim_core.node_runner import run_node_main, with_sim_time

STATUS_LABEL = "stamp_s,depth_m,depth_ref_m,pitch_d_deg,heading_deg,heading_ref_deg,delta_q_rad,delta_r_rad"
MAX_DEPTH_M = 11_000.0


class DepthHeadingAutopilot(Node):
    """One AUV's depth-heading-speed autopilot."""

    def __init__(self, **node_kwargs) -> None:
        overrides = with_sim_time(node_kwargs.pop("parameter_overrides", []))  # ARCHITECTURE principle 6
        name = node_kwargs.pop("node_name", "depth_heading_autopilot")
        super().__init__(name, parameter_overrides=overrides, **node_kwargs)
        self.vessel = self.declare_parameter("vessel", "auv").value
        self.model = self.declare_parameter("model", "remus100").value
        spec = load_vehicle(self.model)
        gains = TorpedoGains()
        for f in fields(TorpedoGains):
            value = self.declare_parameter(f.name, getattr(gains, f.name)).value
            setattr(gains, f.name, value if isinstance(getattr(gains, f.name), str) else float(value))
        rho = float(self.declare_parameter("water_density_kgm3", spec.water_density_kgm3).value)
        self.autopilot = TorpedoAutopilot(spec, gains, rho)
        v = self.vessel
        self._fin_pubs = [self.create_publisher(Float64, f"/{v}/fins/{f.name}/cmd", 10) for f in spec.fins]
        self._thr_pubs = [self.create_publisher(Float64, f"/{v}/thrusters/{t.name}/cmd", 10) for t in spec.thrusters]
        self._status_pub = self.create_publisher(Float64MultiArray, f"/{v}/autopilot/status", 10)
        self.create_subscription(Odometry, f"/{v}/odom", self._on_odom, 10)
        self.depth_m: float | None = None
        self.heading_rad: float | None = None
        self.speed_mps: float | None = None
        self.propeller_cmd: float | None = None
        self.create_subscription(Float64, f"/{v}/setpoint/depth", self._on_depth, 10)
        self.create_subscription(Float64, f"/{v}/setpoint/heading", self._on_heading, 10)
        self.create_subscription(Float64, f"/{v}/setpoint/speed", self._on_speed, 10)
        self.create_subscription(Float64, f"/{v}/setpoint/propeller", self._on_propeller, 10)
        self.state: NedState | None = None
        self.updates = 0  # control steps done
        self.odom_count = 0  # odometry messages handled (the first one only initialises the step h)
        self.last_fins = np.zeros(len(spec.fins))
        self.last_thrusters = np.zeros(len(spec.thrusters))
        self.get_logger().info(f"depth/heading autopilot for {v} ({self.model}), heading law {gains.heading_law}")

    def _reject(self, what: str, value: float, expected: str) -> None:
        self.get_logger().warning(f"/{self.vessel}/setpoint/{what}: expected {expected}, got {value!r}; ignored")

    def _on_depth(self, msg: Float64) -> None:
        if not (math.isfinite(msg.data) and 0.0 <= msg.data <= MAX_DEPTH_M):
            return self._reject("depth", msg.data, f"a depth in [0, {MAX_DEPTH_M}] m")
        self.depth_m = float(msg.data)

    def _on_heading(self, msg: Float64) -> None:
        if not math.isfinite(msg.data):
            return self._reject("heading", msg.data, "a finite compass heading in deg")
        self.heading_rad = math.radians(msg.data)

    def _on_speed(self, msg: Float64) -> None:
        if not math.isfinite(msg.data):
            return self._reject("speed", msg.data, "a finite speed in m/s")
        self.speed_mps, self.propeller_cmd = float(msg.data), None

    def _on_propeller(self, msg: Float64) -> None:
        if not math.isfinite(msg.data):
            return self._reject("propeller", msg.data, "a finite propeller command")
        self.propeller_cmd, self.speed_mps = float(msg.data), None

    def _on_odom(self, msg: Odometry) -> None:
        self.odom_count += 1
        s = from_odometry(msg)
        if not is_finite(s):
            self.get_logger().warning(f"{self.vessel}: non-finite odometry ignored")
            return
        h = step_since(self.state, s)
        self.state = s
        if h <= 0.0:  # first message, or a stamp that did not advance: no step
            return
        try:
            fins, thrusters = self.autopilot.step(
                s, h, self.depth_m, self.heading_rad, speed_mps=self.speed_mps, propeller_cmd=self.propeller_cmd
            )
            if not (np.all(np.isfinite(fins)) and np.all(np.isfinite(thrusters))):
                raise ValueError(f"non-finite commands fins {fins.tolist()}, thrusters {thrusters.tolist()}")
        except (ValueError, FloatingPointError) as exc:  # a bad step neutralises the actuators, not the node
            self.get_logger().error(f"{self.vessel}: control step at t = {s.t_s:.3f} s failed ({exc}); fins 0, stop")
            fins, thrusters = np.zeros_like(self.last_fins), np.zeros_like(self.last_thrusters)
        self.last_fins, self.last_thrusters = fins, thrusters
        for pub, value in zip(self._fin_pubs, fins, strict=True):
            pub.publish(Float64(data=float(value)))
        for pub, value in zip(self._thr_pubs, thrusters, strict=True):
            pub.publish(Float64(data=float(value)))
        last = self.autopilot.last
        out = Float64MultiArray()
        out.layout.dim = [MultiArrayDimension(label=STATUS_LABEL, size=8, stride=8)]
        out.data = [
            s.t_s,
            s.depth_m,
            last["z_ref"],
            math.degrees(last["theta_d"]),
            math.degrees(s.rpy_ned_rad[2]) % 360.0,
            math.degrees(last["psi_ref"]) % 360.0,
            last["delta_q"],
            last["delta_r"],
        ]
        self._status_pub.publish(out)
        self.updates += 1


def main(args: list[str] | None = None) -> None:
    """Entry point of `ros2 run lotusim depth_heading_autopilot --ros-args -p vessel:=auv -p model:=remus100`."""
    run_node_main(DepthHeadingAutopilot, args)
