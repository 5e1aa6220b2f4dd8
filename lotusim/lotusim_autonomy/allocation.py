"""Actuator allocation: virtual commands -> per-actuator commands, from the vehicle file's geometry.

Fins (torpedo AUV). A fin at r_i (from CO, FRD) at roll angle phi_i around the body x axis lifts along
n_i = [0, -cos phi_i, -sin phi_i] for a positive deflection (the fin convention of lotusim_physics.fins and
docs/vehicles.md, [Meyers2025] Eqs. 6-8), so its moment per unit lift is m_i = r_i x n_i. Each fin
takes the projection of the virtual (pitch, yaw) deflection on the direction of its own moment:
    delta_i = (m_i,q delta_q + m_i,r delta_r) / |(m_i,q, m_i,r)|
For the REMUS cruciform this is top = delta_r, bottom = -delta_r, starboard = -delta_q, port = +delta_q: the
roll moments of each pair cancel and every fin works at the full virtual deflection; for an X tail each fin
takes (+-delta_q +- delta_r)/sqrt(2).

Thrusters (differential USV). tau = B T with B the allocation matrix of lotusim_physics.thrusters (Fossen 2021
sec. 11.2.1); the surge-yaw rows B_2 = B[[X, N]] give the unconstrained least-norm allocation T = B_2^+ tau
(Fossen 2021 eq. 11.37; [SaldarriagaMesa2025] sec. 5.1 T_L,R = (tau_u -+ tau_r/(d/2))/2 for two thrusters).
Saturation with yaw priority: the yaw part is kept whole (scaled down only if it alone exceeds the limits) and
the surge part is scaled to the largest fraction that fits (the heading-first choice of [SaldarriagaMesa2025] sec. 7 for
position control). Thrust is turned into the thruster's command by inverting its thrust curve.
"""

from __future__ import annotations

import math

import numpy as np

from lotusim_core.base.vehicle_spec import FinSpec, ThrusterSpec
from lotusim_physics.thrusters import UNIT_TO_RPS, allocation_matrix, t200_thrust


class FinAllocation:
    """Map (delta_q nose-up, delta_r bow-to-starboard) virtual deflections (rad) to the vehicle's fins."""

    def __init__(self, fins: tuple[FinSpec, ...] | list[FinSpec]) -> None:
        rows = []
        for fin in fins:
            phi = float(fin.roll_angle_rad)
            n = np.array([0.0, -math.cos(phi), -math.sin(phi)])
            m = np.cross(np.asarray(fin.position_frd_m, dtype=float), n)
            norm = math.hypot(m[1], m[2])
            if norm < 1e-9:
                raise ValueError(f"fin {fin.name!r}: no pitch or yaw moment arm (position {fin.position_frd_m})")
            rows.append((m[1] / norm, m[2] / norm))
        self.gains = np.array(rows).reshape(-1, 2)  # (n_fins, [pitch, yaw])
        self.names = [f.name for f in fins]
        self.max_angle_rad = np.array([f.max_angle_rad for f in fins])

    def __call__(self, delta_q, delta_r) -> np.ndarray:
        """Fin angle commands (rad) in the vehicle file's fin order, clipped to each fin's max_angle_rad."""
        cmd = self.gains[:, 0] * float(delta_q) + self.gains[:, 1] * float(delta_r)
        return np.clip(cmd, -self.max_angle_rad, self.max_angle_rad)


class ThrustCurve:
    """Inverse of one thruster's static thrust model: thrust (N) -> command in the thruster's command_unit."""

    def __init__(self, thruster: ThrusterSpec, water_density_kgm3: float) -> None:
        self.thruster = thruster
        self.lo, self.hi = float(thruster.command_min), float(thruster.command_max)
        if thruster.model == "quadratic":
            # T = rho D^4 K_T n|n| (Fossen 2021 eq. 9.3): n = sign(T) sqrt(|T| / (rho D^4 K_T)), n in rev/s
            self._k_fwd = water_density_kgm3 * thruster.diameter_m**4 * thruster.kt
            kt_rev = thruster.kt_reverse if thruster.kt_reverse is not None else thruster.kt
            self._k_rev = water_density_kgm3 * thruster.diameter_m**4 * kt_rev
            self._rps_per_unit = UNIT_TO_RPS[thruster.command_unit]
            self.t_min, self.t_max = self._thrust_quadratic(self.lo), self._thrust_quadratic(self.hi)
        else:
            # curve models (t200 / glf): tabulate T(cmd) and invert the monotone table
            cmds = np.linspace(self.lo, self.hi, 801)
            thrust = np.maximum.accumulate(t200_thrust(cmds, thruster.curve))
            self._table_cmd, self._table_t = cmds, thrust
            self.t_min, self.t_max = float(thrust[0]), float(thrust[-1])

    def _thrust_quadratic(self, cmd: float) -> float:
        n = cmd * self._rps_per_unit
        return (self._k_fwd if n >= 0 else self._k_rev) * n * abs(n)

    def command(self, thrust_n) -> np.ndarray:
        """Command for thrust(s) in N (clipped to what the thruster can give)."""
        t = np.clip(np.asarray(thrust_n, dtype=float), self.t_min, self.t_max)
        if self.thruster.model == "quadratic":
            k = np.where(t >= 0, self._k_fwd, self._k_rev)
            return np.sign(t) * np.sqrt(np.abs(t) / k) / self._rps_per_unit
        # first command that reaches the thrust (the table is flat inside the dead band)
        return np.interp(t, self._table_t, self._table_cmd)


class DifferentialThrustAllocation:
    """Surge force X (N) and yaw moment N (N m, FRD: positive turns the bow to starboard) -> thruster commands."""

    def __init__(self, thrusters: tuple[ThrusterSpec, ...], water_density_kgm3: float) -> None:
        if len(thrusters) < 2:
            raise ValueError(f"differential allocation needs at least two thrusters, got {len(thrusters)}")
        b = allocation_matrix(thrusters)[[0, 5]]  # rows X and N of tau = B T
        if np.linalg.matrix_rank(b) < 2:
            raise ValueError("differential allocation: the thrusters cannot produce independent surge and yaw")
        self.b = b
        self.b_pinv = np.linalg.pinv(b)
        self.curves = [ThrustCurve(t, water_density_kgm3) for t in thrusters]
        self.t_min = np.array([c.t_min for c in self.curves])
        self.t_max = np.array([c.t_max for c in self.curves])

    def thrusts(self, x_n: float, n_nm: float) -> np.ndarray:
        """Per-thruster thrust (N) for (X, N) with yaw priority under the thrust limits."""
        t_yaw = self.b_pinv @ np.array([0.0, n_nm])
        t_surge = self.b_pinv @ np.array([x_n, 0.0])
        t_yaw = t_yaw * _fit_fraction(np.zeros_like(t_yaw), t_yaw, self.t_min, self.t_max)
        return t_yaw + t_surge * _fit_fraction(t_yaw, t_surge, self.t_min, self.t_max)

    def commands(self, x_n: float, n_nm: float) -> np.ndarray:
        """Thruster commands (each in its command_unit) for (X, N)."""
        t = self.thrusts(x_n, n_nm)
        return np.array([c.command(ti) for c, ti in zip(self.curves, t, strict=True)], dtype=float)


def _fit_fraction(base: np.ndarray, delta: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> float:
    """Largest s in [0, 1] with lo <= base + s delta <= hi elementwise (base itself inside the limits)."""
    s = 1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        up = np.where(delta > 0, (hi - base) / delta, np.inf)
        down = np.where(delta < 0, (lo - base) / delta, np.inf)
    s = min(s, float(np.min(up)), float(np.min(down)))
    return max(s, 0.0)
