"""The world's static geometry (lotusim_env.world: land, objects) as the console draws it (ROS-free).

For Foxglove's 3-D panel, in `map` (ENU, z up, m): the land as a flat top at the coast height (the polygons
triangulated, holes kept), its walls from the sea surface (z = 0) up to that height and its outline there; each
object as its primitive (sphere, vertical cylinder, yawed box) in its kind's colour with its name and kind as a
label. For the console page: the same land and objects in WGS84 (lotusim_core.base.geodesy around the environment's
origin) as one JSON-ready mapping. Both are built once per environment revision: the world does not move.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import shapely
from foxglove.messages import (
    Color,
    CubePrimitive,
    CylinderPrimitive,
    LinePrimitive,
    LinePrimitiveLineType,
    Point3,
    Pose,
    Quaternion,
    SceneEntity,
    SceneEntityDeletion,
    SceneEntityDeletionType,
    SceneUpdate,
    SpherePrimitive,
    TextPrimitive,
    Timestamp,
    TriangleListPrimitive,
    Vector3,
)

from lotusim_core.base import rotations
from lotusim_core.base.geodesy import GeodeticOrigin, enu_to_geodetic
from lotusim_env.world import World

LAND_ID = "world/land"
SHAPE_NAMES = ("sphere", "cylinder", "box")  # by lotusim_env.world SPHERE, CYLINDER, BOX
WALL_SHADE = 0.7  # walls drawn darker than the land's top, to see its edge in 3-D
OUTLINE_COLOR = Color(r=0.1, g=0.1, b=0.1, a=1.0)
LABEL_COLOR = Color(r=1.0, g=1.0, b=1.0, a=1.0)


def land_polygons(world: World) -> list[shapely.Polygon]:
    """The land as a list of polygons (ENU m, holes kept); empty without land."""
    land = world.land
    if land.is_empty:
        return []
    return [p for p in getattr(land, "geoms", [land]) if isinstance(p, shapely.Polygon) and not p.is_empty]


def land_top_triangles(world: World) -> np.ndarray:
    """(T, 3, 2) triangles (x, y; m, `map`) covering the land exactly (constrained Delaunay, holes left out)."""
    triangles = []
    for poly in land_polygons(world):
        parts = shapely.constrained_delaunay_triangles(poly)  # triangles inside the polygon, edges kept
        for tri in getattr(parts, "geoms", []):
            triangles.append(np.asarray(tri.exterior.coords, dtype=float)[:3, :2])
    return np.array(triangles, dtype=float).reshape(-1, 3, 2)


def wall_triangles(world: World) -> np.ndarray:
    """(2S, 3, 3) triangles of the coast walls: each edge a quad from z = 0 up to the coast height (m, `map`)."""
    seg = world.segments
    h = world.coast_height_m
    a0 = np.column_stack([seg[:, 0], seg[:, 1], np.zeros(len(seg))])
    b0 = np.column_stack([seg[:, 2], seg[:, 3], np.zeros(len(seg))])
    a1, b1 = a0 + [0.0, 0.0, h], b0 + [0.0, 0.0, h]
    lower, upper = np.stack([a0, b0, b1], axis=1), np.stack([a0, b1, a1], axis=1)
    return np.concatenate([lower, upper]).reshape(-1, 3, 3)


def world_scene(world: World, stamp: Timestamp) -> SceneUpdate:
    """The land (one entity, LAND_ID) and one entity per object (`world/<name>`), in `map`; empty world: none.

    The update first deletes every entity of its channel (Foxglove applies deletions before entities): a new
    environment revision's world replaces the previous one, objects removed included."""
    entities = [_land_entity(world, stamp)] if world.coast_rings else []
    entities += [_object_entity(look, stamp) for look in object_looks(world)]
    deletions = [SceneEntityDeletion(timestamp=stamp, type=SceneEntityDeletionType.All, id="")]
    return SceneUpdate(deletions=deletions, entities=entities)


def _land_entity(world: World, stamp: Timestamp) -> SceneEntity:
    h = world.coast_height_m
    top = land_top_triangles(world)
    top_xyz = np.concatenate([top, np.full(top.shape[:2] + (1,), h)], axis=2)
    r, g, b = (float(c) for c in world.coast_albedo)
    triangles = [
        TriangleListPrimitive(pose=_identity(), points=_points(top_xyz), color=Color(r=r, g=g, b=b, a=1.0)),
        TriangleListPrimitive(pose=_identity(), points=_points(wall_triangles(world)),
                              color=Color(r=WALL_SHADE * r, g=WALL_SHADE * g, b=WALL_SHADE * b, a=1.0)),
    ]  # fmt: skip
    lines = [
        LinePrimitive(type=LinePrimitiveLineType.LineLoop, pose=_identity(), thickness=2.0, scale_invariant=True,
                      points=_points(np.column_stack([ring, np.full(len(ring), h)])), color=OUTLINE_COLOR)
        for ring in world.coast_rings
    ]  # fmt: skip
    return SceneEntity(timestamp=stamp, frame_id="map", id=LAND_ID, triangles=triangles, lines=lines)


def object_looks(world: World) -> list[dict[str, Any]]:
    """Per object, what is drawn: id `world/<name>`, shape (sphere|cylinder|box), centre (x, y, z; m, `map`),
    orientation quaternion (x, y, z, w; its yaw about z), size (2 x half extents, m), RGB (its albedo: its kind's
    colour unless set), label "<name> (<kind>)" and its position 1 m above the object's top."""
    looks = []
    for i in range(world.object_count):
        c, half, yaw = world.object_centers[i], world.object_half_extents[i], float(world.object_yaw_rad[i])
        looks.append({
            "id": f"world/{world.object_names[i]}",
            "shape": SHAPE_NAMES[int(world.object_shapes[i])],
            "position": tuple(float(v) for v in c),
            "orientation": rotations.about_axis_one(2, yaw),
            "size": tuple(float(2.0 * h) for h in half),
            "rgb": tuple(float(v) for v in world.object_albedo[i]),
            "label": f"{world.object_names[i]} ({world.object_kinds[i]})",
            "label_position": (float(c[0]), float(c[1]), float(c[2] + half[2] + 1.0)),
        })  # fmt: skip
    return looks


def _object_entity(look: dict[str, Any], stamp: Timestamp) -> SceneEntity:
    """One object's entity: its primitive and its label."""
    (x, y, z), (qx, qy, qz, qw) = look["position"], look["orientation"]
    pose = Pose(position=Vector3(x=x, y=y, z=z), orientation=Quaternion(x=qx, y=qy, z=qz, w=qw))
    size = Vector3(x=look["size"][0], y=look["size"][1], z=look["size"][2])
    r, g, b = look["rgb"]
    color = Color(r=r, g=g, b=b, a=1.0)
    shape = look["shape"]
    lx, ly, lz = look["label_position"]
    label = TextPrimitive(pose=Pose(position=Vector3(x=lx, y=ly, z=lz), orientation=Quaternion(x=0.0, y=0.0, z=0.0,
                          w=1.0)), billboard=True, font_size=12.0, scale_invariant=True, color=LABEL_COLOR,
                          text=look["label"])  # fmt: skip
    return SceneEntity(
        timestamp=stamp,
        frame_id="map",
        id=look["id"],
        spheres=[SpherePrimitive(pose=pose, size=size, color=color)] if shape == "sphere" else [],
        cylinders=[CylinderPrimitive(pose=pose, size=size, bottom_scale=1.0, top_scale=1.0, color=color)]
        if shape == "cylinder"
        else [],
        cubes=[CubePrimitive(pose=pose, size=size, color=color)] if shape == "box" else [],
        texts=[label],
    )


def _identity() -> Pose:
    return Pose(position=Vector3(x=0.0, y=0.0, z=0.0), orientation=Quaternion(x=0.0, y=0.0, z=0.0, w=1.0))


def _points(xyz: np.ndarray) -> list[Point3]:
    return [Point3(x=float(x), y=float(y), z=float(z)) for x, y, z in np.asarray(xyz, dtype=float).reshape(-1, 3)]


# ------------------------------------------------------------------------------------------------ the page
def world_wgs84(world: World, origin: GeodeticOrigin) -> dict[str, Any]:
    """The world for the console page, WGS84 degrees (rounded to 1e-7, ~1 cm).

    {"land": [polygon, ...] with polygon = [exterior, hole, ...], ring = [[lat, lon], ...] (open);
     "objects": [{"name", "kind", "shape", "lat", "lon", "z_m", "radius_m", "color"}, ...]; "coast_height_m"}.
    radius_m: the object's horizontal half size (m); color: its albedo as #rrggbb.
    """
    land = []
    for poly in land_polygons(world):
        rings = [poly.exterior, *poly.interiors]
        land.append([_ring_latlon(np.asarray(r.coords, dtype=float)[:-1, :2], origin) for r in rings])
    centres = world.object_centers
    geo = enu_to_geodetic(np.column_stack([centres[:, :2], np.zeros(len(centres))]), origin)
    objects = [
        {
            "name": world.object_names[i],
            "kind": world.object_kinds[i],
            "shape": SHAPE_NAMES[int(world.object_shapes[i])],
            "lat": round(float(geo[i, 0]), 7),
            "lon": round(float(geo[i, 1]), 7),
            "z_m": float(centres[i, 2]),
            "radius_m": float(np.max(world.object_half_extents[i, :2])),
            "color": _hex(world.object_albedo[i]),
        }
        for i in range(world.object_count)
    ]
    return {"land": land, "objects": objects, "coast_height_m": world.coast_height_m}


def _ring_latlon(xy: np.ndarray, origin: GeodeticOrigin) -> list[list[float]]:
    geo = enu_to_geodetic(np.column_stack([xy, np.zeros(len(xy))]), origin)
    return np.round(geo[:, :2], 7).tolist()


def _hex(rgb: np.ndarray) -> str:
    return "#" + "".join(f"{round(float(np.clip(c, 0.0, 1.0)) * 255):02x}" for c in rgb)
