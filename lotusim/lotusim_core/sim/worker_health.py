"""Which dynamics workers are alive, which were restarted, and where their vessels were last seen (ROS-free).

The MAS server feeds it every worker's /lotusim/stats (its heartbeat, `stats_rate_hz` of wall time) and the
poses the workers list. A worker silent for `timeout_s` of wall time is *down*: its vessels are listed with
STATUS_WORKER_DOWN, creates go to the other workers, deletes of its vessels are done in the registry alone. A
worker whose stats show a new process (its `wall_time_s`, the wall time since the process started, went back)
or that speaks again after being down is *back*: the MAS server compares its vessels with the registry and
re-creates the missing ones at their last known poses (`VesselSnapshot`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum

# how long the MAS server and the fleet commands wait for a scenario's workers to report (wall s): a cold start
# compiles the physics kernels (20 s to minutes)
WORKER_WAIT_S = 300.0
HUNG_FACTOR = 4.0  # a worker silent for this many worker timeouts is down even if its node is still in the graph


class Heard(Enum):
    """What a stats message says about its worker."""

    ALIVE = "alive"  # as before
    NEW = "new"  # first seen (start-up, or this MAS server was restarted)
    BACK = "back"  # speaks again after being down (same process: stalled, or its stats were lost)
    RESTARTED = "restarted"  # a new process (it holds none of its vessels)


@dataclass
class VesselSnapshot:
    """What a vessel needs to be created again: model, overrides, last known pose in `map` (ENU, m; orientation
    map <- base_link FLU, x y z w) and the wall time (monotonic s) it was known at."""

    model: str
    overrides_yaml: str
    position: tuple[float, float, float]
    orientation: tuple[float, float, float, float]
    known_at: float


@dataclass
class _Worker:
    last_heard: float  # monotonic s
    wall_time_s: float  # the worker's own wall time since its start, in its last stats
    down_since: float | None = None  # monotonic s
    deleted_while_down: set[str] = field(default_factory=set)


class WorkerHealth:
    """Heartbeats, down / back / restarted, and the vessels' last known poses."""

    def __init__(self, timeout_s: float) -> None:
        self.timeout_s = timeout_s
        self._workers: dict[str, _Worker] = {}
        self.snapshots: dict[str, VesselSnapshot] = {}
        self.lost: dict[str, str] = {}  # vessel -> why it could not be restored

    def heard(self, worker: str, wall_time_s: float, now: float) -> Heard:
        """Record a stats message of `worker` (its `wall_time_s`) received at monotonic `now`."""
        state = self._workers.get(worker)
        if state is None:
            self._workers[worker] = _Worker(now, wall_time_s)
            return Heard.NEW
        restarted = wall_time_s + 0.5 < state.wall_time_s  # its clock since start went back: a new process
        was_down = state.down_since is not None
        state.last_heard, state.wall_time_s, state.down_since = now, wall_time_s, None
        if restarted:
            return Heard.RESTARTED
        return Heard.BACK if was_down else Heard.ALIVE

    def check(self, now: float, in_graph: Callable[[str], bool] = lambda _w: False) -> list[str]:
        """The workers that have just gone down: silent for more than timeout_s and gone from the ROS graph
        (`in_graph`: its service is still matched), or silent for HUNG_FACTOR * timeout_s (a hung process). A
        worker busy for a few seconds (loading its compiled physics, a large spawn) keeps its node and is not
        down; a killed one leaves the graph when DDS notices (at once for a clean exit, at the participant's
        lease expiry for kill -9)."""
        gone = []
        for name, state in self._workers.items():
            silent = now - state.last_heard
            if (
                state.down_since is None
                and silent > self.timeout_s
                and (silent > HUNG_FACTOR * self.timeout_s or not in_graph(name))
            ):
                state.down_since = now
                gone.append(name)
        return gone

    def quiet(self, now: float) -> set[str]:
        """Workers silent for more than timeout_s that are not (yet) down: maybe killed, maybe busy."""
        return {n for n, s in self._workers.items() if s.down_since is None and now - s.last_heard > self.timeout_s}

    def is_down(self, worker: str) -> bool:
        state = self._workers.get(worker)
        return state is not None and state.down_since is not None

    def down(self) -> set[str]:
        return {name for name, state in self._workers.items() if state.down_since is not None}

    def down_reason(self, worker: str, now: float) -> str:
        state = self._workers[worker]
        silent = now - state.last_heard
        return (
            f"worker {worker} down (no stats for {silent:.0f} s): the vessel is re-created at its last known pose "
            "when the worker is back"
        )

    def deleted_while_down(self, worker: str, name: str) -> None:
        self._workers[worker].deleted_while_down.add(name)

    def take_deleted_while_down(self, worker: str) -> set[str]:
        state = self._workers[worker]
        names, state.deleted_while_down = state.deleted_while_down, set()
        return names

    # --- last known poses -------------------------------------------------------------------------------------
    def remember(self, name: str, model: str, overrides_yaml: str, pose, now: float) -> None:
        """Record a vessel's pose (geometry_msgs/Pose in `map`, ENU) if it is finite."""
        p, o = pose.position, pose.orientation
        values = (p.x, p.y, p.z, o.x, o.y, o.z, o.w)
        if all(math.isfinite(v) for v in values) and any((o.x, o.y, o.z, o.w)):
            self.snapshots[name] = VesselSnapshot(model, overrides_yaml, values[:3], values[3:], now)
            self.lost.pop(name, None)

    def forget(self, name: str) -> None:
        self.snapshots.pop(name, None)
        self.lost.pop(name, None)
