"""The 6-DOF equations of motion of one vessel, evaluated by the batched integrators (Fossen 2021 ch. 6-7,
ocean currents sec. 10.3; [Meyers2025] Eqs. 1-3; [Player2023] Eq. 2):

    M_RB nu_dot + C_RB(nu) nu + M_A nu_r_dot + C_A(nu_r) nu_r + D(nu_r) nu_r + g(eta) = tau
    nu_r = nu - nu_c,   nu_c = [R(q)^T V_c,NED ; 0 0 0]

V_c is the water velocity at the vessel (held over a step). For a current constant in NED its body components
change only through the rotation of the body: nu_c_dot = [-w x v_c ; 0]. With M = M_RB + M_A this gives

    nu_dot = M^-1 ( tau - C_RB(nu) nu - C_A(nu_r) nu_r - D(nu_r) nu_r - g(eta) + M_A nu_c_dot )

which, as C_RB is in the linear-velocity-independent form (rigid_body.py), equals the issue's
nu_r_dot = M^-1 (tau - C(nu_r) nu_r - D(nu_r) nu_r - g(eta)) plus nu_c_dot. Kinematics: kinematics.py.
tau = thrusters (held over a step) + commanded body wrench + fins(nu_r, local flow at each fin, fins.py) + hull
lift(nu_r) for underwater vehicles with body_lift (body_lift.py) + wind(nu) for surface vessels.

Aerial vehicles (multirotors, rotors.py) fly in air: no added mass, no buoyancy, the damping matrices are body drag
against the air velocity instead of the water's:

    nu_dot = M_RB^-1 ( tau - C_RB(nu) nu - D(nu_a) nu_a - g(eta) ),   nu_a = nu - [R(q)^T V_wind ; 0 0 0]

tau = rotors (held over a step, rotors.rotor_wrench) + commanded body wrench; g(eta) = weight only.
"""

from __future__ import annotations

import math

from numba import njit

from lotusim_physics import layout as L
from lotusim_physics.added_mass import c_a_times_nu_r
from lotusim_physics.body_lift import body_lift_wrench
from lotusim_physics.damping import damping_times_nu_r, matvec6
from lotusim_physics.fins import fin_wrench
from lotusim_physics.kinematics import quat_derivative, rotation_from_quat
from lotusim_physics.restoring import restoring_surface, restoring_underwater
from lotusim_physics.rigid_body import c_rb_times_nu
from lotusim_physics.rotors import gravity_in_air
from lotusim_physics.wind_load import wind_load

# LLVM fast-math flags for the compiled kernel: contraction into fused multiply-adds and reassociation let it
# vectorise the 6x6 products (~25 % faster). Deliberately without "nnan"/"ninf": fault containment tests
# isfinite(). Results stay deterministic for a given build and machine (same inputs, same bits).
FASTMATH = {"contract", "reassoc", "arcp", "nsz"}


@njit(cache=True, inline="always")
def _derivative(x, xs, i, prm, fp, f0, nf, tau_thr, rho, g, xdot, surface):
    """xdot (13,) = d/dt [p_ned (3), q_ned_frd (4), nu (6)] of vessel i at state x (13,).

    `surface` is a compile-time constant in the two specialisations below (underwater_derivative,
    surface_derivative): each then contains only its own restoring and load code, which halves the cost of an
    underwater evaluation.

    prm = vp[i]: the vessel's packed parameters (layout.V_*); xs[i]: its commanded body wrench and the water / air
    velocities (NED, m/s) at the vessel; fp rows f0 .. f0 + nf: its fins (deflection in F_STATE); tau_thr (6,):
    the thruster wrench. The helpers take and return scalars, so the whole evaluation stays in registers."""
    qw, qx, qy, qz = x[3], x[4], x[5], x[6]
    r0, r1, r2, r3, r4, r5, r6, r7, r8 = rotation_from_quat(qw, qx, qy, qz)
    u, v, w, p, q, r = x[7], x[8], x[9], x[10], x[11], x[12]
    # current in the body, v_c = R^T V_c, and the relative velocity nu_r = nu - [v_c; 0]
    cn = xs[i, L.X_CUR] + xs[i, L.X_WAVE + 3]  # current + wave orbital velocity (0 without waves)
    ce = xs[i, L.X_CUR + 1] + xs[i, L.X_WAVE + 4]
    cd = xs[i, L.X_CUR + 2] + xs[i, L.X_WAVE + 5]
    vcx = r0 * cn + r3 * ce + r6 * cd
    vcy = r1 * cn + r4 * ce + r7 * cd
    vcz = r2 * cn + r5 * ce + r8 * cd
    ur, vr, wr = u - vcx, v - vcy, w - vcz
    # nu_c_dot = [-w x v_c; 0] (current constant in NED)
    ncx = -(q * vcz - r * vcy)
    ncy = -(r * vcx - p * vcz)
    ncz = -(p * vcy - q * vcx)
    # generalised force tau: thrusters + commanded wrench + fins(nu_r) + wind
    t0 = tau_thr[0] + xs[i, L.X_WRENCH]
    t1 = tau_thr[1] + xs[i, L.X_WRENCH + 1]
    t2 = tau_thr[2] + xs[i, L.X_WRENCH + 2]
    t3 = tau_thr[3] + xs[i, L.X_WRENCH + 3]
    t4 = tau_thr[4] + xs[i, L.X_WRENCH + 4]
    t5 = tau_thr[5] + xs[i, L.X_WRENCH + 5]
    for k in range(f0, f0 + nf):
        f = fin_wrench(fp, k, rho, ur, vr, wr, p, q, r)
        t0, t1, t2, t3, t4, t5 = t0 + f[0], t1 + f[1], t2 + f[2], t3 + f[3], t4 + f[4], t5 + f[5]
    if not surface and prm[L.V_BL_K] > 0.0:
        bl = body_lift_wrench(prm, rho, ur, vr, wr)
        t1, t2, t4, t5 = t1 + bl[1], t2 + bl[2], t4 + bl[4], t5 + bl[5]
    if surface and prm[L.V_HASWIND] > 0.0:
        wx, wy, wn = wind_load(
            r0, r1, r3, r4, r6, r7, xs[i, L.X_WIND], xs[i, L.X_WIND + 1], xs[i, L.X_WIND + 2], u, v, prm
        )
        t0, t1, t5 = t0 + wx, t1 + wy, t5 + wn
    # C_RB(nu) nu, C_A(nu_r) nu_r, D(nu_r) nu_r, g(eta), M_A nu_c_dot
    c = c_rb_times_nu(prm, u, v, w, p, q, r)
    a = c_a_times_nu_r(prm, ur, vr, wr, p, q, r)
    d = damping_times_nu_r(prm, ur, vr, wr, p, q, r)
    if surface:  # the sea over the hull: immersion below its mean, righting towards its normal (0, 0 in still water)
        sn, se = xs[i, L.X_WAVE + 1], xs[i, L.X_WAVE + 2]
        inv = 1.0 / math.sqrt(1.0 + sn * sn + se * se)
        nx, ny, nz = (r0 * sn + r3 * se + r6) * inv, (r1 * sn + r4 * se + r7) * inv, (r2 * sn + r5 * se + r8) * inv
        gv = restoring_surface(prm, x[2] + xs[i, L.X_WAVE], r6, r7, r8, rho, g, nx, ny, nz)
    else:  # the surface crossing is measured from the sea above CO (0 in still water)
        gv = restoring_underwater(prm, x[2] + xs[i, L.X_WAVE], r6, r7, r8)
    mc = matvec6(prm, L.V_MA, ncx, ncy, ncz, 0.0, 0.0, 0.0)
    # nu_dot = M^-1 (tau - C_RB nu - C_A nu_r - D nu_r - g + M_A nu_c_dot)
    nd = matvec6(
        prm,
        L.V_MINV,
        t0 - c[0] - a[0] - d[0] - gv[0] + mc[0],
        t1 - c[1] - a[1] - d[1] - gv[1] + mc[1],
        t2 - c[2] - a[2] - d[2] - gv[2] + mc[2],
        t3 - c[3] - a[3] - d[3] - gv[3] + mc[3],
        t4 - c[4] - a[4] - d[4] - gv[4] + mc[4],
        t5 - c[5] - a[5] - d[5] - gv[5] + mc[5],
    )
    xdot[7], xdot[8], xdot[9], xdot[10], xdot[11], xdot[12] = nd
    # kinematics: p_dot = R v, q_dot = 1/2 q (x) [0, w]
    xdot[0] = r0 * u + r1 * v + r2 * w
    xdot[1] = r3 * u + r4 * v + r5 * w
    xdot[2] = r6 * u + r7 * v + r8 * w
    xdot[3], xdot[4], xdot[5], xdot[6] = quat_derivative(qw, qx, qy, qz, p, q, r)


@njit(cache=True, fastmath=FASTMATH)
def underwater_derivative(x, xs, i, prm, fp, f0, nf, tau_thr, rho, g, xdot):
    """The derivative of an underwater vehicle (g(eta) from W, B, r_g, r_b; no wind)."""
    _derivative(x, xs, i, prm, fp, f0, nf, tau_thr, rho, g, xdot, False)


@njit(cache=True, fastmath=FASTMATH)
def surface_derivative(x, xs, i, prm, fp, f0, nf, tau_thr, rho, g, xdot):
    """The derivative of a surface vessel (waterplane hydrostatics, wind loads)."""
    _derivative(x, xs, i, prm, fp, f0, nf, tau_thr, rho, g, xdot, True)


@njit(cache=True, fastmath=FASTMATH)
def aerial_derivative(x, xs, i, prm, tau_thr, xdot):
    """The derivative of an aerial vehicle (module docstring): rotor wrench tau_thr (6,) and commanded wrench,
    rigid-body Coriolis, body drag against the air (wind at the vehicle xs[i, X_WIND], NED), weight."""
    qw, qx, qy, qz = x[3], x[4], x[5], x[6]
    r0, r1, r2, r3, r4, r5, r6, r7, r8 = rotation_from_quat(qw, qx, qy, qz)
    u, v, w, p, q, r = x[7], x[8], x[9], x[10], x[11], x[12]
    wn, we, wd = xs[i, L.X_WIND], xs[i, L.X_WIND + 1], xs[i, L.X_WIND + 2]
    ua = u - (r0 * wn + r3 * we + r6 * wd)  # nu_a = nu - R^T V_wind
    va = v - (r1 * wn + r4 * we + r7 * wd)
    wa = w - (r2 * wn + r5 * we + r8 * wd)
    c = c_rb_times_nu(prm, u, v, w, p, q, r)
    d = damping_times_nu_r(prm, ua, va, wa, p, q, r)
    gv = gravity_in_air(prm, r6, r7, r8)
    nd = matvec6(
        prm,
        L.V_MINV,
        tau_thr[0] + xs[i, L.X_WRENCH] - c[0] - d[0] - gv[0],
        tau_thr[1] + xs[i, L.X_WRENCH + 1] - c[1] - d[1] - gv[1],
        tau_thr[2] + xs[i, L.X_WRENCH + 2] - c[2] - d[2] - gv[2],
        tau_thr[3] + xs[i, L.X_WRENCH + 3] - c[3] - d[3] - gv[3],
        tau_thr[4] + xs[i, L.X_WRENCH + 4] - c[4] - d[4] - gv[4],
        tau_thr[5] + xs[i, L.X_WRENCH + 5] - c[5] - d[5] - gv[5],
    )
    xdot[7], xdot[8], xdot[9], xdot[10], xdot[11], xdot[12] = nd
    xdot[0] = r0 * u + r1 * v + r2 * w
    xdot[1] = r3 * u + r4 * v + r5 * w
    xdot[2] = r6 * u + r7 * v + r8 * w
    xdot[3], xdot[4], xdot[5], xdot[6] = quat_derivative(qw, qx, qy, qz, p, q, r)


@njit(cache=True, inline="always")
def vessel_derivative(x, xs, i, prm, fp, f0, nf, tau_thr, rho, g, xdot):
    """xdot (13,) of a marine vessel i whatever its domain (dispatches on prm[V_SURFACE]; aerial vehicles are
    stepped by aerial_integrator.step_aerial with aerial_derivative)."""
    if prm[L.V_SURFACE] > 0.0:
        surface_derivative(x, xs, i, prm, fp, f0, nf, tau_thr, rho, g, xdot)
    else:
        underwater_derivative(x, xs, i, prm, fp, f0, nf, tau_thr, rho, g, xdot)
