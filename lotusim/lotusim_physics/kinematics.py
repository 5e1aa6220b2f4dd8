"""Kinematics with unit quaternions (Fossen 2021 sec. 2.2.2): no Euler-angle singularity at pitch +-90 deg.

    p_dot = R(q) v                 position of CO in NED from the body linear velocity v (FRD)
    q_dot = 1/2 q (x) [0, w]       q = q_ned_frd (w, x, y, z), w = [p, q, r] body angular velocity

R(q) = I + 2 eta S(eps) + 2 S(eps)^2 (Fossen 2021 eq. 2.72), q = [eta, eps]. The exponential map
q_{k+1} = q_k (x) exp(1/2 w h) integrates a constant body rate exactly (used by the semi-implicit Euler).
"""

from __future__ import annotations

import math

from numba import njit


@njit(cache=True)
def rotation_from_quat(q, r):
    """r (9,) row-major R(q) of the unit quaternion q (4,) = (w, x, y, z): body FRD -> NED."""
    w, x, y, z = q[0], q[1], q[2], q[3]
    r[0] = 1.0 - 2.0 * (y * y + z * z)
    r[1] = 2.0 * (x * y - z * w)
    r[2] = 2.0 * (x * z + y * w)
    r[3] = 2.0 * (x * y + z * w)
    r[4] = 1.0 - 2.0 * (x * x + z * z)
    r[5] = 2.0 * (y * z - x * w)
    r[6] = 2.0 * (x * z - y * w)
    r[7] = 2.0 * (y * z + x * w)
    r[8] = 1.0 - 2.0 * (x * x + y * y)


@njit(cache=True)
def quat_derivative(q, p, qr, r, out):
    """out (4,) = 1/2 q (x) [0, p, q, r] (the angular rate components are p, qr, r)."""
    w, x, y, z = q[0], q[1], q[2], q[3]
    out[0] = 0.5 * (-x * p - y * qr - z * r)
    out[1] = 0.5 * (w * p + y * r - z * qr)
    out[2] = 0.5 * (w * qr - x * r + z * p)
    out[3] = 0.5 * (w * r + x * qr - y * p)


@njit(cache=True)
def quat_normalize_inplace(q):
    """Normalise q (4,) in place (keeps the sign)."""
    n = math.sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3])
    if n > 0.0:
        for i in range(4):
            q[i] /= n


@njit(cache=True)
def quat_rotate_body_rate(q, p, qr, r, h):
    """q <- q (x) exp(1/2 [p, qr, r] h): exact attitude update for a body rate held constant over h."""
    wn = math.sqrt(p * p + qr * qr + r * r)
    half = 0.5 * wn * h
    if wn > 1e-300:
        s = math.sin(half) / wn
        dw, dx, dy, dz = math.cos(half), p * s, qr * s, r * s
    else:
        dw, dx, dy, dz = 1.0, 0.5 * p * h, 0.5 * qr * h, 0.5 * r * h
    w, x, y, z = q[0], q[1], q[2], q[3]
    q[0] = w * dw - x * dx - y * dy - z * dz
    q[1] = w * dx + x * dw + y * dz - z * dy
    q[2] = w * dy - x * dz + y * dw + z * dx
    q[3] = w * dz + x * dy - y * dx + z * dw
    quat_normalize_inplace(q)
