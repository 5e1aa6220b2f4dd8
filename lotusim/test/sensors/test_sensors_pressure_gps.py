"""Pressure/depth and GPS models: hydrostatic pressure at 10 m, no fix at depth, fix at the origin < 1 cm."""

from __future__ import annotations

import numpy as np
import pytest

from lotusim_core.base.geodesy import GeodeticOrigin, geodetic_to_enu
from lotusim_sensors import gps, noise, pressure
from lotusim_sensors.suite import parse_suite, stack_params

RHO = 1025.0
G = 9.80665


def test_at_rest_at_10_m_reads_atmosphere_plus_rho_g_h():
    """p = 101325 + rho g 10 = 201843.2 Pa (rho 1025, g 9.80665), noise std rho g 0.01 m = 100.5 Pa."""
    n = 20000
    keys = np.array([noise.stream_key(4, "auv", "pressure")], dtype=np.uint64)
    sensor = np.tile([3.0, -2.0, -10.0], (n, 1))
    n1 = noise.normal(np.repeat(keys, n), np.arange(n), 1)
    p, std, depth = pressure.pressure_measure(sensor, np.full(n, 0.01), RHO, n1)
    expected = 101325.0 + RHO * G * 10.0
    assert expected == pytest.approx(201843.16, abs=0.01)
    assert p.mean() == pytest.approx(expected, abs=4 * 100.5 / np.sqrt(n))
    assert p.std() == pytest.approx(RHO * G * 0.01, rel=0.02)
    assert std[0] == pytest.approx(100.52, abs=0.01)
    assert depth.mean() == pytest.approx(10.0, abs=4 * 0.01 / np.sqrt(n))
    assert depth.std() == pytest.approx(0.01, rel=0.02)


def test_above_water_reads_the_atmosphere():
    p, _, depth = pressure.pressure_measure(np.array([[0, 0, 1.5]]), np.zeros(1), RHO, np.zeros((1, 1)))
    assert p[0] == 101325.0 and depth[0] == 0.0


def test_mounting_offset_moves_the_sensor_with_attitude():
    """A sensor 1 m forward on a vessel pitched 30 deg nose down sits 0.5 m deeper than base_link."""
    pitch_down = np.array([[0.0, np.sin(np.radians(15)), 0.0, np.cos(np.radians(15))]])  # +30 deg about y (FLU)
    where = pressure.sensor_positions_enu(np.array([[0, 0, -10.0]]), pitch_down, np.array([[1.0, 0, 0]]))
    assert where[0, 2] == pytest.approx(-10.5)


def _gps_params(n: int, **overrides) -> dict[str, np.ndarray]:
    return stack_params("gps", [parse_suite({"gps": overrides}, "test")["gps"]] * n)


ORIGIN = GeodeticOrigin(36.8, -121.9, 0.0)


def test_no_fix_at_depth_fix_at_surface_at_the_origin_within_1_cm():
    noiseless = {"horizontal_noise_std_m": 0.0, "vertical_noise_std_m": 0.0, "velocity_noise_std_mps": 0.0}
    params = _gps_params(2, position_frd_m=[0.0, 0.0, -0.3], **noiseless)  # antenna 0.3 m above base_link
    positions = np.array([[0.0, 0.0, 0.0], [0.0, 0.0, -5.0]])
    q = np.tile([0, 0, 0, 1.0], (2, 1))
    sample = gps.gps_measure(params, positions, q, np.zeros((2, 6)), ORIGIN, np.zeros((2, 6)), np.ones((2, 1)))
    assert sample.has_fix.tolist() == [True, False]
    assert np.all(np.isnan(sample.geodetic[1]))
    lat, lon, h = sample.geodetic[0]
    back = geodetic_to_enu(np.array([[lat, lon, h]]), ORIGIN)[0]
    assert np.hypot(back[0], back[1]) < 0.01  # antenna above the origin: lat/lon of the origin to < 1 cm
    assert lat == pytest.approx(36.8, abs=1e-7) and lon == pytest.approx(-121.9, abs=1e-7)
    assert h == pytest.approx(0.3, abs=1e-6)


def test_fix_position_noise_and_dropout_statistics():
    n = 20000
    params = _gps_params(n, dropout_probability=0.1)
    keys = np.array([noise.stream_key(9, f"usv{i}", "gps") for i in range(n)], dtype=np.uint64)
    counters = np.zeros(n, dtype=np.uint64)
    positions = np.tile([100.0, 200.0, 0.0], (n, 1))
    vel_body = np.tile([1.0, 0.0, 0.0, 0.0, 0.0, 0.0], (n, 1))
    q_north = np.tile([0, 0, np.sin(np.pi / 4), np.cos(np.pi / 4)], (n, 1))
    sample = gps.gps_measure(
        params,
        positions,
        q_north,
        vel_body,
        ORIGIN,
        noise.normal(keys, counters, 6),
        noise.uniform(keys, counters + np.uint64(1 << 40), 1),
    )
    assert np.mean(~sample.has_fix) == pytest.approx(0.1, abs=0.01)
    enu = geodetic_to_enu(sample.geodetic[sample.has_fix], ORIGIN)
    assert np.std(enu[:, 0]) == pytest.approx(0.5, rel=0.03) and np.mean(enu[:, 1]) == pytest.approx(200.0, abs=0.02)
    assert np.std(enu[:, 2]) == pytest.approx(1.0, rel=0.03)
    # heading north at 1 m/s: ENU velocity (0, 1, 0) +- 0.05
    assert np.mean(sample.velocity_enu_mps, axis=0) == pytest.approx([0.0, 1.0, 0.0], abs=0.002)
    assert np.std(sample.velocity_enu_mps[:, 1]) == pytest.approx(0.05, rel=0.03)
