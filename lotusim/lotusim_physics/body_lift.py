"""Hull lift of a slender body of revolution (Prestero 2001, "Verification of a six-degree of freedom simulation
model for the REMUS AUV", sec. 3.5.4 body lift, after [Hoerner1965]; cf. the lift-drag term of
Fossen's PVS remus100 [PVS2025], and Fossen 2021 sec. 8.4).

A hull moving through the water with an angle of attack alpha ~ w_r / u_r (or sideslip beta ~ v_r / u_r) feels
a lift against the cross flow, proportional to the forward speed, concentrated at the hull's centre of pressure
x_cp on the body x axis (aft of the centre of buoyancy for a torpedo hull: it opposes the Munk moment):

    Y_l = -1/2 rho d^2 c_yd |u_r| v_r,   Z_l = -1/2 rho d^2 c_yd |u_r| w_r
    M_l = -x_cp Z_l,                     N_l = x_cp Y_l          (r_cp x F with r_cp = [x_cp, 0, 0])

i.e. Prestero's Y_uvl = Z_uwl = -1/2 rho d^2 c_yd and M_uwl = -N_uvl = -1/2 rho d^2 c_yd x_cp, with |u_r| in
place of u_r so that the lift opposes the cross flow going astern as well (Prestero models forward motion
only). The quadratic cross-flow drag (Hoerner; Prestero's Y_v|v|, Z_w|w|, M_w|w|) is part of D_quad (damping.py).
The packed parameters are k = 1/2 d^2 c_yd (prm[V_BL_K], m^2) and x_cp (prm[V_BL_X], m).
"""

from __future__ import annotations

from numba import njit

from lotusim_physics import layout as L


@njit(cache=True, inline="always")
def body_lift_wrench(prm, rho, u, v, w):
    """Hull-lift wrench (6-tuple, N and N m, FRD at CO) for the relative velocity (u, v, w) (m/s)."""
    k = rho * prm[L.V_BL_K] * abs(u)
    fy, fz = -k * v, -k * w
    x_cp = prm[L.V_BL_X]
    return 0.0, fy, fz, 0.0, -x_cp * fz, x_cp * fy
