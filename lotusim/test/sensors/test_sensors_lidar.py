"""2-D and 3-D LiDAR (lotusim_sensors.lidar and its samplers), without ROS: returns at the analytic distance of a
wall, a buoy and another vessel's hull box; the sea surface returns nothing; noise σ and dropout probability as
configured and repeatable (same seed, same scan); limits and parameters checked when a suite is parsed.
"""

from __future__ import annotations

import numpy as np
import pytest

from lotusim_env.environment import build_environment
from lotusim_sensors import lidar
from lotusim_sensors.banks import SensorBanks
from lotusim_sensors.roster import Roster
from lotusim_sensors.samplers import SAMPLERS, Site
from lotusim_sensors.suite import KINDS, parse_suite

EAST = [0.0, 0.0, 0.0, 1.0]
WALL = [[30.0, -500.0], [600.0, -500.0], [600.0, 500.0], [30.0, 500.0]]  # land from x = 30 m eastwards
QUIET = {"range_noise_std_m": 0.0}


HULL = (np.array([2.5, 1.2, 0.8]), np.array([0.1, 0.0, 0.3]))  # half extents, centre (m, base_link FLU)


def rig(states, kinds_params, world=None, hulls=None):
    """A roster {name: (position, quaternion)}, banks with `kinds_params` {kind: params} on every vessel, a site."""
    roster = Roster()
    slots = roster.update("w0", tuple(states)).slots
    pos = np.array([s[0] for s in states.values()], dtype=float)
    quat = np.array([s[1] for s in states.values()], dtype=float)
    roster.set_state(slots, pos, quat, np.zeros((len(pos), 6)), np.zeros((len(pos), 6)), None)
    for name, hull in (hulls or {}).items():
        roster.set_hull(roster.slot_of[name], *hull)
    banks = SensorBanks(KINDS, roster.capacity)
    suite = parse_suite(kinds_params, "test")
    for name, slot in roster.slot_of.items():
        for kind in kinds_params:
            banks[kind].configure(slot, suite[kind], 7, name, 0)
    env = build_environment({"bathymetry": {"model": "flat", "depth_m": 30.0}, "world": world or {}})
    return roster, banks, slots, Site(env, None, np.zeros(3), 1500.0, {})


def run(kind, roster, banks, slots, site, t_ns=0):
    bank = banks[kind]
    due = bank.due(slots, t_ns)
    out = SAMPLERS[kind](bank, due, t_ns, roster, site)
    bank.schedule(due, t_ns, out.period_s)
    return due, out


def test_2d_scan_sees_the_coast_a_buoy_and_another_hull_at_their_distances():
    world = {
        "coast": {"polygons": [WALL]},
        "objects": [{"name": "b", "kind": "buoy", "position": [0.0, 12.0, 0.0], "radius_m": 0.5, "height_m": 4.0}],
    }
    yaw90 = [0.0, 0.0, np.sin(np.pi / 4), np.cos(np.pi / 4)]
    states = {"usv": ([0.0, 0.0, 0.0], EAST), "other": ([0.0, -20.0, 0.0], yaw90)}
    params = {"lidar_2d": {**QUIET, "beams": 360, "fov_deg": 360, "position_frd_m": [0.0, 0.0, -1.0]}}
    roster, banks, slots, site = rig(states, params, world, hulls={"usv": HULL, "other": HULL})
    due, out = run("lidar_2d", roster, banks, slots, site)
    ranges = dict(zip(due.tolist(), out.columns[0], strict=True))[roster.slot_of["usv"]]
    angles, inc = lidar.beams_2d(360, 360.0)
    assert inc == pytest.approx(np.radians(1.0)) and angles[0] == pytest.approx(-np.pi)
    at = {round(np.degrees(a)): i for i, a in enumerate(angles)}
    assert ranges[at[0]] == pytest.approx(30.0, abs=1e-9)  # the coast wall, due east
    assert ranges[at[30]] == pytest.approx(30.0 / np.cos(np.radians(30.0)), abs=1e-9)
    assert ranges[at[90]] == pytest.approx(12.0 - 0.5, abs=1e-9)  # the buoy, due north
    # the other vessel, 20 m south, bow to the north: its box's long axis is along y: the beam meets its bow end
    half, centre = HULL
    assert ranges[at[-90]] == pytest.approx(20.0 - centre[0] - half[0], abs=1e-9)
    # its own hull (the sensor is inside it) is not seen; nothing to the west within 80 m: no return
    assert np.isinf(ranges[at[180 - 360]]) and np.isinf(ranges[at[135]])


def test_3d_scan_the_sea_surface_returns_nothing_and_points_are_in_the_sensor_frame():
    world = {"coast": {"polygons": [WALL], "elevation_m": 50.0}}
    params = {"lidar_3d": {**QUIET, "horizontal_beams": 360, "position_frd_m": [0.0, 0.0, -2.0]}}
    roster, banks, slots, site = rig({"usv": ([0.0, 0.0, 0.0], EAST)}, params, world)
    _, out = run("lidar_3d", roster, banks, slots, site)
    cloud = out.columns[0][0]
    assert cloud.dtype == np.float32 and cloud.shape[1] == 4
    # every return is on the wall x = 30 m (sensor at x = 0, 2 m up: the points' x in the sensor frame is 30)
    assert np.allclose(cloud[:, 0], 30.0, atol=1e-4)
    # channels looking down meet the sea 2 m / tan(-el) away: -5° at 22.9 m, before the wall (no return); -3° at
    # 38.2 m, behind the wall at 30 m, so the -3° channel returns from the wall
    elevations = np.degrees(np.arctan2(cloud[:, 2], np.hypot(cloud[:, 0], cloud[:, 1])))
    assert elevations.min() > -4.0 and np.isclose(elevations.min(), -3.0, atol=0.01)
    # intensity = reflectivity × |cos incidence| of the wall
    d = cloud[:, :3] / np.linalg.norm(cloud[:, :3], axis=1, keepdims=True)
    assert np.allclose(cloud[:, 3], site.env.world.coast_reflectivity * np.abs(d[:, 0]), atol=1e-6)


def test_noise_sigma_dropout_and_same_seed_same_scan():
    world = {"coast": {"polygons": [[[-500, 40], [500, 40], [500, 600], [-500, 600]]]}}  # land from y = 40 m
    params = {"lidar_2d": {"beams": 181, "fov_deg": 20, "range_noise_std_m": 0.05, "dropout_probability": 0.2}}
    north = [0.0, 0.0, np.sin(np.pi / 4), np.cos(np.pi / 4)]
    states = {f"v{i}": ([50.0 * i - 250.0, 0.0, 0.0], north) for i in range(10)}
    roster, banks, slots, site = rig(states, params, world)
    errors, lost = [], 0
    angles = lidar.beams_2d(181, 20.0)[0]
    truth = 40.0 / np.cos(angles)
    scans = []
    for k in range(10):
        _, out = run("lidar_2d", roster, banks, slots, site, t_ns=k * 40_000_000)
        r = np.array(out.columns[0])
        scans.append(r)
        lost += np.isinf(r).sum()
        errors.append((r - truth)[np.isfinite(r)])
    e = np.concatenate(errors)
    n = 10 * 10 * 181
    assert lost / n == pytest.approx(0.2, abs=0.02)  # 18,100 beams: 3 σ of the fraction is 0.009
    assert e.std() == pytest.approx(0.05, rel=0.03) and abs(e.mean()) < 0.003
    # the same seed gives the same scans; every sample differs from the previous
    roster2, banks2, slots2, site2 = rig(states, params, world)
    _, again = run("lidar_2d", roster2, banks2, slots2, site2)
    assert np.array_equal(np.array(again.columns[0]), scans[0])
    assert not np.array_equal(scans[0], scans[1])


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"lidar_2d": {"beams": 0}}, "lidar_2d.beams: expected a whole number >= 1"),
        ({"lidar_2d": {"beams": 10.5}}, "lidar_2d.beams: expected a whole number >= 1"),
        ({"lidar_2d": {"fov_deg": 400}}, "lidar_2d.fov_deg: expected a field of view in (0, 360]"),
        ({"lidar_2d": {"min_range_m": 90}}, "lidar_2d.max_range_m: expected 0 <= min_range_m < max_range_m"),
        ({"lidar_3d": {"vertical_min_deg": 20}}, "lidar_3d.vertical_max_deg: expected -90 <= vertical_min_deg"),
        ({"lidar_3d": {"dropout_probability": 2}}, "lidar_3d.dropout_probability: expected a probability"),
        ({"lidar_3d": {"range_noise_std_m": -1}}, "lidar_3d.range_noise_std_m: expected a non-negative"),
        ({"lidar_2d": {"beam": 3}}, "unknown parameter 'beam'"),
    ],
)
def test_bad_lidar_parameters_are_refused(params, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace("]", r"\]").replace("[", r"\[")):
        parse_suite(params, "test")


def test_defaults_are_the_datasheets():
    suite = parse_suite({"lidar_2d": None, "lidar_3d": None}, "test")
    two, three = suite["lidar_2d"], suite["lidar_3d"]
    assert (two["beams"], two["fov_deg"], two["max_range_m"], two["rate_hz"]) == (381, 190, 80, 25)  # LMS511
    assert lidar.beams_2d(381, 190.0)[1] == pytest.approx(np.radians(0.5))
    assert (three["channels"], three["vertical_min_deg"], three["vertical_max_deg"]) == (16, -15, 15)  # VLP-16
    assert (three["horizontal_beams"], three["max_range_m"], three["range_noise_std_m"]) == (1800, 100, 0.03)
    d = lidar.directions_3d(1800, 360.0, 16, -15.0, 15.0)
    el = np.degrees(np.arcsin(d[::1800, 2]))
    assert np.allclose(el, np.arange(-15.0, 16.0, 2.0))  # 2° between channels


def test_hull_of_a_catalogue_model():
    pytest.importorskip("lotusim_core.base.hull_box")
    half, centre = lidar.hull_of_model("wamv")
    assert np.all(half > 0.3) and half[0] > half[1]  # a WAM-V is longer than wide
    assert np.all(lidar.hull_of_model("no_such_model")[0] == 0.0)


def test_beam_normals_are_standard_independent_and_repeatable():
    """Both Box–Muller outputs of a pair (beams i and i + B/2) are used: each standard normal, uncorrelated."""
    keys = np.arange(1, 2001, dtype=np.uint64) * np.uint64(0x9E3779B9)
    z = lidar.beam_normals(keys, np.zeros(2000, dtype=np.uint64), 10)  # 2,000 scans of 10 beams
    assert z.shape == (2000, 10)
    assert abs(z.mean()) < 0.05 and z.std() == pytest.approx(1.0, abs=0.03)  # 20,000 draws: 3 sigma = 0.021
    corr = np.corrcoef(z.T)
    assert np.max(np.abs(corr - np.eye(10))) < 0.08  # 2,000 pairs: 3 sigma of a correlation = 0.067
    assert np.array_equal(z, lidar.beam_normals(keys, np.zeros(2000, dtype=np.uint64), 10))
    assert lidar.beam_normals(keys[:1], np.zeros(1, dtype=np.uint64), 7).shape == (1, 7)  # odd beam count


def test_a_tilted_mount_turns_the_beams_about_body_y():
    """tilt_deg pitches the scan plane down (positive) or up about base_link y: 2 m above the sea, 30 m from a 20 m
    cliff, the forward beam tilted 5° up meets it at 30/cos 5°; tilted 5° down it meets the sea at 2/tan 5° =
    22.9 m first (no return)."""
    world = {"coast": {"polygons": [WALL], "elevation_m": 20.0}}
    ranges = {}
    for tilt in (-5.0, 5.0):
        params = {"lidar_2d": {**QUIET, "beams": 181, "fov_deg": 180, "tilt_deg": tilt, "position_frd_m": [0, 0, -2]}}
        roster, banks, slots, site = rig({"usv": ([0.0, 0.0, 0.0], EAST)}, params, world)
        _, out = run("lidar_2d", roster, banks, slots, site)
        ranges[tilt] = out.columns[0][0]
    assert ranges[-5.0][90] == pytest.approx(30.0 / np.cos(np.radians(5.0)), abs=1e-9)
    assert np.isinf(ranges[5.0][90])
    # the beam 60° to the left in the plane tilted 5° up: direction (cos 60° cos 5°, sin 60°, cos 60° sin 5°) in
    # base_link, which meets the wall x = 30 m at t = 30 / (cos 60° cos 5°)
    assert ranges[-5.0][150] == pytest.approx(30.0 / (np.cos(np.radians(60.0)) * np.cos(np.radians(5.0))), abs=1e-9)
