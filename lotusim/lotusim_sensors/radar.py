"""Marine radar: a polar B-scan and a plan-position image (PPI) from the ray returns of a 360° fan (ROS-free).

Image formation, per radar (batched over radars with a leading axis):
1. Rays: a level fan of `n_azimuth` rays (one per azimuth bin, at its centre) at each of `heights` above the sea;
   azimuth = relative bearing, clockwise from the bow (marine convention), in the radar's horizontal plane.
2. Strength of each ray hit: the radar equation for a point scatterer, P = ρ cos(i) (1 m / r)⁴ [Skolnik2001]
   (ρ the hit's reflectivity, i the incidence angle, r the range in m), summed into its (azimuth, range) cell.
3. Point spread function (PSF): a separable Gaussian in polar coordinates, full width at half maximum (FWHM) the
   horizontal beam width θ_B in azimuth and the range resolution c τ / 2 in range (τ pulse length). A constant
   angular width is a cross-range width r θ_B that grows linearly with range: the property of ASVSim's radar
   PSF [Lesy2025], whose blobs' half-axes grow in proportion to range, 3x longer across the line of sight.
4. Sea clutter (optional): the constant-γ model [Skolnik2001] σ0 = γ sin ψ (ψ grazing angle, atan(h / r) for an
   antenna h above the sea), γ proportional to the significant wave height Hs (project choice: no clutter in a
   calm sea), over the cell area r θ_B c τ / 2, through the same r⁻⁴ law; each cell's power exponentially
   distributed (Rayleigh amplitude, speckle), drawn from a seeded generator. With the clutter off, every cell
   without a return is exactly 0.
5. Log gain: intensity I = clip((10 log10 P + gain_db) / dynamic_range_db, 0, 1), P = 0 -> I = 0.
6. PPI: a square Cartesian image, radar at the centre, head-up (image up = bow, right = starboard), pixel size
   2 r_max / size, each pixel the B-scan cell of its (range, bearing) (nearest).

Frames: the radar's horizontal frame (bow along body +x projected on the horizontal, yaw only: the antenna
turns in the horizontal plane; roll and pitch are ignored). Units: m, rad; B-scan rows = azimuth bins (row k at
bearing k 2π / n_azimuth, clockwise from the bow), columns = range bins (column j covers [j, j+1) Δr, Δr =
max_range / n_range).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy.ndimage import gaussian_filter1d

C_MPS = 299_792_458.0  # speed of light
FWHM_PER_SIGMA = 2.0 * np.sqrt(2.0 * np.log(2.0))  # 2.3548: FWHM of a Gaussian of unit standard deviation
PSF_TRUNCATE = 4.0  # the PSF's kernels end at 4 sigma (beyond: exactly 0)


@dataclass(frozen=True)
class RadarGeometry:
    """Bins and beam of one radar: n_azimuth bins over 360°, n_range bins over [0, max_range_m], horizontal
    beam width (rad, FWHM of the azimuth PSF), pulse length (s, range PSF FWHM c τ / 2), PPI size (px)."""

    n_azimuth: int
    n_range: int
    max_range_m: float
    beamwidth_rad: float
    pulse_length_s: float
    ppi_size_px: int

    @property
    def range_bin_m(self) -> float:
        return self.max_range_m / self.n_range

    @property
    def azimuth_bin_rad(self) -> float:
        return 2.0 * np.pi / self.n_azimuth

    @property
    def range_resolution_m(self) -> float:
        """c τ / 2: the range PSF's FWHM (m)."""
        return C_MPS * self.pulse_length_s / 2.0

    @property
    def ppi_pixel_m(self) -> float:
        return 2.0 * self.max_range_m / self.ppi_size_px


def geometry_of(p: dict[str, float]) -> RadarGeometry:
    """The RadarGeometry of one radar's parsed parameters (lotusim_sensors.suite, kind `radar`)."""
    return RadarGeometry(int(p["n_azimuth"]), int(p["n_range"]), float(p["max_range_m"]),
                         float(np.radians(p["beamwidth_deg"])), float(p["pulse_length_s"]),
                         int(p["ppi_size_px"]))  # fmt: skip


def bearings_rad(g: RadarGeometry) -> np.ndarray:
    """(n_azimuth,) the bins' centre bearings, clockwise from the bow (rad)."""
    return np.arange(g.n_azimuth) * g.azimuth_bin_rad


def fan_directions(g: RadarGeometry, yaw_enu_rad: np.ndarray) -> np.ndarray:
    """(V, n_azimuth, 3) unit ray directions (map ENU, level) of V radars whose bows point at ENU yaw (rad, CCW
    from east): bearing b clockwise from the bow is ENU yaw − b."""
    angle = np.asarray(yaw_enu_rad, dtype=float)[:, None] - bearings_rad(g)[None, :]
    return np.stack([np.cos(angle), np.sin(angle), np.zeros_like(angle)], axis=-1)


def return_power(range_m: np.ndarray, reflectivity: np.ndarray, cos_incidence: np.ndarray) -> np.ndarray:
    """P = ρ |cos i| (1 m / r)⁴ per ray hit [Skolnik2001] (linear, relative to a unit scatterer at 1 m); 0 where
    nothing was hit (r = inf or r <= 0)."""
    r = np.asarray(range_m, dtype=float)
    hit = np.isfinite(r) & (r > 0.0)
    safe = np.where(hit, r, 1.0)
    return np.where(hit, np.asarray(reflectivity) * np.abs(cos_incidence) / safe**4, 0.0)


def bin_returns(g: RadarGeometry, n_radars: int, radar: np.ndarray, azimuth_bin: np.ndarray, range_m: np.ndarray,
                power: np.ndarray) -> np.ndarray:  # fmt: skip
    """(V, n_azimuth, n_range) summed power of the hits (radar index, azimuth bin, range, power); hits beyond
    max range or without power are dropped."""
    r = np.asarray(range_m, dtype=float)
    keep = np.isfinite(r) & (r < g.max_range_m) & (power > 0.0)
    col = (r[keep] / g.range_bin_m).astype(np.int64)
    flat = (np.asarray(radar)[keep] * g.n_azimuth + np.asarray(azimuth_bin)[keep]) * g.n_range + col
    cells = n_radars * g.n_azimuth * g.n_range
    return np.bincount(flat, weights=power[keep], minlength=cells).reshape(n_radars, g.n_azimuth, g.n_range)


def psf_sigmas_bins(g: RadarGeometry) -> tuple[float, float]:
    """(σ azimuth, σ range) of the PSF in bins: FWHM θ_B and c τ / 2 divided by 2.3548."""
    return (g.beamwidth_rad / FWHM_PER_SIGMA / g.azimuth_bin_rad,
            g.range_resolution_m / FWHM_PER_SIGMA / g.range_bin_m)  # fmt: skip


def apply_psf(g: RadarGeometry, polar: np.ndarray) -> np.ndarray:
    """The PSF over the last two axes (azimuth: wraps around 360°; range: zero outside), normalised kernels (the
    total power is kept)."""
    s_az, s_r = psf_sigmas_bins(g)
    out = gaussian_filter1d(polar, s_az, axis=-2, mode="wrap", truncate=PSF_TRUNCATE) if s_az > 0 else polar
    return gaussian_filter1d(out, s_r, axis=-1, mode="constant", truncate=PSF_TRUNCATE) if s_r > 0 else out


def gaussian_kernel(sigma_bins: float) -> tuple[np.ndarray, np.ndarray]:
    """(offsets (K,), weights (K,) summing to 1) of the discrete Gaussian of σ bins out to ⌊4 σ + 0.5⌋ bins (the
    kernel of scipy.ndimage.gaussian_filter1d with truncate 4); σ <= 0: the identity."""
    if sigma_bins <= 0.0:
        return np.zeros(1, dtype=np.int64), np.ones(1)
    radius = int(PSF_TRUNCATE * sigma_bins + 0.5)
    offsets = np.arange(-radius, radius + 1)
    weights = np.exp(-0.5 * (offsets / sigma_bins) ** 2)
    return offsets, weights / weights.sum()


def spread_returns(g: RadarGeometry, n_radars: int, radar: np.ndarray, azimuth_bin: np.ndarray,
                   range_m: np.ndarray, power: np.ndarray) -> np.ndarray:  # fmt: skip
    """apply_psf(bin_returns(...)) computed hit by hit: each hit's power spread over its cell's neighbours by the
    separable PSF kernels (azimuth wrapping, range cut at the image's ends), summed with one bincount; cheaper
    than filtering the whole grid when the hits are few against the cells (720 rays against 184,320 cells)."""
    r = np.asarray(range_m, dtype=float)
    keep = np.isfinite(r) & (r < g.max_range_m) & (power > 0.0)
    col = (r[keep] / g.range_bin_m).astype(np.int64)
    row = np.asarray(radar)[keep] * g.n_azimuth
    s_az, s_r = psf_sigmas_bins(g)
    (o_az, w_az), (o_r, w_r) = gaussian_kernel(s_az), gaussian_kernel(s_r)
    az = (np.asarray(azimuth_bin)[keep][:, None] + o_az[None, :]) % g.n_azimuth  # (H, Ka)
    rc = col[:, None] + o_r[None, :]  # (H, Kr)
    flat = ((row[:, None] + az)[:, :, None] * g.n_range + rc[:, None, :]).reshape(len(col), -1)
    weight = (power[keep][:, None, None] * w_az[None, :, None] * w_r[None, None, :]).reshape(len(col), -1)
    inside = np.broadcast_to(((rc >= 0) & (rc < g.n_range))[:, None, :], (len(col), len(o_az), len(o_r)))
    inside = inside.reshape(len(col), -1)
    cells = n_radars * g.n_azimuth * g.n_range
    total = np.bincount(flat[inside], weights=weight[inside], minlength=cells)
    return total.reshape(n_radars, g.n_azimuth, g.n_range)


def clutter_mean_power(g: RadarGeometry, hs_m: float, antenna_height_m: float, gamma_per_m: float) -> np.ndarray:
    """(n_range,) mean sea-clutter power per cell: γ = gamma_per_m Hs, σ0 = γ sin ψ, ψ = atan(h / r), area r θ_B
    c τ / 2, P = σ0 A (1 m / r)⁴ [Skolnik2001]; 0 in a calm sea or with the antenna at or below the surface."""
    r = (np.arange(g.n_range) + 0.5) * g.range_bin_m
    gamma = gamma_per_m * max(hs_m, 0.0)
    if gamma <= 0.0 or antenna_height_m <= 0.0:
        return np.zeros(g.n_range)
    sigma0 = gamma * np.sin(np.arctan2(antenna_height_m, r))
    area = r * g.beamwidth_rad * g.range_resolution_m
    return sigma0 * area / r**4


def sea_clutter(g: RadarGeometry, mean_power: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """(n_azimuth, n_range) clutter power: mean per range bin times an exponential draw per cell (speckle)."""
    if not np.any(mean_power > 0.0):
        return np.zeros((g.n_azimuth, g.n_range))
    draws = rng.standard_exponential((g.n_azimuth, g.n_range), dtype=np.float32)
    draws *= mean_power[None, :].astype(np.float32)
    return draws


def log_gain(power: np.ndarray, gain_db: float, dynamic_range_db: float) -> np.ndarray:
    """I = clip((10 log10 P + gain) / dynamic range, 0, 1) in float32; P <= 0 gives 0."""
    with np.errstate(divide="ignore"):
        db = np.log10(np.maximum(power, 0.0).astype(np.float32))
    db *= np.float32(10.0 / dynamic_range_db)
    db += np.float32(gain_db / dynamic_range_db)
    return np.clip(db, 0.0, 1.0, out=db)


@lru_cache(maxsize=16)
def ppi_lookup(g: RadarGeometry) -> tuple[np.ndarray, np.ndarray]:
    """(flat B-scan cell of each PPI pixel (size², int), inside max range (size², bool)); head-up, radar at the
    centre of the image, pixel (row, col) centre at forward = (size/2 − row − 0.5) s, starboard = (col + 0.5 −
    size/2) s, s the pixel size."""
    n, s = g.ppi_size_px, g.ppi_pixel_m
    centre = (np.arange(n) + 0.5 - n / 2.0) * s
    forward, starboard = -centre[:, None], centre[None, :]
    r = np.hypot(forward, starboard)
    bearing = np.mod(np.arctan2(starboard, forward), 2.0 * np.pi)  # clockwise from the bow
    az = np.rint(bearing / g.azimuth_bin_rad).astype(np.int64) % g.n_azimuth
    col = np.minimum((r / g.range_bin_m).astype(np.int64), g.n_range - 1)
    inside = r < g.max_range_m
    return (az * g.n_range + col).ravel(), inside.ravel()


def ppi(g: RadarGeometry, polar: np.ndarray) -> np.ndarray:
    """(..., size, size) PPI of (..., n_azimuth, n_range) polar images (0 outside max range; the polar dtype)."""
    cells, inside = ppi_lookup(g)
    flat = polar.reshape(*polar.shape[:-2], -1)
    image = np.where(inside, flat[..., cells], np.zeros((), polar.dtype))
    return image.reshape(*polar.shape[:-2], g.ppi_size_px, g.ppi_size_px)
