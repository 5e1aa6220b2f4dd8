"""DVL and altimeter: bottom track = ground velocity in body axes, water track = velocity through the water,
dropout with < 3 beams, Janus noise geometry, range-dependent rate, altitude."""

from __future__ import annotations

import numpy as np
import pytest

from lotusim_core.base import rotations
from lotusim_sensors import dvl, noise
from lotusim_sensors.suite import parse_suite, stack_params


class Flat:
    def __init__(self, depth_m: float) -> None:
        self.depth_m = depth_m

    def seabed_depth_m(self, x, y):
        return np.full(np.shape(x), self.depth_m)


class Step:
    """Shallow (30 m) where the predicate holds, 900 m elsewhere."""

    def __init__(self, shallow) -> None:
        self.shallow = shallow

    def seabed_depth_m(self, x, y):
        return np.where(self.shallow(np.asarray(x), np.asarray(y)), 30.0, 900.0)


def _params(n: int = 1, **overrides) -> dict[str, np.ndarray]:
    return stack_params("dvl", [parse_suite({"dvl": overrides}, "test")["dvl"]] * n)


NOISELESS = {"bottom_track_noise_std_mps": 0.0, "water_track_noise_std_mps": 0.0}
CURRENT = np.array([0.3, -0.2, 0.0])


def _current(points):
    return np.tile(CURRENT, (len(points), 1))


def _measure(params, position, q, twist, seabed, n8=None):
    n = len(position)
    n8 = np.zeros((n, 8)) if n8 is None else n8
    return dvl.dvl_measure(params, position, q, twist, _current, seabed.seabed_depth_m, n8)


def test_bottom_track_equals_ground_velocity_in_body_axes():
    """Vessel heading 30 deg, pitched 5 deg, moving (1.2, 0.1, -0.05) m/s and turning r = 0.05 rad/s with the DVL
    0.5 m forward: it reads v + omega x r (noise off), independent of the current."""
    params = _params(position_frd_m=[0.5, 0.0, 0.2], **NOISELESS)
    q = rotations.multiply(
        rotations.from_rotation_vector(np.array([[0, 0, np.radians(30)]])),
        rotations.from_rotation_vector(np.array([[0, np.radians(5), 0]])),
    )
    twist = np.array([[1.2, 0.1, -0.05, 0.0, 0.0, 0.05]])
    sample = _measure(params, np.array([[10.0, 5.0, -20.0]]), q, twist, Flat(50.0))
    assert sample.mode[0] == 1
    expected = twist[0, :3] + np.cross(twist[0, 3:], [0.5, 0.0, -0.2])
    np.testing.assert_allclose(sample.velocity_flu_mps[0], expected, atol=1e-12)
    assert np.all(np.isfinite(sample.beam_ranges_m))


def test_altitude_of_a_level_dvl_over_a_flat_bottom():
    """DVL 0.2 m below base_link at 20 m depth over a 50 m bottom: altitude 29.8 m, beam slant 29.8 / cos 30."""
    params = _params(position_frd_m=[0.0, 0.0, 0.2], **NOISELESS)
    sample = _measure(params, np.array([[0.0, 0.0, -20.0]]), np.array([[0, 0, 0, 1.0]]), np.zeros((1, 6)), Flat(50.0))
    assert sample.altitude_m[0] == pytest.approx(29.8)
    np.testing.assert_allclose(sample.beam_ranges_m[0], 29.8 / np.cos(np.radians(30)))


def test_water_track_is_velocity_relative_to_the_current_when_out_of_range():
    """900 m of water (beyond 80 m range): water track = v - R^T v_current, in body axes."""
    params = _params(**NOISELESS)
    q = rotations.from_rotation_vector(np.array([[0, 0, np.radians(90)]]))  # heading north
    twist = np.array([[1.0, 0.0, 0.0, 0.0, 0.0, 0.0]])
    sample = _measure(params, np.array([[0.0, 0.0, -20.0]]), q, twist, Flat(900.0))
    assert sample.mode[0] == 2
    # current east 0.3, north -0.2 -> body (forward = north, left = west): (-0.2, -0.3, 0)
    np.testing.assert_allclose(sample.velocity_flu_mps[0], [1.0 + 0.2, 0.3, 0.0], atol=1e-12)
    assert np.isinf(sample.altitude_m[0])


def test_three_beams_keep_bottom_lock_two_beams_drop_out():
    pos, q, twist = np.array([[0.0, 0.0, -10.0]]), np.array([[0, 0, 0, 1.0]]), np.array([[0.8, -0.1, 0.02, 0, 0, 0]])
    params = _params(water_track=0, **NOISELESS)
    three = _measure(params, pos, q, twist, Step(lambda x, y: ~((x < 0) & (y < 0))))  # one quadrant deep
    assert three.mode[0] == 1 and np.isinf(three.beam_ranges_m[0]).sum() == 1
    np.testing.assert_allclose(three.velocity_flu_mps[0], twist[0, :3], atol=1e-12)  # exact from 3 beams
    two = _measure(params, pos, q, twist, Step(lambda x, y: x > 0))  # only the forward beams return
    assert two.mode[0] == 0 and np.all(np.isnan(two.velocity_flu_mps[0]))
    fallback = _measure(_params(**NOISELESS), pos, q, twist, Step(lambda x, y: x > 0))
    assert fallback.mode[0] == 2  # water track when enabled


def test_out_of_water_dvl_gives_nothing():
    sample = _measure(_params(), np.array([[0.0, 0.0, 1.0]]), np.array([[0, 0, 0, 1.0]]), np.zeros((1, 6)), Flat(20))
    assert sample.mode[0] == 0


def test_janus_noise_geometry_over_a_seeded_run():
    """Radial noise sigma per beam, 4 beams at tilt t: std(v_x) = std(v_y) = sigma / (sqrt 2 sin t),
    std(v_z) = sigma / (2 cos t), and the published covariance says the same."""
    n, sigma, tilt = 20000, 0.01, 30.0
    params = _params(n, bottom_track_noise_std_mps=sigma, beam_tilt_deg=tilt)
    keys = np.array([noise.stream_key(8, f"auv{i}", "dvl") for i in range(n)], dtype=np.uint64)
    n8 = noise.normal(keys, np.zeros(n, dtype=np.uint64), 8)
    twist = np.tile([1.0, 0.0, 0.0, 0.0, 0.0, 0.0], (n, 1))
    sample = _measure(params, np.tile([0.0, 0.0, -10.0], (n, 1)), np.tile([0, 0, 0, 1.0], (n, 1)), twist, Flat(40), n8)
    t = np.radians(tilt)
    expected = [sigma / (np.sqrt(2) * np.sin(t))] * 2 + [sigma / (2 * np.cos(t))]
    np.testing.assert_allclose(np.std(sample.velocity_flu_mps, axis=0), expected, rtol=0.03)
    np.testing.assert_allclose(np.mean(sample.velocity_flu_mps, axis=0), [1.0, 0, 0], atol=4 * expected[0] / np.sqrt(n))
    np.testing.assert_allclose(np.sqrt(np.diagonal(sample.covariance[0])), expected, rtol=1e-12)


def test_update_period_grows_with_range():
    """Period = max(1 / max_rate, pings 2 s / c): at 60 m altitude, slant 69.28 m, 4 pings: 0.3695 s (> 0.2 s);
    at 5 m the 5 Hz cap holds; searching for the bottom uses the 80 m maximum range."""
    params = _params(3, pings_per_sample=4.0)
    pos = np.array([[0, 0, -40.0], [0, 0, -95.0], [0, 0, -10.0]])

    class PerRow:  # seabed 100 m, 900 m and 15 m under the three vessels (4 beams each, in order)
        def seabed_depth_m(self, x, y):
            return np.repeat([100.0, 900.0, 15.0], 4)

    sample = _measure(params, pos, np.tile([0, 0, 0, 1.0], (3, 1)), np.zeros((3, 6)), PerRow())
    slant = 60.0 / np.cos(np.radians(30))
    assert sample.period_s[0] == pytest.approx(4 * 2 * slant / 1500.0)
    assert sample.period_s[1] == pytest.approx(4 * 2 * 80.0 / 1500.0)
    assert sample.period_s[2] == pytest.approx(0.2)


def test_altimeter_reads_slant_range_to_the_bottom():
    params = stack_params("altimeter", [parse_suite({"altimeter": {"noise_std_m": 0.0}}, "t")["altimeter"]] * 3)
    pos = np.array([[0, 0, -38.0], [0, 0, -49.9], [0, 0, -20.0]])
    level = np.array([0, 0, 0, 1.0])
    rolled = rotations.from_rotation_vector(np.array([np.radians(20), 0, 0]))
    r = dvl.altimeter_measure(
        params, pos, np.stack([level, level, rolled]), Flat(50.0).seabed_depth_m, np.zeros((3, 1))
    )
    assert r[0] == pytest.approx(12.0)
    assert np.isinf(r[1])  # 0.1 m above the bottom: below the 0.2 m minimum range
    assert r[2] == pytest.approx(30.0 / np.cos(np.radians(20)))
