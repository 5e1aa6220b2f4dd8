"""The `sensors:` mapping of a vehicle (catalogue entry + per-vessel overrides): schema, defaults, validation.

A vehicle carries the sensors named in its `sensors:` mapping; each value is a mapping of parameters that
override the defaults below (an empty mapping or null takes every default; `enabled: false` removes a sensor
that the catalogue entry declares). Schema and units: docs/sensors.md. Every default names its source.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from lotusim_core.base.frames import frd_to_flu
from lotusim_core.base.validation import ConfigError, Validator


class SuiteError(ConfigError):
    """A malformed `sensors:` mapping: the key is the sensor's path under the caller's `where` (e.g.
    `vessel auv_1.imu.rate_hz`), the message `key: reason` (the where of the file, if any, is in the key)."""


_CHECK = Validator("", SuiteError)  # the one validator (lotusim_core.base.validation); keys carry the where

# Numeric parameters (float) per sensor kind, with their defaults. `position_frd_m` (mount point from the body
# origin CO in FRD, metres, the catalogue's body convention) is accepted by every kind; it is converted once to
# base_link FLU (lotusim_core.base.frames) and stored as x_m, y_m, z_m.
DEFAULTS: dict[str, dict[str, float]] = {
    # uuv_simulator IMU [UUVSimulator2020]: 50 Hz, gyro noise density 3.394e-4 rad/s/sqrt(Hz), random walk
    # 3.8785e-5 rad/s^2/sqrt(Hz), bias tau 1000 s, turn-on 0.0087 rad/s; accel 0.004 m/s^2/sqrt(Hz), 0.006
    # m/s^3/sqrt(Hz), 300 s, 0.196 m/s^2; orientation noise 0.01 rad.
    "imu": {
        "rate_hz": 50.0,
        "accel_noise_density": 0.004,
        "accel_random_walk": 0.006,
        "accel_bias_correlation_time_s": 300.0,
        "accel_turn_on_bias_sigma": 0.196,
        "gyro_noise_density": 3.394e-4,
        "gyro_random_walk": 3.8785e-5,
        "gyro_bias_correlation_time_s": 1000.0,
        "gyro_turn_on_bias_sigma": 0.0087,
        "orientation_noise_std_rad": 0.01,
    },
    # Gazebo magnetometer on the LRAUV / BlueROV sensor variants of LOTUSim (IRL-Crossing-CNRS/LOTUSim,
    # model-sensors-gazebo.sdf): 50 Hz, sigma 1e-5 (gauss in that plugin = 1e-9 T; we keep 1e-7 T = 100 nT, a
    # typical MEMS noise floor).
    "magnetometer": {"rate_hz": 50.0, "noise_std_t": 1.0e-7},
    # [Meyers2025] sec. V: 10 Hz, sigma 0.01 m (Bar30 on CougUV).
    "pressure": {"rate_hz": 10.0, "depth_noise_std_m": 0.01},
    # Air pressure (drones): 50 Hz as the x500_base model's air_pressure sensor [PX4GazeboModels2025]; noise the
    # MS5611's resolution RMS at OSR 4096, 0.012 mbar [MS5611Datasheet] (lotusim_sensors.barometer).
    "barometer": {"rate_hz": 50.0, "noise_std_pa": 1.2},
    # [SaldarriagaMesa2025] Table A3 (position 0.5 m, velocity 0.05 m/s); 5 Hz = the standard suite.
    "gps": {
        "rate_hz": 5.0,
        "horizontal_noise_std_m": 0.5,
        "vertical_noise_std_m": 1.0,
        "velocity_noise_std_mps": 0.05,
        "dropout_probability": 0.0,
    },
    # Teledyne Pathfinder on the LRAUV (osrf/lrauv [LRAUV2023]): 30 deg, 0.1-80 m, 0.002 / 0.0035 m/s;
    # max rate 5 Hz (issue 6 standard suite); water track at 10 m (first bins of the Pathfinder, 20-60 m in
    # lrauv; we use the nearest layer).
    "dvl": {
        "max_rate_hz": 5.0,
        "beam_tilt_deg": 30.0,
        "min_range_m": 0.1,
        "max_range_m": 80.0,
        "bottom_track_noise_std_mps": 0.002,
        "water_track_noise_std_mps": 0.0035,
        "water_track": 1.0,
        "water_track_distance_m": 10.0,
        "pings_per_sample": 1.0,
    },
    # [SaldarriagaMesa2025] Table A5 (echosounder): 0.2-50 m, 1 Hz, 0.01 m.
    "altimeter": {"rate_hz": 1.0, "min_range_m": 0.2, "max_range_m": 50.0, "noise_std_m": 0.01},
    # ITU-R M.1371-5 reporting (lotusim_sensors.ais); position noise as the GPS default.
    "ais": {"position_noise_std_m": 0.5, "navigational_status": 0.0, "course_change_threshold_dps": 1.0},
    # Range/bearing: 1 Hz; noise of a short-baseline USBL class device (range 0.1 m, angles 0.01 rad, project
    # choice: [Player2023] reports no numbers); 1000 m maximum range.
    "usbl": {"rate_hz": 1.0, "max_range_m": 1000.0, "range_noise_std_m": 0.1, "angle_noise_std_rad": 0.01},
    # Modem: reliable to 1000 m, lost beyond 2000 m (project choice within [Player2023]'s "range limited drop-off").
    "modem": {"reliable_range_m": 1000.0, "max_range_m": 2000.0, "drop_probability_min": 0.0},
    # 2-D LiDAR, a SICK LMS511 [SICK2017]: 190° field, 0.5° steps (381 beams), 25 Hz (its slowest scan), 80 m;
    # 0.7 m minimum range and σ 12 mm are [assumption]s of the order of its statistical error. lotusim_sensors.lidar
    "lidar_2d": {
        "rate_hz": 25.0,
        "beams": 381.0,
        "fov_deg": 190.0,
        "min_range_m": 0.7,
        "max_range_m": 80.0,
        "range_noise_std_m": 0.012,
        "dropout_probability": 0.0,
        "tilt_deg": 0.0,  # the mount pitched down by this (about base_link y; negative: up)
    },
    # 3-D LiDAR, a Velodyne VLP-16 [Velodyne2018]: 16 channels every 2° from -15° to +15°, 360° at 0.2° (1800
    # azimuths) at 10 Hz, 100 m, accuracy ±3 cm taken as σ; 0.9 m minimum range [assumption].
    "lidar_3d": {
        "rate_hz": 10.0,
        "horizontal_beams": 1800.0,
        "horizontal_fov_deg": 360.0,
        "channels": 16.0,
        "vertical_min_deg": -15.0,
        "vertical_max_deg": 15.0,
        "min_range_m": 0.9,
        "max_range_m": 100.0,
        "range_noise_std_m": 0.03,
        "dropout_probability": 0.0,
        "tilt_deg": 0.0,
    },
    # Marine radar (lotusim_sensors.radar): 1 Hz (issue 19's goal; antennas turn at 24-48 rpm), the 1 nm range
    # scale in 512 bins (3.6 m), 1° azimuth bins; a 4-ft X-band open array's 1.8° horizontal beam and an 80 ns short
    # pulse (12 m range resolution) [assumption: typical small-vessel radar figures]; rays at 2 levels, 1 m above
    # the sea and at the antenna; gain 160 dB over a 90 dB display range (a 0.7 hull reads 0.22 at 1 nm);
    # constant-γ sea clutter with γ = 0.01 per metre of Hs [assumption] [Skolnik2001].
    "radar": {
        "rate_hz": 1.0,
        "n_azimuth": 360.0,
        "n_range": 512.0,
        "max_range_m": 1852.0,
        "beamwidth_deg": 1.8,
        "pulse_length_s": 8.0e-8,
        "ray_levels": 2.0,
        "low_ray_height_m": 1.0,
        "gain_db": 160.0,
        "dynamic_range_db": 90.0,
        "sea_clutter": 1.0,
        "clutter_gamma_per_m": 0.01,
        "ppi_size_px": 512.0,
    },
    # Forward-looking imaging sonar (lotusim_sensors.sonar): the Oculus M750d's 130° x 20° field [Song2025]
    # sec. III-A.2; 256 beams x 512 bins at 10 Hz (issue 19's goal); 1-40 m (HoloOcean's imaging-sonar example
    # range [HoloOcean2026]); 16 rays per beam in elevation; OceanSim's defaults for binning (sum), attenuation 0.1,
    # multiplicative noise 0.2, Rayleigh noise 0.05 and range normalisation [Song2025]; beam-pattern width σ_φ 0.5
    # rad² and the 15° downward tilt are [assumption]s.
    "sonar": {
        "rate_hz": 10.0,
        "n_beams": 256.0,
        "n_bins": 512.0,
        "n_elevation": 16.0,
        "min_range_m": 1.0,
        "max_range_m": 40.0,
        "hfov_deg": 130.0,
        "vfov_deg": 20.0,
        "tilt_deg": 15.0,
        "attenuation_per_m": 0.1,
        "mean_binning": 0.0,
        "noise": 1.0,
        "multiplicative_noise_sigma": 0.2,
        "rayleigh_noise_sigma": 0.05,
        "beam_pattern_sigma_rad2": 0.5,
        "range_normalization": 1.0,
        "fan_height_px": 256.0,
    },
    # Underwater camera (lotusim_sensors.camera): 160 x 120 px, 90° horizontal field, 10 Hz, 50 m [assumption: low
    # resolution for many vehicles]; Eq. 1 coefficients of OceanSim's GUI defaults (Fig. 4 of [Song2025]):
    # attenuation 0.05 /m per channel, backscatter (0.05, 0.05, 0.2) /m, veiling light (0, 0.31, 0.24); sky colour
    # above water [assumption].
    "camera": {
        "rate_hz": 10.0,
        "width_px": 160.0,
        "height_px": 120.0,
        "hfov_deg": 90.0,
        "tilt_deg": 0.0,
        "max_range_m": 50.0,
        "attenuation_r_per_m": 0.05,
        "attenuation_g_per_m": 0.05,
        "attenuation_b_per_m": 0.05,
        "backscatter_r_per_m": 0.05,
        "backscatter_g_per_m": 0.05,
        "backscatter_b_per_m": 0.2,
        "veiling_light_r": 0.0,
        "veiling_light_g": 0.31,
        "veiling_light_b": 0.24,
        "sky_r": 0.53,
        "sky_g": 0.81,
        "sky_b": 0.92,
    },
}
# Parameters that count things (beams, channels): whole numbers >= 1.
COUNT_KEYS = ("beams", "horizontal_beams", "channels", "n_azimuth", "n_range", "ray_levels", "ppi_size_px", "n_beams",
              "n_bins", "n_elevation", "fan_height_px", "width_px", "height_px")  # fmt: skip
# Non-numeric keys per kind: ais class ("A" | "B") and mmsi; usbl targets ("all" or a list of names).
EXTRA_KEYS: dict[str, dict[str, Any]] = {"ais": {"class": "A", "mmsi": 0}, "usbl": {"targets": "all"}}
KINDS = tuple(DEFAULTS)
NOISE_SUFFIXES = ("_std_m", "_std_t", "_std_mps", "_std_rad", "_std_pa", "_sigma", "_density", "_walk")  # >= 0


def merge_sensors(base: Mapping | None, override: Mapping | None) -> dict[str, Any]:
    """Merge per-vessel overrides over a catalogue `sensors:` mapping (per sensor, key by key)."""
    merged: dict[str, Any] = copy.deepcopy(dict(base or {}))
    for kind, params in (override or {}).items():
        if params is None or kind not in merged or not isinstance(merged[kind], Mapping):
            merged[kind] = copy.deepcopy(params)
        elif isinstance(params, Mapping):
            merged[kind] = {**merged[kind], **copy.deepcopy(dict(params))}
        else:
            merged[kind] = params
    return merged


def parse_suite(sensors: Mapping | None, where: str) -> dict[str, dict[str, Any]]:
    """Validate a `sensors:` mapping; return {kind: {param: value}} with defaults filled, disabled ones removed.

    Raises SuiteError (a ConfigError, so a ValueError) whose key is the path under `where` (e.g.
    "vehicles/lrauv.yaml sensors" or "vessel auv_1": `vessel auv_1.imu.rate_hz`) and whose reason says why."""
    if sensors is None:
        return {}
    if not isinstance(sensors, Mapping):
        raise _CHECK.fail(where, f"expected a mapping of sensor name -> parameters, got {type(sensors).__name__}")
    suite: dict[str, dict[str, Any]] = {}
    for kind, given in sensors.items():
        if kind not in DEFAULTS:
            raise _CHECK.fail(f"{where}.{kind}", f"unknown sensor (known: {', '.join(KINDS)})")
        given = {} if given is None else given
        if not isinstance(given, Mapping):
            raise _CHECK.fail(f"{where}.{kind}", f"expected a mapping of parameters or null, got {given!r}")
        if given.get("enabled", True) is False:
            continue
        suite[kind] = _parse_params(kind, given, f"{where}.{kind}")
    return suite


def _parse_params(kind: str, given: Mapping, where: str) -> dict[str, Any]:
    params: dict[str, Any] = {**DEFAULTS[kind], "x_m": 0.0, "y_m": 0.0, "z_m": 0.0, **EXTRA_KEYS.get(kind, {})}
    for key, value in given.items():
        if key == "enabled":
            continue
        if key == "position_frd_m":
            if not (isinstance(value, (list, tuple)) and len(value) == 3):
                raise _CHECK.fail(f"{where}.position_frd_m", f"expected [x, y, z] in metres (body FRD), got {value!r}")
            frd = [_number(v, f"{where}.position_frd_m") for v in value]
            params["x_m"], params["y_m"], params["z_m"] = (float(c) for c in frd_to_flu(frd))
        elif key in EXTRA_KEYS.get(kind, {}):
            params[key] = _extra(kind, key, value, where)
        elif key in DEFAULTS[kind]:
            params[key] = _number(value, f"{where}.{key}")
        else:
            known = sorted([*DEFAULTS[kind], *EXTRA_KEYS.get(kind, {}), "position_frd_m", "enabled"])
            raise _CHECK.fail(where, f"unknown parameter {key!r} (known: {', '.join(known)})")
    for rate_key in ("rate_hz", "max_rate_hz"):
        if rate_key in params and not params[rate_key] > 0.0:
            raise _CHECK.fail(f"{where}.{rate_key}", f"expected a positive rate in Hz, got {params[rate_key]}")
    for key, value in params.items():
        if key.endswith(NOISE_SUFFIXES) and value < 0:
            raise _CHECK.fail(f"{where}.{key}", f"expected a non-negative noise parameter, got {value}")
    for key in COUNT_KEYS:
        if key in params and not (params[key] >= 1 and float(params[key]).is_integer()):
            raise _CHECK.fail(f"{where}.{key}", f"expected a whole number >= 1, got {params[key]}")
    if kind in ("lidar_2d", "lidar_3d"):
        _check_lidar(params, where)
    if kind in ("radar", "sonar", "camera"):
        _check_imaging(params, where)
    if "dropout_probability" in params and not 0.0 <= params["dropout_probability"] <= 1.0:
        got = params["dropout_probability"]
        raise _CHECK.fail(f"{where}.dropout_probability", f"expected a probability in [0, 1], got {got}")
    return params


def _check_lidar(params: Mapping[str, Any], where: str) -> None:
    """A LiDAR's limits: 0 <= min range < max range, fields of view in (0, 360], elevations within ±90°."""
    if "fov_deg" in params or "horizontal_fov_deg" in params:
        if not 0.0 <= params["min_range_m"] < params["max_range_m"]:
            got = f"{params['min_range_m']}, {params['max_range_m']}"
            raise _CHECK.fail(f"{where}.max_range_m", f"expected 0 <= min_range_m < max_range_m, got {got}")
        for key in ("fov_deg", "horizontal_fov_deg"):
            if key in params and not 0.0 < params[key] <= 360.0:
                raise _CHECK.fail(f"{where}.{key}", f"expected a field of view in (0, 360] degrees, got {params[key]}")
    if "vertical_min_deg" in params:
        lo, hi = params["vertical_min_deg"], params["vertical_max_deg"]
        if not -90.0 <= lo <= hi <= 90.0:
            reason = f"expected -90 <= vertical_min_deg <= vertical_max_deg <= 90, got {lo}, {hi}"
            raise _CHECK.fail(f"{where}.vertical_max_deg", reason)


IMAGING_POSITIVE = ("max_range_m", "beamwidth_deg", "pulse_length_s", "dynamic_range_db", "hfov_deg", "vfov_deg")
IMAGING_NON_NEGATIVE = ("clutter_gamma_per_m", "attenuation_per_m", "beam_pattern_sigma_rad2", "low_ray_height_m")


def _check_imaging(params: Mapping[str, Any], where: str) -> None:
    """Radar, sonar, camera: positive ranges, beam and pulse, fields of view below 180°, non-negative coefficients
    and colours, 0 <= min range < max range."""
    for key, value in params.items():
        if key in IMAGING_POSITIVE and not value > 0.0:
            raise _CHECK.fail(f"{where}.{key}", f"expected a positive number, got {value}")
        if (key in IMAGING_NON_NEGATIVE or key.startswith(("attenuation_", "backscatter_"))) and value < 0.0:
            raise _CHECK.fail(f"{where}.{key}", f"expected a non-negative number, got {value}")
        if key.startswith(("veiling_light_", "sky_")) and not 0.0 <= value <= 1.0:
            raise _CHECK.fail(f"{where}.{key}", f"expected a colour channel in [0, 1], got {value}")
        if key in ("hfov_deg", "vfov_deg") and not value < 180.0:
            raise _CHECK.fail(f"{where}.{key}", f"expected a field of view below 180 degrees, got {value}")
    if "min_range_m" in params and not 0.0 <= params["min_range_m"] < params["max_range_m"]:
        got = f"{params['min_range_m']}, {params['max_range_m']}"
        raise _CHECK.fail(f"{where}.max_range_m", f"expected 0 <= min_range_m < max_range_m, got {got}")


def _number(value: Any, where: str) -> float:
    """A finite number (int or float, not a bool or a string: the validator's rule)."""
    return _CHECK.number(value, where)


def _extra(kind: str, key: str, value: Any, where: str) -> Any:
    if kind == "ais" and key == "class":
        if value not in ("A", "B"):
            raise _CHECK.fail(f"{where}.class", f"expected 'A' or 'B', got {value!r}")
        return value
    if kind == "ais" and key == "mmsi":
        if not (isinstance(value, int) and 0 <= value <= 999_999_999):
            raise _CHECK.fail(f"{where}.mmsi", f"expected a 9-digit integer, got {value!r}")
        return value
    if kind == "usbl" and key == "targets":
        if value == "all" or (isinstance(value, list) and all(isinstance(v, str) for v in value)):
            return value
        raise _CHECK.fail(f"{where}.targets", f"expected 'all' or a list of vessel / beacon names, got {value!r}")
    raise _CHECK.fail(f"{where}.{key}", "unsupported")


def numeric_keys(kind: str) -> tuple[str, ...]:
    """The float parameters of a sensor kind, as stored in per-vessel arrays (mount point included)."""
    return (*DEFAULTS[kind], "x_m", "y_m", "z_m")


def stack_params(kind: str, suites: list[Mapping[str, Any]]) -> dict[str, Any]:
    """Per-vessel parameter arrays {key: (N,) float array} of one sensor kind from N parsed parameter mappings."""
    import numpy as np

    return {key: np.array([float(s[key]) for s in suites]) for key in numeric_keys(kind)}
