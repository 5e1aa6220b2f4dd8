"""Vessel trajectories from /lotusim/fleet_state, kept at a fixed sim-time period, and their plot
(plan view in `map` ENU and depth over time)."""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from lotusim_core.ros_arrays import from_float64_array


class TrajectoryLog:
    """Positions (ENU m) per vessel, one sample per `period_s` of sim time per worker."""

    def __init__(self, period_s: float = 1.0) -> None:
        self.period_s = period_s
        self._next: dict[str, float] = {}
        self._rows: dict[str, list[tuple[float, float, float, float]]] = defaultdict(list)

    def add(self, msg) -> None:
        t = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
        if t < self._next.get(msg.worker, -1.0):
            return
        self._next[msg.worker] = t + self.period_s
        positions = from_float64_array(msg.position, 3)
        for name, (x, y, z) in zip(msg.names, positions, strict=True):
            self._rows[name].append((t, x, y, z))

    def names(self) -> list[str]:
        return sorted(self._rows)

    def track(self, name: str) -> np.ndarray:
        """(K, 4) array of t (s), x east, y north, z up (m)."""
        return np.asarray(self._rows[name], dtype=float).reshape(-1, 4)

    def plot(self, path: str, title: str = "") -> None:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, (plan_ax, depth_ax) = plt.subplots(1, 2, figsize=(12, 5.5), gridspec_kw={"width_ratios": [1.3, 1]})
        many = len(self._rows) > 30
        for name in self.names():
            t, x, y, z = self.track(name).T
            line = plan_ax.plot(x, y, lw=0.8 if many else 1.5, label=None if many else name)[0]
            plan_ax.plot(x[-1:], y[-1:], "o", color=line.get_color(), ms=3)
            depth_ax.plot(t, -z, lw=0.8, color=line.get_color())
        plan_ax.set_xlabel("x east (m)")
        plan_ax.set_ylabel("y north (m)")
        plan_ax.set_aspect("equal", adjustable="datalim")
        plan_ax.grid(True, alpha=0.3)
        plan_ax.set_title("plan view (map, ENU); dot = last position")
        if not many:
            plan_ax.legend(fontsize=7, loc="best")
        depth_ax.invert_yaxis()
        depth_ax.set_xlabel("sim time (s)")
        depth_ax.set_ylabel("depth (m)")
        depth_ax.grid(True, alpha=0.3)
        depth_ax.set_title("depth")
        fig.suptitle(title or "lotusim trajectories")
        fig.tight_layout()
        fig.savefig(path, dpi=110)
        plt.close(fig)
