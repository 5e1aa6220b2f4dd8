"""The ray caster's compiled kernels (lotusim_env.raycast) equal NumPy references: objects over every (ray,
object) pair; the sea surface, a flat seabed, points, facing normals and materials.

The reference below is the vectorised NumPy computation the ray caster used before its object tests were compiled
(sphere and vertical cylinder quadratics, the slab method [KayKajiya1986] for yawed boxes, the nearest hit kept
per ray): kept here, not in the product, as the expected values of random rays against random shapes. One
change: its 3-term dot products are summed left to right (dot3), as the kernel does; np.einsum sums them as
(x0 y0 + x2 y2) + x1 y1 (a SIMD detail), and near-grazing sphere hits amplify that last-bit difference through the
cancellation in b² − (|o − c|² − r²) to ~5e-14 relative (2.4e-12 m at 53 m).
"""

from __future__ import annotations

import numpy as np

from lotusim_env.bathymetry import FlatSeabed
from lotusim_env.raycast import (
    EPS_T,
    NONE,
    OBJECT,
    SEA_SURFACE,
    SEA_SURFACE_ALBEDO,
    SEA_SURFACE_REFLECTIVITY,
    SEABED,
    cast,
)
from lotusim_env.world import BOX, CYLINDER, SPHERE, World

MAX_RANGE_M = 60.0


def dot3(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Row-wise dot products of (N, 3) arrays, summed left to right."""
    return (x[:, 0] * y[:, 0] + x[:, 1] * y[:, 1]) + x[:, 2] * y[:, 2]


def ref_sphere(o, d, c, half, _yaw):
    oc = o - c
    r = half[:, 0]
    b = dot3(oc, d)
    disc = b * b - (dot3(oc, oc) - r * r)
    with np.errstate(invalid="ignore"):
        t = -b - np.sqrt(disc)
    t = np.where((disc >= 0.0) & (t > EPS_T), t, np.inf)
    n = (o + np.where(np.isfinite(t), t, 0.0)[:, None] * d - c) / r[:, None]
    return t, n


def ref_cylinder(o, d, c, half, _yaw):
    r, hz = half[:, 0], half[:, 2]
    oc = o - c
    a = d[:, 0] ** 2 + d[:, 1] ** 2
    b = oc[:, 0] * d[:, 0] + oc[:, 1] * d[:, 1]
    disc = b * b - a * (oc[:, 0] ** 2 + oc[:, 1] ** 2 - r * r)
    with np.errstate(invalid="ignore", divide="ignore"):
        t_side = (-b - np.sqrt(disc)) / a
        z_side = oc[:, 2] + t_side * d[:, 2]
        t_side = np.where((disc >= 0) & (a > 0) & (t_side > EPS_T) & (np.abs(z_side) <= hz), t_side, np.inf)
        cap_z = np.where(oc[:, 2] > 0.0, hz, -hz)
        t_cap = (cap_z - oc[:, 2]) / d[:, 2]
        pc = oc[:, :2] + t_cap[:, None] * d[:, :2]
        t_cap = np.where(
            (np.abs(oc[:, 2]) > hz) & (t_cap > EPS_T) & (np.einsum("ij,ij->i", pc, pc) <= r * r), t_cap, np.inf
        )
    side = t_side <= t_cap
    t = np.minimum(t_side, t_cap)
    p = oc + np.where(np.isfinite(t), t, 0.0)[:, None] * d
    n_side = np.column_stack([p[:, 0] / r, p[:, 1] / r, np.zeros(len(p))])
    n_cap = np.column_stack([np.zeros(len(p)), np.zeros(len(p)), np.sign(cap_z)])
    return t, np.where(side[:, None], n_side, n_cap)


def ref_yaw_box(o, d, c, half, yaw):
    cy, sy = np.cos(yaw), np.sin(yaw)
    rot = np.zeros((len(yaw), 3, 3))
    rot[:, 0, 0], rot[:, 0, 1], rot[:, 1, 0], rot[:, 1, 1], rot[:, 2, 2] = cy, -sy, sy, cy, 1.0
    ol = np.einsum("nji,nj->ni", rot, o - c)
    dl = np.einsum("nji,nj->ni", rot, d)
    with np.errstate(divide="ignore", invalid="ignore"):
        inv = 1.0 / dl
        t1, t2 = (-half - ol) * inv, (half - ol) * inv
    tmin, tmax = np.minimum(t1, t2), np.maximum(t1, t2)
    par = dl == 0.0
    inside = np.abs(ol) <= half
    tmin = np.where(par, np.where(inside, -np.inf, np.inf), tmin)
    tmax = np.where(par, np.where(inside, np.inf, -np.inf), tmax)
    axis = np.argmax(tmin, axis=1)
    t_in, t_out = tmin.max(axis=1), tmax.min(axis=1)
    t = np.where((t_in <= t_out) & (t_in > EPS_T), t_in, np.inf)
    nl = np.zeros_like(ol)
    rows = np.arange(len(ol))
    nl[rows, axis] = -np.sign(dl[rows, axis])
    return t, np.einsum("nij,nj->ni", rot, nl)


def ref_objects(world: World, o, d, max_range_m):
    """Nearest object per ray by brute force over every (ray, object) pair: (t (inf: none), row, normal)."""
    rays = np.repeat(np.arange(len(o)), world.object_count)
    obj = np.tile(np.arange(world.object_count), len(o))
    t_all, n_all = np.full(len(rays), np.inf), np.zeros((len(rays), 3))
    c, half, yaw = world.object_centers[obj], world.object_half_extents[obj], world.object_yaw_rad[obj]
    for code, fn in ((SPHERE, ref_sphere), (CYLINDER, ref_cylinder), (BOX, ref_yaw_box)):
        m = world.object_shapes[obj] == code
        t_all[m], n_all[m] = fn(o[rays[m]], d[rays[m]], c[m], half[m], yaw[m])
    t_all = np.where(t_all <= max_range_m, t_all, np.inf)
    t = t_all.reshape(len(o), -1)
    row = np.argmin(t, axis=1)
    best = t[np.arange(len(o)), row]
    n = n_all.reshape(len(o), -1, 3)[np.arange(len(o)), row]
    n = np.where((np.einsum("ij,ij->i", n, d) > 0.0)[:, None], -n, n)  # facing the origin, as cast returns them
    hit = np.isfinite(best)
    return best, np.where(hit, row, -1), np.where(hit[:, None], n, 0.0)


def random_world(rng: np.random.Generator, count: int = 60) -> World:
    shapes = rng.integers(0, 3, count)
    half = rng.uniform(0.3, 4.0, (count, 3))
    half[shapes == SPHERE, 1:] = half[shapes == SPHERE, :1]  # a sphere: radius in every column
    half[shapes == CYLINDER, 1] = half[shapes == CYLINDER, 0]
    return World(
        object_names=tuple(f"o{i}" for i in range(count)),
        object_kinds=("buoy",) * count,
        object_shapes=shapes,
        object_centers=rng.uniform([-40.0, -40.0, -15.0], [40.0, 40.0, 5.0], (count, 3)),
        object_half_extents=half,
        object_yaw_rad=rng.uniform(-np.pi, np.pi, count),
        object_reflectivity=rng.uniform(0.1, 0.9, count),
        object_albedo=rng.uniform(0.0, 1.0, (count, 3)),
    )


def random_rays(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    o = rng.uniform([-50.0, -50.0, -20.0], [50.0, 50.0, 10.0], (n, 3))
    d = rng.normal(size=(n, 3))
    # a quarter of the rays along the axes or horizontal: the slab method's parallel cases, the cylinder's caps
    q = n // 4
    d[:q:3, :2] = 0.0
    d[1:q:3, 2] = 0.0
    d[2:q:3, 1:] = 0.0
    return o, d / np.linalg.norm(d, axis=1, keepdims=True)


def test_object_kernel_equals_numpy_reference():
    rng = np.random.default_rng(19)
    for trial in range(3):
        world = random_world(rng)
        o, d = random_rays(rng, 4000)
        hits = cast(world, None, o, d, MAX_RANGE_M, sea_surface=False)
        t, row, n = ref_objects(world, o, d, MAX_RANGE_M)
        hit = np.isfinite(t)
        assert hit.sum() > 400 and (~hit).sum() > 400, trial  # both hits and misses are exercised
        assert np.array_equal(np.isfinite(hits.range_m), hit)
        np.testing.assert_allclose(hits.range_m[hit], t[hit], rtol=0.0, atol=1e-12)
        assert np.array_equal(hits.index, row)
        assert np.all(hits.what[hit] == OBJECT) and np.all(hits.what[~hit] == NONE)
        np.testing.assert_allclose(hits.normal, n, rtol=0.0, atol=1e-12)
        for code in (SPHERE, CYLINDER, BOX):  # every shape is hit
            assert np.any(world.object_shapes[row[hit]] == code)


def ref_planes_and_materials(world: World, depth_m: float, o, d, max_range_m):
    """The previous NumPy path for the sea surface (z = 0, either side), a flat seabed (strictly nearer hits only)
    and the objects, offered in cast's order, then points, facing normals and materials: a dict of Hits fields."""
    with np.errstate(divide="ignore", invalid="ignore"):
        t_sea = -o[:, 2] / d[:, 2]
        t_bed = (-depth_m - o[:, 2]) / d[:, 2]
    sea = np.isfinite(t_sea) & (t_sea > EPS_T) & (o[:, 2] != 0.0) & (t_sea <= max_range_m)
    t = np.where(sea, t_sea, max_range_m)
    what = np.where(sea, SEA_SURFACE, NONE)
    normal = np.where(sea[:, None], [0.0, 0.0, 1.0], 0.0)
    t_obj, row, n_obj = ref_objects(world, o, d, max_range_m)
    obj = np.isfinite(t_obj) & (t_obj <= t)
    t, what, normal = np.where(obj, t_obj, t), np.where(obj, OBJECT, what), np.where(obj[:, None], n_obj, normal)
    bed = np.isfinite(t_bed) & (t_bed > EPS_T) & (o[:, 2] > -depth_m) & (t_bed < t)
    t, what, normal = np.where(bed, t_bed, t), np.where(bed, SEABED, what), np.where(bed[:, None], [0, 0, 1.0], normal)
    hit = what != NONE
    normal = np.where((np.einsum("ij,ij->i", normal, d) > 0.0)[:, None], -normal, normal) * hit[:, None]
    index = np.where(what == OBJECT, row, -1)
    refl = np.select(
        [what == OBJECT, what == SEABED, what == SEA_SURFACE],
        [world.object_reflectivity[np.maximum(index, 0)], world.seabed_reflectivity, SEA_SURFACE_REFLECTIVITY],
    )
    albedo = np.select(
        [(what == OBJECT)[:, None], (what == SEABED)[:, None], (what == SEA_SURFACE)[:, None]],
        [world.object_albedo[np.maximum(index, 0)], world.seabed_albedo[None, :], np.array(SEA_SURFACE_ALBEDO)[None]],
    )
    return {
        "range_m": np.where(hit, t, np.inf),
        "point": np.where(hit[:, None], o + t[:, None] * d, np.nan),
        "normal": normal,
        "what": what,
        "index": index,
        "reflectivity": refl,
        "albedo": albedo,
    }


def test_planes_and_materials_equal_numpy_reference():
    rng = np.random.default_rng(20)
    world = random_world(rng)
    o, d = random_rays(rng, 6000)
    hits = cast(world, FlatSeabed(12.0), o, d, MAX_RANGE_M, sea_surface=True)
    expect = ref_planes_and_materials(world, 12.0, o, d, MAX_RANGE_M)
    for code in (NONE, OBJECT, SEABED, SEA_SURFACE):  # every kind of hit, and misses, is exercised
        assert np.sum(expect["what"] == code) > 200, code
    for name, value in expect.items():
        np.testing.assert_allclose(getattr(hits, name), value, rtol=0.0, atol=1e-12, err_msg=name)
