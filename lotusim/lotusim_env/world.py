"""The world's static geometry: coast and islands (land polygons), objects (buoys, mines, piers, rocks) as primitives.

What sensors see and vessels collide with, besides the other vessels and the seabed (the seabed is the
environment's bathymetry, `Environment.bathymetry.seabed_depth_m`, depth positive down: map z = −depth).

Frames and units: `map` ENU (x east, y north, z up), metres; yaw counter-clockwise from east (REP 103), radians
in the arrays, degrees in the configuration. The configuration is the `world:` section of the environment mapping
(schema: docs/environment.md, section `world`; the ray caster and the LiDAR: docs/perception.md). Land comes from
a GeoJSON file (RFC 7946: WGS84 longitude, latitude; Polygon/MultiPolygon geometries are land; converted to `map`
with lotusim_core.base.geodesy around the environment's origin) and/or inline ENU polygons. Land is a vertical
prism: its walls are the polygons' edges, from the seabed up to `coast.elevation_m` above the sea surface, with a
flat top there.

Every value is read through the checked getters of lotusim_env.config: a bad world fails when the environment
is built, with `world.<key>: reason`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import shapely

from lotusim_core.base.geodesy import GeodeticOrigin, geodetic_to_enu
from lotusim_core.base.validation import Validator, join_key
from lotusim_env.config import ConfigError, check_keys, get_choice, get_float, get_path, get_vector, section

SPHERE, CYLINDER, BOX = 0, 1, 2
SHAPES = {"sphere": SPHERE, "cylinder": CYLINDER, "box": BOX}

# Defaults per object kind: shape, size, reflectivity in [0, 1] (radar/sonar strength) and RGB albedo (camera).
# [assumption] Sizes are typical, not from a datasheet: a small spar/can navigation buoy 1 m across, 2 m tall; a
# moored contact mine 1 m across; a rock 4 m across. Reflectivities are relative: steel > concrete > rock > sand.
# Colours: a red (port-hand lateral) buoy, a dark grey mine, grey concrete and rock.
KIND_DEFAULTS: dict[str, dict[str, Any]] = {
    "buoy": {"shape": "cylinder", "radius_m": 0.5, "height_m": 2.0, "reflectivity": 0.9, "albedo": (0.8, 0.1, 0.1)},
    "mine": {"shape": "sphere", "radius_m": 0.5, "reflectivity": 0.8, "albedo": (0.15, 0.15, 0.15)},
    "rock": {"shape": "sphere", "radius_m": 2.0, "reflectivity": 0.5, "albedo": (0.35, 0.33, 0.30)},
    "pier": {"shape": "box", "reflectivity": 0.7, "albedo": (0.55, 0.55, 0.55)},
}
OTHER_DEFAULTS: dict[str, Any] = {"reflectivity": 0.5, "albedo": (0.5, 0.5, 0.5)}
COAST_DEFAULTS = {"elevation_m": 10.0, "reflectivity": 0.6, "albedo": (0.45, 0.40, 0.33)}  # [assumption] rock, sand
SEABED_DEFAULTS = {"reflectivity": 0.3, "albedo": (0.60, 0.55, 0.40)}  # [assumption] a sandy floor

WORLD_KEYS = ("coast", "objects", "seabed")
SEABED_KEYS = ("reflectivity", "albedo")  # the seabed's shape is the environment's bathymetry
# elevation_m, not height_m: current_server ranges leaves by their name, and height_m is a wave height there
COAST_KEYS = ("file", "polygons", "elevation_m", "reflectivity", "albedo")
OBJECT_KEYS = (
    "name",
    "kind",
    "shape",
    "position",
    "latitude_deg",
    "longitude_deg",
    "z_m",
    "radius_m",
    "height_m",
    "size_m",
    "yaw_deg",
    "reflectivity",
    "albedo",
)
MAX_COAST_VERTICES = 2_000_000  # a clipped coastline holds thousands; millions means an unclipped planet

_CHECK = Validator("", ConfigError)


@dataclass(frozen=True)
class World:
    """Static geometry in `map` ENU (m). Land: closed rings (last vertex != first) and their edges; objects: rows.

    coast_rings holds every boundary ring of the land polygons (exteriors and holes, e.g. a lake on an island);
    `land` is the same land as one shapely (Multi)Polygon, for point-in-land tests (land_contains).
    """

    coast_rings: tuple[np.ndarray, ...] = ()
    segments: np.ndarray = field(default_factory=lambda: np.zeros((0, 4)))
    object_names: tuple[str, ...] = ()
    object_kinds: tuple[str, ...] = ()
    object_shapes: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=int))
    object_centers: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    object_half_extents: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    object_yaw_rad: np.ndarray = field(default_factory=lambda: np.zeros(0))
    object_reflectivity: np.ndarray = field(default_factory=lambda: np.zeros(0))
    object_albedo: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    coast_reflectivity: float = COAST_DEFAULTS["reflectivity"]
    coast_albedo: np.ndarray = field(default_factory=lambda: np.array(COAST_DEFAULTS["albedo"]))
    coast_height_m: float = COAST_DEFAULTS["elevation_m"]
    land: Any = field(default_factory=lambda: shapely.MultiPolygon())
    seabed_reflectivity: float = SEABED_DEFAULTS["reflectivity"]
    seabed_albedo: np.ndarray = field(default_factory=lambda: np.array(SEABED_DEFAULTS["albedo"]))

    def is_empty(self) -> bool:
        """True when the world holds neither land nor objects."""
        return len(self.coast_rings) == 0 and len(self.object_names) == 0

    @property
    def object_count(self) -> int:
        """Number of objects O."""
        return len(self.object_names)

    @cached_property
    def segment_tree(self) -> shapely.STRtree:
        """An STRtree over the coast edges (as line strings; tree index = row of `segments`), built on first use."""
        lines = shapely.linestrings(self.segments.reshape(-1, 2, 2)) if len(self.segments) else []
        return shapely.STRtree(lines)

    @cached_property
    def object_radius_m(self) -> np.ndarray:
        """(O,) radius of each object's bounding sphere about its centre (m)."""
        return np.linalg.norm(self.object_half_extents, axis=1)


def land_contains(world: World, xy: np.ndarray) -> np.ndarray:
    """(N,) bool: which of the (N, 2) points (x east, y north; m, `map`) lie on land (inside, or on the coast line)."""
    pts = np.asarray(xy, dtype=float).reshape(-1, 2)
    if world.land.is_empty:
        return np.zeros(len(pts), dtype=bool)
    shapely.prepare(world.land)  # once: later calls reuse the prepared geometry
    return shapely.intersects_xy(world.land, pts[:, 0], pts[:, 1])


# ------------------------------------------------------------------------------------------------ building
def build_world(
    config: Mapping[str, Any] | None, key: str, base_dir: Path | None, origin: GeodeticOrigin | None
) -> World:
    """The World of the environment's `world:` section (None or {}: an empty world).

    key: this section's dotted path ("world") for errors; base_dir: where relative GeoJSON paths resolve; origin:
    the environment's geodetic origin (needed by a GeoJSON coast and by objects placed by latitude/longitude).
    Raises ConfigError("key: reason").
    """
    cfg = section(config, key)
    check_keys(cfg, WORLD_KEYS, key)
    coast_cfg = section(cfg.get("coast"), join_key(key, "coast"))
    land, height, coast_refl, coast_albedo = _coast(coast_cfg, join_key(key, "coast"), base_dir, origin)
    rings = _rings(land)
    objects = [
        _object(item, join_key(join_key(key, "objects"), i), origin)
        for i, item in enumerate(_CHECK.sequence(cfg.get("objects"), join_key(key, "objects")))
    ]
    seabed_cfg = section(cfg.get("seabed"), join_key(key, "seabed"))
    check_keys(seabed_cfg, SEABED_KEYS, join_key(key, "seabed"))
    names = [o["name"] for o in objects]
    for i, name in enumerate(names):
        if name in names[:i]:
            raise ConfigError(f"{key}.objects[{i}].name: {name!r} is used twice (names must be unique)")
    return World(
        coast_rings=tuple(rings),
        segments=_segments(rings),
        object_names=tuple(names),
        object_kinds=tuple(o["kind"] for o in objects),
        object_shapes=np.array([o["shape"] for o in objects], dtype=int),
        object_centers=np.array([o["center"] for o in objects], dtype=float).reshape(-1, 3),
        object_half_extents=np.array([o["half"] for o in objects], dtype=float).reshape(-1, 3),
        object_yaw_rad=np.array([o["yaw"] for o in objects], dtype=float),
        object_reflectivity=np.array([o["reflectivity"] for o in objects], dtype=float),
        object_albedo=np.array([o["albedo"] for o in objects], dtype=float).reshape(-1, 3),
        coast_reflectivity=coast_refl,
        coast_albedo=coast_albedo,
        coast_height_m=height,
        land=land,
        seabed_reflectivity=_unit_interval(
            seabed_cfg, "reflectivity", join_key(key, "seabed"), SEABED_DEFAULTS["reflectivity"]
        ),
        seabed_albedo=_albedo(seabed_cfg, join_key(key, "seabed"), SEABED_DEFAULTS["albedo"]),
    )


def _unit_interval(cfg: Mapping[str, Any], name: str, key: str, default: float) -> float:
    return get_float(cfg, name, key, default, minimum=0.0, maximum=1.0)


def _albedo(cfg: Mapping[str, Any], key: str, default: Any) -> np.ndarray:
    rgb = get_vector(cfg, "albedo", key, 3, list(default))
    if np.any(rgb < 0.0) or np.any(rgb > 1.0):
        raise ConfigError(f"{join_key(key, 'albedo')}: expected 3 values (R, G, B) in [0, 1], got {rgb.tolist()}")
    return rgb


def _coast(
    cfg: Mapping[str, Any], key: str, base_dir: Path | None, origin: GeodeticOrigin | None
) -> tuple[Any, float, float, np.ndarray]:
    """Land (one shapely geometry, ENU m), land height (m above z = 0), reflectivity, albedo."""
    check_keys(cfg, COAST_KEYS, key)
    height = get_float(cfg, "elevation_m", key, COAST_DEFAULTS["elevation_m"], minimum=0.0)
    refl = _unit_interval(cfg, "reflectivity", key, COAST_DEFAULTS["reflectivity"])
    albedo = _albedo(cfg, key, COAST_DEFAULTS["albedo"])
    polygons: list[shapely.Polygon] = []
    if cfg.get("file") is not None:
        path = get_path(cfg, "file", key, base_dir)
        if origin is None:
            raise ConfigError(f"{join_key(key, 'file')}: a GeoJSON coast (WGS84) needs the environment's origin")
        polygons += geojson_land_enu(path, join_key(key, "file"), origin)
    polygons += [
        _inline_polygon(p, join_key(join_key(key, "polygons"), i))
        for i, p in enumerate(_CHECK.sequence(cfg.get("polygons"), join_key(key, "polygons")))
    ]
    land = shapely.union_all(polygons) if polygons else shapely.MultiPolygon()
    return land, height, refl, albedo


def _inline_polygon(raw: Any, key: str) -> shapely.Polygon:
    """A land polygon given as a list of >= 3 [x_east_m, y_north_m] vertices (closed implicitly)."""
    vertices = _CHECK.sequence(raw, key)
    if len(vertices) < 3:
        raise ConfigError(f"{key}: expected a list of at least 3 [x, y] vertices (ENU m), got {len(vertices)}")
    xy = np.array([_CHECK.vector(v, join_key(key, i), 2) for i, v in enumerate(vertices)])
    return _valid_polygon(shapely.Polygon(xy), key)


def _valid_polygon(poly: shapely.Polygon, key: str) -> shapely.Polygon:
    if poly.area <= 0.0:
        raise ConfigError(f"{key}: the polygon has no area (its vertices are collinear or repeated)")
    if not poly.is_valid:
        reason = shapely.is_valid_reason(poly)
        raise ConfigError(f"{key}: not a simple polygon ({reason}); its edges must not cross")
    return poly


def geojson_land_enu(path: Path, key: str, origin: GeodeticOrigin) -> list[shapely.Polygon]:
    """The Polygon/MultiPolygon geometries of a GeoJSON file (WGS84 lon, lat in degrees) as ENU polygons (m).

    Accepts a FeatureCollection, a Feature or a bare geometry (RFC 7946); other geometry types (LineString
    coastlines, points) are refused: land must be closed to tell land from sea.
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"{key}: cannot read GeoJSON {path}: {exc}") from None
    geometries = _geojson_geometries(data, key)
    polygons: list[shapely.Polygon] = []
    for i, geom in enumerate(geometries):
        kind = geom.get("type") if isinstance(geom, Mapping) else None
        coords = geom.get("coordinates") if isinstance(geom, Mapping) else None
        if kind not in ("Polygon", "MultiPolygon") or not isinstance(coords, list):
            raise ConfigError(f"{key}: geometry {i} is {kind!r}; land must be Polygon or MultiPolygon (closed rings)")
        for j, rings in enumerate([coords] if kind == "Polygon" else coords):
            polygons.append(_geojson_polygon(rings, f"{key}: geometry {i} polygon {j}", origin))
    count = sum(len(p.exterior.coords) + sum(len(r.coords) for r in p.interiors) for p in polygons)
    if count > MAX_COAST_VERTICES:
        raise ConfigError(f"{key}: {count} vertices (more than {MAX_COAST_VERTICES}); clip the coast to the area")
    return polygons


def _geojson_geometries(data: Any, key: str) -> list[Any]:
    if not isinstance(data, Mapping):
        raise ConfigError(f"{key}: expected a GeoJSON object, got {type(data).__name__}")
    if data.get("type") == "FeatureCollection":
        features = data.get("features")
        if not isinstance(features, list):
            raise ConfigError(f"{key}: a FeatureCollection needs a list of features")
        return [f.get("geometry") if isinstance(f, Mapping) else None for f in features]
    if data.get("type") == "Feature":
        return [data.get("geometry")]
    return [data]


def _geojson_polygon(rings: Any, where: str, origin: GeodeticOrigin) -> shapely.Polygon:
    """One GeoJSON polygon (exterior ring then holes, [lon, lat] positions) in ENU m."""
    enu = []
    for ring in rings if isinstance(rings, list) else [None]:
        try:
            lonlat = np.array(ring, dtype=float)[:, :2]
        except (TypeError, ValueError, IndexError):
            raise ConfigError(f"{where}: expected rings of [longitude, latitude] positions") from None
        if len(lonlat) < 4 or not np.all(np.isfinite(lonlat)):
            raise ConfigError(f"{where}: a ring needs at least 4 finite positions (closed), got {len(lonlat)}")
        geo = np.column_stack([lonlat[:, 1], lonlat[:, 0], np.full(len(lonlat), origin.altitude_m)])
        enu.append(geodetic_to_enu(geo, origin)[:, :2])
    if not enu:
        raise ConfigError(f"{where}: a polygon needs an exterior ring")
    poly = shapely.Polygon(enu[0], enu[1:])
    if not poly.is_valid:  # a ring touching itself after projection: repair rather than refuse real data
        poly = shapely.make_valid(poly)
        parts = [g for g in getattr(poly, "geoms", [poly]) if isinstance(g, shapely.Polygon) and g.area > 0]
        poly = shapely.union_all(parts) if parts else shapely.Polygon()
    if poly.area <= 0.0:
        raise ConfigError(f"{where}: the polygon has no area")
    return poly


def _rings(land: Any) -> list[np.ndarray]:
    """Every boundary ring of the land, (K, 2) without the repeated last vertex."""
    polys = [land] if isinstance(land, shapely.Polygon) else list(getattr(land, "geoms", []))
    rings = []
    for p in polys:
        if not isinstance(p, shapely.Polygon) or p.is_empty:
            continue
        for ring in (p.exterior, *p.interiors):
            rings.append(np.asarray(ring.coords, dtype=float)[:-1, :2])
    return rings


def _segments(rings: list[np.ndarray]) -> np.ndarray:
    """(S, 4) edges x0, y0, x1, y1 of the closed rings."""
    if not rings:
        return np.zeros((0, 4))
    return np.concatenate([np.hstack([r, np.roll(r, -1, axis=0)]) for r in rings])


def _object(raw: Any, key: str, origin: GeodeticOrigin | None) -> dict[str, Any]:
    """One object: name, kind, shape, centre (ENU m), half extents (m), yaw (rad), reflectivity, albedo."""
    cfg = _CHECK.mapping(raw, key, OBJECT_KEYS, required=("name",), none_ok=False)
    name = _CHECK.get_text(cfg, "name", key)
    kind = _CHECK.get_text(cfg, "kind", key, "other")
    defaults = {**OTHER_DEFAULTS, **KIND_DEFAULTS.get(kind, {})}
    if "shape" not in cfg and "shape" not in defaults:
        raise ConfigError(f"{join_key(key, 'shape')}: missing (expected one of {', '.join(SHAPES)}; kind {kind!r})")
    shape = get_choice(cfg, "shape", key, SHAPES, defaults.get("shape", "sphere"))
    return {
        "name": name,
        "kind": kind,
        "shape": SHAPES[shape],
        "center": _position(cfg, key, origin),
        "half": _half_extents(cfg, key, shape, defaults),
        "yaw": np.radians(get_float(cfg, "yaw_deg", key, 0.0, minimum=-360.0, maximum=360.0)),
        "reflectivity": _unit_interval(cfg, "reflectivity", key, defaults["reflectivity"]),
        "albedo": _albedo(cfg, key, defaults["albedo"]),
    }


def _position(cfg: Mapping[str, Any], key: str, origin: GeodeticOrigin | None) -> np.ndarray:
    """The centre in ENU m: `position: [x, y, z]`, or `latitude_deg`, `longitude_deg` and `z_m` (default 0)."""
    geodetic = "latitude_deg" in cfg or "longitude_deg" in cfg
    if geodetic == ("position" in cfg):
        raise ConfigError(f"{key}: give position [x, y, z] (ENU m) or latitude_deg + longitude_deg, exactly one")
    if not geodetic:
        return get_vector(cfg, "position", key, 3)
    if "z_m" in cfg and "position" in cfg:
        raise ConfigError(f"{key}.z_m: only with latitude_deg/longitude_deg")
    if origin is None:
        raise ConfigError(f"{key}.latitude_deg: an object placed by latitude/longitude needs the environment's origin")
    lat = get_float(cfg, "latitude_deg", key, minimum=-90.0, maximum=90.0)
    lon = get_float(cfg, "longitude_deg", key, minimum=-180.0, maximum=360.0)
    xy = geodetic_to_enu(np.array([[lat, lon, origin.altitude_m]]), origin)[0, :2]
    return np.array([xy[0], xy[1], get_float(cfg, "z_m", key, 0.0)])


def _half_extents(cfg: Mapping[str, Any], key: str, shape: str, defaults: Mapping[str, Any]) -> np.ndarray:
    """(3,) half extents: sphere (r, r, r); cylinder (r, r, h/2); box (sx/2, sy/2, sz/2)."""
    allowed = {"sphere": ("radius_m",), "cylinder": ("radius_m", "height_m"), "box": ("size_m",)}[shape]
    for name in ("radius_m", "height_m", "size_m"):
        if name in cfg and name not in allowed:
            raise ConfigError(f"{join_key(key, name)}: not a size of a {shape} (give {', '.join(allowed)})")
    if shape == "box":
        if "size_m" not in cfg:
            raise ConfigError(f"{join_key(key, 'size_m')}: missing (a box needs [length_x, width_y, height_z] m)")
        size = get_vector(cfg, "size_m", key, 3)
        if np.any(size <= 0.0):
            raise ConfigError(f"{join_key(key, 'size_m')}: expected 3 sizes > 0 m, got {size.tolist()}")
        return size / 2.0
    r = get_float(cfg, "radius_m", key, defaults.get("radius_m"), minimum=0.0, strict_minimum=True)
    if shape == "sphere":
        return np.array([r, r, r])
    h = get_float(cfg, "height_m", key, defaults.get("height_m"), minimum=0.0, strict_minimum=True)
    return np.array([r, r, h / 2.0])
