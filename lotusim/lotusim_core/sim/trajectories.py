"""Vessel trajectories from /lotusim/fleet_state, kept at a fixed sim-time period, and their plot
(plan view in `map` ENU and depth over time)."""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from lotusim_core.ros.ros_arrays import from_float64_array


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

    def plot(
        self,
        path: str,
        title: str = "",
        routes: dict[str, np.ndarray] | None = None,
        stations: list[str] | None = None,
        kinds: dict[str, str] | None = None,
    ) -> None:
        """Plan view and depth over time. routes: vessel -> (K, 2) planned waypoints (map ENU m), drawn beside its
        track; stations: vessels whose first position is their station; kinds: vessel -> controller type (one
        colour and legend entry per type when given)."""
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        routes, stations, kinds = routes or {}, set(stations or ()), kinds or {}
        fig, (plan_ax, depth_ax) = plt.subplots(1, 2, figsize=(14, 6.5), gridspec_kw={"width_ratios": [1.5, 1]})
        many = len(self._rows) > 30
        palette = plt.rcParams["axes.prop_cycle"].by_key()["color"]
        colours = {k: palette[i % len(palette)] for i, k in enumerate(sorted(set(kinds.values())))}
        labelled: set[str] = set()
        for name in self.names():
            t, x, y, z = self.track(name).T
            kind = kinds.get(name)
            label = None
            if kind is not None and kind not in labelled:
                label = f"{kind} ({sum(1 for k in kinds.values() if k == kind)})"
                labelled.add(kind)
            elif kind is None and not many:
                label = name
            colour = colours.get(kind) if kind is not None else None
            line = plan_ax.plot(x, y, lw=0.8 if many else 1.5, label=label, color=colour)[0]
            plan_ax.plot(x[-1:], y[-1:], "o", color=line.get_color(), ms=3)
            depth_ax.plot(t, -z, lw=0.8, color=line.get_color())
            if name in stations:
                plan_ax.plot(x[:1], y[:1], "+", color="k", ms=5, mew=0.8,
                             label=None if "station" in labelled else "ROV station")  # fmt: skip
                labelled.add("station")
        for name, wp in routes.items():
            closed = np.vstack([wp, wp[:1]])
            plan_ax.plot(closed[:, 0], closed[:, 1], "--", color="0.35", lw=0.9,
                         label=None if "route" in labelled else "planned USV route (waypoints)")  # fmt: skip
            plan_ax.plot(wp[:, 0], wp[:, 1], "s", color="0.35", ms=3.5, mfc="none")
            plan_ax.annotate(name, wp[0], textcoords="offset points", xytext=(3, 3), fontsize=6, color="0.25")
            labelled.add("route")
        plan_ax.set_xlabel("x east (m)")
        plan_ax.set_ylabel("y north (m)")
        plan_ax.set_aspect("equal", adjustable="datalim")
        plan_ax.grid(True, alpha=0.3)
        plan_ax.set_title("plan view (map, ENU); dot = last position")
        if labelled or not many:
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
