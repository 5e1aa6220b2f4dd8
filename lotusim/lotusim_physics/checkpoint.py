"""One dynamics worker's checkpoint: what it holds, how it is captured, and how it is validated and rebuilt
off to the side before the worker changes anything (ROS-free; files by lotusim_core.base.checkpoint_store).

Kept (exactly: a restored run continues bit for bit): the step counter; per vessel its name, model, overrides and
domain; the whole state row (NED pose, FRD twist, last acceleration, held body wrench, held current and wind),
the freeze flag, every thruster's and fin's command and state (rotor speed or lagged command, deflection, last
thrust); the environment configuration (with its seeds: the environment is a pure function of configuration
and sim time, so this is its random state) and the current and wind samples held at the vessels with the time of
the next sample; the fleet settings (step, integrator, substeps, densities, limits).
Not kept: the ROS endpoints (made again from the models), the output schedules (functions of the step counter),
the statistics window. The sensor node's state (biases, noise counters, schedules, modem queues) is its own part
of the checkpoint (lotusim_sensors.checkpoint).

Restore is all-or-nothing: load() reads and validates the files (lotusim_core.base.checkpoint_store), then the
meaning: names valid and unique, each model and its overrides load from today's catalogue and pack to the very
parameters saved (a model file changed since the save is refused), actuator counts, shapes, unit quaternions;
it builds a new Fleet with that state. Only then does the worker swap it in.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import yaml

from lotusim_core.base import safe_yaml
from lotusim_core.base.catalogue import apply_overrides, load_vehicle
from lotusim_core.base.checkpoint_store import (
    CheckpointError,
    describe,
    read_part,
    serve_part,
    write_part,
)
from lotusim_core.base.names import name_problem
from lotusim_env.environment import Environment, build_environment
from lotusim_physics import layout as L
from lotusim_physics.fleet import Fleet

SETTINGS = {  # Fleet keyword -> type
    "dt_s": float,
    "integrator": str,
    "substeps": int,
    "water_density_kgm3": float,
    "gravity_mps2": float,
    "max_speed_mps": float,
    "max_rate_rad_s": float,
    "max_position_m": float,
}
# pool columns that are state (restored from the file); every other column is a parameter of the model
THRUSTER_STATE_COLUMNS = (L.T_CMD, L.T_STATE, L.T_THRUST)
FIN_STATE_COLUMNS = (L.F_CMD, L.F_STATE)


@dataclass
class VesselRecord:
    """A vessel of a checkpoint as the worker keeps it besides the fleet arrays."""

    name: str
    model: str
    domain: str
    overrides_yaml: str
    thruster_cmd: np.ndarray
    fin_cmd: np.ndarray


@dataclass
class WorkerState:
    """A validated worker checkpoint, ready to be swapped in: the rebuilt fleet and the rest of the state."""

    iteration: int
    fleet: Fleet
    vessels: list[VesselRecord]
    environment_yaml: str
    environment: Environment
    env_cache: dict[str, np.ndarray]  # "current", "wind": (N, 3) NED m/s held at the vessels, or empty
    env_next_ns: int


def capture(
    step_ns: int,
    iteration: int,
    fleet: Fleet,
    vessels: dict[str, tuple[str, str, str]],
    environment_yaml: str,
    env_cache: dict[str, np.ndarray],
    env_next_ns: int,
) -> tuple[dict, dict[str, np.ndarray]]:
    """(meta, arrays) of a worker now. vessels: name -> (model, domain, overrides_yaml), every fleet vessel."""
    snap_settings = {key: getattr(fleet, key) for key in SETTINGS}
    arrays = fleet.state_arrays()
    held = bool(env_cache) and len(env_cache.get("current", ())) == len(fleet.names)
    arrays["env_current"] = env_cache["current"].copy() if held else np.zeros((0, 3))
    arrays["env_wind"] = env_cache["wind"].copy() if held else np.zeros((0, 3))
    records = []
    for name in fleet.names:
        model, domain, overrides = vessels[name]
        spec = fleet.spec(name)
        records.append(
            {
                "name": name,
                "model": model,
                "domain": domain,
                "overrides_yaml": overrides,
                "thrusters": len(spec.thrusters),
                "fins": len(spec.fins),
            }
        )
    meta = {
        "step_ns": int(step_ns),
        "iteration": int(iteration),
        "sim_time_ns": int(iteration) * int(step_ns),
        "fleet_settings": snap_settings,
        "environment_yaml": environment_yaml,
        "environment_next_ns": int(env_next_ns),
        "vessels": records,
    }
    return meta, arrays


def save(root: Path, name: str, worker: str, step_ns: int, meta: dict, arrays: dict[str, np.ndarray]) -> str:
    """Check that (meta, arrays) restore (so a save never writes what restore would refuse), then write them;
    returns the manifest's SHA-256."""
    build(f"worker {worker}", meta, arrays, step_ns)
    return write_part(root, name, worker, meta, arrays)


def load(root: Path, name: str, worker: str, step_ns: int, expected_sha: str | None = None) -> WorkerState:
    """Read and validate worker `worker`'s part of checkpoint `name` and rebuild it; nothing outside is changed."""
    meta, arrays = read_part(root, name, worker, expected_sha)
    return build(str(root / name / f"{worker}.json"), meta, arrays, step_ns)


def serve(
    configured_dir: str,
    operation: int,
    name: str,
    worker: str,
    step_ns: int,
    capture_now: Callable[[], tuple[dict, dict]],
    swap_in: Callable[[WorkerState], None],
) -> str:
    """A worker's answer to a checkpoint request (operations of lotusim_interfaces/srv/Checkpoint: 0 SAVE,
    1 RESTORE, 3 CHECK) for checkpoint `name` under the configured directory: SAVE returns the written manifest's
    SHA-256; RESTORE and CHECK read the part that the checkpoint's commit records for this worker and validate it
    completely, then RESTORE calls swap_in. Raises CheckpointError, with nothing changed."""

    def load_committed(root: Path, commit: dict) -> WorkerState:
        part = commit["parts"].get(worker)
        if part is None:
            raise CheckpointError(root / name / "checkpoint.json", "parts", f"nothing saved for worker {worker!r}")
        return load(root, name, worker, step_ns, part["sha256"])

    def save_now(root: Path) -> str:
        return save(root, name, worker, step_ns, *capture_now())

    return serve_part(configured_dir, operation, name, save_now, load_committed, swap_in)


def build(where: str, meta: dict, arrays: dict[str, np.ndarray], step_ns: int) -> WorkerState:
    """The WorkerState of (meta, arrays), or CheckpointError `<where>: <key>: <reason>`."""
    iteration = _int(where, meta, "iteration")
    saved_step = _int(where, meta, "step_ns")
    if saved_step != step_ns:
        raise CheckpointError(where, "step_ns", f"saved with a {saved_step} ns step; this worker steps {step_ns} ns")
    env_next_ns = _int(where, meta, "environment_next_ns")
    environment_yaml = meta.get("environment_yaml")
    if not isinstance(environment_yaml, str):
        raise CheckpointError(where, "environment_yaml", "expected a string")
    try:
        environment = build_environment(safe_yaml.load(environment_yaml) if environment_yaml else None)
    except (ValueError, yaml.YAMLError, RecursionError, TypeError) as exc:
        raise CheckpointError(where, "environment_yaml", f"does not build: {str(exc)[:200]}") from None
    fleet = _empty_fleet(where, meta.get("fleet_settings"), step_ns)
    records = _vessel_records(where, meta.get("vessels"))
    n = len(records)
    expected = {
        "xs": ((n, L.X_WIDTH), np.float64),
        "frozen": ((n,), np.bool_),
        "vp": ((n, L.V_WIDTH), np.float64),
        "thrusters": ((sum(r["thrusters"] for r in records), L.T_WIDTH), np.float64),
        "fins": ((sum(r["fins"] for r in records), L.F_WIDTH), np.float64),
    }
    held = len(arrays.get("env_current", ())) > 0
    expected["env_current"] = expected["env_wind"] = ((n if held else 0, 3), np.float64)
    _check_arrays(where, arrays, expected)
    vessels = _add_vessels(where, fleet, records, arrays)
    env_cache = {"current": arrays["env_current"].copy(), "wind": arrays["env_wind"].copy()} if held else {}
    return WorkerState(iteration, fleet, vessels, environment_yaml, environment, env_cache, env_next_ns)


def _int(where: str, meta: dict, key: str) -> int:
    value = meta.get(key)
    if type(value) is not int or value < 0 or value >= 2**62:
        raise CheckpointError(where, key, f"expected an integer >= 0, got {describe(value)}")
    return value


def _empty_fleet(where: str, settings, step_ns: int) -> Fleet:
    if not isinstance(settings, dict) or set(settings) != set(SETTINGS):
        raise CheckpointError(where, "fleet_settings", f"expected the keys {sorted(SETTINGS)}")
    for key, kind in SETTINGS.items():
        value = settings[key]
        ok = isinstance(value, str) if kind is str else type(value) in (int, float) and np.isfinite(value)
        if not ok or (kind is int and type(value) is not int):
            raise CheckpointError(where, f"fleet_settings.{key}", f"expected {kind.__name__}, got {describe(value)}")
    if round(settings["dt_s"] * 1e9) != step_ns:
        raise CheckpointError(where, "fleet_settings.dt_s", f"{settings['dt_s']} s differs from step_ns {step_ns}")
    try:
        return Fleet(**settings)
    except ValueError as exc:
        raise CheckpointError(where, "fleet_settings", str(exc)) from None


def _vessel_records(where: str, vessels) -> list[dict]:
    if not isinstance(vessels, list):
        raise CheckpointError(where, "vessels", "expected a list")
    seen: set[str] = set()
    for k, record in enumerate(vessels):
        key = f"vessels[{k}]"
        if not isinstance(record, dict):
            raise CheckpointError(where, key, "expected a mapping")
        name = record.get("name")
        if problem := name_problem(name):
            raise CheckpointError(where, f"{key}.name", problem)
        if name in seen:
            raise CheckpointError(where, f"{key}.name", f"{name!r} appears twice")
        seen.add(name)
        for field in ("model", "domain", "overrides_yaml"):
            if not isinstance(record.get(field), str):
                raise CheckpointError(where, f"{key}.{field}", "expected a string")
        for field in ("thrusters", "fins"):
            count = record.get(field)
            if type(count) is not int or not 0 <= count <= 1000:
                raise CheckpointError(where, f"{key}.{field}", f"expected a count, got {describe(count)}")
    return vessels


def _check_arrays(where: str, arrays: dict[str, np.ndarray], expected: dict) -> None:
    if set(arrays) != set(expected):
        raise CheckpointError(where, "arrays", f"expected {sorted(expected)}, got {sorted(arrays)}")
    for key, (shape, dtype) in expected.items():
        arr = arrays[key]
        if arr.shape != shape or arr.dtype != dtype:
            raise CheckpointError(where, key, f"expected {np.dtype(dtype)} {shape}, got {arr.dtype} {arr.shape}")
        if arr.dtype == np.float64 and not np.all(np.isfinite(arr)):
            raise CheckpointError(where, key, "holds non-finite values")
    q = arrays["xs"][:, L.X_Q : L.X_Q + 4]
    bad = np.flatnonzero(np.abs(np.linalg.norm(q, axis=1) - 1.0) > 1e-6)
    if bad.size:
        raise CheckpointError(where, f"xs[{bad[0]}]", "attitude is not a unit quaternion")


def _add_vessels(where: str, fleet: Fleet, records: list[dict], arrays: dict[str, np.ndarray]) -> list[VesselRecord]:
    """Add each vessel from today's catalogue, check that its model packs to the saved parameters, then
    overwrite the state with the saved one."""
    xs = arrays["xs"]
    specs: dict[tuple[str, str], object] = {}  # one spec per (model, overrides): vessels share it, as on create
    for k, record in enumerate(records):
        key = f"vessels[{k}]"
        try:
            spec = specs.get((record["model"], record["overrides_yaml"]))
            if spec is None:
                spec = load_vehicle(record["model"])
                if record["overrides_yaml"].strip():
                    spec = apply_overrides(spec, safe_yaml.load(record["overrides_yaml"]) or {})
                specs[record["model"], record["overrides_yaml"]] = spec
            fleet.add(record["name"], spec, xs[k, L.X_POS : L.X_POS + 3], xs[k, L.X_Q : L.X_Q + 4])
        except (ValueError, OSError, yaml.YAMLError, RecursionError, TypeError) as exc:
            raise CheckpointError(where, key, f"model {record['model']!r} does not load: {str(exc)[:200]}") from None
        saved = (record["thrusters"], record["fins"], record["domain"])
        if (len(spec.thrusters), len(spec.fins), spec.domain) != saved:
            raise CheckpointError(where, key, f"model {record['model']!r} has other actuators or domain than saved")
    rebuilt = fleet.state_arrays()
    if not np.array_equal(rebuilt["vp"], arrays["vp"]):
        k = int(np.flatnonzero(np.any(rebuilt["vp"] != arrays["vp"], axis=1))[0])
        raise CheckpointError(where, f"vessels[{k}]", f"model {records[k]['model']!r} has changed since the save")
    for pool, columns in (("thrusters", THRUSTER_STATE_COLUMNS), ("fins", FIN_STATE_COLUMNS)):
        params = np.ones(rebuilt[pool].shape[1], dtype=bool)
        params[list(columns)] = False
        if not np.array_equal(rebuilt[pool][:, params], arrays[pool][:, params]):
            raise CheckpointError(where, pool, "actuator parameters differ from today's models (a model changed)")
    fleet.overwrite_state(xs, arrays["frozen"], arrays["thrusters"], arrays["fins"])
    t_cmd, f_cmd = arrays["thrusters"][:, L.T_CMD], arrays["fins"][:, L.F_CMD]
    out, t0, f0 = [], 0, 0
    for record in records:
        nt, nf = record["thrusters"], record["fins"]
        out.append(
            VesselRecord(
                record["name"],
                record["model"],
                record["domain"],
                record["overrides_yaml"],
                t_cmd[t0 : t0 + nt].copy(),
                f_cmd[f0 : f0 + nf].copy(),
            )
        )
        t0, f0 = t0 + nt, f0 + nf
    return out
