"""Hydrodynamic damping D(nu_r) nu_r = D_lin nu_r + D_quad (|nu_r| o nu_r) (Fossen 2021 sec. 6.4 / 7.1;
LRAUV Sim eq. 3 of [Player2023] for the diagonal case).

D_lin and D_quad are 6x6 matrices of positive magnitudes (D_lin = -[X_u ...], D_quad = -[X_u|u| ...]); with
the diagonal sets of the catalogue this is the familiar diag(X_u + X_u|u| |u|, ...). The force on the vehicle is
-D(nu_r) nu_r: it enters the equation of motion on the left-hand side.
"""

from __future__ import annotations

from numba import njit

from lotusim_physics import layout as L


@njit(cache=True, inline="always")
def dot6(prm, o, a0, a1, a2, a3, a4, a5):
    """prm[o : o + 6] . a"""
    return prm[o] * a0 + prm[o + 1] * a1 + prm[o + 2] * a2 + prm[o + 3] * a3 + prm[o + 4] * a4 + prm[o + 5] * a5


@njit(cache=True, inline="always")
def matvec6(prm, o, a0, a1, a2, a3, a4, a5):
    """A a (6-tuple) for the row-major 6x6 matrix A stored at prm[o : o + 36] (diagonal fast path when the
    vessel's matrices are all diagonal, prm[V_DIAG])."""
    if prm[L.V_DIAG] > 0.0:
        return prm[o] * a0, prm[o + 7] * a1, prm[o + 14] * a2, prm[o + 21] * a3, prm[o + 28] * a4, prm[o + 35] * a5
    return (
        dot6(prm, o, a0, a1, a2, a3, a4, a5),
        dot6(prm, o + 6, a0, a1, a2, a3, a4, a5),
        dot6(prm, o + 12, a0, a1, a2, a3, a4, a5),
        dot6(prm, o + 18, a0, a1, a2, a3, a4, a5),
        dot6(prm, o + 24, a0, a1, a2, a3, a4, a5),
        dot6(prm, o + 30, a0, a1, a2, a3, a4, a5),
    )


@njit(cache=True, inline="always")
def damping_times_nu_r(prm, u, v, w, p, q, r):
    """D_lin nu_r + D_quad (|nu_r| o nu_r) (6-tuple) for the packed vessel parameters prm; nu_r = (u ... r)."""
    l0, l1, l2, l3, l4, l5 = matvec6(prm, L.V_DL, u, v, w, p, q, r)
    q0, q1, q2, q3, q4, q5 = matvec6(
        prm, L.V_DQ, abs(u) * u, abs(v) * v, abs(w) * w, abs(p) * p, abs(q) * q, abs(r) * r
    )
    return l0 + q0, l1 + q1, l2 + q2, l3 + q3, l4 + q4, l5 + q5
