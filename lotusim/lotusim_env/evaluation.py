"""Offline evaluation of current models against Copernicus data off Brest (LOTUSim Table VIII protocol).

Protocol ([Buche2025] §V, Tables VII-VIII; as the evaluation notebooks [LOTUSimEval2025] compute it,
documented in docs/validation.md and data/copernicus_brest/README.md):
- each window holds 9 six-hourly Copernicus snapshots (48 h) on 35 depths x 5 lat x 4 lon;
- day 0 (snapshots 0..3) gives the model inputs: mean current (ū, v̄) and mean 10 m wind;
- day 1 (snapshots 4..7, 00/06/12/18 UTC, 2,800 points) is the truth; the paper labels a window by day 2;
- per point the error is the horizontal vector error e = |(u, v)_model - (u, v)_obs| (m/s);
- per depth bin [0,100), [100,200), [200,500), [500,inf) m:
    MAE = mean(e), RMSE = sqrt(mean(e^2)), Rel.X = X / mean(|(u, v)_obs|) (a ratio, not a percentage),
    I_X = (X_baseline - X_model) / X_baseline x 100 (improvement, %).

Models are evaluated through `build_environment(config).current.velocity_enu(t_s, points_enu)`, the same call
the simulator's nodes make, at the truth points in the window's local ENU frame (origin at the grid centre,
z = -depth; velocities ENU, east = u = uo, north = v = vo). Baselines: zero current and persistence.

ROS-free; numbers only. The CLI is lotusim_core/cli/current_eval.py (`lotusim current-eval`).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

# Depth bins of Table VIII (m), half-open [low, high).
DEPTH_BINS_M: dict[str, tuple[float, float]] = {
    "Surface": (0.0, 100.0),
    "Shallow": (100.0, 200.0),
    "Mid": (200.0, 500.0),
    "Deep": (500.0, float("inf")),
}
SNAPSHOT_S = 6 * 3600.0  # Copernicus PT6H product: one snapshot every 6 h
DAY0 = slice(0, 4)  # snapshots of the input day
TRUTH = slice(4, 8)  # snapshots of the truth day (00, 06, 12, 18 UTC of day 1)


class DataError(ValueError):
    """A data file does not have the layout the evaluation expects; the message names the file."""


def data_root() -> Path:
    """Return the installed copernicus_brest folder (source tree or share/lotusim)."""
    from lotusim_core.base.paths import package_share

    return package_share() / "data" / "copernicus_brest"


def list_windows(root: Path | None = None) -> list[str]:
    """Names of the evaluation windows (folders `<YYYY-MM-DD>_48hours`), sorted by date."""
    root = root or data_root()
    return sorted(p.name for p in root.iterdir() if p.is_dir() and p.name.endswith("_48hours"))


# ----------------------------------------------------------------------------------------------------------------
# Data
# ----------------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Window:
    """One 48 h Copernicus window. uv_mps[t, depth, lat, lon] = (uo east, vo north) in m/s."""

    name: str
    times: np.ndarray  # (9,) datetime64[s], UTC
    depth_m: np.ndarray  # (35,) positive down
    lat_deg: np.ndarray  # (5,)
    lon_deg: np.ndarray  # (4,)
    uv_mps: np.ndarray  # (9, 35, 5, 4, 2)
    wind_times: np.ndarray  # (M,) datetime64[s], hourly
    wind_uv_mps: np.ndarray  # (M, 2) 10 m wind (east, north) at each row's grid point
    air_density_kgm3: np.ndarray  # (M,)
    stated_inputs: dict[str, Any]  # inputs.json (values the paper's Ekman prototype used)

    @property
    def label(self) -> str:
        """The paper's date label of this window: day 2 (e.g. '2023-11-04' for the 2023-11-02 window)."""
        return str(self.times[8].astype("datetime64[D]"))

    @property
    def truth_day(self) -> str:
        return str(self.times[4].astype("datetime64[D]"))


def _read_csv(path: Path) -> dict[str, np.ndarray]:
    with open(path, newline="") as handle:
        rows = list(csv.DictReader(handle))
    if not rows:
        raise DataError(f"{path}: no data rows")
    return {key: np.array([row[key] for row in rows]) for key in rows[0]}


def load_window(folder: Path) -> Window:
    """Load currents.csv, wind.csv and inputs.json of one window folder into a gridded Window."""
    cur = _read_csv(folder / "currents.csv")
    times = np.unique(cur["time_utc"].astype("datetime64[s]"))
    depth, lat, lon = (np.unique(cur[k].astype(float)) for k in ("depth_m", "lat_deg", "lon_deg"))
    shape = (times.size, depth.size, lat.size, lon.size)
    if shape != (9, 35, 5, 4) or cur["depth_m"].size != np.prod(shape):
        raise DataError(f"{folder / 'currents.csv'}: expected 9 times x 35 depths x 5 lat x 4 lon, found {shape}")
    index = (
        np.searchsorted(times, cur["time_utc"].astype("datetime64[s]")),
        np.searchsorted(depth, cur["depth_m"].astype(float)),
        np.searchsorted(lat, cur["lat_deg"].astype(float)),
        np.searchsorted(lon, cur["lon_deg"].astype(float)),
    )
    uv = np.full((*shape, 2), np.nan)
    uv[index] = np.stack([cur["uo_mps"].astype(float), cur["vo_mps"].astype(float)], axis=-1)
    if np.isnan(uv).any():
        raise DataError(f"{folder / 'currents.csv'}: duplicated (time, depth, lat, lon) keys leave grid holes")
    wind = _read_csv(folder / "wind.csv")
    stated = json.loads((folder / "inputs.json").read_text())
    return Window(
        name=folder.name,
        times=times,
        depth_m=depth,
        lat_deg=lat,
        lon_deg=lon,
        uv_mps=uv,
        wind_times=wind["time_utc"].astype("datetime64[s]"),
        wind_uv_mps=np.stack([wind["eastward_wind_mps"].astype(float), wind["northward_wind_mps"].astype(float)], -1),
        air_density_kgm3=wind["air_density_kgm3"].astype(float),
        stated_inputs=stated,
    )


@dataclass(frozen=True)
class Day0Inputs:
    """Model inputs from day 0 only (what the paper's prototype used, [LOTUSimEval2025])."""

    ubar_mps: float  # plain mean of uo over day 0 (all 700 points x 4 snapshots)
    vbar_mps: float
    wind_east_mps: float  # plain mean of the hourly 10 m wind over the day-0 calendar day
    wind_north_mps: float
    air_density_kgm3: float
    latitude_deg: float  # grid centre
    longitude_deg: float

    @property
    def wind_speed_mps(self) -> float:
        return float(np.hypot(self.wind_east_mps, self.wind_north_mps))

    @property
    def wind_toward_deg(self) -> float:
        """Direction the wind blows toward, maths convention (counter-clockwise from east), degrees."""
        return float(np.degrees(np.arctan2(self.wind_north_mps, self.wind_east_mps)))


def day0_inputs(window: Window) -> Day0Inputs:
    """Compute the day-0 inputs from the data (never from the truth day)."""
    mean_uv = window.uv_mps[DAY0].reshape(-1, 2).mean(axis=0)
    day0 = window.wind_times.astype("datetime64[D]") == window.times[0].astype("datetime64[D]")
    wind = window.wind_uv_mps[day0].mean(axis=0)
    return Day0Inputs(
        ubar_mps=float(mean_uv[0]),
        vbar_mps=float(mean_uv[1]),
        wind_east_mps=float(wind[0]),
        wind_north_mps=float(wind[1]),
        air_density_kgm3=float(window.air_density_kgm3[day0].mean()),
        latitude_deg=float(window.lat_deg.mean()),
        longitude_deg=float(window.lon_deg.mean()),
    )


@dataclass(frozen=True)
class TruthPoints:
    """The truth-day points (4 snapshots x 35 depths x 5 lat x 4 lon = 2,800), flattened in that order."""

    grid_index: np.ndarray  # (N, 4) int: snapshot (4..7), depth, lat, lon indices into the Window arrays
    depth_m: np.ndarray  # (N,)
    time_s: np.ndarray  # (N,) seconds since the window start (day 0, 00:00 UTC)
    points_enu: np.ndarray  # (N, 3) m in the local ENU frame at the grid centre, z = -depth
    uv_obs_mps: np.ndarray  # (N, 2) observed (east, north)


def truth_points(window: Window) -> TruthPoints:
    """The day-1 points and their observed currents, with ENU positions for model queries."""
    from lotusim_core.base.geodesy import GeodeticOrigin, geodetic_to_enu

    t, d, la, lo = np.meshgrid(np.arange(4, 8), *(np.arange(n) for n in window.uv_mps.shape[1:4]), indexing="ij")
    grid_index = np.stack([t.ravel(), d.ravel(), la.ravel(), lo.ravel()], axis=-1)
    origin = GeodeticOrigin(float(window.lat_deg.mean()), float(window.lon_deg.mean()))
    surface = np.column_stack([window.lat_deg[la.ravel()], window.lon_deg[lo.ravel()], np.zeros(la.size)])
    east, north = geodetic_to_enu(surface, origin)[:, :2].T
    depth = window.depth_m[d.ravel()]
    elapsed = (window.times[t.ravel()] - window.times[0]) / np.timedelta64(1, "s")
    return TruthPoints(
        grid_index=grid_index,
        depth_m=depth,
        time_s=elapsed.astype(float),
        points_enu=np.stack([east, north, -depth], axis=-1),
        uv_obs_mps=window.uv_mps[t.ravel(), d.ravel(), la.ravel(), lo.ravel()],
    )


# ----------------------------------------------------------------------------------------------------------------
# Metrics (Table VII)
# ----------------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class BinScore:
    """Errors of one model in one depth bin (m/s)."""

    n: int
    mae_mps: float
    rmse_mps: float
    mean_obs_speed_mps: float

    @property
    def rel_mae(self) -> float:
        return self.mae_mps / self.mean_obs_speed_mps

    @property
    def rel_rmse(self) -> float:
        return self.rmse_mps / self.mean_obs_speed_mps

    def as_dict(self) -> dict[str, float]:
        return {
            "n": self.n,
            "mae_mps": self.mae_mps,
            "rmse_mps": self.rmse_mps,
            "mean_obs_speed_mps": self.mean_obs_speed_mps,
            "rel_mae": self.rel_mae,
            "rel_rmse": self.rel_rmse,
        }


def score(uv_model: np.ndarray, uv_obs: np.ndarray, depth_m: np.ndarray) -> dict[str, BinScore]:
    """Table VII metrics per depth bin: e = |uv_model - uv_obs|, MAE = mean e, RMSE = sqrt(mean e²)."""
    error = np.linalg.norm(np.asarray(uv_model, float) - uv_obs, axis=-1)
    speed = np.linalg.norm(uv_obs, axis=-1)
    out = {}
    for name, (low, high) in DEPTH_BINS_M.items():
        inside = (depth_m >= low) & (depth_m < high)
        out[name] = BinScore(
            n=int(inside.sum()),
            mae_mps=float(error[inside].mean()),
            rmse_mps=float(np.sqrt(np.mean(error[inside] ** 2))),
            mean_obs_speed_mps=float(speed[inside].mean()),
        )
    return out


def improvement_pct(baseline: float, model: float) -> float:
    """I_X = (X_baseline - X_model) / X_baseline x 100: positive when the model has the smaller error."""
    return (baseline - model) / baseline * 100.0


# ----------------------------------------------------------------------------------------------------------------
# Predictors: (window, truth points) -> (N, 2) predicted (east, north) m/s
# ----------------------------------------------------------------------------------------------------------------
Predictor = Callable[[Window, TruthPoints], np.ndarray]


def predict_zero(window: Window, pts: TruthPoints) -> np.ndarray:
    """Zero current everywhere: Rel.MAE = 1 exactly (e = |obs|), Rel.RMSE = rms|obs| / mean|obs| >= 1."""
    return np.zeros_like(pts.uv_obs_mps)


def predict_persistence(window: Window, pts: TruthPoints) -> np.ndarray:
    """Persistence: each grid point keeps its own day-0 mean (mean of snapshots 0..3 at that point)."""
    mean0 = window.uv_mps[DAY0].mean(axis=0)  # (35, 5, 4, 2)
    _, d, la, lo = pts.grid_index.T
    return mean0[d, la, lo]


def predict_day0_uniform(window: Window, pts: TruthPoints) -> np.ndarray:
    """The domain-wide day-0 mean (ū, v̄) everywhere: the Ekman model's interior without its spiral."""
    inputs = day0_inputs(window)
    return np.broadcast_to([inputs.ubar_mps, inputs.vbar_mps], pts.uv_obs_mps.shape).copy()


def predict_environment(config: dict[str, Any], pts: TruthPoints) -> np.ndarray:
    """Evaluate `build_environment(config).current` at the truth points, one batched call per snapshot."""
    from lotusim_env.environment import build_environment

    current = build_environment(config).current
    out = np.empty_like(pts.uv_obs_mps)
    for t_s in np.unique(pts.time_s):
        rows = pts.time_s == t_s
        out[rows] = np.asarray(current.velocity_enu(float(t_s), pts.points_enu[rows]))[:, :2]
    return out


# ----------------------------------------------------------------------------------------------------------------
# The paper's own stored predictions (paper_table8/): reproduction of the published 4 Nov 2023 numbers
# ----------------------------------------------------------------------------------------------------------------
TABLE8_COLUMNS = ("I_MAE", "I_RMSE", "Rel.MAE_E", "Rel.MAE_G", "Rel.RMSE_E", "Rel.RMSE_G")


@dataclass(frozen=True)
class PaperDay:
    """The paper's stored inputs for one date, on the truth points (flattened as truth_points orders them)."""

    label: str
    window: str
    uv_obs_mps: np.ndarray  # (N, 2) from the paper's reference-day file
    uv_ekman_mps: np.ndarray  # (N, 2) the paper's stored Ekman output at the same points and times
    uv_gm_mps: np.ndarray  # (N, 2) the paper's stored Gauss-Markov vectors, mapped as its notebooks do
    depth_m: np.ndarray  # (N,)
    grid_index: np.ndarray  # (N, 4) snapshot, depth, lat, lon
    published: dict[str, list[float]]  # bin -> Table VIII row (TABLE8_COLUMNS)


def paper_gm_uv(xyz: np.ndarray) -> np.ndarray:
    """The notebooks' mapping of a Gauss-Markov vector (X, Y, Z) to (uo, vo) = (sqrt(X²+Z²), sqrt(Y²+Z²)).

    A quirk of the paper's evaluation ([LOTUSimEval2025] notebooks): both components are >= 0 and the vertical
    component leaks into both. Reproduced only to check the metric code against the published numbers.
    """
    x, y, z = np.asarray(xyz, float).T
    return np.stack([np.hypot(x, z), np.hypot(y, z)], axis=-1)


def load_paper_day(root: Path | None = None, which: int = 0) -> PaperDay:
    """Read paper_table8/: reference-day Copernicus rows, stored Ekman output, stored GM vectors, Table VIII.

    Index conventions (paper_table8/manifest.json and the source notebooks): reference rows carry
    idx = depth*180 + lat*36 + lon*9 + snapshot (snapshot 4..7 = truth day); Ekman rows carry the point
    c0 = (lat*4 + lon)*35 + depth and ts = 1..4 for t = 21600..86400 s, i.e. snapshots 4..7 (t - 21600);
    GM rows are (t_s, X, Y, Z) with t = 21600..86400 s likewise.
    """
    folder = (root or data_root()) / "paper_table8"
    day = json.loads((folder / "manifest.json").read_text())["days"][which]
    published = json.loads((folder / "table8_paper.json").read_text())[day["paper_date"]]
    cop = np.loadtxt(folder / day["cop"], delimiter=",")
    ekm = np.loadtxt(folder / day["ekman"], delimiter=",")
    idx = cop[:, 0].astype(int)
    grid = np.stack([idx % 9, idx // 180, (idx % 180) // 36, (idx % 36) // 9], axis=-1)
    order = np.lexsort((grid[:, 3], grid[:, 2], grid[:, 1], grid[:, 0]))  # snapshot, depth, lat, lon
    grid, uv_obs = grid[order], cop[order, 1:3]
    c0, ts = ekm[:, 0].astype(int), ekm[:, 1].astype(int)
    ekman_grid = np.zeros((9, 35, 5, 4, 2))
    ekman_grid[ts + 3, c0 % 35, (c0 // 35) // 4, (c0 // 35) % 4] = ekm[:, 2:4]
    gm = np.asarray(day["gm_rows"], float)
    gm_uv = paper_gm_uv(gm[:, 1:4])[np.searchsorted(gm[:, 0], (grid[:, 0] - 3) * SNAPSHOT_S)]
    depths = load_window_depths(root, day["window_folder"])
    return PaperDay(
        label=day["paper_date"],
        window=day["window_folder"],
        uv_obs_mps=uv_obs,
        uv_ekman_mps=ekman_grid[tuple(grid.T)],
        uv_gm_mps=gm_uv,
        depth_m=depths[grid[:, 1]],
        grid_index=grid,
        published={k: published[k] for k in DEPTH_BINS_M},
    )


def load_window_depths(root: Path | None, window: str) -> np.ndarray:
    """The 35 depth levels (m) of a window's currents.csv."""
    return np.unique(_read_csv((root or data_root()) / window / "currents.csv")["depth_m"].astype(float))


def table8_row(ekman: BinScore, gauss: BinScore) -> list[float]:
    """One Table VIII row: I_MAE, I_RMSE (Ekman vs GM, %), Rel.MAE E/G, Rel.RMSE E/G."""
    return [
        improvement_pct(gauss.mae_mps, ekman.mae_mps),
        improvement_pct(gauss.rmse_mps, ekman.rmse_mps),
        ekman.rel_mae,
        gauss.rel_mae,
        ekman.rel_rmse,
        gauss.rel_rmse,
    ]


def reproduce_paper_table8(day: PaperDay) -> dict[str, list[float]]:
    """Table VIII rows recomputed from the paper's stored predictions with `score` (unrounded)."""
    ekman = score(day.uv_ekman_mps, day.uv_obs_mps, day.depth_m)
    gauss = score(day.uv_gm_mps, day.uv_obs_mps, day.depth_m)
    return {name: table8_row(ekman[name], gauss[name]) for name in DEPTH_BINS_M}


# ----------------------------------------------------------------------------------------------------------------
# Our models, configured from day 0 only, evaluated through build_environment
# ----------------------------------------------------------------------------------------------------------------
DEFAULT_SEABED_DEPTH_M = 4850.0  # the prototype's SurfaceHeight for the Brest box (inputs.json); deep water


@dataclass(frozen=True)
class EvalOptions:
    """Configuration of our models for the evaluation (CLI flags of `lotusim current-eval`).

    interior: what the Ekman model uses as its geostrophic interior (ū, v̄):
      "uniform": the domain-wide day-0 mean, as the paper's prototype does ([LOTUSimEval2025]);
      "column": at each grid column, the day-0 mean current at the first data level at or below the surface
                Ekman depth D (the flow beneath the wind-driven layer; above it the spiral is added), and the
                day-0 mean at the point itself below D (a gridded geostrophic interior from day 0);
      "none": zero interior (the wind-driven spiral alone).
    """

    interior: str = "column"
    surface_depth_rule: str = "wind"  # wind (Stewart eq. 9.16) | eddy_viscosity | fixed
    eddy_viscosity_m2s: float = 0.01  # used by the eddy_viscosity rule (the reference value of docs/environment.md)
    surface_layer_depth_m: float = 50.0  # used by the fixed rule
    drag_law: str = "paper"  # paper | xdyn | prototype (lotusim_env.ekman.drag_coefficient)
    gm_seeds: int = 50
    gm_time_constant_h: float = 6.0  # 1/μ of the Gauss-Markov baseline
    gm_time_step_s: float = 60.0


def seabed_depth_m(window: Window) -> float:
    """Sea-floor depth for the flat bathymetry: the prototype's SurfaceHeight if stated, else the default."""
    return float(window.stated_inputs.get("constants_file_values", {}).get("SurfaceHeight", DEFAULT_SEABED_DEPTH_M))


def _site(window: Window, inputs: Day0Inputs) -> dict[str, Any]:
    """The parts of an environment configuration shared by our models: origin, wind, air, sea floor."""
    return {
        "origin": {"latitude_deg": inputs.latitude_deg, "longitude_deg": inputs.longitude_deg},
        "air_density_kgm3": inputs.air_density_kgm3,
        "wind": {"velocity_enu": [inputs.wind_east_mps, inputs.wind_north_mps]},
        "bathymetry": {"model": "flat", "depth_m": seabed_depth_m(window)},
    }


def ekman_environment(window: Window, opts: EvalOptions) -> dict[str, Any]:
    """Environment configuration of the layered Ekman model driven by the day-0 mean wind.

    The geostrophic interior is the day-0 mean (ū, v̄) for interior "uniform"; otherwise 0 here and the
    gridded day-0 interior is added by predict_ekman (column) or not at all (none).
    """
    inputs = day0_inputs(window)
    current: dict[str, Any] = {
        "model": "ekman",
        "surface_depth_rule": opts.surface_depth_rule,
        "drag_law": opts.drag_law,
        "geostrophic_enu": [inputs.ubar_mps, inputs.vbar_mps] if opts.interior == "uniform" else [0.0, 0.0],
    }
    if opts.surface_depth_rule == "eddy_viscosity":
        current["eddy_viscosity_m2s"] = opts.eddy_viscosity_m2s
    elif opts.surface_depth_rule == "fixed":
        current["surface_layer_depth_m"] = opts.surface_layer_depth_m
    return {**_site(window, inputs), "current": current}


def column_interior(window: Window, pts: TruthPoints, ekman_depth_m: float) -> np.ndarray:
    """Day-0 gridded interior: the day-0 mean at max(point depth, first level >= D) in each column (N, 2)."""
    mean0 = window.uv_mps[DAY0].mean(axis=0)  # (35, 5, 4, 2)
    reference = min(int(np.searchsorted(window.depth_m, ekman_depth_m)), window.depth_m.size - 1)
    _, d, la, lo = pts.grid_index.T
    return mean0[np.maximum(d, reference), la, lo]


def predict_ekman(window: Window, pts: TruthPoints, opts: EvalOptions) -> np.ndarray:
    """Our layered Ekman model (lotusim_env.ekman via build_environment) plus the chosen interior (EvalOptions)."""
    from lotusim_env.environment import build_environment

    config = ekman_environment(window, opts)
    uv = predict_environment(config, pts)
    if opts.interior == "column":
        ekman = build_environment(config).current
        ekman = getattr(ekman, "model", ekman)  # the seabed mask wraps the model
        uv = uv + column_interior(window, pts, float(ekman.surface_depth_m))
    return uv


def gauss_markov_environment(window: Window, opts: EvalOptions, seed: int) -> dict[str, Any]:
    """Gauss-Markov baseline: east/north OU processes around the day-0 mean with the day-0 spread.

    Mean = (ū, v̄); stationary std = std of uo (vo) over the 2,800 day-0 values; μ = 1/gm_time_constant_h;
    vertical component 0. Spatially uniform, as UUV Simulator's plugin and the paper's baseline.
    """
    inputs = day0_inputs(window)
    day0 = window.uv_mps[DAY0].reshape(-1, 2)
    mu = 1.0 / (opts.gm_time_constant_h * 3600.0)

    def process(mean: float, std: float) -> dict[str, float]:
        return {"mean": mean, "mu": mu, "stationary_std": std}

    return {
        **_site(window, inputs),
        "current": {
            "model": "gauss_markov",
            "mode": "components",
            "seed": int(seed),
            "time_step_s": opts.gm_time_step_s,
            "east": process(inputs.ubar_mps, float(day0[:, 0].std())),
            "north": process(inputs.vbar_mps, float(day0[:, 1].std())),
            "up": process(0.0, 0.0),
        },
    }


# ----------------------------------------------------------------------------------------------------------------
# One window, all models
# ----------------------------------------------------------------------------------------------------------------
BASELINES: dict[str, Predictor] = {
    "zero": predict_zero,
    "persistence": predict_persistence,
    "day0_mean": predict_day0_uniform,
}


@dataclass(frozen=True)
class WindowResult:
    """Scores of every model on one window. gauss_markov holds one score dict per seed."""

    window: str
    label: str
    truth_day: str
    inputs: Day0Inputs
    scores: dict[str, dict[str, BinScore]]  # model -> bin -> score (ekman and the baselines)
    gauss_markov: list[dict[str, BinScore]]
    depth_m: np.ndarray  # (35,) data levels
    mae_by_depth_mps: dict[str, np.ndarray]  # model -> (35,) MAE per level ("gauss_markov": median over seeds)

    def gm_quantiles(self, metric: str, q: tuple[float, ...] = (5.0, 50.0, 95.0)) -> dict[str, list[float]]:
        """Per bin, the given percentiles over the GM seeds of a BinScore attribute (e.g. 'rel_mae')."""
        return {b: np.percentile([getattr(s[b], metric) for s in self.gauss_markov], q).tolist() for b in DEPTH_BINS_M}

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "window": self.window,
            "paper_label": self.label,
            "truth_day": self.truth_day,
            "inputs": self.inputs.__dict__,
            "models": {m: {b: s.as_dict() for b, s in bins.items()} for m, bins in self.scores.items()},
        }
        if self.gauss_markov:
            out["gauss_markov"] = {
                "seeds": len(self.gauss_markov),
                **{f"{m}_p5_p50_p95": self.gm_quantiles(m) for m in ("mae_mps", "rmse_mps", "rel_mae", "rel_rmse")},
            }
        ekman = self.scores.get("ekman")
        if ekman:
            out["ekman_improvement_pct"] = {
                base: {
                    b: {"I_MAE": improvement_pct(s[b].mae_mps, ekman[b].mae_mps),
                        "I_RMSE": improvement_pct(s[b].rmse_mps, ekman[b].rmse_mps)}
                    for b in DEPTH_BINS_M
                }
                for base, s in self.scores.items() if base != "ekman"
            }  # fmt: skip
        return out


def evaluate_window(
    window: Window, opts: EvalOptions, models: tuple[str, ...] = ("ekman", "gauss_markov")
) -> WindowResult:
    """Score the baselines and our models (those in `models`) on the truth day of one window."""
    pts = truth_points(window)
    predictions = {name: fn(window, pts) for name, fn in BASELINES.items()}
    if "ekman" in models:
        predictions = {"ekman": predict_ekman(window, pts, opts), **predictions}
    scores = {name: score(uv, pts.uv_obs_mps, pts.depth_m) for name, uv in predictions.items()}
    profiles = {name: mae_by_depth(uv, pts, window.depth_m.size) for name, uv in predictions.items()}
    gm, gm_profiles = [], []
    if "gauss_markov" in models:
        for seed in range(opts.gm_seeds):
            uv = predict_environment(gauss_markov_environment(window, opts, seed), pts)
            gm.append(score(uv, pts.uv_obs_mps, pts.depth_m))
            gm_profiles.append(mae_by_depth(uv, pts, window.depth_m.size))
        profiles["gauss_markov"] = np.median(gm_profiles, axis=0)
    return WindowResult(
        window.name, window.label, window.truth_day, day0_inputs(window), scores, gm, window.depth_m, profiles
    )


def mae_by_depth(uv_model: np.ndarray, pts: TruthPoints, levels: int) -> np.ndarray:
    """MAE (m/s) at each data level: mean vector error over the 4 snapshots x 20 columns of that level."""
    error = np.linalg.norm(uv_model - pts.uv_obs_mps, axis=-1)
    level = pts.grid_index[:, 1]
    return np.bincount(level, weights=error, minlength=levels) / np.bincount(level, minlength=levels)
