"""Actuator commands of many vessels in one message (ROS-free side of the worker's /lotusim/thruster_commands).

A controller host sends the commands of all its vessels as one sensor_msgs/JointState per control step instead of
one std_msgs/Float64 per actuator: name[i] names an actuator as its command topic does without the `/cmd`,
`<vessel>/thrusters/<thruster>` or `<vessel>/fins/<fin>` (`<vessel>/<thruster>` is read as a thruster too), and
velocity[i] is the value that topic would carry (a thruster's command unit, rad/s for a rotor; rad for a fin).
Each worker takes the names of its own vessels and ignores the others (several workers share the topic). The
per-actuator topics stay: an actuator's last command wins, whichever way it came.

The layout of a list of names (where each command goes in the fleet's actuator pools) is worked out once per fleet
layout; a message is then two fancy-indexed assignments, whatever the number of vessels.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from lotusim_physics.worker import FleetWorker

MAX_LAYOUTS = 64  # lists of names remembered per fleet layout (a host sends one or a few)
KINDS = {"thrusters": 0, "fins": 1}


@dataclass(frozen=True)
class _Layout:
    """Where the commands of one list of names go: per kind (thrusters, fins) the positions in the message, the
    pool rows they are written to and the vessel (index into `vessels`) each belongs to."""

    positions: tuple[np.ndarray, np.ndarray]
    rows: tuple[np.ndarray, np.ndarray]
    owners: tuple[np.ndarray, np.ndarray]
    vessels: list[str]


class ThrusterCommandBatch:
    """apply(names, values): hold the commands of a batch on `worker`'s vessels' thrusters and fins."""

    def __init__(self, worker: FleetWorker) -> None:
        self.worker = worker
        self._layouts: dict[tuple[str, ...], _Layout] = {}
        self._version = -1

    def apply(self, names: Sequence[str], values: Sequence[float]) -> str:
        """Hold the commands; returns why some were refused (non-finite, unknown actuator, lengths), else "".
        A vessel with a non-finite command keeps all its last valid commands."""
        if len(names) != len(values):
            return f"thruster_commands: {len(names)} names but {len(values)} values; ignored"
        if self._version != self.worker.layout_version:
            self._layouts.clear()
            self._version = self.worker.layout_version
        key = tuple(names)
        layout = self._layouts.get(key)
        problems = []
        if layout is None:  # a new list of names: laid out once, its unknown names reported once
            layout, problem = self._layout(key)
            if len(self._layouts) >= MAX_LAYOUTS:
                self._layouts.clear()
            self._layouts[key] = layout
            problems += [problem] if problem else []
        v = np.asarray(values, dtype=float)
        cmd = [v[p] for p in layout.positions]
        good = [np.isfinite(c) for c in cmd]
        if not (good[0].all() and good[1].all()):  # rare: find the vessels and keep their last commands
            bad = np.unique(np.concatenate([o[~g] for o, g in zip(layout.owners, good, strict=True)]))
            for b in bad.tolist():
                mine = [np.flatnonzero(o == b) for o in layout.owners]
                shown = np.concatenate([c[m] for c, m in zip(cmd, mine, strict=True)]).tolist()
                problems.append(f"{layout.vessels[b]}: non-finite actuator commands {shown} rejected")
            keep = [~np.isin(o, bad) for o in layout.owners]
            rows = [r[k] for r, k in zip(layout.rows, keep, strict=True)]
            cmd = [c[k] for c, k in zip(cmd, keep, strict=True)]
        else:
            rows = layout.rows
        self.worker.fleet.write_commands(rows[0], cmd[0], rows[1], cmd[1])
        return "; ".join(problems)

    def _layout(self, names: tuple[str, ...]) -> tuple[_Layout, str]:
        """The actuators of this worker's vessels named in `names` (unknown actuators of a vessel that is here are
        reported once per layout; other workers' vessels are skipped)."""
        found: tuple[list, list] = ([], [])  # per kind: (position, pool row, owner)
        vessels: dict[str, int] = {}
        unknown = []
        for k, full in enumerate(names):
            vessel, kind, actuator = _parse(full)
            if vessel not in self.worker.vessels:
                continue
            spec = self.worker.fleet.spec(vessel)
            actuators = spec.thrusters if kind == 0 else spec.fins
            index = next((i for i, a in enumerate(actuators) if a.name == actuator), None)
            if index is None:
                unknown.append(full)
                continue
            rows = self.worker.fleet.actuator_rows_of(vessel)[kind]
            found[kind].append((k, int(rows[index]), vessels.setdefault(vessel, len(vessels))))
        columns = [np.array(f, dtype=np.int64).reshape(-1, 3).T for f in found]
        layout = _Layout(
            tuple(c[0] for c in columns), tuple(c[1] for c in columns), tuple(c[2] for c in columns), list(vessels)
        )
        problem = f"thruster_commands: no such actuator(s) {unknown}; ignored" if unknown else ""
        return layout, problem


def _parse(name: str) -> tuple[str, int, str]:
    """(vessel, kind 0 thruster / 1 fin, actuator name) of `<vessel>/thrusters/<t>`, `<vessel>/fins/<f>` or
    `<vessel>/<t>`."""
    parts = name.split("/")
    if len(parts) == 3 and parts[1] in KINDS:
        return parts[0], KINDS[parts[1]], parts[2]
    vessel, _, actuator = name.rpartition("/")
    return vessel, 0, actuator
