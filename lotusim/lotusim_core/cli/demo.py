"""`lotusim demo`'s watch on the controllers: subscriptions to their status topics (aggregated by
lotusim_core.sim.demo_progress), a progress line every few seconds of wall time, the final table with the achieved
real-time factor, and the routes and stations for the trajectory plot."""

from __future__ import annotations

import time

import numpy as np

from lotusim_core.sim.demo_progress import STATION, STATUS_TOPICS, WAYPOINTS, FleetProgress


class DemoWatch:
    """Subscribes `node` to every controller's status topic of `plan` (the subscription makes the controllers
    that publish only while subscribed publish)."""

    def __init__(self, node, plan, target_rtf: float, period_s: float = 5.0) -> None:
        from std_msgs.msg import Float64MultiArray

        self.plan, self.target_rtf, self.period_s = plan, target_rtf, period_s
        controllers = [c for c in plan.controllers if c.type in STATUS_TOPICS]
        expected: dict[str, int] = {}
        for c in controllers:
            expected[c.type] = expected.get(c.type, 0) + 1
        self.progress = FleetProgress(expected)
        self._next = time.monotonic() + period_s
        for c in controllers:
            node.create_subscription(
                Float64MultiArray,
                f"/{c.vessel}/{STATUS_TOPICS[c.type]}",
                lambda m, k=c.type, v=c.vessel: self.progress.add(k, v, m.data),
                1,
            )

    def tick(self, sim_s: float) -> None:
        """Print the progress line when `period_s` of wall time has passed since the last one."""
        now = time.monotonic()
        if now >= self._next:
            self._next = now + self.period_s
            print(f"\nlotusim: progress at sim {sim_s:6.1f} s | {self.progress.line()}", flush=True)

    def finish(self, sim_s: float, run_wall_s: float) -> dict:
        """Print the per-controller table and the achieved RTF of the run (spawning excluded); return both."""
        achieved = sim_s / run_wall_s if run_wall_s > 0 else 0.0
        print(f"lotusim: controllers after {sim_s:.1f} s of sim time:\n{self.progress.table()}", flush=True)
        verdict = "held" if achieved >= 0.95 * self.target_rtf else "FELL SHORT of the target"
        print(
            f"lotusim: achieved RTF {achieved:.2f} over the run ({sim_s:.1f} s of sim time in {run_wall_s:.1f} s "
            f"of wall time, spawning excluded); target {self.target_rtf:g}: {verdict}",
            flush=True,
        )
        return {
            "achieved_rtf": round(achieved, 3),
            "usv": self.progress.usv(),
            "auv": self.progress.auv(),
            "rov": self.progress.rov(),
        }

    def plot_extras(self) -> dict:
        """The trajectory plot's planned routes (USV waypoints, map ENU m), station keepers and controller
        types per vessel."""
        routes = {
            c.vessel: np.asarray(c.setpoints["waypoints_enu"], dtype=float).reshape(-1, 2)
            for c in self.plan.controllers
            if c.type == WAYPOINTS and c.setpoints.get("waypoints_enu")
        }
        stations = [c.vessel for c in self.plan.controllers if c.type == STATION]
        kinds = {c.vessel: c.type for c in self.plan.controllers}
        return {"routes": routes, "stations": stations, "kinds": kinds}
