"""Bathymetry grids: bilinear interpolation that returns the stored depth exactly at every node (LOTUSim's
Seabed.cpp returns 0 at integer pixel coordinates, [LOTUSimXdyn2025]), the value of a bilinear function
between nodes, edge clamping outside, the raster orientation (row 0 = north edge), and the three file formats.
"""

from __future__ import annotations

import numpy as np
import pytest

from lotusim_env.environment import ConfigError, build_environment


def bathy(config, tmp_path=None):
    return build_environment({"bathymetry": config}, base_dir=tmp_path).bathymetry


def test_flat_default_is_1000_m():
    seabed = build_environment({}).bathymetry
    assert np.all(seabed.seabed_depth_m(np.array([0.0, 1e5]), np.array([0.0, -3e4])) == 1000.0)


def raster_setup(tmp_path):
    """A 4 x 5 raster (rows north→south, 1 row = 20 m, 1 column = 20 m), south-west pixel at (100, -40) m."""
    rng = np.random.default_rng(3)
    raster = rng.uniform(20.0, 250.0, size=(4, 5))
    xs = 100.0 + 20.0 * np.arange(5)
    ys = -40.0 + 20.0 * np.arange(4)  # south → north
    return raster, xs, ys


def node_depths_from_raster(raster):
    """depth at (xs[i], ys[j]) = raster[last_row - j, i] (row 0 is the north edge)."""
    return raster[::-1, :].T


def test_npy_exact_at_nodes_bilinear_between_and_clamped_outside(tmp_path):
    raster, xs, ys = raster_setup(tmp_path)
    np.save(tmp_path / "bed.npy", raster)
    seabed = bathy({"model": "grid", "file": "bed.npy", "resolution_m": 20.0, "origin_enu_m": [100.0, -40.0]}, tmp_path)
    nodes = node_depths_from_raster(raster)
    gx, gy = np.meshgrid(xs, ys, indexing="ij")
    assert np.array_equal(seabed.seabed_depth_m(gx, gy), nodes)  # exact, including integer coordinates
    # centre of a cell: the mean of its four corners; a quarter of the way: the bilinear weights
    assert seabed.seabed_depth_m(110.0, -30.0) == pytest.approx(nodes[:2, :2].mean(), rel=1e-12)
    expected = 0.75 * 0.5 * nodes[1, 2] + 0.25 * 0.5 * nodes[2, 2] + 0.75 * 0.5 * nodes[1, 3] + 0.25 * 0.5 * nodes[2, 3]
    assert seabed.seabed_depth_m(125.0, 10.0) == pytest.approx(expected, rel=1e-12)
    assert seabed.seabed_depth_m(-1e4, 1e4) == pytest.approx(nodes[0, -1])  # clamp to the north-west node
    assert seabed.seabed_depth_m(1e4, -1e4) == pytest.approx(nodes[-1, 0])


def test_png_raster_with_depth_scale_and_offset(tmp_path):
    from PIL import Image

    grey = np.array([[10, 20, 30], [40, 50, 60]], dtype=np.uint8)  # north row first
    Image.fromarray(grey, mode="L").save(tmp_path / "bed.png")
    seabed = bathy(
        {"model": "grid", "file": "bed.png", "resolution_m": 2.0, "depth_scale_m": 0.5, "depth_offset_m": 5.0}, tmp_path
    )
    # south-west pixel (value 40) at the origin; north-east pixel (value 30) at (4, 2)
    assert seabed.seabed_depth_m(0.0, 0.0) == pytest.approx(5.0 + 0.5 * 40)
    assert seabed.seabed_depth_m(4.0, 2.0) == pytest.approx(5.0 + 0.5 * 30)
    assert seabed.seabed_depth_m(1.0, 1.0) == pytest.approx(5.0 + 0.5 * (10 + 20 + 40 + 50) / 4)


def test_csv_long_format_with_copernicus_column_names(tmp_path):
    xs, ys = np.array([0.0, 10.0, 50.0]), np.array([0.0, 30.0])
    rows = [(x, y, 100.0 + x + 2.0 * y) for y in ys for x in xs]
    np.savetxt(tmp_path / "bed.csv", rows, delimiter=",", header="x_m,y_m,deptho_m", comments="")
    seabed = bathy({"model": "grid", "file": "bed.csv"}, tmp_path)
    assert seabed.seabed_depth_m(50.0, 30.0) == 210.0
    assert seabed.seabed_depth_m(30.0, 15.0) == pytest.approx(100.0 + 30.0 + 30.0)  # a plane is reproduced


def test_bathymetry_errors_name_the_key(tmp_path):
    with pytest.raises(ConfigError, match=r"bathymetry\.depth_m: expected a number > 0"):
        bathy({"model": "flat", "depth_m": -5})
    with pytest.raises(ConfigError, match=r"bathymetry\.model: expected one of flat, grid, got 'mesh'"):
        bathy({"model": "mesh"})
    np.save(tmp_path / "bad.npy", np.ones(5))
    with pytest.raises(ConfigError, match=r"bathymetry\.file: .*2-D raster"):
        bathy({"model": "grid", "file": "bad.npy"}, tmp_path)
