"""Hydrodynamic damping D(nu_r) nu_r = D_lin nu_r + D_quad (|nu_r| o nu_r) (Fossen 2021 sec. 6.4 / 7.1;
LRAUV Sim eq. 3 of 002_1bc233a69a6533ee.txt for the diagonal case).

D_lin and D_quad are 6x6 matrices of positive magnitudes (D_lin = -[X_u ...], D_quad = -[X_u|u| ...]); with
the diagonal sets of the catalogue this is the familiar diag(X_u + X_u|u| |u|, ...). The force on the vehicle is
-D(nu_r) nu_r: it enters the equation of motion on the left-hand side.
"""

from __future__ import annotations

from numba import njit


@njit(cache=True)
def damping_times_nu_r(dl, dq, nu_r, out):
    """out[0:6] = D_lin nu_r + D_quad (|nu_r| o nu_r); dl, dq (36,) row-major."""
    for i in range(6):
        s = 0.0
        for j in range(6):
            x = nu_r[j]
            s += dl[6 * i + j] * x + dq[6 * i + j] * abs(x) * x
        out[i] = s
