"""IMU (accelerometer + gyroscope), AHRS orientation and magnetometer models, batched over vessels.

Accelerometer: specific force f = a - g (Titterton & Weston, Strapdown Inertial Navigation Technology, 2nd ed.
2004, ch. 3), expressed in the body frame FLU. At rest it reads +g along the body z (up) axis, the REP 145
convention (https://www.ros.org/reps/rep-0145.html). The body-frame inertial acceleration at a sensor mounted at r
is a = nu_dot + omega x v + alpha x r + omega x (omega x r) (rigid-body kinematics: the acceleration transported to
a point of a rotating body), nu_dot being the time derivative of the body velocity published in FleetState.accel.

Noise (the continuous-time model of Kalibr / rotors_simulator / uuv_simulator GazeboImuPlugin; Furgale et al.,
IROS 2013): measurement = truth + bias + white noise, white noise std = noise_density / sqrt(dt); bias = turn-on
bias (drawn once, std turn_on_bias_sigma) + first-order Gauss-Markov process with correlation time tau and
driving random-walk density sigma_b: b_{k+1} = e^{-dt/tau} b_k + sigma_b sqrt(tau/2 (1 - e^{-2 dt/tau})) n_k
(exact discretisation of db = -b/tau dt + sigma_b dW; tau <= 0 means a pure random walk b += sigma_b sqrt(dt) n,
whose variance grows as sigma_b^2 t). Defaults: uuv_simulator's IMU [UUVSimulator2020].

Orientation (AHRS): the true attitude perturbed by a small body-frame rotation with per-axis std
orientation_noise_std_rad (uuv_simulator default 0.01 rad).

Magnetometer: the Earth field at the scenario origin from declination D (east of north), inclination I (below
horizontal) and total intensity F: B_enu = F [cos I sin D, cos I cos D, -sin I] (geomagnetic elements, e.g.
as defined in the NOAA/BGS World Magnetic Model technical report), rotated into the body frame, plus white noise.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from lotusim_core.base import rotations
from lotusim_core.base.rotations import cross

STANDARD_GRAVITY_MPS2 = 9.80665  # 3rd CGPM (1901)


def specific_force_flu(
    q_map_flu: np.ndarray,
    accel_flu: np.ndarray,
    twist_flu: np.ndarray,
    lever_arm_flu_m: np.ndarray,
    gravity_mps2: float = STANDARD_GRAVITY_MPS2,
) -> np.ndarray:
    """True specific force (m/s^2, body FLU) at a sensor mounted at lever_arm_flu_m (N x 3) from base_link.

    q_map_flu (N x 4, x y z w), accel_flu = [nu_dot linear, alpha] (N x 6), twist_flu = [v, omega] (N x 6)."""
    v, omega = twist_flu[:, :3], twist_flu[:, 3:]
    alpha = accel_flu[:, 3:]
    r = lever_arm_flu_m
    a_inertial = accel_flu[:, :3] + cross(omega, v) + cross(alpha, r) + cross(omega, cross(omega, r))
    gravity_flu = rotations.rotate_inverse(q_map_flu, np.array([0.0, 0.0, -gravity_mps2]))
    return a_inertial - gravity_flu


def gauss_markov_step(
    bias: np.ndarray, dt_s: np.ndarray, random_walk: np.ndarray, tau_s: np.ndarray, n: np.ndarray
) -> np.ndarray:
    """One exact step of db = -b/tau dt + random_walk dW (N x 3), tau <= 0 meaning no decay (pure random walk)."""
    dt = dt_s[:, None]
    tau = tau_s[:, None]
    markov = tau > 0.0
    safe_tau = np.where(markov, tau, 1.0)
    phi = np.where(markov, np.exp(-dt / safe_tau), 1.0)
    std = np.where(markov, np.sqrt(0.5 * safe_tau * (1.0 - phi * phi)), np.sqrt(dt)) * random_walk[:, None]
    return phi * bias + std * n


def turn_on_bias(params: Mapping[str, np.ndarray], n6: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Accelerometer and gyro turn-on biases (N x 3 each) from 6 standard normals per vessel."""
    accel = params["accel_turn_on_bias_sigma"][:, None] * n6[:, :3]
    return accel, params["gyro_turn_on_bias_sigma"][:, None] * n6[:, 3:]


def imu_measure(
    params: Mapping[str, np.ndarray],
    accel_bias: np.ndarray,
    gyro_bias: np.ndarray,
    dt_s: np.ndarray,
    q_map_flu: np.ndarray,
    accel_flu: np.ndarray,
    twist_flu: np.ndarray,
    n15: np.ndarray,
    gravity_mps2: float = STANDARD_GRAVITY_MPS2,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """One IMU sample for N vessels.

    params: per-vessel arrays (N,) named as in docs/sensors.md (imu); accel_bias, gyro_bias (N x 3) the bias
    states, dt_s (N,) the time since each vessel's previous sample (bias propagation), n15 (N x 15) standard
    normals. Returns (specific force FLU m/s^2, angular rate FLU rad/s, orientation map<-FLU x y z w,
    new accel bias, new gyro bias)."""
    period = 1.0 / params["rate_hz"]
    accel_bias = gauss_markov_step(
        accel_bias, dt_s, params["accel_random_walk"], params["accel_bias_correlation_time_s"], n15[:, 6:9]
    )
    gyro_bias = gauss_markov_step(
        gyro_bias, dt_s, params["gyro_random_walk"], params["gyro_bias_correlation_time_s"], n15[:, 9:12]
    )
    lever = np.column_stack([params["x_m"], params["y_m"], params["z_m"]])
    f_true = specific_force_flu(q_map_flu, accel_flu, twist_flu, lever, gravity_mps2)
    accel_std = params["accel_noise_density"] / np.sqrt(period)
    gyro_std = params["gyro_noise_density"] / np.sqrt(period)
    f_meas = f_true + accel_bias + accel_std[:, None] * n15[:, 0:3]
    w_meas = twist_flu[:, 3:] + gyro_bias + gyro_std[:, None] * n15[:, 3:6]
    delta = rotations.from_rotation_vector(params["orientation_noise_std_rad"][:, None] * n15[:, 12:15])
    q_meas = rotations.multiply(q_map_flu, delta)
    return f_meas, w_meas, q_meas, accel_bias, gyro_bias


def earth_field_enu_t(declination_deg: float, inclination_deg: float, intensity_t: float) -> np.ndarray:
    """Earth magnetic field vector in `map` ENU (tesla) from the geomagnetic elements D, I, F."""
    d, i = np.radians(declination_deg), np.radians(inclination_deg)
    return intensity_t * np.array([np.cos(i) * np.sin(d), np.cos(i) * np.cos(d), -np.sin(i)])


def magnetometer_measure(
    noise_std_t: np.ndarray, field_enu_t: np.ndarray, q_map_flu: np.ndarray, n3: np.ndarray
) -> np.ndarray:
    """Magnetic field in the body frame FLU (tesla, N x 3): R(q)^T B_enu + white noise."""
    return rotations.rotate_inverse(q_map_flu, field_enu_t) + noise_std_t[:, None] * n3
