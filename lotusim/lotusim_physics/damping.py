"""Hydrodynamic damping D(nu_r) nu_r = D_lin nu_r + D_quad (|nu_r| o nu_r) (Fossen 2021 sec. 6.4 / 7.1;
LRAUV Sim eq. 3 of 002_1bc233a69a6533ee.txt for the diagonal case).

D_lin and D_quad are 6x6 matrices of positive magnitudes (D_lin = -[X_u ...], D_quad = -[X_u|u| ...]); with
the diagonal sets of the catalogue this is the familiar diag(X_u + X_u|u| |u|, ...). The force on the vehicle is
-D(nu_r) nu_r: it enters the equation of motion on the left-hand side.
"""

from __future__ import annotations

from numba import njit

from lotusim_physics import layout as L


@njit(cache=True, inline="always")
def matvec6(prm, off, x, out):
    """out[0:6] = A x for the row-major 6x6 matrix A stored at prm[off : off + 36]."""
    for j in range(6):
        s = 0.0
        for k in range(6):
            s += prm[off + 6 * j + k] * x[k]
        out[j] = s


@njit(cache=True, inline="always")
def damping_times_nu_r(prm, nu_r, tmp, out):
    """out[0:6] = D_lin nu_r + D_quad (|nu_r| o nu_r) for the packed vessel parameters prm; tmp (6,) scratch."""
    for j in range(6):
        tmp[j] = abs(nu_r[j]) * nu_r[j]
    dl, dq = L.V_DL, L.V_DQ
    for j in range(6):
        s = 0.0
        for k in range(6):
            s += prm[dl + 6 * j + k] * nu_r[k] + prm[dq + 6 * j + k] * tmp[k]
        out[j] = s
