"""Batched rotations by unit quaternions, the one place for quaternion algebra on the NumPy side. One component
order inside: **x, y, z, w** (scalar last), the order of geometry_msgs/Quaternion and of scipy's `Rotation`
(scipy 1.17, pinned; the tests check every function against it).

A quaternion q is the rotation target <- source: v_target = R(q) v_source, e.g. q_enu_flu of a FleetState or
nav_msgs/Odometry (`map` <- base_link). The physics' scalar-first attitude q_ned_frd (w x y z, Fossen's order) is
converted only by lotusim_core.base.frames, whose quaternion helpers call these. The numba kernels of the physics
keep their own inline forms. Formulas: Rodrigues' form v' = v + 2 w (u x v) + 2 u x (u x v), u = q_xyz, the
Hamilton product and the rotation matrix [Kuipers1999]; the zyx Euler angles R = Rz(yaw) Ry(pitch) Rx(roll)
[Fossen2021] eq. 2.18.
"""

from __future__ import annotations

import math

import numpy as np


def cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a x b over the last axis (broadcast): np.cross's numbers, at about half its cost on small batches."""
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    return np.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)


def rotate(q_xyzw: np.ndarray, v: np.ndarray) -> np.ndarray:
    """R(q) v for N quaternions (N x 4) and N vectors (N x 3) (or one vector broadcast): source -> target."""
    u = q_xyzw[..., :3]
    w = q_xyzw[..., 3:4]
    t = 2.0 * cross(u, v)
    return v + w * t + cross(u, t)


def rotate_inverse(q_xyzw: np.ndarray, v: np.ndarray) -> np.ndarray:
    """R(q)^T v: target -> source (e.g. world `map` ENU -> body FLU)."""
    conj = q_xyzw * np.array([-1.0, -1.0, -1.0, 1.0])
    return rotate(conj, v)


def multiply(a_xyzw: np.ndarray, b_xyzw: np.ndarray) -> np.ndarray:
    """Hamilton product a * b of (N x) 4 quaternions [x, y, z, w] (the rotation b, then a)."""
    ax, ay, az, aw = np.moveaxis(a_xyzw, -1, 0)
    bx, by, bz, bw = np.moveaxis(b_xyzw, -1, 0)
    return np.stack(
        [
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
            aw * bw - ax * bx - ay * by - az * bz,
        ],
        axis=-1,
    )


def from_rotation_vector(phi: np.ndarray) -> np.ndarray:
    """Quaternions [x, y, z, w] of N rotation vectors (axis * angle, rad)."""
    angle = np.linalg.norm(phi, axis=-1, keepdims=True)
    half = 0.5 * angle
    scale = np.where(angle > 1e-12, np.sin(half) / np.where(angle > 1e-12, angle, 1.0), 0.5)
    return np.concatenate([phi * scale, np.cos(half)], axis=-1)


def about_axis_one(axis: int, angle_rad: float) -> tuple[float, float, float, float]:
    """q (x, y, z, w) of a turn by angle_rad about coordinate axis 0 (x), 1 (y) or 2 (z), in plain floats (e.g. a
    yaw about `map`'s z, a sensor's tilt about base_link's y)."""
    half = angle_rad / 2.0
    q = [0.0, 0.0, 0.0, math.cos(half)]
    q[axis] = math.sin(half)
    return q[0], q[1], q[2], q[3]


def matrix(q_xyzw: np.ndarray) -> np.ndarray:
    """Rotation matrices R(q) of unit quaternions [x, y, z, w], shape (..., 3, 3)."""
    x, y, z, w = q_xyzw[..., 0], q_xyzw[..., 1], q_xyzw[..., 2], q_xyzw[..., 3]
    r = np.empty(q_xyzw.shape[:-1] + (3, 3))
    r[..., 0, 0] = 1 - 2 * (y * y + z * z)
    r[..., 0, 1] = 2 * (x * y - z * w)
    r[..., 0, 2] = 2 * (x * z + y * w)
    r[..., 1, 0] = 2 * (x * y + z * w)
    r[..., 1, 1] = 1 - 2 * (x * x + z * z)
    r[..., 1, 2] = 2 * (y * z - x * w)
    r[..., 2, 0] = 2 * (x * z - y * w)
    r[..., 2, 1] = 2 * (y * z + x * w)
    r[..., 2, 2] = 1 - 2 * (x * x + y * y)
    return r


def from_euler_zyx(roll_rad, pitch_rad, yaw_rad) -> np.ndarray:
    """Quaternions [x, y, z, w] (not normalised: unit up to rounding) of R = Rz(yaw) Ry(pitch) Rx(roll), batched
    over broadcastable angles (rad)."""
    phi, theta, psi = (np.asarray(a, dtype=float) * 0.5 for a in (roll_rad, pitch_rad, yaw_rad))
    cr, sr, cp, sp, cy, sy = np.cos(phi), np.sin(phi), np.cos(theta), np.sin(theta), np.cos(psi), np.sin(psi)
    return np.stack(
        [
            sr * cp * cy - cr * sp * sy,
            cr * sp * cy + sr * cp * sy,
            cr * cp * sy - sr * sp * cy,
            cr * cp * cy + sr * sp * sy,
        ],
        axis=-1,
    )


def euler_zyx_matrix(rpy_rad: np.ndarray) -> np.ndarray:
    """R (N, 3, 3) = Rz(yaw) Ry(pitch) Rx(roll) of zyx Euler angles (N, 3) rad ([Fossen2021] eq. 2.18; in NED/FRD
    body -> NED of phi, theta, psi)."""
    phi, theta, psi = rpy_rad[:, 0], rpy_rad[:, 1], rpy_rad[:, 2]
    cf, sf, ct, st, cp, sp = np.cos(phi), np.sin(phi), np.cos(theta), np.sin(theta), np.cos(psi), np.sin(psi)
    r = np.empty((len(phi), 3, 3))
    r[:, 0, 0], r[:, 0, 1], r[:, 0, 2] = cp * ct, -sp * cf + cp * st * sf, sp * sf + cp * cf * st
    r[:, 1, 0], r[:, 1, 1], r[:, 1, 2] = sp * ct, cp * cf + sf * st * sp, -cp * sf + st * sp * cf
    r[:, 2, 0], r[:, 2, 1], r[:, 2, 2] = -st, ct * sf, ct * cf
    return r


def euler_zyx_matrix_one(roll_rad: float, pitch_rad: float, yaw_rad: float) -> np.ndarray:
    """euler_zyx_matrix of one set of angles, in plain floats (a controller's step): R (3, 3)."""
    cf, sf, ct, st = math.cos(roll_rad), math.sin(roll_rad), math.cos(pitch_rad), math.sin(pitch_rad)
    cp, sp = math.cos(yaw_rad), math.sin(yaw_rad)
    return np.array(
        [
            [cp * ct, -sp * cf + cp * st * sf, sp * sf + cp * cf * st],
            [sp * ct, cp * cf + sf * st * sp, -cp * sf + st * sp * cf],
            [-st, ct * sf, ct * cf],
        ]
    )


def euler_zyx(q_xyzw: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(roll, pitch, yaw) rad, three arrays (...), of quaternions [x, y, z, w] (normalised here; a zero one reads as
    the identity) in the zyx convention; pitch in [-pi/2, pi/2]."""
    x, y, z, w = (q_xyzw[..., k] for k in range(4))
    n = np.sqrt(x * x + y * y + z * z + w * w)
    n = np.where(n > 0.0, n, 1.0)
    x, y, z, w = x / n, y / n, z / n, w / n
    roll = np.arctan2(2.0 * (w * x + y * z), 1.0 - 2.0 * (x * x + y * y))
    pitch = -np.arcsin(np.clip(2.0 * (x * z - w * y), -1.0, 1.0))
    yaw = np.arctan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))
    return roll, pitch, yaw


def euler_zyx_one(x: float, y: float, z: float, w: float) -> tuple[float, float, float]:
    """euler_zyx of one quaternion given by its components, in plain floats (a controller's odometry callback)."""
    n = math.sqrt(x * x + y * y + z * z + w * w) or 1.0
    x, y, z, w = x / n, y / n, z / n, w / n
    roll = math.atan2(2.0 * (w * x + y * z), 1.0 - 2.0 * (x * x + y * y))
    pitch = -math.asin(min(max(2.0 * (x * z - w * y), -1.0), 1.0))
    yaw = math.atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))
    return roll, pitch, yaw


def yaw_enu_rad(q_xyzw: np.ndarray) -> np.ndarray:
    """Heading of the body x axis in `map`: angle from east, counter-clockwise (rad, ENU yaw)."""
    x_world = rotate(q_xyzw, np.array([1.0, 0.0, 0.0]))
    return np.arctan2(x_world[..., 1], x_world[..., 0])


def yaw_one(x: float, y: float, z: float, w: float) -> float:
    """The zyx yaw (rad) of one unit quaternion given by its components: atan2(2 (w z + x y), 1 - 2 (y^2 + z^2))."""
    return math.atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))
