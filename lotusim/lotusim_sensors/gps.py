"""GNSS receiver (NavSatFix + velocity), batched over vessels.

A fix exists only while the antenna is at or above the water surface, z >= 0 (GNSS L-band signals do not
penetrate sea water: a surfaced AUV gets a fix, a submerged one none, [Player2023] sec. VI, Fig. 4
"GPS waypoint" phase), and the epoch is not randomly dropped (dropout_probability per epoch, seeded). The
measured position is the true antenna position plus Gaussian noise (horizontal and vertical std), converted to
WGS84 latitude / longitude / height around the scenario origin (lotusim_core.base.geodesy). Velocity is the antenna
velocity in `map` ENU plus noise. Defaults: [SaldarriagaMesa2025] Table A3 (position noise 0.5 m, velocity
noise 0.05 m/s).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lotusim_core.base.geodesy import GeodeticOrigin, enu_to_geodetic
from lotusim_core.base.rotations import cross, rotate


@dataclass
class GpsSample:
    """One epoch for N receivers: fix flag, WGS84 [lat deg, lon deg, height m], ENU velocity, ENU variances."""

    has_fix: np.ndarray  # (N,) bool
    geodetic: np.ndarray  # (N, 3); NaN where no fix
    velocity_enu_mps: np.ndarray  # (N, 3)
    position_variance_m2: np.ndarray  # (N, 3) east, north, up
    antenna_enu_m: np.ndarray  # (N, 3) true antenna position


def gps_measure(
    params: dict[str, np.ndarray],
    position_enu_m: np.ndarray,
    q_map_flu: np.ndarray,
    twist_flu: np.ndarray,
    origin: GeodeticOrigin,
    n6: np.ndarray,
    u1: np.ndarray,
) -> GpsSample:
    """One GNSS epoch. params: per-vessel arrays (x_m, y_m, z_m antenna mount in FLU; horizontal_noise_std_m,
    vertical_noise_std_m, velocity_noise_std_mps, dropout_probability); n6 standard normals, u1 uniforms (N x 1)."""
    mount = np.column_stack([params["x_m"], params["y_m"], params["z_m"]])
    antenna = position_enu_m + rotate(q_map_flu, mount)
    has_fix = (antenna[:, 2] >= 0.0) & (u1[:, 0] > params["dropout_probability"])
    std = np.column_stack(
        [params["horizontal_noise_std_m"], params["horizontal_noise_std_m"], params["vertical_noise_std_m"]]
    )
    measured = antenna + std * n6[:, :3]
    geodetic = np.full_like(measured, np.nan)
    if np.any(has_fix):
        geodetic[has_fix] = enu_to_geodetic(measured[has_fix], origin)
    v_antenna_flu = twist_flu[:, :3] + cross(twist_flu[:, 3:], mount)
    velocity = rotate(q_map_flu, v_antenna_flu) + params["velocity_noise_std_mps"][:, None] * n6[:, 3:]
    return GpsSample(has_fix, geodetic, velocity, std * std, antenna)
