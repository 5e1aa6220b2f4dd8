"""The world's static geometry (lotusim_env.world): land from inline ENU polygons and from GeoJSON (WGS84 -> map
ENU through lotusim_core.base.geodesy), objects with their per-kind defaults, point-in-land, and bad worlds refused
at load with `world.<key>: reason`.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from lotusim_core.base.geodesy import GeodeticOrigin, enu_to_geodetic
from lotusim_env.environment import ConfigError, build_environment
from lotusim_env.world import BOX, CYLINDER, SPHERE, land_contains

ORIGIN = {"latitude_deg": 48.3, "longitude_deg": -4.6}
SQUARE = [[100.0, 100.0], [200.0, 100.0], [200.0, 200.0], [100.0, 200.0]]


def world_of(section, tmp_path=None, origin=ORIGIN):
    config = {"world": section}
    if origin is not None:
        config["origin"] = origin
    return build_environment(config, base_dir=tmp_path).world


def test_absent_section_is_an_empty_world():
    world = build_environment({}).world
    assert world.is_empty()
    assert world.segments.shape == (0, 4) and world.object_centers.shape == (0, 3)
    assert not land_contains(world, np.array([[0.0, 0.0]])).any()


def test_inline_polygon_rings_segments_and_land():
    world = world_of({"coast": {"polygons": [SQUARE], "elevation_m": 25.0}})
    assert len(world.coast_rings) == 1 and world.coast_rings[0].shape == (4, 2)
    assert world.coast_height_m == 25.0
    # 4 edges, each joining consecutive vertices of the ring, the last back to the first
    seg = world.segments
    assert seg.shape == (4, 4)
    assert np.array_equal(seg[:, 2:], np.roll(seg[:, :2], -1, axis=0))
    assert {tuple(v) for v in seg[:, :2]} == {tuple(v) for v in SQUARE}
    inside = land_contains(world, np.array([[150.0, 150.0], [99.0, 150.0], [150.0, 201.0], [100.0, 150.0]]))
    assert inside.tolist() == [True, False, False, True]  # a point on the coast line counts as land


def test_overlapping_polygons_merge_into_one_land():
    other = [[150.0, 150.0], [250.0, 150.0], [250.0, 250.0], [150.0, 250.0]]
    world = world_of({"coast": {"polygons": [SQUARE, other]}})
    assert len(world.coast_rings) == 1  # the union: one outline of 8 vertices
    assert len(world.coast_rings[0]) == 8
    assert world.land.area == pytest.approx(2 * 100.0**2 - 50.0**2)


def test_geojson_land_is_converted_to_map_enu(tmp_path):
    # a square island whose corners are the WGS84 images of known ENU points: back in ENU they must be those points
    origin = GeodeticOrigin(48.3, -4.6)
    enu = np.array([[1000.0, -500.0, 0.0], [1400.0, -500.0, 0.0], [1400.0, -100.0, 0.0], [1000.0, -100.0, 0.0]])
    lla = enu_to_geodetic(enu, origin)
    ring = [[lon, lat] for lat, lon, _ in lla] + [[lla[0, 1], lla[0, 0]]]
    hole = np.array([[1100.0, -400.0, 0.0], [1200.0, -400.0, 0.0], [1200.0, -300.0, 0.0], [1100.0, -300.0, 0.0]])
    hlla = enu_to_geodetic(hole, origin)
    hring = [[lon, lat] for lat, lon, _ in hlla] + [[hlla[0, 1], hlla[0, 0]]]
    doc = {
        "type": "FeatureCollection",
        "features": [
            {"type": "Feature", "properties": {}, "geometry": {"type": "Polygon", "coordinates": [ring, hring]}}
        ],
    }
    (tmp_path / "island.geojson").write_text(json.dumps(doc))
    world = world_of({"coast": {"file": "island.geojson"}}, tmp_path)
    assert len(world.coast_rings) == 2  # exterior + the lake
    # the corners within 0.1 mm (the coast is placed at the origin's height: the curvature drop of ~0.15 m at
    # 1.4 km changes the horizontal position by ~1e-5 m)
    ring = world.coast_rings[0]
    dist = np.linalg.norm(ring[:, None, :] - enu[None, :, :2], axis=2).min(axis=0)
    assert np.all(dist < 1e-4)
    assert world.land.area == pytest.approx(400.0**2 - 100.0**2, rel=1e-6)
    assert land_contains(world, np.array([[1050.0, -450.0], [1150.0, -350.0], [0.0, 0.0]])).tolist() == [
        True,
        False,  # in the lake
        False,
    ]
    assert len(world.segments) == 8


def test_objects_defaults_per_kind_and_explicit_sizes():
    world = world_of(
        {
            "objects": [
                {"name": "b1", "kind": "buoy", "position": [10.0, 20.0, 0.0]},
                {"name": "m1", "kind": "mine", "position": [0.0, 50.0, -30.0], "radius_m": 0.6, "reflectivity": 0.3},
                {
                    "name": "pier",
                    "kind": "pier",
                    "position": [-40.0, 0.0, 1.0],
                    "size_m": [30.0, 4.0, 3.0],
                    "yaw_deg": 90.0,
                    "albedo": [0.2, 0.3, 0.4],
                },
                {"name": "x", "kind": "wreck", "shape": "box", "size_m": [20.0, 6.0, 5.0], "position": [0, 0, -40]},
            ]
        }
    )
    assert world.object_names == ("b1", "m1", "pier", "x")
    assert world.object_kinds == ("buoy", "mine", "pier", "wreck")
    assert world.object_shapes.tolist() == [CYLINDER, SPHERE, BOX, BOX]
    assert np.allclose(world.object_half_extents[0], [0.5, 0.5, 1.0])
    assert np.allclose(world.object_half_extents[1], [0.6, 0.6, 0.6])
    assert np.allclose(world.object_half_extents[2], [15.0, 2.0, 1.5])
    assert world.object_yaw_rad[2] == pytest.approx(np.pi / 2)
    assert world.object_reflectivity.tolist() == [0.9, 0.3, 0.7, 0.5]
    assert np.allclose(world.object_albedo[2], [0.2, 0.3, 0.4])
    assert np.allclose(world.object_centers[1], [0.0, 50.0, -30.0])
    assert not world.is_empty() and world.object_count == 4


def test_object_by_latitude_longitude():
    origin = GeodeticOrigin(48.3, -4.6)
    lat, lon, _ = enu_to_geodetic(np.array([[300.0, -200.0, 0.0]]), origin)[0]
    world = world_of(
        {"objects": [{"name": "m", "kind": "mine", "latitude_deg": lat, "longitude_deg": lon, "z_m": -12}]}
    )
    assert np.allclose(world.object_centers[0], [300.0, -200.0, -12.0], atol=1e-6)


@pytest.mark.parametrize(
    ("section", "key", "reason"),
    [
        ({"coasts": {}}, "world.coasts", "unknown key"),
        ({"coast": {"polygons": [[[0, 0], [1, 0]]]}}, "world.coast.polygons[0]", "at least 3"),
        ({"coast": {"polygons": [[[0, 0], [1, 1], [2, 2]]]}}, "world.coast.polygons[0]", "no area"),
        ({"coast": {"polygons": [[[0, 0], [2, 2], [2, 0], [0, 1]]]}}, "world.coast.polygons[0]", "not a simple"),
        ({"coast": {"polygons": [[[0, 0], [1, "a"], [1, 0]]]}}, "world.coast.polygons[0][1]", "2 finite numbers"),
        ({"coast": {"elevation_m": -1}}, "world.coast.elevation_m", ">= 0"),
        ({"coast": {"albedo": [0.1, 2.0, 0.1]}}, "world.coast.albedo", "[0, 1]"),
        ({"coast": {"file": "nowhere.geojson"}}, "world.coast.file", "file not found"),
        ({"objects": [{"kind": "buoy", "position": [0, 0, 0]}]}, "world.objects[0].name", "missing"),
        ({"objects": [{"name": "a", "kind": "buoy"}]}, "world.objects[0]", "exactly one"),
        ({"objects": [{"name": "a", "shape": "cone", "position": [0, 0, 0]}]}, "world.objects[0].shape", "one of"),
        ({"objects": [{"name": "a", "kind": "wreck", "position": [0, 0, 0]}]}, "world.objects[0].shape", "missing"),
        ({"objects": [{"name": "a", "kind": "pier", "position": [0, 0, 0]}]}, "world.objects[0].size_m", "missing"),
        (
            {"objects": [{"name": "a", "kind": "mine", "position": [0, 0, 0], "size_m": [1, 1, 1]}]},
            "world.objects[0].size_m",
            "not a size of a sphere",
        ),
        (
            {"objects": [{"name": "a", "kind": "buoy", "position": [0, 0, 0], "radius_m": 0}]},
            "world.objects[0].radius_m",
            "> 0",
        ),
        (
            {"objects": [{"name": "a", "kind": "buoy", "position": [0, 0, 0], "reflectivity": 1.5}]},
            "world.objects[0].reflectivity",
            "<= 1",
        ),
        (
            {
                "objects": [
                    {"name": "a", "kind": "mine", "position": [0, 0, 0]},
                    {"name": "a", "kind": "mine", "position": [1, 0, 0]},
                ]
            },
            "world.objects[1].name",
            "used twice",
        ),
        ({"objects": {"name": "a"}}, "world.objects", "expected a list"),
        ({"seabed": {"albedo": [1, 1]}}, "world.seabed.albedo", "3 finite numbers"),
        ({"seabed": {"depth_m": 3}}, "world.seabed.depth_m", "unknown key"),
    ],
)
def test_bad_world_fails_at_load_with_key_and_reason(section, key, reason):
    with pytest.raises(ConfigError) as info:
        world_of(section)
    assert info.value.key == key, str(info.value)
    assert reason in str(info.value)


def test_geojson_errors(tmp_path):
    (tmp_path / "bad.geojson").write_text("{not json")
    with pytest.raises(ConfigError, match=r"world.coast.file: cannot read GeoJSON"):
        world_of({"coast": {"file": "bad.geojson"}}, tmp_path)
    line = {"type": "LineString", "coordinates": [[-4.6, 48.3], [-4.5, 48.3]]}
    (tmp_path / "line.geojson").write_text(json.dumps(line))
    with pytest.raises(ConfigError, match=r"world.coast.file: geometry 0 is 'LineString'"):
        world_of({"coast": {"file": "line.geojson"}}, tmp_path)
    square = {"type": "Polygon", "coordinates": [[[-4.6, 48.3], [-4.59, 48.3], [-4.59, 48.31], [-4.6, 48.3]]]}
    (tmp_path / "ok.geojson").write_text(json.dumps(square))
    with pytest.raises(
        ConfigError, match=r"world.coast.file: a GeoJSON coast \(WGS84\) needs the environment's origin"
    ):
        world_of({"coast": {"file": "ok.geojson"}}, tmp_path, origin=None)


def test_shipped_brest_coast_loads_with_the_origin_at_sea():
    """lotusim/config/world/brest_coast.geojson (OpenStreetMap via [GeoMaps2017]): the scenarios' origin is in the
    Iroise Sea; Brest (48.39 N, 4.49 W) and Crozon (48.25 N, 4.49 W) are on land; the Goulet (48.35 N, 4.55 W) is
    sea."""
    from lotusim_core.base.geodesy import geodetic_to_enu
    from lotusim_core.base.paths import config_dir

    world = world_of({"coast": {"file": str(config_dir() / "world" / "brest_coast.geojson")}})
    assert len(world.coast_rings) == 9 and 600 < len(world.segments) < 700
    origin = GeodeticOrigin(48.3, -4.6)
    places = np.array([[48.3, -4.6, 0.0], [48.39, -4.49, 0.0], [48.25, -4.49, 0.0], [48.35, -4.55, 0.0]])
    xy = geodetic_to_enu(places, origin)[:, :2]
    assert land_contains(world, xy).tolist() == [False, True, True, False]
