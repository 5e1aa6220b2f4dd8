"""Scenario files (config/scenarios/<name>.yaml): load and validate, then plan the simulation nodes.

Three separate steps (the Stonefish split of scenario parser / ROS interface / simulation manager, STYLE.md):
    load_scenario(path)  -> Scenario   every key checked at load time; errors name file, key and reason
    Scenario.plan()      -> Plan       pure data: node parameters, spawn items, controllers (no ROS needed)
    launch files / `lotusim run`       start the nodes of the plan and spawn its vessels through the MAS action
Schema, units and defaults: docs/scenarios.md. Frames: positions in the world frame `map` (ENU, REP 103/105,
origin at world.origin), yaw in ENU (0 = east, counter-clockwise), headings compass (0 = north, clockwise),
depths positive down; geodetic positions WGS84 (lotusim_core.base.geodesy).
"""

from __future__ import annotations

import copy
import fnmatch
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from lotusim_core.base import frames, safe_yaml
from lotusim_core.base.catalogue import CatalogueError, apply_overrides, list_models, load_vehicle
from lotusim_core.base.geodesy import GeodeticOrigin, enu_to_geodetic, geodetic_to_enu
from lotusim_core.base.names import name_problem
from lotusim_core.base.paths import config_dir
from lotusim_core.base.validation import ConfigError, Validator, join_key, read_yaml_file
from lotusim_core.sim.spawn_checks import seabed_depths_m, start_problem
from lotusim_env.ekman import RHO_WATER
from lotusim_env.environment import build_environment
from lotusim_physics.pacing import MODES
from lotusim_sensors.suite import merge_sensors, parse_suite

TOPIC_RE = re.compile(r"^/?[A-Za-z{][A-Za-z0-9_{}]*(/[A-Za-z{][A-Za-z0-9_{}]*)*$")
INTEGRATORS = ("rk4", "euler")  # lotusim_physics.integrators.METHODS
# the set-point keys scenario.py parses itself (any other key a controller accepts is passed as a ROS value)
SETPOINT_PARSED = ("waypoints", "acceptance_radius_m", "speed_mps", "loop", "depth_m", "heading_deg")
_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)  # libyaml: ~10x faster for 1,000-vessel parameters
DEFAULT_RECORD_TOPICS = ("/lotusim/fleet_state", "/lotusim/stats")
# The environment's site keys live under `world:` (one origin and one density for physics, sensors, currents).
WORLD_ENV_KEYS = ("origin", "water_density_kgm3", "bathymetry")
TOP_KEYS = (
    "name",
    "description",
    "seed",
    "duration_s",
    "world",
    "physics",
    "environment",
    "sensors",
    "vessels",
    "generators",
    "controllers",
    "recording",
)


class ScenarioError(ConfigError):
    """A scenario is malformed: the message names the file, the key (dotted path) and the reason
    (lotusim_core.base.validation)."""


# ----------------------------------------------------------------------------------------------- the schema
@dataclass(frozen=True)
class World:
    """Geodetic origin of `map`, sea-water density (kg/m^3) and the bathymetry section (environment schema)."""

    origin: GeodeticOrigin
    water_density_kgm3: float
    bathymetry: dict


@dataclass(frozen=True)
class Physics:
    """Dynamics worker settings (lotusim_physics.dynamics_node parameters); `workers` dynamics processes."""

    step_s: float = 0.02  # 50 Hz: the fastest sensor rate of the catalogue (50 Hz IMUs) is reachable
    mode: str = "realtime"
    real_time_factor: float = 1.0
    workers: int = 1
    integrator: str = "rk4"
    substeps: int = 1
    fleet_state_every: int = 1
    odom_rate_hz: float = 10.0
    publish_tf: bool = True  # /tf: map -> <vessel>/base_link with the odometry (off when a HIL stack owns the frames)
    stats_rate_hz: float = 1.0
    collisions: bool = True  # vessels collide with each other, the seabed, the coast and objects (docs/physics.md)
    collision_restitution: float = 0.0  # e in [0, 1]: 0 plastic
    collision_friction: float = 0.0  # Coulomb mu >= 0
    max_control_lag_s: float = 0.05  # realtime / scaled: how far the sim time runs ahead of the drones' hosts

    @property
    def fleet_state_rate_hz(self) -> float:
        """Rate of /lotusim/fleet_state in sim time (Hz): the fastest any sensor can publish."""
        return 1.0 / (self.step_s * self.fleet_state_every)


@dataclass(frozen=True)
class SensorSettings:
    """Scenario-wide sensor settings: per-kind defaults merged into every vessel carrying that sensor, and the
    sensor_publisher's site parameters (magnetic field, sound speed, acoustic beacons in `map` ENU m)."""

    defaults: dict = field(default_factory=dict)
    magnetic_declination_deg: float = 0.0
    magnetic_inclination_deg: float = 60.0
    magnetic_intensity_nt: float = 50000.0
    sound_speed_mps: float = 1500.0
    acoustic_beacons: dict = field(default_factory=dict)


@dataclass(frozen=True)
class VesselPlan:
    """One vessel to spawn. Exactly one of position_enu (m, `map`) + q_enu_flu (x, y, z, w) or geodetic
    (latitude_deg, longitude_deg, depth_m, heading_deg) is set. twist_flu: initial body velocity (u, v, w, p, q,
    r) in base_link FLU (m/s, rad/s). overrides: catalogue overrides; sensors: per-vessel sensor overrides."""

    name: str
    model: str
    domain: str
    position_enu: tuple[float, float, float] | None = None
    q_enu_flu: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 1.0)
    geodetic: tuple[float, float, float, float] | None = None
    twist_flu: tuple[float, ...] = (0.0,) * 6
    overrides: dict = field(default_factory=dict)
    sensors: dict = field(default_factory=dict)
    worker: str = ""


@dataclass(frozen=True)
class ControllerPlan:
    """An autonomy node to start for one vessel: its type (= executable), ROS parameters and initial setpoints.

    setpoints: waypoint_follower -> {latitude_deg: [...], longitude_deg: [...], waypoints_enu: [[x, y], ...],
    acceptance_radius_m, speed_mps, loop} (the fields of lotusim_interfaces/srv/SetWaypoints, plus the ENU
    points); depth_heading_autopilot -> {depth_m, heading_deg[, speed_mps]} (depth positive down, compass
    heading)."""

    type: str
    vessel: str
    parameters: dict
    setpoints: dict

    @property
    def executable(self) -> str:
        return self.type

    @property
    def node_name(self) -> str:
        return f"{self.type}_{self.vessel}"


@dataclass(frozen=True)
class RecordPlan:
    """What to record (absolute topic names) and where (a rosbag2 / MCAP directory path)."""

    topics: tuple[str, ...]
    path: str


@dataclass(frozen=True)
class Plan:
    """Everything needed to start one simulation; pure data, no ROS.

    node_parameters: node name -> ROS parameters ("current_server", "mas_server", "dynamics_0".. and
    "sensor_publisher"). Dynamics node k owns worker "worker_k"; only dynamics_0 is the clock master."""

    name: str
    node_parameters: dict[str, dict]
    vessels: tuple[VesselPlan, ...]
    controllers: tuple[ControllerPlan, ...]
    duration_s: float | None
    record: RecordPlan | None
    seed: int
    environment: dict

    @property
    def dynamics_nodes(self) -> list[str]:
        return sorted((n for n in self.node_parameters if n.startswith("dynamics_")), key=lambda n: int(n[9:]))

    def spawn_items(self) -> list:
        """The CREATE items for /lotusim/fleet_command (lotusim_interfaces/msg/FleetCommandItem), in order."""
        return [spawn_item(v) for v in self.vessels]


def spawn_item(vessel: VesselPlan):
    """One FleetCommandItem (CREATE) for a planned vessel. Imports the ROS message types on first use only."""
    from lotusim_interfaces.msg import FleetCommandItem, VesselDescription

    desc = VesselDescription(name=vessel.name, model=vessel.model, worker=vessel.worker)
    if vessel.geodetic is not None:
        desc.pose_frame = VesselDescription.POSE_GEODETIC
        desc.latitude_deg, desc.longitude_deg, desc.depth_m, desc.heading_deg = (float(v) for v in vessel.geodetic)
    else:
        desc.pose_frame = VesselDescription.POSE_ENU
        p, o = desc.pose.position, desc.pose.orientation
        p.x, p.y, p.z = (float(v) for v in vessel.position_enu)
        o.x, o.y, o.z, o.w = (float(v) for v in vessel.q_enu_flu)
    lin, ang = desc.twist.linear, desc.twist.angular
    lin.x, lin.y, lin.z, ang.x, ang.y, ang.z = (float(v) for v in vessel.twist_flu)
    if vessel.overrides:
        desc.overrides_yaml = yaml.safe_dump(vessel.overrides, default_flow_style=True, width=10_000).strip()
    return FleetCommandItem(command=FleetCommandItem.CREATE, vessel=desc)


# ------------------------------------------------------------------------------------------------ public API
def scenarios_dir() -> Path:
    """Directory of the shipped scenarios (config/scenarios)."""
    return config_dir() / "scenarios"


def list_scenarios() -> list[str]:
    """Names of the shipped scenarios (file stems in config/scenarios), sorted."""
    return sorted(p.stem for p in scenarios_dir().glob("*.yaml"))


def resolve_scenario(name_or_path: str | Path) -> Path:
    """A scenario name (config/scenarios/<name>.yaml) or a path to a YAML file -> the file's path."""
    candidate = Path(name_or_path).expanduser()
    if candidate.suffix in (".yaml", ".yml") or candidate.parent != Path("."):
        if not candidate.is_file():
            raise ScenarioError(str(candidate), "<file>", "scenario file not found")
        return candidate.resolve()
    path = scenarios_dir() / f"{name_or_path}.yaml"
    if not path.is_file():
        known = ", ".join(list_scenarios()) or "none"
        raise ScenarioError(str(scenarios_dir()), str(name_or_path), f"unknown scenario (shipped: {known})")
    return path


def load_scenario(name_or_path: str | Path) -> Scenario:
    """Read and validate a scenario: a shipped name or a path. Raises ScenarioError (file, key, reason)."""
    path = resolve_scenario(name_or_path)
    return Scenario(read_yaml_file(path, ScenarioError), path)


def parse_override_value(text: str) -> Any:
    """A command-line value (`--set key=VALUE`) as a YAML scalar or flow collection: 10 -> 10, fast -> 'fast',
    [1, 2] -> [1, 2]."""
    try:
        return safe_yaml.load(text)
    except yaml.YAMLError:
        return text


def launch_overrides(
    real_time_factor: float | None = None,
    workers: int | None = None,
    mode: str | None = None,
    sets: list[str] | tuple[str, ...] = (),
) -> dict[str, Any]:
    """The overrides of the launch arguments / CLI options, for Scenario.with_overrides.

    A real-time factor other than 1 without a mode selects mode "scaled" (mode "realtime" runs at RTF 1).
    `sets` are "dotted.key=value" strings (values parsed by parse_override_value)."""
    out: dict[str, Any] = {}
    for item in sets:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--set {item!r}: expected dotted.key=value, e.g. physics.real_time_factor=10")
        out[key.strip()] = parse_override_value(value)
    if real_time_factor is not None:
        out["physics.real_time_factor"] = float(real_time_factor)
        if mode is None and float(real_time_factor) != 1.0:
            out["physics.mode"] = "scaled"
    if workers is not None:
        out["physics.workers"] = int(workers)
    if mode is not None:
        out["physics.mode"] = mode
    return out


class Scenario:
    """A validated scenario. Attributes: name, description, path, seed, duration_s, world, physics, environment
    (the full mapping given to build_environment), sensors, vessels, controllers, recording."""

    name: str
    description: str
    seed: int
    duration_s: float | None
    world: World
    physics: Physics
    environment: dict
    sensors: SensorSettings
    vessels: list[VesselPlan]
    controllers: list[ControllerPlan]
    recording: RecordPlan | None

    def __init__(self, data: Any, path: str | Path, overrides: Mapping[str, Any] | None = None) -> None:
        self.path = Path(path)
        self.raw = copy.deepcopy(data)
        self.overrides = dict(overrides or {})
        where = str(self.path)
        if self.overrides:
            where += " (with overrides " + ", ".join(f"{k}={v!r}" for k, v in self.overrides.items()) + ")"
        _Validator(where, self.path.parent).fill(self, data)

    def with_overrides(self, overrides: Mapping[str, Any], parse_strings: bool = True) -> Scenario:
        """A new Scenario with dotted-path values replaced ("physics.mode": "fast", "vessels.auv_1.model": ...,
        "vessels.0.pose.position": [...]) and validated again. String values are parsed as YAML scalars unless
        parse_strings is False (values already read from their text, as launch_overrides returns them)."""
        data = copy.deepcopy(self.raw)
        where = str(self.path)
        for dotted, value in overrides.items():
            # a copy: a later override of one item ("a.0=5" after "a=[1, 2]") must not change the given value
            parse = parse_strings and isinstance(value, str)
            value = parse_override_value(value) if parse else copy.deepcopy(value)
            data = _set_dotted(data, str(dotted), value, where)
        return Scenario(data, self.path, {**self.overrides, **overrides})

    def plan(self) -> Plan:
        """Node parameters, spawn list, controllers: the pure-data description of this simulation."""
        return Plan(
            name=self.name,
            node_parameters=self._node_parameters(),
            vessels=tuple(self.vessels),
            controllers=tuple(self.controllers),
            duration_s=self.duration_s,
            record=self.recording,
            seed=self.seed,
            environment=copy.deepcopy(self.environment),
        )

    def _node_parameters(self) -> dict[str, dict]:
        w, p, s = self.world, self.physics, self.sensors
        origin = {"origin_latitude_deg": w.origin.latitude_deg, "origin_longitude_deg": w.origin.longitude_deg}
        params: dict[str, dict] = {
            "current_server": {"use_sim_time": True, "environment_yaml": _dump(self.environment)},
            "mas_server": {
                "use_sim_time": True,
                **origin,
                "batch_size": 250,
                "max_vessels": max(10_000, len(self.vessels)),
                # a goal waits for all of them (worker_wait_s at most): planned over the first alone, every vessel
                # of the scenario would go to that one worker
                "expected_workers": [f"worker_{k}" for k in range(p.workers)],
            },
        }
        for k in range(p.workers):
            params[f"dynamics_{k}"] = {
                "worker": f"worker_{k}",
                "clock_master": k == 0,
                "step_s": p.step_s,
                "mode": p.mode,
                "real_time_factor": p.real_time_factor,
                "fleet_state_every": p.fleet_state_every,
                "odom_rate_hz": p.odom_rate_hz,
                "publish_tf": p.publish_tf,
                "stats_rate_hz": p.stats_rate_hz,
                "collisions": p.collisions,
                "collision_restitution": p.collision_restitution,
                "collision_friction": p.collision_friction,
                "max_control_lag_s": p.max_control_lag_s,
                "integrator": p.integrator,
                "substeps": p.substeps,
                "water_density_kgm3": w.water_density_kgm3,
            }
        vessels_cfg = {
            v.name: {"model": v.model, **({"sensors": v.sensors} if v.sensors else {})} for v in self.vessels
        }
        params["sensor_publisher"] = {
            "use_sim_time": True,
            "seed": self.seed,
            **origin,
            "origin_altitude_m": w.origin.altitude_m,
            # JSON is YAML (flow style) and ~30x faster to write for 1,000 vessels than PyYAML's representer
            "vessels_yaml": json.dumps(_plain(vessels_cfg), separators=(",", ":")) if vessels_cfg else "",
            "magnetic_declination_deg": s.magnetic_declination_deg,
            "magnetic_inclination_deg": s.magnetic_inclination_deg,
            "magnetic_intensity_nt": s.magnetic_intensity_nt,
            "sound_speed_mps": s.sound_speed_mps,
            "acoustic_beacons_yaml": _dump(s.acoustic_beacons) if s.acoustic_beacons else "",
        }
        return params

    def vessel(self, name: str) -> VesselPlan:
        for v in self.vessels:
            if v.name == name:
                return v
        raise KeyError(name)

    def __repr__(self) -> str:
        return f"Scenario({self.name!r}, {len(self.vessels)} vessels, {len(self.controllers)} controllers)"


def _dump(data: Any) -> str:
    return yaml.dump(_plain(data), Dumper=_DUMPER, default_flow_style=None, sort_keys=False, width=10_000)


def _plain(value: Any) -> Any:
    """Numpy scalars/arrays and tuples -> plain Python (for YAML and ROS parameters)."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [_plain(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value


def _set_dotted(data: Any, dotted: str, value: Any, where: str) -> Any:
    """Set `dotted` (keys; list indices or, in vessels/generators/controllers, names) in a copy of data."""
    parts = dotted.split(".")
    if not all(parts):
        raise ScenarioError(where, dotted, "override key: expected a dotted path like physics.mode")
    root = data if isinstance(data, dict) else {}
    node: Any = root
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        here = ".".join(parts[: i + 1])
        if isinstance(node, list):
            index = _list_index(node, part)
            if index is None:
                raise ScenarioError(where, here, f"override: no list entry {part!r} (an index or a name)")
            if last:
                node[index] = value
            else:
                node = node[index]
            continue
        if not isinstance(node, dict):
            raise ScenarioError(where, here, f"override: {'.'.join(parts[:i])} is not a mapping")
        if last:
            node[part] = value
        else:
            node = node.setdefault(part, {})
    return root


def _list_index(items: list, part: str) -> int | None:
    if part.lstrip("-").isdigit():
        index = int(part)
        return index if -len(items) <= index < len(items) else None
    for i, item in enumerate(items):
        if isinstance(item, dict) and (item.get("name") == part or item.get("prefix") == part):
            return i
    return None


def _key_and_reason(exc: Exception) -> tuple[str, str]:
    """(key, reason) of an environment error: a ConfigError's own, else "key: reason" split from a message whose
    first part is a key (no spaces), else ("", message)."""
    if isinstance(exc, ConfigError) and not exc.where:
        return exc.key, exc.reason
    text = str(exc)
    sub, sep, reason = text.partition(": ")
    return (sub, reason) if sep and " " not in sub else ("", text)


# --------------------------------------------------------------------------------------------- the validator
class _Validator(Validator):
    """Reads the raw mapping section by section; every error is a ScenarioError(file, key, reason)."""

    def __init__(self, where: str, base_dir: Path) -> None:
        super().__init__(where, ScenarioError)
        self.base_dir = base_dir
        self._models = set(list_models())
        self._specs: dict[str, Any] = {}

    # --- typed getters (lotusim_core.base.validation) and the vessel name ----------------------------------
    def name(
        self, raw: Mapping, name: str, key: str, default: str | None = None, suffix: str = "", spec: Any = None
    ) -> str:
        """A name token (a vessel's of vehicle `spec`, or a prefix that gets `suffix`; lotusim_core.base.names)."""
        value = self.get_text(raw, name, key, default)
        actuators = [a.name for a in (*spec.thrusters, *spec.fins)] if spec is not None else ()
        if problem := name_problem(value + suffix, actuators):
            raise self.fail(join_key(key, name), problem)
        return value

    # --- sections ---------------------------------------------------------------------------------------------
    def fill(self, sc: Scenario, data: Any) -> None:
        data = self.mapping(data, "", TOP_KEYS)
        if not data:
            raise self.fail("<top level>", "empty scenario (expected at least `vessels:` or `generators:`)")
        sc.name = self.name(data, "name", "", sc.path.stem)
        sc.description = str(data.get("description", ""))
        sc.seed = self.get_integer(data, "seed", "", 0, low=0)
        duration = data.get("duration_s")
        sc.duration_s = None if duration is None else self.number(duration, "duration_s", low=0.0, strict_low=True)
        sc.world = self.world(data.get("world"))
        sc.physics = self.physics(data.get("physics"))
        sc.environment, env = self.environment(data.get("environment"), sc.world, sc.seed)
        sc.sensors = self.sensor_settings(data.get("sensors"))
        vessels = self.vessels(data.get("vessels"), sc)
        vessels += self.generators(data.get("generators"), sc, len(vessels))
        if not vessels:
            raise self.fail("vessels", "no vessel (give `vessels:` and/or `generators:`)")
        self.unique_names(vessels)
        self.check_depths(vessels, sc.world, env)
        sc.vessels = vessels
        sc.controllers = self.controllers(data.get("controllers"), vessels, sc.world, env)
        self.check_controller_rates(data.get("controllers"), sc)
        sc.recording = self.recording(data.get("recording"), sc)

    def check_controller_rates(self, raw: Any, sc: Scenario) -> None:
        """A controller type with MIN_ODOM_RATE_HZ (the flight controller: its rate loop steps per state) needs
        its states at least that fast: physics.odom_rate_hz with `state_source: odom`, else (the controller
        hosts' default, STATE_SOURCE_IN_HOST) the fleet state's rate, 1 / (step_s x fleet_state_every)."""
        types = controller_registry()
        for i, item in enumerate(raw or []):
            kind = types.get(item.get("type"))
            need = getattr(kind, "MIN_ODOM_RATE_HZ", 0.0)
            default = getattr(kind, "STATE_SOURCE_IN_HOST", "odom")
            source = (item.get("parameters") or {}).get("state_source", default)
            if source == "fleet_state" and sc.physics.fleet_state_rate_hz < need * (1 - 1e-9):
                raise self.fail(
                    f"controllers[{i}].type",
                    f"{item['type']} steps on every fleet state and needs it at >= {need:g} Hz (it is "
                    f"{sc.physics.fleet_state_rate_hz:g} Hz = 1 / (physics.step_s x physics.fleet_state_every); "
                    "step_s 0.02 gives 50)",
                )
            if source != "fleet_state" and sc.physics.odom_rate_hz < need:
                raise self.fail(
                    f"controllers[{i}].type",
                    f"{item['type']} steps on every odometry message and needs physics.odom_rate_hz >= {need:g} "
                    f"(it is {sc.physics.odom_rate_hz:g}; 50 with step_s 0.02)",
                )

    def world(self, raw: Any) -> World:
        key = "world"
        raw = self.mapping(raw, key, WORLD_ENV_KEYS)
        o = self.mapping(raw.get("origin"), f"{key}.origin", ("latitude_deg", "longitude_deg", "altitude_m"))
        origin = GeodeticOrigin(
            self.get_number(o, "latitude_deg", f"{key}.origin", 0.0, low=-90.0, high=90.0),
            self.get_number(o, "longitude_deg", f"{key}.origin", 0.0, low=-180.0, high=360.0),
            self.get_number(o, "altitude_m", f"{key}.origin", 0.0),
        )
        rho = self.get_number(raw, "water_density_kgm3", key, RHO_WATER, low=900.0, high=1100.0)
        bathymetry = copy.deepcopy(self.mapping(raw.get("bathymetry"), f"{key}.bathymetry"))
        return World(origin, rho, self.absolute_files(bathymetry))

    def physics(self, raw: Any) -> Physics:
        key = "physics"
        raw = self.mapping(raw, key, tuple(Physics.__dataclass_fields__))
        d = Physics()
        p = Physics(
            step_s=self.get_number(raw, "step_s", key, d.step_s, low=0.0, high=1.0, strict_low=True),
            mode=self.get_choice(raw, "mode", key, MODES, d.mode),
            real_time_factor=self.get_number(
                raw, "real_time_factor", key, d.real_time_factor, low=0.0, strict_low=True
            ),
            workers=self.get_integer(raw, "workers", key, d.workers, low=1),
            integrator=self.get_choice(raw, "integrator", key, INTEGRATORS, d.integrator),
            substeps=self.get_integer(raw, "substeps", key, d.substeps, low=1),
            fleet_state_every=self.get_integer(raw, "fleet_state_every", key, d.fleet_state_every, low=1),
            odom_rate_hz=self.get_number(raw, "odom_rate_hz", key, d.odom_rate_hz, low=0.0, strict_low=True),
            publish_tf=self.get_boolean(raw, "publish_tf", key, d.publish_tf),
            stats_rate_hz=self.get_number(raw, "stats_rate_hz", key, d.stats_rate_hz, low=0.0, strict_low=True),
            collisions=self.get_boolean(raw, "collisions", key, d.collisions),
            collision_restitution=self.get_number(
                raw, "collision_restitution", key, d.collision_restitution, low=0.0, high=1.0
            ),
            collision_friction=self.get_number(raw, "collision_friction", key, d.collision_friction, low=0.0),
            max_control_lag_s=self.get_number(raw, "max_control_lag_s", key, d.max_control_lag_s, low=0.0),
        )
        if p.mode == "realtime" and p.real_time_factor != 1.0:
            raise self.fail(
                f"{key}.real_time_factor",
                f"mode realtime runs at a real-time factor of 1, found {p.real_time_factor:g} (use mode: scaled)",
            )
        if p.odom_rate_hz > 1.0 / p.step_s * (1 + 1e-9):
            raise self.fail(
                f"{key}.odom_rate_hz",
                f"{p.odom_rate_hz:g} Hz is faster than the physics step ({1.0 / p.step_s:g} Hz at step_s {p.step_s:g})",
            )
        return p

    def environment(self, raw: Any, world: World, seed: int) -> tuple[dict, Any]:
        """The full environment mapping (world's site keys + the scenario seed + this section), built once."""
        key = "environment"
        raw = copy.deepcopy(self.mapping(raw, key))
        for moved in (*WORLD_ENV_KEYS, "seed"):
            if moved in raw:
                home = "seed (top level)" if moved == "seed" else f"world.{moved}"
                raise self.fail(f"{key}.{moved}", f"give it as {home}: one value for physics, sensors and currents")
        config = {
            "seed": seed,
            "origin": {
                "latitude_deg": world.origin.latitude_deg,
                "longitude_deg": world.origin.longitude_deg,
                "altitude_m": world.origin.altitude_m,
            },
            "water_density_kgm3": world.water_density_kgm3,
            **({"bathymetry": world.bathymetry} if world.bathymetry else {}),
            **self.absolute_files(raw),
        }
        try:
            env = build_environment(config, base_dir=self.base_dir)
        except (ValueError, OSError) as exc:
            sub, reason = _key_and_reason(exc)
            top = sub.split(".")[0].split("[")[0]
            prefix = "world." if top in WORLD_ENV_KEYS else ("" if top == "seed" else "environment.")
            raise self.fail(f"{prefix}{sub}" if sub else key, reason) from None
        return config, env

    def absolute_files(self, config: Any) -> Any:
        """Every `file:` path of an environment section, made absolute against the scenario's directory (the
        nodes that read it may run elsewhere)."""
        if isinstance(config, dict):
            for k, v in config.items():
                if k == "file" and isinstance(v, str) and v and not Path(v).expanduser().is_absolute():
                    config[k] = str((self.base_dir / Path(v).expanduser()).resolve())
                else:
                    self.absolute_files(v)
        elif isinstance(config, list):
            for v in config:
                self.absolute_files(v)
        return config

    def sensor_settings(self, raw: Any) -> SensorSettings:
        key = "sensors"
        raw = self.mapping(raw, key, tuple(SensorSettings.__dataclass_fields__))
        d = SensorSettings()
        defaults = self.mapping(raw.get("defaults"), f"{key}.defaults")
        try:
            parse_suite(defaults, f"{key}.defaults")  # every kind and parameter must exist
        except ValueError as exc:
            raise self._suite_error(exc, f"{key}.defaults") from None
        beacons = self.mapping_of(raw.get("acoustic_beacons"), f"{key}.acoustic_beacons", self._position)
        return SensorSettings(
            defaults=copy.deepcopy(defaults),
            magnetic_declination_deg=self.get_number(
                raw, "magnetic_declination_deg", key, d.magnetic_declination_deg, low=-180.0, high=180.0
            ),
            magnetic_inclination_deg=self.get_number(
                raw, "magnetic_inclination_deg", key, d.magnetic_inclination_deg, low=-90.0, high=90.0
            ),
            magnetic_intensity_nt=self.get_number(raw, "magnetic_intensity_nt", key, d.magnetic_intensity_nt, low=0.0),
            sound_speed_mps=self.get_number(raw, "sound_speed_mps", key, d.sound_speed_mps, low=0.0, strict_low=True),
            acoustic_beacons=beacons,
        )

    def _position(self, raw: Any, key: str) -> list[float]:
        """[x, y, z] (m, `map` ENU)."""
        return list(self.vector(raw, key, 3))

    def _suite_error(self, exc: Exception, prefix: str) -> ScenarioError:
        """A sensor suite refused under `prefix` (a SuiteError keyed by its path below prefix) as this file's error."""
        if isinstance(exc, ConfigError):
            return self.fail(exc.key if exc.key.startswith(prefix) else prefix, exc.reason)
        return self.fail(prefix, str(exc))

    # --- vessels ----------------------------------------------------------------------------------------------
    def spec(self, model: str, key: str):
        if model not in self._models:
            raise self.fail(key, f"unknown model {model!r} (catalogue: {', '.join(sorted(self._models))})")
        if model not in self._specs:
            try:
                self._specs[model] = load_vehicle(model)
            except CatalogueError as exc:
                raise self.fail(key, f"catalogue entry {model!r} is invalid: {exc}") from None
        return self._specs[model]

    def vessels(self, raw: Any, sc: Scenario) -> list[VesselPlan]:
        if raw is None:
            return []
        if not isinstance(raw, list):
            raise self.fail("vessels", f"expected a list of vessels, found {type(raw).__name__}")
        allowed = ("name", "model", "pose", "twist", "overrides", "sensors", "worker")
        out = []
        for i, item in enumerate(raw):
            label = item.get("name") if isinstance(item, dict) and isinstance(item.get("name"), str) else i
            key = f"vessels[{label}]"
            item = self.mapping(item, key, allowed)
            model = self.get_text(item, "model", key)
            spec = self.spec(model, f"{key}.model")
            name = self.name(item, "name", key, spec=spec)
            overrides = self.overrides(item.get("overrides"), spec, f"{key}.overrides")
            domain = self._domain(spec, overrides, f"{key}.overrides")
            sensors = self.vessel_sensors(item.get("sensors"), spec, sc, f"{key}.sensors")
            pose = self.pose(item.get("pose"), f"{key}.pose")
            out.append(
                VesselPlan(
                    name=name,
                    model=model,
                    domain=domain,
                    twist_flu=self.twist(item.get("twist"), f"{key}.twist"),
                    overrides=overrides,
                    sensors=sensors,
                    worker=self.worker(item, key, sc.physics),
                    **pose,
                )
            )
        return out

    def _domain(self, spec, overrides: dict, key: str) -> str:
        if not overrides:
            return spec.domain
        try:
            return apply_overrides(spec, overrides).domain
        except CatalogueError as exc:
            raise self.fail(f"{key}.{exc.key}" if exc.key != "<overrides>" else key, exc.reason) from None

    def overrides(self, raw: Any, spec, key: str) -> dict:
        """Catalogue overrides (catalogue.apply_overrides), checked now; sensors go under `sensors:`."""
        raw = self.mapping(raw, key)
        if "sensors" in raw:
            raise self.fail(f"{key}.sensors", "sensor overrides go in the vessel's own `sensors:` mapping")
        if raw:
            self._domain(spec, raw, key)
        return copy.deepcopy(raw)

    def vessel_sensors(self, raw: Any, spec, sc: Scenario, key: str) -> dict:
        """Per-vessel sensor overrides, merged with the scenario defaults; the resulting suite is validated and
        every rate checked against the fleet-state rate (a sensor cannot publish faster)."""
        own = self.mapping(raw, key)
        defaults = {k: v for k, v in sc.sensors.defaults.items() if k in (spec.sensors or {})}
        combined = merge_sensors(defaults, own) if defaults else copy.deepcopy(own)
        try:
            suite = parse_suite(merge_sensors(spec.sensors, combined), key)
        except ValueError as exc:
            raise self._suite_error(exc, key) from None
        limit = sc.physics.fleet_state_rate_hz
        for kind, params in suite.items():
            rate = params.get("rate_hz", params.get("max_rate_hz"))
            if rate is not None and rate > limit * (1 + 1e-9):
                raise self.fail(
                    f"{key}.{kind}",
                    f"rate {rate:g} Hz is faster than /lotusim/fleet_state ({limit:g} Hz = 1 / (physics.step_s x "
                    "physics.fleet_state_every)); lower the rate or the step",
                )
        return combined

    def pose(self, raw: Any, key: str) -> dict:
        """ENU {position, yaw_deg | orientation} or geodetic {latitude_deg, longitude_deg, depth_m, heading_deg}."""
        raw = self.mapping(raw, key)
        geodetic_keys = ("latitude_deg", "longitude_deg", "depth_m", "heading_deg")
        enu_keys = ("position", "yaw_deg", "orientation")
        if any(k in raw for k in geodetic_keys):
            self.mapping(raw, key, geodetic_keys)
            lat = self.get_number(raw, "latitude_deg", key, low=-90.0, high=90.0)
            lon = self.get_number(raw, "longitude_deg", key, low=-180.0, high=360.0)
            depth = self.get_number(raw, "depth_m", key, 0.0)
            heading = self.get_number(raw, "heading_deg", key, 0.0, low=-360.0, high=360.0)
            return {"geodetic": (lat, lon, depth, heading)}
        self.mapping(raw, key, enu_keys)
        position = self.vector(raw.get("position", [0.0, 0.0, 0.0]), f"{key}.position", 3)
        if "orientation" in raw:
            if "yaw_deg" in raw:
                raise self.fail(f"{key}.yaw_deg", "give yaw_deg or orientation [x, y, z, w], not both")
            q = np.array(self.vector(raw["orientation"], f"{key}.orientation", 4))
            norm = float(np.linalg.norm(q))
            if abs(norm - 1.0) > 1e-3:
                raise self.fail(f"{key}.orientation", f"expected a unit quaternion [x, y, z, w], norm is {norm:g}")
            q_xyzw = q / norm
        else:
            q_xyzw = frames.yaw_to_q_enu_flu(
                math.radians(self.get_number(raw, "yaw_deg", key, 0.0, low=-360.0, high=360.0))
            )
        return {"position_enu": position, "q_enu_flu": tuple(float(v) for v in q_xyzw)}

    def twist(self, raw: Any, key: str) -> tuple[float, ...]:
        raw = self.mapping(raw, key, ("linear", "angular"))
        lin = self.vector(raw.get("linear", [0.0, 0.0, 0.0]), f"{key}.linear", 3)
        ang = self.vector(raw.get("angular", [0.0, 0.0, 0.0]), f"{key}.angular", 3)
        return lin + ang

    def worker(self, raw: Mapping, key: str, physics: Physics) -> str:
        if raw.get("worker") in (None, ""):
            return ""
        value = self.get_text(raw, "worker", key)
        allowed = [f"worker_{k}" for k in range(physics.workers)]
        if value not in allowed:
            raise self.fail(
                f"{key}.worker",
                f"expected one of {', '.join(allowed)} (physics.workers = {physics.workers}), found {value!r}",
            )
        return value

    def generators(self, raw: Any, sc: Scenario, offset: int) -> list[VesselPlan]:
        raw = self.sequence(raw, "generators")
        out: list[VesselPlan] = []
        for i, item in enumerate(raw):
            item = self.mapping(item, f"generators[{i}]", ("fleet_grid",))
            if len(item) != 1:
                raise self.fail(f"generators[{i}]", "expected one generator, e.g. {fleet_grid: {...}}")
            out += self.fleet_grid(item["fleet_grid"], f"generators[{i}].fleet_grid", sc)
        return out

    def fleet_grid(self, raw: Any, key: str, sc: Scenario) -> list[VesselPlan]:
        """`count` vessels named <prefix>_0000.. on a grid of `columns` (default ceil(sqrt(count))) columns
        towards east and rows towards north, `spacing_m` apart, from `origin` (ENU position or lat/lon/depth)."""
        allowed = (
            "model",
            "count",
            "spacing_m",
            "origin",
            "columns",
            "prefix",
            "yaw_deg",
            "heading_deg",
            "overrides",
            "sensors",
            "worker",
        )
        raw = self.mapping(raw, key, allowed)
        model = self.get_text(raw, "model", key)
        spec = self.spec(model, f"{key}.model")
        count = self.get_integer(raw, "count", key, None, low=1)
        spacing = self.get_number(raw, "spacing_m", key, 10.0, low=0.0, strict_low=True)
        columns = self.get_integer(raw, "columns", key, math.ceil(math.sqrt(count)), low=1)
        digits = "0" * max(4, len(str(count - 1)))  # the generated names: <prefix>_0000 ...
        prefix = self.name(raw, "prefix", key, model, suffix=f"_{digits}", spec=spec)
        overrides = self.overrides(raw.get("overrides"), spec, f"{key}.overrides")
        domain = self._domain(spec, overrides, f"{key}.overrides")
        sensors = self.vessel_sensors(raw.get("sensors"), spec, sc, f"{key}.sensors")
        worker = self.worker(raw, key, sc.physics)
        origin = self.mapping(
            raw.get("origin"), f"{key}.origin", ("position", "latitude_deg", "longitude_deg", "depth_m")
        )
        if "position" in origin:
            if len(origin) > 1:
                raise self.fail(f"{key}.origin", "give position [x, y, z] or latitude_deg/longitude_deg/depth_m")
            start = np.array(self.vector(origin["position"], f"{key}.origin.position", 3))
        elif origin:
            lat = self.get_number(origin, "latitude_deg", f"{key}.origin", low=-90.0, high=90.0)
            lon = self.get_number(origin, "longitude_deg", f"{key}.origin", low=-180.0, high=360.0)
            depth = self.get_number(origin, "depth_m", f"{key}.origin", 0.0)
            start = geodetic_to_enu(np.array([[lat, lon, 0.0]]), sc.world.origin)[0]
            start[2] = -depth  # depth below the local sea surface, as the MAS server does
        else:
            start = np.zeros(3)
        if "yaw_deg" in raw and "heading_deg" in raw:
            raise self.fail(f"{key}.heading_deg", "give yaw_deg (ENU) or heading_deg (compass), not both")
        if "heading_deg" in raw:
            q_xyzw = frames.heading_to_q_enu_flu(self.get_number(raw, "heading_deg", key, low=-360.0, high=360.0))
        else:
            q_xyzw = frames.yaw_to_q_enu_flu(
                math.radians(self.get_number(raw, "yaw_deg", key, 0.0, low=-360.0, high=360.0))
            )
        q = tuple(float(v) for v in q_xyzw)
        k = np.arange(count)
        xyz = start + np.column_stack([(k % columns) * spacing, (k // columns) * spacing, np.zeros(count)])
        width = max(4, len(str(count - 1)))
        return [
            VesselPlan(
                name=f"{prefix}_{j:0{width}d}",
                model=model,
                domain=domain,
                position_enu=tuple(float(v) for v in xyz[j]),
                q_enu_flu=q,
                overrides=overrides,
                sensors=sensors,
                worker=worker,
            )
            for j in range(count)
        ]

    def unique_names(self, vessels: list[VesselPlan]) -> None:
        seen: set[str] = set()
        for v in vessels:
            if v.name in seen:
                raise self.fail(f"vessels[{v.name}].name", f"duplicate vessel name {v.name!r} (names are namespaces)")
            seen.add(v.name)

    def check_depths(self, vessels: list[VesselPlan], world: World, env) -> None:
        """Every vessel starts above the sea floor of the environment's bathymetry, underwater vessels at or below
        the surface, aerial ones at or above it (vectorised over the fleet)."""
        xyz = enu_positions(vessels, world.origin)
        depth = -xyz[:, 2]
        seabed = seabed_depths_m(env, xyz[:, 0], xyz[:, 1])
        underwater = np.array([v.domain == "underwater" for v in vessels])
        aerial = np.array([v.domain == "aerial" for v in vessels])
        wrong_side = (underwater & (depth < -1e-9)) | (aerial & (depth > 1e-9))
        for i in np.flatnonzero((depth >= seabed) | wrong_side):  # the same checks as a spawn's
            where = f" at x {xyz[i, 0]:.1f}, y {xyz[i, 1]:.1f} m"
            raise self.fail(
                f"vessels[{vessels[i].name}].pose", start_problem(depth[i], seabed[i], vessels[i].domain, where)
            )

    # --- controllers and recording ----------------------------------------------------------------------------
    def controllers(self, raw: Any, vessels: list[VesselPlan], world: World, env) -> list[ControllerPlan]:
        raw = self.sequence(raw, "controllers")
        by_name = {v.name: v for v in vessels}
        out: list[ControllerPlan] = []
        taken: set[tuple[str, str]] = set()
        for i, item in enumerate(raw):
            key = f"controllers[{i}]"
            item = self.mapping(item, key, ("type", "vessel", "parameters", "setpoints"))
            types = controller_registry()
            kind = self.get_choice(item, "type", key, tuple(types), item.get("type", ""))
            controller_cls = types[kind]
            pattern = self.get_text(item, "vessel", key)
            names = (
                [n for n in by_name if fnmatch.fnmatchcase(n, pattern)]
                if any(c in pattern for c in "*?[")
                else ([pattern] if pattern in by_name else [])
            )
            if not names:
                raise self.fail(f"{key}.vessel", f"no vessel named or matching {pattern!r}")
            parameters = self.ros_parameters(item.get("parameters"), f"{key}.parameters")
            for name in names:
                vessel = by_name[name]
                reason = controller_cls.cannot_drive(self.spec(vessel.model, f"{key}.vessel"))
                if reason is not None:
                    raise self.fail(f"{key}.vessel", f"{kind} cannot drive {name} ({vessel.model}): {reason}")
                if (kind, name) in taken:
                    raise self.fail(f"{key}.vessel", f"{name} already has a {kind}")
                taken.add((kind, name))
                where = f"{key}.setpoints"
                setpoints = self.setpoints(controller_cls, item.get("setpoints"), vessel, world, env, where)
                params = {"vessel": name, "use_sim_time": True, "model": vessel.model, **origin_parameters(world)}
                out.append(ControllerPlan(kind, name, {**params, **parameters}, setpoints))
        return out

    def ros_parameters(self, raw: Any, key: str) -> dict:
        """ROS parameter values: bool, int, float, str, or a non-empty list of one of these."""
        raw = self.mapping(raw, key)
        for name, value in raw.items():
            scalar = (bool, int, float, str)
            ok = isinstance(value, scalar) or (
                isinstance(value, list)
                and value
                and len({type(v) for v in value}) == 1
                and isinstance(value[0], scalar)
            )
            if not ok or (isinstance(value, float) and not math.isfinite(value)):
                raise self.fail(
                    f"{key}.{name}",
                    f"expected a ROS parameter value (bool, int, float, string or a "
                    f"list of one of these), found {value!r}",
                )
        return copy.deepcopy(raw)

    def setpoints(self, cls: type, raw: Any, vessel: VesselPlan, world: World, env, key: str) -> dict:
        """The controller's scenario set-points: the keys it accepts (cls.SETPOINT_KEYS), each checked here
        (waypoints to lat/lon and ENU, depth above the sea floor, headings in range); REQUIRED_SETPOINTS must be
        given."""
        raw = self.mapping(raw, key, tuple(cls.SETPOINT_KEYS))
        out: dict[str, Any] = {}
        for name in cls.REQUIRED_SETPOINTS:
            if name not in raw:
                raise self.fail(f"{key}.{name}", f"missing (required by {cls.TYPE})")
        if "waypoints" in cls.SETPOINT_KEYS:
            out.update(self.waypoint_setpoints(raw, world, key))
        if "depth_m" in raw:
            out["depth_m"] = self.get_number(raw, "depth_m", key, low=0.0)
            x, y, _ = enu_positions([vessel], world.origin)[0]
            seabed = float(np.asarray(env.bathymetry.seabed_depth_m(np.array([x]), np.array([y])))[0])
            if out["depth_m"] >= seabed:
                raise self.fail(
                    f"{key}.depth_m",
                    f"{out['depth_m']:g} m is at or below the sea floor under {vessel.name} ({seabed:g} m)",
                )
        if "heading_deg" in raw:
            out["heading_deg"] = self.get_number(raw, "heading_deg", key, low=-360.0, high=360.0)
        if "speed_mps" in raw:
            out["speed_mps"] = self.get_number(raw, "speed_mps", key, low=0.0)
        for name in set(raw) - set(out) - set(SETPOINT_PARSED):  # a controller's own keys: ROS-parameter values
            out[name] = self.ros_parameters({name: raw[name]}, key)[name]
        return out

    def waypoint_setpoints(self, raw: Mapping, world: World, key: str) -> dict:
        """waypoints ([x, y] in map ENU m, or {latitude_deg, longitude_deg}) -> the fields of SetWaypoints plus
        the ENU points; acceptance_radius_m and speed_mps 0 (the controller's default), loop false."""
        points = raw.get("waypoints") or []
        if not isinstance(points, list):
            raise self.fail(f"{key}.waypoints", f"expected a list of waypoints, found {points!r}")
        lat_lon, enu_xy = [], []
        for j, wp in enumerate(points):
            wkey = f"{key}.waypoints[{j}]"
            if isinstance(wp, dict):
                wp = self.mapping(wp, wkey, ("latitude_deg", "longitude_deg"))
                lat = self.get_number(wp, "latitude_deg", wkey, low=-90.0, high=90.0)
                lon = self.get_number(wp, "longitude_deg", wkey, low=-180.0, high=360.0)
                lat_lon.append((lat, lon))
                enu_xy.append(tuple(geodetic_to_enu(np.array([[lat, lon, 0.0]]), world.origin)[0, :2]))
            else:
                x, y = self.vector(wp, wkey, 2)
                lat_lon.append(tuple(enu_to_geodetic(np.array([[x, y, 0.0]]), world.origin)[0, :2]))
                enu_xy.append((x, y))
        return {
            "latitude_deg": [float(a) for a, _ in lat_lon],
            "longitude_deg": [float(b) for _, b in lat_lon],
            "waypoints_enu": [[float(x), float(y)] for x, y in enu_xy],
            "acceptance_radius_m": self.get_number(raw, "acceptance_radius_m", key, 0.0, low=0.0),
            "speed_mps": self.get_number(raw, "speed_mps", key, 0.0, low=0.0),
            "loop": self.get_boolean(raw, "loop", key, False),
        }

    def recording(self, raw: Any, sc: Scenario) -> RecordPlan | None:
        if raw is None:
            return None
        key = "recording"
        raw = self.mapping(raw, key, ("topics", "path"))
        topics = raw.get("topics", list(DEFAULT_RECORD_TOPICS))
        if not isinstance(topics, list) or not topics or not all(isinstance(t, str) for t in topics):
            raise self.fail(f"{key}.topics", f"expected a non-empty list of topic names, found {topics!r}")
        expanded: list[str] = []
        for j, topic in enumerate(topics):
            if not TOPIC_RE.match(topic) or (("{" in topic) and "{vessel}" not in topic):
                raise self.fail(
                    f"{key}.topics[{j}]",
                    f"{topic!r} is not a valid topic name (tokens of "
                    "[A-Za-z0-9_], '{vessel}' expands to every vessel)",
                )
            names = [v.name for v in sc.vessels] if "{vessel}" in topic else [None]
            for n in names:
                t = topic.replace("{vessel}", n) if n else topic
                t = t if t.startswith("/") else "/" + t
                if t not in expanded:
                    expanded.append(t)
        path = self.get_text(raw, "path", key, f"recordings/{sc.name}")
        return RecordPlan(tuple(expanded), path)


def controller_registry() -> dict[str, type]:
    """lotusim_autonomy.controller_host.CONTROLLER_TYPES (imported here: it brings in rclpy)."""
    from lotusim_autonomy.controller_host import CONTROLLER_TYPES

    return CONTROLLER_TYPES


def origin_parameters(world: World) -> dict[str, float]:
    """The world origin as a controller's origin_* parameters (WGS84 deg, m)."""
    o = world.origin
    return {
        "origin_latitude_deg": float(o.latitude_deg),
        "origin_longitude_deg": float(o.longitude_deg),
        "origin_altitude_m": float(o.altitude_m),
    }


def enu_positions(vessels: list[VesselPlan], origin: GeodeticOrigin) -> np.ndarray:
    """N x 3 start positions in `map` ENU (m); geodetic poses converted with the world origin (z = -depth)."""
    xyz = np.zeros((len(vessels), 3))
    geo_rows = [i for i, v in enumerate(vessels) if v.geodetic is not None]
    for i, v in enumerate(vessels):
        if v.geodetic is None:
            xyz[i] = v.position_enu
    if geo_rows:
        g = np.array([vessels[i].geodetic for i in geo_rows])
        enu = geodetic_to_enu(np.column_stack([g[:, 0], g[:, 1], np.zeros(len(g))]), origin)
        xyz[geo_rows, :2] = enu[:, :2]
        xyz[geo_rows, 2] = -g[:, 2]
    return xyz
