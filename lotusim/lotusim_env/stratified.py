"""Depth-stratified current (DAVE's "transient" ocean current [DAVE2023]): a table of
(depth, east, north) rows, each row's east and north velocity perturbed by its own seeded Gauss–Markov process,
interpolated linearly in depth between rows and held constant above the first and below the last row:

    v_c(t, d) = lerp_d( m_i + x_i(t) ),   dx_i = −μ x_i dt + σ dW_i   (x_i(0) stationary, see gauss_markov.py)

DAVE reads `north, east, depth` rows from a CSV whose first lines are comments (its
transientOceanCurrentDatabase.csv); we read that format (lines that are not three numbers are skipped) or an
inline list. DAVE's per-vehicle perturbation is white noise (its GM state is reset to the mean every update);
ours is the mean-reverting process the issue asks for. Vertical velocity is 0.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from lotusim_env.config import ConfigError, check_keys, get_choice, get_float, get_path, section
from lotusim_env.gauss_markov import OrnsteinUhlenbeck, parse_process


class StratifiedCurrent:
    """Current (ENU, m/s) from a depth table of mean (east, north) plus per-layer Gauss–Markov perturbations."""

    def __init__(self, depth_m: np.ndarray, mean_en: np.ndarray, process: OrnsteinUhlenbeck | None) -> None:
        """depth_m (L,) strictly increasing (m, positive down); mean_en (L, 2) east, north (m/s)."""
        self.depth_m = np.asarray(depth_m, dtype=float)
        self.mean_en = np.asarray(mean_en, dtype=float)
        self.process = process

    def layer_values(self, t_s: float) -> np.ndarray:
        """(L, 2) east, north velocity (m/s) of each table row at sim time t_s."""
        if self.process is None:
            return self.mean_en
        return self.process.sample(t_s)[0].reshape(-1, 2)

    def velocity_enu(self, t_s: float, points_enu: np.ndarray) -> np.ndarray:
        """Current (N x 3, m/s, ENU; up = 0) at N points (N x 3, ENU m, z up) at sim time t_s (s)."""
        points = np.asarray(points_enu, dtype=float).reshape(-1, 3)
        layers = self.layer_values(t_s)
        depth = -points[:, 2]
        out = np.zeros((points.shape[0], 3))
        out[:, 0] = np.interp(depth, self.depth_m, layers[:, 0])  # np.interp holds the end values outside
        out[:, 1] = np.interp(depth, self.depth_m, layers[:, 1])
        return out


def read_dave_table(path: Path, key: str) -> np.ndarray:
    """Rows (north, east, depth) of a DAVE current database CSV → array (L, 3) depth, east, north."""
    rows = []
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{key}: cannot read {path} as text: {exc}") from exc
    for line in text.splitlines():
        try:
            values = [float(v) for v in line.split(",")]
        except ValueError:
            continue  # DAVE's two info lines and header
        if len(values) == 3:
            north, east, depth = values
            rows.append((depth, east, north))
    if len(rows) < 1:
        raise ConfigError(f"{key}: {path} has no 'north, east, depth' rows")
    return np.array(rows)


STRATIFIED_KEYS = ("model", "layers", "file", "perturbation", "time_step_s", "initial", "seed")


def build_stratified(
    config: Mapping[str, Any], key: str, base_dir: Path | None, seed: np.random.SeedSequence
) -> StratifiedCurrent:
    """StratifiedCurrent from its configuration section (docs/environment.md, 'stratified')."""
    check_keys(config, STRATIFIED_KEYS, key)
    if ("layers" in config) == ("file" in config):
        raise ConfigError(f"{key}: give exactly one of layers (inline rows) or file (DAVE CSV)")
    if "file" in config:
        table = read_dave_table(get_path(config, "file", key, base_dir), f"{key}.file")
    else:
        layers = config["layers"]
        if not isinstance(layers, list) or not layers:
            raise ConfigError(f"{key}.layers: expected a list of {{depth_m, east_mps, north_mps}}, got {layers!r}")
        rows = []
        for i, layer in enumerate(layers):
            lk = f"{key}.layers[{i}]"
            layer = section(layer, lk)
            check_keys(layer, ("depth_m", "east_mps", "north_mps"), lk)
            rows.append(
                (
                    get_float(layer, "depth_m", lk, None),
                    get_float(layer, "east_mps", lk, 0.0),
                    get_float(layer, "north_mps", lk, 0.0),
                )
            )
        table = np.array(rows)
    order = np.argsort(table[:, 0])
    table = table[order]
    if np.any(np.diff(table[:, 0]) <= 0):
        raise ConfigError(f"{key}: layer depths must be distinct, got {table[:, 0].tolist()}")
    pert = section(config.get("perturbation"), f"{key}.perturbation")
    check_keys(pert, ("mu", "sigma", "stationary_std"), f"{key}.perturbation")
    spec = parse_process(pert, f"{key}.perturbation")
    process = None
    if spec.sigma > 0:
        process = OrnsteinUhlenbeck(
            mean=table[:, 1:].ravel(),
            mu_per_s=np.full(table[:, 1:].size, spec.mu_per_s),
            sigma=np.full(table[:, 1:].size, spec.sigma),
            time_step_s=get_float(config, "time_step_s", key, 1.0, minimum=0.0, strict_minimum=True),
            seed=seed,
            initial=get_choice(config, "initial", key, ("stationary", "mean"), "stationary"),
        )
    return StratifiedCurrent(table[:, 0], table[:, 1:], process)
