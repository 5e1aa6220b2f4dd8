"""depth_heading_autopilot node: depth, heading and speed (or propeller) set-points for a torpedo AUV (REMUS 100,
LRAUV), driving its fins and propeller through the standard per-vessel topics (docs/autonomy.md).

  in   <vessel>/odom                   nav_msgs/Odometry (map ENU, base_link FLU)
  in   <vessel>/setpoint/depth         std_msgs/Float64, depth below the surface, m (positive down)
  in   <vessel>/setpoint/heading       std_msgs/Float64, compass heading, deg (0 north, 90 east)
  in   <vessel>/setpoint/speed         std_msgs/Float64, surge speed through the water, m/s
  in   <vessel>/setpoint/propeller     std_msgs/Float64, propeller command in the thruster's command_unit
                                        (rpm for remus100, rad/s for lrauv); the last of speed / propeller wins
  out  <vessel>/fins/<name>/cmd        std_msgs/Float64, rad
  out  <vessel>/thrusters/<name>/cmd   std_msgs/Float64, the thruster's command_unit
  out  <vessel>/autopilot/status       std_msgs/Float64MultiArray, layout label STATUS_LABEL

Topic names are relative to the vessel (no leading slash): the host node's namespace and remappings apply.
A vessel controller (controller_host.py): the scenario's set-points (params["setpoints"]: depth_m, heading_deg,
speed_mps) apply from the start, the topics change them later; a depth or heading without a speed cruises at
cruise_speed_mps. One control step per odometry message, h = difference of the message stamps (sim time). A
channel without a set-point stays neutral (fins at 0 for depth/heading, propeller stopped). The control laws are
in torpedo.TorpedoAutopilot; every gain is a parameter (names as the TorpedoGains fields).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from rclpy.node import Node
from std_msgs.msg import Float64, Float64MultiArray

from lotusim_autonomy.controller_base import VesselController, main_for, standalone_node, status_message
from lotusim_autonomy.odometry import NedState
from lotusim_autonomy.torpedo import HEADING_LAWS, TorpedoAutopilot, TorpedoGains
from lotusim_core.base.vehicle_spec import VehicleSpec

STATUS_LABEL = "stamp_s,depth_m,depth_ref_m,pitch_d_deg,heading_deg,heading_ref_deg,delta_q_rad,delta_r_rad"
MAX_DEPTH_M = 11_000.0
DEFAULT_CRUISE_MPS = 1.5  # speed when a scenario gives depth/heading but no speed (REMUS 100 cruise, Prestero 2001)


class DepthHeadingAutopilot(VesselController):
    """One AUV's depth-heading-speed autopilot, on a host node (contract: controller_host.py)."""

    TYPE = "depth_heading_autopilot"
    SETPOINT_KEYS = ("depth_m", "heading_deg", "speed_mps")
    REQUIRED_SETPOINTS = ("depth_m", "heading_deg")

    @classmethod
    def cannot_drive(cls, spec: VehicleSpec) -> str | None:
        """Why the autopilot cannot drive this vehicle (it steers with fins and pushes with a propeller)."""
        if spec.domain != "underwater":
            return f"the torpedo autopilot drives underwater vehicles; {spec.name} is a {spec.domain} vessel"
        if not spec.fins:
            return f"the torpedo autopilot steers with control fins; {spec.name} has none (thruster-vectored)"
        if not spec.thrusters:
            return f"the torpedo autopilot needs a propeller; {spec.name} has no thruster"
        return None

    def __init__(self, node: Node, vessel: str, params: dict[str, Any]) -> None:
        read, spec = self.open(node, vessel, params)
        gains = read.gains(TorpedoGains, choices=HEADING_LAWS)
        rho = read.number("water_density_kgm3", spec.water_density_kgm3, 900.0, 1100.0)
        self.cruise_speed_mps = read.number("cruise_speed_mps", DEFAULT_CRUISE_MPS, 0.0, 10.0)
        setpoints = read.setpoints()
        read.finish()
        self.autopilot = TorpedoAutopilot(spec, gains, rho)
        v = vessel
        pub = self._endpoints.publisher
        self._fin_pubs = [self._endpoints.command(f"{v}/fins/{f.name}/cmd") for f in spec.fins]
        self._thr_pubs = [self._endpoints.command(f"{v}/thrusters/{t.name}/cmd") for t in spec.thrusters]
        self._status_pub = pub(Float64MultiArray, f"{v}/autopilot/status")
        self.depth_m: float | None = None
        self.heading_rad: float | None = None
        self.speed_mps: float | None = None
        self.propeller_cmd: float | None = None
        self._apply_setpoints(setpoints)
        sub = self._endpoints.subscription
        self.listen_for_states()
        sub(Float64, f"{v}/setpoint/depth", self._on_depth)
        sub(Float64, f"{v}/setpoint/heading", self._on_heading)
        sub(Float64, f"{v}/setpoint/speed", self._on_speed)
        sub(Float64, f"{v}/setpoint/propeller", self._on_propeller)
        self.last_fins = np.zeros(len(spec.fins))
        self.last_thrusters = np.zeros(len(spec.thrusters))
        node.get_logger().info(
            f"depth/heading autopilot for {v} ({self.model}), heading law {gains.heading_law}, set-points "
            f"depth {self.depth_m} m, heading {_deg(self.heading_rad)} deg, speed {self.speed_mps} m/s"
        )

    def _apply_setpoints(self, setpoints: dict[str, Any]) -> None:
        """The scenario's set-points (depth_m, heading_deg, speed_mps); a depth or heading without a speed
        cruises at cruise_speed_mps (a torpedo AUV has no steering without way on)."""
        where = f"{self.TYPE} {self.vessel}: setpoints"
        unknown = sorted(set(setpoints) - set(self.SETPOINT_KEYS))
        if unknown:
            raise ValueError(f"{where}: unknown key(s) {unknown}; expected some of {list(self.SETPOINT_KEYS)}")
        for key, low, high in (("depth_m", 0.0, MAX_DEPTH_M), ("heading_deg", -360.0, 360.0), ("speed_mps", 0, 10)):
            value = setpoints.get(key)
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))
                                      or not low <= value <= high):  # fmt: skip
                raise ValueError(f"{where}.{key}: expected a number in [{low}, {high}], got {value!r}")
        if setpoints.get("depth_m") is not None:
            self.depth_m = float(setpoints["depth_m"])
        if setpoints.get("heading_deg") is not None:
            self.heading_rad = math.radians(float(setpoints["heading_deg"]))
        if setpoints.get("speed_mps") is not None:
            self.speed_mps = float(setpoints["speed_mps"])
        elif self.depth_m is not None or self.heading_rad is not None:
            self.speed_mps = self.cruise_speed_mps

    def _reject(self, what: str, value: float, expected: str) -> None:
        self.node.get_logger().warning(f"{self.vessel}/setpoint/{what}: expected {expected}, got {value!r}; ignored")

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

    def control(self, s: NedState, h: float) -> None:
        """One autopilot step on the new state (none at the first or at a stamp that did not advance)."""
        if h <= 0.0:  # first message, or a stamp that did not advance: no step
            return
        try:
            fins, thrusters = self.autopilot.step(
                s, h, self.depth_m, self.heading_rad, speed_mps=self.speed_mps, propeller_cmd=self.propeller_cmd
            )
            if not (np.all(np.isfinite(fins)) and np.all(np.isfinite(thrusters))):
                raise ValueError(f"non-finite commands fins {fins.tolist()}, thrusters {thrusters.tolist()}")
        except (ValueError, FloatingPointError) as exc:  # a bad step neutralises the actuators, not the node
            self.node.get_logger().error(
                f"{self.vessel}: control step at t = {s.t_s:.3f} s failed ({exc}); fins 0, stop"
            )
            fins, thrusters = np.zeros_like(self.last_fins), np.zeros_like(self.last_thrusters)
        self.last_fins, self.last_thrusters = fins, thrusters
        for send, value in zip(self._fin_pubs, fins, strict=True):
            send(float(value))
        for send, value in zip(self._thr_pubs, thrusters, strict=True):
            send(float(value))
        self.updates += 1
        if self._status_pub.get_subscription_count() == 0:  # a host of many: no status nobody reads
            return
        last = self.autopilot.last
        values = [
            s.t_s,
            s.depth_m,
            last["z_ref"],
            math.degrees(last["theta_d"]),
            math.degrees(s.rpy_ned_rad[2]) % 360.0,
            math.degrees(last["psi_ref"]) % 360.0,
            last["delta_q"],
            last["delta_r"],
        ]
        self._status_pub.publish(status_message(STATUS_LABEL, values))


def _deg(rad: float | None) -> float | None:
    return None if rad is None else round(math.degrees(rad), 3)


DepthHeadingAutopilotNode = standalone_node(DepthHeadingAutopilot)


def main(args: list[str] | None = None) -> None:
    """Entry point of `ros2 run lotusim depth_heading_autopilot --ros-args -p vessel:=auv -p model:=remus100`."""
    main_for(DepthHeadingAutopilotNode, DepthHeadingAutopilot.TYPE, args)
