"""AIS reporting intervals and content (ITU-R M.1371-5), acoustic ranging and modem delivery."""

from __future__ import annotations

import numpy as np
import pytest

from lotusim_core.base import rotations
from lotusim_sensors import acoustic, ais, noise

KN = 1852.0 / 3600.0


@pytest.mark.parametrize(
    ("cls", "sog_kn", "turning", "status", "interval"),
    [
        (ais.CLASS_A, 0.5, False, ais.STATUS_AT_ANCHOR, 180.0),
        (ais.CLASS_A, 5.0, False, ais.STATUS_AT_ANCHOR, 10.0),  # at anchor but moving > 3 kn
        (ais.CLASS_A, 8.0, False, 0, 10.0),
        (ais.CLASS_A, 8.0, True, 0, 10.0 / 3.0),
        (ais.CLASS_A, 18.0, False, 0, 6.0),
        (ais.CLASS_A, 18.0, True, 0, 2.0),
        (ais.CLASS_A, 30.0, False, 0, 2.0),
        (ais.CLASS_B, 1.5, False, 0, 180.0),
        (ais.CLASS_B, 6.0, True, 0, 30.0),
    ],
)
def test_reporting_intervals_follow_itu_r_m1371_tables(cls, sog_kn, turning, status, interval):
    got = ais.report_interval_s(np.array([cls]), np.array([sog_kn * KN]), np.array([turning]), np.array([status]))
    assert got[0] == pytest.approx(interval)


def test_course_speed_and_heading_conventions():
    """Moving north-east at 2 m/s: SOG 2, COG 45 deg; facing west (ENU yaw 180 deg): heading 270 deg."""
    v = np.array([[np.sqrt(2), np.sqrt(2), 0.0], [0.0, -1.0, 0.0]])
    sog, cog = ais.course_and_speed(v)
    np.testing.assert_allclose(sog, [2.0, 1.0])
    np.testing.assert_allclose(cog, [45.0, 180.0])
    yaw = rotations.yaw_enu_rad(rotations.from_rotation_vector(np.array([[0, 0, np.pi]])))
    assert ais.compass_heading_deg(yaw)[0] == pytest.approx(270.0)
    assert ais.compass_heading_deg(np.array([np.pi / 2]))[0] == pytest.approx(0.0)
    mmsi = ais.default_mmsi("wamv_1")
    assert 200_000_000 <= mmsi < 775_000_000 and mmsi == ais.default_mmsi("wamv_1")


def test_acoustic_travel_time_is_range_over_1500():
    """Target 300 m east, 400 m north, 0 m up of a receiver heading east: range 500 m, travel time 1/3 s,
    bearing atan2(400, 300) to the left (counter-clockwise), elevation 0."""
    rb = acoustic.range_bearing(
        np.array([[0.0, 0.0, -50.0]]),
        np.array([[0, 0, 0, 1.0]]),
        np.array([[300.0, 400.0, -50.0]]),
        np.zeros(1),
        np.zeros(1),
        np.zeros((1, 3)),
    )
    assert rb.range_m[0] == pytest.approx(500.0)
    assert rb.travel_time_s[0] == pytest.approx(500.0 / 1500.0)
    assert rb.bearing_rad[0] == pytest.approx(np.arctan2(400, 300))
    assert rb.elevation_rad[0] == pytest.approx(0.0)


def test_bearing_is_in_the_receiver_body_frame():
    """Receiver heading north (yaw +90 deg): a target due east is on the right, bearing -90 deg; a target 100 m
    below is at elevation -90 deg."""
    q = rotations.from_rotation_vector(np.array([[0, 0, np.pi / 2]] * 2))
    rb = acoustic.range_bearing(
        np.zeros((2, 3)), q, np.array([[100.0, 0, 0], [0, 0, -100.0]]), np.zeros(2), np.zeros(2), np.zeros((2, 3))
    )
    assert rb.bearing_rad[0] == pytest.approx(-np.pi / 2)
    assert rb.elevation_rad[1] == pytest.approx(-np.pi / 2)


def test_modem_delay_and_range_limited_loss_statistics():
    """Delivery delay = range / c; loss probability 0 inside 1000 m, 0.5 at 1500 m, 1 beyond 2000 m, measured on
    20000 seeded transmissions."""
    n = 20000
    receivers = np.array([[600.0, 800.0, -10.0], [1500.0, 0.0, -10.0], [2100.0, 0.0, -10.0]])
    source = np.array([0.0, 0.0, -10.0])
    keys = np.array([noise.stream_key(1, "auv_1", f"modem->{k}") for k in range(3)], dtype=np.uint64)
    u = noise.uniform(np.tile(keys, n), np.repeat(np.arange(n), 3), 1)[:, 0]  # transmission i, receiver k
    ok, rng, delay = acoustic.modem_delivery(
        source, np.tile(receivers, (n, 1)), np.full(3 * n, 1000.0), np.full(3 * n, 2000.0), np.zeros(3 * n), u
    )
    delivered = ok.reshape(n, 3).sum(axis=0)
    np.testing.assert_allclose(delay[:3], [1000.0 / 1500.0, 1.0, 2100.0 / 1500.0])
    assert rng[0] == pytest.approx(1000.0)
    assert delivered[0] == n and delivered[2] == 0
    assert delivered[1] / n == pytest.approx(0.5, abs=0.015)
