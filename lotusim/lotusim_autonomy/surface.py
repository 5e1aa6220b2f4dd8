"""Surge-speed and heading control of a surface vessel steered by differential thrust or by rudders (NED
heading, body FRD).

Model-based, after [SaldarriagaMesa2025] sec. 5.1 (tau = M gamma + D nu with gamma = nu_dot_ref +
K (nu_ref - nu)) for surge, and Fossen's PID pole placement for heading (heading.py, PVS Otter):
    X = (m + X_udot) k_u (u_d - u) + Ki_u int (u_d - u) + D_u u_d + D_u|u| |u_d| u_d
    N = heading PID with feed-forward, Kp = m_r w_n^2, Kd = 2 zeta w_n m_r - d_r, Ki = Kp w_n / 10,
        m_r = I_z + N_rdot, d_r = N_r (vehicle file: inertia_cg_kgm2, added_mass, damping_linear)
then (X, N) -> thruster commands by allocation.DifferentialThrustAllocation; a vessel with rudder fins (the
ships) puts all of N on its rudders and X on its propellers: the virtual rudder angle is
    delta = N / (1/2 rho u^2 sum_i A_i C_La,i |m_r,i|)     (fin lift per radian times its yaw lever, fins.py)
with u floored at 1 m/s, spread over the fins by allocation.FinAllocation and clipped to their limits.

Gains from the vessel's own parameters: the heading loop cannot be faster than its actuators allow. With N_max the
largest yaw moment (differential thrust: sum |b_N,i| max(|T_min,i|, T_max,i); rudders: at full deflection at the
cruise speed) and a heading error of E_SAT_RAD using all of it, w_n <= sqrt(N_max / (m_r E_SAT_RAD)); the
reference model is no faster than the loop (ref_omega <= w_n) and its turn rate stays within the steady rate the
yaw damping allows, r_max <= N_max / (2 d_r). For the WAM-V and the kayak these bounds lie above the defaults
(nothing changes); for a 142 m ship w_n becomes ~0.15 rad/s and r_max ~1.2 deg/s.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from lotusim_autonomy.allocation import DifferentialThrustAllocation, FinAllocation
from lotusim_autonomy.heading import HeadingPid, heading_pid_gains
from lotusim_autonomy.pid import Pid
from lotusim_autonomy.reference import ReferenceModel3
from lotusim_core.base.vehicle_spec import VehicleSpec


@dataclass
class SurfaceGains:
    heading_omega_rad_s: float = 0.5  # closed-loop natural frequency of the heading loop
    heading_zeta: float = 1.0
    ref_omega_rad_s: float = 0.4  # heading reference model (PVS Otter uses 0.5)
    yaw_rate_max_rad_s: float = np.radians(10.0)  # reference-model rate limit (PVS Otter 10 deg/s)
    surge_k_per_s: float = 0.5  # surge velocity gain k_u (1/s)
    surge_ki: float = 5.0  # N per (m/s s)


class SurfaceController:
    """(u_d, psi_d) -> thruster commands for one differential-thrust surface vessel."""

    def __init__(
        self,
        spec: VehicleSpec,
        gains: SurfaceGains | None = None,
        water_density_kgm3: float = 1025.0,
        cruise_speed_mps: float = 1.5,
    ):
        g = gains or SurfaceGains()
        self.m_u = spec.mass_kg + spec.added_mass[0, 0]
        self.d_u, self.d_uu = spec.damping_linear[0, 0], spec.damping_quadratic[0, 0]
        m_r = spec.inertia_cg_kgm2[2, 2] + spec.mass_kg * (spec.cg_frd_m[0] ** 2 + spec.cg_frd_m[1] ** 2)
        m_r += spec.added_mass[5, 5]
        d_r = spec.damping_linear[5, 5]
        self.allocation = DifferentialThrustAllocation(spec.thrusters, water_density_kgm3)
        self.rudder, self.rudder_gain = rudder_allocation(spec, water_density_kgm3)
        if self.rudder is not None:
            n_max = self.rudder_gain * max(cruise_speed_mps, RUDDER_MIN_SPEED_MPS) ** 2 * rudder_limit_rad(self.rudder)
        else:
            t_abs = np.maximum(np.abs(self.allocation.t_min), np.abs(self.allocation.t_max))
            n_max = float(np.sum(np.abs(self.allocation.b[1]) * t_abs))
        self.gains = g = bounded_gains(g, m_r, d_r, n_max)
        kp, ki, kd = heading_pid_gains(m_r, d_r, g.heading_omega_rad_s, g.heading_zeta)
        self.heading = HeadingPid(Pid(kp, ki, max(kd, 0.0), u_max=n_max, integral_limit=0.3 * n_max), m=m_r, d=d_r)
        self.reference = ReferenceModel3(g.ref_omega_rad_s, 1.0, g.yaw_rate_max_rad_s, angle=True)
        x_max = float(np.sum(self.allocation.t_max))
        self.surge = Pid(self.m_u * g.surge_k_per_s, g.surge_ki, 0.0, integral_limit=0.3 * x_max)
        self._engaged = False
        self.last_wrench = (0.0, 0.0)
        self.last_fins = np.zeros(len(spec.fins))

    def reset(self, psi_rad: float) -> None:
        self.reference.reset(psi_rad)
        self.heading.pid.reset()
        self.surge.reset()
        self._engaged = True

    def step(self, u: float, psi: float, r: float, u_d: float, psi_d: float, h: float) -> np.ndarray:
        """Thruster commands for surge speed u (m/s), heading psi (rad NED), yaw rate r (rad/s, FRD); a vessel with
        rudders gets its fin angles (rad, vehicle-file order) in `last_fins`."""
        if not self._engaged:
            self.reset(psi)
        x_d, r_d, r_dot_d = self.reference.step(psi_d, h)
        tau_n = float(self.heading.step(psi, r, x_d, r_d, r_dot_d, h))
        tau_x = self.d_u * u_d + self.d_uu * abs(u_d) * u_d + float(self.surge.step(u_d - u, h))
        self.last_wrench = (tau_x, tau_n)
        if self.rudder is None:
            return self.allocation.commands(tau_x, tau_n)
        delta = tau_n / (self.rudder_gain * max(abs(u), RUDDER_MIN_SPEED_MPS) ** 2)
        self.last_fins = self.rudder(0.0, delta)
        return self.allocation.commands(tau_x, 0.0)

    def stop(self) -> np.ndarray:
        self._engaged = False
        self.last_wrench = (0.0, 0.0)
        self.last_fins = np.zeros_like(self.last_fins)
        return np.zeros(len(self.allocation.curves))


E_SAT_RAD = np.radians(20.0)  # heading error that uses the whole yaw moment (sets the bound on w_n)
RUDDER_MIN_SPEED_MPS = 1.0  # the rudder gain is taken at no less than this speed (no division by ~0 at rest)


def rudder_limit_rad(rudder: FinAllocation) -> float:
    """The smallest deflection limit of the rudder fins (rad)."""
    return float(np.min(rudder.max_angle_rad))


def rudder_allocation(spec: VehicleSpec, water_density_kgm3: float) -> tuple[FinAllocation | None, float]:
    """(allocation of a virtual rudder angle to the vessel's rudder fins, yaw moment per rad per (m/s)^2):
    1/2 rho sum A_i C_La,i m_r,i g_i over the fins with a yaw lever (FinAllocation gains g_i), or (None, 0) for a
    vessel without rudder fins."""
    rudders = [f for f in spec.fins if abs(math.cos(f.roll_angle_rad)) > 0.5]  # vertical surfaces: lift along y
    if spec.domain != "surface" or not rudders:
        return None, 0.0
    alloc = FinAllocation(tuple(rudders))
    if len(rudders) != len(spec.fins):
        raise ValueError(f"{spec.name}: a surface vessel's fins must all be rudders (vertical surfaces)")
    gain = 0.0
    for fin, (_, g_r) in zip(rudders, alloc.gains, strict=True):
        n = np.array([0.0, -math.cos(fin.roll_angle_rad), -math.sin(fin.roll_angle_rad)])
        m_r = float(np.cross(np.asarray(fin.position_frd_m, dtype=float), n)[2])
        gain += 0.5 * water_density_kgm3 * fin.area_m2 * fin.lift_slope_per_rad * m_r * g_r
    if gain <= 0.0:
        raise ValueError(f"{spec.name}: the rudder fins give no yaw moment")
    return alloc, gain


def bounded_gains(g: SurfaceGains, m_r: float, d_r: float, n_max: float) -> SurfaceGains:
    """The gains within what the actuators allow (module docstring): w_n <= sqrt(N_max / (m_r E_SAT_RAD)),
    ref_omega <= w_n, yaw_rate_max <= N_max / (2 d_r)."""
    w_n = min(g.heading_omega_rad_s, math.sqrt(n_max / (m_r * E_SAT_RAD)))
    r_max = g.yaw_rate_max_rad_s if d_r <= 0.0 else min(g.yaw_rate_max_rad_s, n_max / (2.0 * d_r))
    return dataclasses.replace(
        g, heading_omega_rad_s=w_n, ref_omega_rad_s=min(g.ref_omega_rad_s, w_n), yaw_rate_max_rad_s=r_max
    )


def path_scales(spec: VehicleSpec, speed_mps: float = 0.0, yaw_rate_max_rad_s: float = math.inf) -> tuple[float, float]:
    """(acceptance radius, LOS lookahead) defaults (m) that scale with the vessel: its length L (the vehicle file's
    wind length) and its turning radius R = speed / yaw_rate_max at the cruise speed (the heading reference's rate
    limit, bounded_gains): max(3 m, L / 2, R / 4) and max(8 m, 1.5 L, 0.9 R). The WAM-V and the kayak at 1.5 m/s
    (R 8.6 m) keep 3 m and 8 m; a 142 m ship at 8 m/s (R ~390 m) gets ~97 m and ~350 m; the commando boat at
    6 m/s (R 34 m) 8.6 m and 31 m."""
    length = spec.wind.length_m if spec.wind is not None else 0.0
    turn_radius = speed_mps / yaw_rate_max_rad_s if yaw_rate_max_rad_s > 0.0 else 0.0
    return max(3.0, 0.5 * length, 0.25 * turn_radius), max(8.0, 1.5 * length, 0.9 * turn_radius)


def steerage_speed(controller: SurfaceController, cruise_speed_mps: float) -> float:
    """The speed a rudder-steered vessel keeps on an active route (half its cruise speed; 0 with differential
    thrust, which turns in place)."""
    return 0.5 * cruise_speed_mps if controller.rudder is not None else 0.0


USV_CRUISE_SPEED_MPS = 1.5  # the follower's default cruise speed of a vessel steered by differential thrust


def default_cruise_speed(spec: VehicleSpec, water_density_kgm3: float = 1025.0) -> float:
    """The follower's default cruise speed (m/s): 1.5 m/s for a vessel steered by differential thrust (the USVs);
    for one steered by rudders (a ship) half its top speed, u_top solving D_u u + D_u|u| u^2 = X_max (the thrusters'
    largest surge force), as the rudder's authority and so the heading gains are computed at it."""
    if rudder_allocation(spec, water_density_kgm3)[0] is None:
        return USV_CRUISE_SPEED_MPS
    alloc = DifferentialThrustAllocation(spec.thrusters, water_density_kgm3)
    x_max = float(np.sum(np.maximum(alloc.b[0] * alloc.t_max, alloc.b[0] * alloc.t_min)))
    d_u, d_uu = spec.damping_linear[0, 0], spec.damping_quadratic[0, 0]
    u_top = x_max / d_u if d_uu <= 0.0 else (-d_u + math.sqrt(d_u * d_u + 4.0 * d_uu * x_max)) / (2.0 * d_uu)
    return 0.5 * u_top
