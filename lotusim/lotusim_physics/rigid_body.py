"""Rigid-body kinetics: M_RB and C_RB(nu) of a vessel about its body origin CO (Fossen 2021, ch. 3).

    M_RB = [[ m I3,      -m S(r_g) ],          I_b = I_g - m S(r_g)^2   (parallel-axis theorem, sec. 3.3)
            [ m S(r_g),   I_b      ]]

C_RB(nu) in the linear-velocity-independent, skew-symmetric parametrisation of sec. 3.3 (Theorem 3.2):

    C_RB(nu) = [[ m S(w),          -m S(w) S(r_g) ],        nu = [v; w] = [u v w; p q r]
                [ m S(r_g) S(w),   -S(I_b w)      ]]

so that  C_RB(nu) nu = [ m w x v - m w x (r_g x w) ;  m r_g x (w x v) + w x (I_b w) ].
Being independent of the linear velocity v, it satisfies M_RB nu_dot + C_RB(nu) nu
= M_RB nu_r_dot + C_RB(nu_r) nu_r for an irrotational constant current (Fossen 2011 Property 8.1; 2021
sec. 10.3 on ocean currents), which is
what lets the current enter as a relative velocity. Skew-symmetry (nu' C nu = 0) means C_RB does no work.

S(a) is the cross-product matrix, S(a) b = a x b (Fossen's Smtrx).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from lotusim_core.base.fossen import inertia_about_co, m_rb, skew
from lotusim_physics import layout as L

__all__ = ["c_rb", "c_rb_times_nu", "inertia_about_co", "m_rb", "skew"]  # M_RB and S(a): lotusim_core.base.fossen


def c_rb(mass_kg: float, inertia_cg_kgm2, r_g_frd_m, nu) -> np.ndarray:
    """C_RB(nu) (6x6) in the linear-velocity-independent form above (reference NumPy implementation)."""
    nu = np.asarray(nu, dtype=float)
    w = nu[3:]
    s_w = skew(w)
    s_rg = skew(r_g_frd_m)
    i_b = inertia_about_co(inertia_cg_kgm2, mass_kg, r_g_frd_m)
    out = np.zeros((6, 6))
    out[:3, :3] = mass_kg * s_w
    out[:3, 3:] = -mass_kg * s_w @ s_rg
    out[3:, :3] = mass_kg * s_rg @ s_w
    out[3:, 3:] = -skew(i_b @ w)
    return out


@njit(cache=True, inline="always")
def cross(ax, ay, az, bx, by, bz):
    """a x b of two 3-vectors given by components."""
    return ay * bz - az * by, az * bx - ax * bz, ax * by - ay * bx


@njit(cache=True, inline="always")
def c_rb_times_nu(prm, u, v, w, p, q, r):
    """C_RB(nu) nu (6-tuple, see module docstring) for the packed vessel parameters prm (layout.V_*).

    (Scalars in, tuple out: the compiled step keeps the whole derivative in registers.)"""
    m = prm[L.V_MASS]
    gx, gy, gz = prm[L.V_RG], prm[L.V_RG + 1], prm[L.V_RG + 2]
    # m w x v
    f1, f2, f3 = cross(p, q, r, u, v, w)
    # - m w x (r_g x w)
    g1, g2, g3 = cross(gx, gy, gz, p, q, r)
    h1, h2, h3 = cross(p, q, r, g1, g2, g3)
    # m r_g x (w x v) + w x (I_b w)
    k1, k2, k3 = cross(gx, gy, gz, f1, f2, f3)
    o = L.V_IO
    i1 = prm[o] * p + prm[o + 1] * q + prm[o + 2] * r
    i2 = prm[o + 3] * p + prm[o + 4] * q + prm[o + 5] * r
    i3 = prm[o + 6] * p + prm[o + 7] * q + prm[o + 8] * r
    l1, l2, l3 = cross(p, q, r, i1, i2, i3)
    return m * (f1 - h1), m * (f2 - h2), m * (f3 - h3), m * k1 + l1, m * k2 + l2, m * k3 + l3
