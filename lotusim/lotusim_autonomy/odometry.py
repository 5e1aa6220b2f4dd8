"""nav_msgs/Odometry (REP 103: `map` ENU, body FLU) -> the NED / FRD quantities the control laws use.

Conversions through lotusim_core.base.frames only. Returns position NED (m), Euler angles (roll, pitch, yaw) of the
zyx convention in NED/FRD (rad; yaw = compass heading, clockwise from north) and nu = [u v w p q r] body FRD.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from lotusim_core.base import frames, rotations


@dataclass(frozen=True)
class NedState:
    t_s: float
    position_ned_m: np.ndarray  # (3,)
    rpy_ned_rad: np.ndarray  # (3,) roll, pitch (nose up +), heading
    nu_frd: np.ndarray  # (6,)

    @property
    def depth_m(self) -> float:
        return float(self.position_ned_m[2])

    @property
    def position_enu_xy(self) -> np.ndarray:
        return np.array([self.position_ned_m[1], self.position_ned_m[0]])

    @property
    def yaw_enu_rad(self) -> float:
        return float(frames.yaw_ned_to_enu(self.rpy_ned_rad[2]))


def ned_state(t_s: float, position_enu, q_enu_flu_xyzw, twist_flu) -> NedState:
    """State of one vessel from the fields of its odometry (position, orientation x y z w, twist)."""
    q_ned_frd = frames.q_enu_flu_to_q_ned_frd(np.asarray(q_enu_flu_xyzw, dtype=float))
    return NedState(
        t_s=float(t_s),
        position_ned_m=frames.enu_to_ned(np.asarray(position_enu, dtype=float)),
        rpy_ned_rad=frames.euler_zyx_from_quat(q_ned_frd),
        nu_frd=frames.twist_flu_to_frd(np.asarray(twist_flu, dtype=float)),
    )


def from_odometry(msg) -> NedState:
    """NedState of a nav_msgs/Odometry message (stamp in sim time), in plain floats: a controller host converts
    hundreds of these a second (the frames path costs ~300 us on 1-element arrays). Same result as ned_state
    (test_autonomy_control_laws): the zyx Euler angles of the ENU<-FLU attitude give roll_NED = roll,
    pitch_NED = -pitch, yaw_NED = pi/2 - yaw (REP 103 -> NED/FRD)."""
    p, o = msg.pose.pose.position, msg.pose.pose.orientation
    lin, ang = msg.twist.twist.linear, msg.twist.twist.angular
    t_s = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
    roll, pitch, yaw = rotations.euler_zyx_one(o.x, o.y, o.z, o.w)
    psi = (math.pi / 2.0 - yaw + math.pi) % (2.0 * math.pi) - math.pi
    return NedState(
        t_s=float(t_s),
        position_ned_m=np.array([p.y, p.x, -p.z]),
        rpy_ned_rad=np.array([roll, -pitch, psi]),
        nu_frd=np.array([lin.x, -lin.y, -lin.z, ang.x, -ang.y, -ang.z]),
    )


def is_finite(state: NedState) -> bool:
    """True if the position and body velocity of a state are finite (a controller must not step on NaN)."""
    return bool(np.all(np.isfinite(state.position_ned_m)) and np.all(np.isfinite(state.nu_frd)))


def step_since(previous: NedState | None, state: NedState) -> float:
    """Sim time from the previous state to this one, s (0 for the first state: no controller step)."""
    return state.t_s - previous.t_s if previous is not None else 0.0


def ned_arrays(
    position_enu: np.ndarray, q_enu_flu_xyzw: np.ndarray, twist_flu: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """from_odometry over rows (a FleetState's arrays, REP 103): position NED (N, 3) m, zyx Euler angles NED/FRD
    (N, 3) rad (roll, pitch nose up +, compass heading), nu FRD (N, 6); the same formulas as from_odometry."""
    roll, pitch, yaw = rotations.euler_zyx(q_enu_flu_xyzw)
    psi = (math.pi / 2.0 - yaw + math.pi) % (2.0 * math.pi) - math.pi
    p = position_enu
    position_ned = np.column_stack([p[:, 1], p[:, 0], -p[:, 2]])
    nu = twist_flu * np.array([1.0, -1.0, -1.0, 1.0, -1.0, -1.0])
    return position_ned, np.column_stack([roll, -pitch, psi]), nu
