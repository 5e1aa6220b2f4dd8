"""Gridded-data current (LRAUV Sim style, [Player2023] §IV-A): velocities stored on a rectilinear
grid with non-uniform axes (latitude/longitude or x/y, depth, time), interpolated trilinearly in space and
linearly in time. For a query at (t, x, y, d) with bracketing nodes, each axis contributes weights
w_1 = (q − q_0)/(q_1 − q_0), w_0 = 1 − w_1, and

    v(t, x, y, d) = Σ_{corners} w_t w_y w_x w_d v_{corner}          (16 corners; exact at every node)

(scipy.interpolate.RegularGridInterpolator, method "linear", which bisects each axis like the paper's sorted
axes do). Axes of length 1 are constant along that axis.

Frames: queries are `map` ENU points; with latitude/longitude axes they are converted to geodetic coordinates
around the configured origin (lotusim_core.base.geodesy, WGS84): the latitude/longitude of (x, y, 0), the
point of the map's tangent plane above the query (the map is flat: depth is −z, not a height above the ellipsoid).
Depth is positive down (d = −z); time is sim time, t = 0 at `epoch_utc` (default: the first time in the data).

Out of range (documented choice, key `out_of_range`):
- "clamp" (default): each coordinate is clipped to its axis, i.e. the nearest edge value (and the last time step
  persists), so a vessel leaving the data box keeps a finite current;
- "nan": NaN outside the horizontal box, before the first or after the last time, or below the deepest level.
In both modes a point above the shallowest level (e.g. Copernicus' 0.494 m) takes the shallowest level's value:
that level is the surface layer. NaN nodes in the data (land, below the sea floor) are replaced by 0 m/s at load.

Formats: CSV in long form (one row per node; columns named in docs/environment.md, e.g. the Copernicus export
depth_m,lat_deg,lon_deg,time_utc,uo_mps,vo_mps) and NetCDF (xarray; e.g. Copernicus uo/vo with dims time,
depth, latitude, longitude).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
from scipy.interpolate import RegularGridInterpolator

from lotusim_core.base.geodesy import GeodeticOrigin, enu_to_geodetic
from lotusim_env.config import ConfigError, check_keys, get_choice, get_path

# column / dimension aliases, first match wins
_ALIASES = {
    "x": ("x_m", "east_m", "x"),
    "y": ("y_m", "north_m", "y"),
    "lat": ("lat_deg", "latitude", "lat"),
    "lon": ("lon_deg", "longitude", "lon"),
    "depth": ("depth_m", "depth"),
    "time_utc": ("time_utc", "time"),
    "time_s": ("time_s",),
    "east": ("uo_mps", "uo", "u_mps", "east_mps", "u"),
    "north": ("vo_mps", "vo", "v_mps", "north_mps", "v"),
    "up": ("wo_mps", "wo", "w_mps", "up_mps", "w"),
}
AXIS_ORDER = ("time", "depth", "y", "x")


def _find(names: Any, role: str) -> str | None:
    for alias in _ALIASES[role]:
        if alias in names:
            return alias
    return None


class GriddedCurrent:
    """Current (ENU, m/s) interpolated from data on (time, depth, y or lat, x or lon) axes (module doc)."""

    def __init__(
        self,
        axes: dict[str, np.ndarray],
        values_enu: np.ndarray,
        geodetic: bool,
        origin: GeodeticOrigin | None = None,
        out_of_range: str = "clamp",
    ) -> None:
        """axes: 'time' (s), 'depth' (m down), 'y', 'x' (m or lat/lon deg); values_enu: (nt, nd, ny, nx, 3)."""
        self.axes = {name: np.asarray(axes[name], dtype=float) for name in AXIS_ORDER}
        self.values = np.nan_to_num(np.asarray(values_enu, dtype=float), nan=0.0)
        self.geodetic = geodetic
        self.origin = origin
        self.out_of_range = out_of_range
        if geodetic and origin is None:
            raise ValueError("GriddedCurrent: latitude/longitude axes need the geodetic origin of `map`")
        self._active = [i for i, name in enumerate(AXIS_ORDER) if self.axes[name].size > 1]
        squeeze = tuple(slice(None) if i in self._active else 0 for i in range(4))
        grid = tuple(self.axes[AXIS_ORDER[i]] for i in self._active)
        self._interp = (
            RegularGridInterpolator(grid, self.values[squeeze], method="linear", bounds_error=False, fill_value=None)
            if grid
            else None
        )

    def _horizontal(self, points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(y, x) axis coordinates of ENU points: metres, or latitude/longitude (deg) around the origin."""
        if not self.geodetic:
            return points[:, 1], points[:, 0]
        surface = np.column_stack([points[:, 0], points[:, 1], np.zeros(len(points))])
        geodetic = enu_to_geodetic(surface, self.origin)
        return geodetic[:, 0], geodetic[:, 1]

    def velocity_enu(self, t_s: float, points_enu: np.ndarray) -> np.ndarray:
        """Current (N x 3, m/s, ENU) at N points (N x 3, ENU m, z up) at sim time t_s (s since epoch_utc)."""
        points = np.asarray(points_enu, dtype=float).reshape(-1, 3)
        y, x = self._horizontal(points)
        coords = {
            "time": np.full(len(points), float(t_s)),
            "depth": np.maximum(-points[:, 2], self.axes["depth"][0]),  # above the shallowest level: its value
            "y": y,
            "x": x,
        }
        outside = np.zeros(len(points), dtype=bool)
        for name in AXIS_ORDER:
            axis = self.axes[name]
            outside |= (coords[name] < axis[0]) | (coords[name] > axis[-1])
            coords[name] = np.clip(coords[name], axis[0], axis[-1])
        if self._interp is None:
            out = np.broadcast_to(self.values.reshape(-1, 3)[0], (len(points), 3)).copy()
        else:
            out = self._interp(np.stack([coords[AXIS_ORDER[i]] for i in self._active], axis=1))
        if self.out_of_range == "nan":
            out[outside] = np.nan
        return out


def _checked_axis(values: np.ndarray, name: str, key: str) -> np.ndarray:
    axis = np.unique(values)
    if not np.all(np.isfinite(axis)):
        raise ConfigError(f"{key}: the {name} axis has non-finite values")
    return axis


def _time_seconds(values: Any, epoch_utc: str | None, key: str) -> tuple[np.ndarray, str]:
    """Datetimes → seconds since epoch_utc (default: the first time); returns (seconds, epoch as ISO text)."""
    import pandas as pd

    try:
        stamps = pd.to_datetime(np.asarray(values).ravel(), utc=True)
        epoch = pd.Timestamp(epoch_utc, tz="UTC") if epoch_utc else stamps.min()
    except (ValueError, TypeError) as exc:
        raise ConfigError(f"{key}: cannot read times as UTC dates ({exc})") from exc
    seconds = (stamps - epoch).total_seconds().to_numpy()
    return seconds.reshape(np.shape(values)), epoch.isoformat()


def load_csv(path: Path, key: str, epoch_utc: str | None) -> tuple[dict[str, np.ndarray], np.ndarray, bool]:
    """Long-format CSV → (axes, values (nt, nd, ny, nx, 3), geodetic)."""
    import pandas as pd

    table = pd.read_csv(path, comment="#")
    names = set(table.columns)
    geodetic = _find(names, "lat") is not None and _find(names, "lon") is not None
    hx, hy = ("lon", "lat") if geodetic else ("x", "y")
    columns = {}
    for role in (hx, hy, "east", "north"):
        column = _find(names, role)
        if column is None:
            raise ConfigError(
                f"{key}: {path} has no {role} column (one of {', '.join(_ALIASES[role])}; "
                f"found {', '.join(table.columns)})"
            )
        columns[role] = table[column].to_numpy(dtype=float)
    depth_col, up_col = _find(names, "depth"), _find(names, "up")
    columns["depth"] = table[depth_col].to_numpy(dtype=float) if depth_col else np.zeros(len(table))
    columns["up"] = table[up_col].to_numpy(dtype=float) if up_col else np.zeros(len(table))
    if _find(names, "time_s"):
        columns["time"] = table[_find(names, "time_s")].to_numpy(dtype=float)
    elif _find(names, "time_utc"):
        columns["time"], _ = _time_seconds(table[_find(names, "time_utc")].to_numpy(), epoch_utc, key)
    else:
        columns["time"] = np.zeros(len(table))
    role_of = {"time": "time", "depth": "depth", "y": hy, "x": hx}
    axes = {name: _checked_axis(columns[role_of[name]], name, key) for name in AXIS_ORDER}
    shape = tuple(axes[name].size for name in AXIS_ORDER)
    index = tuple(np.searchsorted(axes[name], columns[role_of[name]]) for name in AXIS_ORDER)
    values = np.full((*shape, 3), np.nan)
    filled = np.zeros(shape, dtype=int)
    np.add.at(filled, index, 1)
    if np.any(filled != 1):
        missing, doubled = int(np.sum(filled == 0)), int(np.sum(filled > 1))
        raise ConfigError(
            f"{key}: {path} is not a full grid of {' x '.join(map(str, shape))} nodes "
            f"(time x depth x y x x): {missing} missing, {doubled} repeated"
        )
    values[index] = np.stack([columns["east"], columns["north"], columns["up"]], axis=1)
    return axes, values, geodetic


def load_netcdf(path: Path, key: str, epoch_utc: str | None, variables: Mapping[str, str]) -> tuple:
    """NetCDF (xarray) → (axes, values (nt, nd, ny, nx, 3), geodetic)."""
    import xarray as xr

    with xr.open_dataset(path) as ds:
        dims = set(ds.dims)
        geodetic = _find(dims, "lat") is not None
        names = {
            "y": _find(dims, "lat" if geodetic else "y"),
            "x": _find(dims, "lon" if geodetic else "x"),
            "depth": _find(dims, "depth"),
            "time": _find(dims, "time_utc"),
        }
        if names["x"] is None or names["y"] is None:
            raise ConfigError(f"{key}: {path} needs latitude/longitude or y/x dimensions, found {sorted(dims)}")
        components = []
        for role, default in (("east", "uo"), ("north", "vo"), ("up", "wo")):
            var = variables.get(role, default)
            if var not in ds:
                if role == "up" and "up" not in variables:
                    components.append(None)
                    continue
                raise ConfigError(f"{key}.variables.{role}: variable {var!r} not in {path} ({', '.join(ds.data_vars)})")
            da = ds[var]
            order = [names[n] for n in AXIS_ORDER if names[n] is not None]
            for extra in set(da.dims) - set(order):
                da = da.isel({extra: 0})
            da = da.transpose(*order)
            arr = da.values.astype(float)
            for i, n in enumerate(AXIS_ORDER):
                if names[n] is None:
                    arr = np.expand_dims(arr, i)
            components.append(arr)
        shape = next(c.shape for c in components if c is not None)
        values = np.stack([c if c is not None else np.zeros(shape) for c in components], axis=-1)
        axes = {}
        for n in AXIS_ORDER:
            if names[n] is None:
                axes[n] = np.zeros(1)
            elif n == "time":
                raw = ds[names[n]].values
                axes[n] = (
                    raw.astype(float) if np.issubdtype(raw.dtype, np.number) else _time_seconds(raw, epoch_utc, key)[0]
                )
            else:
                axes[n] = ds[names[n]].values.astype(float)
    for n in AXIS_ORDER:  # make every axis increasing
        if axes[n].size > 1 and axes[n][0] > axes[n][-1]:
            axes[n] = axes[n][::-1]
            values = np.flip(values, axis=AXIS_ORDER.index(n))
        if axes[n].size > 1 and not np.all(np.diff(axes[n]) > 0):
            raise ConfigError(f"{key}: {path} axis {names[n]} is not strictly monotonic")
    return axes, values, geodetic


GRIDDED_KEYS = ("model", "file", "format", "epoch_utc", "out_of_range", "variables", "seed")


def build_gridded(
    config: Mapping[str, Any], key: str, base_dir: Path | None, origin: GeodeticOrigin | None
) -> GriddedCurrent:
    """GriddedCurrent from its configuration section (docs/environment.md, 'gridded')."""
    check_keys(config, GRIDDED_KEYS, key)
    path = get_path(config, "file", key, base_dir)
    guess = "netcdf" if path.suffix.lower() in (".nc", ".nc4", ".cdf") else "csv"
    fmt = get_choice(config, "format", key, ("csv", "netcdf"), guess)
    epoch = config.get("epoch_utc")
    if epoch is not None and not isinstance(epoch, str):
        epoch = str(epoch)  # YAML turns unquoted ISO dates into datetime objects
    variables = config.get("variables", {}) or {}
    if not isinstance(variables, Mapping):
        raise ConfigError(f"{key}.variables: expected a mapping east/north/up -> variable name, got {variables!r}")
    try:
        if fmt == "csv":
            axes, values, geodetic = load_csv(path, f"{key}.file", epoch)
        else:
            axes, values, geodetic = load_netcdf(path, f"{key}.file", epoch, variables)
    except ConfigError:
        raise
    except (OSError, ValueError, KeyError, IndexError, TypeError) as exc:  # unreadable or malformed file
        raise ConfigError(f"{key}.file: cannot read {path} as {fmt}: {exc}") from exc
    if geodetic and origin is None:
        raise ConfigError(
            f"{key}.file: {path} has latitude/longitude axes; set origin: {{latitude_deg, longitude_deg}} so that "
            "map ENU points can be placed on it"
        )
    mode = get_choice(config, "out_of_range", key, ("clamp", "nan"), "clamp")
    return GriddedCurrent(axes, values, geodetic, origin, mode)
