"""Wind at 10 m above the sea: mean vector plus seeded gusts that vary in time and space (ENU, m/s, horizontal).

Direction convention (meteorological, the one weather reports and ERA5/Copernicus products use for wind):
``from_deg`` is the direction the wind blows FROM, in degrees clockwise from true north (a "westerly", from_deg
270, blows towards the east). The velocity vector points where the air goes:

    U_enu = U10 · (−sin θ_from, −cos θ_from)

Gusts (after VRX's USVWind.cc [VRX2025]): VRX integrates
v_var += (1/τ)(−v_var + K √(2τ)/√dt · N(0,1)) dt, an Ornstein–Uhlenbeck process with time constant τ and
stationary standard deviation K. We draw it with the exact discretisation of lotusim_env.gauss_markov (seeded,
pure function of sim time), one process along the mean wind (gust_std_mps) and one across it
(gust_lateral_std_mps). Spatial variation is Taylor's frozen-turbulence hypothesis (Taylor 1938): the gust
pattern is carried downwind at the mean speed, so a point s metres downwind sees the gust of t − s/U10:

    U(t, x) = U_mean + g_along(t − s/U) ê_along + g_across(t − s/U) ê_across,   s = (x, y)·ê_along

(ê_across is ê_along turned 90° anticlockwise, to the left of the wind.) With U_mean = 0 there is no
advection and gusts are uniform in space.

Wind at altitude (for drones). The mean wind above 10 m follows the logarithmic profile of the neutral surface
layer, the form MIL-F-8785C gives for wind shear [MILF8785C; MathWorksDryden2024], referred to 10 m:

    U(h) = U10 · ln(h/z0) / ln(10/z0)   for h > 10 m,   U10 at and below 10 m

with z0 the roughness length (default 0.0002 m, open sea [WMO2008]). Points at or below 10 m (every surface
vessel's reference point) take exactly the 10 m wind, so surface vessels' wind loads are unchanged. Optional
Dryden turbulence (lotusim_env.dryden, MIL-F-8785C low altitude) is added on top, in three dimensions.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from lotusim_env.config import ConfigError, check_keys, derive_seed, get_choice, get_float, get_int, get_vector, section
from lotusim_env.dryden import W20_BY_INTENSITY_MPS, W20_HEIGHT_M, DrydenTurbulence
from lotusim_env.gauss_markov import OrnsteinUhlenbeck

REFERENCE_HEIGHT_M = 10.0  # the height of the configured wind (and of surface vessels' wind loads)
SEA_ROUGHNESS_M = 0.0002  # roughness length z0 of the open sea (WMO 2008, Part I ch. 5, Davenport–Wieringa class 1)


def towards_enu(speed_mps: float, from_deg: float) -> np.ndarray:
    """Wind velocity (east, north) m/s of a wind of `speed_mps` blowing FROM `from_deg` (clockwise from north)."""
    theta = np.radians(from_deg)
    return speed_mps * np.array([-np.sin(theta), -np.cos(theta)])


def from_deg_of(velocity_en: np.ndarray) -> float:
    """Meteorological direction (deg clockwise from north the wind blows FROM) of a (east, north) velocity."""
    east, north = float(velocity_en[0]), float(velocity_en[1])
    return float(np.degrees(np.arctan2(-east, -north)) % 360.0)


def parse_mean_wind(config: Mapping[str, Any], key: str, prefix: str = "") -> np.ndarray:
    """Mean 10 m wind (east, north, m/s) from `{prefix}speed_mps` + `{prefix}from_deg`, or `{prefix}velocity_enu`."""
    speed_key, from_key, vec_key = f"{prefix}speed_mps", f"{prefix}from_deg", f"{prefix}velocity_enu"
    if vec_key in config:
        if speed_key in config or from_key in config:
            raise ConfigError(f"{key}.{vec_key}: give {vec_key} or {speed_key} + {from_key}, not both")
        value = config[vec_key]
        if isinstance(value, (list, tuple)) and len(value) == 3:
            value = list(value)[:2]  # a vertical component is accepted and ignored (10 m wind is horizontal)
        return get_vector({vec_key: value}, vec_key, key, 2)
    speed = get_float(config, speed_key, key, 0.0, minimum=0.0)
    direction = get_float(config, from_key, key, 0.0)
    return towards_enu(speed, direction)


class LogProfile:
    """Mean wind speed ratio U(h)/U10 = ln(max(h, 10)/z0)/ln(10/z0) (module docstring); z0 = None: uniform."""

    def __init__(self, roughness_m: float | None = SEA_ROUGHNESS_M) -> None:
        self.roughness_m = roughness_m

    def factor(self, height_m: np.ndarray, clamp: bool = True) -> np.ndarray:
        """U(h)/U10 at heights (m); clamp=False also below 10 m (for W20 at 20 ft)."""
        h = np.asarray(height_m, dtype=float)
        if self.roughness_m is None:
            return np.ones_like(h)
        h = np.maximum(h, REFERENCE_HEIGHT_M) if clamp else np.maximum(h, self.roughness_m)
        return np.log(h / self.roughness_m) / np.log(REFERENCE_HEIGHT_M / self.roughness_m)


class WindField:
    """Wind (ENU, m/s) at N points: the 10 m mean with its height profile, seeded advected gusts (horizontal)
    and optional Dryden turbulence (3-D)."""

    def __init__(
        self,
        mean_enu: np.ndarray,
        gusts: OrnsteinUhlenbeck | None = None,
        advect: bool = True,
        profile: LogProfile | None = None,
        turbulence: DrydenTurbulence | None = None,
    ) -> None:
        self.mean_enu = np.asarray(mean_enu, dtype=float)[:2]
        self.speed_mps = float(np.hypot(*self.mean_enu))
        self.from_deg = from_deg_of(self.mean_enu) if self.speed_mps > 0 else 0.0
        self.gusts = gusts
        self.advect = advect and self.speed_mps > 0
        self.profile = profile if profile is not None else LogProfile()
        self.turbulence = turbulence
        self._along = towards_enu(1.0, self.from_deg)
        self._across = np.array([-self._along[1], self._along[0]])

    def velocity_enu(self, t_s: float, points_enu: np.ndarray) -> np.ndarray:
        """Wind (N x 3, m/s, ENU) at N points (N x 3, ENU m) at sim time t_s (s); up = 0 without turbulence."""
        points = np.asarray(points_enu, dtype=float).reshape(-1, 3)
        out = np.zeros((points.shape[0], 3))
        out[:, :2] = self.mean_enu
        aloft = points[:, 2] > REFERENCE_HEIGHT_M
        if np.any(aloft) and self.speed_mps > 0:
            out[aloft, :2] = self.mean_enu * self.profile.factor(points[aloft, 2])[:, None]
        if self.turbulence is not None:
            out += self.turbulence.velocity_enu(t_s, points)
        if self.gusts is None:
            return out
        if self.advect:
            delay_s = (points[:, :2] @ self._along) / self.speed_mps
            g = self.gusts.sample(t_s - delay_s)
        else:
            g = np.broadcast_to(self.gusts.sample(t_s), (points.shape[0], 2))
        out[:, :2] += g[:, :1] * self._along + g[:, 1:] * self._across
        return out


WIND_KEYS = (
    "speed_mps",
    "from_deg",
    "velocity_enu",
    "gust_std_mps",
    "gust_lateral_std_mps",
    "gust_time_constant_s",
    "time_step_s",
    "spatial_phase",
    "seed",
    "profile",
    "turbulence",
)
PROFILE_KEYS = ("model", "roughness_m")
TURBULENCE_KEYS = ("model", "intensity", "w20_mps", "seed")


def build_profile(config: object, key: str) -> LogProfile:
    """The mean wind's height profile from `wind.profile` ({model: log | uniform, roughness_m}; default log)."""
    cfg = section(config, key)
    check_keys(cfg, PROFILE_KEYS, key)
    model = get_choice(cfg, "model", key, ("log", "uniform"), "log")
    if model == "uniform":
        if "roughness_m" in cfg:
            raise ConfigError(f"{key}.roughness_m: only for model log (a uniform wind has no roughness)")
        return LogProfile(None)
    return LogProfile(
        get_float(cfg, "roughness_m", key, SEA_ROUGHNESS_M, minimum=0.0, strict_minimum=True, maximum=5.0)
    )


def build_turbulence(
    config: object, key: str, root_seed: int, mean_enu: np.ndarray, profile: LogProfile
) -> DrydenTurbulence | None:
    """Dryden turbulence from `wind.turbulence` ({model: dryden | none, intensity | w20_mps, seed}); W20 defaults to
    the mean wind at 20 ft."""
    cfg = section(config, key)
    check_keys(cfg, TURBULENCE_KEYS, key)
    if not cfg:
        return None
    if "model" not in cfg:
        raise ConfigError(f"{key}.model: required (dryden or none)")
    if get_choice(cfg, "model", key, ("dryden", "none"), "none") == "none":
        if len(cfg) > 1:
            raise ConfigError(f"{key}: model none takes no other key, got {', '.join(sorted(set(cfg) - {'model'}))}")
        return None
    if "intensity" in cfg and "w20_mps" in cfg:
        raise ConfigError(f"{key}.w20_mps: give intensity or w20_mps, not both")
    speed = float(np.hypot(*mean_enu))
    if speed <= 0.0:
        raise ConfigError(
            f"{key}: Dryden turbulence is carried by the mean wind (Taylor's frozen turbulence); set wind.speed_mps > 0"
        )
    if "intensity" in cfg:
        w20 = W20_BY_INTENSITY_MPS[get_choice(cfg, "intensity", key, tuple(W20_BY_INTENSITY_MPS), "light")]
    else:
        default = speed * float(profile.factor(W20_HEIGHT_M, clamp=False))
        w20 = get_float(cfg, "w20_mps", key, default, minimum=0.0, maximum=100.0)
    seed = derive_seed(get_int(cfg, "seed", key, root_seed), key)
    return DrydenTurbulence(w20, mean_enu / speed, lambda h: speed * profile.factor(h), seed)


def build_wind(config: Mapping[str, Any], key: str, seed: np.random.SeedSequence) -> WindField:
    """WindField from its configuration section (docs/environment.md, 'wind')."""
    check_keys(config, WIND_KEYS, key)
    mean = parse_mean_wind(config, key)
    std_along = get_float(config, "gust_std_mps", key, 0.0, minimum=0.0)
    std_across = get_float(config, "gust_lateral_std_mps", key, 0.0, minimum=0.0)
    tau = get_float(config, "gust_time_constant_s", key, 10.0, minimum=0.0, strict_minimum=True)
    step = get_float(config, "time_step_s", key, min(0.5, tau / 10.0), minimum=0.0, strict_minimum=True)
    advect = config.get("spatial_phase", True)
    if not isinstance(advect, bool):
        raise ConfigError(f"{key}.spatial_phase: expected true or false, got {advect!r}")
    profile = build_profile(config.get("profile"), f"{key}.profile")
    turbulence = build_turbulence(config.get("turbulence"), f"{key}.turbulence", int(seed.entropy), mean, profile)
    gusts = None
    if std_along > 0 or std_across > 0:
        mu = 1.0 / tau
        sigma = np.array([std_along, std_across]) * np.sqrt(2.0 * mu)  # stationary std K = σ/√(2μ)
        gusts = OrnsteinUhlenbeck(np.zeros(2), np.full(2, mu), sigma, step, seed, initial="stationary")
    return WindField(mean, gusts, advect, profile, turbulence)
