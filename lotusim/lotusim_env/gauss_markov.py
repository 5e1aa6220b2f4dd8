"""First-order Gauss–Markov (Ornstein–Uhlenbeck) processes and the Gauss–Markov current, as pure functions of
(seed, sim time).

Process (Fossen 2021, Handbook of Marine Craft Hydrodynamics and Motion Control, 2nd ed., §10.3, current model
V̇_c + μ V_c = w, here in its continuous Ornstein–Uhlenbeck form):

    dx = −μ (x − m) dt + σ dW                                   (mean m, reversion rate μ [1/s], σ [unit/√s])

stationary mean m, variance σ²/(2μ), autocorrelation e^{−μ|τ|}. Exact discretisation on the grid t_k = k h:

    x_{k+1} = m + a (x_k − m) + s ε_k,   a = e^{−μh},   s = σ √((1 − a²)/(2μ))   (s = σ√h when μ = 0)

with ε_k ~ N(0, 1). This fixes the UUV Simulator process (GaussMarkovProcess.cc [UUVSimulator2020]), which adds
uniform noise without √dt scaling, decays towards 0 instead of the mean, and is seeded from the wall clock.

Why it is a pure function of (seed, t) — the design choice the environment needs (every node evaluating the
process at sim time t gets the same value, whatever order or times it asked before):
- the grid is fixed (t_k = k h, h = `time_step_s`) and the noise of grid block j (BLOCK_STEPS steps) comes from
  its own counter-based stream SeedSequence(seed, process name, direction, j), so the noise never depends on
  which times were queried before;
- the state at the start of block j is obtained by running the exact recursion over blocks 0..j−1 (memoised:
  one state vector per block), so x_k is the same number however it is reached;
- x_0 is drawn from the stationary law N(m, σ²/(2μ)) (or set to m, `initial: mean`); negative times use a second,
  independent recursion backwards from x_0. A stationary OU process is time-reversible, so the two halves
  together are exactly a stationary OU process on the whole time line (needed by the wind's spatial phase);
- between grid nodes the value is interpolated linearly (variance at mid-step (1 + a)/2 of the stationary one,
  0.05 % low for μh = 10⁻³).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.signal import lfilter

from lotusim_env import block_series
from lotusim_env.block_series import BLOCK_STEPS
from lotusim_env.config import ConfigError, check_keys, get_choice, get_float, section

_CACHED_BLOCKS = 16  # full blocks kept in memory (the state at each block start is always kept)


class OrnsteinUhlenbeck:
    """D independent OU processes, exactly discretised on t_k = k h and seeded per grid block (see module doc)."""

    def __init__(
        self,
        mean: np.ndarray,
        mu_per_s: np.ndarray,
        sigma: np.ndarray,
        time_step_s: float,
        seed: np.random.SeedSequence,
        initial: str = "stationary",
    ) -> None:
        self.mean = np.atleast_1d(np.asarray(mean, dtype=float))
        self.mu_per_s = np.broadcast_to(np.asarray(mu_per_s, dtype=float), self.mean.shape).copy()
        self.sigma = np.broadcast_to(np.asarray(sigma, dtype=float), self.mean.shape).copy()
        if np.any(self.mu_per_s < 0) or np.any(self.sigma < 0) or not time_step_s > 0:
            raise ValueError("OrnsteinUhlenbeck: mu >= 0, sigma >= 0 and time_step_s > 0 are required")
        self.time_step_s = float(time_step_s)
        self.a = np.exp(-self.mu_per_s * self.time_step_s)
        with np.errstate(divide="ignore", invalid="ignore"):
            exact = self.sigma * np.sqrt((1.0 - self.a**2) / (2.0 * self.mu_per_s))
        self.s = np.where(self.mu_per_s > 0, exact, self.sigma * np.sqrt(self.time_step_s))
        start = np.zeros_like(self.mean)
        if initial == "stationary":
            draw = np.random.default_rng(block_series.stream(seed, 0, 0)).standard_normal(self.mean.shape)
            start = self.stationary_std() * draw
        elif initial != "mean":
            raise ValueError(f"OrnsteinUhlenbeck: initial must be 'stationary' or 'mean', got {initial!r}")
        # the deviations x − m, forward and backward from x_0 (the reversed recursion is the same: time-reversible)
        self._series = block_series.BlockSeries(seed, start, self._make_block, self.mean.shape, _CACHED_BLOCKS)

    def stationary_std(self) -> np.ndarray:
        """σ/√(2μ) per component (0 where μ = 0: a random walk has no stationary law)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(self.mu_per_s > 0, self.sigma / np.sqrt(2.0 * self.mu_per_s), 0.0)

    def _make_block(self, direction: int, rng: np.random.Generator, start: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Deviations at the BLOCK_STEPS + 1 grid nodes of one block, from the deviation at its first node."""
        noise = rng.standard_normal((self.mean.size, BLOCK_STEPS))
        out = np.empty((self.mean.size, BLOCK_STEPS + 1))
        out[:, 0] = start
        pairs = np.stack([self.a, self.s], axis=1)
        for a, s in np.unique(pairs, axis=0):  # y_{n+1} = a y_n + s ε_n, one filter call per distinct (a, s)
            rows = np.flatnonzero(np.all(pairs == (a, s), axis=1))
            out[rows, 1:], _ = lfilter([s], [1.0, -a], noise[rows], axis=1, zi=(a * start[rows])[:, None])
        return out, out[:, -1].copy()

    def sample(self, t_s: float | np.ndarray) -> np.ndarray:
        """Process values at sim times t_s (s): array (len(t_s), D); the same numbers whatever the call order."""
        t = np.atleast_1d(np.asarray(t_s, dtype=float))
        if not np.all(np.isfinite(t)):
            raise ValueError("OrnsteinUhlenbeck.sample: times must be finite")
        if t.size == 1:  # the per-step call of a node: same arithmetic, without the sorting
            return (self.mean + self._series.at_one(float(t[0]) / self.time_step_s))[None, :]
        return self.mean + self._series.at(t / self.time_step_s).T


@dataclass(frozen=True)
class ProcessSpec:
    """One scalar Gauss–Markov process of the configuration: mean, μ (1/s), σ (unit/√s), bounds."""

    mean: float = 0.0
    mu_per_s: float = 0.0
    sigma: float = 0.0
    minimum: float = -np.inf
    maximum: float = np.inf


PROCESS_KEYS = ("mean", "mu", "sigma", "stationary_std", "min", "max")


def parse_process(config: Any, key: str, default_min: float = -np.inf) -> ProcessSpec:
    """Parse {mean, mu, sigma | stationary_std, min, max}; stationary_std = σ/√(2μ) is the friendlier input."""
    cfg = section(config, key)
    check_keys(cfg, PROCESS_KEYS, key)
    mean = get_float(cfg, "mean", key, 0.0)
    mu = get_float(cfg, "mu", key, 0.0, minimum=0.0)
    if "sigma" in cfg and "stationary_std" in cfg:
        raise ConfigError(f"{key}: give sigma or stationary_std, not both")
    if "stationary_std" in cfg:
        std = get_float(cfg, "stationary_std", key, minimum=0.0)
        if std > 0 and mu <= 0:
            raise ConfigError(f"{key}.stationary_std: needs mu > 0 (a random walk, mu = 0, has no stationary std)")
        sigma = std * np.sqrt(2.0 * mu)
    else:
        sigma = get_float(cfg, "sigma", key, 0.0, minimum=0.0)
    lo = get_float(cfg, "min", key, default_min) if "min" in cfg else default_min
    hi = get_float(cfg, "max", key, np.inf) if "max" in cfg else np.inf
    if not lo <= mean <= hi:
        raise ConfigError(f"{key}: expected min <= mean <= max, got min {lo:g}, mean {mean:g}, max {hi:g}")
    return ProcessSpec(mean, mu, sigma, lo, hi)


class GaussMarkovCurrent:
    """Spatially uniform current whose components follow bounded Gauss–Markov processes (ENU, m/s).

    mode "components": east, north, up are three processes. mode "polar" (UUV Simulator's
    UnderwaterCurrentPlugin): speed V, direction χ (towards, degrees clockwise from north, the oceanographic
    convention) and elevation γ (degrees up from horizontal) are three processes and
    v_enu = V (cos γ sin χ, cos γ cos χ, sin γ).
    Bounds saturate the reported value (min/max of each process); the underlying OU state is not clipped, so the
    statistics inside the bounds are the analytic ones.
    """

    def __init__(self, mode: str, specs: list[ProcessSpec], process: OrnsteinUhlenbeck) -> None:
        self.mode = mode
        self.specs = specs
        self.process = process
        self._lo = np.array([s.minimum for s in specs])
        self._hi = np.array([s.maximum for s in specs])

    def values(self, t_s: float | np.ndarray) -> np.ndarray:
        """The three bounded process values at times t_s: (len(t_s), 3) (units of the configured processes)."""
        return np.clip(self.process.sample(t_s), self._lo, self._hi)

    def velocity_enu(self, t_s: float, points_enu: np.ndarray) -> np.ndarray:
        """Current (N x 3, m/s, ENU) at N points (ENU m) at sim time t_s (s); uniform in space."""
        n = np.asarray(points_enu, dtype=float).reshape(-1, 3).shape[0]
        p = self.values(t_s)[0]
        if self.mode == "polar":
            speed, chi, gamma = p[0], np.radians(p[1]), np.radians(p[2])
            p = speed * np.array([np.cos(gamma) * np.sin(chi), np.cos(gamma) * np.cos(chi), np.sin(gamma)])
        return np.broadcast_to(p, (n, 3)).copy()


GM_KEYS = (
    "model",
    "mode",
    "time_step_s",
    "initial",
    "seed",
    "east",
    "north",
    "up",
    "speed",
    "direction_deg",
    "elevation_deg",
)


def build_gauss_markov(config: Mapping[str, Any], key: str, seed: np.random.SeedSequence) -> GaussMarkovCurrent:
    """GaussMarkovCurrent from its configuration section (docs/environment.md, 'gauss_markov')."""
    check_keys(config, GM_KEYS, key)
    mode = get_choice(config, "mode", key, ("components", "polar"), "components")
    names = ("east", "north", "up") if mode == "components" else ("speed", "direction_deg", "elevation_deg")
    other = {"components": ("speed", "direction_deg", "elevation_deg"), "polar": ("east", "north", "up")}[mode]
    for name in other:
        if name in config:
            raise ConfigError(f"{key}.{name}: not a process of mode {mode!r} (its processes: {', '.join(names)})")
    specs = [parse_process(config.get(name), f"{key}.{name}", 0.0 if name == "speed" else -np.inf) for name in names]
    process = OrnsteinUhlenbeck(
        mean=np.array([s.mean for s in specs]),
        mu_per_s=np.array([s.mu_per_s for s in specs]),
        sigma=np.array([s.sigma for s in specs]),
        time_step_s=get_float(config, "time_step_s", key, 1.0, minimum=0.0, strict_minimum=True),
        seed=seed,
        initial=get_choice(config, "initial", key, ("stationary", "mean"), "stationary"),
    )
    return GaussMarkovCurrent(mode, specs, process)
