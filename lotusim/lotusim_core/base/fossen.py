"""Fossen's rigid-body matrices, NumPy, one definition for the catalogue's checks and the physics ([Fossen2021]).

    S(a) b = a x b                                   the cross-product matrix (Fossen's Smtrx; ch. 2)
    I_b = I_g - m S(r_g)^2                           inertia about the body origin CO (parallel-axis theorem)
    M_RB = [[ m I3,      -m S(r_g) ],                the rigid-body mass matrix about CO (sec. 3.3)
            [ m S(r_g),   I_b      ]]

Body frame FRD, r_g the centre of gravity from CO in metres, I_g the inertia about the CG in kg m^2. C_RB and the
batched kernels are in lotusim_physics.rigid_body.
"""

from __future__ import annotations

import numpy as np


def skew(a) -> np.ndarray:
    """S(a): the 3x3 skew-symmetric matrix with S(a) b = a x b."""
    a1, a2, a3 = np.asarray(a, dtype=float)
    return np.array([[0.0, -a3, a2], [a3, 0.0, -a1], [-a2, a1, 0.0]])


def inertia_about_co(inertia_cg_kgm2, mass_kg: float, r_g_frd_m) -> np.ndarray:
    """I_b = I_g - m S(r_g)^2: inertia about CO from the inertia about CG (parallel-axis theorem), kg m^2."""
    s = skew(r_g_frd_m)
    return np.asarray(inertia_cg_kgm2, dtype=float) - mass_kg * s @ s


def m_rb(mass_kg: float, inertia_cg_kgm2, r_g_frd_m) -> np.ndarray:
    """M_RB about CO (6x6): symmetric positive definite for m > 0 and I_g positive definite."""
    s = skew(r_g_frd_m)
    out = np.zeros((6, 6))
    out[:3, :3] = mass_kg * np.eye(3)
    out[:3, 3:] = -mass_kg * s
    out[3:, :3] = mass_kg * s
    out[3:, 3:] = inertia_about_co(inertia_cg_kgm2, mass_kg, r_g_frd_m)
    return out
