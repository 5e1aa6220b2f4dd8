"""Acoustic ranging (USBL / directional transponder) and acoustic modem, batched over vessel pairs.

Ranging ([Player2023] sec. VI, directional acoustic transponder giving azimuth and range): for a
receiver at p_r with attitude q and a target at p_t, the target in the receiver's body frame is
d = R(q)^T (p_t - p_r); slant range |d|, azimuth atan2(d_y, d_x) (about body z, counter-clockwise from x),
elevation atan2(d_z, |d_xy|); one-way travel time |d| / c. Gaussian noise on range and angles.
Modem ([Player2023] sec. IV-D: "a delay-based protocol with a range limited drop-off model"): a message sent at t from a
source at range r from a receiver arrives at t + r / c, with c = 1500 m/s by default, and is lost with
probability p(r) = p_min for r <= reliable_range, rising linearly to 1 at max_range, 1 beyond (the protocol
channel of Unet, Chitre et al., with a linear fade between the reliable and the maximum range).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lotusim_core.base.rotations import rotate_inverse

SOUND_SPEED_MPS = 1500.0


@dataclass
class RangeBearing:
    """Measurements of M (receiver, target) pairs."""

    range_m: np.ndarray
    bearing_rad: np.ndarray
    elevation_rad: np.ndarray
    travel_time_s: np.ndarray


def range_bearing(
    receiver_enu_m: np.ndarray,
    q_map_flu: np.ndarray,
    target_enu_m: np.ndarray,
    range_noise_std_m: np.ndarray,
    angle_noise_std_rad: np.ndarray,
    n3: np.ndarray,
    sound_speed_mps: float = SOUND_SPEED_MPS,
) -> RangeBearing:
    """Range / bearing / elevation (body FLU) from M receivers (M x 3, attitudes M x 4) to M targets (M x 3)."""
    d = rotate_inverse(q_map_flu, target_enu_m - receiver_enu_m)
    rng = np.linalg.norm(d, axis=1)
    bearing = np.arctan2(d[:, 1], d[:, 0])
    elevation = np.arctan2(d[:, 2], np.hypot(d[:, 0], d[:, 1]))
    rng_meas = np.abs(rng + range_noise_std_m * n3[:, 0])
    bearing_meas = (bearing + angle_noise_std_rad * n3[:, 1] + np.pi) % (2 * np.pi) - np.pi
    elevation_meas = np.clip(elevation + angle_noise_std_rad * n3[:, 2], -np.pi / 2, np.pi / 2)
    return RangeBearing(rng_meas, bearing_meas, elevation_meas, rng / sound_speed_mps)


def drop_probability(range_m: np.ndarray, reliable_range_m: np.ndarray, max_range_m: np.ndarray, p_min: np.ndarray):
    """Loss probability of a modem message over range_m (linear fade from reliable_range to max_range)."""
    span = np.maximum(max_range_m - reliable_range_m, 1e-9)
    fade = np.clip((range_m - reliable_range_m) / span, 0.0, 1.0)
    return np.where(range_m > max_range_m, 1.0, p_min + (1.0 - p_min) * fade)


def modem_delivery(
    source_enu_m: np.ndarray,
    receivers_enu_m: np.ndarray,
    reliable_range_m: np.ndarray,
    max_range_m: np.ndarray,
    p_min: np.ndarray,
    u: np.ndarray,
    sound_speed_mps: float = SOUND_SPEED_MPS,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For one transmission from source_enu_m (3,) to M receivers (M x 3): (delivered bool, range m, delay s).
    u (M,) are uniforms in (0, 1] from the seeded stream of the link."""
    rng = np.linalg.norm(receivers_enu_m - source_enu_m, axis=1)
    delivered = u > drop_probability(rng, reliable_range_m, max_range_m, p_min)
    return delivered, rng, rng / sound_speed_mps
