"""The 6-DOF equations of motion of one vessel, evaluated by the batched integrators (Fossen 2021 ch. 6-7,
ocean currents sec. 10.3; 004_786a75be5c5bda5f.txt Eqs. 1-3; 002_1bc233a69a6533ee.txt Eq. 2):

    M_RB nu_dot + C_RB(nu) nu + M_A nu_r_dot + C_A(nu_r) nu_r + D(nu_r) nu_r + g(eta) = tau
    nu_r = nu - nu_c,   nu_c = [R(q)^T V_c,NED ; 0 0 0]

V_c is the water velocity at the vessel (held over a step). For a current constant in NED its body components
change only through the rotation of the body: nu_c_dot = [-w x v_c ; 0]. With M = M_RB + M_A this gives

    nu_dot = M^-1 ( tau - C_RB(nu) nu - C_A(nu_r) nu_r - D(nu_r) nu_r - g(eta) + M_A nu_c_dot )

which, as C_RB is in the linear-velocity-independent form (rigid_body.py), equals the issue's
nu_r_dot = M^-1 (tau - C(nu_r) nu_r - D(nu_r) nu_r - g(eta)) plus nu_c_dot. Kinematics: kinematics.py.
tau = thrusters (held over a step) + commanded body wrench + fins(nu_r) + wind(nu) for surface vessels.
"""

from __future__ import annotations

from numba import njit

from lotusim_physics import layout as L
from lotusim_physics.added_mass import c_a_times_nu_r
from lotusim_physics.damping import damping_times_nu_r, matvec6
from lotusim_physics.fins import add_fin_wrench
from lotusim_physics.kinematics import quat_derivative, rotation_from_quat
from lotusim_physics.restoring import restoring_surface, restoring_underwater
from lotusim_physics.rigid_body import c_rb_times_nu
from lotusim_physics.wind import add_wind_wrench


@njit(cache=True)
def vessel_derivative(x, xs, i, prm, fp, f0, nf, tau_thr, rho, g, xdot, rmat, nu_r, a6, crb, ca, dmp, gv, rhs):
    """xdot (13,) = d/dt [p_ned (3), q_ned_frd (4), nu (6)] of vessel i at state x (13,).

    prm = vp[i]: the vessel's packed parameters (layout.V_*); xs[i]: its commanded body wrench and the water / air
    velocities (NED, m/s) at the vessel; fp rows f0 .. f0 + nf: its fins (deflection in F_STATE); tau_thr (6,):
    the thruster wrench. rmat (9,), nu_r, a6, crb, ca, dmp, gv, rhs (6,): scratch."""
    rotation_from_quat(x, 3, rmat)
    cn, ce, cd = xs[i, L.X_CUR], xs[i, L.X_CUR + 1], xs[i, L.X_CUR + 2]
    # current in the body: v_c = R^T V_c
    vcx = rmat[0] * cn + rmat[3] * ce + rmat[6] * cd
    vcy = rmat[1] * cn + rmat[4] * ce + rmat[7] * cd
    vcz = rmat[2] * cn + rmat[5] * ce + rmat[8] * cd
    u, v, w, p, qr, r = x[7], x[8], x[9], x[10], x[11], x[12]
    nu_r[0] = u - vcx
    nu_r[1] = v - vcy
    nu_r[2] = w - vcz
    nu_r[3] = p
    nu_r[4] = qr
    nu_r[5] = r
    # nu_c_dot = -w x v_c (current constant in NED)
    ncx = -(qr * vcz - r * vcy)
    ncy = -(r * vcx - p * vcz)
    ncz = -(p * vcy - qr * vcx)
    # generalised force tau
    for j in range(6):
        rhs[j] = tau_thr[j] + xs[i, L.X_WRENCH + j]
    for k in range(f0, f0 + nf):
        add_fin_wrench(fp, k, rho, nu_r[0], nu_r[1], nu_r[2], rhs)
    if prm[L.V_HASWIND] > 0.0:
        add_wind_wrench(rmat, xs[i, L.X_WIND], xs[i, L.X_WIND + 1], xs[i, L.X_WIND + 2], u, v, prm, rhs)
    # - C_RB(nu) nu - C_A(nu_r) nu_r - D(nu_r) nu_r - g(eta) + M_A nu_c_dot
    for j in range(6):
        a6[j] = x[7 + j]
    c_rb_times_nu(prm, a6, crb)
    c_a_times_nu_r(prm, nu_r, a6, ca)
    damping_times_nu_r(prm, nu_r, a6, dmp)
    if prm[L.V_SURFACE] > 0.0:
        restoring_surface(rmat, x[2], prm, rho, g, gv)
    else:
        restoring_underwater(rmat, prm, gv)
    a6[0], a6[1], a6[2], a6[3], a6[4], a6[5] = ncx, ncy, ncz, 0.0, 0.0, 0.0
    matvec6(prm, L.V_MA, a6, nu_r)  # M_A nu_c_dot (nu_r is no longer needed)
    for j in range(6):
        rhs[j] += -crb[j] - ca[j] - dmp[j] - gv[j] + nu_r[j]
    # nu_dot = M^-1 rhs
    matvec6(prm, L.V_MINV, rhs, a6)
    for j in range(6):
        xdot[7 + j] = a6[j]
    # kinematics: p_dot = R v, q_dot = 1/2 q (x) [0, w]
    for j in range(3):
        xdot[j] = rmat[3 * j] * u + rmat[3 * j + 1] * v + rmat[3 * j + 2] * w
    quat_derivative(x, 3, p, qr, r, xdot, 3)
