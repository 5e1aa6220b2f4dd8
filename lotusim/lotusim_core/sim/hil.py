"""Hardware-in-the-loop remapping: put one simulated vessel's topics under a real vehicle stack's names and rates.

The HoloOcean HIL/SIL setup of [Meyers2025] (sec. IV-V): the simulator publishes the sensor data
"with the same topics and message types used by the sensor drivers", at "the real sensor update rates", and
takes the stack's actuator commands back, so the stack runs unchanged. Here that is a remapping file:

    vessel: remus_1              # a vessel of the scenario's `vessels:` list
    lockstep: false              # true: physics mode lockstep, the stack advances the sim (/lotusim/step)
    topics:                      # the vessel's topic (relative to /<vessel>/) -> the stack's name [and rate]
      imu/data: {name: /couguv/imu/data, rate_hz: 50}
      depth: {name: /couguv/depth, rate_hz: 10}
      fins/top/cmd: /couguv/fins/top/cmd      # shorthand: name only

Several vessels go under `vessels: {name: {topic: ...}}` and raw rules of any plan node under
`nodes: {node: {from: to}}`. The rules of a vessel's topics are relative (`remus_1/imu/data` -> the stack's name)
so that they follow the nodes into a namespace (lotusim_core.ros.ros_names).

apply_hil(scenario, remapping) validates the file against the scenario (the topic exists for that vessel's
model and sensors; rates are reachable: a whole number of fleet-state periods, so that they are exact in sim
time) and returns the HilPlan: the remapping rules of each node, the rate settings, and the plan with them
applied (sensor rates as the vessel's sensor overrides, odometry rate as physics.odom_rate_hz, lockstep as
physics.mode). Controllers of the HIL vessel are dropped: the real stack drives it. Recipe: docs/hil.md.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lotusim_core.base.catalogue import load_vehicle
from lotusim_core.base.validation import Validator, join_key, read_yaml_file, show
from lotusim_core.sim.scenario import Plan, Scenario, ScenarioError
from lotusim_sensors.suite import merge_sensors, parse_suite

# The per-vessel topics (docs/interfaces.md, docs/sensors.md), by the node that owns them. Sensor topics -> the
# sensor kind whose rate key sets their rate (None: no rate of its own; AIS reports follow ITU-R M.1371).
SENSOR_TOPICS: dict[str, tuple[str, str | None]] = {
    "imu/data": ("imu", "rate_hz"),
    "mag": ("magnetometer", "rate_hz"),
    "pressure": ("pressure", "rate_hz"),
    "depth": ("pressure", "rate_hz"),
    "air_pressure": ("barometer", "rate_hz"),
    "gps/fix": ("gps", "rate_hz"),
    "gps/vel": ("gps", "rate_hz"),
    "dvl": ("dvl", "max_rate_hz"),
    "dvl/altitude": ("dvl", "max_rate_hz"),
    "altimeter": ("altimeter", "rate_hz"),
    "ais": ("ais", None),
    "acoustic/range": ("usbl", "rate_hz"),
    "modem/rx": ("modem", None),
    "modem/tx": ("modem", None),
    "scan": ("lidar_2d", "rate_hz"),
    "points": ("lidar_3d", "rate_hz"),
    "radar/b_scan": ("radar", "rate_hz"),
    "radar/ppi": ("radar", "rate_hz"),
    "sonar/image": ("sonar", "rate_hz"),
    "sonar/fan": ("sonar", "rate_hz"),
    "camera/image_raw": ("camera", "rate_hz"),
    "camera/camera_info": ("camera", "rate_hz"),
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
class VesselRemap:
    """The remapped topics of one vessel; `key`: where they are in the file (`topics` or `vessels.<name>`)."""

    vessel: str
    topics: tuple[TopicMap, ...]
    key: str


@dataclass(frozen=True)
class HilRemapping:
    """A loaded remapping file: the vessels' topics, extra rules per node (from, to), lockstep."""

    path: Path
    lockstep: bool
    vessels: tuple[VesselRemap, ...]
    nodes: dict[str, tuple[tuple[str, str], ...]] = dataclasses.field(default_factory=dict)

    @property
    def vessel(self) -> str:
        """The first (with `vessel:`, the only) remapped vessel."""
        return self.vessels[0].vessel if self.vessels else ""

    @property
    def topics(self) -> tuple[TopicMap, ...]:
        return self.vessels[0].topics if self.vessels else ()


@dataclass(frozen=True)
class HilPlan:
    """The scenario's plan with the HIL settings applied, plus the remapping rules per node name ((from, to)
    pairs as launch_ros.actions.Node(remappings=...) and `--ros-args -r from:=to` take them; a vessel's topic is
    given relative, `<vessel>/imu/data`, so that the rule follows the node's namespace)."""

    plan: Plan
    scenario: Scenario
    remappings: dict[str, list[tuple[str, str]]]
    rates_hz: dict[str, float]
    dropped_controllers: tuple[str, ...]


class HilError(ScenarioError):
    """A malformed remapping file, or one that does not fit the scenario: names file, key and reason."""


KNOWN_KEYS = ("vessel", "topics", "vessels", "nodes", "lockstep", "description")


def load_remapping(path: str | Path) -> HilRemapping:
    """Read and check the shape of a remapping file (the scenario checks come in apply_hil)."""
    path = Path(path).expanduser()
    check = Validator(str(path), HilError)
    data = check.mapping(read_yaml_file(path, HilError), "", KNOWN_KEYS, none_ok=False)
    lockstep = check.get_boolean(data, "lockstep", "", False)
    vessels = _vessel_remaps(check, data)
    nodes = _node_rules(check, data.get("nodes"))
    if not vessels and not nodes:
        raise check.fail("vessel", "expected the name of a scenario vessel (or `vessels:` / `nodes:`)")
    targets: dict[str, str] = {}
    for v in vessels:
        for t in v.topics:
            if t.name in targets:
                raise check.fail(f"{v.key}.{t.topic}.name", f"{t.name!r} is already the name of {targets[t.name]}")
            targets[t.name] = t.topic if v.key == "topics" else f"{v.vessel}/{t.topic}"
    return HilRemapping(path, lockstep, vessels, nodes)


def _vessel_remaps(check: Validator, data: Mapping[str, Any]) -> tuple[VesselRemap, ...]:
    """`vessel:` + `topics:` (one vessel) and/or `vessels: {name: topics}`."""
    out: list[VesselRemap] = []
    if "vessel" in data or "topics" in data:
        vessel = data.get("vessel")
        if not isinstance(vessel, str) or not vessel:
            raise check.fail("vessel", f"expected the name of a scenario vessel, got {show(vessel)}")
        out.append(VesselRemap(vessel, _topics(check, "topics", data.get("topics")), "topics"))
    for vessel, topics in check.mapping(data.get("vessels"), "vessels", none_ok=True).items():
        if not isinstance(vessel, str) or any(v.vessel == vessel for v in out):
            raise check.fail(f"vessels.{vessel}", "expected each vessel name once")
        out.append(VesselRemap(vessel, _topics(check, f"vessels.{vessel}", topics), f"vessels.{vessel}"))
    return tuple(out)


def _topics(check: Validator, key: str, raw: Any) -> tuple[TopicMap, ...]:
    """A vessel's `topic: name or {name, rate_hz}` entries (at least one)."""
    if not check.mapping(raw, key, none_ok=False):
        raise check.fail(key, "expected a mapping of topic -> name or {name, rate_hz}, got an empty one")
    return tuple(_topic(check, key, str(topic), entry) for topic, entry in raw.items())


def _node_rules(check: Validator, raw: Any) -> dict[str, tuple[tuple[str, str], ...]]:
    """`nodes: {node: {from: to}}`: extra `--ros-args -r from:=to` rules of a plan node (names checked here,
    the node in apply_hil)."""
    out: dict[str, tuple[tuple[str, str], ...]] = {}
    for node, rules in check.mapping(raw, "nodes").items():
        key = join_key("nodes", str(node))
        if not check.mapping(rules, key, none_ok=False):
            raise check.fail(key, "expected a mapping of from -> to names, got an empty one")
        for source, target in rules.items():
            for name in (source, target):
                if not isinstance(name, str) or not TARGET_RE.match(name):
                    raise check.fail(f"{key}.{source}", f"expected ROS names, got {show(name)}")
        out[str(node)] = tuple((str(a), str(b)) for a, b in rules.items())
    return out


def _topic(check: Validator, prefix: str, topic: str, entry: Any) -> TopicMap:
    key = f"{prefix}.{topic}"
    if topic.startswith("/"):
        raise check.fail(key, "give the vessel's topic relative to its namespace (imu/data, not /v/imu/data)")
    if isinstance(entry, str):
        entry = {"name": entry}
    entry = check.mapping(entry, key, ("name", "rate_hz"), none_ok=False)
    name = entry.get("name")
    if not isinstance(name, str) or not TARGET_RE.match(name):
        raise check.fail(f"{key}.name", f"expected a ROS topic name, got {show(name)}")
    rate = entry.get("rate_hz")
    rate_hz = None if rate is None else check.number(rate, f"{key}.rate_hz", low=0.0, strict_low=True)
    return TopicMap(topic, name, rate_hz)


def apply_hil(scenario: Scenario, remapping: HilRemapping, lockstep: bool | None = None) -> HilPlan:
    """Check the remapping against the scenario and apply it (module doc). `lockstep` overrides the file's."""
    where = str(remapping.path)
    overrides: dict[str, Any] = {}
    for v in remapping.vessels:
        overrides.update(_vessel_overrides(where, scenario, v))
    use_lockstep = remapping.lockstep if lockstep is None else lockstep
    if use_lockstep:
        overrides["physics.mode"] = "lockstep"
        overrides["physics.real_time_factor"] = 1.0
    try:
        scenario = scenario.with_overrides(overrides) if overrides else scenario
    except ScenarioError as exc:
        raise HilError(where, exc.key, f"{exc.reason} (applying the remapping file)") from None
    for v in remapping.vessels:
        _check_exact_rates(where, v, scenario)
    return _hil_plan(scenario, remapping)


def _vessel_overrides(where: str, scenario: Scenario, remap: VesselRemap) -> dict[str, Any]:
    """The scenario overrides (sensor rates, odometry rate) of one vessel's topics, after checking them."""
    names = {v.name for v in scenario.vessels}
    declared = {v.get("name") for v in (scenario.raw.get("vessels") or []) if isinstance(v, dict)}
    vkey = "vessel" if remap.key == "topics" else remap.key
    if remap.vessel not in names:
        raise HilError(where, vkey, f"no vessel {remap.vessel!r} in scenario {scenario.name}")
    if remap.vessel not in declared:
        raise HilError(where, vkey, f"{remap.vessel!r} comes from a generator; declare it under `vessels:`")
    vessel = scenario.vessel(remap.vessel)
    spec = load_vehicle(vessel.model)
    suite = parse_suite(merge_sensors(spec.sensors, vessel.sensors), f"vessel {vessel.name}")
    overrides: dict[str, Any] = {}
    sensor_rates: dict[str, tuple[str, float]] = {}  # kind -> (topic, rate)
    for t in remap.topics:
        key = f"{remap.key}.{t.topic}"
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
    return overrides


def _check_input(where: str, key: str, t: TopicMap, match: re.Match, spec, vessel: str) -> None:
    if t.rate_hz is not None:
        raise HilError(where, f"{key}.rate_hz", "a command topic has no rate here: the real stack publishes it")
    thruster, fin = match.group(2), match.group(3)
    for wanted, items, what in ((thruster, spec.thrusters, "thruster"), (fin, spec.fins, "fin")):
        known = [x.name for x in items]
        if wanted is not None and wanted not in known:
            raise HilError(where, key, f"{vessel} ({spec.name}) has no {what} {wanted!r} (known: {', '.join(known)})")


def _check_exact_rates(where: str, remap: VesselRemap, scenario: Scenario) -> None:
    """Sensors sample at fleet-state stamps and odometry at physics steps: a rate is exact in sim time only if
    its period is a whole number of those periods (else the intervals alternate between two values)."""
    physics = scenario.physics
    for t in remap.topics:
        if t.rate_hz is None:
            continue
        base = physics.fleet_state_rate_hz if t.topic != "odom" else 1.0 / physics.step_s
        ratio = base / t.rate_hz
        if ratio < 1.0 - RATE_TOL or abs(ratio - round(ratio)) > RATE_TOL * ratio:
            raise HilError(
                where,
                f"{remap.key}.{t.topic}.rate_hz",
                f"{t.rate_hz:g} Hz is not reachable exactly: the period must be a whole number of "
                f"{'physics steps' if t.topic == 'odom' else 'fleet-state periods'} ({base:g} Hz); "
                f"choose physics.step_s so that step_s x rate x fleet_state_every divides 1",
            )


def _hil_plan(scenario: Scenario, remapping: HilRemapping) -> HilPlan:
    plan = scenario.plan()
    dynamics = plan.dynamics_nodes
    remaps: dict[str, list[tuple[str, str]]] = {}
    for v in remapping.vessels:
        for t in v.topics:
            rule = (f"{v.vessel}/{t.topic}", t.name)  # relative: follows the node's namespace
            owners = ["sensor_publisher"] if t.topic in SENSOR_TOPICS else dynamics
            for node in owners:
                remaps.setdefault(node, []).append(rule)
    nodes = [*plan.node_parameters, *(c.node_name for c in plan.controllers)]
    for node, rules in remapping.nodes.items():
        if node not in nodes:
            raise HilError(str(remapping.path), f"nodes.{node}", f"no node {node!r} in the plan ({', '.join(nodes)})")
        remaps.setdefault(node, []).extend(rules)
    hil_vessels = {v.vessel for v in remapping.vessels}
    kept = tuple(c for c in plan.controllers if c.vessel not in hil_vessels)
    dropped = tuple(c.node_name for c in plan.controllers if c.vessel in hil_vessels)
    rates = {
        (t.topic if v.key == "topics" else f"{v.vessel}/{t.topic}"): t.rate_hz
        for v in remapping.vessels
        for t in v.topics
        if t.rate_hz is not None
    }
    return HilPlan(dataclasses.replace(plan, controllers=kept), scenario, remaps, rates, dropped)
