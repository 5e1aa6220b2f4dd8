"""Ocean surface waves: linear (Airy) theory over a directional JONSWAP / Pierson–Moskowitz sea, or one regular wave.

The sea is a fixed table of M components i (amplitude a_i, angular frequency ω_i, wavenumber k_i, direction of
propagation d̂_i, phase θ_i), drawn once from (configuration, seed); everything else is a pure function of that
table, the sim time t and the points, vectorised over N points × M components (no loop over points):

    phase       φ_i(x, t) = k_i (d̂_i · x) − ω_i t + θ_i
    elevation   η(x, t)   = r(t) Σ_i a_i cos φ_i
    velocity    u_h       = r(t) Σ_i a_i (g k_i / ω_i) K_p,i(z) cos φ_i d̂_i        (horizontal, along d̂_i)
                w         = r(t) Σ_i a_i ω_i K_w,i(z) sin φ_i                      (vertical, up)
    pressure    p_dyn     = r(t) ρ g Σ_i a_i K_p,i(z) cos φ_i                      (excess over ρ g · depth)

with the depth attenuations of finite depth h (Airy; deep water h → ∞: both → e^{kz})

    K_p(z) = cosh k(z+h) / cosh kh,     K_w(z) = sinh k(z+h) / sinh kh,

the dispersion relation ω² = g k tanh kh (deep water k = ω²/g), and the start-up ramp of [VRX2025]
r(t) = 1 − exp(−t/τ) (r = 0 before t = 0; τ = 0: no ramp). For deep water g k/ω = ω, so the orbital speed at
the surface is a ω. Sign convention: η = Σ a cos φ (xdyn writes −Σ a sin(…) in NED with z down [LOTUSimXdyn2025];
with uniformly random phases the two are the same sea).

Spectra [LOTUSimXdyn2025, JonswapSpectrum / PiersonMoskowitzSpectrum; Hasselmann1973; Goda2010]:

    S(ω) = (1 − 0.287 ln γ) · (5/16) · Hs² ωp⁴ / ω⁵ · exp(−1.25 (ωp/ω)⁴) · γ^r,
    r = exp(−(ω − ωp)² / (2 σ² ωp²)),  σ = 0.07 (ω ≤ ωp), 0.09 (ω > ωp),  ωp = 2π/Tp;

Pierson–Moskowitz is JONSWAP with γ = 1. (1 − 0.287 ln γ) is Goda's normalisation, so that 4√m0 ≈ Hs.

Directional spreading, cos-2s [LOTUSimXdyn2025, Cos2sDirectionalSpreading; Goda2010], around the mean direction
of propagation ψ0:  D(ψ) = F_s cos^{2s}((ψ − ψ0)/2),  F_s = 2^{2s−1} Γ(s+1)² / (π Γ(2s+1)),  ∫ D dψ = 1 over 2π.

Discretisation: n_ω equal bins of width Δω over [ω_min, ω_max] (by default [0.7 ωp, 3.5 ωp], which holds
98.6–99.4 % of the spectrum's m0, Hs within 0.7 %, for 1 ≤ γ ≤ 7, derived), each represented by one frequency ω_i
at its centre (or, with `jitter`, at a seeded random place within it, which removes the repeat period 2π/Δω of an
equally spaced sea), times n_ψ directions every Δψ = 2π/n_ψ starting half a turn from ψ0 (ψ0 itself is one of
them). Each component carries
the energy of its bin, a_ij = sqrt(2 E_i w_j) with E_i = ∫_bin S dω (Gauss–Legendre, 8 nodes; the usual
S(ω_i)Δω is its midpoint rule: equal for smooth spectra, and exact in energy wherever ω_i sits in the bin) and
w_j = D(ψ_j)Δψ / Σ_j D(ψ_j)Δψ (the weights sum to 1; for an integer s < n_ψ the plain sum is already exactly 1,
as D is then a trigonometric polynomial of degree s). Phases θ_ij are uniform on [0, 2π) from numpy's Generator
seeded by the configuration's seed. LOTUSim's fast setting is n_ψ = 8 × n_ω = 16 over 0.1–10 rad/s (128
components) [Buche2025, code: assets/models/dtmb_hull/dtmb-xdyn-faster.yml]: the default counts here, its band on
request (that fixed band of bins 0.62 rad/s wide resolves Tp ≈ 3 s; at Tp = 8 s its strongest bin has a period of
6.1 s, and build_waves refuses a table whose Hs or Tp is further than 10 % / 15 % from the configuration's).

Frames and units (as every model of lotusim_env): points are in the world frame `map`, ENU (x east, y north,
z up; m), z = 0 the mean sea surface; velocities are ENU (m/s); the elevation η is up (m); pressures in Pa.
Directions in the configuration are compass bearings like the wind's: `from_deg` is where the waves come FROM,
clockwise from true north (the convention of reported mean wave directions), so they travel towards
from_deg + 180°, whose unit vector is d̂ = (sin ψ, cos ψ) (east, north) with ψ that bearing.
Kinematics above the mean level (0 < z ≤ η) take the value at z = 0 (constant extrapolation); points above the
instantaneous surface (z > η) are in the air and get 0 velocity and 0 dynamic pressure (or, asked with
`follow_surface`, the values at the surface below them: a hull's waterline points); points below the sea floor
(z < −h) take the value at the floor.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import DTypeLike

from lotusim_env.config import ConfigError, check_keys, get_choice, get_float, get_int, section
from lotusim_env.ekman import RHO_WATER

GRAVITY_MPS2 = 9.81  # the physics' g (lotusim_physics.fleet), and xdyn's default
RHO_WATER_KGM3 = RHO_WATER  # sea water density of the environment's default (LOTUSim-Xdyn's)
WAVE_MODELS = ("none", "regular", "jonswap", "pierson_moskowitz")
JONSWAP_GAMMA = 3.3  # mean peak enhancement of the JONSWAP measurements (Hasselmann1973)
MAX_FREQUENCIES, MAX_DIRECTIONS = 4096, 360
DEFAULT_BAND = (0.7, 3.5)  # default [ω_min, ω_max] in units of ωp (module docstring)
HS_TOLERANCE = 0.10  # a discretised sea whose 4√m0 is further than this from Hs is refused
TP_TOLERANCE = 0.15  # ... or whose strongest frequency's period is further than this from Tp
GAUSS_NODES = 8  # Gauss–Legendre nodes per frequency bin for E_i = ∫_bin S dω


# ------------------------------------------------------------------------------------------- spectra, spreading
def jonswap_spectrum(omega_radps: np.ndarray, hs_m: float, tp_s: float, gamma: float = JONSWAP_GAMMA) -> np.ndarray:
    """S(ω) (m² s/rad) of a JONSWAP sea of significant height Hs (m), peak period Tp (s), peak enhancement γ ≥ 1.

    S(ω) = (1 − 0.287 ln γ)(5/16) Hs² ωp⁴/ω⁵ exp(−1.25 (ωp/ω)⁴) γ^r, r = exp(−(ω−ωp)²/(2σ²ωp²)) (module docstring).
    """
    omega = np.asarray(omega_radps, dtype=float)
    omega_p = 2.0 * math.pi / tp_s
    sigma = np.where(omega <= omega_p, 0.07, 0.09)
    r = np.exp(-((omega - omega_p) ** 2) / (2.0 * sigma**2 * omega_p**2))
    pm = (5.0 / 16.0) * hs_m**2 * omega_p**4 / omega**5 * np.exp(-1.25 * (omega_p / omega) ** 4)
    return (1.0 - 0.287 * math.log(gamma)) * pm * gamma**r


def pierson_moskowitz_spectrum(omega_radps: np.ndarray, hs_m: float, tp_s: float) -> np.ndarray:
    """S(ω) (m² s/rad) of a fully developed Pierson–Moskowitz sea: JONSWAP with γ = 1."""
    return jonswap_spectrum(omega_radps, hs_m, tp_s, 1.0)


def cos2s_spreading(psi_rad: np.ndarray, psi0_rad: float, s: float) -> np.ndarray:
    """D(ψ) (1/rad) = F_s cos^{2s}((ψ − ψ0)/2), F_s = 2^{2s−1} Γ(s+1)² / (π Γ(2s+1)); ∫ D dψ = 1 over one turn."""
    log_fs = (
        (2.0 * s - 1.0) * math.log(2.0) + 2.0 * math.lgamma(s + 1.0) - math.log(math.pi) - math.lgamma(2.0 * s + 1.0)
    )
    half = 0.5 * (np.asarray(psi_rad, dtype=float) - psi0_rad)
    return math.exp(log_fs) * np.abs(np.cos(half)) ** (2.0 * s)


def wavenumber_radpm(omega_radps: np.ndarray, depth_m: float = math.inf, g: float = GRAVITY_MPS2) -> np.ndarray:
    """k (rad/m) of the Airy dispersion relation ω² = g k tanh(k h); deep water (h = ∞): k = ω²/g.

    Finite depth: Newton's iterations on f(k) = g k tanh(kh) − ω² from the larger of the deep- and shallow-water
    values (f is increasing and concave, so the iterates decrease monotonically to the root).
    """
    omega = np.asarray(omega_radps, dtype=float)
    k = omega**2 / g
    if math.isinf(depth_m):
        return k
    k = np.maximum(k, omega / math.sqrt(g * depth_m))
    for _ in range(50):
        tanh = np.tanh(k * depth_m)
        f = g * k * tanh - omega**2
        df = g * tanh + g * k * depth_m * (1.0 - tanh**2)
        step = f / df
        k = k - step
        if np.all(np.abs(step) <= 1e-14 * k):
            break
    return k


def ramp_factor(t_s: float, ramp_time_s: float) -> float:
    """Start-up ramp r(t) = 1 − exp(−t/τ) for t > 0, 0 before [VRX2025]; τ = 0: r = 1 (no ramp)."""
    if ramp_time_s <= 0.0:
        return 1.0
    return -math.expm1(-t_s / ramp_time_s) if t_s > 0.0 else 0.0


# ------------------------------------------------------------------------------------------------- the sea table
@dataclass(frozen=True)
class WaveComponents:
    """The discretised sea, one row per component (M rows; M = 0 is a calm sea).

    amplitude_m a_i (m), omega_radps ω_i (rad/s), wavenumber_radpm k_i (rad/m), direction_en d̂_i (M x 2, unit
    vectors east, north: where the component travels), phase_rad θ_i (rad); depth_m h (m, inf = deep water);
    ramp_time_s τ (s) of r(t). The arrays share one dtype (float64, or float32 through `astype`).
    """

    amplitude_m: np.ndarray
    omega_radps: np.ndarray
    wavenumber_radpm: np.ndarray
    direction_en: np.ndarray
    phase_rad: np.ndarray
    depth_m: float = math.inf
    ramp_time_s: float = 0.0

    @property
    def size(self) -> int:
        """M, the number of components."""
        return int(self.amplitude_m.shape[0])

    @property
    def dtype(self) -> np.dtype:
        return self.amplitude_m.dtype

    def astype(self, dtype: DTypeLike) -> WaveComponents:
        """The same sea evaluated in `dtype` (float32 halves memory traffic; phases are reduced mod 2π in float64
        before the cast, so a late sim time loses no precision)."""
        cast = {n: np.ascontiguousarray(getattr(self, n), dtype=dtype) for n in _ARRAY_FIELDS}
        return replace(self, **cast)


_ARRAY_FIELDS = ("amplitude_m", "omega_radps", "wavenumber_radpm", "direction_en", "phase_rad")


def calm_sea() -> WaveComponents:
    """No waves: zero components (every quantity evaluates to 0)."""
    empty = np.zeros(0)
    return WaveComponents(empty, empty, empty, np.zeros((0, 2)), empty)


def propagation_en(from_deg: np.ndarray | float) -> np.ndarray:
    """Unit vectors (…, 2: east, north) of waves coming FROM `from_deg` (clockwise from north): travelling towards
    the bearing ψ = from + 180°, d̂ = (sin ψ, cos ψ) = (−sin θ_from, −cos θ_from)."""
    theta = np.radians(from_deg)
    return np.stack([-np.sin(theta), -np.cos(theta)], axis=-1)


def regular_wave(
    height_m: float,
    period_s: float,
    from_deg: float = 0.0,
    phase_deg: float = 0.0,
    depth_m: float = math.inf,
    ramp_time_s: float = 0.0,
    g: float = GRAVITY_MPS2,
) -> WaveComponents:
    """One Airy component: η = (H/2) cos(k d̂·x − ωt + θ), ω = 2π/T, k from the dispersion relation."""
    omega = np.array([2.0 * math.pi / period_s])
    return WaveComponents(
        amplitude_m=np.array([0.5 * height_m]),
        omega_radps=omega,
        wavenumber_radpm=wavenumber_radpm(omega, depth_m, g),
        direction_en=propagation_en(np.array([from_deg])),
        phase_rad=np.radians(np.array([phase_deg])),
        depth_m=depth_m,
        ramp_time_s=ramp_time_s,
    )


@dataclass(frozen=True)
class SeaState:
    """What defines an irregular sea (SI; directions as compass bearings in degrees, like the wind's).

    hs_m Hs (m), tp_s Tp (s), gamma γ (1 = Pierson–Moskowitz), from_deg mean direction the waves come FROM,
    spreading_s s of cos-2s (used when directions > 1), frequencies n_ω and directions n_ψ (1 = long-crested),
    omega_min_radps / omega_max_radps the band discretised (None: 0.7 ωp, 3.5 ωp), jitter (frequencies at random
    places in their bins), depth_m h (inf = deep water), ramp_time_s τ.
    """

    hs_m: float
    tp_s: float
    gamma: float = JONSWAP_GAMMA
    from_deg: float = 0.0
    spreading_s: float = 2.0
    frequencies: int = 16
    directions: int = 8
    omega_min_radps: float | None = None
    omega_max_radps: float | None = None
    jitter: bool = False
    depth_m: float = math.inf
    ramp_time_s: float = 2.0


def frequency_band_radps(sea: SeaState) -> tuple[float, float]:
    """[ω_min, ω_max] (rad/s) discretised: the configured band, else [0.7 ωp, 3.5 ωp] with ωp = 2π/Tp."""
    omega_p = 2.0 * math.pi / sea.tp_s
    low = sea.omega_min_radps if sea.omega_min_radps is not None else DEFAULT_BAND[0] * omega_p
    high = sea.omega_max_radps if sea.omega_max_radps is not None else DEFAULT_BAND[1] * omega_p
    return low, high


def frequency_grid(sea: SeaState, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """ω_i (rad/s, n_ω) at the centres of equal bins over [ω_min, ω_max] (or uniformly random within them when
    sea.jitter), and the bins' lower edges (rad/s, n_ω + 1 edges: the last is ω_max)."""
    w_min, w_max = frequency_band_radps(sea)
    edges = np.linspace(w_min, w_max, sea.frequencies + 1)
    offset = rng.uniform(0.0, 1.0, sea.frequencies) if sea.jitter else np.full(sea.frequencies, 0.5)
    return edges[:-1] + offset * np.diff(edges), edges


def bin_energy_m2(sea: SeaState, edges_radps: np.ndarray) -> np.ndarray:
    """E_i = ∫ S dω (m²) over each bin [edges_i, edges_i+1] (Gauss–Legendre, GAUSS_NODES per bin)."""
    x, w = np.polynomial.legendre.leggauss(GAUSS_NODES)
    low, width = edges_radps[:-1, None], np.diff(edges_radps)[:, None]
    omega = low + 0.5 * (x + 1.0) * width
    return 0.5 * width[:, 0] * (jonswap_spectrum(omega, sea.hs_m, sea.tp_s, sea.gamma) @ w)


def direction_grid(sea: SeaState) -> tuple[np.ndarray, np.ndarray]:
    """Bearings ψ_j (rad, clockwise from north, where each direction travels) and weights w_j (sum 1):
    ψ_j = ψ0 + (j − ⌊n/2⌋) 2π/n, w_j = D(ψ_j)Δψ / Σ D(ψ_j)Δψ (cos-2s; one direction: ψ0 with weight 1)."""
    psi0 = math.radians(sea.from_deg + 180.0)
    n = sea.directions
    psi = psi0 + (np.arange(n) - n // 2) * (2.0 * math.pi / n)
    if n == 1:
        return psi, np.ones(1)
    weights = cos2s_spreading(psi, psi0, sea.spreading_s)
    return psi, weights / weights.sum()


def irregular_sea(sea: SeaState, seed: np.random.SeedSequence | int, g: float = GRAVITY_MPS2) -> WaveComponents:
    """The component table of a JONSWAP (PM when γ = 1) sea with cos-2s spreading: n_ω × n_ψ components (the
    frequency index varies slowest), a_ij = sqrt(2 E_i w_j), θ_ij uniform on [0, 2π) from `seed`.

    Draws, in this order, from numpy's default Generator: the phases (n_ω × n_ψ), then the frequency offsets
    when sea.jitter.
    """
    rng = np.random.default_rng(seed)
    phase = rng.uniform(0.0, 2.0 * math.pi, (sea.frequencies, sea.directions))
    omega, edges = frequency_grid(sea, rng)
    psi, weights = direction_grid(sea)
    amplitude = np.sqrt(2.0 * bin_energy_m2(sea, edges)[:, None] * weights[None, :])
    n_omega, n_psi = amplitude.shape
    direction = np.stack([np.sin(psi), np.cos(psi)], axis=-1)
    return WaveComponents(
        amplitude_m=amplitude.ravel(),
        omega_radps=np.repeat(omega, n_psi),
        wavenumber_radpm=np.repeat(wavenumber_radpm(omega, sea.depth_m, g), n_psi),
        direction_en=np.tile(direction, (n_omega, 1)),
        phase_rad=phase.ravel(),
        depth_m=sea.depth_m,
        ramp_time_s=sea.ramp_time_s,
    )


def significant_height_m(components: WaveComponents) -> float:
    """4√m0 of the discretised sea, m0 = Σ a_i²/2 (m): what the table holds of the spectrum's Hs."""
    a = components.amplitude_m.astype(float)
    return 4.0 * math.sqrt(0.5 * float(a @ a))


def peak_period_s(components: WaveComponents) -> float:
    """2π/ω (s) of the frequency that holds the most energy Σ a²/2 over its directions (the table's Tp)."""
    omega, index = np.unique(components.omega_radps.astype(float), return_inverse=True)
    energy = np.bincount(index, weights=components.amplitude_m.astype(float) ** 2)
    return 2.0 * math.pi / float(omega[np.argmax(energy)])


# ------------------------------------------------------------------------------------------- evaluation (pure)
class WaveSample(NamedTuple):
    """Wave kinematics at N points: elevation_m η (N,), velocity_enu (N, 3) m/s, dynamic_pressure_pa (N,)."""

    elevation_m: np.ndarray
    velocity_enu: np.ndarray
    dynamic_pressure_pa: np.ndarray


def _points(points_enu: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Points as an (N, 2) or (N, 3) array of `dtype`."""
    points = np.asarray(points_enu, dtype=dtype)
    return points.reshape(-1, points.shape[-1]) if points.ndim != 2 else points


def phase_constant_rad(c: WaveComponents, t_s: float) -> np.ndarray:
    """θ_i − ω_i t (M,, rad), reduced mod 2π in float64 before the cast to the table's dtype."""
    constant = np.mod(c.phase_rad.astype(float) - c.omega_radps.astype(float) * t_s, 2.0 * math.pi)
    return constant.astype(c.dtype)


def wavevectors(c: WaveComponents) -> np.ndarray:
    """(k_x, k_y) = k_i d̂_i of each component (2 x M, rad/m, east and north)."""
    return np.ascontiguousarray((c.wavenumber_radpm[:, None] * c.direction_en).T)


def phases_rad(c: WaveComponents, t_s: float, points_enu: np.ndarray) -> np.ndarray:
    """φ (N x M, rad) = k_i d̂_i · (x, y) − ω_i t + θ_i at the points' horizontal positions (columns 0, 1)."""
    phase = _points(points_enu, c.dtype)[:, :2] @ wavevectors(c)
    phase += phase_constant_rad(c, t_s)
    return phase


def depth_attenuation(c: WaveComponents, z_m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """K_p = cosh k(z+h)/cosh kh and K_w = sinh k(z+h)/sinh kh (N x M) at heights z (N,, m, up), written with
    exponentials that stay finite for any kh: K = (e^{kz} ± e^{−k(z+2h)}) / (1 ± e^{−2kh}); deep water: e^{kz}.
    z is first clamped to [−h, 0] (constant extrapolation above the mean level, the floor value below it)."""
    z = np.clip(np.asarray(z_m, dtype=c.dtype), -c.depth_m, 0.0)
    k = c.wavenumber_radpm
    decay = np.multiply.outer(z, k)
    np.exp(decay, out=decay)
    if math.isinf(c.depth_m):
        return decay, decay
    h = c.dtype.type(c.depth_m)
    mirror = np.exp(-np.multiply.outer(z + 2.0 * h, k))
    floor = np.exp(-2.0 * k * h)
    return (decay + mirror) / (1.0 + floor), (decay - mirror) / (1.0 - floor)


# Points are evaluated in blocks of this many rows, so that the N x M temporaries (phases, cos, sin, attenuation)
# stay in the CPU cache instead of being allocated and faulted in at full size (5,000 x 128: 5x faster).
BLOCK_POINTS = 256


def _blocks(n: int) -> range:
    return range(0, n, BLOCK_POINTS)


def elevation_m(c: WaveComponents, t_s: float, points_enu: np.ndarray) -> np.ndarray:
    """η (N,, m, up) at the points' (x, y): r(t) Σ a_i cos φ_i."""
    points = _points(points_enu, c.dtype)
    eta = np.zeros(points.shape[0], dtype=c.dtype)
    if c.size == 0:
        return eta
    k_en, constant = wavevectors(c), phase_constant_rad(c, t_s)
    a = c.amplitude_m * c.dtype.type(ramp_factor(t_s, c.ramp_time_s))
    for i in _blocks(points.shape[0]):
        phase = points[i : i + BLOCK_POINTS, :2] @ k_en
        phase += constant
        np.cos(phase, out=phase)
        eta[i : i + BLOCK_POINTS] = phase @ a
    return eta


def wave_sample(
    c: WaveComponents,
    t_s: float,
    points_enu: np.ndarray,
    water_density_kgm3: float = RHO_WATER_KGM3,
    g: float = GRAVITY_MPS2,
    follow_surface: bool = False,
) -> WaveSample:
    """Elevation, orbital velocity and dynamic pressure at N points (N x 3, ENU m) at sim time t_s (module
    docstring's equations), sharing one evaluation of the phases. Points above the local surface (z > η) get
    velocity 0 and dynamic pressure 0 (they are in the air), or, with follow_surface, the values at the surface
    below them (z := min(z, η): a floating hull's waterline points, which always sit in the water)."""
    points = _points(points_enu, c.dtype)
    n = points.shape[0]
    eta = np.zeros(n, dtype=c.dtype)
    velocity = np.zeros((n, 3), dtype=c.dtype)
    pressure = np.zeros(n, dtype=c.dtype)
    if c.size == 0:
        return WaveSample(eta, velocity, pressure)
    k_en, constant = wavevectors(c), phase_constant_rad(c, t_s)
    a = c.amplitude_m * c.dtype.type(ramp_factor(t_s, c.ramp_time_s))
    u_en = (a * (c.dtype.type(g) * c.wavenumber_radpm / c.omega_radps))[:, None] * c.direction_en  # a g k/ω d̂
    w_amp = a * c.omega_radps  # a ω
    rho_g = c.dtype.type(water_density_kgm3 * g)
    for i in _blocks(n):
        rows = slice(i, i + BLOCK_POINTS)
        phase = points[rows, :2] @ k_en
        phase += constant
        cos = np.cos(phase)
        sin = np.sin(phase, out=phase)
        eta[rows] = cos @ a
        z = np.minimum(points[rows, 2], eta[rows]) if follow_surface else points[rows, 2]
        k_p, k_w = depth_attenuation(c, z)
        cos *= k_p  # K_p cos φ_i, shared by the horizontal velocity and the pressure
        sin *= k_w
        velocity[rows, :2] = cos @ u_en
        velocity[rows, 2] = sin @ w_amp
        pressure[rows] = (cos @ a) * rho_g
    if not follow_surface:
        dry = points[:, 2] > eta
        velocity[dry] = 0.0
        pressure[dry] = 0.0
    return WaveSample(eta, velocity, pressure)


# ------------------------------------------------------------------------------------------------ the wave field
class WaveField:
    """The sea surface of an Environment: the component table and the density, with ENU methods like the
    current's and the wind's (N x 3 points, map ENU m, sim time t_s in s). A calm sea has no components."""

    def __init__(
        self,
        components: WaveComponents | None = None,
        water_density_kgm3: float = RHO_WATER_KGM3,
        model: str = "none",
    ) -> None:
        self.components = components if components is not None else calm_sea()
        self.water_density_kgm3 = water_density_kgm3
        self.model = model

    @property
    def calm(self) -> bool:
        return self.components.size == 0

    def elevation_m(self, t_s: float, points_enu: np.ndarray) -> np.ndarray:
        """η (N,, m, up) at the points' (x, y)."""
        return elevation_m(self.components, t_s, points_enu)

    def sample(self, t_s: float, points_enu: np.ndarray) -> WaveSample:
        """η, orbital velocity (ENU) and dynamic pressure (Pa) at the points (`wave_sample`)."""
        return wave_sample(self.components, t_s, points_enu, self.water_density_kgm3)

    def velocity_enu(self, t_s: float, points_enu: np.ndarray) -> np.ndarray:
        """Orbital velocity (N x 3, m/s, ENU) at the points; 0 above the surface."""
        return self.sample(t_s, points_enu).velocity_enu

    def dynamic_pressure_pa(self, t_s: float, points_enu: np.ndarray) -> np.ndarray:
        """Dynamic pressure (N,, Pa) at the points; 0 above the surface. Total gauge pressure below the surface:
        ρ g (−z) + p_dyn."""
        return self.sample(t_s, points_enu).dynamic_pressure_pa


# --------------------------------------------------------------------------------------------- configuration
COMMON_KEYS = ("model", "from_deg", "depth_m", "ramp_time_s", "seed")
REGULAR_KEYS = ("height_m", "period_s", "phase_deg")
SPECTRUM_KEYS = (
    "significant_height_m",
    "peak_period_s",
    "gamma",
    "spreading_s",
    "frequencies",
    "directions",
    "omega_min_radps",
    "omega_max_radps",
    "jitter",
)


def _common(config: Mapping[str, Any], key: str) -> dict[str, float]:
    depth = config.get("depth_m")
    return {
        "from_deg": get_float(config, "from_deg", key, 0.0, minimum=-360.0, maximum=360.0),
        "depth_m": math.inf if depth is None else get_float(config, "depth_m", key, minimum=0.0, strict_minimum=True),
        "ramp_time_s": get_float(config, "ramp_time_s", key, 2.0, minimum=0.0),
    }


def _sea_state(config: Mapping[str, Any], key: str, model: str) -> SeaState:
    """SeaState of a `jonswap` / `pierson_moskowitz` section (docs/environment.md, 'waves')."""
    if model == "pierson_moskowitz" and "gamma" in config:
        raise ConfigError(f"{key}.gamma: a Pierson–Moskowitz sea has γ = 1; use model: jonswap to set gamma")
    hs = get_float(config, "significant_height_m", key, minimum=0.0, strict_minimum=True)
    tp = get_float(config, "peak_period_s", key, minimum=0.0, strict_minimum=True)
    gamma = 1.0 if model == "pierson_moskowitz" else get_float(config, "gamma", key, JONSWAP_GAMMA, minimum=1.0)
    gamma_max = math.exp(1.0 / 0.287)  # Goda's factor 1 − 0.287 ln γ must stay > 0
    if gamma >= gamma_max:
        raise ConfigError(f"{key}.gamma: expected a number < {gamma_max:.2f} (1 − 0.287 ln γ > 0), got {gamma:g}")
    frequencies = get_int(config, "frequencies", key, 16, minimum=1)
    directions = get_int(config, "directions", key, 8, minimum=1)
    for name, value, top in (("frequencies", frequencies, MAX_FREQUENCIES), ("directions", directions, MAX_DIRECTIONS)):
        if value > top:
            raise ConfigError(f"{key}.{name}: expected an integer <= {top}, got {value}")
    w_p = 2.0 * math.pi / tp
    w_min = get_float(config, "omega_min_radps", key, DEFAULT_BAND[0] * w_p, minimum=0.0, strict_minimum=True)
    w_max = get_float(config, "omega_max_radps", key, DEFAULT_BAND[1] * w_p, minimum=0.0, strict_minimum=True)
    if w_max <= w_min:
        raise ConfigError(f"{key}.omega_max_radps: expected a number > omega_min_radps ({w_min:g}), got {w_max:g}")
    if not w_min < w_p < w_max:
        raise ConfigError(
            f"{key}.peak_period_s: the peak ωp = 2π/Tp = {w_p:.3g} rad/s is outside the discretised band "
            f"[{w_min:g}, {w_max:g}] rad/s (omega_min_radps, omega_max_radps), got Tp {tp:g} s"
        )
    jitter = config.get("jitter", False)
    if not isinstance(jitter, bool):
        raise ConfigError(f"{key}.jitter: expected true or false, got {jitter!r}")
    spreading = get_float(config, "spreading_s", key, 2.0, minimum=0.0, strict_minimum=True)
    counts = {"frequencies": frequencies, "directions": directions}
    band = {"omega_min_radps": w_min, "omega_max_radps": w_max}
    return SeaState(hs, tp, gamma, spreading_s=spreading, jitter=jitter, **counts, **band, **_common(config, key))


def check_resolution(sea: SeaState, components: WaveComponents, key: str) -> None:
    """Refuse a table that misses the configuration's Hs by more than HS_TOLERANCE (a band too narrow) or its Tp
    by more than TP_TOLERANCE (bins too wide), saying what it holds and what to change."""
    w_min, w_max = frequency_band_radps(sea)
    band = f"{sea.frequencies} frequencies over [{w_min:.3g}, {w_max:.3g}] rad/s"
    advice = (
        f"use more frequencies or a band around ωp = {2 * math.pi / sea.tp_s:.3g} rad/s (leave omega_min_radps and "
        f"omega_max_radps out for {DEFAULT_BAND[0]:g}–{DEFAULT_BAND[1]:g} ωp)"
    )
    for name, held, wanted, tolerance, unit in (
        ("significant height 4√m0", significant_height_m(components), sea.hs_m, HS_TOLERANCE, "m"),
        ("peak period", peak_period_s(components), sea.tp_s, TP_TOLERANCE, "s"),
    ):
        if abs(held / wanted - 1.0) > tolerance:
            raise ConfigError(
                f"{key}.frequencies: {band} give a {name} of {held:.3g} {unit} for {wanted:g} {unit} "
                f"({100 * (held / wanted - 1):+.0f} %, more than {100 * tolerance:.0f} %): {advice}"
            )


def build_waves(
    config: Mapping[str, Any] | None,
    key: str,
    seed: np.random.SeedSequence,
    water_density_kgm3: float = RHO_WATER_KGM3,
) -> WaveField:
    """WaveField from its configuration section (docs/environment.md, 'waves'); ConfigError names the key."""
    config = section(config, key)
    if "model" not in config and set(config) - {"seed"}:
        raise ConfigError(f"{key}.model: missing (expected one of {', '.join(WAVE_MODELS)})")
    model = get_choice(config, "model", key, WAVE_MODELS, "none")
    if model == "none":
        check_keys(config, ("model", "seed"), key)
        return WaveField(None, water_density_kgm3, model)
    if model == "regular":
        check_keys(config, (*COMMON_KEYS, *REGULAR_KEYS), key)
        height = get_float(config, "height_m", key, minimum=0.0, strict_minimum=True)
        period = get_float(config, "period_s", key, minimum=0.0, strict_minimum=True)
        phase = get_float(config, "phase_deg", key, 0.0)
        components = regular_wave(height, period, phase_deg=phase, **_common(config, key))
        return WaveField(components, water_density_kgm3, model)
    check_keys(config, (*COMMON_KEYS, *SPECTRUM_KEYS), key)
    sea = _sea_state(config, key, model)
    components = irregular_sea(sea, seed)
    check_resolution(sea, components, key)
    return WaveField(components, water_density_kgm3, model)
