"""Which vessel has which slot, and its latest state: the sensor layer's fleet table (ROS-free).

A slot is a row index shared by every per-vessel array of the sensor layer (the vessel state here, the sensor
banks of lotusim_sensors.samplers, the node's publishers). A vessel exists while its name is in its worker's
latest fleet state: it takes a slot when it first appears and frees it when it leaves the list of the worker
that published it last (a vessel moving to another worker keeps its slot). Freed slots are reused, the last
freed first; capacity doubles when none is free.

State rows: position (m, `map` ENU), orientation (unit quaternion x, y, z, w, base_link FLU -> ENU), twist and
acceleration (linear m/s, m/s^2 then angular rad/s, rad/s^2, base_link FLU), water current (m/s, ENU).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

IDENTITY_QUAT = (0.0, 0.0, 0.0, 1.0)


@dataclass
class RosterUpdate:
    """What one worker's list of names changed: its slots (in list order), then the vessels it added and removed
    as (name, slot). A removed vessel's slot may be an added vessel's slot: handle `removed` before `added`. seen:
    vessels announced by their roster (Roster.announce) that a fleet state lists for the first time."""

    slots: np.ndarray
    added: list[tuple[str, int]]
    removed: list[tuple[str, int]]
    seen: list[tuple[str, int]] = field(default_factory=list)


class Roster:
    """Slots of the vessels of every worker, and their state rows."""

    def __init__(self, capacity: int = 16) -> None:
        self.slot_of: dict[str, int] = {}
        self.names: list[str | None] = [None] * capacity
        self.owner: dict[str, str] = {}  # vessel -> worker that published it last
        self._free: list[int] = list(range(capacity - 1, -1, -1))
        self._worker_names: dict[str, tuple[str, ...]] = {}
        self._worker_slots: dict[str, np.ndarray] = {}
        self.announced: dict[str, str] = {}  # vessel -> worker: listed by its roster, by no fleet state yet
        self.pos = np.zeros((capacity, 3))
        self.quat = np.tile(IDENTITY_QUAT, (capacity, 1))
        self.twist = np.zeros((capacity, 6))
        self.accel = np.zeros((capacity, 6))
        self.current = np.zeros((capacity, 3))
        self.alive = np.zeros(capacity, dtype=bool)
        # hull boxes (lotusim_core.base.hull_box), base_link FLU: half extents (m; 0: none known) and box centre
        self.hull_half_flu = np.zeros((capacity, 3))
        self.hull_centre_flu = np.zeros((capacity, 3))

    @property
    def capacity(self) -> int:
        """Number of slots (rows of every per-vessel array)."""
        return len(self.names)

    def update(self, worker: str, names: tuple[str, ...]) -> RosterUpdate:
        """Take `worker`'s latest list of vessel names: the slots of `names` and the vessels added and removed.
        Unchanged lists cost one tuple comparison (the same slot array is returned)."""
        if self._worker_names.get(worker) == names:
            return RosterUpdate(self._worker_slots[worker], [], [])
        previous = set(self._worker_names.get(worker, ()))
        removed = [(gone, self._remove(gone)) for gone in previous - set(names) if self.owner.get(gone) == worker]
        added, seen = [], []
        slots = np.empty(len(names), dtype=np.intp)
        for i, name in enumerate(names):
            slot = self.slot_of.get(name)
            if slot is None:
                slot = self._add(name)
                added.append((name, slot))
            elif self.announced.pop(name, None) is not None:  # announced by its roster, now in a fleet state
                self.alive[slot] = True
                seen.append((name, slot))
            self.owner[name] = worker
            slots[i] = slot
        self._worker_names[worker], self._worker_slots[worker] = names, slots
        return RosterUpdate(slots, added, removed, seen)

    def announce(self, worker: str, names: list[str]) -> RosterUpdate:
        """Take `worker`'s latest roster (latched, so also heard by a node that starts late): slots for the vessels
        it lists that no fleet state has shown yet (not alive: no state until a fleet state lists them, so no
        other vessel's sensor sees them), so that their topics exist before the sim time runs; and the announced
        vessels it no longer lists removed. `slots` is empty: the fleet state gives the row order."""
        listed = set(names)
        dropped = [gone for gone, w in self.announced.items() if w == worker and gone not in listed]
        removed = [(gone, self._remove(gone)) for gone in dropped]
        added = []
        for name in names:
            if name not in self.slot_of:
                slot = self._add(name)
                self.alive[slot] = False
                self.owner[name] = self.announced[name] = worker
                added.append((name, slot))
        return RosterUpdate(np.empty(0, dtype=np.intp), added, removed)

    def _add(self, name: str) -> int:
        if not self._free:
            self._grow(2 * self.capacity)
        slot = self._free.pop()
        self.slot_of[name], self.names[slot] = slot, name
        self.alive[slot] = True
        return slot

    def _remove(self, name: str) -> int:
        slot = self.slot_of.pop(name)
        self.owner.pop(name, None)
        self.announced.pop(name, None)
        self.names[slot] = None
        self.alive[slot] = False
        self.hull_half_flu[slot] = 0.0
        self._free.append(slot)
        return slot

    def _grow(self, capacity: int) -> None:
        old = self.capacity
        self.names += [None] * (capacity - old)
        self._free += list(range(capacity - 1, old - 1, -1))
        for attr in ("pos", "twist", "accel", "current", "alive", "hull_half_flu", "hull_centre_flu"):
            setattr(self, attr, grown(getattr(self, attr), capacity))
        quat = np.tile(IDENTITY_QUAT, (capacity, 1))
        quat[:old] = self.quat
        self.quat = quat

    def set_hull(self, slot: int, half_extents_flu: np.ndarray, centre_flu: np.ndarray) -> None:
        """The hull box of the vessel at `slot`: half extents (m) and centre (m from base_link), base_link FLU."""
        self.hull_half_flu[slot] = half_extents_flu
        self.hull_centre_flu[slot] = centre_flu

    def set_state(
        self,
        slots: np.ndarray,
        pos: np.ndarray,
        quat: np.ndarray,
        twist: np.ndarray,
        accel: np.ndarray,
        current: np.ndarray | None,
    ) -> np.ndarray:
        """Store the state rows of `slots` (N, 3 / 4 / 6 / 6 / 3 or None: not given) and return the slots kept: the
        rows with finite values and a quaternion of norm > 0.5 (normalised here); the other rows are skipped."""
        norm = np.linalg.norm(quat, axis=1)
        finite = np.isfinite(pos).all(1) & np.isfinite(quat).all(1) & np.isfinite(twist).all(1)
        finite &= np.isfinite(accel).all(1) & (norm > 0.5)
        kept = slots[finite]
        self.pos[kept] = pos[finite]
        self.quat[kept] = quat[finite] / norm[finite, None]
        self.twist[kept] = twist[finite]
        self.accel[kept] = accel[finite]
        if current is not None:
            self.current[kept] = current[finite]
        return kept


def grown(a: np.ndarray, capacity: int) -> np.ndarray:
    """`a` with `capacity` rows: its rows first, then zero rows (same dtype and row shape)."""
    out = np.zeros((capacity, *a.shape[1:]), dtype=a.dtype)
    out[: len(a)] = a
    return out


def shape_errors(n: int, arrays: dict[str, tuple[int, int]]) -> list[str]:
    """Why a fleet state's flat arrays {name: (length, values per vessel)} do not hold `n` rows ([] if they do)."""
    return [f"{k} has {size} values, expected {n} x {c}" for k, (size, c) in arrays.items() if size != n * c]
