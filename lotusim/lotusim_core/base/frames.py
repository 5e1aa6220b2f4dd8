"""The one place where lotusim converts between the physics frames (NED world, FRD body) and the ROS frames
(REP 103 / REP 105: ENU world `map`, FLU body `base_link`).

Conventions
-----------
- Physics (Fossen 2021, ch. 2): world NED (x north, y east, z down), body FRD (x forward, y starboard,
  z down). Attitude is the unit quaternion ``q_ned_frd`` stored **w, x, y, z** (scalar first), the rotation
  that takes body FRD vectors into NED: ``v_ned = R(q_ned_frd) @ v_frd``.
- ROS: world ENU (x east, y north, z up), body FLU (x forward, y left, z up). Attitude is ``q_enu_flu`` stored
  **x, y, z, w** (scalar last, geometry_msgs/Quaternion order), ``v_enu = R(q_enu_flu) @ v_flu``.
- The frame changes are fixed proper rotations: ``R_enu_ned`` swaps x/y and flips z (a 180 deg turn about the
  axis (1, 1, 0)/sqrt 2), ``R_frd_flu = diag(1, -1, -1)`` (180 deg about x). Hence
  ``q_enu_flu = q_enu_ned (x) q_ned_frd (x) q_frd_flu``. Both ``q`` and ``-q`` are the same attitude; results are
  returned with a non-negative scalar part.
- Every function is batched: inputs may be a single vector (shape (3,), (4,), (6,)) or N of them ((N, 3), ...);
  outputs have the same leading shape. Inputs are never modified.

The quaternion algebra itself (Hamilton product, rotation matrix, zyx Euler angles: Fossen 2021 sec. 2.2.2) is
lotusim_core.base.rotations, in x y z w order; the scalar-first helpers here reorder and call it.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from lotusim_core.base import rotations

_S = np.sqrt(0.5)
# q_enu_ned: rotation taking NED vectors into ENU (w, x, y, z)
Q_ENU_NED_WXYZ = np.array([0.0, _S, _S, 0.0])
# q_frd_flu: rotation taking FLU vectors into FRD (w, x, y, z)
Q_FRD_FLU_WXYZ = np.array([0.0, 1.0, 0.0, 0.0])
_SWAP_XY = [1, 0, 2]
_XYZW = [1, 2, 3, 0]  # indices of a scalar-first quaternion in x y z w order
_WXYZ = [3, 0, 1, 2]  # and of a scalar-last one in w x y z order
_FLIP_Z = np.array([1.0, 1.0, -1.0])


def _arr(values, last: int, what: str) -> np.ndarray:
    a = np.asarray(values, dtype=float)
    if a.shape[-1:] != (last,):
        raise ValueError(f"{what}: expected shape (..., {last}), got {a.shape}")
    return a


# --- positions and vectors ---------------------------------------------------------------------------------


def ned_to_enu(p_ned) -> np.ndarray:
    """World vector NED -> ENU: (n, e, d) -> (e, n, -d). Positions (m), velocities (m/s), forces alike."""
    p = _arr(p_ned, 3, "ned_to_enu")
    return p[..., _SWAP_XY] * _FLIP_Z


def enu_to_ned(p_enu) -> np.ndarray:
    """World vector ENU -> NED: (e, n, u) -> (n, e, -u)."""
    p = _arr(p_enu, 3, "enu_to_ned")
    return p[..., _SWAP_XY] * _FLIP_Z


def frd_to_flu(v_frd) -> np.ndarray:
    """Body vector FRD -> FLU: (x, y, z) -> (x, -y, -z). Linear or angular velocity, force or moment."""
    v = _arr(v_frd, 3, "frd_to_flu")
    return v * np.array([1.0, -1.0, -1.0])


def flu_to_frd(v_flu) -> np.ndarray:
    """Body vector FLU -> FRD: (x, y, z) -> (x, -y, -z)."""
    v = _arr(v_flu, 3, "flu_to_frd")
    return v * np.array([1.0, -1.0, -1.0])


def twist_frd_to_flu(nu_frd) -> np.ndarray:
    """Generalised body velocity/acceleration/wrench [u, v, w, p, q, r] FRD -> [x, y, z, roll, pitch, yaw] FLU."""
    nu = _arr(nu_frd, 6, "twist_frd_to_flu")
    return nu * np.array([1.0, -1.0, -1.0, 1.0, -1.0, -1.0])


def twist_flu_to_frd(twist_flu) -> np.ndarray:
    """Generalised body velocity/acceleration/wrench FLU -> FRD (the same sign flip)."""
    tw = _arr(twist_flu, 6, "twist_flu_to_frd")
    return tw * np.array([1.0, -1.0, -1.0, 1.0, -1.0, -1.0])


# --- quaternions ---------------------------------------------------------------------------------------------


def quat_multiply(a_wxyz, b_wxyz) -> np.ndarray:
    """Hamilton product a (x) b of scalar-first quaternions (batched)."""
    a = _arr(a_wxyz, 4, "quat_multiply a")
    b = _arr(b_wxyz, 4, "quat_multiply b")
    return np.ascontiguousarray(rotations.multiply(a[..., _XYZW], b[..., _XYZW])[..., _WXYZ])


def quat_normalize(q) -> np.ndarray:
    """Unit quaternion with non-negative scalar part (q and -q are the same attitude). Raises on zero norm."""
    q = _arr(q, 4, "quat_normalize")
    norm = np.sqrt(np.einsum("...i,...i->...", q, q))[..., None]
    # one reduction checks both (a NaN compares false; the norm of an infinite q is inf): this runs for every
    # vessel at every published step
    if norm.size and not (norm.min() >= 1e-12 and norm.max() < np.inf):
        raise ValueError(f"quaternion must be finite and non-zero, got {q.tolist()}")
    return q * (np.where(q[..., :1] < 0.0, -1.0, 1.0) / norm)


def unit_quaternion_of_input(q: tuple[float, float, float, float]) -> tuple[float, float, float, float] | None:
    """The unit quaternion of a user's finite components q (any order, kept; sign kept), or None if its norm is
    below 1e-9: the boundary check of an orientation given in a command. Scaled by its largest
    component first, so components near the float range (1e308: their squares overflow) normalise too."""
    scale = max(abs(c) for c in q)
    if scale == 0.0:
        return None
    scaled = [c / scale for c in q]
    norm = math.hypot(*scaled)
    if norm * scale < 1e-9:
        return None
    return tuple(c / norm for c in scaled)


def wxyz_to_xyzw(q_wxyz) -> np.ndarray:
    """Reorder scalar-first (w, x, y, z) -> ROS scalar-last (x, y, z, w)."""
    q = _arr(q_wxyz, 4, "wxyz_to_xyzw")
    return q[..., _XYZW]


def xyzw_to_wxyz(q_xyzw) -> np.ndarray:
    """Reorder ROS scalar-last (x, y, z, w) -> scalar-first (w, x, y, z)."""
    q = _arr(q_xyzw, 4, "xyzw_to_wxyz")
    return q[..., _WXYZ]


def q_ned_frd_to_q_enu_flu(q_ned_frd_wxyz) -> np.ndarray:
    """Physics attitude (NED<-FRD, w x y z) -> ROS attitude (ENU<-FLU, **x y z w**)."""
    q = _arr(q_ned_frd_wxyz, 4, "q_ned_frd_to_q_enu_flu") @ _NED_FRD_TO_ENU_FLU.T
    # light normalisation (this runs for the whole fleet at every published step): the physics keeps its
    # quaternions finite and unit, so quat_normalize's input checks are skipped here
    norm = np.sqrt(np.einsum("...i,...i->...", q, q))[..., None]
    q = q * (np.where(q[..., :1] < 0.0, -1.0, 1.0) / norm)
    return q[..., [1, 2, 3, 0]]


def q_enu_flu_to_q_ned_frd(q_enu_flu_xyzw) -> np.ndarray:
    """ROS attitude (ENU<-FLU, x y z w) -> physics attitude (NED<-FRD, **w x y z**).

    Uses q_ned_enu = conj(q_enu_ned) and q_flu_frd = conj(q_frd_flu); both are 180 deg turns, i.e. their own
    inverse up to sign."""
    q = xyzw_to_wxyz(q_enu_flu_xyzw)
    q = quat_multiply(quat_multiply(Q_ENU_NED_WXYZ * [1, -1, -1, -1], q), Q_FRD_FLU_WXYZ * [1, -1, -1, -1])
    return quat_normalize(q)


def rotation_matrix(q_wxyz) -> np.ndarray:
    """Rotation matrix R(q) (Fossen 2021 eq. 2.72 form) of unit quaternions, shape (..., 3, 3)."""
    return rotations.matrix(quat_normalize(q_wxyz)[..., _XYZW])


def quat_from_euler_zyx(roll_rad, pitch_rad, yaw_rad) -> np.ndarray:
    """Unit quaternion (w, x, y, z) of the zyx convention R = Rz(yaw) Ry(pitch) Rx(roll) (Fossen 2021 eq. 2.18).

    In NED/FRD these are Fossen's phi, theta, psi (yaw from north, clockwise seen from above, pitch nose-up
    positive). Batched over broadcastable inputs."""
    return quat_normalize(np.ascontiguousarray(rotations.from_euler_zyx(roll_rad, pitch_rad, yaw_rad)[..., _WXYZ]))


def euler_zyx_from_quat(q_wxyz) -> np.ndarray:
    """(roll, pitch, yaw) rad of unit quaternions in the zyx convention; pitch in [-pi/2, pi/2].

    Only for display/tests: the physics never uses Euler angles (singular at pitch +-90 deg)."""
    r = rotation_matrix(q_wxyz)
    roll = np.arctan2(r[..., 2, 1], r[..., 2, 2])
    pitch = -np.arcsin(np.clip(r[..., 2, 0], -1.0, 1.0))
    yaw = np.arctan2(r[..., 1, 0], r[..., 0, 0])
    return np.stack([roll, pitch, yaw], axis=-1)


def yaw_ned_to_enu(psi_ned_rad):
    """Heading from north clockwise (NED yaw) -> ENU yaw from east counter-clockwise: pi/2 - psi."""
    return np.pi / 2 - np.asarray(psi_ned_rad, dtype=float)


def yaw_to_q_enu_flu(yaw_enu_rad: float) -> np.ndarray:
    """q_enu_flu (x, y, z, w) of a vessel level in roll and pitch, turned yaw_enu_rad about `map`'s z (up) from east."""
    return wxyz_to_xyzw(quat_from_euler_zyx(0.0, 0.0, yaw_enu_rad))


def heading_to_q_enu_flu(heading_deg: float) -> np.ndarray:
    """q_enu_flu (x, y, z, w) of a vessel level in roll and pitch on a compass heading (deg, 0 = north, clockwise;
    in NED the yaw angle psi, [Fossen2021] sec. 2.2.1)."""
    return yaw_to_q_enu_flu(float(yaw_ned_to_enu(math.radians(heading_deg))))


def yaw_enu_to_ned(yaw_enu_rad):
    """ENU yaw (from east, counter-clockwise) -> NED heading (from north, clockwise): pi/2 - yaw."""
    return np.pi / 2 - np.asarray(yaw_enu_rad, dtype=float)


# q_enu_ned (x) q (x) q_frd_flu is linear in q (the Hamilton product is bilinear): precompute its 4 x 4 matrix so
# that converting a whole fleet's attitudes is one matrix product (same result as the two products above).
_NED_FRD_TO_ENU_FLU = np.stack(
    [quat_multiply(quat_multiply(Q_ENU_NED_WXYZ, e), Q_FRD_FLU_WXYZ) for e in np.eye(4)], axis=1
)


# --- the whole fleet at once, compiled ------------------------------------------------------------------------


@njit(cache=True)
def _enu_flu_row(pos_ned, q_ned_frd, nu, nu_dot, m, i, out):  # pragma: no cover
    """The 19 packed ENU / FLU numbers of row i (see state_ned_frd_to_enu_flu_packed) into out[0:19]."""
    sign6 = (1.0, -1.0, -1.0, 1.0, -1.0, -1.0)
    out[0] = pos_ned[i, 1]
    out[1] = pos_ned[i, 0]
    out[2] = -pos_ned[i, 2]
    q0 = q1 = q2 = q3 = 0.0
    for j in range(4):
        q0 += m[0, j] * q_ned_frd[i, j]
        q1 += m[1, j] * q_ned_frd[i, j]
        q2 += m[2, j] * q_ned_frd[i, j]
        q3 += m[3, j] * q_ned_frd[i, j]
    scale = (-1.0 if q0 < 0.0 else 1.0) / math.sqrt(q0 * q0 + q1 * q1 + q2 * q2 + q3 * q3)
    out[3] = q1 * scale  # x y z w
    out[4] = q2 * scale
    out[5] = q3 * scale
    out[6] = q0 * scale
    for k in range(6):
        out[7 + k] = nu[i, k] * sign6[k]
        out[13 + k] = nu_dot[i, k] * sign6[k]


@njit(cache=True)
def _state_ned_frd_to_enu_flu(pos_ned, q_ned_frd, nu, nu_dot, m, out):  # pragma: no cover
    for i in range(pos_ned.shape[0]):
        _enu_flu_row(pos_ned, q_ned_frd, nu, nu_dot, m, i, out[i])


@njit(cache=True)
def _scatter_enu_flu(pos_ned, q_ned_frd, nu, nu_dot, m, rows, dst, index):  # pragma: no cover
    row = np.empty(19)
    for i in rows:
        _enu_flu_row(pos_ned, q_ned_frd, nu, nu_dot, m, i, row)
        for c in range(index.shape[1]):
            dst[index[i, c]] = row[c]


def scatter_state_ned_frd_to_enu_flu(pos_ned, q_ned_frd_wxyz, nu_frd, nu_dot_frd, rows, dst, index) -> None:
    """Write the packed ENU / FLU state of `rows` (the columns of state_ned_frd_to_enu_flu_packed) straight
    into a flat float64 array: dst[index[i, c]] = column c of row i, for c < index.shape[1] (e.g. 13: pose and
    twist only). Used to fill serialized messages in place (lotusim_core.ros.prepacked) in one compiled pass.
    rows: int64 row numbers; index: (N, C <= 19) int64 positions in dst."""
    _scatter_enu_flu(pos_ned, q_ned_frd_wxyz, nu_frd, nu_dot_frd, _NED_FRD_TO_ENU_FLU, rows, dst, index)


def state_ned_frd_to_enu_flu_packed(pos_ned, q_ned_frd_wxyz, nu_frd, nu_dot_frd) -> np.ndarray:
    """The fleet's state for ROS in one compiled pass, as one (N, 19) array: columns 0:3 pos_enu (m), 3:7
    q_enu_flu x y z w, 7:13 twist_flu [linear m/s, angular rad/s], 13:19 accel_flu (same units per s).
    Inputs (N,3), (N,4) unit quaternions w x y z, (N,6), (N,6) in NED / FRD; views are fine."""
    out = np.empty((len(pos_ned), 19))
    _state_ned_frd_to_enu_flu(pos_ned, q_ned_frd_wxyz, nu_frd, nu_dot_frd, _NED_FRD_TO_ENU_FLU, out)
    return out


def state_ned_frd_to_enu_flu(pos_ned, q_ned_frd_wxyz, nu_frd, nu_dot_frd):
    """The fleet's state for ROS in one compiled pass (same results as ned_to_enu, q_ned_frd_to_q_enu_flu and
    twist_frd_to_flu applied one by one; tested): (pos_enu (N,3), q_enu_flu x y z w (N,4), twist_flu (N,6),
    accel_flu (N,6)), views of one fresh array. Inputs (N,3), (N,4) unit quaternions, (N,6), (N,6)."""
    out = state_ned_frd_to_enu_flu_packed(pos_ned, q_ned_frd_wxyz, nu_frd, nu_dot_frd)
    return out[:, 0:3], out[:, 3:7], out[:, 7:13], out[:, 13:19]
