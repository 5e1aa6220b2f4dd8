"""The ray caster (lotusim_env.raycast): ranges equal analytic distances to known shapes (a circular island, a
sphere, a buoy's cylinder, yawed boxes, a vessel box at an angle, flat and sloped seabeds, the sea surface),
normals face the ray, misses beyond range, and the broad phase loses nothing.
"""

from __future__ import annotations

import numpy as np
import pytest

from lotusim_env.bathymetry import FlatSeabed, GridSeabed
from lotusim_env.environment import build_environment
from lotusim_env.raycast import COAST, NONE, OBJECT, SEA_SURFACE, SEABED, VESSEL, VesselBoxes, cast

N_CIRCLE = 720


def world_of(section):
    return build_environment({"world": section}).world


def unit(v):
    v = np.asarray(v, dtype=float)
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def circle_island(cx=100.0, cy=0.0, r=50.0, n=N_CIRCLE, height=10.0):
    ang = np.arange(n) * 2 * np.pi / n
    return world_of(
        {
            "coast": {
                "polygons": [np.column_stack([cx + r * np.cos(ang), cy + r * np.sin(ang)]).tolist()],
                "elevation_m": height,
            }
        }
    )


def test_circle_island_ranges_and_normals():
    world = circle_island()
    # a fan of horizontal rays from (0, 0, 2) towards the island; analytic distance to the circle
    ang = np.radians(np.linspace(-40.0, 40.0, 161))
    d = np.column_stack([np.cos(ang), np.sin(ang), np.zeros_like(ang)])
    o = np.tile([0.0, 0.0, 2.0], (len(ang), 1))
    hits = cast(world, None, o, d, 200.0)
    c, r = np.array([100.0, 0.0]), 50.0
    b = d[:, :2] @ c
    disc = b * b - (c @ c - r * r)
    expect = np.where(disc >= 0, b - np.sqrt(np.maximum(disc, 0)), np.inf)
    sagitta = r * (1 - np.cos(np.pi / N_CIRCLE))  # largest gap between the 720-gon and its circle: 0.5 mm
    hit = np.isfinite(expect)
    assert hit.sum() > 50 and (~hit).sum() > 20  # the fan grazes past the island on both sides
    # along the ray the polygon lies at most sagitta/cos(incidence) behind the circle; stay away from grazing
    inc = np.abs(np.sin(ang)) * 100.0 / r
    far_from_grazing = hit & (inc < 0.9)
    assert np.all(hits.range_m[far_from_grazing] >= expect[far_from_grazing] - 1e-9)
    assert np.all(
        hits.range_m[far_from_grazing] - expect[far_from_grazing]
        < sagitta / np.sqrt(1 - inc[far_from_grazing] ** 2) + 1e-9
    )
    assert np.all(hits.what[hit] == COAST) and np.all(hits.what[~hit & (np.abs(b) < 1)] == NONE)
    assert np.all(np.isinf(hits.range_m[~hit]))
    # the normal is radial (within the polygon's half step angle), facing the ray
    radial = unit(hits.point[far_from_grazing, :2] - c)
    cosang = np.einsum("ij,ij->i", hits.normal[far_from_grazing, :2], radial)
    assert np.all(cosang > np.cos(np.pi / N_CIRCLE) - 1e-9)
    assert np.all(np.einsum("ij,ij->i", hits.normal[hit], d[hit]) < 0)
    assert np.allclose(hits.reflectivity[hit], world.coast_reflectivity)


def test_coast_walls_end_at_the_land_height_and_the_top_is_hit_from_above():
    world = circle_island(height=10.0)
    o = np.array([[0.0, 0.0, 12.0], [0.0, 0.0, 8.0], [100.0, 0.0, 60.0], [100.0, 0.0, 5.0]])
    d = np.array([[1.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [1.0, 0.0, 0.0]])
    hits = cast(world, None, o, d, 500.0, sea_surface=False)
    assert np.isinf(hits.range_m[0])  # over the 10 m cliff
    assert hits.range_m[1] == pytest.approx(50.0, abs=1e-9)  # the vertex at (50, 0)
    assert hits.range_m[2] == pytest.approx(50.0) and np.allclose(hits.normal[2], [0, 0, 1])  # the top at 10 m
    assert hits.what[2] == COAST
    assert hits.range_m[3] == pytest.approx(50.0, abs=1e-9)  # from inside the island: the far shore
    assert np.allclose(hits.normal[3], [-1, 0, 0], atol=np.pi / N_CIRCLE)  # an edge at the vertex, facing back


def test_sphere_cylinder_and_yawed_boxes():
    world = world_of(
        {
            "objects": [
                {"name": "mine", "kind": "mine", "position": [30.0, 5.0, -2.0], "radius_m": 2.0},
                {"name": "buoy", "kind": "buoy", "position": [10.0, -20.0, 0.0], "radius_m": 0.5, "height_m": 2.0},
                {
                    "name": "pier",
                    "kind": "pier",
                    "position": [-40.0, 0.0, 0.0],
                    "size_m": [4.0, 2.0, 2.0],
                    "yaw_deg": 90,
                },
                {
                    "name": "cube",
                    "kind": "rock",
                    "shape": "box",
                    "position": [0.0, 60.0, 0.0],
                    "size_m": [2, 2, 2],
                    "yaw_deg": 45,
                },
            ]
        }
    )
    mine = np.array([30.0, 5.0, -2.0])
    o = np.array([[0.0, 0.0, -2.0], [0.0, -20.0, 0.5], [10.0, -20.0, 5.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.5]])
    d = unit([mine - o[0], [1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [-1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    hits = cast(world, None, o, d, 200.0, sea_surface=False)
    assert hits.range_m[0] == pytest.approx(np.linalg.norm(mine - o[0]) - 2.0, abs=1e-9)
    assert np.allclose(hits.normal[0], -d[0], atol=1e-9) and hits.index[0] == 0 and hits.what[0] == OBJECT
    assert hits.range_m[1] == pytest.approx(9.5, abs=1e-9) and np.allclose(hits.normal[1], [-1, 0, 0])  # side
    assert hits.range_m[2] == pytest.approx(4.0, abs=1e-9) and np.allclose(hits.normal[2], [0, 0, 1])  # cap
    assert hits.range_m[3] == pytest.approx(39.0, abs=1e-9) and np.allclose(hits.normal[3], [1, 0, 0], atol=1e-12)
    assert hits.range_m[4] == pytest.approx(60.0 - np.sqrt(2.0), abs=1e-9)  # a corner of the 45° cube
    assert hits.index.tolist() == [0, 1, 1, 2, 3]
    assert hits.reflectivity.tolist() == [0.8, 0.9, 0.9, 0.7, 0.5]


def test_vessel_box_at_an_angle_and_its_own_hull_excluded():
    yaw = np.radians(30.0)
    rot = np.array([[np.cos(yaw), -np.sin(yaw), 0.0], [np.sin(yaw), np.cos(yaw), 0.0], [0.0, 0.0, 1.0]])
    centre = np.array([40.0, 10.0, 0.0])
    boxes = VesselBoxes(
        centers=np.array([centre, [0.0, 0.0, 0.0]]),
        rotations=np.stack([rot, np.eye(3)]),
        half_extents=np.array([[5.0, 1.0, 1.5], [2.0, 1.0, 1.0]]),
        reflectivity=np.array([0.7, 0.7]),
        albedo=np.full((2, 3), 0.5),
    )
    side = rot @ np.array([0.0, 1.0, 0.0])  # the port side's outward normal in map
    o = np.array([centre + 20.0 * side, centre + 20.0 * side, [0.0, 0.0, 0.0]])
    d = np.array([-side, -side, [1.0, 0.0, 0.0]])
    hits = cast(world_of({}), None, o, d, 100.0, vessels=boxes, exclude_vessel=np.array([-1, 0, 1]))
    assert hits.range_m[0] == pytest.approx(19.0, abs=1e-9)  # 20 m from the centre, beam/2 = 1 m
    assert np.allclose(hits.normal[0], side, atol=1e-12) and hits.what[0] == VESSEL and hits.index[0] == 0
    assert hits.index[1] != 0 and hits.range_m[1] > 20.0  # the ray that excludes vessel 0 passes through it
    # from inside vessel 1 (excluded: its own hull) the ray goes on; vessel 0 is not on the x axis: a miss
    assert hits.what[2] == NONE


def test_flat_seabed_and_sea_surface():
    world = world_of({})
    theta = np.radians([10.0, 30.0, 90.0])
    d = np.column_stack([np.cos(theta), np.zeros(3), -np.sin(theta)])
    hits = cast(world, FlatSeabed(50.0), np.tile([0.0, 0.0, -10.0], (3, 1)), d, 1000.0)
    assert np.allclose(hits.range_m, 40.0 / np.sin(theta), rtol=1e-12)
    assert np.all(hits.what == SEABED) and np.allclose(hits.normal, [0, 0, 1])
    assert np.allclose(hits.reflectivity, world.seabed_reflectivity)
    # from 2 m above the water, looking 10° down: the surface at 2/sin 10°; from below, looking up: 10/sin 30°
    o = np.array([[0.0, 0.0, 2.0], [0.0, 0.0, -10.0]])
    d = unit([[np.cos(theta[0]), 0, -np.sin(theta[0])], [np.cos(theta[1]), 0, np.sin(theta[1])]])
    hits = cast(world, FlatSeabed(50.0), o, d, 1000.0)
    assert hits.range_m == pytest.approx([2.0 / np.sin(theta[0]), 10.0 / np.sin(theta[1])], rel=1e-12)
    assert np.all(hits.what == SEA_SURFACE)
    assert np.allclose(hits.normal, [[0, 0, 1], [0, 0, -1]])


def test_sloped_grid_seabed_marched_and_bisected():
    # H = 20 + 0.1 x: bilinear interpolation of a plane is the plane, so the exact crossing is known
    x = np.arange(-100.0, 310.0, 10.0)
    y = np.arange(-50.0, 60.0, 10.0)
    depth = 20.0 + 0.1 * x[:, None] + 0.0 * y[None, :]
    bed = GridSeabed(x, y, depth)
    theta = np.radians([15.0, 30.0, 60.0])
    d = np.column_stack([np.cos(theta), np.zeros(3), -np.sin(theta)])
    hits = cast(world_of({}), bed, np.tile([0.0, 0.0, -5.0], (3, 1)), d, 500.0)
    expect = 15.0 / (np.sin(theta) - 0.1 * np.cos(theta))
    assert np.allclose(hits.range_m, expect, atol=1e-5)
    assert np.all(hits.what == SEABED)
    assert np.allclose(hits.normal, np.tile(unit([0.1, 0.0, 1.0]), (3, 1)), atol=1e-6)
    # a ray parallel to the bed never reaches it over the grid (x <= 300 m); past the grid the bed is clamped to
    # its edge depth (50 m), which the ray meets at x = 450 m
    ray = unit([[1.0, 0.0, -0.1]])
    assert np.isinf(cast(world_of({}), bed, np.array([[0.0, 0.0, -5.0]]), ray, 290.0).range_m[0])
    far = cast(world_of({}), bed, np.array([[0.0, 0.0, -5.0]]), ray, 1000.0)
    assert far.range_m[0] == pytest.approx(450.0 * np.sqrt(1.01), abs=1e-5)


def test_misses_beyond_max_range():
    world = world_of({"objects": [{"name": "m", "kind": "mine", "position": [100.0, 0.0, 0.0]}]})
    hits = cast(world, FlatSeabed(30.0), np.zeros((1, 3)), np.array([[1.0, 0.0, 0.0]]), 99.0)
    assert np.isinf(hits.range_m[0]) and hits.what[0] == NONE and hits.index[0] == -1
    assert np.all(np.isnan(hits.point[0])) and np.all(hits.normal[0] == 0)
    hits = cast(world, FlatSeabed(30.0), np.zeros((1, 3)), np.array([[1.0, 0.0, 0.0]]), 100.0)
    assert hits.range_m[0] == pytest.approx(99.5)


def test_broad_phase_loses_nothing():
    """Random rays from many origins in a scene with a coast, objects and vessels: the hits within 60 m are the
    same as with a 10x larger range (whose cells hold every candidate of the smaller one)."""
    rng = np.random.default_rng(5)
    world = world_of(
        {
            "coast": {"polygons": [[[0, 0], [80, 10], [60, 90], [-20, 70]], [[150, -50], [200, -40], [170, 20]]]},
            "objects": [
                {"name": f"b{i}", "kind": "buoy", "position": [float(x), float(y), 0.0]}
                for i, (x, y) in enumerate(rng.uniform(-100, 250, size=(40, 2)))
            ],
        }
    )
    v = 30
    yaw = rng.uniform(-np.pi, np.pi, v)
    rot = np.zeros((v, 3, 3))
    rot[:, 0, 0], rot[:, 0, 1], rot[:, 1, 0], rot[:, 1, 1], rot[:, 2, 2] = (
        np.cos(yaw),
        -np.sin(yaw),
        np.sin(yaw),
        np.cos(yaw),
        1.0,
    )
    boxes = VesselBoxes(
        np.column_stack([rng.uniform(-100, 250, (v, 2)), np.zeros(v)]),
        rot,
        np.tile([4.0, 1.5, 1.0], (v, 1)),
        np.full(v, 0.7),
        np.full((v, 3), 0.5),
    )
    o = np.column_stack([rng.uniform(-150, 300, (2000, 2)), rng.uniform(-3, 3, 2000)])
    d = unit(rng.normal(size=(2000, 3)) * [1, 1, 0.2])
    near = cast(world, FlatSeabed(20.0), o, d, 60.0, vessels=boxes)
    far = cast(world, FlatSeabed(20.0), o, d, 600.0, vessels=boxes)
    within = far.range_m <= 60.0
    assert within.sum() > 1000 and np.any(near.what == VESSEL) and np.any(near.what == COAST)
    assert np.array_equal(np.isfinite(near.range_m), within)
    assert np.allclose(near.range_m[within], far.range_m[within], rtol=0, atol=1e-12)
    assert np.array_equal(near.what[within], far.what[within]) and np.array_equal(near.index[within], far.index[within])


def test_bumpy_grid_seabed_against_a_fine_brute_force_march():
    """A rough bilinear bed (5 m cells, 20-30 m deep with ±1.5 m of random relief per node): 400 rays descending at
    3-60° from 2 m deep meet it where a brute-force march in 2 cm steps (then bisected) finds the first crossing:
    within 1e-4 m, but for the rays that graze a ridge (leave and re-enter the water within half a cell), which the
    2.5 m march may step over: then it finds a later crossing, never an earlier one."""
    rng = np.random.default_rng(11)
    x = np.arange(0.0, 505.0, 5.0)
    y = np.arange(-100.0, 105.0, 5.0)
    depth = 25.0 + 5.0 * np.sin(x[:, None] / 40.0) * np.cos(y[None, :] / 30.0)
    bed = GridSeabed(x, y, depth + rng.uniform(-1.5, 1.5, depth.shape))
    n, max_range = 400, 150.0
    el = np.radians(rng.uniform(3.0, 60.0, n))
    az = np.radians(rng.uniform(-30.0, 30.0, n))
    d = np.column_stack([np.cos(el) * np.cos(az), np.cos(el) * np.sin(az), -np.sin(el)])
    o = np.tile([5.0, 0.0, -2.0], (n, 1))
    hits = cast(world_of({}), bed, o, d, max_range, sea_surface=False)

    def height(t):  # height above the bed (m) of each ray at distances t (n, k)
        p = o[:, None, :] + t[..., None] * d[:, None, :]
        return p[..., 2] + bed.seabed_depth_m(p[..., 0], p[..., 1])

    t = np.arange(0.0, max_range + 0.02, 0.02)[None, :].repeat(n, axis=0)
    below = height(t) <= 0.0
    first = np.where(below.any(axis=1), below.argmax(axis=1), -1)
    found = first > 0
    a, b = t[found, first[found] - 1], t[found, first[found]]
    for _ in range(30):
        m = 0.5 * (a + b)
        p = o[found] + m[:, None] * d[found]
        under = p[:, 2] + bed.seabed_depth_m(p[:, 0], p[:, 1]) <= 0.0
        a, b = np.where(under, a, m), np.where(under, m, b)
    ref = np.full(n, np.inf)
    ref[found] = 0.5 * (a + b)
    assert found.sum() > 300
    agree = np.isclose(hits.range_m, ref, atol=1e-4, rtol=0) | (np.isinf(ref) & np.isinf(hits.range_m))
    assert agree.mean() >= 0.98, f"{(~agree).sum()} of {n} rays disagree"
    assert np.all(hits.range_m[~agree] > ref[~agree])  # a grazed ridge stepped over: a later crossing
    assert np.all(hits.what[np.isfinite(hits.range_m)] == SEABED)
