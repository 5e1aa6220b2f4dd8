"""Multirotor terms of an aerial vehicle: motor speed dynamics, rotor forces and moments, gravity in air and the
contact with the surface below. The equations of gz MulticopterMotorModel [GzSim2026] (the model PX4 flies its
X500 with [PX4GazeboModels2025]), written in the body frame FRD at CO; w is a motor's speed (rad/s, >= 0),
d its unit thrust direction, r its hub (from CO), spin +1 (ccw) or -1 (cw) about d.

    motor speed      w_{k+1} = w_c + (w_k - w_c) exp(-h / tau),  tau = tau_up if w_c > w_k else tau_down
                     (the exact first-order response over a step h to the command w_c held constant)
    thrust           T = k_f w^2
    yaw drag torque  Q = -spin k_m T d
    rotor drag       F_D = -|w| C_D V_perp,     V_perp = V - (V . d) d
    rolling moment   M_R = -|w| C_R V_perp
    wrench at CO     tau = sum over rotors [T d + F_D ;  r x (T d + F_D) + Q + M_R]

V is the rotor hub's velocity relative to the air, V = v + omega x r - R(q)^T V_wind (body FRD; V_wind is the
environment's wind at the vehicle, NED). The rotor wrench is evaluated once per (sub)step and held over it, as gz
applies it once per physics step, but with the motor speed's exact means over the step (of w for the drag
terms, of w^2 for thrust and yaw torque), so that each step delivers the exact thrust impulse of the motor's
exponential response whatever the step (a step of 10 ms is close to tau_up = 12.5 ms):

    mean w   = w_c + (w_k - w_c) a_1,            a_1 = (tau / h) (1 - e^{-h/tau})
    mean w^2 = w_c^2 + 2 w_c (w_k - w_c) a_1 + (w_k - w_c)^2 a_2,   a_2 = (tau / 2h) (1 - e^{-2h/tau})

Not taken from gz: its thrust scaling 1 - |V . d| / 25 m/s (a placeholder by its own comment, which takes thrust
away in a descent as in a climb, so that a drone sinking at its hover speed loses lift and sinks faster).

Gravity without buoyancy (a vehicle in air): f = m g k, k = R(q)^T e_z (down seen from the body), applied at the
CG, g(eta) = -[f ; r_g x f] (the left-hand-side convention of restoring.py).

Surface contact (a drone resting on the sea or the ground): the surface lies at z = -eta below the vehicle (eta
the sea elevation at CO, 0 in a calm sea). The lowest point of the landing gear sits contact_height_m below CO
along the body z axis, at z + k_z h (k_z = R_33). After each step, a vehicle whose gear is at or below the surface
is put back on it and loses its downward velocity in NED (a plastic contact: no bounce, no spring) and its roll and
pitch rates (the gear stands on it); its horizontal velocity and yaw rate are kept (no friction). This is a clamp,
not a force: the rotors lift it off again as soon as their thrust exceeds its weight.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from lotusim_physics import layout as L
from lotusim_physics.kinematics import rotation_from_quat


@njit(cache=True, inline="always")
def motor_speed_step(omega, omega_cmd, decay_up, decay_down):
    """(w_{k+1}, mean w, mean w^2) over a step of a motor at w (rad/s) commanded to w_c (module docstring);
    decay_up / decay_down = exp(-h / tau_up / down) (0: the motor follows at once)."""
    decay = decay_up if omega_cmd > omega else decay_down
    e = omega - omega_cmd
    if decay <= 0.0:
        return omega_cmd, omega_cmd, omega_cmd * omega_cmd
    tau_over_h = -1.0 / math.log(decay)
    a1 = tau_over_h * (1.0 - decay)
    a2 = 0.5 * tau_over_h * (1.0 - decay * decay)
    return omega_cmd + e * decay, omega_cmd + e * a1, omega_cmd * omega_cmd + 2.0 * omega_cmd * e * a1 + e * e * a2


@njit(cache=True, inline="always")
def rotor_thrust(k_f, omega_sq):
    """T = k_f w^2 (N) of a motor with w^2 = omega_sq (rad/s)^2."""
    return k_f * omega_sq


@njit(cache=True)
def rotor_wrench(tp, t0, nt, x, wind_n, wind_e, wind_d, tau):
    """Advance the motor speeds of the rotors tp[t0 : t0 + nt] over a step (their decay factors) and set tau (6,)
    to their wrench over it (FRD, at CO; the step means of w and w^2) on a vehicle at state x (13,) in the wind
    (NED, m/s); each rotor's mean thrust goes to T_THRUST (module docstring). Other thruster models are skipped
    (aerial vehicles have rotors only)."""
    for j in range(6):
        tau[j] = 0.0
    r00, r01, r02, r10, r11, r12, r20, r21, r22 = rotation_from_quat(x[3], x[4], x[5], x[6])
    # air velocity in the body: v_air = v - R^T V_wind
    ax = x[7] - (r00 * wind_n + r10 * wind_e + r20 * wind_d)
    ay = x[8] - (r01 * wind_n + r11 * wind_e + r21 * wind_d)
    az = x[9] - (r02 * wind_n + r12 * wind_e + r22 * wind_d)
    p, q, r = x[10], x[11], x[12]
    for k in range(t0, t0 + nt):
        if tp[k, L.T_MODEL] != L.T_MODEL_ROTOR:
            continue
        rx, ry, rz = tp[k, L.T_POS], tp[k, L.T_POS + 1], tp[k, L.T_POS + 2]
        dx, dy, dz = tp[k, L.T_DIR], tp[k, L.T_DIR + 1], tp[k, L.T_DIR + 2]
        cmd = min(max(tp[k, L.T_CMD], tp[k, L.T_CMD_MIN]), tp[k, L.T_CMD_MAX]) * tp[k, L.T_TO_RPS]  # rad/s
        omega, omega_mean, omega_sq = motor_speed_step(tp[k, L.T_STATE], cmd, tp[k, L.T_DECAY], tp[k, L.T_DECAY_DOWN])
        tp[k, L.T_STATE] = omega
        # the hub's air velocity V = v_air + omega x r and its part across the rotor axis, V_perp
        vx = ax + q * rz - r * ry
        vy = ay + r * rx - p * rz
        vz = az + p * ry - q * rx
        axial = vx * dx + vy * dy + vz * dz
        px, py, pz = vx - axial * dx, vy - axial * dy, vz - axial * dz
        thrust = rotor_thrust(tp[k, L.T_KF], omega_sq)
        tp[k, L.T_THRUST] = thrust
        drag = -abs(omega_mean) * tp[k, L.T_CD]
        roll = -abs(omega_mean) * tp[k, L.T_CR]
        yaw = -tp[k, L.T_SPIN] * tp[k, L.T_KM] * thrust
        fx, fy, fz = thrust * dx + drag * px, thrust * dy + drag * py, thrust * dz + drag * pz
        tau[0] += fx
        tau[1] += fy
        tau[2] += fz
        tau[3] += ry * fz - rz * fy + yaw * dx + roll * px
        tau[4] += rz * fx - rx * fz + yaw * dy + roll * py
        tau[5] += rx * fy - ry * fx + yaw * dz + roll * pz


@njit(cache=True, inline="always")
def gravity_in_air(prm, kx, ky, kz):
    """g(eta) (6-tuple) of a vehicle in air: weight W = m g along k = R^T e_z at r_g, no buoyancy."""
    w = prm[L.V_W]
    fx, fy, fz = w * kx, w * ky, w * kz
    gx, gy, gz = prm[L.V_RG], prm[L.V_RG + 1], prm[L.V_RG + 2]
    return -fx, -fy, -fz, -(gy * fz - gz * fy), -(gz * fx - gx * fz), -(gx * fy - gy * fx)


@njit(cache=True)
def descent_speed(x):
    """The NED down velocity (m/s, > 0 descending) of state x (13,): the third row of R(q) times the body velocity."""
    _, _, _, _, _, _, k0, k1, k2 = rotation_from_quat(x[3], x[4], x[5], x[6])
    return k0 * x[7] + k1 * x[8] + k2 * x[9]


@njit(cache=True)
def surface_contact(x, contact_height_m, elevation_m):
    """Put a vehicle whose landing gear is at or below the surface (z = -elevation_m, NED) back on it and remove
    its downward NED velocity and its roll and pitch rates (module docstring). x (13,) in place; returns True when
    in contact."""
    _, _, _, _, _, _, k0, k1, k2 = rotation_from_quat(x[3], x[4], x[5], x[6])  # k = R^T e_z: "down" in the body
    surface_z = -elevation_m
    gear_z = x[2] + k2 * contact_height_m
    if gear_z < surface_z:
        return False
    x[2] = surface_z - k2 * contact_height_m
    w_down = k0 * x[7] + k1 * x[8] + k2 * x[9]
    if w_down > 0.0:
        x[7] -= w_down * k0
        x[8] -= w_down * k1
        x[9] -= w_down * k2
    x[10] = 0.0  # the gear stands on the surface: no roll or pitch rate
    x[11] = 0.0
    return True


# --- closed forms for users, docs and tests (not used by the kernel) ----------------------------------------------


def hover_speed_rad_s(mass_kg: float, motor_constant: float, n_rotors: int, gravity_mps2: float = 9.81) -> float:
    """Motor speed (rad/s) at which n equal vertical rotors carry the weight: w = sqrt(m g / (n k_f))."""
    return math.sqrt(mass_kg * gravity_mps2 / (n_rotors * motor_constant))


def thrust_to_weight(mass_kg: float, motor_constant: float, omega_max_rad_s: float, n_rotors: int, g: float = 9.81):
    """n k_f w_max^2 / (m g): the thrust of all rotors at full speed over the weight."""
    return n_rotors * motor_constant * omega_max_rad_s**2 / (mass_kg * g)


def motor_step(omega0: np.ndarray, omega_cmd: np.ndarray, t_s: np.ndarray, tau_up: float, tau_down: float):
    """w(t) of motors stepping from w0 to w_c at t = 0 (vectorised): w_c + (w0 - w_c) exp(-t / tau)."""
    omega0, omega_cmd = np.asarray(omega0, dtype=float), np.asarray(omega_cmd, dtype=float)
    tau = np.where(omega_cmd > omega0, tau_up, tau_down)
    return omega_cmd + (omega0 - omega_cmd) * np.exp(-np.asarray(t_s, dtype=float) / tau)
