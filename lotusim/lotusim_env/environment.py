"""The environment as a pure function of (configuration, sim time, position).

Every node (dynamics, sensors, current_server) builds the same `Environment` from the same configuration
mapping (published latched by current_server as YAML) and gets the same numbers.

Frames: points and velocities are in the world frame `map`, ENU (x east, y north, z up; metres, m/s), the
oceanographic convention (u east, v north, w up). Depth is -z.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np


class ConfigError(ValueError):
    """Malformed environment configuration; the message names the key and the reason."""


class CurrentModel(Protocol):
    """A current field: velocity (m/s, ENU) at N points (N x 3, ENU m) at one sim time (s)."""

    def velocity_enu(self, t_s: float, points_enu: np.ndarray) -> np.ndarray: ...


@dataclass(frozen=True)
class ConstantCurrent:
    """Uniform, steady current (m/s, ENU)."""

    velocity: np.ndarray

    def velocity_enu(self, t_s: float, points_enu: np.ndarray) -> np.ndarray:
        points = np.asarray(points_enu, dtype=float).reshape(-1, 3)
        return np.broadcast_to(self.velocity, points.shape).copy()


@dataclass(frozen=True)
class Environment:
    """Everything the vessels feel from the world (current now; wind, bathymetry as the models grow)."""

    current: CurrentModel


def _vector3(value: Any, key: str) -> np.ndarray:
    try:
        vec = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{key}: expected a list of 3 numbers, got {value!r}") from exc
    if vec.shape != (3,) or not np.all(np.isfinite(vec)):
        raise ConfigError(f"{key}: expected 3 finite numbers, got {value!r}")
    return vec


def build_environment(config: dict[str, Any] | None) -> Environment:
    """Build the environment from its configuration mapping (schema: docs/environment.md)."""
    config = config or {}
    current_cfg = config.get("current", {"model": "constant", "velocity_enu": [0.0, 0.0, 0.0]})
    model = current_cfg.get("model", "constant")
    if model == "constant":
        current = ConstantCurrent(_vector3(current_cfg.get("velocity_enu", [0, 0, 0]), "current.velocity_enu"))
    else:
        raise ConfigError(f"current.model: unknown model {model!r} (known: constant)")
    return Environment(current=current)
