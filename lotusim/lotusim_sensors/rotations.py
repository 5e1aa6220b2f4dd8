"""Batched rotations by unit quaternions [x, y, z, w] (ROS order), for the sensor models.

q is the rotation map <- base_link (ENU <- FLU) as in FleetState and nav_msgs/Odometry: a vector v_flu in the
body frame is R(q) v_flu in `map`. These are plain rotations within the REP 103 frames (no NED/FRD here; that
conversion lives in lotusim_core.base.frames). Formula: Rodrigues' form v' = v + 2 w (u x v) + 2 u x (u x v), u = q_xyz
(Kuipers, Quaternions and Rotation Sequences, 1999).
"""

from __future__ import annotations

import numpy as np


def rotate(q_xyzw: np.ndarray, v: np.ndarray) -> np.ndarray:
    """R(q) v for N quaternions (N x 4) and N vectors (N x 3) (or one vector broadcast): body -> world."""
    u = q_xyzw[..., :3]
    w = q_xyzw[..., 3:4]
    t = 2.0 * np.cross(u, v)
    return v + w * t + np.cross(u, t)


def rotate_inverse(q_xyzw: np.ndarray, v: np.ndarray) -> np.ndarray:
    """R(q)^T v: world (`map` ENU) -> body (FLU)."""
    conj = q_xyzw * np.array([-1.0, -1.0, -1.0, 1.0])
    return rotate(conj, v)


def multiply(a_xyzw: np.ndarray, b_xyzw: np.ndarray) -> np.ndarray:
    """Hamilton product a * b of N x 4 quaternions [x, y, z, w]."""
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


def yaw_enu_rad(q_xyzw: np.ndarray) -> np.ndarray:
    """Heading of the body x axis in `map`: angle from east, counter-clockwise (rad, ENU yaw)."""
    x_world = rotate(q_xyzw, np.array([1.0, 0.0, 0.0]))
    return np.arctan2(x_world[..., 1], x_world[..., 0])
