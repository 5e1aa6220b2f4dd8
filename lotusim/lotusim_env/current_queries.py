"""current_server's answers without ROS: a batch query of the current field (checked, never raising) and the
arrows drawn for RViz (grid points, tips, widths and colour levels).

The node (lotusim_env.current_server) reads the request and the parameters, calls these and fills the
QueryCurrent response and the MarkerArray (lotusim_env.current_markers). Frame: `map`, ENU, metres; time: sim s.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

# The field: (sim time s, points N x 3 ENU m) -> velocities N x 3 (ENU m/s), e.g. Environment.current.velocity_enu
CurrentField = Callable[[float, np.ndarray], np.ndarray]


def query_time_s(requested_s: float, now_s: float) -> float:
    """The time a query is evaluated at: a negative finite request means "now" (sim time `now_s`); any other
    value is kept, NaN and ±inf included, so that the check refuses them."""
    return now_s if math.isfinite(requested_s) and requested_s < 0.0 else requested_s


def answer_query(
    velocity_enu: CurrentField, points_flat: np.ndarray, t_s: float, max_points: int
) -> tuple[np.ndarray | None, str]:
    """The current at the points `points_flat` (x, y, z per point, ENU m) at sim time `t_s`: (velocities N x 3,
    "") or (None, the reason the query is refused). A model failure is a refusal too, never an exception."""
    points = np.asarray(points_flat, dtype=float)
    if points.size % 3:
        return None, f"points_enu has {points.size} values, expected a multiple of 3 (x, y, z per point)"
    if points.size // 3 > max_points:
        return None, f"{points.size // 3} points requested, at most {max_points} per query (parameter max_query_points)"
    if not (np.all(np.isfinite(points)) and math.isfinite(t_s)):
        bad = int(np.count_nonzero(~np.isfinite(points)))
        return None, f"points_enu and time_s must be finite: {bad} non-finite coordinate(s), time_s={t_s}"
    try:
        return np.asarray(velocity_enu(t_s, points.reshape(-1, 3)), dtype=float), ""
    except Exception as exc:  # noqa: BLE001 - a model failure is reported to the client, not raised
        return None, f"current model failed at t={t_s} s: {exc}"


def marker_grid_enu(center_enu: np.ndarray, spacing_m: float, half_count: int, depths_m: np.ndarray) -> np.ndarray:
    """Points (N x 3, ENU m) of a square horizontal grid of (2n+1)² nodes around the centre, at each depth."""
    offsets = spacing_m * np.arange(-half_count, half_count + 1)
    ex, ny, dz = np.meshgrid(offsets, offsets, depths_m, indexing="ij")
    return np.column_stack([center_enu[0] + ex.ravel(), center_enu[1] + ny.ravel(), center_enu[2] - dz.ravel()])


@dataclass
class Arrows:
    """Current arrows: from `starts` to `tips` (N x 3, ENU m), shaft and head widths (m), and each arrow's speed
    over the fastest one (`levels`, 0..1: blue to red)."""

    starts: np.ndarray
    tips: np.ndarray
    shaft_m: float
    head_m: float
    levels: np.ndarray


def current_arrows(points_enu: np.ndarray, velocities_enu: np.ndarray, scale_s: float) -> Arrows:
    """Arrows from each point with a finite velocity to point + scale_s * v; widths 0.1 and 0.2 of the fastest
    arrow's length (a still field draws points, not a division by zero)."""
    finite = np.all(np.isfinite(velocities_enu), axis=1)
    points, velocities = points_enu[finite], velocities_enu[finite]
    speed = np.linalg.norm(velocities, axis=1)
    top = max(float(speed.max(initial=0.0)), 1e-9)
    return Arrows(points, points + scale_s * velocities, 0.1 * scale_s * top, 0.2 * scale_s * top, speed / top)


def grid_arrows(
    velocity_enu: CurrentField, t_s: float, points_enu: np.ndarray, scale_s: float
) -> tuple[Arrows | None, str]:
    """The arrows of the field at sim time `t_s` on the grid `points_enu` (current_arrows), or (None, why) if the
    model fails there."""
    try:
        velocities = np.asarray(velocity_enu(t_s, points_enu), dtype=float)
    except Exception as exc:  # noqa: BLE001 - the node lives on; its log says why the arrows are missing
        return None, f"current model failed ({exc})"
    return current_arrows(points_enu, velocities, scale_s), ""
