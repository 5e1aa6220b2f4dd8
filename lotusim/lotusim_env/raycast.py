"""Rays against the world: coast walls and tops, objects, other vessels' boxes, the seabed and the sea surface.

ROS-free and vectorised over rays (no Python loop over rays, vessels or segments). Frames: `map` ENU, metres.
Used by the LiDAR (lotusim_sensors.lidar) and by the radar, sonar and camera models.

What a ray meets, and how (t: distance along the unit direction d from the origin o, 0 < t <= max range):
- **Coast**: land is a vertical prism (lotusim_env.world): each polygon edge a wall from −∞ up to the land height
  h, and a flat top at z = h. Wall: the 2-D ray–segment intersection o_xy + t d_xy = a + u (b − a), 0 <= u <= 1,
  solved with 2-D cross products (t = ((a − o) × e)/(d × e), u = ((a − o) × d)/(d × e), e = b − a), valid when
  the hit's z <= h. Top: t = (h − o_z)/d_z, valid when the point is on land (shapely).
- **Objects**: sphere (the quadratic |o + t d − c|² = r²), vertical cylinder (the same in x, y, bounded in z, and
  its two caps), box with a yaw (the slab method of Kay & Kajiya [KayKajiya1986] in the box's frame).
- **Vessels**: oriented boxes (centre, rotation map ← body, half extents), the slab method in the body frame.
The coast walls, the objects and the vessel boxes are tested in compiled loops (numba) over each ray's
candidates; the planes and the bookkeeping are NumPy.
- **Seabed** z = −H(x, y): flat (a plane, exact); gridded (bilinear H, lotusim_env.bathymetry): marched in steps
  of half the smallest grid spacing until the ray is below the bed, then the crossing is bisected to 1e-6 of a
  step. Exact but for a ray that dips below a ridge and out again within one step (a grazing ray over a feature
  narrower than half a cell): that ray misses the ridge. The normal is (∂H/∂x, ∂H/∂y, 1) normalised.
- **Sea surface**: the calm plane z = 0 (waves are not seen by rays), from above or below.

Broad phase: ray origins are binned on a square grid of cells of side max(max range, 1 m); each occupied cell
asks once for the coast edges (shapely STRtree, box query) and the objects and vessels (bounding spheres) within
max range of the cell; a ray is tested only against its cell's candidates.

A hit's normal is a unit vector facing the ray's origin. Misses: range inf, point NaN, normal 0, what NONE.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import shapely
from numba import njit

from lotusim_env.bathymetry import FlatSeabed, GridSeabed
from lotusim_env.world import BOX, CYLINDER, SPHERE, World

NONE, COAST, OBJECT, SEABED, SEA_SURFACE, VESSEL = 0, 1, 2, 3, 4, 5
WHAT_NAMES = ("none", "coast", "object", "seabed", "sea_surface", "vessel")
WHAT_COUNT = len(WHAT_NAMES)
# [assumption] the calm sea surface: reflectivity ~0.02 (Fresnel reflectance of water at normal incidence),
# a dark blue-green albedo
SEA_SURFACE_REFLECTIVITY = 0.02
SEA_SURFACE_ALBEDO = (0.05, 0.15, 0.20)
EPS_T = 1e-9  # hits closer than this (m) are ignored (a ray leaving the surface it starts on)


@dataclass
class Hits:
    """One entry per ray (R rays). Map ENU. `point` (R, 3) hit point (NaN for misses) and `albedo` (R, 3) RGB
    [0, 1] (0 for misses) are formed on first use (most sensors read neither)."""

    range_m: np.ndarray  # (R,) m, np.inf where nothing within max range
    normal: np.ndarray  # (R, 3) unit surface normal facing the ray origin (0 for misses)
    what: np.ndarray  # (R,) int8: NONE, COAST, OBJECT, SEABED, SEA_SURFACE, VESSEL
    index: np.ndarray  # (R,) int: object or vessel row hit, -1 otherwise
    reflectivity: np.ndarray  # (R,) [0, 1] (0 for misses)
    origins: np.ndarray = field(repr=False)  # (R, 3) the rays, as cast
    directions: np.ndarray = field(repr=False)  # (R, 3)
    albedo_by_what: np.ndarray = field(repr=False)  # (WHAT_COUNT, 3) coast, seabed, sea surface rows
    object_albedo: np.ndarray = field(repr=False)  # (O, 3)
    vessel_albedo: np.ndarray = field(repr=False)  # (V, 3)

    @cached_property
    def point(self) -> np.ndarray:
        """(R, 3) hit points o + range d, map ENU m (NaN for misses)."""
        hit = np.isfinite(self.range_m)
        t = np.where(hit, self.range_m, 0.0)
        return np.where(hit[:, None], self.origins + t[:, None] * self.directions, np.nan)

    @cached_property
    def albedo(self) -> np.ndarray:
        """(R, 3) RGB albedo [0, 1] of each hit's surface (0 for misses)."""
        out = self.albedo_by_what[self.what]
        for code, table in ((OBJECT, self.object_albedo), (VESSEL, self.vessel_albedo)):
            m = self.what == code
            out[m] = table[self.index[m]]
        return out


@dataclass
class VesselBoxes:
    """Vessels as oriented boxes: V rows, map ENU."""

    centers: np.ndarray  # (V, 3) box centres, map ENU m
    rotations: np.ndarray  # (V, 3, 3) map <- body (FLU)
    half_extents: np.ndarray  # (V, 3) m along body x (forward), y (left), z (up)
    reflectivity: np.ndarray  # (V,)
    albedo: np.ndarray  # (V, 3)

    def __len__(self) -> int:
        return len(self.centers)


SeabedLike = FlatSeabed | GridSeabed | Callable[[np.ndarray, np.ndarray], np.ndarray]


def cast(
    world: World,
    seabed: SeabedLike | None,
    origins: np.ndarray,
    directions: np.ndarray,
    max_range_m: float,
    vessels: VesselBoxes | None = None,
    sea_surface: bool = True,
    exclude_vessel: np.ndarray | None = None,
    seabed_step_m: float | None = None,
) -> Hits:
    """Cast R rays (origins (R, 3), unit directions (R, 3), map ENU m) up to max_range_m; the nearest hit of each.

    seabed: the environment's bathymetry (FlatSeabed, GridSeabed), any callable depth_m(x, y) (marched with
    seabed_step_m, default 1 m), or None (no seabed). exclude_vessel: (R,) vessel row each ray ignores (its own
    hull; -1: none). seabed_step_m overrides the marching step of a grid.
    """
    o = np.ascontiguousarray(np.asarray(origins, dtype=float).reshape(-1, 3))
    d = np.ascontiguousarray(np.asarray(directions, dtype=float).reshape(-1, 3))
    best = _Best(len(o), float(max_range_m))
    if len(o) == 0:
        return best.hits(o, d, world, vessels)
    cells = _Cells(o, float(max_range_m))
    flat = isinstance(seabed, FlatSeabed)
    if sea_surface or flat:  # one pass; the flat bed is kept only where strictly nearer, as if offered last
        best.offer_planes(o, d, sea_surface, -float(seabed.depth_m) if flat else np.nan)
    _coast(world, o, d, cells, best)
    _objects(world, o, d, cells, best)
    if vessels is not None and len(vessels):
        skip = None if exclude_vessel is None else np.asarray(exclude_vessel, dtype=int).reshape(-1)
        _vessels(vessels, o, d, cells, best, skip)
    if seabed is not None and not flat:
        _seabed(seabed, o, d, best, seabed_step_m)
    return best.hits(o, d, world, vessels)


# ---------------------------------------------------------------------------------------------- bookkeeping
class _Best:
    """The nearest hit so far of each ray: t, normal, what, index."""

    def __init__(self, n: int, max_range_m: float) -> None:
        self.t = np.full(n, max_range_m)
        self.hit = np.zeros(n, dtype=bool)
        self.normal = np.zeros((n, 3))
        self.what = np.zeros(n, dtype=np.int8)
        self.index = np.full(n, -1, dtype=np.int64)

    def offer(self, rays: np.ndarray, t: np.ndarray, normal: np.ndarray, what: int, index: np.ndarray | None) -> None:
        """Candidate hits (ray indices may repeat: the nearest per ray is kept); t must be > 0 and finite."""
        if len(rays) == 0:
            return
        if len(rays) > 1 and not np.all(rays[1:] > rays[:-1]):  # repeated rays: keep the nearest of each
            order = np.lexsort((t, rays))  # by ray, then by t: the first of each ray is its nearest
            first = np.ones(len(rays), dtype=bool)
            first[1:] = rays[order][1:] != rays[order][:-1]
            keep = order[first]
            rays, t, normal = rays[keep], t[keep], normal[keep]
            index = None if index is None else index[keep]
        better = t <= self.t[rays]
        r = rays[better]
        self.t[r] = t[better]
        self.hit[r] = True
        self.normal[r] = normal[better]
        self.what[r] = what
        self.index[r] = -1 if index is None else index[better]

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(t, hit, normal, what, index): the arrays the compiled kernels update in place."""
        return self.t, self.hit, self.normal, self.what, self.index

    def offer_planes(self, o: np.ndarray, d: np.ndarray, sea_surface: bool, bed_z: float) -> None:
        """The sea surface z = 0 (if sea_surface; from either side, not from on it) where as near as the nearest
        hit so far, then a flat seabed at height bed_z (m, NaN: none; from above it) where strictly nearer. Normals
        +z."""
        _planes_kernel(o, d, sea_surface, float(bed_z), self.t, self.hit, self.normal, self.what, self.index)

    def hits(self, o: np.ndarray, d: np.ndarray, world: World, vessels: VesselBoxes | None) -> Hits:
        """The Hits: range, point, the normal facing the origin, and each hit's material (reflectivity, albedo). Uses
        this object's arrays: call once, at the end."""
        refl = np.zeros(WHAT_COUNT)
        albedo = np.zeros((WHAT_COUNT, 3))
        for code, r, a in (
            (COAST, world.coast_reflectivity, world.coast_albedo),
            (SEABED, world.seabed_reflectivity, world.seabed_albedo),
            (SEA_SURFACE, SEA_SURFACE_REFLECTIVITY, SEA_SURFACE_ALBEDO),
        ):
            refl[code], albedo[code] = r, a
        obj_refl = np.ascontiguousarray(world.object_reflectivity, dtype=float).reshape(-1)
        obj_albedo = np.ascontiguousarray(world.object_albedo, dtype=float).reshape(-1, 3)
        v_refl, v_albedo = np.zeros(0), np.zeros((0, 3))
        if vessels is not None:
            v_refl = np.ascontiguousarray(vessels.reflectivity, dtype=float).reshape(-1)
            v_albedo = np.ascontiguousarray(vessels.albedo, dtype=float).reshape(-1, 3)
        reflectivity = _finish_kernel(
            o, d, self.t, self.hit, self.normal, self.what, self.index, refl, obj_refl, v_refl
        )
        return Hits(self.t, self.normal, self.what, self.index, reflectivity, o, d, albedo, obj_albedo, v_albedo)


@njit(cache=True)
def _planes_kernel(o, d, sea_surface, bed_z, t_best, hit, normal, what, index):  # pragma: no cover - compiled
    """The sea surface and a flat seabed offered to every ray, in place (see _Best.offer_planes)."""
    for r in range(o.shape[0]):
        oz, dz = o[r, 2], d[r, 2]
        if dz == 0.0:
            continue
        if sea_surface and oz != 0.0:
            t = (0.0 - oz) / dz
            if t > EPS_T and t <= t_best[r]:
                t_best[r], hit[r], what[r], index[r] = t, True, SEA_SURFACE, -1
                normal[r, 0], normal[r, 1], normal[r, 2] = 0.0, 0.0, 1.0
        if oz > bed_z:  # False for NaN: no bed
            t = (bed_z - oz) / dz
            if t > EPS_T and t < t_best[r]:
                t_best[r], hit[r], what[r], index[r] = t, True, SEABED, -1
                normal[r, 0], normal[r, 1], normal[r, 2] = 0.0, 0.0, 1.0


@njit(cache=True)
def _finish_kernel(o, d, t, hit, normal, what, index, refl, obj_refl, v_refl):  # pragma: no cover - compiled
    """Reflectivity per ray (refl per `what` code, objects' and vessels' per row; 0 for misses); in place, t
    becomes the range (inf for misses) and the normal faces the origin (n·d <= 0)."""
    n = o.shape[0]
    refl_out = np.zeros(n)
    for r in range(n):
        if not hit[r]:
            t[r] = np.inf
            continue
        if normal[r, 0] * d[r, 0] + normal[r, 1] * d[r, 1] + normal[r, 2] * d[r, 2] > 0.0:
            for a in range(3):
                normal[r, a] = -normal[r, a]
        w, i = what[r], index[r]
        refl_out[r] = obj_refl[i] if w == OBJECT else (v_refl[i] if w == VESSEL else refl[w])
    return refl_out


# ---------------------------------------------------------------------------------------------- broad phase
class _Cells:
    """Ray origins binned on a square grid of side max(range, 1 m); per cell, the box within range of it."""

    def __init__(self, o: np.ndarray, max_range_m: float) -> None:
        self.size = max(max_range_m, 1.0)
        self.range = max_range_m
        run_of_ray, ij = _runs_kernel(o, self.size)  # rays come in runs from one origin (a sensor's beams)
        keys = ij[:, 0] * 4_000_003 + ij[:, 1]
        uniq, first, run_cell = np.unique(keys, return_index=True, return_inverse=True)
        self.inverse = run_cell.ravel()[run_of_ray]
        ij = ij[first]
        self.lo = ij * self.size - max_range_m  # (C, 2) min corner of each cell's reach
        self.hi = (ij + 1) * self.size + max_range_m
        self.count = len(uniq)

    def csr(self, cell: np.ndarray, cand: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per-cell candidate lists as (start (C + 1,), candidates): cell c's are cand[start[c]:start[c + 1]]."""
        order = np.argsort(cell, kind="stable")
        start = np.zeros(self.count + 1, dtype=np.int64)
        np.cumsum(np.bincount(cell, minlength=self.count), out=start[1:])
        return start, np.asarray(cand, dtype=np.int64)[order]

    def spheres(self, centers: np.ndarray, radius: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(cell, item) pairs: items whose bounding sphere (x, y) reaches a cell's box."""
        c = centers[None, :, :2]
        gap = np.maximum(self.lo[:, None, :] - c, 0.0) + np.maximum(c - self.hi[:, None, :], 0.0)
        near = np.einsum("cik,cik->ci", gap, gap) <= radius[None, :] ** 2
        cell, item = np.nonzero(near)
        return cell, item


@njit(cache=True)
def _runs_kernel(o, size):  # pragma: no cover - compiled
    """Rays binned on the square grid of side `size` (m), by runs of consecutive rays in one cell: (run index of
    each ray (R,), the cell (i, j) of each run (runs, 2))."""
    n = o.shape[0]
    run_of_ray = np.empty(n, dtype=np.int64)
    run_ij = np.empty((n, 2), dtype=np.int64)  # only the runs' rows are written (and touched)
    runs, pi, pj = -1, 0, 0
    for r in range(n):
        i, j = np.int64(np.floor(o[r, 0] / size)), np.int64(np.floor(o[r, 1] / size))
        if runs < 0 or i != pi or j != pj:
            runs, pi, pj = runs + 1, i, j
            run_ij[runs, 0], run_ij[runs, 1] = i, j
        run_of_ray[r] = runs
    return run_of_ray, run_ij[: runs + 1].copy()


# ---------------------------------------------------------------------------------------------- the surfaces
def _coast(world: World, o: np.ndarray, d: np.ndarray, cells: _Cells, best: _Best) -> None:
    if len(world.segments) == 0:
        return
    boxes = shapely.box(cells.lo[:, 0], cells.lo[:, 1], cells.hi[:, 0], cells.hi[:, 1])
    cell, seg = world.segment_tree.query(boxes, predicate="intersects")
    start, cand = cells.csr(cell, seg)
    seg = np.ascontiguousarray(world.segments, dtype=float)
    _walls_kernel(o, d, cells.inverse, start, cand, seg, float(world.coast_height_m), *best.arrays())
    # the flat top of the land, for rays from above it going down
    h = world.coast_height_m
    if not np.any(o[:, 2] > h):
        return
    down = np.nonzero((o[:, 2] > h) & (d[:, 2] < 0.0))[0]
    if len(down):
        t_top = (h - o[down, 2]) / d[down, 2]
        p = o[down, :2] + t_top[:, None] * d[down, :2]
        shapely.prepare(world.land)
        on = (t_top < best.t[down]) & shapely.intersects_xy(world.land, p[:, 0], p[:, 1])
        up = np.tile([0.0, 0.0, 1.0], (int(on.sum()), 1))
        best.offer(down[on], t_top[on], up, COAST, None)


@njit(cache=True)
def _walls_kernel(o, d, ray_cell, start, cand, seg, top_z, t_best, hit, normal, what, index):  # pragma: no cover
    """Nearest wall of each ray among its cell's candidate edges: 2-D ray-segment intersection (module docstring),
    the hit below the land height top_z, not beyond t_best; written in place into the nearest hits (_Best.arrays)
    with the wall's horizontal unit normal."""
    n = o.shape[0]
    for r in range(n):
        c = ray_cell[r]
        t_min, s_min = t_best[r], -1
        ox, oy, oz, dx, dy, dz = o[r, 0], o[r, 1], o[r, 2], d[r, 0], d[r, 1], d[r, 2]
        for k in range(start[c], start[c + 1]):
            j = cand[k]
            ex, ey = seg[j, 2] - seg[j, 0], seg[j, 3] - seg[j, 1]
            den = dx * ey - dy * ex
            if den == 0.0:
                continue
            apx, apy = seg[j, 0] - ox, seg[j, 1] - oy
            t = (apx * ey - apy * ex) / den
            if t <= EPS_T or t > t_min:
                continue
            u = (apx * dy - apy * dx) / den
            if u < 0.0 or u > 1.0 or oz + t * dz > top_z:
                continue
            t_min, s_min = t, j
        if s_min >= 0:
            nx, ny = seg[s_min, 3] - seg[s_min, 1], -(seg[s_min, 2] - seg[s_min, 0])  # (e_y, −e_x, 0)
            norm = np.sqrt(nx * nx + ny * ny)
            t_best[r], hit[r], what[r], index[r] = t_min, True, COAST, -1
            normal[r, 0], normal[r, 1], normal[r, 2] = nx / norm, ny / norm, 0.0


def _objects(world: World, o: np.ndarray, d: np.ndarray, cells: _Cells, best: _Best) -> None:
    if world.object_count == 0:
        return
    cell, item = cells.spheres(world.object_centers, world.object_radius_m)
    start, cand = cells.csr(cell, item)
    shapes = np.ascontiguousarray(world.object_shapes, dtype=np.int64)
    centers = np.ascontiguousarray(world.object_centers, dtype=float)
    half = np.ascontiguousarray(world.object_half_extents, dtype=float)
    yaw = np.ascontiguousarray(world.object_yaw_rad, dtype=float)
    _objects_kernel(o, d, cells.inverse, start, cand, shapes, centers, half, yaw, *best.arrays())


@njit(cache=True)
def _objects_kernel(
    o, d, ray_cell, start, cand, shapes, centers, half, yaw, t_best, hit, normal, what, index
):  # pragma: no cover - compiled
    """Nearest object of each ray among its cell's candidates, not beyond t_best: sphere, vertical cylinder (side
    and the cap facing the origin), box yawed about z (slab method [KayKajiya1986]). On equal t the later shape
    code wins (sphere < cylinder < box), then the lower row. Written in place into the nearest hits
    (_Best.arrays): t, the object's row, its outward normal (map)."""
    n = o.shape[0]
    cos_yaw, sin_yaw = np.cos(yaw), np.sin(yaw)
    for r in range(n):
        c = ray_cell[r]
        t_min, cur, mx, my, mz = t_best[r], -1, 0.0, 0.0, 0.0
        ox, oy, oz, dx, dy, dz = o[r, 0], o[r, 1], o[r, 2], d[r, 0], d[r, 1], d[r, 2]
        for k in range(start[c], start[c + 1]):
            j = cand[k]
            px, py, pz = ox - centers[j, 0], oy - centers[j, 1], oz - centers[j, 2]  # origin, object-centred
            if shapes[j] == SPHERE:
                t, nx, ny, nz = _sphere_hit(px, py, pz, dx, dy, dz, half[j, 0])
            elif shapes[j] == CYLINDER:
                t, nx, ny, nz = _cylinder_hit(px, py, pz, dx, dy, dz, half[j, 0], half[j, 2])
            elif shapes[j] == BOX:
                t, nx, ny, nz = _yaw_box_hit(px, py, pz, dx, dy, dz, half[j, 0], half[j, 1], half[j, 2],
                                             cos_yaw[j], sin_yaw[j])  # fmt: skip
            else:
                continue
            if t < t_min or (t == t_min and t < np.inf and (cur < 0 or shapes[j] > shapes[cur])):
                t_min, cur, mx, my, mz = t, j, nx, ny, nz
        if cur >= 0:
            t_best[r], hit[r], what[r], index[r] = t_min, True, OBJECT, cur
            normal[r, 0], normal[r, 1], normal[r, 2] = mx, my, mz


@njit(cache=True)
def _sphere_hit(px, py, pz, dx, dy, dz, rad):  # pragma: no cover - compiled
    """Nearest entry t of |p + t d| = rad, p the origin relative to the centre (inf: none), and the outward
    normal."""
    b = px * dx + py * dy + pz * dz
    disc = b * b - ((px * px + py * py + pz * pz) - rad * rad)
    if disc < 0.0:
        return np.inf, 0.0, 0.0, 0.0
    t = -b - np.sqrt(disc)
    if not t > EPS_T:
        return np.inf, 0.0, 0.0, 0.0
    return t, (px + t * dx) / rad, (py + t * dy) / rad, (pz + t * dz) / rad


@njit(cache=True)
def _cylinder_hit(px, py, pz, dx, dy, dz, rad, hz):  # pragma: no cover - compiled
    """Vertical cylinder (radius rad, half height hz, p the origin relative to its centre): the side (2-D
    quadratic) and the cap facing the origin; nearest entry t (inf: none) and the outward normal."""
    a = dx * dx + dy * dy
    b = px * dx + py * dy
    disc = b * b - a * (px * px + py * py - rad * rad)
    t_side = np.inf
    if disc >= 0.0 and a > 0.0:
        ts = (-b - np.sqrt(disc)) / a
        if ts > EPS_T and abs(pz + ts * dz) <= hz:
            t_side = ts
    cap_z = hz if pz > 0.0 else -hz
    t_cap = np.inf
    if abs(pz) > hz and dz != 0.0:
        tc = (cap_z - pz) / dz
        qx, qy = px + tc * dx, py + tc * dy
        if tc > EPS_T and qx * qx + qy * qy <= rad * rad:
            t_cap = tc
    if t_side <= t_cap:
        if t_side == np.inf:
            return np.inf, 0.0, 0.0, 0.0
        return t_side, (px + t_side * dx) / rad, (py + t_side * dy) / rad, 0.0
    return t_cap, 0.0, 0.0, np.sign(cap_z)


@njit(cache=True)
def _yaw_box_hit(px, py, pz, dx, dy, dz, hx, hy, hz, cy, sy):  # pragma: no cover - compiled
    """Box of half extents (hx, hy, hz) yawed about z (cos cy, sin sy), p the origin relative to its centre: the
    ray in the box frame, slab method [KayKajiya1986]; nearest entry t (inf: none) and the outward normal (map)."""
    # rot^T p, rot^T d with rot = Rz(yaw): the box frame
    lx, ly, lz = cy * px + sy * py, -sy * px + cy * py, pz
    ex, ey, ez = cy * dx + sy * dy, -sy * dx + cy * dy, dz
    t_in, t_out, ax, s = -np.inf, np.inf, 0, 0.0
    for a in range(3):
        ol, dl, h = (lx, ex, hx) if a == 0 else ((ly, ey, hy) if a == 1 else (lz, ez, hz))
        if dl == 0.0:  # parallel to this slab: inside it (no constraint) or no hit
            if abs(ol) > h:
                return np.inf, 0.0, 0.0, 0.0
            continue
        inv = 1.0 / dl
        t1, t2 = (-h - ol) * inv, (h - ol) * inv
        if min(t1, t2) > t_in:
            t_in, ax, s = min(t1, t2), a, (-1.0 if dl > 0.0 else 1.0)
        t_out = min(t_out, max(t1, t2))
    if not (t_in <= t_out and t_in > EPS_T):
        return np.inf, 0.0, 0.0, 0.0
    if ax == 0:  # rot (s e_ax)
        return t_in, cy * s, sy * s, 0.0
    if ax == 1:
        return t_in, -sy * s, cy * s, 0.0
    return t_in, 0.0, 0.0, s


def _vessels(v: VesselBoxes, o, d, cells: _Cells, best: _Best, skip: np.ndarray | None) -> None:
    centers = np.ascontiguousarray(v.centers, dtype=float)
    half = np.ascontiguousarray(v.half_extents, dtype=float)
    rot = np.ascontiguousarray(v.rotations, dtype=float)
    cell, item = cells.spheres(centers, np.linalg.norm(half, axis=1))
    start, cand = cells.csr(cell, item)
    skip = np.full(len(o), -1, dtype=np.int64) if skip is None else skip.astype(np.int64)
    _boxes_kernel(o, d, cells.inverse, start, cand, centers, rot, half, skip, *best.arrays())


@njit(cache=True)
def _boxes_kernel(
    o, d, ray_cell, start, cand, centers, rot, half, skip, t_best, hit, normal, what, index
):  # pragma: no cover - compiled
    """Nearest oriented box of each ray among its cell's candidates (slab method in the box frame [KayKajiya1986]),
    skipping box skip[ray]; written in place into the nearest hits (_Best.arrays): t, the box's row, the entry
    face's outward normal (map)."""
    n = o.shape[0]
    ol = np.zeros(3)
    dl = np.zeros(3)
    for r in range(n):
        c = ray_cell[r]
        t_min, row, axis, sign = t_best[r], -1, 0, 0.0
        for k in range(start[c], start[c + 1]):
            j = cand[k]
            if j == skip[r]:
                continue
            for a in range(3):  # rot^T (o - c), rot^T d
                ol[a] = 0.0
                dl[a] = 0.0
                for b in range(3):
                    ol[a] += rot[j, b, a] * (o[r, b] - centers[j, b])
                    dl[a] += rot[j, b, a] * d[r, b]
            t_in, t_exit, ax, sg = -np.inf, np.inf, 0, 0.0
            ok = True
            for a in range(3):
                if dl[a] == 0.0:  # parallel to this slab: inside it or no hit
                    if abs(ol[a]) > half[j, a]:
                        ok = False
                        break
                    continue
                t1 = (-half[j, a] - ol[a]) / dl[a]
                t2 = (half[j, a] - ol[a]) / dl[a]
                if min(t1, t2) > t_in:
                    t_in, ax, sg = min(t1, t2), a, (-1.0 if dl[a] > 0.0 else 1.0)
                t_exit = min(t_exit, max(t1, t2))
            if ok and t_in <= t_exit and EPS_T < t_in <= t_min:
                t_min, row, axis, sign = t_in, j, ax, sg
        if row >= 0:
            t_best[r], hit[r], what[r], index[r] = t_min, True, VESSEL, row
            for a in range(3):  # rot (sign e_axis)
                normal[r, a] = rot[row, a, axis] * sign


# ---------------------------------------------------------------------------------------------- the seabed
def _seabed(seabed: SeabedLike, o: np.ndarray, d: np.ndarray, best: _Best, step_m: float | None) -> None:
    if isinstance(seabed, GridSeabed):  # (a FlatSeabed is offered with the sea surface: _Best.offer_planes)
        depth_fn = _GridDepth(seabed)
        step = step_m or 0.5 * min(np.diff(seabed.x).min(), np.diff(seabed.y).min())
        top = -float(seabed.depth.min())  # the highest point of the bed (m, z up)
    else:
        depth_fn = seabed.seabed_depth_m if hasattr(seabed, "seabed_depth_m") else seabed
        step, top = step_m or 1.0, np.inf
    _march(depth_fn, float(step), top, o, d, best)


class _GridDepth:
    """Bilinear depth on a GridSeabed's nodes (the same H as GridSeabed.seabed_depth_m, edge-clamped), fast."""

    def __init__(self, g: GridSeabed) -> None:
        self.x, self.y, self.h = g.x, g.y, g.depth

    def __call__(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        x = np.clip(x, self.x[0], self.x[-1])
        y = np.clip(y, self.y[0], self.y[-1])
        i = np.clip(np.searchsorted(self.x, x, side="right") - 1, 0, len(self.x) - 2)
        j = np.clip(np.searchsorted(self.y, y, side="right") - 1, 0, len(self.y) - 2)
        wx = (x - self.x[i]) / (self.x[i + 1] - self.x[i])
        wy = (y - self.y[j]) / (self.y[j + 1] - self.y[j])
        h = self.h
        return (1 - wx) * ((1 - wy) * h[i, j] + wy * h[i, j + 1]) + wx * ((1 - wy) * h[i + 1, j] + wy * h[i + 1, j + 1])


def _march(depth_fn, step: float, top: float, o: np.ndarray, d: np.ndarray, best: _Best) -> None:
    """March each ray in steps of `step` up to its current nearest hit; bisect the first step that ends below the
    bed. Rays whose whole path stays above the bed's highest point `top` are skipped."""
    t_end = best.t
    lowest = np.minimum(o[:, 2], o[:, 2] + t_end * d[:, 2])
    rays = np.nonzero(lowest < top)[0]
    if len(rays) == 0:
        return
    ro, rd, rend = o[rays], d[rays], t_end[rays]

    def above(idx: np.ndarray, t: np.ndarray) -> np.ndarray:  # height above the bed (m) at t along ray idx
        p = ro[idx] + t[:, None] * rd[idx]
        return p[:, 2] + depth_fn(p[:, 0], p[:, 1])

    alive = above(np.arange(len(rays)), np.zeros(len(rays))) > 0.0  # rays starting under the bed see nothing
    lo = np.zeros(len(rays))
    hi = np.full(len(rays), np.inf)
    n_steps = int(np.ceil(rend.max() / step)) if len(rend) else 0
    idx = np.nonzero(alive)[0]
    for k in range(1, n_steps + 1):  # a loop over steps, vectorised over the rays still marching
        if len(idx) == 0:
            break
        t = np.minimum(k * step, rend[idx])
        below = above(idx, t) <= 0.0
        hi[idx[below]] = t[below]
        lo[idx[~below]] = t[~below]
        idx = idx[~below & (t < rend[idx])]
    found = np.nonzero(np.isfinite(hi))[0]
    a, b = lo[found], hi[found]
    for _ in range(int(np.ceil(np.log2(1e6))) + 1):  # to 1e-6 of a step
        mid = 0.5 * (a + b)
        under = above(found, mid) <= 0.0
        b = np.where(under, mid, b)
        a = np.where(under, a, mid)
    t = 0.5 * (a + b)
    p = ro[found] + t[:, None] * rd[found]
    eps = 1e-3 * step
    gx = (depth_fn(p[:, 0] + eps, p[:, 1]) - depth_fn(p[:, 0] - eps, p[:, 1])) / (2 * eps)
    gy = (depth_fn(p[:, 0], p[:, 1] + eps) - depth_fn(p[:, 0], p[:, 1] - eps)) / (2 * eps)
    n = np.column_stack([gx, gy, np.ones(len(t))])
    n /= np.linalg.norm(n, axis=1, keepdims=True)
    ok = t > EPS_T
    best.offer(rays[found][ok], t[ok], n[ok], SEABED, None)
