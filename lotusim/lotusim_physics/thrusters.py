"""Thrusters: rotor dynamics, thrust models and the thrust allocation matrix.

Rotor dynamics: the rotor state s (rev/s, or the normalised command for curve models) follows the clipped
command c with a first-order lag T_n (Fossen 2021 sec. 9.x actuator dynamics; PVS uses the same lag),
integrated exactly over a step h:   s_{k+1} = c + (s_k - c) exp(-h / T_n)   (T_n = 0: s = c); the factor
exp(-h / T_n) is computed once per thruster when the vessel joins the fleet.

Thrust models
  - "quadratic": T = rho D^4 K_T n|n| with n in rev/s (Fossen 2021 eq. 9.3 with constant K_T(J_0);
    LRAUV Sim eq. 4 of [Player2023]); K_T of the reverse quadrant when given. Reaction moment
    Q = rho D^5 K_Q n|n| about the thrust axis (sign of K_Q = handedness).
  - "t200" (or "glf": the same generalised logistic with the vehicle's own parameters): Blue Robotics T200
    thrust vs normalised command cmd in [-1, 1], the generalised logistic of
    [SaldarriagaMesa2025] Eq. 16 with its Table 2 parameters:
        T(cmd) = A + (K - A) / (C + exp(-B (cmd - M)))^(1/nu)   (separate sets for cmd > 0 and cmd < 0),
        T = 0 for |cmd| <= 0.01. The fitted reverse set gives +0.29 N just below -0.01, a fitting artefact;
        the reverse branch is clipped to T <= 0 (and the forward one to T >= 0).
Each thruster pushes along its unit axis d at r (from CO):  tau_i = [T d ; r x (T d) + Q d].
The allocation matrix B (6 x n_thr) maps thrusts to the body wrench: tau = B T (Fossen 2021 sec. 11.2).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from lotusim_core.base.vehicle_spec import ThrusterSpec

# [SaldarriagaMesa2025], Table 2 (T200 thrust model fitted to the manufacturer curve)
T200_TABLE2 = {
    "A_pos": 0.000001,
    "K_pos": 40.0209,
    "B_pos": 2.6249,
    "nu_pos": 0.1615,
    "C_pos": 0.9432,
    "M_pos": 0.00001,
    "A_neg": -31.4990,
    "K_neg": -0.00001,
    "B_neg": 3.6986,
    "nu_neg": 0.3264,
    "C_neg": 0.9713,
    "M_neg": -1.0000,
}
T200_CURVE_KEYS = ("A", "K", "B", "nu", "C", "M")
T200_DEADBAND = 0.01

UNIT_TO_RPS = {"rpm": 1.0 / 60.0, "rps": 1.0, "rad_s": 1.0 / (2.0 * math.pi), "normalized": 1.0}


@njit(cache=True, inline="always")
def rotor_lag(state, command, decay):
    """Exact first-order response over h of a rotor state to a command held constant; decay = exp(-h / T_n)
    (precomputed per thruster by the Fleet, 0 for T_n = 0)."""
    return command + (state - command) * decay


@njit(cache=True, inline="always")
def thrust_quadratic(rho, diameter, kt, kt_rev, n_rps):
    """T = rho D^4 K_T n|n| (N), n in rev/s; K_T of the reverse quadrant for n < 0."""
    k = kt if n_rps >= 0.0 else kt_rev
    return rho * diameter**4 * k * n_rps * abs(n_rps)


@njit(cache=True, inline="always")
def thrust_t200(cmd, curve, o, deadband):
    """T200 thrust (N) of a normalised command, [SaldarriagaMesa2025] Eq. 16; curve[o:o+12] = pos set, neg set."""
    if abs(cmd) <= deadband:
        return 0.0
    if cmd < 0.0:
        o += 6
    a, k, b, nu, c, m = curve[o], curve[o + 1], curve[o + 2], curve[o + 3], curve[o + 4], curve[o + 5]
    t = a + (k - a) / (c + math.exp(-b * (cmd - m))) ** (1.0 / nu)
    if cmd > 0.0:
        return max(t, 0.0)
    return min(t, 0.0)


def t200_curve_array(curve: dict[str, float] | None) -> tuple[np.ndarray, float]:
    """Pack generalised-logistic parameters into the 12-vector of thrust_t200, plus the deadband.

    Keys as in the catalogue (a_pos, k_pos, b_pos, nu_pos, c_pos, m_pos, the same with _neg, deadband; case
    does not matter); missing ones take the Table 2 values. max_force_fwd_n / max_force_rev_n (the published
    extremes, 36.38 N / -28.44 N for the T200) are accepted as documentation: the curve itself gives the thrust."""
    values = {k.lower(): v for k, v in T200_TABLE2.items()}
    deadband = T200_DEADBAND
    for key, value in (curve or {}).items():
        k = key.lower()
        if k == "deadband":
            deadband = float(value)
        elif k in values:
            values[k] = float(value)
        elif k not in ("max_force_fwd_n", "max_force_rev_n"):
            raise ValueError(f"thrust curve: unknown parameter {key!r}; expected {sorted(values)} or deadband")
    arr = np.array([values[f"{k.lower()}_{s}"] for s in ("pos", "neg") for k in T200_CURVE_KEYS], dtype=float)
    return arr, deadband


def t200_thrust(cmd, curve: dict[str, float] | None = None) -> np.ndarray:
    """Vectorised T200 thrust (N) of normalised commands (for plots, docs and allocation)."""
    arr, deadband = t200_curve_array(curve)
    cmds = np.atleast_1d(np.asarray(cmd, dtype=float))
    return np.array([thrust_t200(c, arr, 0, deadband) for c in cmds]).reshape(np.shape(cmd))


def allocation_matrix(thrusters: tuple[ThrusterSpec, ...] | list[ThrusterSpec]) -> np.ndarray:
    """B (6 x n): column i = [d_i ; r_i x d_i], the body wrench (FRD, at CO) per newton of thrust i."""
    cols = []
    for t in thrusters:
        d = np.asarray(t.direction_frd, dtype=float)
        d = d / np.linalg.norm(d)
        cols.append(np.concatenate([d, np.cross(np.asarray(t.position_frd_m, dtype=float), d)]))
    return np.array(cols).T if cols else np.zeros((6, 0))


def decay_factor(time_constant_s: float, h_s: float) -> float:
    """exp(-h / T) of a first-order lag over a step h (0 for T <= 0: the state follows the command at once)."""
    return math.exp(-h_s / time_constant_s) if time_constant_s > 0.0 else 0.0
