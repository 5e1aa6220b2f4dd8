"""Fixed-step integration of the fleet's aerial vehicles in one compiled call (numba, cache=True): rows lo .. hi-1
of the fleet arrays (the Fleet keeps its aerial vehicles after the marine ones).

The same scheme as integrators.step_fleet for the marine rows (RK4 or semi-implicit Euler on [p_ned, q_ned_frd, nu],
the environment held over a step, fault containment), in a kernel of its own so that the marine kernel's machine
code, and therefore its results bit for bit, does not depend on the aerial terms. Per (sub)step h:
  1. the motors advance exactly over h and the rotor wrench of the step is computed once (rotors.rotor_wrench);
  2. the state advances with equations_of_motion.aerial_derivative;
then, after each step, a vehicle on the surface below it is put back on it (rotors.surface_contact): a touchdown
or a lift-off is written to status / fault_step like a fault (layout.EVENT_*), without freezing the vehicle.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from lotusim_physics import layout as L
from lotusim_physics.equations_of_motion import FASTMATH, aerial_derivative
from lotusim_physics.integrators import (
    _check,
    euler_semi_implicit,
    rk4_combine,
    rk4_stage,
    row_start,
    work_arrays,
)
from lotusim_physics.rotors import descent_speed, rotor_wrench, surface_contact


@njit(cache=True, fastmath=FASTMATH)
def step_aerial(
    xs,
    vp,
    vi,
    tp,
    frozen,
    status,
    fault_step,
    impact,
    lo,
    hi,
    dt,
    substeps,
    steps,
    method,
    max_speed,
    max_rate,
    max_pos,
):
    """Advance the aerial vehicles lo .. hi-1 by `steps` steps of dt; returns the number of vehicles frozen or with
    a contact event (codes in status, the step within this call in fault_step; at a touchdown, impact holds the
    descent speed, NED down m/s, at the start of that step). A frozen vehicle is skipped."""
    h = dt / substeps
    ns = L.X_STATE
    x0, x, xt, k1, k2, k3, k4 = work_arrays()
    tau = np.empty(6)
    nfault = 0
    for i in range(lo, hi):
        if frozen[i]:
            continue
        if not row_start(xs, i, frozen, status, x):  # frozen now: its environment inputs are not finite
            nfault += 1
            continue
        t0, nt = vi[i, 0], vi[i, 1]
        prm = vp[i]
        code = L.FAULT_NONE
        for s in range(steps):
            for j in range(ns):
                x0[j] = x[j]
            for _ in range(substeps):
                rotor_wrench(tp, t0, nt, x, xs[i, L.X_WIND], xs[i, L.X_WIND + 1], xs[i, L.X_WIND + 2], tau)
                _advance(x, xt, k1, k2, k3, k4, tau, xs, i, prm, h, method)
            contact = 1.0 if surface_contact(x, prm[L.V_CONTACT_H], xs[i, L.X_WAVE]) else 0.0
            if contact != xs[i, L.X_CONTACT]:  # a touchdown or a lift-off: an event, not a fault
                xs[i, L.X_CONTACT] = contact
                status[i] = L.EVENT_TOUCHDOWN if contact > 0.0 else L.EVENT_LIFTOFF
                fault_step[i] = s
                if contact > 0.0:
                    impact[i] = descent_speed(x0)
                nfault += 1
            code = _check(x, max_speed, max_rate, max_pos)
            if code != L.FAULT_NONE:
                fault_step[i] = s
                break
        if code != L.FAULT_NONE:
            if status[i] == L.FAULT_NONE:  # (an event of this call was counted already)
                nfault += 1
            frozen[i] = True
            status[i] = code
            for j in range(ns):  # the state at the start of the faulty step
                xs[i, j] = x0[j]
            continue
        for j in range(ns):
            xs[i, j] = x[j]
        for j in range(6):
            xs[i, L.X_NUDOT + j] = (x[7 + j] - x0[7 + j]) / dt
    return nfault


@njit(cache=True, fastmath=FASTMATH)
def _advance(x, xt, k1, k2, k3, k4, tau, xs, i, prm, h, method):
    """One (sub)step h of aerial vehicle i in place on its state x (13,), the rotor wrench tau held."""
    if method == 0:
        aerial_derivative(x, xs, i, prm, tau, k1)
        rk4_stage(x, k1, 0.5 * h, xt)
        aerial_derivative(xt, xs, i, prm, tau, k2)
        rk4_stage(x, k2, 0.5 * h, xt)
        aerial_derivative(xt, xs, i, prm, tau, k3)
        rk4_stage(x, k3, h, xt)
        aerial_derivative(xt, xs, i, prm, tau, k4)
        rk4_combine(x, k1, k2, k3, k4, h)
    else:
        aerial_derivative(x, xs, i, prm, tau, k1)
        euler_semi_implicit(x, k1, h)
