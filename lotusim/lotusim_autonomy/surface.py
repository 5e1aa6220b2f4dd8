"""Surge-speed and heading control of a surface vessel with differential thrust (NED heading, body FRD).

Model-based, after [SaldarriagaMesa2025] sec. 5.1 (tau = M gamma + D nu with gamma = nu_dot_ref +
K (nu_ref - nu)) for surge, and Fossen's PID pole placement for heading (heading.py, PVS Otter):
    X = (m + X_udot) k_u (u_d - u) + Ki_u int (u_d - u) + D_u u_d + D_u|u| |u_d| u_d
    N = heading PID with feed-forward, Kp = m_r w_n^2, Kd = 2 zeta w_n m_r - d_r, Ki = Kp w_n / 10,
        m_r = I_z + N_rdot, d_r = N_r (vehicle file: inertia_cg_kgm2, added_mass, damping_linear)
then (X, N) -> thruster commands by allocation.DifferentialThrustAllocation.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lotusim_autonomy.allocation import DifferentialThrustAllocation
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

    def __init__(self, spec: VehicleSpec, gains: SurfaceGains | None = None, water_density_kgm3: float = 1025.0):
        g = gains or SurfaceGains()
        self.gains = g
        self.m_u = spec.mass_kg + spec.added_mass[0, 0]
        self.d_u, self.d_uu = spec.damping_linear[0, 0], spec.damping_quadratic[0, 0]
        m_r = spec.inertia_cg_kgm2[2, 2] + spec.mass_kg * (spec.cg_frd_m[0] ** 2 + spec.cg_frd_m[1] ** 2)
        m_r += spec.added_mass[5, 5]
        d_r = spec.damping_linear[5, 5]
        kp, ki, kd = heading_pid_gains(m_r, d_r, g.heading_omega_rad_s, g.heading_zeta)
        self.allocation = DifferentialThrustAllocation(spec.thrusters, water_density_kgm3)
        n_max = float(np.max(np.abs(self.allocation.b[1])) * np.max(self.allocation.t_max)) * len(spec.thrusters)
        self.heading = HeadingPid(Pid(kp, ki, max(kd, 0.0), u_max=n_max, integral_limit=0.3 * n_max), m=m_r, d=d_r)
        self.reference = ReferenceModel3(g.ref_omega_rad_s, 1.0, g.yaw_rate_max_rad_s, angle=True)
        x_max = float(np.sum(self.allocation.t_max))
        self.surge = Pid(self.m_u * g.surge_k_per_s, g.surge_ki, 0.0, integral_limit=0.3 * x_max)
        self._engaged = False
        self.last_wrench = (0.0, 0.0)

    def reset(self, psi_rad: float) -> None:
        self.reference.reset(psi_rad)
        self.heading.pid.reset()
        self.surge.reset()
        self._engaged = True

    def step(self, u: float, psi: float, r: float, u_d: float, psi_d: float, h: float) -> np.ndarray:
        """Thruster commands for surge speed u (m/s), heading psi (rad NED), yaw rate r (rad/s, FRD)."""
        if not self._engaged:
            self.reset(psi)
        x_d, r_d, r_dot_d = self.reference.step(psi_d, h)
        tau_n = float(self.heading.step(psi, r, x_d, r_d, r_dot_d, h))
        tau_x = self.d_u * u_d + self.d_uu * abs(u_d) * u_d + float(self.surge.step(u_d - u, h))
        self.last_wrench = (tau_x, tau_n)
        return self.allocation.commands(tau_x, tau_n)

    def stop(self) -> np.ndarray:
        self._engaged = False
        self.last_wrench = (0.0, 0.0)
        return np.zeros(len(self.allocation.curves))
