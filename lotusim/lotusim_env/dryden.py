"""Dryden turbulence for the low-altitude air (MIL-F-8785C), a pure function of (seed, sim time, position).

Velocity spectra of the Dryden form, with Ω the spatial frequency (rad/m), σ the intensities, L the scale
lengths [MILF8785C §3.7.2; MathWorksDryden2024]:

    Φ_u(Ω) = σ_u² (2 L_u/π) / (1 + (L_u Ω)²)
    Φ_v(Ω) = σ_v² (L_v/π) (1 + 3 (L_v Ω)²) / (1 + (L_v Ω)²)²          (Φ_w: the same with w)

i.e. autocorrelations along the path R_u(ξ) = σ_u² e^{−ξ/L_u} and R_v(ξ) = σ_v² e^{−ξ/L_v} (1 − ξ/(2 L_v)). A
field flown through at speed V is white noise through the forming filters (MIL-F-8785C, MathWorks)

    H_u(s) = σ_u √(2 L_u/(π V)) / (1 + (L_u/V) s)
    H_v(s) = σ_v √(L_v/(π V)) (1 + √3 (L_v/V) s) / (1 + (L_v/V) s)²     (H_w: the same with w)

Low-altitude scales and intensities (h the height in ft, 10 ft < h < 1000 ft; W20 the wind speed at 20 ft,
typically 15 / 30 / 45 kt for light / moderate / severe turbulence) [MILF8785C; MathWorksDryden2024]:

    L_w = h,  L_u = L_v = h / (0.177 + 0.000823 h)^1.2   (ft)
    σ_w = 0.1 W20,  σ_u/σ_w = σ_v/σ_w = 1 / (0.177 + 0.000823 h)^0.4

The components are along the mean wind (u), across it to the left (v) and up (w), the low-altitude axes of
MIL-F-8785C. Above 1000 ft the 1000 ft values are kept (the medium/high-altitude model is not implemented).

How the field is a pure function (the rule of lotusim_env, docs/environment.md):
- Taylor's frozen turbulence [Taylor1938]: the field is carried downwind at the mean wind speed V(h), so a point
  s metres downwind sees at time t what lies at ξ = V t − s along the wind. Each forming filter is run in the
  dimensionless distance η = ξ/L (unit pole): u is white noise through √2/(1 + s) (unit variance,
  R(η) = e^{−|η|}), v and w through (1 + √3 s)/(1 + s)² (unit variance, R(η) = e^{−|η|}(1 − |η|/2)), scaled by σ.
  A hovering drone therefore sees the u gust with autocorrelation e^{−V τ/L_u}; one flying along the wind sees it
  at its own position, hence faster or slower.
- Each filter is a linear Gauss–Markov system exactly discretised on the grid η_k = k Δ: x_{k+1} = Φ x_k + e_k,
  e_k ~ N(0, Q) (Φ = e^{AΔ}, Q = ∫₀^Δ e^{As} B Bᵀ e^{Aᵀs} ds, both in closed form below), seeded per block of
  BLOCK_STEPS steps and memoised (lotusim_env.block_series, as for the Gauss–Markov currents); x_0 is drawn from the
  stationary law N(0, P), negative η run the reverse-time model x_{k−1} = P Φᵀ P⁻¹ x_k + e'_k,
  Cov e' = P − P Φᵀ P⁻¹ Φ P (the same stationary process seen backwards). Values between nodes are
  interpolated linearly (the variance of a first-order process is then 1 − Δ/3 on average: 0.3 % low).
- Height: the scales change with h, and stretching one realisation by L(h) would decorrelate two points 1 m
  apart after a few kilometres of drift. Instead independent filters run at fixed levels h_j = 10 m · √2^j
  (10 … 320 m), each with its own V(h_j) and L(h_j); a point between two levels takes
  cos(πf/2) n_j + sin(πf/2) n_{j+1} (f the fraction of the way in log h), times σ(h) at its own height: the
  variance is exactly σ(h)² at every height and the spectrum exactly Dryden's at the levels.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy.signal import lfilter

from lotusim_env import block_series
from lotusim_env.block_series import BLOCK_STEPS

FT_M = 0.3048  # one foot in metres (exact)
KNOT_MPS = 1852.0 / 3600.0  # one knot in m/s (exact)
W20_BY_INTENSITY_MPS = {"light": 15.0 * KNOT_MPS, "moderate": 30.0 * KNOT_MPS, "severe": 45.0 * KNOT_MPS}
W20_HEIGHT_M = 20.0 * FT_M  # the height of W20
LOW_ALTITUDE_TOP_M = 1000.0 * FT_M  # the low-altitude formulas hold below 1000 ft
LEVEL_BASE_M = 10.0  # the lowest level: surface vessels' 10 m wind
LEVEL_RATIO = float(np.sqrt(2.0))
LEVELS_M = LEVEL_BASE_M * LEVEL_RATIO ** np.arange(11)  # 10, 14.1, 20, ..., 320 m
STEP = 0.01  # grid step Δ in η = distance / L (part of the definition of the series)
_CACHED_BLOCKS = 256  # blocks of output kept per filter (2 MB; states at block starts are always kept)


def low_altitude_scales(height_m: np.ndarray, w20_mps: float) -> tuple[np.ndarray, np.ndarray]:
    """MIL-F-8785C low-altitude scale lengths (3, N) m and intensities (3, N) m/s, rows u, v, w, at heights (N,) m
    (clipped to [10 ft, 1000 ft]) for a wind of `w20_mps` m/s at 20 ft."""
    h_ft = np.clip(np.asarray(height_m, dtype=float), 10.0 * FT_M, LOW_ALTITUDE_TOP_M) / FT_M
    d = 0.177 + 0.000823 * h_ft
    l_uv = h_ft / d**1.2 * FT_M
    lengths = np.stack([l_uv, l_uv, h_ft * FT_M])
    sigma_w = np.full_like(h_ft, 0.1 * w20_mps)
    sigma_uv = sigma_w / d**0.4
    return lengths, np.stack([sigma_uv, sigma_uv, sigma_w])


class FormingFilter:
    """Unit-variance output of a Dryden forming filter in the dimensionless distance η (module docstring).

    order 1: x' = −x + √2 w, y = x.  order 2: x1' = −x1 + w, x2' = −x2 + x1, y = √3 x1 + (1 − √3) x2, i.e.
    y = (1 + √3 s)/(1 + s)² w. Pure function of (seed, η): sample(η) gives the same numbers in any call order.
    """

    def __init__(self, order: int, seed: np.random.SeedSequence, step: float = STEP) -> None:
        if order not in (1, 2):
            raise ValueError(f"FormingFilter: order must be 1 or 2, got {order}")
        self.order, self.step = order, float(step)
        self.a = float(np.exp(-step))
        self.coupling = self.a * step  # Φ = a [[1, 0], [Δ, 1]]: x2 gets a Δ x1
        self.output = np.array([1.0]) if order == 1 else np.array([np.sqrt(3.0), 1.0 - np.sqrt(3.0)])
        self.stationary = self._stationary_covariance()
        phi = self.transition()
        q = self.noise_covariance()
        p_inv = np.linalg.inv(self.stationary)
        back = p_inv - phi.T @ p_inv @ phi  # covariance of P⁻¹ e' (reverse time, coordinates z = P⁻¹ x)
        self._chol = {+1: np.linalg.cholesky(q), -1: np.linalg.cholesky(back[::-1, ::-1])}
        draw = np.random.default_rng(block_series.stream(seed, 0, 0)).standard_normal(order)
        x0 = np.linalg.cholesky(self.stationary) @ draw
        self._series = block_series.BlockSeries(seed, x0, self._make_block, (), _CACHED_BLOCKS)

    def _stationary_covariance(self) -> np.ndarray:
        """P (order 1: [[1]]; order 2: [[1/2, 1/4], [1/4, 1/4]], so that Var y = 1)."""
        return np.array([[1.0]]) if self.order == 1 else np.array([[0.5, 0.25], [0.25, 0.25]])

    def transition(self) -> np.ndarray:
        """Φ = e^{AΔ}: [[a]] or a [[1, 0], [Δ, 1]], a = e^{−Δ}."""
        if self.order == 1:
            return np.array([[self.a]])
        return np.array([[self.a, 0.0], [self.coupling, self.a]])

    def noise_covariance(self) -> np.ndarray:
        """Q = ∫₀^Δ e^{As} B Bᵀ e^{Aᵀs} ds: [[1 − e^{−2Δ}]] (B = √2) or, B = (1, 0), with E = e^{−2Δ},
        [[(1 − E)/2, (1 − E(1 + 2Δ))/4], [., (1 − E(1 + 2Δ + 2Δ²))/4]]."""
        d = self.step
        e = np.exp(-2.0 * d)
        if self.order == 1:
            return np.array([[-np.expm1(-2.0 * d)]])
        q11 = -np.expm1(-2.0 * d) / 2.0
        q12 = (-np.expm1(-2.0 * d) - 2.0 * d * e) / 4.0
        q22 = (-np.expm1(-2.0 * d) - e * (2.0 * d + 2.0 * d * d)) / 4.0
        return np.array([[q11, q12], [q12, q22]])

    def _make_block(self, direction: int, rng: np.random.Generator, start: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Outputs y at the BLOCK_STEPS + 1 nodes of one block and the state at its last node."""
        eps = rng.standard_normal((self.order, BLOCK_STEPS))
        noise = self._chol[direction] @ eps
        # forward: y = x; backward: y = reversed(P⁻¹ x), whose recursion has the same lower-triangular form
        y0 = start if direction > 0 else (np.linalg.solve(self.stationary, start))[::-1]
        y = np.empty((self.order, BLOCK_STEPS + 1))
        y[:, 0] = y0
        y[0, 1:], _ = lfilter([1.0], [1.0, -self.a], noise[0], zi=[self.a * y0[0]])
        if self.order == 2:
            drive = self.coupling * y[0, :-1] + noise[1]
            y[1, 1:], _ = lfilter([1.0], [1.0, -self.a], drive, zi=[self.a * y0[1]])
        x = y if direction > 0 else self.stationary @ y[::-1]
        return self.output @ x, x[:, -1].copy()

    def sample(self, eta: np.ndarray) -> np.ndarray:
        """Unit-variance values at dimensionless distances `eta` (any shape, finite); same shape out."""
        eta = np.asarray(eta, dtype=float)
        if not np.all(np.isfinite(eta)):
            raise ValueError("FormingFilter.sample: eta must be finite")
        return self._series.at(eta.ravel() / self.step).reshape(eta.shape)


class DrydenTurbulence:
    """Dryden turbulence (ENU m/s) at N points, carried by the mean wind (module docstring).

    w20_mps: wind speed at 20 ft setting the intensities; along_en: unit (east, north) vector the mean wind
    blows towards; speed_at(h_m) -> mean wind speed (m/s) at heights h (the advection speed V(h), > 0);
    seed: the SeedSequence of this turbulence (one filter per level and component is spawned from it).
    """

    def __init__(
        self,
        w20_mps: float,
        along_en: np.ndarray,
        speed_at: Callable[[np.ndarray], np.ndarray],
        seed: np.random.SeedSequence,
    ) -> None:
        self.w20_mps = float(w20_mps)
        self.along = np.asarray(along_en, dtype=float)[:2]
        self.across = np.array([-self.along[1], self.along[0]])
        self.level_speed_mps = np.asarray(speed_at(LEVELS_M), dtype=float)
        if np.any(self.level_speed_mps <= 0.0):
            raise ValueError("DrydenTurbulence: the mean wind must blow (V > 0) to carry the turbulence")
        self.level_lengths_m, _ = low_altitude_scales(LEVELS_M, self.w20_mps)
        self._entropy, self._spawn_key = seed.entropy, tuple(seed.spawn_key)
        self._filters: dict[tuple[int, int], FormingFilter] = {}

    def _filter(self, level: int, component: int) -> FormingFilter:
        key = (level, component)
        if key not in self._filters:  # built on first use; its draws depend only on (seed, level, component)
            seed = np.random.SeedSequence(entropy=self._entropy, spawn_key=(*self._spawn_key, level, component))
            self._filters[key] = FormingFilter(1 if component == 0 else 2, seed)
        return self._filters[key]

    def unit_components(self, t_s: float, along_m: np.ndarray, height_m: np.ndarray) -> np.ndarray:
        """Unit-variance (3, N) u, v, w of points `along_m` (N,) m downwind of the origin at heights (N,) m."""
        h = np.clip(height_m, LEVELS_M[0], LEVELS_M[-1])
        position = np.log(h / LEVEL_BASE_M) / np.log(LEVEL_RATIO)
        lower = np.minimum(np.floor(position).astype(np.int64), LEVELS_M.size - 2)
        frac = position - lower
        weights = (np.cos(0.5 * np.pi * frac), np.sin(0.5 * np.pi * frac))
        out = np.zeros((3, h.size))
        for shift, weight in ((0, weights[0]), (1, weights[1])):
            levels = lower + shift
            for level in np.unique(levels[weight > 0.0]):
                sel = (levels == level) & (weight > 0.0)
                xi = self.level_speed_mps[level] * t_s - along_m[sel]
                for c in range(3):
                    eta = xi / self.level_lengths_m[c, level]
                    out[c, sel] += weight[sel] * self._filter(int(level), c).sample(eta)
        return out

    def velocity_enu(self, t_s: float, points_enu: np.ndarray) -> np.ndarray:
        """Turbulent velocity (N, 3) m/s ENU at points (N, 3) ENU m at sim time t_s; heights below 10 m take the
        10 m turbulence (the reference height of surface vessels' wind)."""
        points = np.asarray(points_enu, dtype=float).reshape(-1, 3)
        height = np.maximum(points[:, 2], LEVEL_BASE_M)
        _, sigma = low_altitude_scales(height, self.w20_mps)
        uvw = sigma * self.unit_components(t_s, points[:, :2] @ self.along, height)
        out = np.empty((points.shape[0], 3))
        out[:, :2] = uvw[0][:, None] * self.along + uvw[1][:, None] * self.across
        out[:, 2] = uvw[2]
        return out
