"""Barometer (air pressure), batched over vessels: what a drone's autopilot turns into altitude.

International Standard Atmosphere, troposphere (0–11 km) [ISO2533]: with the sea-level pressure p0 and temperature
T0 = 288.15 K, the lapse rate L = 0.0065 K/m, g0 = 9.80665 m/s², the molar mass of air M = 0.0289644 kg/mol and
R = 8.31446 J/(mol K), the pressure at a height h above the sea (m) is

    p(h) = p0 (1 − L h / T0)^(g0 M / (R L))          (exponent 5.2559; p(1000 m) = 89 875 Pa for p0 = 101 325 Pa)

plus white Gaussian noise. Default noise 1.2 Pa: the MS5611's resolution RMS at its highest oversampling
(0.012 mbar) [MS5611Datasheet], the barometer of the Pixhawk boards PX4 flies; rate 50 Hz, the x500_base model's
air-pressure sensor [PX4GazeboModels2025]. Below the surface (a drone in the water) the sensor reads the
hydrostatic pressure of lotusim_sensors.pressure.
"""

from __future__ import annotations

import numpy as np

from lotusim_sensors.pressure import ATMOSPHERIC_PRESSURE_PA

SEA_LEVEL_TEMPERATURE_K = 288.15
LAPSE_RATE_K_PER_M = 0.0065
STANDARD_GRAVITY_MPS2 = 9.80665
MOLAR_MASS_AIR_KG_PER_MOL = 0.0289644
GAS_CONSTANT_J_PER_MOL_K = 8.31446
TROPOPAUSE_M = 11000.0
EXPONENT = STANDARD_GRAVITY_MPS2 * MOLAR_MASS_AIR_KG_PER_MOL / (GAS_CONSTANT_J_PER_MOL_K * LAPSE_RATE_K_PER_M)


def isa_pressure_pa(height_m: np.ndarray, sea_level_pa: float = ATMOSPHERIC_PRESSURE_PA) -> np.ndarray:
    """ISA pressure (Pa) at heights above the sea (m; clipped to the troposphere, 0 .. 11 km)."""
    h = np.clip(np.asarray(height_m, dtype=float), 0.0, TROPOPAUSE_M)
    return sea_level_pa * (1.0 - LAPSE_RATE_K_PER_M * h / SEA_LEVEL_TEMPERATURE_K) ** EXPONENT


def isa_height_m(pressure_pa: np.ndarray, sea_level_pa: float = ATMOSPHERIC_PRESSURE_PA) -> np.ndarray:
    """The height (m) at which the ISA has `pressure_pa`: the inverse an autopilot applies."""
    ratio = np.asarray(pressure_pa, dtype=float) / sea_level_pa
    return SEA_LEVEL_TEMPERATURE_K / LAPSE_RATE_K_PER_M * (1.0 - ratio ** (1.0 / EXPONENT))


def barometer_measure(
    sensor_enu_m: np.ndarray, noise_std_pa: np.ndarray, n1: np.ndarray, water_pa: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(pressure Pa, its std Pa) for N sensors at sensor_enu_m (N x 3, z up from the mean sea level): the ISA above
    the water, `water_pa` (N,) below it; n1 (N x 1) standard normal draws."""
    air = isa_pressure_pa(sensor_enu_m[:, 2])
    below = sensor_enu_m[:, 2] < 0.0
    std = np.asarray(noise_std_pa, dtype=float)
    return np.where(below, water_pa, air) + std * n1[:, 0], std
