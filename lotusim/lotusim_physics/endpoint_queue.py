"""The per-vessel endpoints of a dynamics worker are created and destroyed in the background, within a budget
of wall time per call (ROS-free: the node passes the functions that create and destroy them).

Creating a DDS reader or writer costs about a millisecond here, and a vessel has several (one per actuator, the
wrench, the odometry): 1,000 vessels would block the simulation for seconds. So a create returns as soon as the
vessel is in the physics and the fleet state, and its topics appear over the next moments, in creation order.
Destroying one costs as much (about 8 ms each here: destroying them at once made a 5,000-vessel delete block the
worker for a minute), so a deleted vessel's endpoints are destroyed the same way (docs/simulation.md).
"""

from __future__ import annotations

import time
from collections.abc import Callable


class EndpointQueue:
    """Vessels whose endpoints are still to be created (in creation order) and deleted vessels' endpoints still
    to be destroyed. `clock`: wall time in s."""

    def __init__(self, clock: Callable[[], float] = time.perf_counter) -> None:
        self.pending: dict[str, None] = {}  # an ordered set of vessel names
        self.doomed: list = []  # endpoints, destroyed last first
        self._clock = clock

    def add(self, name: str) -> None:
        """Vessel `name` was created: its endpoints are to be made."""
        self.pending[name] = None

    def retire(self, name: str, endpoints: list) -> None:
        """Vessel `name` was deleted: its endpoints made so far are to be destroyed, none is to be made."""
        self.pending.pop(name, None)
        self.doomed += endpoints

    @property
    def backlog(self) -> int:
        """The work left: vessels whose endpoints are to be made plus endpoints to be destroyed."""
        return len(self.pending) + len(self.doomed)

    def abandon(self) -> None:
        """The node goes away: nothing is to be made or destroyed any more (its destruction takes its endpoints)."""
        self.pending.clear()
        self.doomed.clear()

    def work(self, budget_s: float, create: Callable[[str], None], destroy: Callable[[object], None]) -> None:
        """Destroy doomed endpoints, then create pending vessels' endpoints (create(name): all of one vessel),
        while the call has used less than `budget_s` wall seconds (the last one done may pass it)."""
        clock = self._clock
        deadline = clock() + budget_s
        while self.doomed and clock() < deadline:
            destroy(self.doomed.pop())
        while self.pending and clock() < deadline:
            name = next(iter(self.pending))
            del self.pending[name]
            create(name)
