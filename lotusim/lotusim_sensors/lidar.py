"""2-D and 3-D LiDAR: beams cast into the world (lotusim_env.raycast), with range limits, noise and dropout (ROS-free).

A scan of N vessels at once: each vessel's beams (B directions fixed in its sensor frame) leave the sensor's mount
point; the ray caster returns the nearest surface of the coast, objects, other vessels' hull boxes and the seabed
within max range. The sensor frame `<vessel>/<kind>_link` is base_link's axes (FLU: x forward, y left, z up)
pitched down by `tilt_deg` (0 by default), at the mount point.

- 2-D (`lidar_2d`, sensor_msgs/LaserScan): B beams in the sensor's x-y plane, angles counter-clockwise from x over
  the field of view (centred on x; a 360° field has no repeated beam).
- 3-D (`lidar_3d`, sensor_msgs/PointCloud2): H azimuths × C channels, the channels spread evenly in elevation from
  vertical_min_deg to vertical_max_deg (the VLP-16's 16 channels every 2° from −15° to +15°).
- What is returned: a hit within [min_range, max_range] on the coast, an object, a vessel or the seabed. The sea
  surface returns nothing (near-infrared light is absorbed or reflected away from the sensor by water,
  [assumption]: no return model for spray or waves) and hides what lies under it.
- Noise: range + σ·n, n standard normal, one per beam, from the sensor's counter-based stream (lotusim_sensors.noise:
  a pure function of (seed, vessel, sensor, sample, beam); both Box–Muller outputs of each pair of uniforms are
  used, beam_normals); dropout: a beam whose uniform draw is below p returns
  nothing. A noisy range outside the limits returns nothing too.
- Intensity: the surface's reflectivity × |cos incidence| (Lambertian, [assumption]), in [0, 1].
No return is range +inf (REP 117: no detection within the range).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from lotusim_core.base import rotations
from lotusim_core.base.catalogue import load_vehicle
from lotusim_core.base.frames import frd_to_flu
from lotusim_env.environment import Environment
from lotusim_env.raycast import SEA_SURFACE, VesselBoxes, cast
from lotusim_sensors import noise
from lotusim_sensors.roster import Roster

DROPOUT_SALT = np.uint64(0x11DA5A17)  # xor'ed into a LiDAR's stream key: the stream of its dropout uniforms


def beams_2d(beams: int, fov_deg: float) -> tuple[np.ndarray, float]:
    """(angles (B,) rad counter-clockwise from the sensor's x axis, increment rad) of a 2-D scan."""
    fov = np.radians(fov_deg)
    if fov_deg >= 360.0:
        inc = 2.0 * np.pi / beams
        return -np.pi + inc * np.arange(beams), inc
    inc = fov / (beams - 1) if beams > 1 else 0.0
    return -0.5 * fov + inc * np.arange(beams), inc


def directions_2d(angles: np.ndarray) -> np.ndarray:
    """(B, 3) unit directions in the sensor frame of beams at `angles` in its x-y plane."""
    return np.column_stack([np.cos(angles), np.sin(angles), np.zeros_like(angles)])


def directions_3d(h_beams: int, h_fov_deg: float, channels: int, v_min_deg: float, v_max_deg: float) -> np.ndarray:
    """(C*H, 3) unit directions, channel-major (row c holds the H azimuths of channel c, lowest channel first)."""
    az, _ = beams_2d(h_beams, h_fov_deg)
    el = np.radians(np.linspace(v_min_deg, v_max_deg, channels)) if channels > 1 else np.radians([v_min_deg])
    ce, se = np.cos(el)[:, None], np.sin(el)[:, None]
    d = np.stack([ce * np.cos(az)[None, :], ce * np.sin(az)[None, :], np.broadcast_to(se, (channels, h_beams))], -1)
    return d.reshape(-1, 3)


def beam_normals(keys: np.ndarray, counters: np.ndarray, beams: int) -> np.ndarray:
    """(N, beams) standard normals, a pure function of (key, counter, beam): both Box–Muller outputs of each pair
    of the stream's uniforms (lotusim_sensors.noise.uniform; [BoxMuller1958]), half the draws of noise.normal."""
    pairs = (beams + 1) // 2
    u = noise.uniform(keys, counters, 2 * pairs)
    radius = np.sqrt(-2.0 * np.log(u[:, :pairs]))
    angle = 2.0 * np.pi * u[:, pairs:]
    return np.concatenate([radius * np.cos(angle), radius * np.sin(angle)], axis=1)[:, :beams]


@dataclass
class Scan:
    """N scans of B beams: range (m, +inf: no return) and intensity [0, 1], and the hit points in the sensor frame."""

    range_m: np.ndarray  # (N, B)
    intensity: np.ndarray  # (N, B)
    points_sensor: np.ndarray  # (N, B, 3) range × direction (NaN: no return)


def pitch_down(tilt_rad: np.ndarray) -> np.ndarray:
    """(N, 3, 3) rotations base_link <- sensor of mounts pitched down by tilt_rad (about base_link y, as the
    sensor's static transform, lotusim_core.ros.static_frames)."""
    c, s = np.cos(tilt_rad), np.sin(tilt_rad)
    r = np.zeros((len(c), 3, 3))
    r[:, 0, 0], r[:, 0, 2], r[:, 1, 1], r[:, 2, 0], r[:, 2, 2] = c, s, 1.0, -s, c
    return r


def sensor_poses(pos: np.ndarray, quat: np.ndarray, mount_flu: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(positions (N, 3) map ENU, rotations (N, 3, 3) map <- sensor) of sensors mounted at `mount_flu` (N, 3)."""
    rot = np.stack([rotations.rotate(quat, np.broadcast_to(e, (len(quat), 3))) for e in np.eye(3)], axis=-1)
    return pos + np.einsum("nij,nj->ni", rot, mount_flu), rot


def scan(
    env: Environment,
    positions: np.ndarray,
    rot: np.ndarray,
    directions: np.ndarray,
    min_range_m: np.ndarray,
    max_range_m: np.ndarray,
    noise_std_m: np.ndarray,
    dropout: np.ndarray,
    keys: np.ndarray,
    counters: np.ndarray,
    vessels: VesselBoxes | None = None,
    own_row: np.ndarray | None = None,
) -> Scan:
    """Scan N sensors (positions (N, 3), rot (N, 3, 3) map <- sensor) with the same B beam directions (sensor
    frame); per-sensor limits, noise σ (m), dropout probability, noise keys and sample counters (N,). own_row: each
    sensor's row in `vessels` (its own hull, not seen), -1 for none."""
    n, b = len(positions), len(directions)
    d_map = np.matmul(directions[None, :, :], np.transpose(rot, (0, 2, 1))).reshape(-1, 3)  # R d, per sensor
    origins = np.repeat(positions, b, axis=0)
    exclude = None if own_row is None else np.repeat(np.asarray(own_row), b)
    hits = cast(env.world, env.bathymetry, origins, d_map, float(np.max(max_range_m)), vessels,
                sea_surface=True, exclude_vessel=exclude)  # fmt: skip
    rng = hits.range_m.reshape(n, b)
    returned = np.isfinite(rng) & (hits.what.reshape(n, b) != SEA_SURFACE)
    cos_inc = np.abs(np.einsum("ij,ij->i", hits.normal, d_map)).reshape(n, b)
    intensity = np.where(returned, hits.reflectivity.reshape(n, b) * cos_inc, 0.0)
    noisy = rng + noise_std_m[:, None] * beam_normals(keys, counters, b) if np.any(noise_std_m > 0.0) else rng
    lost = np.zeros((n, b), dtype=bool)
    if np.any(dropout > 0.0):
        lost = noise.uniform(np.asarray(keys, dtype=np.uint64) ^ DROPOUT_SALT, counters, b) < dropout[:, None]
    ok = returned & ~lost & (noisy >= min_range_m[:, None]) & (noisy <= max_range_m[:, None])
    out = np.where(ok, noisy, np.inf)
    points = np.where(ok[..., None], np.where(ok, noisy, 0.0)[..., None] * directions[None, :, :], np.nan)
    return Scan(out, np.where(ok, intensity, 0.0), points)


# [assumption] hulls as seen by a LiDAR: painted steel or GRP, reflectivity 0.7, light grey
HULL_REFLECTIVITY = 0.7
HULL_ALBEDO = (0.7, 0.7, 0.7)


def fleet_boxes(fleet: Roster) -> tuple[VesselBoxes, np.ndarray]:
    """(the live vessels with a known hull as oriented boxes, the roster slot of each box row)."""
    slots = np.flatnonzero(fleet.alive & (fleet.hull_half_flu > 0.0).all(axis=1))
    q = fleet.quat[slots]
    centers, rot = sensor_poses(fleet.pos[slots], q, fleet.hull_centre_flu[slots])
    n = len(slots)
    boxes = VesselBoxes(centers, rot, fleet.hull_half_flu[slots], np.full(n, HULL_REFLECTIVITY),
                        np.tile(HULL_ALBEDO, (n, 1)))  # fmt: skip
    return boxes, slots


def own_rows(box_slots: np.ndarray, due: np.ndarray) -> np.ndarray:
    """The box row of each due slot (its own hull), -1 where it has none."""
    row_of = {int(s): i for i, s in enumerate(box_slots.tolist())}
    return np.array([row_of.get(int(s), -1) for s in due.tolist()], dtype=np.int64)


@functools.lru_cache(maxsize=256)
def hull_of_model(model: str) -> tuple[np.ndarray, np.ndarray]:
    """(half extents (3,) m, centre (3,) m from base_link) of a catalogue model's hull box, base_link FLU
    (lotusim_core.base.hull_box; zeros when the model is unknown)."""
    try:
        from lotusim_core.base.hull_box import hull_box_of  # the physics' collision box, one place for both

        half, centre_frd = hull_box_of(load_vehicle(model))
    except (ImportError, ValueError, OSError):
        return np.zeros(3), np.zeros(3)
    return np.abs(np.asarray(half, dtype=float)), np.asarray(frd_to_flu(centre_frd), dtype=float)
