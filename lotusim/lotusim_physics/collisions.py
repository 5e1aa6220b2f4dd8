"""Collisions of the fleet's vessels with the seabed, the coast, the world's objects and each other: detection and a
physically bounded response. ROS-free, vectorised over vessels and contact pairs (no per-vessel Python loop).

Frames: the physics' NED / FRD (x north, y east, z down; lotusim_core.base.frames); the world (lotusim_env.world,
`map` ENU) and the bathymetry (depth positive down at (x east, y north)) are converted once, when the obstacles
are built (`obstacles_of`). Units: m, m/s, kg.

Hulls. Each vessel is a box (lotusim_core.base.hull_box: half extents h along body x, y, z, centred at c FRD from
CO), placed in the world by the vessel's pose: its centre is p + R c (R = R(q_ned_frd)).

Detection, one contact per vessel and kind of obstacle per check (the deepest), a contact being any overlap deeper
than -`margin_m` (a gap below the margin keeps a contact alive; the response acts only on overlaps > 0):
- seabed: the 8 corners of the box under its full attitude, r_k = p + R (c + s_k h); the seabed depth D(n, e)
  under each; penetration d_k = z_k - D (m). The deepest corner gives the contact; the seabed's normal there
  (towards the water) is n = (dD/dN, dD/dE, -1) / |.| (central differences over SLOPE_STEP_M), and the distance
  along it (the perpendicular overlap of a locally plane seabed) d / |(dD/dN, dD/dE, -1)|; the response lifts the
  vessel straight up by d (out of the height field, so that a vessel resting on a slope does not creep down it).
- coast (land as vertical prisms: walls along the coast's edges from the seabed to the world's coast height, a
  flat top there), the objects and the other vessels: the boxes turn with the vessels' heading only (roll and
  pitch are left out: "yaw boxes"), so two boxes share a vertical axis and the separating-axis test over the
  horizontal axes of both and the vertical is exact (Ericson 2004, ch. 4.4 [Ericson2004]). A coast edge is a
  one-sided wall (its water side found once from the land polygons) tested against the box on the edge's normal,
  the box's two horizontal axes and the vertical (the top of the land); a vertical cylinder against the circle /
  rectangle closest point horizontally and the heights vertically; a sphere against the box's closest point in 3-D.
  The minimum-overlap axis is the contact normal.
- broad phase: scipy's cKDTree on the boxes' centres with their bounding radii (vessel pairs: query_pairs within
  twice the largest radius, then r_i + r_j; objects: a tree of their centres queried with the largest reach) and
  shapely's STRtree over the coast's edges (queried with each box's bounding circle: edges are metres to
  kilometres long), so a check costs O(N log N), not O(N S).
Aerial vehicles (after the marine rows) collide with the coast, the objects, the seabed and each other, not with
marine vessels: their contact with a surface vessel is its deck's (lotusim_physics.decks). Frozen vessels are left
out.

Response (after the step's integration, Fleet.step): inelastic contact with restitution e and Coulomb friction mu
(ContactParams; defaults e = 0, mu = 0), the impulse of [Baraff1997] sec. 8 without the rotational terms. With n the
contact normal (towards the vessel) and v the vessel's ground velocity (NED, v = R nu[:3]):
- a static obstacle (seabed, coast, object): p <- p + d n (the seabed: p <- p - d e_z); if v.n < 0:
  dv_n = -(1 + e) v.n, v <- v + dv_n n, and the tangential velocity v_t shrinks by min(|v_t|, mu dv_n) (an
  impulse within the friction cone);
- two vessels i, j (n from j to i, masses m_i, m_j): p_i <- p_i + d m_j/(m_i+m_j) n, p_j <- p_j - d m_i/(m_i+m_j) n;
  with v_rel = v_i - v_j, if v_rel.n < 0: J = -(1 + e) v_rel.n / (1/m_i + 1/m_j), v_i += J/m_i n, v_j -= J/m_j n:
  momentum m_i v_i + m_j v_j is kept and, for e = 0, the kinetic energy 1/2 m_i m_j/(m_i + m_j) (v_rel.n)^2 of the
  normal approach is lost (the relative normal velocity becomes 0).
Body rates are left as they are (no contact torque), and the masses are the rigid-body masses (no added mass).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import shapely
from scipy.spatial import cKDTree

from lotusim_core.base.frames import rotation_matrix

SEABED, COAST, OBJECT, VESSEL = 0, 1, 2, 3
KIND_NAMES = ("seabed", "coast", "object", "vessel")
A_MAX_MPS2 = 20.0  # the largest acceleration the look-ahead allows for (Collider.near), m/s^2 (2 g: a drone's)
SLOPE_STEP_M = 0.5  # half step of the central differences of the seabed's slope, m
SPHERE, CYLINDER, BOX = 0, 1, 2  # object shapes (lotusim_env.world)
_SIGNS2 = np.array([[-1.0, -1.0], [-1.0, 1.0], [1.0, -1.0], [1.0, 1.0]])  # the 4 horizontal corners
_SIGNS = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], dtype=float)  # (8, 3)

SeabedFn = Callable[[np.ndarray, np.ndarray], np.ndarray]  # (x east, y north) -> depth m, positive down


@dataclass(frozen=True)
class ContactParams:
    """The contact law: restitution e in [0, 1] (0: plastic), Coulomb friction mu >= 0 (0: frictionless), and the
    gap margin_m (m) below which a contact still counts as going on."""

    restitution: float = 0.0
    friction: float = 0.0
    margin_m: float = 0.05


@dataclass(frozen=True)
class Obstacles:
    """The static world in NED: the seabed depth function, the coast's edges with their water-side normals and
    the world's coast height, and the objects (shapes, centres NED, half extents, headings psi from north)."""

    seabed: SeabedFn | None = None
    seabed_min_depth_m: float = -np.inf  # the shallowest seabed anywhere (a cheap bound; -inf: unknown)
    edges: np.ndarray = field(default_factory=lambda: np.zeros((0, 4)))  # (S, 4) n0 e0 n1 e1, m
    edge_normals: np.ndarray = field(default_factory=lambda: np.zeros((0, 2)))  # (S, 2) unit, towards the water
    coast_height_m: float = 10.0
    object_names: tuple[str, ...] = ()
    object_shapes: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=int))
    object_centres_ned: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    object_half: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    object_psi: np.ndarray = field(default_factory=lambda: np.zeros(0))
    land: object = None  # the land as one shapely geometry in map ENU (lotusim_env.world.World.land), or None

    def __post_init__(self) -> None:
        edges = self.edges
        tree = shapely.STRtree(shapely.linestrings(edges.reshape(-1, 2, 2))) if len(edges) else None
        object.__setattr__(self, "_edge_tree", tree)
        n_obj = len(self.object_names)
        tree = cKDTree(self.object_centres_ned) if n_obj else None
        points = [edges[:, :2], edges[:, 2:]] if len(edges) else []
        if n_obj:
            reach = np.linalg.norm(self.object_half, axis=1)[:, None]
            points += [self.object_centres_ned[:, :2] - reach, self.object_centres_ned[:, :2] + reach]
        stacked = np.vstack(points) if points else None
        bounds = (
            (stacked.min(axis=0), stacked.max(axis=0))
            if stacked is not None
            else (np.full(2, np.inf), np.full(2, -np.inf))
        )
        object.__setattr__(self, "bounds_ne", bounds)  # (lo, hi) north, east of the coast and objects, m
        object.__setattr__(self, "has_world", stacked is not None)
        object.__setattr__(self, "_object_tree", tree)
        object.__setattr__(
            self, "_object_reach", float(np.linalg.norm(self.object_half, axis=1).max()) if n_obj else 0.0
        )


def obstacles_of(environment) -> Obstacles:
    """The Obstacles of a lotusim_env.environment.Environment: its bathymetry and its world (if any)."""
    bathymetry = environment.bathymetry
    depth = getattr(bathymetry, "depth_m", None)
    grid = getattr(bathymetry, "depth", None)
    shallowest = float(depth) if depth is not None else float(np.min(grid)) if grid is not None else -np.inf
    world = getattr(environment, "world", None)
    if world is None or world.is_empty():
        return Obstacles(bathymetry.seabed_depth_m, shallowest)
    edges_enu = np.asarray(world.segments, dtype=float).reshape(-1, 4)
    normals_enu = water_normals_enu(world, edges_enu)
    yaw = np.asarray(world.object_yaw_rad, dtype=float)
    centres = np.asarray(world.object_centers, dtype=float).reshape(-1, 3)
    return Obstacles(
        seabed=bathymetry.seabed_depth_m,
        seabed_min_depth_m=shallowest,
        edges=edges_enu[:, [1, 0, 3, 2]],
        edge_normals=normals_enu[:, [1, 0]],
        coast_height_m=float(getattr(world, "coast_height_m", 10.0)),
        object_names=tuple(world.object_names),
        object_shapes=np.asarray(world.object_shapes, dtype=int),
        object_centres_ned=np.column_stack([centres[:, 1], centres[:, 0], -centres[:, 2]]),
        object_half=np.asarray(world.object_half_extents, dtype=float).reshape(-1, 3),
        object_psi=0.5 * np.pi - yaw,
        land=world.land if len(edges_enu) else None,
    )


def water_normals_enu(world, edges_enu: np.ndarray, probe_m: float = 1e-3) -> np.ndarray:
    """(S, 2) unit normals (ENU) of the coast's edges towards the water: of the two sides of each edge's midpoint,
    the one a probe `probe_m` away is not on land (lotusim_env.world.land_contains)."""
    from lotusim_env.world import land_contains

    d = edges_enu[:, 2:] - edges_enu[:, :2]
    left = np.column_stack([-d[:, 1], d[:, 0]]) / np.maximum(np.linalg.norm(d, axis=1), 1e-12)[:, None]
    mid = 0.5 * (edges_enu[:, :2] + edges_enu[:, 2:])
    left_is_land = land_contains(world, mid + probe_m * left)
    return np.where(left_is_land[:, None], -left, left)


@dataclass
class Contacts:
    """Contacts found by one check: vessel row, kind (SEABED...), the other's index (object, vessel row or coast
    edge; -1 for the seabed), depth (m, > 0 overlapping), normal (NED unit, towards the vessel), point (NED m)."""

    row: np.ndarray
    kind: np.ndarray
    other: np.ndarray
    depth: np.ndarray
    normal: np.ndarray
    point: np.ndarray
    push: np.ndarray | None = None  # (K, 3) NED m the response moves the vessel by (None: depth x normal)

    def __post_init__(self) -> None:
        if self.push is None:
            self.push = self.normal * np.maximum(self.depth, 0.0)[:, None]

    @staticmethod
    def empty() -> Contacts:
        z = np.zeros(0)
        return Contacts(
            z.astype(np.int64), z.astype(np.int64), z.astype(np.int64), z, np.zeros((0, 3)), np.zeros((0, 3))
        )

    @staticmethod
    def concat(parts: list[Contacts]) -> Contacts:
        parts = [p for p in parts if len(p.row)]
        if not parts:
            return Contacts.empty()
        return Contacts(*(np.concatenate([getattr(p, f) for p in parts]) for f in Contacts.__dataclass_fields__))


@dataclass
class FleetBoxes:
    """The boxes of the vessels that collide, in fleet rows: rows (M,) int, their poses and box geometry."""

    rows: np.ndarray  # (M,) fleet rows
    position: np.ndarray  # (M, 3) CO, NED m
    rotation: np.ndarray  # (M, 3, 3) NED <- FRD
    half: np.ndarray  # (M, 3) m
    centre: np.ndarray  # (M, 3) box centre, NED m
    psi: np.ndarray  # (M,) heading, rad (from north, clockwise)
    radius: np.ndarray  # (M,) bounding radius about the box centre, m
    aerial: np.ndarray  # (M,) bool


def fleet_boxes(rows, position_ned, q_ned_frd, half, centre_frd, aerial) -> FleetBoxes:
    """The FleetBoxes of `rows` (vessel state arrays already restricted to those rows)."""
    r = rotation_matrix(q_ned_frd)
    centre = position_ned + np.einsum("mij,mj->mi", r, centre_frd)
    psi = np.arctan2(r[:, 1, 0], r[:, 0, 0])
    return FleetBoxes(rows, position_ned, r, half, centre, psi, np.linalg.norm(half, axis=1), aerial)


# ---------------------------------------------------------------------------------------------------- detection
def seabed_contacts(boxes: FleetBoxes, obstacles: Obstacles, margin_m: float) -> Contacts:
    """The deepest corner of each box below (or within margin_m of) the seabed (module docstring)."""
    if obstacles.seabed is None or not len(boxes.rows):
        return Contacts.empty()
    lowest = boxes.centre[:, 2] + boxes.radius
    maybe = np.flatnonzero(lowest > obstacles.seabed_min_depth_m - margin_m)
    if not len(maybe):
        return Contacts.empty()
    rot, local = boxes.rotation[maybe], boxes.centre[maybe] - boxes.position[maybe]
    body = _SIGNS[None, :, :] * boxes.half[maybe][:, None, :]  # (K, 8, 3) from the box centre, FRD
    corners = boxes.position[maybe][:, None, :] + local[:, None, :] + np.einsum("kij,kcj->kci", rot, body)
    depth = obstacles.seabed(corners[..., 1], corners[..., 0])
    pen = corners[..., 2] - depth
    k = np.argmax(pen, axis=1)
    deepest = pen[np.arange(len(maybe)), k]
    hit = deepest > -margin_m
    if not hit.any():
        return Contacts.empty()
    idx = maybe[hit]
    point = corners[hit, k[hit]]
    grad = _seabed_gradient(obstacles.seabed, point[:, 0], point[:, 1])  # dD/dN, dD/dE
    normal = np.column_stack([grad, -np.ones(len(idx))])
    norm = np.linalg.norm(normal, axis=1)
    normal /= norm[:, None]
    push = np.zeros((len(idx), 3))
    push[:, 2] = -deepest[hit]  # straight up, out of the height field: no creep along a slope
    return Contacts(
        boxes.rows[idx], np.full(len(idx), SEABED), np.full(len(idx), -1), deepest[hit] / norm, normal, point, push
    )


def _seabed_gradient(seabed: SeabedFn, north: np.ndarray, east: np.ndarray) -> np.ndarray:
    """(K, 2) dD/dN, dD/dE of the seabed depth at NED points (central differences over 2 SLOPE_STEP_M)."""
    h = SLOPE_STEP_M
    dn = seabed(east, north + h) - seabed(east, north - h)
    de = seabed(east + h, north) - seabed(east - h, north)
    return np.column_stack([dn, de]) / (2.0 * h)


def _axes(psi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Forward (body x) and starboard (body y) horizontal unit axes (K, 2) NE of headings psi."""
    c, s = np.cos(psi), np.sin(psi)
    return np.column_stack([c, s]), np.column_stack([-s, c])


def box_box(ca, psia, ha, cb, psib, hb) -> tuple[np.ndarray, np.ndarray]:
    """Separating-axis test of pairs of yaw boxes a, b (centres (K, 3) NED, headings (K,), half extents (K, 3)):
    (overlap depth (K,) m: > 0 overlapping, the smallest over the 5 axes; normal (K, 3) NED from b towards a)."""
    ua, va = _axes(psia)
    ub, vb = _axes(psib)
    d = ca[:, :2] - cb[:, :2]
    axes = np.stack([ua, va, ub, vb], axis=1)  # (K, 4, 2)

    def radius(u, v, h, ax):
        return h[:, 0:1] * np.abs(np.einsum("ki,kai->ka", u, ax)) + h[:, 1:2] * np.abs(np.einsum("ki,kai->ka", v, ax))

    sep = np.einsum("ki,kai->ka", d, axes)
    overlap = radius(ua, va, ha, axes) + radius(ub, vb, hb, axes) - np.abs(sep)  # (K, 4)
    dz = ca[:, 2] - cb[:, 2]
    overlap_z = ha[:, 2] + hb[:, 2] - np.abs(dz)
    all_overlap = np.column_stack([overlap, overlap_z])
    k = np.argmin(all_overlap, axis=1)
    depth = all_overlap[np.arange(len(k)), k]
    normal = np.zeros((len(k), 3))
    horizontal = k < 4
    rows = np.flatnonzero(horizontal)
    sign = np.where(sep[rows, k[rows]] >= 0.0, 1.0, -1.0)
    normal[rows, :2] = axes[rows, k[rows]] * sign[:, None]
    normal[~horizontal, 2] = np.where(dz[~horizontal] >= 0.0, 1.0, -1.0)
    return depth, normal


def vessel_contacts(boxes: FleetBoxes, margin_m: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Pairs of vessels in contact: (i, j) positions in `boxes` (i < j), depth (m), normal (NED, from j to i).
    Marine and aerial vessels do not collide with each other (module docstring)."""
    m = len(boxes.rows)
    if m < 2:
        z = np.zeros(0, dtype=np.int64)
        return z, z, np.zeros(0), np.zeros((0, 3))
    tree = cKDTree(boxes.centre)
    pairs = tree.query_pairs(2.0 * float(boxes.radius.max()) + margin_m, output_type="ndarray")
    i, j = pairs[:, 0], pairs[:, 1]
    near = np.linalg.norm(boxes.centre[i] - boxes.centre[j], axis=1) < boxes.radius[i] + boxes.radius[j] + margin_m
    near &= boxes.aerial[i] == boxes.aerial[j]
    i, j = i[near], j[near]
    if not len(i):
        return i, j, np.zeros(0), np.zeros((0, 3))
    depth, normal = box_box(boxes.centre[i], boxes.psi[i], boxes.half[i], boxes.centre[j], boxes.psi[j], boxes.half[j])
    keep = depth > -margin_m
    return i[keep], j[keep], depth[keep], normal[keep]


def _deepest_per_row(row: np.ndarray, depth: np.ndarray) -> np.ndarray:
    """Indices of the deepest entry of each distinct row."""
    order = np.lexsort((-depth, row))
    _, first = np.unique(row[order], return_index=True)
    return order[first]


def coast_contacts(boxes: FleetBoxes, obstacles: Obstacles, margin_m: float) -> Contacts:
    """The deepest contact of each box with the coast's walls and top (module docstring); other = the edge."""
    tree = obstacles._edge_tree  # noqa: SLF001 (built with the obstacles)
    if tree is None or not len(boxes.rows):
        return Contacts.empty()
    reach = np.linalg.norm(boxes.half[:, :2], axis=1) + margin_m  # each box's horizontal bounding circle
    points = shapely.points(np.ascontiguousarray(boxes.centre[:, 0]), np.ascontiguousarray(boxes.centre[:, 1]))
    b, s = tree.query(points, predicate="dwithin", distance=reach).astype(np.int64)
    if not len(b):
        return Contacts.empty()
    c2, half = boxes.centre[b, :2], boxes.half[b]
    u, v = _axes(boxes.psi[b])
    p0, p1, nrm = obstacles.edges[s, :2], obstacles.edges[s, 2:], obstacles.edge_normals[s]
    corners = (
        c2[:, None, :]
        + (_SIGNS2[None, :, 0:1] * half[:, None, 0:1]) * u[:, None, :]
        + (_SIGNS2[None, :, 1:2] * half[:, None, 1:2]) * v[:, None, :]
    )  # (K, 4, 2)
    over_n = np.max(np.einsum("kci,ki->kc", p0[:, None, :] - corners, nrm), axis=1)  # landward reach of the box
    over = [over_n]
    dirs = [np.column_stack([nrm, np.zeros(len(b))])]
    for axis, h in ((u, half[:, 0]), (v, half[:, 1])):
        a0, a1, ac = (np.einsum("ki,ki->k", x, axis) for x in (p0, p1, c2))
        lo, hi = np.minimum(a0, a1), np.maximum(a0, a1)
        over.append(np.minimum(ac + h - lo, hi - (ac - h)))
        away = np.where(0.5 * (lo + hi) > ac, -1.0, 1.0)
        dirs.append(np.column_stack([axis * away[:, None], np.zeros(len(b))]))
    over.append(obstacles.coast_height_m + boxes.centre[b, 2] + half[:, 2])  # the top: land height - box bottom
    dirs.append(np.tile([0.0, 0.0, -1.0], (len(b), 1)))
    over_all = np.column_stack(over)
    k = np.argmin(over_all, axis=1)
    depth = over_all[np.arange(len(b)), k]
    keep = np.flatnonzero(depth > -margin_m)
    if not len(keep):
        return Contacts.empty()
    keep = keep[_deepest_per_row(b[keep], depth[keep])]
    normal = np.stack(dirs, axis=1)[keep, k[keep]]
    point = support_point(boxes, b[keep], -normal)
    return Contacts(boxes.rows[b[keep]], np.full(len(keep), COAST), s[keep], depth[keep], normal, point)


def object_contacts(boxes: FleetBoxes, obstacles: Obstacles, margin_m: float) -> Contacts:
    """The deepest contact of each box with the world's objects (spheres, vertical cylinders, yaw boxes)."""
    tree = obstacles._object_tree  # noqa: SLF001
    if tree is None or not len(boxes.rows):
        return Contacts.empty()
    reach = float(boxes.radius.max()) + obstacles._object_reach + margin_m  # noqa: SLF001
    pairs = cKDTree(boxes.centre).sparse_distance_matrix(tree, reach, output_type="ndarray")
    b, o = pairs["i"].astype(np.int64), pairs["j"].astype(np.int64)
    if not len(b):
        return Contacts.empty()
    depth, normal = np.full(len(b), -np.inf), np.zeros((len(b), 3))
    shapes = obstacles.object_shapes[o]
    for shape, test in ((BOX, _vs_box), (SPHERE, _vs_sphere), (CYLINDER, _vs_cylinder)):
        sel = np.flatnonzero(shapes == shape)
        if len(sel):
            depth[sel], normal[sel] = test(boxes, b[sel], obstacles, o[sel])
    keep = np.flatnonzero(depth > -margin_m)
    if not len(keep):
        return Contacts.empty()
    keep = keep[_deepest_per_row(b[keep], depth[keep])]
    point = support_point(boxes, b[keep], -normal[keep])
    return Contacts(boxes.rows[b[keep]], np.full(len(keep), OBJECT), o[keep], depth[keep], normal[keep], point)


def support_point(boxes: FleetBoxes, b: np.ndarray, direction: np.ndarray) -> np.ndarray:
    """The point of each yaw box b farthest along `direction` (K, 3) NED unit: where it touches an obstacle there."""
    u, v = _axes(boxes.psi[b])
    half = boxes.half[b]
    reach_u = np.einsum("ki,ki->k", u, direction[:, :2])
    reach_v = np.einsum("ki,ki->k", v, direction[:, :2])
    offset = np.zeros((len(b), 3))
    offset[:, :2] = np.sign(reach_u)[:, None] * half[:, 0:1] * u + np.sign(reach_v)[:, None] * half[:, 1:2] * v
    offset[:, 2] = np.sign(direction[:, 2]) * half[:, 2]
    return boxes.centre[b] + offset


def _vs_box(boxes, b, obstacles, o):
    return box_box(boxes.centre[b], boxes.psi[b], boxes.half[b], obstacles.object_centres_ned[o],
                   obstacles.object_psi[o], obstacles.object_half[o])  # fmt: skip


def _closest_in_box(boxes, b, point, dims: int):
    """The point's offset from the closest point of each yaw box (first `dims` coordinates, box axes), in NE(D)."""
    u, v = _axes(boxes.psi[b])
    d = point - boxes.centre[b]
    local = np.column_stack([np.einsum("ki,ki->k", d[:, :2], u), np.einsum("ki,ki->k", d[:, :2], v), d[:, 2]])
    clamped = np.clip(local, -boxes.half[b], boxes.half[b])
    off = (local - clamped)[:, :dims]
    inside_depth = np.min(boxes.half[b][:, :dims] - np.abs(local[:, :dims]), axis=1)
    axis_in = np.argmin(boxes.half[b][:, :dims] - np.abs(local[:, :dims]), axis=1)
    frame = np.stack([np.column_stack([u, np.zeros(len(b))]), np.column_stack([v, np.zeros(len(b))]),
                      np.tile([0.0, 0.0, 1.0], (len(b), 1))], axis=1)[:, :dims]  # fmt: skip
    return off, local, inside_depth, axis_in, frame


def _vs_round(boxes, b, centre, radius, dims: int):
    """Depth and normal (object -> vessel) of a disc (dims 2) or ball (dims 3) of `radius` about `centre`."""
    off, local, inside_depth, axis_in, frame = _closest_in_box(boxes, b, centre, dims)
    dist = np.linalg.norm(off, axis=1)
    outside = dist > 1e-12
    # outside the box: along the offset; inside: out through the nearest face
    dir_local = np.where(outside[:, None], -off / np.maximum(dist, 1e-12)[:, None], 0.0)
    k = np.arange(len(b))
    sign = -np.where(local[k, axis_in] >= 0.0, 1.0, -1.0)
    dir_local[~outside, axis_in[~outside]] = sign[~outside]
    normal = np.einsum("kd,kdi->ki", dir_local, frame)
    depth = np.where(outside, radius - dist, radius + inside_depth)
    return depth, normal


def _vs_sphere(boxes, b, obstacles, o):
    return _vs_round(boxes, b, obstacles.object_centres_ned[o], obstacles.object_half[o, 0], 3)


def _vs_cylinder(boxes, b, obstacles, o):
    centre = obstacles.object_centres_ned[o]
    depth_h, normal_h = _vs_round(boxes, b, centre, obstacles.object_half[o, 0], 2)
    dz = boxes.centre[b, 2] - centre[:, 2]
    depth_v = boxes.half[b, 2] + obstacles.object_half[o, 2] - np.abs(dz)
    vertical = depth_v < depth_h
    normal = normal_h.copy()
    normal[vertical] = 0.0
    normal[vertical, 2] = np.where(dz[vertical] >= 0.0, 1.0, -1.0)
    return np.minimum(depth_h, depth_v), normal


def inland_contacts(boxes: FleetBoxes, obstacles: Obstacles, which: np.ndarray) -> Contacts:
    """Coast contacts of the boxes `which` (positions in boxes) whose centre is on land: pushed out through the
    nearest edge, by the centre's depth behind it plus the box's extent along its normal (a vessel created or moved
    onto land; one crossing a wall is caught by coast_contacts)."""
    if obstacles.land is None or not len(which):
        return Contacts.empty()
    c = boxes.centre[which]
    inside = which[shapely.intersects_xy(obstacles.land, c[:, 1], c[:, 0])]
    if not len(inside):
        return Contacts.empty()
    c = boxes.centre[inside]
    _, edge = obstacles._edge_tree.query_nearest(shapely.points(c[:, 0], c[:, 1]))  # noqa: SLF001
    n = obstacles.edge_normals[edge]
    u, v = _axes(boxes.psi[inside])
    half = boxes.half[inside]
    extent = half[:, 0] * np.abs(np.einsum("ki,ki->k", u, n)) + half[:, 1] * np.abs(np.einsum("ki,ki->k", v, n))
    depth = np.einsum("ki,ki->k", obstacles.edges[edge, :2] - c[:, :2], n) + extent
    normal = np.column_stack([n, np.zeros(len(inside))])
    point = support_point(boxes, inside, -normal)
    return Contacts(boxes.rows[inside], np.full(len(inside), COAST), edge, depth, normal, point)


def static_contacts(boxes: FleetBoxes, obstacles: Obstacles, margin_m: float) -> Contacts:
    """Every contact of the boxes with the seabed, the coast and the objects (one per vessel and kind)."""
    return Contacts.concat(
        [
            seabed_contacts(boxes, obstacles, margin_m),
            coast_contacts(boxes, obstacles, margin_m),
            object_contacts(boxes, obstacles, margin_m),
        ]
    )


# ----------------------------------------------------------------------------------------------------- response
def respond_static(position, velocity, contacts: Contacts, params: ContactParams) -> np.ndarray:
    """Push each vessel of the overlapping contacts out along the normal and take away its velocity into the
    obstacle (module docstring), in place on position (N, 3) and velocity (N, 3) NED (fleet rows). Returns the
    normal approach speeds -v.n (m/s, before the response) of the contacts."""
    rows, n = contacts.row, contacts.normal
    vn = np.einsum("ki,ki->k", velocity[rows], n)
    on = contacts.depth > 0.0
    np.add.at(position, rows[on], contacts.push[on])
    into = on & (vn < 0.0)
    dv = -(1.0 + params.restitution) * vn[into]
    v = velocity[rows[into]] + dv[:, None] * n[into]
    if params.friction > 0.0:
        vt = v - np.einsum("ki,ki->k", v, n[into])[:, None] * n[into]
        speed = np.linalg.norm(vt, axis=1)
        cut = np.minimum(speed, params.friction * dv) / np.maximum(speed, 1e-12)
        v -= cut[:, None] * vt
    velocity[rows[into]] = v
    return -vn


def respond_pairs(position, velocity, mass, i, j, depth, normal, params: ContactParams) -> np.ndarray:
    """Two vessels' response (module docstring) in place on position, velocity (N, 3) NED and mass (N,), fleet
    rows i, j; returns the normal approach speeds -(v_i - v_j).n before the response (m/s)."""
    mi, mj = mass[i], mass[j]
    vn = np.einsum("ki,ki->k", velocity[i] - velocity[j], normal)
    on = depth > 0.0
    share = depth[on] / (mi[on] + mj[on])
    np.add.at(position, i[on], normal[on] * (share * mj[on])[:, None])
    np.add.at(position, j[on], -normal[on] * (share * mi[on])[:, None])
    into = on & (vn < 0.0)
    impulse = -(1.0 + params.restitution) * vn[into] / (1.0 / mi[into] + 1.0 / mj[into])
    np.add.at(velocity, i[into], normal[into] * (impulse / mi[into])[:, None])
    np.add.at(velocity, j[into], -normal[into] * (impulse / mj[into])[:, None])
    return -vn


# ------------------------------------------------------------------------------------------ a fleet's contacts
@dataclass(frozen=True)
class CollisionEvent:
    """A contact that began at the end of the step ending at sim_time_s: vessel, the other ("seabed", "coast", an
    object's name or a vessel's name), its kind (KIND_NAMES), where (map ENU m), the normal (ENU, towards the
    vessel) and the normal approach speed before the response (m/s, > 0 closing)."""

    vessel: str
    other: str
    kind: str
    sim_time_s: float
    point_enu: tuple[float, float, float]
    normal_enu: tuple[float, float, float]
    relative_speed_mps: float

    def __str__(self) -> str:
        return (
            f"vessel '{self.vessel}' hit {self.kind} '{self.other}' at t={self.sim_time_s:.3f} s, "
            f"{self.relative_speed_mps:.2f} m/s"
        )


@dataclass
class FleetState:
    """The arrays of a fleet the collisions read and change (fleet rows): NED position (N, 3) and body velocity
    nu (N, 6) are written in place; q (N, 4) w x y z, box half extents and centres (N, 3) FRD, masses (N,), aerial
    (N,) bool and active (N,) bool (not frozen) are read."""

    position: np.ndarray
    q: np.ndarray
    nu: np.ndarray
    half: np.ndarray
    centre_frd: np.ndarray
    mass: np.ndarray
    aerial: np.ndarray
    active: np.ndarray
    radius: np.ndarray | None = None  # (N,) bounding radius of the box about CO, m (None: computed)

    def __post_init__(self) -> None:
        if self.radius is None:
            self.radius = np.linalg.norm(self.centre_frd, axis=1) + np.linalg.norm(self.half, axis=1)


class Collider:
    """The contacts of one fleet: the obstacles and the contact law, the contacts going on (by vessel and other),
    and the events of the contacts that began (the rule: an event when a vessel's contact with one obstacle or
    vessel begins, i.e. it overlaps and was not within the margin of it at the previous check; it ends when the
    gap exceeds the margin)."""

    def __init__(self, obstacles: Obstacles | None = None, params: ContactParams | None = None) -> None:
        self.obstacles = obstacles or Obstacles()
        self.params = params or ContactParams()
        self.ongoing: set[tuple[str, str]] = set()
        self.contact_rows = np.zeros(0, dtype=np.int64)  # fleet rows with a contact at the last check
        self.events: list[CollisionEvent] = []
        self.placed: set[str] = set()  # vessels created or moved since the last check: are they on land?

    def boxes(self, state: FleetState) -> FleetBoxes:
        rows = np.flatnonzero(state.active)
        return fleet_boxes(rows, state.position[rows], state.q[rows], state.half[rows], state.centre_frd[rows],
                           state.aerial[rows])  # fmt: skip

    def near(self, state: FleetState, horizon_s: float) -> bool:
        """Whether some vessel could reach an obstacle or another vessel within horizon_s h: any gap smaller than
        the reach 2 v_max h + A_MAX h^2 / 2 + margin (v_max: the fastest vessel's speed now; accelerations up to
        A_MAX), so that steps without any can be integrated in one call and left unchecked."""
        if self.ongoing or self.placed:  # contacts go on, or vessels were placed: they are checked anyway
            return True
        if not state.active.any():
            return False
        speed = float(np.max(np.linalg.norm(state.nu[state.active, :3], axis=1)))
        reach = 2.0 * speed * horizon_s + 0.5 * A_MAX_MPS2 * horizon_s**2 + self.params.margin_m
        if self.clear(state, reach):
            return False
        boxes = self.boxes(state)
        if len(static_contacts(boxes, self.obstacles, reach).row):
            return True
        return bool(len(vessel_contacts(boxes, reach)[0]))

    def resolve(self, state: FleetState, names: list[str], t_s: float) -> bool:
        """Detect and respond (module docstring) in place on state; note the contacts that began as events at sim
        time t_s. Returns whether the set of vessels in contact changed."""
        if not self.ongoing and not self.placed and self.clear(state):
            return self.end_all()
        boxes = self.boxes(state)
        margin = self.params.margin_m
        static = static_contacts(boxes, self.obstacles, margin)
        if self.placed:  # created or moved onto land, without an edge near: out through the nearest edge
            placed = np.flatnonzero(np.isin([names[r] for r in boxes.rows], list(self.placed)))
            self.placed = set()
            placed = placed[~np.isin(boxes.rows[placed], static.row[static.kind == COAST])]
            static = Contacts.concat([static, inland_contacts(boxes, self.obstacles, placed)])
        i, j, depth, normal = vessel_contacts(boxes, margin)
        rot = rotation_matrix(state.q)
        velocity = np.einsum("nij,nj->ni", rot, state.nu[:, :3])  # NED ground velocity
        before = velocity.copy()
        speed_static = respond_static(state.position, velocity, static, self.params)
        speed_pairs = respond_pairs(state.position, velocity, state.mass, boxes.rows[i], boxes.rows[j], depth,
                                    normal, self.params)  # fmt: skip
        changed = np.flatnonzero(np.any(velocity != before, axis=1))
        state.nu[changed, :3] = np.einsum("nji,nj->ni", rot[changed], velocity[changed])
        rows = self._note(static, speed_static, boxes, (i, j, depth, normal, speed_pairs), names, t_s)
        moved = not np.array_equal(rows, self.contact_rows)
        self.contact_rows = rows
        return moved

    def _note(self, static: Contacts, speed_static, boxes: FleetBoxes, pairs, names: list[str], t_s: float):
        """Events of the contacts that began (a loop over contacts, not vessels); returns the fleet rows in contact
        (sorted int64)."""
        i, j, depth, normal, speed_pairs = pairs
        now: set[tuple[str, str]] = set()
        rows_now: set[int] = set()
        for k in range(len(static.row)):
            kind = int(static.kind[k])
            other = self.obstacles.object_names[static.other[k]] if kind == OBJECT else KIND_NAMES[kind]
            key = (names[static.row[k]], other)
            if not self._goes_on(key, static.depth[k], now, int(static.row[k]), rows_now):
                self.events.append(_event(key, KIND_NAMES[kind], t_s, static.point[k], static.normal[k],
                                          speed_static[k]))  # fmt: skip
        if len(i):
            points = support_point(boxes, i, -normal)
        for k in range(len(i)):
            ra, rb = int(boxes.rows[i[k]]), int(boxes.rows[j[k]])
            for key, sign, row in (((names[ra], names[rb]), 1.0, ra), ((names[rb], names[ra]), -1.0, rb)):
                if not self._goes_on(key, depth[k], now, row, rows_now):
                    self.events.append(_event(key, "vessel", t_s, points[k], sign * normal[k], speed_pairs[k]))
        self.ongoing = now
        return np.array(sorted(rows_now), dtype=np.int64)

    def _goes_on(self, key, depth: float, now: set, row: int, rows_now: set) -> bool:
        """Whether contact `key` (vessel, other; depth m) goes on (True), begins (False: its event is due) or is
        none (True): a contact begins with an overlap and goes on while within the margin; kept in `now` and its
        vessel's row in `rows_now` while it lasts."""
        going_on = key in self.ongoing
        if going_on or depth > 0.0:
            now.add(key)
            rows_now.add(row)
        return going_on or depth <= 0.0

    def clear(self, state: FleetState, reach_m: float | None = None) -> bool:
        """True when no vessel's bounding sphere (about CO, grown by reach_m, default the contact margin) reaches
        the seabed's shallowest depth, the world's bounds or another vessel's sphere: nothing to check."""
        active = state.active
        every = active.all()
        p = state.position if every else state.position[active]
        r = (state.radius if every else state.radius[active]) + (self.params.margin_m if reach_m is None else reach_m)
        ob = self.obstacles
        if not len(p) or (ob.seabed is not None and (p[:, 2] + r).max() > ob.seabed_min_depth_m):
            return not len(p)
        if ob.has_world:
            lo, hi = ob.bounds_ne
            if ((p[:, :2] + r[:, None] > lo) & (p[:, :2] - r[:, None] < hi)).all(axis=1).any():
                return False
        if len(p) < 2:
            return True
        pairs = cKDTree(p).query_pairs(2.0 * float(r.max()), output_type="ndarray")
        i, j = pairs[:, 0], pairs[:, 1]
        aerial = state.aerial if every else state.aerial[active]
        return not ((np.linalg.norm(p[i] - p[j], axis=1) < r[i] + r[j]) & (aerial[i] == aerial[j])).any()

    def end_all(self) -> bool:
        """Every contact ended (nothing within reach: Collider.near); returns whether some were going on."""
        going_on = bool(self.ongoing) or len(self.contact_rows) > 0
        if not going_on:
            return False
        self.ongoing = set()
        self.contact_rows = np.zeros(0, dtype=np.int64)
        return going_on

    def forget(self, name: str) -> None:
        """Vessel `name` left the fleet: its contacts end (no event)."""
        self.ongoing = {key for key in self.ongoing if name not in key}
        self.placed.discard(name)
        self.contact_rows = np.zeros(0, dtype=np.int64)  # rows move when a vessel leaves: found again next step

    def take_events(self) -> list[CollisionEvent]:
        events, self.events = self.events, []
        return events


def _event(key, kind: str, t_s: float, point_ned, normal_ned, speed: float) -> CollisionEvent:
    """A CollisionEvent with its point and normal turned to ENU."""
    p, n = point_ned, normal_ned
    return CollisionEvent(key[0], key[1], kind, float(t_s), (float(p[1]), float(p[0]), float(-p[2])),
                          (float(n[1]), float(n[0]), float(-n[2])), float(speed))  # fmt: skip
