"""Geodesy (lotusim_core.base.geodesy): round trips and offsets against closed-form ellipsoid geometry."""

from __future__ import annotations

import numpy as np
import pytest

from lotusim_core.base.geodesy import (
    WGS84_A_M,
    WGS84_E2,
    GeodeticOrigin,
    enu_to_geodetic,
    geodetic_to_enu,
    meridian_radius_m,
    prime_vertical_radius_m,
)

ORIGINS = [GeodeticOrigin(0.0, 0.0, 0.0), GeodeticOrigin(36.8, -121.9, 0.0), GeodeticOrigin(-43.3, 5.37, 12.0)]


@pytest.mark.parametrize("origin", ORIGINS)
def test_round_trip_is_sub_millimetre_over_50_km(origin):
    rng = np.random.default_rng(3)
    points = rng.uniform([-50e3, -50e3, -500.0], [50e3, 50e3, 50.0], size=(1000, 3))
    back = geodetic_to_enu(enu_to_geodetic(points, origin), origin)
    assert np.max(np.abs(back - points)) < 1e-3


def test_origin_maps_to_origin():
    origin = ORIGINS[1]
    np.testing.assert_allclose(enu_to_geodetic(np.zeros((1, 3)), origin)[0], [36.8, -121.9, 0.0], atol=1e-8)


@pytest.mark.parametrize("lat0", [0.0, 36.8, -60.0])
def test_same_latitude_offset_matches_ecef_geometry(lat0):
    """A point on the ellipsoid at the origin's latitude, dlon east: in the origin's ENU frame
    e = N cos(phi) sin(dlon), n = N sin(phi) cos(phi) (1 - cos dlon), u = -N cos^2(phi) (1 - cos dlon)
    (rotation of the ECEF position N cos(phi) [cos lon, sin lon] into ENU; N = prime-vertical radius)."""
    origin = GeodeticOrigin(lat0, 10.0, 0.0)
    dlon = np.radians(0.05)
    n_radius = WGS84_A_M / np.sqrt(1 - WGS84_E2 * np.sin(np.radians(lat0)) ** 2)
    phi = np.radians(lat0)
    expected = [
        n_radius * np.cos(phi) * np.sin(dlon),
        n_radius * np.sin(phi) * np.cos(phi) * (1 - np.cos(dlon)),
        -n_radius * np.cos(phi) ** 2 * (1 - np.cos(dlon)),
    ]
    enu = geodetic_to_enu(np.array([[lat0, 10.05, 0.0]]), origin)[0]
    np.testing.assert_allclose(enu, expected, atol=1e-4)


def test_small_north_step_is_meridian_arc():
    """10 m north at 45 deg moves the latitude by 10 / M(45 deg) rad, M = a(1-e^2)/(1-e^2 sin^2)^1.5
    = 6 367 381.8 m (WGS84); 10 m east moves the longitude by 10 / (N cos phi)."""
    assert meridian_radius_m(45.0) == pytest.approx(6367381.8, abs=0.1)
    origin = GeodeticOrigin(45.0, 0.0, 0.0)
    geo = enu_to_geodetic(np.array([[0.0, 10.0, 0.0], [10.0, 0.0, 0.0]]), origin)
    assert geo[0, 0] - 45.0 == pytest.approx(np.degrees(10.0 / meridian_radius_m(45.0)), rel=1e-6)
    assert geo[1, 1] == pytest.approx(np.degrees(10.0 / (prime_vertical_radius_m(45.0) * np.cos(np.pi / 4))), rel=1e-6)


def test_bad_origin_names_the_key():
    with pytest.raises(ValueError, match="latitude"):
        GeodeticOrigin(95.0, 0.0)
    with pytest.raises(ValueError, match="environment.origin: unknown keys"):
        GeodeticOrigin.from_mapping({"lat": 1.0}, where="environment.origin")
