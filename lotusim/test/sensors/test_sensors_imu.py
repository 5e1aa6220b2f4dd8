"""IMU, AHRS and magnetometer models: specific force at rest and in a turn, gyro rate, noise statistics."""

from __future__ import annotations

import numpy as np
import pytest

from lotusim_core.base import rotations
from lotusim_sensors import imu, noise
from lotusim_sensors.suite import parse_suite, stack_params

G = imu.STANDARD_GRAVITY_MPS2


def _params(n: int, **overrides) -> dict[str, np.ndarray]:
    return stack_params("imu", [parse_suite({"imu": overrides}, "test")["imu"]] * n)


def _noiseless(n: int) -> dict[str, np.ndarray]:
    zero = dict.fromkeys(
        [
            "accel_noise_density",
            "accel_random_walk",
            "gyro_noise_density",
            "gyro_random_walk",
            "orientation_noise_std_rad",
        ],
        0.0,
    )
    return _params(n, **zero)


def _measure(params, q, accel, twist, n15, bias=None, dt=0.02):
    n = len(q)
    zeros = np.zeros((n, 3))
    a_bias, g_bias = (zeros, zeros) if bias is None else bias
    return imu.imu_measure(params, a_bias, g_bias, np.full(n, dt), q, accel, twist, n15)


def test_level_at_rest_reads_plus_g_up_in_flu():
    q = np.array([[0.0, 0.0, np.sin(0.6), np.cos(0.6)]])  # any yaw
    f, w, q_meas, _, _ = _measure(_noiseless(1), q, np.zeros((1, 6)), np.zeros((1, 6)), np.zeros((1, 15)))
    np.testing.assert_allclose(f[0], [0.0, 0.0, G], atol=1e-12)
    np.testing.assert_allclose(w[0], 0.0, atol=1e-15)
    np.testing.assert_allclose(q_meas[0], q[0], atol=1e-15)


def test_rolled_90_deg_at_rest_reads_g_on_body_y():
    """Rolled +90 deg about x (FLU), the body y axis points up: the accelerometer reads +g on y (REP 145)."""
    q = np.array([[np.sin(np.pi / 4), 0.0, 0.0, np.cos(np.pi / 4)]])
    f, *_ = _measure(_noiseless(1), q, np.zeros((1, 6)), np.zeros((1, 6)), np.zeros((1, 15)))
    np.testing.assert_allclose(f[0], [0.0, G, 0.0], atol=1e-12)


def test_constant_turn_reads_rate_and_centripetal_acceleration():
    """Steady turn at r = 0.1 rad/s and u = 2 m/s: gyro z = r; accelerometer y = u r = 0.2 m/s^2 toward the
    centre (left, +y in FLU), nu_dot = 0; a sensor 1 m forward also feels -r^2 x = -0.01 m/s^2 on x."""
    params = _noiseless(1)
    params["x_m"][:] = 1.0
    twist = np.array([[2.0, 0.0, 0.0, 0.0, 0.0, 0.1]])
    f, w, *_ = _measure(params, np.array([[0, 0, 0, 1.0]]), np.zeros((1, 6)), twist, np.zeros((1, 15)))
    np.testing.assert_allclose(w[0], [0.0, 0.0, 0.1], atol=1e-15)
    np.testing.assert_allclose(f[0], [-0.01, 0.2, G], atol=1e-12)


def test_turn_rate_read_back_with_noise_over_a_seeded_run():
    """5000 successive samples of one vessel's stream (counters 0..4999) at r = 0.25 rad/s average to r."""
    steps, rate = 5000, 0.25
    params = _params(steps, gyro_turn_on_bias_sigma=0.0, gyro_random_walk=0.0)
    keys = np.full(steps, noise.stream_key(7, "auv", "imu"), dtype=np.uint64)
    twist = np.tile([1.0, 0, 0, 0, 0, rate], (steps, 1))
    q = np.tile([0, 0, 0, 1.0], (steps, 1))
    gyro = _measure(params, q, np.zeros((steps, 6)), twist, noise.normal(keys, np.arange(steps), 15))[1]
    gyro_std = 3.394e-4 / np.sqrt(1 / 50.0)
    assert np.mean(gyro[:, 2]) == pytest.approx(rate, abs=4 * gyro_std / np.sqrt(steps))
    assert np.std(gyro[:, 2]) == pytest.approx(gyro_std, rel=0.05)


def test_white_noise_std_is_density_over_sqrt_dt():
    """Discrete white noise of a continuous density sigma_w sampled at f Hz has std sigma_w sqrt(f)."""
    n = 20000
    params = _params(n, accel_random_walk=0.0, gyro_random_walk=0.0, rate_hz=100.0)
    keys = np.array([noise.stream_key(1, f"v{i}", "imu") for i in range(n)], dtype=np.uint64)
    n15 = noise.normal(keys, np.zeros(n, dtype=np.uint64), 15)
    f, w, *_ = _measure(params, np.tile([0, 0, 0, 1.0], (n, 1)), np.zeros((n, 6)), np.zeros((n, 6)), n15, dt=0.01)
    err = f - [0, 0, G]
    assert np.std(err) == pytest.approx(0.004 * 10.0, rel=0.02)
    assert np.std(w) == pytest.approx(3.394e-4 * 10.0, rel=0.02)
    assert abs(np.mean(err)) < 4 * 0.04 / np.sqrt(3 * n)


def test_bias_random_walk_variance_grows_linearly_in_time():
    """Pure random walk (tau <= 0): Var b(t) = sigma_b^2 t (Wiener process), over 4000 seeded vessels."""
    n, dt, steps, sigma_b = 4000, 0.1, 400, 0.006
    rw = np.full(n, sigma_b)
    tau = np.zeros(n)
    keys = np.array([noise.stream_key(3, f"v{i}", "imu") for i in range(n)], dtype=np.uint64)
    bias = np.zeros((n, 3))
    variances = []
    for k in range(steps):
        bias = imu.gauss_markov_step(bias, np.full(n, dt), rw, tau, noise.normal(keys, np.full(n, k), 3))
        if (k + 1) % 100 == 0:
            variances.append(np.var(bias))
    t = dt * np.arange(100, steps + 1, 100)
    np.testing.assert_allclose(variances, sigma_b**2 * t, rtol=0.05)


def test_gauss_markov_bias_reaches_stationary_variance():
    """db = -b/tau dt + sigma dW has stationary variance sigma^2 tau / 2 (Ornstein-Uhlenbeck)."""
    n, dt, tau, sigma_b = 4000, 1.0, 20.0, 0.01
    keys = np.array([noise.stream_key(5, f"v{i}", "imu") for i in range(n)], dtype=np.uint64)
    bias = np.zeros((n, 3))
    for k in range(200):  # 10 correlation times
        bias = imu.gauss_markov_step(
            bias, np.full(n, dt), np.full(n, sigma_b), np.full(n, tau), noise.normal(keys, np.full(n, k), 3)
        )
    assert np.var(bias) == pytest.approx(sigma_b**2 * tau / 2, rel=0.05)


def test_ahrs_orientation_error_has_configured_std():
    n = 20000
    params = _params(n, orientation_noise_std_rad=0.02)
    keys = np.array([noise.stream_key(2, f"v{i}", "imu") for i in range(n)], dtype=np.uint64)
    q = np.tile(rotations.from_rotation_vector(np.array([0.1, -0.2, 1.0])), (n, 1))
    *_, q_meas, _, _ = _measure(params, q, np.zeros((n, 6)), np.zeros((n, 6)), noise.normal(keys, np.zeros(n), 15))
    err = rotations.multiply(q * [-1, -1, -1, 1], q_meas)  # q^-1 q_meas = small body rotation
    angle_axis = 2.0 * err[:, :3] * np.sign(err[:, 3:4])
    assert np.std(angle_axis, axis=0) == pytest.approx([0.02] * 3, rel=0.03)


def test_magnetometer_reads_earth_field_in_body_frame():
    """Declination 0, inclination 60 deg, 50 uT: heading north (yaw 90 deg ENU) the body x axis sees the
    horizontal component F cos I = 25 uT and body z sees -F sin I (field points down)."""
    field = imu.earth_field_enu_t(0.0, 60.0, 50e-6)
    np.testing.assert_allclose(field, [0.0, 25e-6, -50e-6 * np.sin(np.radians(60))], atol=1e-15)
    q_north = rotations.from_rotation_vector(np.array([[0.0, 0.0, np.pi / 2]]))
    b = imu.magnetometer_measure(np.zeros(1), field, q_north, np.zeros((1, 3)))
    np.testing.assert_allclose(b[0], [25e-6, 0.0, -50e-6 * np.sin(np.radians(60))], atol=1e-15)
    assert np.linalg.norm(b) == pytest.approx(50e-6)
    # declination 10 deg east: heading 10 deg east of north aligns x with the horizontal field
    field = imu.earth_field_enu_t(10.0, 60.0, 50e-6)
    q = rotations.from_rotation_vector(np.array([[0.0, 0.0, np.radians(80.0)]]))
    b = imu.magnetometer_measure(np.zeros(1), field, q, np.zeros((1, 3)))
    assert b[0, 1] == pytest.approx(0.0, abs=1e-15) and b[0, 0] == pytest.approx(25e-6)
