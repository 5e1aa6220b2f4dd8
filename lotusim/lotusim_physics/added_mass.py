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

from lotusim_physics import layout as L
from lotusim_physics.damping import matvec6
from lotusim_physics.rigid_body import skew

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
def c_a_times_nu_r(prm, nu_r, a, out):
    """out[0:6] = (C_A(nu_r) o mask) nu_r for vessel row i of vp (M_A at V_MA, mask at V_CAMASK, row-major);
    a (6,) scratch for M_A nu_r."""
    mk = L.V_CAMASK
    mode = prm[L.V_CA_MODE]
    if mode == 2.0:  # "off"
        for j in range(6):
            out[j] = 0.0
        return
    matvec6(prm, L.V_MA, nu_r, a)
    if mode == 0.0:  # "full": C_A nu_r = [w x a1 ; v_r x a1 + w x a2]
        vx, vy, vz, wx, wy, wz = nu_r[0], nu_r[1], nu_r[2], nu_r[3], nu_r[4], nu_r[5]
        out[0] = wy * a[2] - wz * a[1]
        out[1] = wz * a[0] - wx * a[2]
        out[2] = wx * a[1] - wy * a[0]
        out[3] = vy * a[2] - vz * a[1] + wy * a[5] - wz * a[4]
        out[4] = vz * a[0] - vx * a[2] + wz * a[3] - wx * a[5]
        out[5] = vx * a[1] - vy * a[0] + wx * a[4] - wy * a[3]
        return
    # C_A blocks: upper-right and lower-left -S(a1), lower-right -S(a2);
    # -S(x) = [[0, x3, -x2], [-x3, 0, x1], [x2, -x1, 0]]
    for j in range(6):
        out[j] = 0.0
    for blk in range(3):  # 0: upper right (rows 0-2, cols 3-5), 1: lower left (rows 3-5, cols 0-2), 2: lower right
        if blk == 0:
            r0, c0, x1, x2, x3 = 0, 3, a[0], a[1], a[2]
        elif blk == 1:
            r0, c0, x1, x2, x3 = 3, 0, a[0], a[1], a[2]
        else:
            r0, c0, x1, x2, x3 = 3, 3, a[3], a[4], a[5]
        b0, b1, b2 = mk + 6 * r0 + c0, mk + 6 * (r0 + 1) + c0, mk + 6 * (r0 + 2) + c0
        out[r0 + 0] += prm[b0 + 1] * x3 * nu_r[c0 + 1] - prm[b0 + 2] * x2 * nu_r[c0 + 2]
        out[r0 + 1] += -prm[b1 + 0] * x3 * nu_r[c0 + 0] + prm[b1 + 2] * x1 * nu_r[c0 + 2]
        out[r0 + 2] += prm[b2 + 0] * x2 * nu_r[c0 + 0] - prm[b2 + 1] * x1 * nu_r[c0 + 1]
