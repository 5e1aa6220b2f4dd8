"""The 3-DOF surge-sway-yaw model of a surface vessel with its nine parameters, batched over samples
([SaldarriagaMesa2025] sec. 3.4-3.5, after [Fossen2021] sec. 6.7):

    M nu_dot + C(nu) nu + D(nu) nu = tau,     nu = [u, v, r] body FRD (m/s, m/s, rad/s), tau = [X, Y, N] (N, N m)
    M    = diag(z1, z2, z3)                   z1 = m - X_udot, z2 = m - Y_vdot, z3 = I_z - N_rdot
    C(nu) nu = [-z2 v r,  z1 u r,  (z2 - z1) u v]
    D(nu) nu = [(z4 + z5 |u|) u,  (z6 + z7 |v|) v,  (z8 + z9 |r|) r]

zeta = [z1..z9] is the paper's Table 1 (added mass and damping with the "positive" sign convention of the vehicle
files: X_udot = -added_mass[0, 0]). Linear in zeta, so the model is a regression Phi(nu, nu_dot) zeta = tau
(sec. 3.5); `regressor` gives Phi. The paper's printed regressor leaves the Munk moment (z2 - z1) u v out of the
yaw row although its C(nu) holds it; here it is kept, as the physics has it (coriolis_added_mass: full).

The same equations hold in FLU (v -> -v, r -> -r, Y -> -Y, N -> -N): the parameters do not depend on the frame.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

from lotusim_core.base.fossen import m_rb
from lotusim_core.base.vehicle_spec import VehicleSpec

ZETA_NAMES = ("m-X_udot", "m-Y_vdot", "I_z-N_rdot", "X_u", "X_uu", "Y_v", "Y_vv", "N_r", "N_rr")
ZETA_UNITS = ("kg", "kg", "kg m^2", "kg/s", "kg/m", "kg/s", "kg/m", "kg m^2/s", "kg m^2")
SURGE_SWAY_YAW = [0, 1, 5]  # rows/columns of the 6-DOF matrices


@dataclass(frozen=True)
class Usv3Dof:
    """The nine parameters zeta (Table 1 of [SaldarriagaMesa2025]) and the model's terms, batched over (..., 3)."""

    zeta: np.ndarray  # (9,)

    def __post_init__(self) -> None:
        z = np.asarray(self.zeta, dtype=float).reshape(9)
        if not np.all(np.isfinite(z)) or np.any(z[:3] <= 0.0):
            raise ValueError(f"3-DOF model: expected finite zeta with positive masses, got {z.tolist()}")
        object.__setattr__(self, "zeta", z)

    @classmethod
    def from_spec(cls, spec: VehicleSpec) -> Usv3Dof:
        """The surge, sway and yaw entries of a vehicle file's 6-DOF model: the diagonal of M_RB + M_A about CO
        (I_z about CO, parallel-axis term included), of D_lin and of D_quad. Off-diagonal terms (x_g != 0) are
        outside the 9-parameter model and left out."""
        m6 = m_rb(spec.mass_kg, spec.inertia_cg_kgm2, spec.cg_frd_m) + spec.added_mass
        i = SURGE_SWAY_YAW
        m = np.diag(m6)[i]
        dl, dq = np.diag(spec.damping_linear)[i], np.diag(spec.damping_quadratic)[i]
        return cls(np.array([m[0], m[1], m[2], dl[0], dq[0], dl[1], dq[1], dl[2], dq[2]]))

    @property
    def mass(self) -> np.ndarray:
        """diag(M): (3,) kg, kg, kg m^2."""
        return self.zeta[:3]

    def coriolis_nu(self, nu) -> np.ndarray:
        """C(nu) nu (..., 3)."""
        u, v, r = _split(nu)
        z1, z2 = self.zeta[0], self.zeta[1]
        return np.stack([-z2 * v * r, z1 * u * r, (z2 - z1) * u * v], axis=-1)

    def damping_nu(self, nu) -> np.ndarray:
        """D(nu) nu (..., 3): linear plus quadratic damping."""
        nu = np.asarray(nu, dtype=float)
        lin = self.zeta[[3, 5, 7]]
        quad = self.zeta[[4, 6, 8]]
        return (lin + quad * np.abs(nu)) * nu

    def tau(self, nu, nu_dot) -> np.ndarray:
        """tau = M nu_dot + C(nu) nu + D(nu) nu (..., 3)."""
        return self.mass * np.asarray(nu_dot, dtype=float) + self.coriolis_nu(nu) + self.damping_nu(nu)

    def nu_dot(self, nu, tau) -> np.ndarray:
        """nu_dot = M^-1 (tau - C(nu) nu - D(nu) nu) (..., 3)."""
        return (np.asarray(tau, dtype=float) - self.coriolis_nu(nu) - self.damping_nu(nu)) / self.mass

    def steady_speed(self, force_n: float, axis: int = 0) -> float:
        """Steady speed on one axis (0 surge m/s, 1 sway m/s, 2 yaw rad/s) under a constant force or moment
        F >= 0, the others at rest: the positive root of d_lin x + d_quad x^2 = F."""
        dl, dq = float(self.zeta[3 + 2 * axis]), float(self.zeta[4 + 2 * axis])
        if dq <= 0.0:
            return force_n / dl
        return float((-dl + np.sqrt(dl * dl + 4.0 * dq * force_n)) / (2.0 * dq))


def _split(nu) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    nu = np.asarray(nu, dtype=float)
    return nu[..., 0], nu[..., 1], nu[..., 2]


def regressor(nu, nu_dot) -> np.ndarray:
    """Phi (..., 3, 9) with Phi zeta = tau for samples nu, nu_dot (..., 3)."""
    u, v, r = _split(nu)
    ud, vd, rd = _split(nu_dot)
    z = np.zeros_like(u)
    rows = [
        [ud, -v * r, z, u, np.abs(u) * u, z, z, z, z],
        [u * r, vd, z, z, z, v, np.abs(v) * v, z, z],
        [-u * v, u * v, rd, z, z, z, z, r, np.abs(r) * r],
    ]
    return np.stack([np.stack(row, axis=-1) for row in rows], axis=-2)


def simulate(model: Usv3Dof, nu0, tau, dt_s: float, eta0=(0.0, 0.0, 0.0)) -> tuple[np.ndarray, np.ndarray]:
    """Simulate the model from nu0 (3,) under tau (N, 3) held over each step dt_s (classic RK4); returns nu (N, 3)
    and eta (N, 3) = [north, east, heading] (NED, m and rad; eta_dot = R(psi) [u, v], r), sample k at time
    k dt_s (the input of sample k acts from k to k + 1)."""
    tau = np.ascontiguousarray(tau, dtype=float).reshape(-1, 3)
    x0 = np.concatenate([np.asarray(nu0, dtype=float).reshape(3), np.asarray(eta0, dtype=float).reshape(3)])
    out = _simulate(model.zeta, x0, tau, float(dt_s))
    return out[:, :3], out[:, 3:]


@njit(cache=True)
def _derivative(z, x, t, out):  # pragma: no cover - compiled
    u, v, r, psi = x[0], x[1], x[2], x[5]
    out[0] = (t[0] + z[1] * v * r - (z[3] + z[4] * abs(u)) * u) / z[0]
    out[1] = (t[1] - z[0] * u * r - (z[5] + z[6] * abs(v)) * v) / z[1]
    out[2] = (t[2] - (z[1] - z[0]) * u * v - (z[7] + z[8] * abs(r)) * r) / z[2]
    c, s = math.cos(psi), math.sin(psi)
    out[3] = c * u - s * v
    out[4] = s * u + c * v
    out[5] = r


@njit(cache=True)
def _simulate(z, x0, tau, h):  # pragma: no cover - compiled
    n = tau.shape[0]
    out = np.empty((n, 6))
    x = x0.copy()
    k1, k2, k3, k4, tmp = np.empty(6), np.empty(6), np.empty(6), np.empty(6), np.empty(6)
    for k in range(n):
        out[k] = x
        t = tau[k]
        _derivative(z, x, t, k1)
        tmp[:] = x + 0.5 * h * k1
        _derivative(z, tmp, t, k2)
        tmp[:] = x + 0.5 * h * k2
        _derivative(z, tmp, t, k3)
        tmp[:] = x + h * k3
        _derivative(z, tmp, t, k4)
        x = x + h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
    return out
