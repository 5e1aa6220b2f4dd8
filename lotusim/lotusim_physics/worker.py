"""The vessels of one dynamics worker and everything done to them, without ROS: create / delete / move with
their results, actuator and wrench commands, stepping with the held environment, what output is due when, and
checkpoint / restore. Plain Python and NumPy in and out; the dynamics node (lotusim_physics.dynamics_node) turns
its ROS messages into these calls and publishes what it reports.

Frames: a command's pose is given as ROS gives it (ENU position, ENU <- FLU quaternion x y z w, FLU twist) and
converted to the physics' (NED, NED <- FRD w x y z, FRD) for a whole request at once (`physics_poses`).
Sim time is the step counter times the step in integer nanoseconds.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import yaml

from lotusim_core.base import frames, safe_yaml
from lotusim_core.base.catalogue import UnknownModelError, apply_overrides, load_vehicle
from lotusim_core.base.names import name_problem
from lotusim_physics import checkpoint as worker_checkpoint
from lotusim_physics.collisions import ContactParams, obstacles_of
from lotusim_physics.fleet import Fleet
from lotusim_physics.held_environment import HeldEnvironment
from lotusim_physics.output_schedule import Due, OutputPlan
from lotusim_physics.pacing import MAX_CHUNK_STEPS
from lotusim_physics.worker_settings import WorkerSettings

CREATE, DELETE, MOVE = "create", "delete", "move"  # the commands of a request (run_commands)
Pose = tuple[np.ndarray, np.ndarray, np.ndarray]  # NED position m, NED <- FRD quaternion w x y z, FRD twist


@dataclass
class CommandResult:
    """The outcome of one command: `code` is the name of a lotusim_interfaces/ItemResult code (OK,
    INVALID_NAME, DUPLICATE_NAME, UNKNOWN_MODEL, INVALID_OVERRIDES, UNKNOWN_VESSEL, INVALID_POSE,
    INTERNAL_ERROR); `worker` is set on a create or move that succeeded."""

    name: str
    ok: bool
    code: str
    reason: str = ""
    worker: str = ""


@dataclass
class VesselEntry:
    """What the worker keeps per vessel besides the fleet arrays: its model and how it was created. Its held
    commands live in the fleet's actuator pools (what the kernel reads), read here as thruster_cmd / fin_cmd."""

    name: str
    model: str
    domain: str
    overrides_yaml: str
    fleet: Fleet = field(repr=False, compare=False)
    frozen_reason: str = ""  # the fault report of its last freeze (listed as status_reason while frozen)

    @property
    def thruster_cmd(self) -> np.ndarray:
        """The held command of each thruster, in its command_unit (copy)."""
        return self.fleet.thruster_commands(self.name)

    @property
    def fin_cmd(self) -> np.ndarray:
        """The held deflection command of each fin, rad (copy)."""
        return self.fleet.fin_commands(self.name)


def physics_poses(vessels: Sequence) -> list[Pose]:
    """The poses (ENU, ENU<-FLU x y z w) and twists (FLU) of vessel descriptions (objects with .pose.position,
    .pose.orientation, .twist.linear, .twist.angular, like lotusim_interfaces/VesselDescription) in physics
    frames, one vectorised pass: per vessel (NED position, NED<-FRD quaternion w x y z, FRD twist). Raises
    ValueError if any quaternion is zero or not finite."""
    if not vessels:
        return []
    p = np.array([(v.pose.position.x, v.pose.position.y, v.pose.position.z) for v in vessels], dtype=float)
    q = np.array([(o.x, o.y, o.z, o.w) for o in (v.pose.orientation for v in vessels)], dtype=float)
    twists = ((v.twist.linear, v.twist.angular) for v in vessels)
    nu = np.array([(lin.x, lin.y, lin.z, ang.x, ang.y, ang.z) for lin, ang in twists], dtype=float)
    converted = (frames.enu_to_ned(p), frames.q_enu_flu_to_q_ned_frd(q), frames.twist_flu_to_frd(nu))
    return list(zip(*converted, strict=True))


def poses_of(commands: Sequence[tuple[object, object]]) -> dict[int, Pose | ValueError]:
    """Physics pose of each create and move command (index -> pose) of (command, vessel description) pairs,
    converted for the whole request in one vectorised pass; command by command (and a command's ValueError as
    its entry) only if some pose of the request cannot be converted."""
    index = [i for i, (command, _) in enumerate(commands) if command in (CREATE, MOVE)]
    try:
        return dict(zip(index, physics_poses([commands[i][1] for i in index]), strict=True))
    except ValueError:
        pass
    poses: dict[int, Pose | ValueError] = {}
    for i in index:
        try:
            poses[i] = physics_poses([commands[i][1]])[0]
        except ValueError as exc:
            poses[i] = exc
    return poses


def _given(pose: Pose | ValueError | None) -> Pose:
    """The pose converted with the request, or its conversion error raised."""
    if isinstance(pose, ValueError):
        raise pose
    return pose


class FleetWorker:
    """The vessels of worker `name` (a Fleet and a VesselEntry each), its step counter, its held environment and
    its output plan. `layout_version` changes whenever the fleet's rows or the environment change (outputs laid
    out for the fleet must be laid out again); `extras_version` whenever the held environment samples or a
    vessel's status change (the fleet state's environment and status columns)."""

    def __init__(self, name: str, settings: WorkerSettings) -> None:
        self.name, self.step_ns = name, settings.step_ns
        self.fleet = Fleet(
            settings.step_s,
            integrator=settings.integrator,
            substeps=settings.substeps,
            water_density_kgm3=settings.water_density_kgm3,
        )
        self.vessels: dict[str, VesselEntry] = {}
        self.iteration = 0
        self.environment = HeldEnvironment(settings.environment_period_s)
        self.contact_params = (
            ContactParams(settings.collision_restitution, settings.collision_friction) if settings.collisions else None
        )
        self._enable_collisions()
        self.state_schedule, self.odom_schedule = settings.schedules()
        self.layout_version = 0
        self.extras_version = 0
        self._changed()

    @property
    def sim_time_ns(self) -> int:
        return self.iteration * self.step_ns

    def _enable_collisions(self) -> None:
        """Collide the fleet's vessels with each other and with the held environment's seabed and world (unless
        the worker's `collisions` parameter is off)."""
        if self.contact_params is not None:
            self.fleet.enable_collisions(obstacles_of(self.environment.environment), self.contact_params)

    def _changed(self) -> None:
        """The fleet's rows (or its environment) changed: samples, output plan and layouts are made again."""
        self.environment.invalidate()
        self.plan = OutputPlan(self.state_schedule, self.odom_schedule, len(self.fleet.names), MAX_CHUNK_STEPS)
        self.layout_version += 1

    # --- commands of a request ------------------------------------------------------------------------------
    def run_commands(self, commands: Sequence[tuple[object, object]]) -> list[CommandResult]:
        """The results of (command, vessel description) pairs, in order; command is CREATE, DELETE, MOVE or
        anything else (refused as unknown). The poses of a request are converted at once (poses_of)."""
        poses = poses_of(commands)
        return [self._run(command, vessel, poses.get(i)) for i, (command, vessel) in enumerate(commands)]

    def _run(self, command: object, vessel, pose: Pose | ValueError | None) -> CommandResult:
        name = vessel.name
        try:
            if command == CREATE:
                return self.create(name, vessel.model, vessel.overrides_yaml, pose)
            if name not in self.vessels:
                reason = f"no vessel named {name!r} on worker {self.name}"
                return CommandResult(name, False, "UNKNOWN_VESSEL", reason)
            if command == DELETE:
                self.delete(name)
                return CommandResult(name, True, "OK")
            if command == MOVE:
                self.fleet.set_pose(name, *_given(pose))
                self._changed()
                return CommandResult(name, True, "OK", worker=self.name)
            return CommandResult(name, False, "INTERNAL_ERROR", f"unknown command {command}")
        except (ValueError, KeyError) as exc:
            return CommandResult(name, False, "INVALID_POSE", str(exc))

    def create(self, name: str, model: str, overrides_yaml: str, pose: Pose | ValueError) -> CommandResult:
        """Add vessel `name` of catalogue model `model` (with YAML overrides) at `pose` (physics frames), or
        say why not. Raises the pose's ValueError if it could not be converted."""
        if problem := name_problem(name):
            return CommandResult(name, False, "INVALID_NAME", problem)
        if name in self.vessels:
            return CommandResult(name, False, "DUPLICATE_NAME", f"a vessel named {name!r} exists on worker {self.name}")
        try:
            spec = load_vehicle(model)
            if overrides_yaml.strip():
                spec = apply_overrides(spec, safe_yaml.load(overrides_yaml) or {})
        except UnknownModelError as exc:
            return CommandResult(name, False, "UNKNOWN_MODEL", str(exc))
        except (ValueError, yaml.YAMLError) as exc:
            return CommandResult(name, False, "INVALID_OVERRIDES", str(exc))
        if problem := name_problem(name, [a.name for a in (*spec.thrusters, *spec.fins)]):
            return CommandResult(name, False, "INVALID_NAME", problem)
        position_ned, q_ned_frd, nu = _given(pose)
        try:
            self.fleet.add(name, spec, position_ned, q_ned_frd, nu)
        except ValueError as exc:
            return CommandResult(name, False, "INTERNAL_ERROR", str(exc))
        self.vessels[name] = VesselEntry(name, model, spec.domain, overrides_yaml, self.fleet)
        self._changed()
        return CommandResult(name, True, "OK", worker=self.name)

    def delete(self, name: str) -> VesselEntry:
        """Remove vessel `name` (KeyError if there is none); returns its entry."""
        entry = self.vessels.pop(name)
        self.fleet.remove(name)
        self._changed()
        return entry

    # --- commands from the vessels' topics --------------------------------------------------------------------
    def command_actuator(self, name: str, kind: str, index: int, value: float) -> str:
        """Hold command `value` for actuator `index` (kind "thruster": its command, "fin": its angle in rad) of
        vessel `name`; returns why it was rejected (not finite: the last valid one is kept), else "". Commands
        for a vessel that is not (or no longer) here are ignored."""
        entry = self.vessels.get(name)
        if entry is None:
            return ""
        if not math.isfinite(value):
            return _rejected(name, f"{kind} {index}", value)
        thrusters, fins = self.fleet.actuator_rows_of(name)
        if kind == "thruster":
            self.fleet.write_commands(thrusters[index : index + 1], value, fins[:0], 0.0)
        else:
            self.fleet.write_commands(thrusters[:0], 0.0, fins[index : index + 1], value)
        return ""

    def command_wrench(self, name: str, wrench_flu: np.ndarray) -> str:
        """Hold body wrench [Fx Fy Fz Tx Ty Tz] (N, N m; body FLU) on vessel `name`; returns why it was rejected
        (not finite), else ""; ignored for a vessel that is not here."""
        if name not in self.vessels:
            return ""
        if not np.all(np.isfinite(wrench_flu)):
            return _rejected(name, "wrench", wrench_flu.tolist())
        self.fleet.set_body_wrench(name, frames.twist_flu_to_frd(wrench_flu))
        return ""

    # --- stepping -------------------------------------------------------------------------------------------
    def apply_environment(self, config_yaml: str, revision: int) -> None:
        """Apply an environment configuration (HeldEnvironment.apply: raises with nothing changed)."""
        self.environment.apply(config_yaml, revision)
        self._enable_collisions()
        self._changed()

    def due(self) -> Due:
        """The outputs due after the step that made the current iteration."""
        return self.plan.at(self.iteration)

    def steps_to_next_output(self) -> int:
        """The smallest k >= 1 such that after k steps the fleet state or some odometry is due, or the
        environment must be sampled again (at most MAX_CHUNK_STEPS when nothing is due)."""
        k = self.plan.at(self.iteration).steps_to_next
        if self.environment.config_yaml and self.fleet.names:  # applied (.active, read directly: once per batch)
            k = min(k, self.environment.steps_to_next_sample(self.sim_time_ns, self.step_ns))
        return max(1, k)

    def integrate(self, k: int) -> list:
        """k steps of the physics (the environment sampled first if stale, then held); returns the faults
        (lotusim_physics.fleet.FaultReport: the vessels frozen, whose entries keep the report)."""
        t_ns = self.sim_time_ns
        env = self.environment
        if env.config_yaml:  # applied (.active, read directly: once per batch)
            if env.sample(t_ns, self.fleet):
                self.extras_version += 1
            faults = self.fleet.step(t_ns * 1e-9, current_ned=env.current, wind_ned=env.wind, steps=k, waves=env.sea)
        else:  # still water, no wind
            faults = self.fleet.step(t_ns * 1e-9, steps=k)
        self.iteration += k
        if self.fleet.contacts_changed:  # the fleet state's status column
            self.extras_version += 1
        for fault in faults:
            if fault.vessel in self.vessels:
                self.vessels[fault.vessel].frozen_reason = str(fault)
            self.extras_version += 1
        return faults

    # --- listing ----------------------------------------------------------------------------------------------
    def listing(self) -> list[tuple[VesselEntry, np.ndarray, np.ndarray, str | None]]:
        """Per vessel in fleet order: (entry, ENU position m, ENU <- FLU quaternion x y z w, None if it runs or
        the reason it is frozen)."""
        if not self.fleet.names:
            return []
        pos, quat, _, _ = self.fleet.state_enu()
        frozen = self.fleet.frozen
        out = []
        for i, name in enumerate(self.fleet.names):
            entry = self.vessels[name]
            reason = (entry.frozen_reason or "frozen by a physics fault") if frozen[i] else None
            out.append((entry, pos[i], quat[i], reason))
        return out

    def contacts(self) -> dict[str, list[str]]:
        """The vessels in contact, each with what it touches (other vessels' names, "seabed", "coast", objects)."""
        collider = self.fleet.collider
        out: dict[str, list[str]] = {}
        for vessel, other in sorted(collider.ongoing if collider is not None else ()):
            out.setdefault(vessel, []).append(other)
        return out

    # --- checkpoint / restore (data, not code: lotusim_physics.checkpoint) ------------------------------------
    def checkpoint(self) -> tuple[dict, dict]:
        """(meta, arrays) of everything needed to continue identically (lotusim_physics.checkpoint.capture)."""
        vessels = {n: (e.model, e.domain, e.overrides_yaml) for n, e in self.vessels.items()}
        env = self.environment
        return worker_checkpoint.capture(
            self.step_ns, self.iteration, self.fleet, vessels, env.config_yaml, env.samples, env.next_ns
        )

    def restore(self, state: worker_checkpoint.WorkerState) -> list[str]:
        """Swap in a checkpoint validated and rebuilt by lotusim_physics.checkpoint.load (nothing fails here);
        returns the names of the vessels it replaced."""
        replaced = list(self.vessels)
        for name in replaced:
            self.delete(name)
        self.fleet = state.fleet
        self._enable_collisions()
        self._changed()
        self.iteration = state.iteration
        # the held samples too: an exact continuation
        self.environment.restore(state.environment, state.environment_yaml, state.env_cache, state.env_next_ns)
        self.extras_version += 1
        for r in state.vessels:
            self.vessels[r.name] = VesselEntry(r.name, r.model, r.domain, r.overrides_yaml, self.fleet)
        return replaced


def _rejected(name: str, what: str, value: object) -> str:
    return f"{name}: {what} command {value!r} rejected (not finite); keeping the last valid one"
