"""The sea over each hull (lotusim_physics.sea_over_hulls): waves shorter than the hull average out (the Dirichlet
kernel of the sampling, written out here), a small hull follows long waves (mean and slope of the surface), the
hull's pose places its points, the orbital velocity at CO."""

from __future__ import annotations

import math

import numpy as np
import pytest

from lotusim_core.base import frames
from lotusim_env.waves import regular_wave
from lotusim_physics.sea_over_hulls import (
    fit_planes,
    hull_grid_frd,
    orbital_velocity_at_co,
    place_points,
    sea_over_hulls,
)

G = 9.81


def heading_q(yaw_deg: float, n: int = 1) -> np.ndarray:
    """q_ned_frd (n, 4) of a level hull heading yaw_deg (clockwise from north)."""
    return np.tile(frames.quat_from_euler_zyx(0.0, 0.0, math.radians(yaw_deg)), (n, 1))


def mean_amplitude(length_m: float, points: int, period_s: float, yaw_deg: float = 0.0) -> float:
    """Largest |η̄| / a over one wave period of a hull of `points` points along its length, head seas."""
    sea = regular_wave(2.0, period_s, from_deg=yaw_deg)  # a = 1 m, waves meeting the bow
    hull = hull_grid_frd(length_m, 0.0, points, 1)
    times = np.linspace(0.0, period_s, 400, endpoint=False)
    means = [sea_over_hulls(sea, t, np.zeros((1, 3)), heading_q(yaw_deg), hull).elevation_m[0] for t in times]
    return float(np.max(np.abs(means)))


def dirichlet(k: float, spacing_m: float, points: int) -> float:
    """|(1/K) Σ_j e^{i k x_j}| for K points `spacing_m` apart: |sin(K k d/2) / (K sin(k d/2))|."""
    half = 0.5 * k * spacing_m
    return abs(math.sin(points * half) / (points * math.sin(half)))


@pytest.mark.parametrize(
    ("length_m", "points", "period_s"),
    [(2.0, 3, 8.0), (4.9, 5, 4.0), (140.0, 15, 3.0), (140.0, 15, 5.0), (140.0, 15, 12.0)],
)
def test_mean_sea_over_the_hull_is_the_dirichlet_kernel_of_its_sampling(length_m, points, period_s):
    k = (2 * math.pi / period_s) ** 2 / G
    expected = dirichlet(k, length_m / points, points)
    assert mean_amplitude(length_m, points, period_s) == pytest.approx(expected, rel=1e-3, abs=1e-4)


def test_small_hull_follows_long_waves_long_hull_ignores_short_ones():
    # a 2 m hull in 8 s waves (λ = 100 m): the mean sea over it is the sea (response → 1)
    assert mean_amplitude(2.0, 3, 8.0) > 0.999
    # a 140 m hull (DTMB 5415 class) in 3 s waves (λ = 14 m): almost nothing is left (→ 0)
    assert mean_amplitude(140.0, 15, 3.0) < 0.05


def test_plane_of_a_long_wave_is_its_slope_and_normal():
    """Waves from the north (travelling south) under a 4 m x 2 m hull heading east: η = a cos(−k N − ωt), so
    ∂η/∂N = a k sin(−k N − ωt), ∂η/∂E = 0; the plane fit matches to O((kL)²)."""
    period, a = 10.0, 1.0
    k = (2 * math.pi / period) ** 2 / G
    sea = regular_wave(2 * a, period, from_deg=0.0)
    hull = hull_grid_frd(4.0, 2.0, 5, 3)
    position = np.array([[30.0, -12.0, 0.0]])  # NED
    for t in (0.0, 1.3, 6.0):
        got = sea_over_hulls(sea, t, position, heading_q(90.0), hull)
        phase = -k * position[0, 0] - 2 * math.pi / period * t
        assert got.slope_ne[0, 0] == pytest.approx(a * k * math.sin(phase), abs=2e-4 * a * k * 10)
        assert got.slope_ne[0, 1] == pytest.approx(0.0, abs=1e-12)
        assert got.elevation_m[0] == pytest.approx(a * math.cos(phase), abs=5e-3)
        normal = np.array([got.slope_ne[0, 0], 0.0, 1.0]) / math.hypot(got.slope_ne[0, 0], 1.0)
        np.testing.assert_allclose(got.normal_ned[0], normal, atol=1e-12)


def test_points_follow_the_pose():
    hull = np.array([[1.0, 0.0], [0.0, 1.0]])  # 1 m forward, 1 m to starboard
    placed = place_points(np.array([[10.0, 20.0, 0.5]]), heading_q(90.0), hull)  # heading east
    np.testing.assert_allclose(
        placed[0], [[10.0, 21.0, 0.5], [9.0, 20.0, 0.5]], atol=1e-12
    )  # bow east, starboard south


def test_plane_fit_is_exact_on_a_plane_and_collinear_points_have_no_cross_slope():
    rng = np.random.default_rng(0)
    points = np.concatenate([rng.uniform(-5, 5, (4, 6, 2)), np.zeros((4, 6, 1))], axis=-1)
    mean, slope = np.array([0.3, -1.0, 0.0, 2.0]), rng.normal(size=(4, 2))
    centre = points[..., :2].mean(axis=1, keepdims=True)
    eta = mean[:, None] + np.einsum("nkj,nj->nk", points[..., :2] - centre, slope)
    got_mean, got_slope = fit_planes(points, eta)
    np.testing.assert_allclose(got_mean, mean, atol=1e-12)
    np.testing.assert_allclose(got_slope, slope, atol=1e-12)
    line = np.array([[[x, 0.0, 0.0] for x in (-2.0, 0.0, 2.0)]])  # along north only
    _, s = fit_planes(line, np.array([[-0.2, 0.0, 0.2]]))
    np.testing.assert_allclose(s, [[0.1, 0.0]], atol=1e-12)


def test_orbital_velocity_at_co_and_over_the_hull_is_the_sea_below_the_surface_in_ned():
    """Deep water, waves travelling east: the surface orbital velocity is aω (cos φ, 0, −sin φ) in NED (w up
    = aω sin φ); a CO in a trough (above the surface) gets the value at the surface; a hull gets the mean over its
    points."""
    period, a = 6.0, 0.5
    omega = 2 * math.pi / period
    k = omega**2 / G
    sea = regular_wave(2 * a, period, from_deg=270.0)

    def expected(east: np.ndarray) -> np.ndarray:
        phase = k * east
        decay = np.exp(np.minimum(0.0, a * np.cos(phase)) * k)  # at min(z = 0, η)
        return a * omega * decay[:, None] * np.column_stack([np.zeros(east.size), np.cos(phase), -np.sin(phase)])

    east = np.linspace(0.0, 2 * math.pi / k, 9, endpoint=False)
    position = np.column_stack([np.zeros(9), east, np.zeros(9)])
    np.testing.assert_allclose(orbital_velocity_at_co(sea, 0.0, position), expected(east), atol=1e-12)
    hull = hull_grid_frd(8.0, 2.0, 2, 2)  # heading north: points at east ± 0.5 m (twice each)
    got = sea_over_hulls(sea, 0.0, position, heading_q(0.0, 9), hull).orbital_velocity_ned
    mean = 0.5 * (expected(east - 0.5) + expected(east + 0.5))
    np.testing.assert_allclose(got, mean, atol=1e-12)
