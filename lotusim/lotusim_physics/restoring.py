"""Restoring forces g(eta) from gravity and buoyancy, written with the rotation matrix of the unit quaternion
(no Euler angles: valid at any attitude). g(eta) enters the equation of motion on the left-hand side.

Underwater vehicle (Fossen 2021 sec. 4.1): weight W = m g at r_g, buoyancy B = rho g V at r_b, with the
world "down" axis seen from the body  k = R(q)^T e_z  (third row of R):

    f_g = W k,  f_b = -B k,   g(eta) = -[ f_g + f_b ;  r_g x f_g + r_b x f_b ]

For q = Euler(phi, theta, psi) this is exactly Fossen's eq. 4.6 (k = [-s theta, c theta s phi, c theta c phi]).
LRAUV Sim eq. 6 ([Player2023]) is its pitch row: tau = rho g V BG sin(theta) for W = B.

Surface crossing of an underwater vehicle: a hull of vertical extent h (hull_height_m, e.g. the diameter of a
torpedo) centred on the CB at depth z_b = z + k . r_b is submerged by the fraction eta = (z_b + h/2) / h of its
height (clipped to [0, 1]). Its buoyancy is that of the submerged part of a horizontal circular cylinder,

    B(z_b) = rho g V f(eta),   f = (acos(c) - c sqrt(1 - c^2)) / pi,   c = 1 - 2 eta      (circular segment area)

applied at r_b (the buoyancy moment scales with f as well), so a positively buoyant vehicle floats with f = W / B
and loses all buoyancy in the air. The shift of the centre of buoyancy within the segment, the waterplane
(metacentric) restoring and the loss of added mass and damping above the water are not modelled: a surfaced AUV
keeps its submerged righting W BG, scaled by f. h = 0 keeps the full buoyancy at any depth.

Surface vessel (Fossen 2021 sec. 4.2, metacentric stability): the buoyancy follows the immersion of a hull
with waterplane area A_wp, B(z) = rho g A_wp max(0, z + d_box), d_box = m / (rho A_wp), so that B = W with the
body origin CO on the waterline (z = 0) and B = 0 once the hull is out of the water (no buoyancy above the
waterline). The righting moments use the metacentric heights GM_T, GM_L and vanish with B as well:

    K = -B GM_T k_y k_z ,   M = +B GM_L k_x k_z      (= -rho g nabla GM_T sin(phi) cos(phi) cos^2(theta) and
                                                      -rho g nabla GM_L sin(theta) cos(theta) cos(phi))
    g(eta) = -[ (W - B) k ;  r_g x (W - B) k + [K, M, 0] ]
"""

from __future__ import annotations

import math

from numba import njit

from lotusim_physics import layout as L


@njit(cache=True, inline="always")
def submerged_fraction(eta):
    """Submerged area fraction f of a circle immersed to the fraction eta of its diameter (0 dry, 1 submerged)."""
    if eta <= 0.0:
        return 0.0
    if eta >= 1.0:
        return 1.0
    c = 1.0 - 2.0 * eta
    return (math.acos(c) - c * math.sqrt(1.0 - c * c)) / math.pi


@njit(cache=True, inline="always")
def restoring_underwater(prm, z_ned_m, kx, ky, kz):
    """g(eta) (6-tuple) of an underwater vehicle at depth z_ned_m of CO (m); (kx, ky, kz) = R(q)^T e_z; W, B, r_g,
    r_b, hull height from prm. Buoyancy scaled by the submerged fraction near the surface (module docstring)."""
    weight, buoyancy = prm[L.V_W], prm[L.V_B]
    gx, gy, gz = prm[L.V_RG], prm[L.V_RG + 1], prm[L.V_RG + 2]
    bx, by, bz = prm[L.V_RB], prm[L.V_RB + 1], prm[L.V_RB + 2]
    height = prm[L.V_HULLH]
    if height > 0.0:
        z_b = z_ned_m + kx * bx + ky * by + kz * bz
        if z_b < 0.5 * height:
            buoyancy *= submerged_fraction((z_b + 0.5 * height) / height)
    fgx, fgy, fgz = weight * kx, weight * ky, weight * kz
    fbx, fby, fbz = -buoyancy * kx, -buoyancy * ky, -buoyancy * kz
    return (
        -(fgx + fbx),
        -(fgy + fby),
        -(fgz + fbz),
        -((gy * fgz - gz * fgy) + (by * fbz - bz * fby)),
        -((gz * fgx - gx * fgz) + (bz * fbx - bx * fbz)),
        -((gx * fgy - gy * fgx) + (bx * fby - by * fbx)),
    )


@njit(cache=True, inline="always")
def surface_buoyancy(z_ned_m, rho, g, awp, box_draft):
    """B(z) = rho g A_wp max(0, z + d_box), N: zero when the hull is above the water."""
    immersion = z_ned_m + box_draft
    if immersion <= 0.0:
        return 0.0
    return rho * g * awp * immersion


@njit(cache=True, inline="always")
def restoring_surface(prm, z_ned_m, kx, ky, kz, rho, g, nx, ny, nz):
    """g(eta) (6-tuple) of a surface vessel (waterplane hydrostatics, see module docstring). In waves z_ned_m is
    the immersion below the mean sea over the hull (z_CO + η̄) and (nx, ny, nz) the sea's downward normal seen
    from the body, R(q)^T n: the righting moments align the hull with the local sea (lotusim_physics.
    sea_over_hulls); in still water n = k and z_ned_m = z_CO."""
    buoyancy = surface_buoyancy(z_ned_m, rho, g, prm[L.V_AWP], prm[L.V_BOXDRAFT])
    net = prm[L.V_W] - buoyancy
    gx, gy, gz = prm[L.V_RG], prm[L.V_RG + 1], prm[L.V_RG + 2]
    fx, fy, fz = net * kx, net * ky, net * kz
    k_roll = -buoyancy * prm[L.V_GMT] * ny * nz
    m_pitch = buoyancy * prm[L.V_GML] * nx * nz
    return (
        -fx,
        -fy,
        -fz,
        -((gy * fz - gz * fy) + k_roll),
        -((gz * fx - gx * fz) + m_pitch),
        -(gx * fy - gy * fx),
    )
