"""Images of the image-forming sensors for the samplers: marine radar, imaging sonar, underwater camera (ROS-free).

Each casts its rays for every due vessel at once (lotusim_env.raycast through the LiDAR's poses and hull boxes,
lotusim_sensors.lidar), then forms the images with its model (lotusim_sensors.radar, sonar, camera). Vessels
whose sensors share a geometry are cast and formed together. Random draws (radar sea clutter, sonar speckle)
come from one generator per image seeded with (the sensor's stream key, its sample counter): same seed, same
images, whatever the other vessels. Each returns (columns, period s) for lotusim_sensors.samplers.Samples, the
columns in `due` order, for lotusim_sensors.sensor_messages:
radar (B-scan float32 (n_azimuth, n_range) in [0, 1], PPI uint8 (size, size)); sonar (polar float32 (n_bins,
n_beams), fan uint8 (H, W)); camera (uint8 (H, W, 3) RGB).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from lotusim_core.base import rotations
from lotusim_env.raycast import SEA_SURFACE, Hits, cast
from lotusim_env.waves import significant_height_m
from lotusim_sensors import camera, lidar, radar, sonar
from lotusim_sensors.banks import Bank
from lotusim_sensors.roster import Roster

if TYPE_CHECKING:  # samplers imports this module
    from lotusim_sensors.samplers import Site

Columns = tuple[tuple, float | np.ndarray]  # (per-message columns, period s)

RADAR_LAYOUT = ("n_azimuth", "n_range", "max_range_m", "beamwidth_deg", "pulse_length_s", "ppi_size_px", "ray_levels")
SONAR_LAYOUT = ("n_beams", "n_bins", "n_elevation", "min_range_m", "max_range_m", "hfov_deg", "vfov_deg", "tilt_deg",
                "fan_height_px")  # fmt: skip
CAMERA_LAYOUT = ("width_px", "height_px", "hfov_deg", "tilt_deg")


def groups(p: dict[str, np.ndarray], keys: tuple[str, ...]) -> list[tuple[dict[str, float], np.ndarray]]:
    """The due vessels grouped by the values of `keys`: [(the first member's parameters, indices into due)]."""
    table = np.column_stack([p[k] for k in keys])
    _, first, inverse = np.unique(table, axis=0, return_index=True, return_inverse=True)
    return [({k: float(v[i]) for k, v in p.items()}, np.flatnonzero(inverse.ravel() == g))
            for g, i in enumerate(first.tolist())]  # fmt: skip


def generator(key: np.uint64, counter: np.uint64) -> np.random.Generator:
    """The generator of one image: seeded with (stream key, sample counter)."""
    return np.random.default_rng([int(key), int(counter)])


def _cast(site: Site, fleet: Roster, due: np.ndarray, origins: np.ndarray, d_map: np.ndarray, rays: int,
          max_range_m: float, sea_surface: bool) -> Hits:  # fmt: skip
    """Cast `rays` rays per due vessel (origins, directions (len(due) rays, 3) map ENU), its own hull excluded."""
    boxes, box_slots = lidar.fleet_boxes(fleet)
    exclude = np.repeat(lidar.own_rows(box_slots, due), rays)
    env = site.env
    return cast(env.world, env.bathymetry, origins, d_map, max_range_m, boxes, sea_surface=sea_surface,
                exclude_vessel=exclude)  # fmt: skip


def _mount(p: dict[str, np.ndarray], idx: np.ndarray) -> np.ndarray:
    return np.column_stack([p["x_m"][idx], p["y_m"][idx], p["z_m"][idx]])


# ------------------------------------------------------------------------------------------------------ radar
def radar_origins(antenna_enu: np.ndarray, levels: int, low_height_m: float) -> np.ndarray:
    """(V, L, 3) ray origins: L levels from `low_height_m` above the mean sea surface up to the antenna (one
    level, or an antenna below low_height_m: the antenna only)."""
    z_top = antenna_enu[:, 2:3]
    if levels <= 1:
        heights = z_top
    else:
        frac = np.linspace(0.0, 1.0, levels)[None, :]
        low = np.minimum(low_height_m, z_top)
        heights = low + (z_top - low) * frac
    out = np.repeat(antenna_enu[:, None, :], heights.shape[1], axis=1)
    out[:, :, 2] = heights
    return out


def form_radar(p: dict[str, float], g: radar.RadarGeometry, hits: Hits, d_map: np.ndarray, n: int, levels: int,
               hs_m: float, antenna_z: np.ndarray, rngs: list[np.random.Generator]
               ) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """(B-scans (n, n_az, n_range) float32 in [0, 1], PPIs (n, size, size) uint8) of n radars from their hits (rays
    ordered radar, level, azimuth bin); sea-surface hits are no returns (the clutter model stands for them)."""
    cos_i = -np.einsum("ij,ij->i", hits.normal, d_map)
    rng_m = np.where(hits.what == SEA_SURFACE, np.inf, hits.range_m)
    power = radar.return_power(rng_m, hits.reflectivity, cos_i)
    per_radar = levels * g.n_azimuth
    ray = np.arange(n * per_radar)
    polar = radar.spread_returns(g, n, ray // per_radar, ray % g.n_azimuth, rng_m, power)
    if p["sea_clutter"] > 0.0:
        for i in range(n):
            mean = radar.clutter_mean_power(g, hs_m, float(antenna_z[i]), p["clutter_gamma_per_m"])
            polar[i] += radar.sea_clutter(g, mean, rngs[i])
    b_scan = radar.log_gain(polar, p["gain_db"], p["dynamic_range_db"])
    return b_scan, radar.ppi(g, np.rint(b_scan * np.float32(255.0)).astype(np.uint8))


def radar_images(bank: Bank, due: np.ndarray, fleet: Roster, site: Site) -> Columns:
    """B-scan and PPI of each due vessel's radar (lotusim_sensors.radar): a level fan at the antenna's heading."""
    p = bank.take(due)
    b_scans, ppis = [None] * len(due), [None] * len(due)
    hs = significant_height_m(site.env.waves.components) if not site.env.waves.calm else 0.0
    for q, idx in groups(p, RADAR_LAYOUT):
        g, levels, slots = radar.geometry_of(q), int(q["ray_levels"]), due[idx]
        antenna, _ = lidar.sensor_poses(fleet.pos[slots], fleet.quat[slots], _mount(p, idx))
        origins = radar_origins(antenna, levels, q["low_ray_height_m"])  # (V, L, 3)
        dirs = radar.fan_directions(g, rotations.yaw_enu_rad(fleet.quat[slots]))  # (V, A, 3)
        o = np.broadcast_to(origins[:, :, None, :], (len(idx), levels, g.n_azimuth, 3)).reshape(-1, 3)
        d = np.broadcast_to(dirs[:, None, :, :], (len(idx), levels, g.n_azimuth, 3)).reshape(-1, 3)
        hits = _cast(site, fleet, slots, o, d, levels * g.n_azimuth, g.max_range_m, sea_surface=False)
        rngs = [generator(bank.key[s], bank.counter[s]) for s in slots.tolist()]
        b, ppi = form_radar(q, g, hits, d, len(idx), levels, hs, antenna[:, 2], rngs)
        for j, i in enumerate(idx.tolist()):
            b_scans[i], ppis[i] = b[j], ppi[j]
    return (b_scans, ppis), 1.0 / p["rate_hz"]


# ------------------------------------------------------------------------------------------------------ sonar
def form_sonar(p: dict[str, float], g: sonar.SonarGeometry, hits: Hits, d_map: np.ndarray, n: int,
                 rngs: list[np.random.Generator]) -> np.ndarray:  # fmt: skip
    """(n, n_bins, n_beams) polar images of n sonars from their hits (rays ordered sonar, then ray_fan order):
    Eq. 2, binning, Eqs. 3–6 if `noise`, range normalisation if `range_normalization`."""
    _, beams = sonar.ray_fan(g)
    cos_i = -np.einsum("ij,ij->i", hits.normal, d_map)
    value = sonar.intensity(hits.range_m, hits.reflectivity, cos_i, p["attenuation_per_m"])
    which = np.repeat(np.arange(n), len(beams))
    image = sonar.bin_hits(g, n, which, np.tile(beams, n), hits.range_m, value, p["mean_binning"] > 0.0)
    image = image.astype(np.float32)
    if p["noise"] > 0.0:
        for i in range(n):
            image[i] = sonar.speckle(g, image[i], rngs[i], p["multiplicative_noise_sigma"],
                                     p["rayleigh_noise_sigma"], p["beam_pattern_sigma_rad2"])  # fmt: skip
    return sonar.normalise_ranges(image) if p["range_normalization"] > 0.0 else image


def sonar_images(bank: Bank, due: np.ndarray, fleet: Roster, site: Site) -> Columns:
    """Polar and fan images of each due vessel's forward-looking sonar (lotusim_sensors.sonar)."""
    p = bank.take(due)
    polars, fans = [None] * len(due), [None] * len(due)
    for q, idx in groups(p, SONAR_LAYOUT):
        g, slots = sonar.geometry_of(q), due[idx]
        dirs, _ = sonar.ray_fan(g)
        pos, rot = lidar.sensor_poses(fleet.pos[slots], fleet.quat[slots], _mount(p, idx))
        d = np.einsum("nij,bj->nbi", rot, dirs).reshape(-1, 3)
        hits = _cast(site, fleet, slots, np.repeat(pos, len(dirs), axis=0), d, len(dirs), g.max_range_m, True)
        rngs = [generator(bank.key[s], bank.counter[s]) for s in slots.tolist()]
        polar = form_sonar(q, g, hits, d, len(idx), rngs)
        fan = sonar.fan(g, polar)
        for j, i in enumerate(idx.tolist()):
            polars[i] = polar[j].astype(np.float32)
            fans[i] = np.rint(np.clip(fan[j], 0.0, 1.0) * 255.0).astype(np.uint8)
    return (polars, fans), 1.0 / p["rate_hz"]


# ----------------------------------------------------------------------------------------------------- camera
def camera_images(bank: Bank, due: np.ndarray, fleet: Roster, site: Site) -> Columns:
    """RGB image of each due vessel's camera (lotusim_sensors.camera): Eq. 1 under water, the hit colours above."""
    p = bank.take(due)
    images = [None] * len(due)
    for q, idx in groups(p, CAMERA_LAYOUT):
        g, slots = camera.geometry_of(q), due[idx]
        rays = camera.pixel_rays(g)
        pos, rot = lidar.sensor_poses(fleet.pos[slots], fleet.quat[slots], _mount(p, idx))
        d = np.einsum("nij,bj->nbi", rot, rays).reshape(-1, 3)
        max_range = float(np.max(p["max_range_m"][idx]))
        hits = _cast(site, fleet, slots, np.repeat(pos, len(rays), axis=0), d, len(rays), max_range, True)
        n_px = len(rays)
        for j, i in enumerate(idx.tolist()):
            one = {k: float(v[i]) for k, v in p.items()}
            rows = slice(j * n_px, (j + 1) * n_px)
            seen = np.where(hits.range_m[rows] <= one["max_range_m"], hits.range_m[rows], np.inf)
            image = camera.render(g, hits.albedo[rows], seen, camera.water_of(one), pos[j, 2] < 0.0)
            images[i] = camera.to_rgb8(image)
    return (images,), 1.0 / p["rate_hz"]
