"""Checks of a vessel's start shared by the scenario loader and spawn-time creates (the MAS server's
FleetCommand items): the same input gets the same verdict wherever it enters.

- start_problem: not at or below the sea floor of the environment's bathymetry, an underwater vessel not above
  the sea surface and an aerial one not below it (depths in m, positive down, ENU z = -depth);
- sensors_problem: per-vessel sensor overrides merged over the vehicle's catalogue sensors and validated as a
  suite (lotusim_sensors.suite), so a bad override is refused instead of leaving the vessel without sensors.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from lotusim_sensors.suite import merge_sensors, parse_suite


def seabed_depths_m(environment: Any, x_east_m: np.ndarray, y_north_m: np.ndarray) -> np.ndarray:
    """Sea floor depth (m, positive down) of the environment's bathymetry at ENU points (vectorised)."""
    return np.asarray(environment.bathymetry.seabed_depth_m(x_east_m, y_north_m), dtype=float)


def start_problem(depth_m: float, seabed_m: float, domain: str, where: str = "") -> str:
    """Why a vessel cannot start `depth_m` deep where the sea floor is `seabed_m` deep ('' if it can)."""
    at = f" ({seabed_m:g} m{where})"
    if depth_m >= seabed_m:
        return f"starts {depth_m:g} m deep, at or below the sea floor{at}"
    if domain == "underwater" and depth_m < -1e-9:
        return f"underwater vessel starts {-depth_m:g} m above the sea surface (expected depth >= 0, z <= 0)"
    if domain == "aerial" and depth_m > 1e-9:
        return f"aerial vehicle starts {depth_m:g} m below the sea surface (expected height >= 0, z >= 0)"
    return ""


def sensors_problem(catalogue_sensors: Mapping | None, overrides: Any, where: str) -> str:
    """Why per-vessel sensor `overrides` (the `sensors:` of a vessel's overrides) are invalid ('' if valid)."""
    if overrides is None:
        return ""
    if not isinstance(overrides, Mapping):
        return f"{where}: expected a mapping of sensors, got {type(overrides).__name__}"
    try:
        parse_suite(merge_sensors(catalogue_sensors, overrides), where)
    except (ValueError, TypeError) as exc:
        return str(exc)
    return ""
