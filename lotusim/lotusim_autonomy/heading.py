"""Heading control laws (angles in rad, NED heading psi clockwise from north, yaw rate r of body FRD).

1. PID with reference feed-forward by pole placement on the Nomoto model m r_dot + d r = tau_N
   (Fossen 2021 sec. 15.3.3 and PVS control.PIDpolePlacement, used for the Otter USV):
       Kp = m w_n^2,  Kd = m 2 zeta w_n - d,  Ki = Kp w_n / 10
       tau_N = m r_dot_d + d r_d - Kp ssa(psi - psi_d) - Kd (r - r_d) - Ki int ssa(psi - psi_d)
   `heading_pid_gains` gives the gains; `HeadingPid` applies the law with clamping anti-windup (pid.Pid).
2. Integral sliding mode on the first-order Nomoto model T r_dot + r = K delta
   (Fossen 2021 sec. 16.3, eq. 16.479; PVS remus100 heading autopilot):
       sigma = r~ + 2 lambda ssa(psi~) + lambda^2 int ssa(psi~),       r~ = r - r_d, psi~ = psi - psi_d
       delta = (T r_dot_d + r_d - K_d sigma - K_sigma sat(sigma / phi_b)) / K
Both are batched over vessels (NumPy arrays).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from lotusim_autonomy.pid import Pid, ssa


def heading_pid_gains(m: float, d: float, omega_n: float, zeta: float = 1.0) -> tuple[float, float, float]:
    """(Kp, Ki, Kd) that place the closed-loop poles of m r_dot + d r = tau_N at w_n, zeta (PVS Otter)."""
    kp = m * omega_n**2
    kd = m * 2.0 * zeta * omega_n - d
    ki = omega_n / 10.0 * kp
    return kp, ki, kd


@dataclass
class HeadingPid:
    """tau = feed-forward(r_d, r_dot_d) + PID on the heading error; output in the actuator's units."""

    pid: Pid
    m: float | np.ndarray = 0.0  # feed-forward inertia (units of the output per rad/s^2)
    d: float | np.ndarray = 0.0  # feed-forward damping (per rad/s)

    def step(self, psi, r, psi_d, r_d, r_dot_d, h: float) -> np.ndarray:
        err = ssa(np.asarray(psi_d) - np.asarray(psi))  # = -ssa(psi - psi_d)
        feedback = self.pid.step(err, h, derivative=np.asarray(r_d) - np.asarray(r))
        return self.m * np.asarray(r_dot_d) + self.d * np.asarray(r_d) + feedback


@dataclass
class HeadingSlidingMode:
    """Integral sliding-mode heading controller (Fossen 2021 eq. 16.479) on the Nomoto gains K (rad/s per rad of
    actuation) and T (s); returns delta in actuation units (e.g. rad of equivalent rudder)."""

    nomoto_k: float | np.ndarray
    nomoto_t: float | np.ndarray
    lam: float | np.ndarray = 0.1
    phi_b: float | np.ndarray = 0.1
    k_d: float | np.ndarray = 0.5
    k_sigma: float | np.ndarray = 0.05
    integral: np.ndarray = field(default_factory=lambda: np.zeros(()))

    def reset(self) -> None:
        self.integral = np.zeros_like(self.integral)

    def sigma(self, psi, r, psi_d, r_d) -> np.ndarray:
        e_psi = ssa(np.asarray(psi) - np.asarray(psi_d))
        e_r = np.asarray(r) - np.asarray(r_d)
        return e_r + 2.0 * self.lam * e_psi + self.lam**2 * self.integral

    def step(self, psi, r, psi_d, r_d, r_dot_d, h: float) -> np.ndarray:
        self.integral = self.integral + ssa(np.asarray(psi) - np.asarray(psi_d)) * max(h, 0.0)
        s = self.sigma(psi, r, psi_d, r_d)
        return (
            self.nomoto_t * np.asarray(r_dot_d)
            + np.asarray(r_d)
            - self.k_d * s
            - self.k_sigma * np.clip(s / self.phi_b, -1.0, 1.0)
        ) / self.nomoto_k
