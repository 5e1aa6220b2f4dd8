"""Forward-looking imaging sonar: OceanSim's intensity, binning and noise (Eqs. 2–6 of [Song2025]) over ray hits
(ROS-free, batched over sonars).

1. Rays: `n_beams` beams across the horizontal field of view, `n_elevation` rays per beam across the vertical
   one, in the sonar frame (x forward, y left, z up: the body's axes pitched down by `tilt_deg`).
2. Intensity of each ray hit, Eq. 2 (after [DeMarco2015]): I = A_r (−v̂·n̂) e^{−α d}, A_r the hit's
   reflectivity, v̂ the ray direction, n̂ the surface normal, α the attenuation (1/m), d the range (m).
3. Binning by (range bin, beam): the sum (OceanSim's default) or the mean of the hits' intensities.
4. Noise (optional), Eqs. 3–6: additive w̃ = (r²/r_max²)(1 + 0.5 e^{−φ²/σ_φ} w_sa), w_sa Rayleigh(σ_sa);
   multiplicative Ĩ = I (0.5 + w_sm) + w̃, w_sm ~ N(0, σ_sm); r, φ the bin's centre range and beam azimuth (rad).
5. Range normalisation (optional): each range row divided by its largest value over the beams (the rows with
   returns then peak at 1), as OceanSim normalises range-wise after collapsing to the polar grid.

Polar image: rows = range bins (row 0 nearest, bin i covers [r_min + i Δr, r_min + (i+1) Δr)), columns = beams
(column 0 the port-most: beam j centred at azimuth φ_j = hfov/2 − (j + 0.5) hfov / n_beams, positive to port).
Fan image: the sector in Cartesian pixels, the sonar at the bottom centre, forward up, starboard right.
Defaults (lotusim_sensors.suite): the Oculus M750d's 130° × 20° field of view [Song2025] sec. III-A.2.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np


@dataclass(frozen=True)
class SonarGeometry:
    """Bins and field of view of one sonar (angles in rad, ranges in m, fan image height in px)."""

    n_beams: int
    n_bins: int
    n_elevation: int
    min_range_m: float
    max_range_m: float
    hfov_rad: float
    vfov_rad: float
    tilt_rad: float
    fan_height_px: int

    @property
    def range_bin_m(self) -> float:
        return (self.max_range_m - self.min_range_m) / self.n_bins

    @property
    def beam_width_rad(self) -> float:
        return self.hfov_rad / self.n_beams

    @property
    def fan_width_px(self) -> int:
        return int(np.ceil(2.0 * self.fan_height_px * np.sin(min(self.hfov_rad / 2.0, np.pi / 2.0))))


def geometry_of(p: dict[str, float]) -> SonarGeometry:
    """The SonarGeometry of one sonar's parsed parameters (lotusim_sensors.suite, kind `sonar`)."""
    return SonarGeometry(int(p["n_beams"]), int(p["n_bins"]), int(p["n_elevation"]), float(p["min_range_m"]),
                         float(p["max_range_m"]), float(np.radians(p["hfov_deg"])), float(np.radians(p["vfov_deg"])),
                         float(np.radians(p["tilt_deg"])), int(p["fan_height_px"]))  # fmt: skip


def beam_azimuths_rad(g: SonarGeometry) -> np.ndarray:
    """(n_beams,) beam centre azimuths, positive to port, column order."""
    return g.hfov_rad / 2.0 - (np.arange(g.n_beams) + 0.5) * g.beam_width_rad


def bin_ranges_m(g: SonarGeometry) -> np.ndarray:
    """(n_bins,) range bin centres (m)."""
    return g.min_range_m + (np.arange(g.n_bins) + 0.5) * g.range_bin_m


@lru_cache(maxsize=16)
def ray_fan(g: SonarGeometry) -> tuple[np.ndarray, np.ndarray]:
    """(unit directions (n_beams n_elevation, 3) in body FLU axes, beam of each ray); elevation θ_k = −vfov/2 +
    (k + 0.5) vfov / n_elevation, then the whole fan pitched down by the tilt (rotation about body y)."""
    phi = beam_azimuths_rad(g)[:, None]
    theta = (-g.vfov_rad / 2.0 + (np.arange(g.n_elevation) + 0.5) * g.vfov_rad / g.n_elevation)[None, :]
    x, y, z = np.cos(theta) * np.cos(phi), np.cos(theta) * np.sin(phi), np.sin(theta) * np.ones_like(phi)
    c, s = np.cos(g.tilt_rad), np.sin(g.tilt_rad)
    dirs = np.stack([c * x + s * z, y, -s * x + c * z], axis=-1).reshape(-1, 3)
    beams = np.repeat(np.arange(g.n_beams), g.n_elevation)
    dirs.setflags(write=False)
    beams.setflags(write=False)
    return dirs, beams


def intensity(range_m: np.ndarray, reflectivity: np.ndarray, cos_incidence: np.ndarray, alpha_per_m: float
              ) -> np.ndarray:  # fmt: skip
    """Eq. 2 of [Song2025]: A_r (−v̂·n̂) e^{−α d} per hit; `cos_incidence` = −v̂·n̂ (negative: a back face, 0);
    0 where nothing was hit."""
    r = np.asarray(range_m, dtype=float)
    hit = np.isfinite(r)
    value = np.asarray(reflectivity) * np.maximum(cos_incidence, 0.0) * np.exp(-alpha_per_m * np.where(hit, r, 0.0))
    return np.where(hit, value, 0.0)


def bin_hits(g: SonarGeometry, n_sonars: int, sonar: np.ndarray, beam: np.ndarray, range_m: np.ndarray,
             value: np.ndarray, mean: bool) -> np.ndarray:  # fmt: skip
    """(S, n_bins, n_beams) sum (or mean) of the hits' intensities per (range bin, beam); hits outside [r_min,
    r_max) are dropped, empty bins are 0."""
    r = np.asarray(range_m, dtype=float)
    keep = np.isfinite(r) & (r >= g.min_range_m) & (r < g.max_range_m)
    row = ((r[keep] - g.min_range_m) / g.range_bin_m).astype(np.int64)
    flat = (np.asarray(sonar)[keep] * g.n_bins + row) * g.n_beams + np.asarray(beam)[keep]
    cells = n_sonars * g.n_bins * g.n_beams
    total = np.bincount(flat, weights=value[keep], minlength=cells)
    if mean:
        count = np.bincount(flat, minlength=cells)
        total = np.divide(total, count, out=np.zeros(cells), where=count > 0)
    return total.reshape(n_sonars, g.n_bins, g.n_beams)


def speckle(g: SonarGeometry, image: np.ndarray, rng: np.random.Generator, sigma_mult: float, sigma_add: float,
            sigma_phi_rad2: float) -> np.ndarray:  # fmt: skip
    """Eqs. 3–6 of [Song2025] on one (n_bins, n_beams) binned image: Ĩ = I (0.5 + w_sm) + (r²/r_max²)(1 +
    0.5 e^{−φ²/σ_φ} w_sa), w_sm ~ N(0, σ_sm), w_sa ~ Rayleigh(σ_sa) = σ_sa √(2 E), E ~ Exp(1); float32 draws from
    `rng`: w_sa for every bin, w_sm only for the bins with I ≠ 0 (elsewhere I w_sm = 0), in row-major order."""
    range_gain, beam_gain = _noise_gains(g, sigma_phi_rad2)
    w_sa = rng.standard_exponential(image.shape, dtype=np.float32)
    w_sa *= np.float32(2.0)
    np.sqrt(w_sa, out=w_sa)
    w_sa *= beam_gain * np.float32(sigma_add)
    w_sa += np.float32(1.0)
    w_sa *= range_gain
    lit = np.flatnonzero(image)
    flat = w_sa.reshape(-1)
    w_sm = rng.standard_normal(lit.size, dtype=np.float32) * np.float32(sigma_mult) + np.float32(0.5)
    flat[lit] += image.reshape(-1)[lit] * w_sm
    return w_sa


@lru_cache(maxsize=16)
def _noise_gains(g: SonarGeometry, sigma_phi_rad2: float) -> tuple[np.ndarray, np.ndarray]:
    """(r²/r_max² (n_bins, 1), 0.5 e^{−φ²/σ_φ} (1, n_beams)) of Eq. 3, float32 (σ_φ <= 0: no beam term)."""
    r = bin_ranges_m(g)[:, None]
    phi = beam_azimuths_rad(g)[None, :]
    beam = 0.5 * np.exp(-(phi**2) / sigma_phi_rad2) if sigma_phi_rad2 > 0 else np.zeros_like(phi)
    return (r**2 / g.max_range_m**2).astype(np.float32), beam.astype(np.float32)


def normalise_ranges(image: np.ndarray) -> np.ndarray:
    """Each range row (axis −2 = range, −1 = beam) divided by its largest value over the beams; rows whose
    largest value is not positive are left as they are."""
    peak = image.max(axis=-1, keepdims=True)
    return np.divide(image, peak, out=image.copy(), where=peak > 0)


@lru_cache(maxsize=16)
def fan_lookup(g: SonarGeometry) -> tuple[np.ndarray, np.ndarray]:
    """(flat polar cell of each fan pixel (H W, int), inside the sector (H W, bool)). Pixel size s = r_max / H;
    pixel (row, col) centre at forward = (H − row − 0.5) s, starboard = (col + 0.5 − W / 2) s."""
    h, w = g.fan_height_px, g.fan_width_px
    s = g.max_range_m / h
    forward = ((h - np.arange(h) - 0.5) * s)[:, None]
    starboard = ((np.arange(w) + 0.5 - w / 2.0) * s)[None, :]
    r = np.hypot(forward, starboard)
    phi = np.arctan2(-starboard, forward)  # positive to port
    beam = np.floor((g.hfov_rad / 2.0 - phi) / g.beam_width_rad).astype(np.int64)
    row = np.floor((r - g.min_range_m) / g.range_bin_m).astype(np.int64)
    inside = (beam >= 0) & (beam < g.n_beams) & (row >= 0) & (row < g.n_bins)
    cells = np.where(inside, row * g.n_beams + beam, 0)
    return cells.ravel(), inside.ravel()


def fan(g: SonarGeometry, polar: np.ndarray) -> np.ndarray:
    """(..., H, W) fan images of (..., n_bins, n_beams) polar images (0 outside the sector)."""
    cells, inside = fan_lookup(g)
    flat = polar.reshape(*polar.shape[:-2], -1)
    image = np.where(inside, flat[..., cells], 0.0)
    return image.reshape(*polar.shape[:-2], g.fan_height_px, g.fan_width_px)
