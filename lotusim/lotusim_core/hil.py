"""Hardware-in-the-loop remapping: put one simulated vessel's topics under a real vehicle stack's names and rates.

The HoloOcean HIL/SIL setup of 004_786a75be5c5bda5f.txt (sec. IV-V): the simulator publishes the sensor data
"with the same topics and message types used by the sensor drivers", at "the real sensor update rates", and
takes the stack's actuator commands back, so the stack runs unchanged. Here that is a remapping file:

    vessel: remus_1              # a vessel of the scenario's `vessels:` list
    lockstep: false              # true: physics mode lockstep, the stack advances the sim (/lotusim/step)
    topics:                      # the vessel's topic (relative to /<vessel>/) -> the stack's name [and rate]
      imu/data: {name: /couguv/imu/data, rate_hz: 50}
      depth: {name: /couguv/depth, rate_hz: 10}
      fins/top/cmd: /couguv/fins/top/cmd      # shorthand: name only

apply_hil(scenario, remapping) validates the file against the scenario (the topic exists for that vessel's
model and sensors; rates are reachable: a whole number of fleet-state periods, so that they are exact in sim
time) and returns the HilPlan: the remapping rules of each node, the rate settings, and the plan with them
applied (sensor rates as the vessel's sensor overrides, odometry rate as physics.odom_rate_hz, lockstep as
physics.mode). Controllers of the HIL vessel are dropped: the real stack drives it. Recipe: docs/hil.md.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from lotusim_core.catalogue import load_vehicle
from lotusim_core.scenario import Plan, Scenario, ScenarioError
from lotusim_sensors.suite import merge_sensors, parse_suite

# The per-vessel topics (ARCHITECTURE.md, docs/sensors.md), by the node that owns them. Sensor topics -> the
# sensor kind whose rate key sets their rate (None: no rate of its own; AIS reports follow ITU-R M.1371).
SENSOR_TOPICS: dict[str, tuple[str, str | None]] = {
    "imu/data": ("imu", "rate_hz"),
    "mag": ("magnetometer", "rate_hz"),
    "pressure": ("pressure", "rate_hz"),
    "depth": ("pressure", "rate_hz"),
    "gps/fix": ("gps", "rate_hz"),
    "gps/vel": ("gps", "rate_hz"),
    "dvl": ("dvl", "max_rate_hz"),
    "dvl/altitude": ("dvl", "max_rate_hz"),
    "altimeter": ("altimeter", "rate_hz"),
    "ais": ("ais", None),
    "acoustic/range": ("usbl", "rate_hz"),
    "modem/rx": ("modem", None),
    "modem/tx": ("modem", None),
}
INPUT_RE = re.compile(r"^(cmd_wrench|thrusters/([A-Za-z][A-Za-z0-9_]*)/cmd|fins/([A-Za-z][A-Za-z0-9_]*)/cmd)$")
TARGET_RE = re.compile(r"^(/|~/)?[A-Za-z_][A-Za-z0-9_]*(/[A-Za-z_][A-Za-z0-9_]*)*$")
RATE_TOL = 1e-6  # relative: a rate is exact if the fleet-state rate / rate is a whole number to this tolerance


@dataclass(frozen=True)
class TopicMap:
    """One remapped topic: the simulated vessel's topic (relative to /<vessel>/), the stack's name, its rate."""

    topic: str
    name: str
    rate_hz: float | None = None


@dataclass(frozen=True)
class HilRemapping:
    """A loaded remapping file."""

    path: Path
    vessel: str
    lockstep: bool
    topics: tuple[TopicMap, ...]


@dataclass(frozen=True)
class HilPlan:
    """The scenario's plan with the HIL settings applied, plus the remapping rules per node name
    ((from, to) pairs of absolute topic names, as launch_ros.actions.Node(remappings=...) takes them)."""

    plan: Plan
    scenario: Scenario
    remappings: dict[str, list[tuple[str, str]]]
    rates_hz: dict[str, float]
    dropped_controllers: tuple[str, ...]


class HilError(ScenarioError):
    """A malformed remapping file, or one that does not fit the scenario: names file, key and reason."""


def load_remapping(path: str | Path) -> HilRemapping:
    """Read and check the shape of a remapping file (the scenario checks come in apply_hil)."""
    path = Path(path).expanduser()
    where = str(path)
    try:
        data = yaml.safe_load(path.read_text())
    except OSError as exc:
        raise HilError(where, "<file>", f"cannot be read: {exc.strerror or exc}") from None
    except yaml.YAMLError as exc:
        raise HilError(where, "<file>", f"not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise HilError(where, "<top level>", f"expected a mapping, found {type(data).__name__}")
    unknown = sorted(set(data) - {"vessel", "lockstep", "topics", "description"})
    if unknown:
        raise HilError(where, unknown[0], "unknown key (known keys: vessel, lockstep, topics, description)")
    vessel = data.get("vessel")
    if not isinstance(vessel, str) or not vessel:
        raise HilError(where, "vessel", f"expected the name of a scenario vessel, found {vessel!r}")
    lockstep = data.get("lockstep", False)
    if not isinstance(lockstep, bool):
        raise HilError(where, "lockstep", f"expected true or false, found {lockstep!r}")
    raw_topics = data.get("topics")
    if not isinstance(raw_topics, dict) or not raw_topics:
        raise HilError(
            where, "topics", f"expected a mapping of topic -> name or {{name, rate_hz}}, found {raw_topics!r}"
        )
    topics = tuple(_topic(where, str(topic), entry) for topic, entry in raw_topics.items())
    targets: dict[str, str] = {}
    for t in topics:
        if t.name in targets:
            raise HilError(where, f"topics.{t.topic}.name", f"{t.name!r} is already the name of {targets[t.name]}")
        targets[t.name] = t.topic
    return HilRemapping(path, vessel, lockstep, topics)


def _topic(where: str, topic: str, entry: Any) -> TopicMap:
    key = f"topics.{topic}"
    if topic.startswith("/"):
        raise HilError(where, key, "give the vessel's topic relative to its namespace (imu/data, not /v/imu/data)")
    if isinstance(entry, str):
        entry = {"name": entry}
    if not isinstance(entry, dict):
        raise HilError(where, key, f"expected a topic name or {{name, rate_hz}}, found {entry!r}")
    unknown = sorted(set(entry) - {"name", "rate_hz"})
    if unknown:
        raise HilError(where, f"{key}.{unknown[0]}", "unknown key (known keys: name, rate_hz)")
    name = entry.get("name")
    if not isinstance(name, str) or not TARGET_RE.match(name):
        raise HilError(where, f"{key}.name", f"expected a ROS topic name, found {name!r}")
    rate = entry.get("rate_hz")
    if rate is not None and (isinstance(rate, bool) or not isinstance(rate, (int, float)) or not rate > 0):
        raise HilError(where, f"{key}.rate_hz", f"expected a rate > 0 Hz, found {rate!r}")
    return TopicMap(topic, name, None if rate is None else float(rate))


def apply_hil(scenario: Scenario, remapping: HilRemapping, lockstep: bool | None = None) -> HilPlan:
    """Check the remapping against the scenario and apply it (module doc). `lockstep` overrides the file's."""
    where = str(remapping.path)
    names = {v.name for v in scenario.vessels}
    declared = {v.get("name") for v in (scenario.raw.get("vessels") or []) if isinstance(v, dict)}
    if remapping.vessel not in names:
        raise HilError(where, "vessel", f"no vessel {remapping.vessel!r} in scenario {scenario.name}")
    if remapping.vessel not in declared:
        raise HilError(where, "vessel", f"{remapping.vessel!r} comes from a generator; declare it under `vessels:`")
    vessel = scenario.vessel(remapping.vessel)
    spec = load_vehicle(vessel.model)
    suite = parse_suite(merge_sensors(spec.sensors, vessel.sensors), f"vessel {vessel.name}")
    overrides: dict[str, Any] = {}
    sensor_rates: dict[str, tuple[str, float]] = {}  # kind -> (topic, rate)
    for t in remapping.topics:
        key = f"topics.{t.topic}"
        if t.topic in SENSOR_TOPICS:
            kind, rate_key = SENSOR_TOPICS[t.topic]
            if kind not in suite:
                carried = ", ".join(sorted(suite)) or "none"
                raise HilError(where, key, f"{vessel.name} ({vessel.model}) has no {kind} sensor (it has: {carried})")
            if t.rate_hz is None:
                continue
            if rate_key is None:
                raise HilError(where, f"{key}.rate_hz", f"{t.topic} has no rate setting (event-driven)")
            if kind in sensor_rates and sensor_rates[kind][1] != t.rate_hz:
                other = sensor_rates[kind][0]
                raise HilError(where, f"{key}.rate_hz", f"{t.topic} and {other} come from one {kind} sensor: one rate")
            sensor_rates[kind] = (t.topic, t.rate_hz)
            overrides[f"vessels.{vessel.name}.sensors.{kind}.{rate_key}"] = t.rate_hz
        elif t.topic == "odom":
            if t.rate_hz is not None:
                overrides["physics.odom_rate_hz"] = t.rate_hz
        elif match := INPUT_RE.match(t.topic):
            _check_input(where, key, t, match, spec, vessel.name)
        else:
            known = ", ".join([*SENSOR_TOPICS, "odom", "cmd_wrench", "thrusters/<name>/cmd", "fins/<name>/cmd"])
            raise HilError(where, key, f"not a per-vessel topic of lotusim (known: {known})")
    use_lockstep = remapping.lockstep if lockstep is None else lockstep
    if use_lockstep:
        overrides["physics.mode"] = "lockstep"
        overrides["physics.real_time_factor"] = 1.0
    try:
        scenario = scenario.with_overrides(overrides) if overrides else scenario
    except ScenarioError as exc:
        raise HilError(where, exc.key, f"{exc.reason} (applying the remapping file)") from None
    _check_exact_rates(where, remapping, scenario)
    return _hil_plan(scenario, remapping, vessel.name)


def _check_input(where: str, key: str, t: TopicMap, match: re.Match, spec, vessel: str) -> None:
    if t.rate_hz is not None:
        raise HilError(where, f"{key}.rate_hz", "a command topic has no rate here: the real stack publishes it")
    thruster, fin = match.group(2), match.group(3)
    for wanted, items, what in ((thruster, spec.thrusters, "thruster"), (fin, spec.fins, "fin")):
        known = [x.name for x in items]
        if wanted is not None and wanted not in known:
            raise HilError(where, key, f"{vessel} ({spec.name}) has no {what} {wanted!r} (known: {', '.join(known)})")


def _check_exact_rates(where: str, remapping: HilRemapping, scenario: Scenario) -> None:
    """Sensors sample at fleet-state stamps and odometry at physics steps: a rate is exact in sim time only if
    its period is a whole number of those periods (else the intervals alternate between two values)."""
    physics = scenario.physics
    for t in remapping.topics:
        if t.rate_hz is None:
            continue
        base = physics.fleet_state_rate_hz if t.topic != "odom" else 1.0 / physics.step_s
        ratio = base / t.rate_hz
        if ratio < 1.0 - RATE_TOL or abs(ratio - round(ratio)) > RATE_TOL * ratio:
            raise HilError(
                where,
                f"topics.{t.topic}.rate_hz",
                f"{t.rate_hz:g} Hz is not reachable exactly: the period must be a whole number of "
                f"{'physics steps' if t.topic == 'odom' else 'fleet-state periods'} ({base:g} Hz); "
                f"choose physics.step_s so that step_s x rate x fleet_state_every divides 1",
            )


def _hil_plan(scenario: Scenario, remapping: HilRemapping, vessel: str) -> HilPlan:
    plan = scenario.plan()
    dynamics = plan.dynamics_nodes
    remaps: dict[str, list[tuple[str, str]]] = {}
    for t in remapping.topics:
        rule = (f"/{vessel}/{t.topic}", t.name)
        owners = ["sensor_publisher"] if t.topic in SENSOR_TOPICS else dynamics
        for node in owners:
            remaps.setdefault(node, []).append(rule)
    kept = tuple(c for c in plan.controllers if c.vessel != vessel)
    dropped = tuple(c.node_name for c in plan.controllers if c.vessel == vessel)
    rates = {t.topic: t.rate_hz for t in remapping.topics if t.rate_hz is not None}
    return HilPlan(dataclasses.replace(plan, controllers=kept), scenario, remaps, rates, dropped)
