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
from lotusim_physics.damping import damping_times_nu_r
from lotusim_physics.fins import add_fin_wrench
from lotusim_physics.kinematics import quat_derivative, rotation_from_quat
from lotusim_physics.restoring import restoring_surface, restoring_underwater
from lotusim_physics.rigid_body import c_rb_times_nu
from lotusim_physics.wind import add_wind_wrench

SCRATCH_SIZE = 64


@njit(cache=True)
def vessel_derivative(x, vrow, fp, f0, nf, tau_thr, wrench, cur_ned, wind_ned, rho, g, xdot, scratch):
    """xdot (13,) = d/dt [p_ned (3), q_ned_frd (4), nu (6)] of one vessel; scratch (SCRATCH_SIZE,).

    vrow: the vessel's packed parameters (layout.V_*); fp rows f0 .. f0 + nf: its fins (deflection in F_STATE);
    tau_thr (6,) the thruster wrench; wrench (6,) the commanded body wrench; cur_ned, wind_ned (3,) m/s."""
    rmat = scratch[0:9]
    nu_r = scratch[9:15]
    crb = scratch[15:21]
    ca = scratch[21:27]
    tmp6 = scratch[27:33]
    dmp = scratch[33:39]
    gv = scratch[39:45]
    rhs = scratch[45:51]
    q = x[3:7]
    nu = x[7:13]
    rotation_from_quat(q, rmat)
    # current in the body: v_c = R^T V_c
    vcx = rmat[0] * cur_ned[0] + rmat[3] * cur_ned[1] + rmat[6] * cur_ned[2]
    vcy = rmat[1] * cur_ned[0] + rmat[4] * cur_ned[1] + rmat[7] * cur_ned[2]
    vcz = rmat[2] * cur_ned[0] + rmat[5] * cur_ned[1] + rmat[8] * cur_ned[2]
    nu_r[0] = nu[0] - vcx
    nu_r[1] = nu[1] - vcy
    nu_r[2] = nu[2] - vcz
    nu_r[3] = nu[3]
    nu_r[4] = nu[4]
    nu_r[5] = nu[5]
    p, qr, r = nu[3], nu[4], nu[5]
    # nu_c_dot = -w x v_c (current constant in NED)
    ncx = -(qr * vcz - r * vcy)
    ncy = -(r * vcx - p * vcz)
    ncz = -(p * vcy - qr * vcx)
    # generalised force tau
    for i in range(6):
        rhs[i] = tau_thr[i] + wrench[i]
    for k in range(f0, f0 + nf):
        add_fin_wrench(fp[k], fp[k, L.F_STATE], rho, nu_r[0], nu_r[1], nu_r[2], rhs)
    if vrow[L.V_HASWIND] > 0.0:
        add_wind_wrench(
            rmat, wind_ned, nu[0], nu[1], vrow[L.V_RHOAIR], vrow[L.V_AF], vrow[L.V_AL], vrow[L.V_LEN],
            vrow[L.V_CX], vrow[L.V_CY], vrow[L.V_CN], rhs,
        )  # fmt: skip
    # - C_RB(nu) nu - C_A(nu_r) nu_r - D(nu_r) nu_r - g(eta)
    c_rb_times_nu(vrow[L.V_MASS], vrow[L.V_RG : L.V_RG + 3], vrow[L.V_IO : L.V_IO + 9], nu, crb)
    c_a_times_nu_r(vrow[L.V_MA : L.V_MA + 36], vrow[L.V_CAMASK : L.V_CAMASK + 36], nu_r, tmp6, ca)
    damping_times_nu_r(vrow[L.V_DL : L.V_DL + 36], vrow[L.V_DQ : L.V_DQ + 36], nu_r, dmp)
    if vrow[L.V_SURFACE] > 0.0:
        restoring_surface(
            rmat, x[2], vrow[L.V_W], vrow[L.V_RG : L.V_RG + 3], rho, g, vrow[L.V_AWP], vrow[L.V_GMT],
            vrow[L.V_GML], vrow[L.V_BOXDRAFT], gv,
        )  # fmt: skip
    else:
        restoring_underwater(rmat, vrow[L.V_W], vrow[L.V_B], vrow[L.V_RG : L.V_RG + 3], vrow[L.V_RB : L.V_RB + 3], gv)
    ma = L.V_MA
    for i in range(6):
        rhs[i] += (
            -crb[i] - ca[i] - dmp[i] - gv[i]
            + vrow[ma + 6 * i] * ncx + vrow[ma + 6 * i + 1] * ncy + vrow[ma + 6 * i + 2] * ncz
        )  # fmt: skip
    # nu_dot = M^-1 rhs
    mi = L.V_MINV
    for i in range(6):
        s = 0.0
        for j in range(6):
            s += vrow[mi + 6 * i + j] * rhs[j]
        xdot[7 + i] = s
    # kinematics: p_dot = R v, q_dot = 1/2 q (x) [0, w]
    for i in range(3):
        xdot[i] = rmat[3 * i] * nu[0] + rmat[3 * i + 1] * nu[1] + rmat[3 * i + 2] * nu[2]
    quat_derivative(q, p, qr, r, xdot[3:7])
