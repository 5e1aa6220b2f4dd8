"""Layered Ekman current: wind-driven surface spiral + geostrophic interior + bottom Ekman layer (ENU, m/s).

Structure of [Buche2025] §IV-B (Eqs. 1–4), with the physics of Ekman (1905) as in Stewart,
Introduction to Physical Oceanography (2008) §9.2–9.3, and Cushman-Roisin & Beckers, Introduction to
Geophysical Fluid Dynamics (2011) ch. 8. Complex notation W = u + i v (u east, v north), z up (z = −depth).

Parameters
- Coriolis f = 2 Ω sin φ, Ω = 7.2921e-5 rad/s; s = sign(f) (+1 north, −1 south).
- Drag, Eq. (1) of the paper: C_D = (0.79 + 0.08 U10)·10⁻³ for U10 < 20.5 m/s, 2.43·10⁻³ above. The paper's
  threshold 20.5 makes C_D continuous (0.79 + 0.08·20.5 = 2.43). LOTUSim-Xdyn uses 20.2 m/s with 2.423·10⁻³
  (a 0.7 % jump), the Python prototype 7.88·10⁻⁴ + 8.08·10⁻⁵ U10 up to 20.228 m/s (continuous at 2.423·10⁻³);
  `drag_law` selects paper (default), xdyn or prototype ([LOTUSimEval2025], [LOTUSimXdyn2025]).
- Wind stress τ = ρ_air C_D U10² along the direction the wind blows towards (a vector: the spiral turns with the
  wind, which the paper's Eq. 2 does not do; see docs/environment.md).
- Ekman depth D (where the spiral has decayed by e^−π): from an eddy viscosity, D = π √(2 A_z/|f|) (Stewart
  eq. 9.13/9.10), or from the wind, D = 7.6 U10/√(sin|φ|) m (Stewart eq. 9.16, Ekman's empirical rule), or given.
  a = π/D, κ = (1 + i s) a.

Surface (wind-driven) part, infinite depth (Stewart eq. 9.9 rotated to the wind):
    W_s(z) = τ/(ρ A_z κ) e^{κ z} = 2aτ / (ρ|f|(1 + i s)) · e^{κ z}
so |W_s(0)| = V0 = √2 π τ/(ρ|f|D) = τ/(ρ√(|f|A_z)) (the textbook V0; LOTUSim-Xdyn divides by √ρ instead of ρ,
32× too large), the surface current is 45° to the right of the wind in the north (left in the south), turns
clockwise (north) with depth, and the transport ∫W_s dz = −i s τ/(ρ|f|) is 90° to the right (north).
We use the finite-depth solution with no slip at the local seabed H (Ekman 1905; Cushman-Roisin & Beckers §8.5):
    W_s(z) = τ/(ρ A_z κ) · sinh(κ(z + H))/cosh(κH) = 2aτ/(ρ|f|(1 + i s)) · (e^{κz} − e^{−κ(z + 2H)})/(1 + e^{−2κH})
which equals the infinite-depth spiral to e^{−2πH/D} and is exactly 0 at the seabed.

Interior and bottom (Eq. 4 of the paper; Cushman-Roisin & Beckers §8.4), height above the bed ζ = H − depth:
    W_b = U_g (1 − e^{−κ_b ζ}),   κ_b = (1 + i s) π/D_b,   U_g = ū + i v̄
(no slip at the bed, 45° to the left of U_g just above it in the north, overshoot 1 + e^−π at ζ = D_b).

The current is W = W_s + W_b: the three zones of the paper are where each term dominates, and because the terms
are summed instead of switched at 2D (the LOTUSim cut-off leaves a 0.19 % jump) the profile is continuous
everywhere. Points above the surface take the surface value; at and below the seabed the current is 0. w = 0.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from lotusim_env.config import ConfigError, check_keys, get_choice, get_float, get_vector
from lotusim_env.wind import parse_mean_wind

OMEGA_EARTH = 7.2921e-5  # rad/s, Earth's rotation rate (Stewart 2008 §7.1)
RHO_AIR = 1.225  # kg/m³, standard air (the paper's prototype and LOTUSim-Xdyn default)
RHO_WATER = 1026.0  # kg/m³ (LOTUSim-Xdyn default and the prototype's RhoWater)
MIN_LATITUDE_DEG = 1.0  # Ekman theory has f → 0 at the equator: refuse |φ| < 1°


def coriolis_parameter(latitude_deg: float) -> float:
    """f = 2 Ω sin φ (1/s)."""
    return 2.0 * OMEGA_EARTH * np.sin(np.radians(latitude_deg))


def drag_coefficient(u10_mps: float, law: str = "paper") -> float:
    """Sea-surface drag coefficient C_D at 10 m wind speed U10 (m/s); laws: paper, xdyn, prototype (module doc)."""
    if law == "paper":  # Eq. (1) of [Buche2025], after Curcic & Haus (2020)
        return (0.79 + 0.08 * u10_mps) * 1e-3 if u10_mps < 20.5 else 2.43e-3
    if law == "xdyn":  # LOTUSim-Xdyn EkmanUWCurrentModel.cpp
        return (0.79 + 0.08 * u10_mps) * 1e-3 if u10_mps < 20.2 else 2.423e-3
    if law == "prototype":  # LOTUSim python_ekman Aerial.py
        return 7.88e-4 + 8.08e-5 * u10_mps if u10_mps < 20.228 else 2.423e-3
    raise ValueError(f"unknown drag law {law!r} (paper, xdyn, prototype)")


def ekman_depth_from_viscosity(eddy_viscosity_m2s: float, f: float) -> float:
    """D = π √(2 A_z / |f|) (m), Stewart (2008) eq. 9.10."""
    return float(np.pi * np.sqrt(2.0 * eddy_viscosity_m2s / abs(f)))


def ekman_depth_from_wind(u10_mps: float, latitude_deg: float) -> float:
    """D = 7.6 U10 / √(sin|φ|) (m, U10 in m/s), Stewart (2008) eq. 9.16 (empirical, |φ| ≳ 10°)."""
    return float(7.6 * u10_mps / np.sqrt(np.sin(np.radians(abs(latitude_deg)))))


class EkmanCurrent:
    """Steady layered Ekman current (module doc). Construct with build_ekman() or directly (SI units, ENU)."""

    def __init__(
        self,
        latitude_deg: float,
        wind_enu: np.ndarray,
        geostrophic_enu: np.ndarray,
        surface_depth_m: float | None,
        bottom_depth_m: float,
        bathymetry: Any,
        drag_law: str = "paper",
        drag_coefficient_value: float | None = None,
        rho_water: float = RHO_WATER,
        rho_air: float = RHO_AIR,
    ) -> None:
        """surface_depth_m None: D from the wind rule (Stewart eq. 9.16); bathymetry: has seabed_depth_m(x, y)."""
        self.latitude_deg = float(latitude_deg)
        self.f = coriolis_parameter(latitude_deg)
        self.sign = 1.0 if self.f > 0 else -1.0
        self.wind_enu = np.asarray(wind_enu, dtype=float)[:2]
        self.u10_mps = float(np.hypot(*self.wind_enu))
        cd = drag_coefficient(self.u10_mps, drag_law) if drag_coefficient_value is None else drag_coefficient_value
        self.drag_coefficient = float(cd)
        self.stress_enu = rho_air * self.drag_coefficient * self.u10_mps * self.wind_enu  # τ vector, N/m²
        self.stress_nm2 = float(np.hypot(*self.stress_enu))
        self.geostrophic_enu = np.asarray(geostrophic_enu, dtype=float)[:2]
        if surface_depth_m is None:
            surface_depth_m = ekman_depth_from_wind(self.u10_mps, latitude_deg)
        self.surface_depth_m = float(surface_depth_m)
        self.bottom_depth_m = float(bottom_depth_m)
        self.rho_water = float(rho_water)
        self.bathymetry = bathymetry
        self._kappa_s = (1.0 + 1j * self.sign) * np.pi / self.surface_depth_m if self.surface_depth_m > 0 else 0.0
        self._kappa_b = (1.0 + 1j * self.sign) * np.pi / self.bottom_depth_m
        tau = complex(self.stress_enu[0], self.stress_enu[1])
        a = np.pi / self.surface_depth_m if self.surface_depth_m > 0 else 0.0
        self._surface_amplitude = 2.0 * a * tau / (self.rho_water * abs(self.f) * (1.0 + 1j * self.sign))

    @property
    def surface_speed_v0_mps(self) -> float:
        """V0 = √2 π τ/(ρ|f|D), the wind-driven surface speed over deep water (m/s)."""
        return float(abs(self._surface_amplitude))

    @property
    def eddy_viscosity_m2s(self) -> float:
        """A_z = |f| D²/(2π²) implied by the surface Ekman depth (m²/s)."""
        return float(abs(self.f) * self.surface_depth_m**2 / (2.0 * np.pi**2))

    def profile_complex(self, depth_m: np.ndarray, seabed_depth_m: np.ndarray) -> np.ndarray:
        """W = u + i v (m/s) at depths (m, positive down; clipped at 0) over seabed depths H (m)."""
        d = np.clip(np.asarray(depth_m, dtype=float), 0.0, None)
        h = np.asarray(seabed_depth_m, dtype=float)
        wet = d < h
        d, h = np.where(wet, d, 0.0), np.where(wet, h, 1.0)  # dry points computed harmlessly, then zeroed
        u_g = complex(self.geostrophic_enu[0], self.geostrophic_enu[1])
        w = u_g * (1.0 - np.exp(-self._kappa_b * (h - d)))
        if self._surface_amplitude != 0:
            k = self._kappa_s  # sinh(κ(H − d))/cosh(κH) written with decaying exponentials only
            shape = (np.exp(-k * d) - np.exp(-k * (2.0 * h - d))) / (1.0 + np.exp(-2.0 * k * h))
            w = w + self._surface_amplitude * shape
        return np.where(wet, w, 0.0)

    def velocity_enu(self, t_s: float, points_enu: np.ndarray) -> np.ndarray:
        """Current (N x 3, m/s, ENU; up = 0) at N points (N x 3, ENU m, z up). Steady: t_s is not used."""
        points = np.asarray(points_enu, dtype=float).reshape(-1, 3)
        seabed = self.bathymetry.seabed_depth_m(points[:, 0], points[:, 1])
        w = self.profile_complex(-points[:, 2], seabed)
        return np.stack([w.real, w.imag, np.zeros_like(w.real)], axis=1)


EKMAN_KEYS = (
    "model",
    "latitude_deg",
    "geostrophic_enu",
    "surface_depth_rule",
    "eddy_viscosity_m2s",
    "surface_layer_depth_m",
    "bottom_depth_rule",
    "bottom_eddy_viscosity_m2s",
    "bottom_layer_depth_m",
    "drag_law",
    "drag_coefficient",
    "wind_speed_mps",
    "wind_from_deg",
    "wind_velocity_enu",
    "seed",
)


def build_ekman(
    config: Mapping[str, Any],
    key: str,
    *,
    latitude_deg: float | None,
    mean_wind_enu: np.ndarray,
    bathymetry: Any,
    rho_water: float,
    rho_air: float,
) -> EkmanCurrent:
    """EkmanCurrent from its configuration section (docs/environment.md, 'ekman').

    latitude_deg: the origin's latitude (used when the section has no latitude_deg); mean_wind_enu: the
    environment's mean 10 m wind (east, north), used unless the section gives its own wind_* keys.
    """
    check_keys(config, EKMAN_KEYS, key)
    if latitude_deg is None and "latitude_deg" not in config:
        raise ConfigError(
            f"{key}.latitude_deg: missing (the Ekman model needs the latitude: set {key}.latitude_deg "
            "or origin.latitude_deg)"
        )
    if "latitude_deg" in config:
        latitude_deg = get_float(config, "latitude_deg", key, None, minimum=-90.0, maximum=90.0)
    if abs(latitude_deg) < MIN_LATITUDE_DEG:
        raise ConfigError(
            f"{key}.latitude_deg: Ekman theory needs |latitude| >= {MIN_LATITUDE_DEG}° (f = 0 at the "
            f"equator), got {latitude_deg:g}"
        )
    f = coriolis_parameter(latitude_deg)
    wind_keys = ("wind_speed_mps", "wind_from_deg", "wind_velocity_enu")
    wind = parse_mean_wind(config, key, prefix="wind_") if any(k in config for k in wind_keys) else mean_wind_enu
    rule = get_choice(config, "surface_depth_rule", key, ("eddy_viscosity", "wind", "fixed"), "eddy_viscosity")
    viscosity = get_float(config, "eddy_viscosity_m2s", key, 0.01, minimum=0.0, strict_minimum=True)
    if rule == "eddy_viscosity":
        surface_depth = ekman_depth_from_viscosity(viscosity, f)
    elif rule == "fixed":
        surface_depth = get_float(config, "surface_layer_depth_m", key, None, minimum=0.0, strict_minimum=True)
    else:
        surface_depth = None
    bottom_rule = get_choice(config, "bottom_depth_rule", key, ("eddy_viscosity", "fixed"), "eddy_viscosity")
    if bottom_rule == "fixed":
        bottom_depth = get_float(config, "bottom_layer_depth_m", key, None, minimum=0.0, strict_minimum=True)
    else:
        nu_b = get_float(config, "bottom_eddy_viscosity_m2s", key, viscosity, minimum=0.0, strict_minimum=True)
        bottom_depth = ekman_depth_from_viscosity(nu_b, f)
    law = get_choice(config, "drag_law", key, ("paper", "xdyn", "prototype", "constant"), "paper")
    cd = get_float(config, "drag_coefficient", key, None, minimum=0.0) if law == "constant" else None
    return EkmanCurrent(
        latitude_deg=latitude_deg,
        wind_enu=wind,
        geostrophic_enu=get_vector(config, "geostrophic_enu", key, 2, [0.0, 0.0]),
        surface_depth_m=surface_depth,
        bottom_depth_m=bottom_depth,
        bathymetry=bathymetry,
        drag_law="paper" if law == "constant" else law,
        drag_coefficient_value=cd,
        rho_water=rho_water,
        rho_air=rho_air,
    )
