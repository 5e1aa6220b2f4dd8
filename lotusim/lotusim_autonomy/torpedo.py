"""Depth-heading-speed autopilot of a torpedo AUV ([Meyers2025]: "built-in depth and heading control",
nested pitch-depth PID and heading SMC; PVS remus100 `depthHeadingAutopilot` [PVS2025]), ROS-free.

Inputs per control step: the NED state (odometry.NedState) and the set-points depth z_d (m), heading psi_d (rad,
compass) and either a surge speed u_d (m/s) or a propeller command (the thruster's own unit, e.g. rpm).
  - depth:   depth.DepthPitchAutopilot (outer PI depth -> pitch, inner PID pitch -> delta_q) on the depth
             set-point filtered by a first-order low pass (PVS: z_d <- e^{-h w} z_d + (1 - e^{-h w}) z_ref);
  - heading: reference.ReferenceModel3 (w_n, zeta = 1, yaw-rate limit) then heading.HeadingPid or
             heading.HeadingSlidingMode -> delta_r;
  - speed:   thrust T = D_u u_d + D_u|u| |u_d| u_d + PI(u_d - u) (the steady surge balance as feed-forward),
             turned into the propeller command by allocation.ThrustCurve;
  - fins:    allocation.FinAllocation maps (delta_q, delta_r) to the vehicle's fins.
Default gains (TorpedoGains) are PVS's REMUS values where they carry over, retuned where noted, for the
shipped remus100 (tuned with the Munk terms off as PVS runs it; they hold unchanged the catalogue REMUS with C_A
in full, hull lift and fins that see the flow's incidence: test_autonomy_ros.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from lotusim_autonomy.allocation import FinAllocation, ThrustCurve
from lotusim_autonomy.depth import DepthPitchAutopilot
from lotusim_autonomy.heading import HeadingPid, HeadingSlidingMode
from lotusim_autonomy.odometry import NedState
from lotusim_autonomy.pid import Pid
from lotusim_autonomy.reference import ReferenceModel3
from lotusim_core.base.vehicle_spec import VehicleSpec

HEADING_LAWS = ("pid", "smc")


@dataclass
class TorpedoGains:
    # depth (outer) loop: PVS Kp_z = 0.1 (kept), T_z = 100 s (Ki_z = Kp_z / T_z = 0.001; 0.005 here: the shipped
    # REMUS is 7 N buoyant and needs a standing pitch to hold depth), set-point filter w 0.02 -> 0.1 rad/s
    depth_kp: float = 0.1
    depth_ki: float = 0.005
    depth_filter_rad_s: float = 0.1
    pitch_max_rad: float = math.radians(20.0)  # bound on the pitch command (not in PVS)
    # pitch (inner) loop: PVS Kp 5.0, Kd 2.0, Ki 0.3, K_w 5.0 on its own fins; rescaled for the fin model here
    pitch_kp: float = 2.0
    pitch_ki: float = 0.2
    pitch_kd: float = 1.5
    pitch_kw: float = 0.0
    # heading: reference model (PVS w_n 0.1, zeta 1, r_max 5 deg/s; 0.2 and 10 deg/s here, settling a 90 deg
    # turn in about 35 s instead of 70 s), PID and SMC (PVS phi_b 0.1, K_d 0.5, K_sigma 0.05 on a Nomoto model
    # K = 0.25, T = 1; lambda 0.1 -> 0.3: with PVS's 0.1 the 90 deg turn of the shipped REMUS takes 62 s, 37 s with 0.3)
    heading_law: str = "pid"
    ref_omega_rad_s: float = 0.2
    yaw_rate_max_rad_s: float = math.radians(10.0)
    heading_kp: float = 1.0
    heading_ki: float = 0.02
    heading_kd: float = 1.0
    smc_nomoto_k: float = 0.25
    smc_nomoto_t: float = 1.0
    smc_lambda: float = 0.3
    smc_phi_b: float = 0.1
    smc_k_d: float = 0.5
    smc_k_sigma: float = 0.05
    # speed: surge PI on top of the drag feed-forward (N per m/s, N per m)
    speed_kp: float = 20.0
    speed_ki: float = 2.0


class TorpedoAutopilot:
    """One torpedo AUV: set-points + NedState -> (fin commands rad, thruster commands)."""

    def __init__(self, spec: VehicleSpec, gains: TorpedoGains | None = None, water_density_kgm3: float = 1025.0):
        g = gains or TorpedoGains()
        if g.heading_law not in HEADING_LAWS:
            raise ValueError(f"heading_law: expected one of {HEADING_LAWS}, got {g.heading_law!r}")
        if not spec.fins or not spec.thrusters:
            raise ValueError(f"vehicle {spec.name!r}: the torpedo autopilot needs fins and a propeller")
        self.gains = g
        self.fins = FinAllocation(spec.fins)
        fin_max = float(np.max(self.fins.max_angle_rad))
        self.depth = DepthPitchAutopilot(
            depth=Pid(g.depth_kp, g.depth_ki, 0.0, u_max=g.pitch_max_rad, integral_limit=g.pitch_max_rad),
            pitch=Pid(g.pitch_kp, g.pitch_ki, g.pitch_kd, u_max=fin_max, integral_limit=0.5 * fin_max),
            k_w=g.pitch_kw,
        )
        self.reference = ReferenceModel3(g.ref_omega_rad_s, 1.0, g.yaw_rate_max_rad_s, angle=True)
        if g.heading_law == "pid":
            pid = Pid(g.heading_kp, g.heading_ki, g.heading_kd, u_max=fin_max, integral_limit=0.5 * fin_max)
            self.heading = HeadingPid(pid)
        else:
            self.heading = HeadingSlidingMode(
                g.smc_nomoto_k, g.smc_nomoto_t, g.smc_lambda, g.smc_phi_b, g.smc_k_d, g.smc_k_sigma
            )
        self.fin_max = fin_max
        # the propeller(s): all thrusters pushing forward share the speed command
        self.curves = [ThrustCurve(t, water_density_kgm3) for t in spec.thrusters]
        self.d_u, self.d_uu = float(spec.damping_linear[0, 0]), float(spec.damping_quadratic[0, 0])
        self.speed = Pid(g.speed_kp, g.speed_ki, 0.0, integral_limit=0.5 * sum(c.t_max for c in self.curves))
        self._z_filtered: float | None = None
        self._heading_engaged = False
        self.last = {"theta_d": 0.0, "delta_q": 0.0, "delta_r": 0.0, "psi_ref": 0.0, "z_ref": 0.0}

    def step(
        self, s: NedState, h: float, depth_m: float | None, heading_rad: float | None, speed_mps: float | None = None,
        propeller_cmd: float | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
        """(fin commands rad, thruster commands) after h seconds; a None set-point leaves its channel neutral."""
        u, w, q, r = s.nu_frd[0], s.nu_frd[2], s.nu_frd[4], s.nu_frd[5]
        delta_q = delta_r = 0.0
        if depth_m is not None:
            if self._z_filtered is None:
                self._z_filtered = s.depth_m
            a = math.exp(-h * self.gains.depth_filter_rad_s)
            self._z_filtered = a * self._z_filtered + (1.0 - a) * depth_m
            theta_d, dq = self.depth.step(s.depth_m, self._z_filtered, s.rpy_ned_rad[1], q, w, h)
            delta_q = float(dq)
            self.last.update(theta_d=float(theta_d), z_ref=self._z_filtered)
        if heading_rad is not None:
            if not self._heading_engaged:
                self.reference.reset(s.rpy_ned_rad[2])
                self._heading_engaged = True
            psi_d, r_d, r_dot_d = self.reference.step(heading_rad, h)
            delta_r = float(self.heading.step(s.rpy_ned_rad[2], r, psi_d, r_d, r_dot_d, h))
            delta_r = float(np.clip(delta_r, -self.fin_max, self.fin_max))
            self.last["psi_ref"] = float(psi_d)
        self.last.update(delta_q=delta_q, delta_r=delta_r)
        fins = self.fins(delta_q, delta_r)
        if propeller_cmd is not None:
            thr = np.full(len(self.curves), float(propeller_cmd))
        elif speed_mps is not None:
            drag = self.d_u * speed_mps + self.d_uu * abs(speed_mps) * speed_mps
            thrust = drag + float(self.speed.step(speed_mps - u, h))
            thr = np.array([c.command(thrust / len(self.curves)) for c in self.curves], dtype=float)
        else:
            thr = np.zeros(len(self.curves))
        return fins, thr
