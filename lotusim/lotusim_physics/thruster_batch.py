"""Thruster commands of many vessels in one message (ROS-free side of the worker's /lotusim/thruster_commands).

A controller host that flies many drones sends their rotor commands as one sensor_msgs/JointState per control
step instead of one std_msgs/Float64 per rotor: name[i] = "<vessel>/<thruster>" (the thruster's name in the
vehicle file), velocity[i] = its command in the thruster's command unit (the value `<vessel>/thrusters/<thruster>/cmd`
would carry: rad/s for a rotor). Each worker takes the names of its own vessels and ignores the others (several
workers share the topic). The per-thruster topics stay: a vessel's last command wins, whichever way it came.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from lotusim_physics.worker import FleetWorker


@dataclass(frozen=True)
class _VesselSlice:
    """Where one vessel's commands are in a batch: positions in the message, indices of its thrusters."""

    vessel: str
    positions: np.ndarray
    thrusters: np.ndarray


class ThrusterCommandBatch:
    """apply(names, values): hold the commands of a batch on `worker`'s vessels; the layout of a list of names is
    worked out once (per fleet layout) and reused for every message with the same names."""

    def __init__(self, worker: FleetWorker) -> None:
        self.worker = worker
        self._layouts: dict[tuple[str, ...], list[_VesselSlice]] = {}
        self._version = -1

    def apply(self, names: Sequence[str], values: Sequence[float]) -> str:
        """Hold the commands; returns why some were refused (non-finite, unknown thruster, lengths), else ""."""
        if len(names) != len(values):
            return f"thruster_commands: {len(names)} names but {len(values)} values; ignored"
        if self._version != self.worker.layout_version:
            self._layouts.clear()
            self._version = self.worker.layout_version
        key = tuple(names)
        slices = self._layouts.get(key)
        problems = []
        if slices is None:  # a new list of names: laid out once, its unknown names reported once
            slices, problem = self._layout(key)
            self._layouts[key] = slices
            problems += [problem] if problem else []
        v = np.asarray(values, dtype=float)
        vessels = self.worker.vessels
        for s in slices:
            cmd = v[s.positions]
            if not np.all(np.isfinite(cmd)):
                problems.append(f"{s.vessel}: non-finite thruster commands {cmd.tolist()} rejected")
                continue
            entry = vessels.get(s.vessel)
            if entry is None:
                continue
            entry.thruster_cmd[s.thrusters] = cmd
            self.worker.fleet.set_thruster_commands(s.vessel, entry.thruster_cmd)
        return "; ".join(problems)

    def _layout(self, names: tuple[str, ...]) -> tuple[list[_VesselSlice], str]:
        """The vessels of this worker named in `names` and where their thrusters are (unknown thrusters of a vessel
        that is here are reported once per layout)."""
        by_vessel: dict[str, tuple[list[int], list[int]]] = {}
        unknown = []
        for k, full in enumerate(names):
            vessel, _, thruster = full.rpartition("/")
            if vessel not in self.worker.vessels:
                continue
            index = {t.name: i for i, t in enumerate(self.worker.fleet.spec(vessel).thrusters)}.get(thruster)
            if index is None:
                unknown.append(full)
                continue
            positions, thrusters = by_vessel.setdefault(vessel, ([], []))
            positions.append(k)
            thrusters.append(index)
        slices = [_VesselSlice(v, np.array(p), np.array(t)) for v, (p, t) in by_vessel.items()]
        problem = f"thruster_commands: no such thruster(s) {unknown}; ignored" if unknown else ""
        return slices, problem
