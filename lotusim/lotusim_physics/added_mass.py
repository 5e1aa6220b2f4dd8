"""Hydrodynamic added mass: M_A and the added-mass Coriolis-centripetal matrix C_A(nu_r) (Fossen 2021, sec. 6.3).

For a symmetric M_A = [[A11, A12], [A21, A22]] and the relative velocity nu_r = [v_r; w]:

    C_A(nu_r) = [[ 0_3x3,                 -S(A11 v_r + A12 w) ],
                 [ -S(A11 v_r + A12 w),   -S(A21 v_r + A22 w) ]]

which is skew-symmetric (it does no work) and contains the Munk moment: for a slender body moving with
u and w, the pitch entry gives (Z_wdot - X_udot) u w (destabilising). The physics never drops a term
silently: a vehicle file may choose (coriolis_added_mass)
  - "full":    the whole matrix (default);
  - "no_munk": the entries (row, col) (0,4) (4,0) (2,4) (4,2) (0,5) (5,0) (1,5) (5,1) removed in skew pairs,
               as Fossen's Python Vehicle Simulator does for the REMUS 100 ("can destabilise the model if
               quadratic rotational damping is missing"), which keeps C_A skew-symmetric;
  - "off":     C_A = 0 (as LRAUV Sim's enable_coriolis=false),
and must say why in coriolis_note. The choice becomes the element mask `c_a_mask(mode)` applied in the kernel.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from lotusim_core.base.fossen import skew
from lotusim_physics import layout as L
from lotusim_physics.damping import matvec6

MUNK_ENTRIES = ((0, 4), (4, 0), (2, 4), (4, 2), (0, 5), (5, 0), (1, 5), (5, 1))


def c_a(added_mass, nu_r) -> np.ndarray:
    """C_A(nu_r) (6x6), full form above (reference NumPy implementation)."""
    ma = np.asarray(added_mass, dtype=float)
    a = ma @ np.asarray(nu_r, dtype=float)
    out = np.zeros((6, 6))
    out[:3, 3:] = -skew(a[:3])
    out[3:, :3] = -skew(a[:3])
    out[3:, 3:] = -skew(a[3:])
    return out


def c_a_mask(mode: str) -> np.ndarray:
    """Element mask (6x6 of 0/1) of C_A for a vehicle file's coriolis_added_mass mode."""
    if mode == "full":
        return np.ones((6, 6))
    if mode == "off":
        return np.zeros((6, 6))
    if mode == "no_munk":
        mask = np.ones((6, 6))
        for i, j in MUNK_ENTRIES:
            mask[i, j] = 0.0
        return mask
    raise ValueError(f"coriolis_added_mass: expected 'full', 'no_munk' or 'off', got {mode!r}")


@njit(cache=True, inline="always")
def c_a_times_nu_r(prm, u, v, w, p, q, r):
    """(C_A(nu_r) o mask) nu_r (6-tuple) for the packed vessel parameters prm; nu_r = (u, v, w, p, q, r).

    With a = M_A nu_r = [a1; a2]:  C_A nu_r = [ w x a1 ;  v_r x a1 + w x a2 ]  ("full"); the masked form
    ("no_munk") weighs each of the 18 non-zero entries of C_A with its mask element; "off" returns zeros."""
    mode = prm[L.V_CA_MODE]
    if mode == 2.0:  # "off"
        return 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
    a0, a1, a2, a3, a4, a5 = matvec6(prm, L.V_MA, u, v, w, p, q, r)
    if mode == 0.0:  # "full"
        return (
            q * a2 - r * a1,
            r * a0 - p * a2,
            p * a1 - q * a0,
            v * a2 - w * a1 + q * a5 - r * a4,
            w * a0 - u * a2 + r * a3 - p * a5,
            u * a1 - v * a0 + p * a4 - q * a3,
        )
    # masked: C_A = [[0, -S(a1)], [-S(a1), -S(a2)]], -S(x) = [[0, x3, -x2], [-x3, 0, x1], [x2, -x1, 0]];
    # entry (i, j) weighted by mask[6 i + j]
    mk = L.V_CAMASK
    return (
        prm[mk + 4] * a2 * q - prm[mk + 5] * a1 * r,
        -prm[mk + 9] * a2 * p + prm[mk + 11] * a0 * r,
        prm[mk + 15] * a1 * p - prm[mk + 16] * a0 * q,
        prm[mk + 19] * a2 * v - prm[mk + 20] * a1 * w + prm[mk + 22] * a5 * q - prm[mk + 23] * a4 * r,
        -prm[mk + 24] * a2 * u + prm[mk + 26] * a0 * w - prm[mk + 27] * a5 * p + prm[mk + 29] * a3 * r,
        prm[mk + 30] * a1 * u - prm[mk + 31] * a0 * v + prm[mk + 33] * a4 * p - prm[mk + 34] * a3 * q,
    )
