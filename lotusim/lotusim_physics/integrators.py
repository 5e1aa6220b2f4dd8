"""Fixed-step integration of the whole fleet in one compiled call (numba, cache=True).

Per vessel and per (sub)step of length h = dt / substeps:
  1. actuators: rotor states and fin deflections advance exactly over h (thrusters.rotor_lag, fins.fin_servo)
     and are held during the step; the thruster wrench is computed once;
  2. the state x = [p_ned, q_ned_frd, nu] advances with
       - "rk4": classical 4th-order Runge-Kutta on x (quaternion renormalised after the step), or
       - "euler": semi-implicit (symplectic) Euler, nu_{k+1} = nu_k + h nu_dot(x_k), then
         p_{k+1} = p_k + h R(q_k) v_{k+1} and q_{k+1} = q_k (x) exp(1/2 w_{k+1} h) (one evaluation per step);
  3. nu_dot of the step is stored as (nu_{k+1} - nu_k) / dt (the RK4-weighted mean acceleration).
Environment inputs (water and air velocity at the vessel) are sampled once per step by the Fleet and held.

Fault containment: a vessel whose environment inputs are not finite, or whose new state is not finite or
exceeds the speed / rate / position limits, is restored to its state at the start of the step and frozen;
its fault code is written to `status` and the count returned. Frozen vessels are skipped. Each vessel's
arithmetic is independent of the others and of its row, so N copies of a vessel give bit-identical results.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from lotusim_physics import layout as L
from lotusim_physics.equations_of_motion import FASTMATH, vessel_derivative
from lotusim_physics.fins import fin_servo
from lotusim_physics.kinematics import quat_normalize_inplace, quat_rotate_body_rate, rotation_from_quat
from lotusim_physics.thrusters import rotor_lag, thrust_quadratic, thrust_t200

METHODS = {"rk4": 0, "euler": 1}


@njit(cache=True)
def _update_actuators(tp, t0, nt, fp, f0, nf, rho, h, tau_thr):
    """Advance rotor states and fin deflections over h; tau_thr (6,) <- thruster wrench (FRD, at CO)."""
    for j in range(6):
        tau_thr[j] = 0.0
    for k in range(t0, t0 + nt):
        cmd = min(max(tp[k, L.T_CMD], tp[k, L.T_CMD_MIN]), tp[k, L.T_CMD_MAX]) * tp[k, L.T_TO_RPS]
        s = rotor_lag(tp[k, L.T_STATE], cmd, tp[k, L.T_DECAY])
        tp[k, L.T_STATE] = s
        torque = 0.0
        if tp[k, L.T_MODEL] == L.T_MODEL_T200:
            thrust = thrust_t200(s, tp[k], L.T_CURVE, tp[k, L.T_DEADBAND])
        else:
            thrust = thrust_quadratic(rho, tp[k, L.T_DIAM], tp[k, L.T_KT], tp[k, L.T_KT_REV], s)
            torque = rho * tp[k, L.T_DIAM] ** 5 * tp[k, L.T_KQ] * s * abs(s)
        tp[k, L.T_THRUST] = thrust
        dx, dy, dz = tp[k, L.T_DIR], tp[k, L.T_DIR + 1], tp[k, L.T_DIR + 2]
        fx, fy, fz = thrust * dx, thrust * dy, thrust * dz
        rx, ry, rz = tp[k, L.T_POS], tp[k, L.T_POS + 1], tp[k, L.T_POS + 2]
        tau_thr[0] += fx
        tau_thr[1] += fy
        tau_thr[2] += fz
        tau_thr[3] += ry * fz - rz * fy + torque * dx
        tau_thr[4] += rz * fx - rx * fz + torque * dy
        tau_thr[5] += rx * fy - ry * fx + torque * dz
    for k in range(f0, f0 + nf):
        fp[k, L.F_STATE] = fin_servo(
            fp[k, L.F_STATE], fp[k, L.F_CMD], fp[k, L.F_MAX], fp[k, L.F_DECAY], fp[k, L.F_RATE], h
        )


@njit(cache=True)
def _check(x, max_speed, max_rate, max_pos):
    """Fault code of a state x (13,): 0 if finite and within limits."""
    for j in range(L.X_STATE):
        if not math.isfinite(x[j]):
            return L.FAULT_NONFINITE_STATE
    if x[7] * x[7] + x[8] * x[8] + x[9] * x[9] > max_speed * max_speed:
        return L.FAULT_SPEED
    if x[10] * x[10] + x[11] * x[11] + x[12] * x[12] > max_rate * max_rate:
        return L.FAULT_RATE
    if x[0] * x[0] + x[1] * x[1] + x[2] * x[2] > max_pos * max_pos:
        return L.FAULT_POSITION
    return L.FAULT_NONE


@njit(cache=True, fastmath=FASTMATH)
def rk4_stage(x, k, c, xt):
    """xt = x + c k: the state at which RK4 evaluates its next slope (c = h/2 or h)."""
    for j in range(L.X_STATE):
        xt[j] = x[j] + c * k[j]


@njit(cache=True, fastmath=FASTMATH)
def rk4_combine(x, k1, k2, k3, k4, h):
    """x += h/6 (k1 + 2 k2 + 2 k3 + k4), then the attitude quaternion renormalised."""
    for j in range(L.X_STATE):
        x[j] = x[j] + (h / 6.0) * (k1[j] + 2.0 * k2[j] + 2.0 * k3[j] + k4[j])
    quat_normalize_inplace(x, 3)


@njit(cache=True, fastmath=FASTMATH)
def euler_semi_implicit(x, k1, h):
    """Semi-implicit Euler: velocities first from their slope k1, then the pose from the new velocities."""
    r0, r1, r2, r3, r4, r5, r6, r7, r8 = rotation_from_quat(x[3], x[4], x[5], x[6])
    for j in range(6):
        x[7 + j] = x[7 + j] + h * k1[7 + j]
    x[0] += h * (r0 * x[7] + r1 * x[8] + r2 * x[9])
    x[1] += h * (r3 * x[7] + r4 * x[8] + r5 * x[9])
    x[2] += h * (r6 * x[7] + r7 * x[8] + r8 * x[9])
    quat_rotate_body_rate(x, 3, x[10], x[11], x[12], h)


@njit(cache=True, inline="always")
def work_arrays():
    """A step's scratch state vectors (13,): x0 (at the step's start), x, xt (an RK4 stage), k1 .. k4."""
    ns = L.X_STATE
    return np.empty(ns), np.empty(ns), np.empty(ns), np.empty(ns), np.empty(ns), np.empty(ns), np.empty(ns)


@njit(cache=True, fastmath=FASTMATH, inline="always")  # inlined: the kernels' machine code as before
def row_start(xs, i, frozen, status, x):
    """The start of row i's step, not frozen: its state into x (13,) and True; or False if its environment inputs
    (current, wind, waves: columns X_CUR .. X_WAVE + 5) are not all finite: it is frozen now (FAULT_NONFINITE_ENV)."""
    env_ok = True
    for j in range(L.X_CUR, L.X_WAVE + 6):
        if not math.isfinite(xs[i, j]):
            env_ok = False
    if not env_ok:
        frozen[i] = True
        status[i] = L.FAULT_NONFINITE_ENV
        return False
    for j in range(L.X_STATE):
        x[j] = xs[i, j]
    return True


@njit(cache=True, fastmath=FASTMATH)
def step_fleet(
    xs, vp, vi, tp, fp, frozen, status, fault_step, n, dt, substeps, steps, method, rho, g, max_speed, max_rate, max_pos
):
    """Advance vessels 0 .. n-1 by `steps` steps of dt (the environment columns of xs held); returns the number of
    vessels frozen (codes in status, the step of the fault within this call in fault_step).

    Vessels do not interact within a call, so each vessel runs all its steps in turn (its rows stay in cache):
    the result is bit-identical to `steps` calls of one step. A frozen vessel keeps its last valid state."""
    h = dt / substeps
    ns = L.X_STATE
    x0, x, xt, k1, k2, k3, k4 = work_arrays()
    tau_thr = np.empty(6)
    nfault = 0
    touched = 0.0
    for i in range(n):
        if i + 1 < n:
            # touch the next vessel's parameter row (one load per 64-byte line) so that it streams into the cache
            # while this vessel computes: with 1,000+ vessels the rows no longer fit in L2
            for j in range(0, L.V_WIDTH, 8):
                touched += vp[i + 1, j]
        if frozen[i]:
            continue
        if not row_start(xs, i, frozen, status, x):  # frozen now: its environment inputs are not finite
            nfault += 1
            continue
        t0, nt, f0, nf = vi[i, 0], vi[i, 1], vi[i, 2], vi[i, 3]
        prm = vp[i]  # the vessel's packed parameters (one contiguous row)
        code = L.FAULT_NONE
        for s in range(steps):
            for j in range(ns):
                x0[j] = x[j]
            _advance_one_step(
                x, xt, k1, k2, k3, k4, tau_thr, xs, i, prm, tp, t0, nt, fp, f0, nf, h, substeps, method, rho, g
            )
            code = _check(x, max_speed, max_rate, max_pos)
            if code != L.FAULT_NONE:
                fault_step[i] = s
                break
        if code != L.FAULT_NONE:
            frozen[i] = True
            status[i] = code
            nfault += 1
            for j in range(ns):  # the state at the start of the faulty step
                xs[i, j] = x0[j]
            continue
        for j in range(ns):
            xs[i, j] = x[j]
        for j in range(6):
            xs[i, L.X_NUDOT + j] = (x[7 + j] - x0[7 + j]) / dt
    if touched != touched:  # never true for finite parameters; keeps the prefetching loads alive
        nfault += 0
    return nfault


@njit(cache=True, fastmath=FASTMATH)
def _advance_one_step(x, xt, k1, k2, k3, k4, tau_thr, xs, i, prm, tp, t0, nt, fp, f0, nf, h, substeps, method, rho, g):
    """One step of vessel i (substeps of h) in place on its state x (13,)."""
    for _ in range(substeps):
        _update_actuators(tp, t0, nt, fp, f0, nf, rho, h, tau_thr)
        if method == 0:
            vessel_derivative(x, xs, i, prm, fp, f0, nf, tau_thr, rho, g, k1)
            rk4_stage(x, k1, 0.5 * h, xt)
            vessel_derivative(xt, xs, i, prm, fp, f0, nf, tau_thr, rho, g, k2)
            rk4_stage(x, k2, 0.5 * h, xt)
            vessel_derivative(xt, xs, i, prm, fp, f0, nf, tau_thr, rho, g, k3)
            rk4_stage(x, k3, h, xt)
            vessel_derivative(xt, xs, i, prm, fp, f0, nf, tau_thr, rho, g, k4)
            rk4_combine(x, k1, k2, k3, k4, h)
        else:
            vessel_derivative(x, xs, i, prm, fp, f0, nf, tau_thr, rho, g, k1)
            euler_semi_implicit(x, k1, h)
