"""Underwater camera: OceanSim's image formation model (Eq. 1 of [Song2025]) on a ray-cast image (ROS-free).

A pinhole camera casts one ray through each pixel centre; the hit gives the range d (m) and the albedo J (RGB in
[0, 1], the in-air colour). Under water each channel c ∈ {R, G, B} is, Eq. 1 of [Song2025]:

    I_c = J_c e^{−β_attn,c d} + B∞,c (1 − e^{−β_bs,c d}),

β_attn the attenuation (1/m), β_bs the backscatter coefficient (1/m), B∞ the veiling light. A ray that hits
nothing looks into open water (d → ∞): I_c = B∞,c. Above water (the camera's centre at z >= 0) there is no
water column: a hit shows its albedo, no hit the sky colour.

Camera frame: the body's axes (x forward, y left, z up) pitched down by `tilt_deg`; the optical axes (REP 103
`_optical`: z forward, x right, y down) are derived from it. Intrinsics: square pixels, fx = fy = (W / 2) /
tan(hfov / 2), principal point at the image centre ((W − 1) / 2, (H − 1) / 2), no distortion.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

RGB = ("r", "g", "b")


@dataclass(frozen=True)
class CameraGeometry:
    """Image size (px), horizontal field of view and downward tilt (rad)."""

    width_px: int
    height_px: int
    hfov_rad: float
    tilt_rad: float

    @property
    def focal_px(self) -> float:
        return (self.width_px / 2.0) / np.tan(self.hfov_rad / 2.0)

    @property
    def principal_point_px(self) -> tuple[float, float]:
        return (self.width_px - 1) / 2.0, (self.height_px - 1) / 2.0

    def k_matrix(self) -> list[float]:
        """Row-major 3 x 3 intrinsic matrix K (sensor_msgs/CameraInfo.k)."""
        f, (cx, cy) = self.focal_px, self.principal_point_px
        return [f, 0.0, cx, 0.0, f, cy, 0.0, 0.0, 1.0]


@dataclass(frozen=True)
class Water:
    """Per-channel (3,) coefficients of Eq. 1: β_attn (1/m), β_bs (1/m), B∞ (in [0, 1]); sky colour above water."""

    attenuation_per_m: np.ndarray
    backscatter_per_m: np.ndarray
    veiling_light: np.ndarray
    sky: np.ndarray


def geometry_of(p: dict[str, float]) -> CameraGeometry:
    """The CameraGeometry of one camera's parsed parameters (lotusim_sensors.suite, kind `camera`)."""
    return CameraGeometry(int(p["width_px"]), int(p["height_px"]), float(np.radians(p["hfov_deg"])),
                          float(np.radians(p["tilt_deg"])))  # fmt: skip


def water_of(p: dict[str, float]) -> Water:
    """The Water of one camera's parsed parameters."""
    return Water(np.array([p[f"attenuation_{c}_per_m"] for c in RGB]),
                 np.array([p[f"backscatter_{c}_per_m"] for c in RGB]),
                 np.array([p[f"veiling_light_{c}"] for c in RGB]), np.array([p[f"sky_{c}"] for c in RGB]))  # fmt: skip


@lru_cache(maxsize=16)
def pixel_rays(g: CameraGeometry) -> np.ndarray:
    """(H W, 3) unit ray directions through the pixel centres, row-major from the top-left pixel, in body FLU
    axes: optical (u − cx, v − cy, f) -> FLU (f, −(u − cx), −(v − cy)), then pitched down by the tilt."""
    cx, cy = g.principal_point_px
    u = np.arange(g.width_px) - cx
    v = np.arange(g.height_px) - cy
    x = np.full((g.height_px, g.width_px), g.focal_px)
    y = -np.broadcast_to(u[None, :], x.shape)
    z = -np.broadcast_to(v[:, None], x.shape)
    d = np.stack([x, y, z], axis=-1).reshape(-1, 3)
    d /= np.linalg.norm(d, axis=1, keepdims=True)
    c, s = np.cos(g.tilt_rad), np.sin(g.tilt_rad)
    out = np.column_stack([c * d[:, 0] + s * d[:, 2], d[:, 1], -s * d[:, 0] + c * d[:, 2]])
    out.setflags(write=False)
    return out


def underwater(albedo: np.ndarray, range_m: np.ndarray, water: Water) -> np.ndarray:
    """Eq. 1 of [Song2025] per pixel and channel: (N, 3) colour of (N, 3) albedos J at (N,) ranges d (m); d = inf
    (no hit) gives B∞."""
    d = np.asarray(range_m, dtype=float)[:, None]
    hit = np.isfinite(d)
    safe = np.where(hit, d, 0.0)
    direct = np.where(hit, albedo * np.exp(-water.attenuation_per_m * safe), 0.0)
    veil = np.where(hit, 1.0 - np.exp(-water.backscatter_per_m * safe), 1.0)
    return direct + water.veiling_light * veil


def in_air(albedo: np.ndarray, range_m: np.ndarray, water: Water) -> np.ndarray:
    """Above water: the hit's albedo, the sky where nothing is hit."""
    hit = np.isfinite(np.asarray(range_m, dtype=float))[:, None]
    return np.where(hit, albedo, water.sky)


def render(g: CameraGeometry, albedo: np.ndarray, range_m: np.ndarray, water: Water, submerged: bool) -> np.ndarray:
    """(H, W, 3) colour in [0, 1] of one camera from its pixels' hits (row-major (H W, 3) albedo, (H W,) range)."""
    colour = underwater(albedo, range_m, water) if submerged else in_air(albedo, range_m, water)
    return np.clip(colour, 0.0, 1.0).reshape(g.height_px, g.width_px, 3)


def to_rgb8(image: np.ndarray) -> np.ndarray:
    """uint8 image of a colour image in [0, 1] (rounded)."""
    return np.rint(np.clip(image, 0.0, 1.0) * 255.0).astype(np.uint8)
