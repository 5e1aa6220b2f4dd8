"""Bathymetry: sea-floor depth (m, positive down) as a function of horizontal position in `map` ENU.

Models:
- flat: one depth everywhere (default 1000 m).
- grid: depths on a rectilinear grid (non-uniform axes allowed) from a CSV table, a NumPy .npy array or a
  grey-level image, interpolated bilinearly:

      H(x, y) = Σ_{i,j∈{0,1}} w_i(x) w_j(y) H_{i,j},   w_1(x) = (x − x_0)/(x_1 − x_0),  w_0 = 1 − w_1

  which returns the stored depth exactly at every grid node. (LOTUSim-Xdyn's Seabed.cpp swaps the weights and
  returns 0 at integer pixel coordinates [LOTUSimXdyn2025]; ours is tested at the nodes.)
  Outside the grid the nearest edge value is used (clamp), as in Seabed.cpp.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
from scipy.interpolate import RegularGridInterpolator

from lotusim_env.config import ConfigError, check_keys, get_choice, get_float, get_path, get_vector

DEFAULT_DEPTH_M = 1000.0


class FlatSeabed:
    """The same sea-floor depth everywhere (m, positive down)."""

    def __init__(self, depth_m: float = DEFAULT_DEPTH_M) -> None:
        self.depth_m = float(depth_m)

    def seabed_depth_m(self, x_east_m: np.ndarray, y_north_m: np.ndarray) -> np.ndarray:
        """Depth of the sea floor (m, positive down) under each point (x east, y north in `map`, m)."""
        x = np.asarray(x_east_m, dtype=float)
        return np.full(np.broadcast(x, np.asarray(y_north_m, dtype=float)).shape, self.depth_m)


class GridSeabed:
    """Sea-floor depth on a rectilinear x/y grid (m, positive down), bilinear, exact at the nodes, edge-clamped."""

    def __init__(self, x_east_m: np.ndarray, y_north_m: np.ndarray, depth_m: np.ndarray) -> None:
        """depth_m[i, j] is the depth at (x_east_m[i], y_north_m[j]); both axes strictly increasing."""
        self.x = np.asarray(x_east_m, dtype=float)
        self.y = np.asarray(y_north_m, dtype=float)
        self.depth = np.asarray(depth_m, dtype=float)
        self._interp = RegularGridInterpolator((self.x, self.y), self.depth, method="linear")

    def seabed_depth_m(self, x_east_m: np.ndarray, y_north_m: np.ndarray) -> np.ndarray:
        """Depth of the sea floor (m, positive down) under each point (x east, y north in `map`, m)."""
        x, y = np.broadcast_arrays(np.asarray(x_east_m, dtype=float), np.asarray(y_north_m, dtype=float))
        q = np.stack([np.clip(x, self.x[0], self.x[-1]), np.clip(y, self.y[0], self.y[-1])], axis=-1)
        return self._interp(q.reshape(-1, 2)).reshape(x.shape)


def _check_axis(values: np.ndarray, key: str, name: str) -> None:
    if values.size < 2 or not np.all(np.diff(values) > 0):
        raise ConfigError(f"{key}: the {name} axis needs at least 2 strictly increasing values, got {values[:6]}")


def load_csv_grid(path: Path, key: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Read a long-format CSV (one row per node) with columns x_m, y_m, depth_m: axes and (nx, ny) depths.

    Column aliases: east_m for x_m, north_m for y_m, deptho_m (Copernicus) for depth_m. Every (x, y) pair of
    the two axes must be present exactly once.
    """
    table = np.genfromtxt(path, delimiter=",", names=True, dtype=float, encoding="utf-8")
    columns = table.dtype.names or ()

    def column(*aliases: str) -> np.ndarray:
        for name in aliases:
            if name in columns:
                return np.asarray(table[name], dtype=float)
        raise ConfigError(f"{key}: {path} has no column {' or '.join(aliases)} (columns: {', '.join(columns)})")

    x, y, depth = column("x_m", "east_m"), column("y_m", "north_m"), column("depth_m", "deptho_m")
    xs, ys = np.unique(x), np.unique(y)
    _check_axis(xs, key, "x")
    _check_axis(ys, key, "y")
    grid = np.full((xs.size, ys.size), np.nan)
    grid[np.searchsorted(xs, x), np.searchsorted(ys, y)] = depth
    if np.isnan(grid).any() or x.size != xs.size * ys.size:
        raise ConfigError(f"{key}: {path} is not a full x/y grid ({x.size} rows for {xs.size} x {ys.size} nodes)")
    return xs, ys, grid


def _load_raster(path: Path, key: str, fmt: str) -> np.ndarray:
    """Raster rows = north (row 0 is the NORTH edge, as a map is drawn), columns = east; returns raw values."""
    if fmt == "npy":
        raster = np.load(path, allow_pickle=False)
    else:
        from PIL import Image

        with Image.open(path) as image:
            raster = np.asarray(image.convert("I") if image.mode not in ("L", "I", "I;16", "F") else image)
    raster = np.asarray(raster, dtype=float)
    if raster.ndim != 2 or min(raster.shape) < 2:
        raise ConfigError(f"{key}: {path} must hold a 2-D raster of at least 2 x 2 values, got shape {raster.shape}")
    return raster


BATHY_KEYS = ("model", "depth_m", "file", "format", "resolution_m", "origin_enu_m", "depth_scale_m", "depth_offset_m")


def build_bathymetry(config: Mapping[str, Any], key: str, base_dir: Path | None) -> FlatSeabed | GridSeabed:
    """Bathymetry from its configuration section (docs/environment.md, 'bathymetry')."""
    check_keys(config, BATHY_KEYS, key)
    model = get_choice(config, "model", key, ("flat", "grid"), "flat")
    if model == "flat":
        return FlatSeabed(get_float(config, "depth_m", key, DEFAULT_DEPTH_M, minimum=0.0, strict_minimum=True))
    path = get_path(config, "file", key, base_dir)
    suffix = path.suffix.lower().lstrip(".")
    fmt = get_choice(config, "format", key, ("csv", "npy", "image"), {"csv": "csv", "npy": "npy"}.get(suffix, "image"))
    try:
        if fmt == "csv":
            xs, ys, grid = load_csv_grid(path, f"{key}.file")
        else:
            raster = _load_raster(path, f"{key}.file", fmt)
            res = get_float(config, "resolution_m", key, 1.0, minimum=0.0, strict_minimum=True)
            origin = get_vector(config, "origin_enu_m", key, 2, [0.0, 0.0])
            scale = get_float(config, "depth_scale_m", key, 1.0)
            offset = get_float(config, "depth_offset_m", key, 0.0)
            ny, nx = raster.shape
            xs = origin[0] + res * np.arange(nx)
            ys = origin[1] + res * np.arange(ny)
            grid = (offset + scale * raster[::-1, :]).T  # flip rows so that index 0 is the south edge; (nx, ny)
    except ConfigError:
        raise
    except (OSError, ValueError, KeyError, IndexError, TypeError) as exc:  # unreadable or malformed file
        raise ConfigError(f"{key}.file: cannot read {path} as {fmt}: {exc}") from exc
    if not np.all(np.isfinite(grid)):
        raise ConfigError(f"{key}.file: depths must be finite (m, positive down; land is <= 0), {path} has NaN/inf")
    return GridSeabed(xs, ys, grid)
