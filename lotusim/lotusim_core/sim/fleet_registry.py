"""The MAS server's fleet registry: which vessels exist, of which model, on which worker, and the planning of
bulk fleet commands (validation, automatic names, geodetic -> ENU poses, worker assignment).

Planning is separate from execution so that every item is judged on its own: an invalid item gets its result
(code and reason, lotusim_interfaces/msg/ItemResult) while the valid items of the same goal go to the workers.
Items of one goal are planned in order, so "create x, then move x, then delete x" in one goal works.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np
import yaml

from lotusim_core.base import frames, safe_yaml
from lotusim_core.base.catalogue import apply_overrides, list_models, load_vehicle
from lotusim_core.base.geodesy import GeodeticOrigin, geodetic_to_enu
from lotusim_core.base.names import name_problem
from lotusim_core.sim.spawn_checks import seabed_depths_m, sensors_problem, start_problem
from lotusim_env.environment import build_environment
from lotusim_interfaces.msg import FleetCommandItem as Item
from lotusim_interfaces.msg import ItemResult, VesselDescription


@dataclass
class RegistryEntry:
    name: str
    model: str
    domain: str
    worker: str


@dataclass
class PlannedItem:
    """A valid item, ready for its worker (pose already in ENU)."""

    index: int
    item: Item
    worker: str
    domain: str = ""


@dataclass
class CommandPlan:
    """What one fleet command goal will do: the items refused up front (by goal index), the items accepted with the
    worker each goes to, and the vessel names reserved until the workers answer."""

    refused: dict[int, ItemResult] = field(default_factory=dict)
    accepted: list[PlannedItem] = field(default_factory=list)
    reserved: set[str] = field(default_factory=set)

    def batches(self, size: int) -> Iterator[list[PlannedItem]]:
        """Each worker's items in goal order, at most `size` per batch; the workers' batches taken in turn.

        Grouped by worker, not by runs of consecutive items: the least-loaded choice alternates between workers,
        and runs would make one request per item (99 requests for 99 vessels on 2 workers), more than a service's
        queue holds (its answers then overwrite each other and are lost). An item only touches its own worker's
        fleet, so each worker still carries its items out in goal order."""
        per_worker: dict[str, list[PlannedItem]] = {}
        for planned in self.accepted:
            per_worker.setdefault(planned.worker, []).append(planned)
        chunks = [[items[k : k + size] for k in range(0, len(items), max(size, 1))] for items in per_worker.values()]
        for turn in range(max((len(c) for c in chunks), default=0)):
            for worker_chunks in chunks:
                if turn < len(worker_chunks):
                    yield worker_chunks[turn]


def refuse(name: str, code: int, reason: str) -> ItemResult:
    return ItemResult(name=name, ok=False, code=code, reason=reason)


class FleetRegistry:
    """Vessels by name, workers by load; plans bulk commands. Not thread-safe: one executor thread uses it."""

    def __init__(self, origin: GeodeticOrigin, max_vessels: int = 10_000) -> None:
        self.origin = origin
        self.max_vessels = max_vessels
        self.workers: dict[str, int] = {}
        self.down: set[str] = set()  # workers that stopped reporting (lotusim_core.sim.failover): no creates go there
        self.quiet: set[str] = set()  # workers silent for a while, not yet down: creates go elsewhere if possible
        self._entries: dict[str, RegistryEntry] = {}
        self._reserved: set[str] = set()
        self._models = set(list_models())
        self._domains: dict[str, str] = {}
        self.environment = build_environment(None)  # the latest /lotusim/environment (its sea floor for creates)

    def set_environment(self, config_yaml: str) -> None:
        """Use the environment configuration of /lotusim/environment; ValueError / yaml.YAMLError if invalid."""
        self.environment = build_environment(safe_yaml.load(config_yaml) or {})

    # --- bookkeeping --------------------------------------------------------------------------------------------
    def add_worker(self, worker: str) -> None:
        self.workers.setdefault(worker, 0)

    def entries(self) -> list[RegistryEntry]:
        return list(self._entries.values())

    def adopt(self, name: str, model: str, domain: str, worker: str) -> None:
        """Record a vessel that a worker already has (registry rebuild after a restart)."""
        self.add_worker(worker)
        if name not in self._entries:
            self._entries[name] = RegistryEntry(name, model, domain, worker)
            self.workers[worker] += 1

    def clear_vessels(self) -> None:
        self._entries.clear()
        self.workers = dict.fromkeys(self.workers, 0)

    def commit(self, planned: PlannedItem) -> None:
        """Apply an item that its worker carried out."""
        vessel = planned.item.vessel
        if planned.item.command == Item.CREATE:
            self._entries[vessel.name] = RegistryEntry(vessel.name, vessel.model, planned.domain, planned.worker)
            self.workers[planned.worker] = self.workers.get(planned.worker, 0) + 1
            self._reserved.discard(vessel.name)
        elif planned.item.command == Item.DELETE:
            entry = self._entries.pop(vessel.name, None)
            if entry is not None:
                self.workers[entry.worker] -= 1

    def release(self, plan: CommandPlan) -> None:
        """Free the names a plan reserved for creates that did not happen."""
        self._reserved -= plan.reserved

    # --- planning ----------------------------------------------------------------------------------------------
    def plan(self, items: list[Item]) -> CommandPlan:
        plan = CommandPlan()
        alive = {name: entry.worker for name, entry in self._entries.items()}  # as the goal will leave it
        others = frozenset(self._reserved)  # names of creates of other goals still in flight
        load = dict(self.workers)
        for index, item in enumerate(items):  # planning fills in names and ENU poses in place (the goal's copy)
            try:
                outcome = self._plan_item(index, item, alive, others, load, plan)
            except Exception as exc:  # noqa: BLE001 - one item's unforeseen error must not abort the goal
                outcome = refuse(item.vessel.name, ItemResult.INTERNAL_ERROR, f"{type(exc).__name__}: {exc}")
            if isinstance(outcome, ItemResult):
                plan.refused[index] = outcome
            else:
                plan.accepted.append(outcome)
        return plan

    def _plan_item(self, index: int, item: Item, alive: dict, others: frozenset, load: dict, plan: CommandPlan):
        """One item's PlannedItem, or its refusal (ItemResult); `alive` and `load` as the goal leaves them."""
        name = item.vessel.name
        if item.command == Item.CREATE:
            outcome = self._plan_create(index, item, alive, others, load, plan)
        elif item.command in (Item.DELETE, Item.MOVE):
            if name not in alive:
                outcome = refuse(name, ItemResult.UNKNOWN_VESSEL, f"no vessel named {name!r}")
            elif item.command == Item.MOVE and (reason := self._to_enu(item.vessel)):
                outcome = refuse(name, ItemResult.INVALID_POSE, reason)
            else:
                outcome = PlannedItem(index, item, alive[name])
                if item.command == Item.DELETE:
                    load[alive.pop(name)] -= 1
        else:
            outcome = refuse(
                name, ItemResult.INTERNAL_ERROR, f"unknown command {item.command} (0 create, 1 delete, 2 move)"
            )
        return outcome

    def _plan_create(self, index: int, item: Item, alive: dict, others: frozenset, load: dict, plan: CommandPlan):
        """A create: `alive` holds this goal's earlier creates (so each counts once towards max_vessels) without
        its earlier deletes (so a name deleted earlier in the goal can be created again); `others`: names
        reserved by other goals in flight."""
        vessel = item.vessel
        if vessel.model not in self._models:
            return refuse(
                vessel.name,
                ItemResult.UNKNOWN_MODEL,
                f"unknown model {vessel.model!r} (known: {', '.join(sorted(self._models))})",
            )
        if not vessel.name:
            vessel.name = self._free_name(vessel.model, alive)
        name = vessel.name
        if problem := name_problem(name):
            return refuse(name, ItemResult.INVALID_NAME, problem)
        if name in alive or name in others:
            return refuse(name, ItemResult.DUPLICATE_NAME, f"a vessel named {name!r} already exists")
        if len(alive) + len(others) >= self.max_vessels:
            return refuse(name, ItemResult.FLEET_FULL, f"fleet size limit of {self.max_vessels} vessels reached")
        if reason := self._to_enu(vessel):
            return refuse(name, ItemResult.INVALID_POSE, reason)
        try:
            domain = self._check_overrides(vessel)
        except (ValueError, yaml.YAMLError) as exc:
            return refuse(name, ItemResult.INVALID_OVERRIDES, f"overrides_yaml: {exc}")
        p = vessel.pose.position
        seabed = float(seabed_depths_m(self.environment, np.array([p.x]), np.array([p.y]))[0])
        if problem := start_problem(-p.z, seabed, domain, f" at x {p.x:.1f}, y {p.y:.1f} m"):
            return refuse(name, ItemResult.INVALID_POSE, problem)
        if vessel.worker and vessel.worker not in self.workers:
            return refuse(name, ItemResult.NO_WORKER, f"unknown worker {vessel.worker!r}")
        if vessel.worker in self.down:
            return refuse(name, ItemResult.NO_WORKER, f"worker {vessel.worker!r} is down (not reporting)")
        live = sorted(w for w in load if w not in self.down)
        if not live:
            down = f" ({', '.join(sorted(self.down))} down)" if self.down else ""
            return refuse(name, ItemResult.NO_WORKER, f"no dynamics worker is running{down}")
        worker = vessel.worker or min([w for w in live if w not in self.quiet] or live, key=lambda w: load[w])
        load[worker] = load.get(worker, 0) + 1
        alive[name] = worker
        self._reserved.add(name)
        plan.reserved.add(name)
        return PlannedItem(index, item, worker, domain)

    def _free_name(self, model: str, alive: dict) -> str:
        k = 0
        while f"{model}_{k}" in alive or f"{model}_{k}" in self._reserved:
            k += 1
        return f"{model}_{k}"

    def _check_overrides(self, vessel: VesselDescription) -> str:
        """Validate the overrides against the catalogue; return the vessel's domain."""
        if vessel.model not in self._domains:
            self._domains[vessel.model] = load_vehicle(vessel.model).domain
        if not vessel.overrides_yaml.strip():
            return self._domains[vessel.model]
        overrides = safe_yaml.load(vessel.overrides_yaml)
        if not isinstance(overrides, dict):
            raise ValueError(f"expected a YAML mapping, got {type(overrides).__name__}")
        spec = load_vehicle(vessel.model)
        if problem := sensors_problem(spec.sensors, overrides.get("sensors"), "sensors"):
            raise ValueError(problem)  # as the scenario loader would: not a vessel silently without sensors
        return apply_overrides(spec, overrides).domain

    def _to_enu(self, vessel: VesselDescription) -> str:
        """Convert the pose to POSE_ENU in place; return the reason if it is invalid, '' if fine."""
        lin, ang = vessel.twist.linear, vessel.twist.angular
        if not all(math.isfinite(v) for v in (lin.x, lin.y, lin.z, ang.x, ang.y, ang.z)):
            return "twist must be finite"
        if vessel.pose_frame == VesselDescription.POSE_GEODETIC:
            values = (vessel.latitude_deg, vessel.longitude_deg, vessel.depth_m, vessel.heading_deg)
            if not all(math.isfinite(v) for v in values):
                return f"latitude, longitude, depth and heading must be finite, got {values}"
            if not -90.0 <= vessel.latitude_deg <= 90.0:
                return f"latitude {vessel.latitude_deg} deg outside [-90, 90]"
            enu = geodetic_to_enu(np.array([[vessel.latitude_deg, vessel.longitude_deg, -vessel.depth_m]]), self.origin)
            p = vessel.pose.position
            p.x, p.y = float(enu[0, 0]), float(enu[0, 1])
            p.z = -vessel.depth_m  # depth below the local sea surface, not the ellipsoid height
            q = frames.heading_to_q_enu_flu(vessel.heading_deg)
            o = vessel.pose.orientation
            o.x, o.y, o.z, o.w = (float(v) for v in q)
            vessel.pose_frame = VesselDescription.POSE_ENU
            return ""
        if vessel.pose_frame != VesselDescription.POSE_ENU:
            return f"pose_frame {vessel.pose_frame} unknown (0 ENU, 1 geodetic)"
        p, o = vessel.pose.position, vessel.pose.orientation
        values = (p.x, p.y, p.z, o.x, o.y, o.z, o.w)
        if not all(math.isfinite(v) for v in values):
            return f"pose must be finite, got {values}"
        q = frames.unit_quaternion_of_input((o.x, o.y, o.z, o.w))
        if q is None:
            return "orientation quaternion is zero (use w = 1 for no rotation)"
        o.x, o.y, o.z, o.w = q
        return ""
