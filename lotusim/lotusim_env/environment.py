"""The environment as a pure function of (configuration, seed, sim time, position).

Every node (dynamics, sensors, current_server) builds the same `Environment` from the same configuration
mapping (published latched by current_server as YAML) and gets the same numbers: deterministic models are
plain functions, random ones (Gauss–Markov currents, wind gusts) are seeded per process from the configuration's
`seed` and evaluated on a fixed time grid (lotusim_env.gauss_markov), so the value at sim time t does not depend
on which node asks or in which order.

Frames: points and velocities are in the world frame `map`, ENU (x east, y north, z up; metres, m/s), the
oceanographic convention (u east, v north, w up). Depth is −z. The geodetic origin of `map` (origin.latitude_deg,
longitude_deg) gives the latitude of the Coriolis parameter and places latitude/longitude data grids.

Configuration schema: docs/environment.md. Current models: constant, gauss_markov, ekman, stratified, gridded,
sum (of any of these). Every current is 0 at and below the local sea floor (no water, no current). Waves
(lotusim_env.waves): none, regular, jonswap, pierson_moskowitz; the sea surface η and the orbital velocity and
dynamic pressure under it, a seeded component table evaluated at (sim time, points) like the rest.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from lotusim_core.base.geodesy import GeodeticOrigin
from lotusim_env.bathymetry import FlatSeabed, GridSeabed, build_bathymetry
from lotusim_env.config import (
    ConfigError,
    check_keys,
    derive_seed,
    get_choice,
    get_float,
    get_int,
    get_vector,
    section,
)
from lotusim_env.ekman import RHO_AIR, RHO_WATER, build_ekman
from lotusim_env.gauss_markov import build_gauss_markov
from lotusim_env.gridded import build_gridded
from lotusim_env.stratified import build_stratified
from lotusim_env.waves import WaveField, build_waves
from lotusim_env.wind import WindField, build_wind
from lotusim_env.world import World, build_world

__all__ = ["ConfigError", "ConstantCurrent", "Environment", "SumCurrent", "build_environment", "CURRENT_MODELS"]

CURRENT_MODELS = ("constant", "gauss_markov", "ekman", "stratified", "gridded", "sum")


class CurrentModel(Protocol):
    """A current field: velocity (m/s, ENU) at N points (N x 3, ENU m) at one sim time (s)."""

    def velocity_enu(self, t_s: float, points_enu: np.ndarray) -> np.ndarray: ...


@dataclass(frozen=True)
class ConstantCurrent:
    """Uniform, steady current (m/s, ENU)."""

    velocity: np.ndarray

    def velocity_enu(self, t_s: float, points_enu: np.ndarray) -> np.ndarray:
        points = np.asarray(points_enu, dtype=float).reshape(-1, 3)
        return np.broadcast_to(self.velocity, points.shape).copy()


@dataclass(frozen=True)
class SumCurrent:
    """Superposition of current models, e.g. Ekman + a Gauss–Markov perturbation (m/s, ENU)."""

    terms: tuple[CurrentModel, ...]

    def velocity_enu(self, t_s: float, points_enu: np.ndarray) -> np.ndarray:
        points = np.asarray(points_enu, dtype=float).reshape(-1, 3)
        total = np.zeros_like(points)
        for term in self.terms:
            total += term.velocity_enu(t_s, points)
        return total


@dataclass(frozen=True)
class SeabedMaskedCurrent:
    """A current model set to 0 at and below the local sea floor (and the model it wraps, as `.model`)."""

    model: CurrentModel
    bathymetry: Any

    def velocity_enu(self, t_s: float, points_enu: np.ndarray) -> np.ndarray:
        points = np.asarray(points_enu, dtype=float).reshape(-1, 3)
        out = np.asarray(self.model.velocity_enu(t_s, points), dtype=float)
        dry = -points[:, 2] >= self.bathymetry.seabed_depth_m(points[:, 0], points[:, 1])
        out[dry] = 0.0
        return out


@dataclass(frozen=True)
class Environment:
    """Everything the vessels feel and see: current, 10 m wind, sea floor, densities, waves, static geometry (SI,
    `map` ENU)."""

    current: CurrentModel
    wind: WindField = field(default_factory=lambda: WindField(np.zeros(2)))
    bathymetry: FlatSeabed | GridSeabed = field(default_factory=FlatSeabed)
    water_density_kgm3: float = RHO_WATER
    air_density_kgm3: float = RHO_AIR
    origin: GeodeticOrigin | None = None
    seed: int = 0
    waves: WaveField = field(default_factory=WaveField)
    world: World = field(default_factory=World)  # static geometry: land, objects (lotusim_env.world)


TOP_KEYS = (
    "seed",
    "origin",
    "water_density_kgm3",
    "air_density_kgm3",
    "current",
    "wind",
    "waves",
    "bathymetry",
    "world",
    "description",
)


ORIGIN_ALIASES = {"lat_deg": "latitude_deg", "lon_deg": "longitude_deg", "alt_m": "altitude_m"}


def _origin(config: Mapping[str, Any]) -> GeodeticOrigin | None:
    """origin: {latitude_deg, longitude_deg, altitude_m} (lotusim_core.base.geodesy; lat_deg/lon_deg/alt_m accepted)."""
    if config.get("origin") is None:
        return None
    cfg = section(config["origin"], "origin")
    check_keys(cfg, (*ORIGIN_ALIASES, *ORIGIN_ALIASES.values()), "origin")
    values = {}
    for short, name in ORIGIN_ALIASES.items():
        if short in cfg and name in cfg:
            raise ConfigError(f"origin.{short}: give {name} or its alias {short}, not both")
        source = short if short in cfg else name
        limits = {"latitude_deg": (-90.0, 90.0), "longitude_deg": (-180.0, 360.0)}.get(name, (None, None))
        default = 0.0 if name == "altitude_m" else None
        values[name] = get_float(cfg, source, "origin", default, minimum=limits[0], maximum=limits[1])
    return GeodeticOrigin(**values)


@dataclass(frozen=True)
class _Context:
    """What a current model may need from the rest of the configuration."""

    root_seed: int
    origin: GeodeticOrigin | None
    wind: WindField
    bathymetry: Any
    water_density_kgm3: float
    air_density_kgm3: float
    base_dir: Path | None


def _build_current(config: Any, key: str, ctx: _Context) -> CurrentModel:
    cfg = section(config, key)
    model = get_choice(cfg, "model", key, CURRENT_MODELS, "constant")
    seed = derive_seed(get_int(cfg, "seed", key, ctx.root_seed), key)
    if model == "constant":
        check_keys(cfg, ("model", "velocity_enu", "seed"), key)
        return ConstantCurrent(get_vector(cfg, "velocity_enu", key, 3, [0.0, 0.0, 0.0]))
    if model == "gauss_markov":
        return build_gauss_markov(cfg, key, seed)
    if model == "stratified":
        return build_stratified(cfg, key, ctx.base_dir, seed)
    if model == "gridded":
        return build_gridded(cfg, key, ctx.base_dir, ctx.origin)
    if model == "ekman":
        return build_ekman(
            cfg,
            key,
            latitude_deg=ctx.origin.latitude_deg if ctx.origin else None,
            mean_wind_enu=ctx.wind.mean_enu,
            bathymetry=ctx.bathymetry,
            rho_water=ctx.water_density_kgm3,
            rho_air=ctx.air_density_kgm3,
        )
    check_keys(cfg, ("model", "terms", "seed"), key)  # sum
    terms = cfg.get("terms")
    if not isinstance(terms, list) or not terms:
        raise ConfigError(f"{key}.terms: expected a non-empty list of current models, got {terms!r}")
    sub = _Context(
        get_int(cfg, "seed", key, ctx.root_seed),
        ctx.origin,
        ctx.wind,
        ctx.bathymetry,
        ctx.water_density_kgm3,
        ctx.air_density_kgm3,
        ctx.base_dir,
    )
    return SumCurrent(tuple(_build_current(term, f"{key}.terms[{i}]", sub) for i, term in enumerate(terms)))


def build_environment(config: Mapping[str, Any] | None, base_dir: str | Path | None = None) -> Environment:
    """Build the environment from its configuration mapping (schema: docs/environment.md).

    base_dir: directory that relative data-file paths resolve against (the configuration file's directory);
    the working directory when None. Raises ConfigError naming the offending key.
    """
    config = section(config, "environment")
    check_keys(config, TOP_KEYS, "")
    root_seed = get_int(config, "seed", "", 0)
    base = Path(base_dir) if base_dir is not None else None
    rho_w = get_float(config, "water_density_kgm3", "", RHO_WATER, minimum=0.0, strict_minimum=True)
    rho_a = get_float(config, "air_density_kgm3", "", RHO_AIR, minimum=0.0, strict_minimum=True)
    origin = _origin(config)
    wind_cfg = section(config.get("wind"), "wind")
    wind = build_wind(wind_cfg, "wind", derive_seed(get_int(wind_cfg, "seed", "wind", root_seed), "wind"))
    bathymetry = build_bathymetry(section(config.get("bathymetry"), "bathymetry"), "bathymetry", base)
    ctx = _Context(root_seed, origin, wind, bathymetry, rho_w, rho_a, base)
    current_cfg = config.get("current", {"model": "constant", "velocity_enu": [0.0, 0.0, 0.0]})
    current = SeabedMaskedCurrent(_build_current(current_cfg, "current", ctx), bathymetry)
    waves_cfg = section(config.get("waves"), "waves")
    waves_seed = derive_seed(get_int(waves_cfg, "seed", "waves", root_seed), "waves")
    waves = build_waves(waves_cfg, "waves", waves_seed, rho_w)
    world = build_world(config.get("world"), "world", base, origin)
    return Environment(current, wind, bathymetry, rho_w, rho_a, origin, root_seed, waves, world)
