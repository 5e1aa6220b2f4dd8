"""Kinematics with unit quaternions (Fossen 2021 sec. 2.2.2): no Euler-angle singularity at pitch +-90 deg.

    p_dot = R(q) v                 position of CO in NED from the body linear velocity v (FRD)
    q_dot = 1/2 q (x) [0, w]       q = q_ned_frd (w, x, y, z), w = [p, q, r] body angular velocity

R(q) = I + 2 eta S(eps) + 2 S(eps)^2 (Fossen 2021 eq. 2.72), q = [eta, eps]. The exponential map
q_{k+1} = q_k (x) exp(1/2 w h) integrates a constant body rate exactly (used by the semi-implicit Euler).
"""

from __future__ import annotations

import math

from numba import njit


@njit(cache=True, inline="always")
def rotation_from_quat(w, x, y, z):
    """R(q) of the unit quaternion (w, x, y, z) as a row-major 9-tuple: body FRD -> NED."""
    return (
        1.0 - 2.0 * (y * y + z * z),
        2.0 * (x * y - z * w),
        2.0 * (x * z + y * w),
        2.0 * (x * y + z * w),
        1.0 - 2.0 * (x * x + z * z),
        2.0 * (y * z - x * w),
        2.0 * (x * z - y * w),
        2.0 * (y * z + x * w),
        1.0 - 2.0 * (x * x + y * y),
    )


@njit(cache=True, inline="always")
def quat_derivative(w, x, y, z, p, q, r):
    """1/2 q (x) [0, p, q, r] as a 4-tuple."""
    return (
        0.5 * (-x * p - y * q - z * r),
        0.5 * (w * p + y * r - z * q),
        0.5 * (w * q - x * r + z * p),
        0.5 * (w * r + x * q - y * p),
    )


@njit(cache=True, inline="always")
def quat_normalize_inplace(x, o):
    """Normalise the quaternion x[o:o+4] in place (keeps the sign)."""
    n = math.sqrt(x[o] * x[o] + x[o + 1] * x[o + 1] + x[o + 2] * x[o + 2] + x[o + 3] * x[o + 3])
    if n > 0.0:
        for k in range(4):
            x[o + k] /= n


@njit(cache=True, inline="always")
def quat_rotate_body_rate(x, o, p, qr, r, h):
    """x[o:o+4] <- q (x) exp(1/2 [p, qr, r] h): exact attitude update for a body rate held constant over h."""
    wn = math.sqrt(p * p + qr * qr + r * r)
    half = 0.5 * wn * h
    if wn > 1e-300:
        s = math.sin(half) / wn
        dw, dx, dy, dz = math.cos(half), p * s, qr * s, r * s
    else:
        dw, dx, dy, dz = 1.0, 0.5 * p * h, 0.5 * qr * h, 0.5 * r * h
    w, qx, y, z = x[o], x[o + 1], x[o + 2], x[o + 3]
    x[o] = w * dw - qx * dx - y * dy - z * dz
    x[o + 1] = w * dx + qx * dw + y * dz - z * dy
    x[o + 2] = w * dy - qx * dz + y * dw + z * dx
    x[o + 3] = w * dz + qx * dy - y * dx + z * dw
    quat_normalize_inplace(x, o)
