"""Pressure / depth sensor, batched over vessels.

Absolute pressure at a sensor at depth d below the free surface (hydrostatics):
    p = p_atm + rho g d  (+ white noise), d = max(-z_sensor, 0)   [Pa]
with p_atm = 101325 Pa (standard atmosphere, ISO 2533) and rho the environment's water density. Above water the
sensor reads the atmosphere. Depth is what a driver derives from the reading: d_meas = (p - p_atm) / (rho g),
so the depth noise is the pressure noise over rho g. Default noise: sigma_depth = 0.01 m at 10 Hz, the value
matched to a real Blue Robotics Bar30 in [Meyers2025] sec. V (HoloOcean CougUV HIL), as in the
barometer of [Song2025] (pressure from atmospheric pressure and water density + Gaussian noise).

Under waves (lotusim_env.waves, the environment's sea) the gauge pressure is Airy's: p − p_atm = rho g (−z) + p_dyn
below the local surface η (p_dyn = rho g Σ a_i K_p cos φ_i, about rho g η near the surface), 0 above it: a sensor
under a crest reads deeper, one in a trough shallower, one lifted out of the water the atmosphere.
"""

from __future__ import annotations

import numpy as np

from lotusim_core.base.rotations import rotate
from lotusim_env.waves import WaveSample
from lotusim_sensors.imu import STANDARD_GRAVITY_MPS2

ATMOSPHERIC_PRESSURE_PA = 101325.0  # ISO 2533 standard atmosphere at sea level


def sensor_positions_enu(position_enu_m: np.ndarray, q_map_flu: np.ndarray, mount_flu_m: np.ndarray) -> np.ndarray:
    """World position (N x 3, `map` ENU) of sensors mounted at mount_flu_m (N x 3) from base_link."""
    return position_enu_m + rotate(q_map_flu, mount_flu_m)


def pressure_measure(
    sensor_enu_m: np.ndarray,
    depth_noise_std_m: np.ndarray,
    water_density_kgm3: float,
    n1: np.ndarray,
    atmospheric_pa: float = ATMOSPHERIC_PRESSURE_PA,
    gravity_mps2: float = STANDARD_GRAVITY_MPS2,
    waves: WaveSample | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(absolute pressure Pa, its std Pa, measured depth m) for N sensors at sensor_enu_m (N x 3); `waves`: the sea
    at the sensors (lotusim_env.waves.wave_sample), None for a flat sea."""
    rho_g = water_density_kgm3 * gravity_mps2
    if waves is None:
        gauge_pa = rho_g * np.maximum(-sensor_enu_m[:, 2], 0.0)
    else:
        wet = sensor_enu_m[:, 2] <= waves.elevation_m
        gauge_pa = np.where(wet, rho_g * -sensor_enu_m[:, 2] + waves.dynamic_pressure_pa, 0.0)
    std_pa = rho_g * depth_noise_std_m
    pressure_pa = atmospheric_pa + gauge_pa + std_pa * n1[:, 0]
    return pressure_pa, std_pa, (pressure_pa - atmospheric_pa) / rho_g
