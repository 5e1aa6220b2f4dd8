"""What the launch files start, as plain data: one NodeSpec per process, built from a scenario Plan.

launch/sim.launch.py and launch/hil.launch.py only turn these into launch_ros.actions.Node / ExecuteProcess
(launch is not needed to build or test them). The executables are the console scripts of lotusim/setup.py;
the node names are the plan's (current_server, mas_server, dynamics_<k>, sensor_publisher), and the scenario's
controllers run in a few `controller_host_<k>` processes (controller_host_specs; lotusim_autonomy/controller_host.py).
"""

from __future__ import annotations

import re
import shlex
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from lotusim_core.base.paths import config_dir
from lotusim_core.sim.scenario import (
    ControllerPlan,
    Plan,
    Scenario,
    launch_overrides,
    load_scenario,
    parse_override_value,
)

_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
PACKAGE = "lotusim"
EXECUTABLES = {"current_server": "current_server", "mas_server": "mas_server", "sensor_publisher": "sensor_publisher"}


@dataclass(frozen=True)
class NodeSpec:
    """One node process: launch_ros.actions.Node(package, executable, name, parameters=[parameters],
    remappings=remappings, arguments=arguments)."""

    package: str
    executable: str
    name: str
    parameters: dict[str, Any] = field(default_factory=dict)
    remappings: tuple[tuple[str, str], ...] = ()
    arguments: tuple[str, ...] = ()


def parse_bool(text: str | bool, what: str) -> bool:
    """A launch argument's boolean ("true"/"false"/"1"/"0"/"yes"/"no", any case)."""
    if isinstance(text, bool):
        return text
    value = str(text).strip().lower()
    if value in ("true", "1", "yes", "on"):
        return True
    if value in ("false", "0", "no", "off"):
        return False
    raise ValueError(f"launch argument {what}: expected true or false, got {text!r}")


def scenario_from_arguments(
    scenario: str, real_time_factor: str = "", workers: str = "", mode: str = "", sets: str | list[str] = ""
) -> tuple[Scenario, dict[str, Any]]:
    """Load the scenario named by the `scenario:=` argument and apply the other launch arguments (empty string:
    keep the scenario's value). `sets`: a list of "dotted.key=value", or one string of them separated by spaces
    (shell quoting for values with spaces: "vessels.0.pose.position='[1, 2, -3]'"). Returns the scenario and the
    overrides (for the spawner, which must see the same ones)."""
    try:
        rtf = float(real_time_factor) if str(real_time_factor).strip() else None
        n_workers = int(workers) if str(workers).strip() else None
    except ValueError as exc:
        raise ValueError(
            f"launch arguments: real_time_factor:= expects a number, workers:= an integer ({exc})"
        ) from None
    items = split_sets(sets) if isinstance(sets, str) else list(sets)
    overrides = launch_overrides(rtf, n_workers, str(mode).strip() or None, items)
    base = load_scenario(scenario)
    return (base.with_overrides(overrides, parse_strings=False) if overrides else base), overrides


def scenario_from_cli(args: Any) -> tuple[Scenario, dict[str, Any]]:
    """The scenario of `lotusim run` / `lotusim spawn --scenario` arguments (argparse namespace: scenario, set,
    and optionally rtf, workers, mode). Each `--set` stays one override, spaces and all."""
    return scenario_from_arguments(
        args.scenario,
        str(getattr(args, "rtf", "")),
        str(getattr(args, "workers", "")),
        getattr(args, "mode", ""),
        list(args.set),
    )


SET_KEY_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-]*=")


DDS_PROFILES = "dds/fastdds_profiles.xml"  # under config/: the fleet state's and the answers' heartbeat period
PROFILE_VARIABLES = ("FASTDDS_DEFAULT_PROFILES_FILE", "FASTRTPS_DEFAULT_PROFILES_FILE")


def dds_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """The environment variables lotusim's nodes get on top of `environ`: Fast DDS's profiles file
    (config/dds/fastdds_profiles.xml: a lost fleet state is sent again within 0.05 s, not 3 s), unless the
    user set one already or runs another RMW than Fast DDS."""
    if any(environ.get(v) for v in PROFILE_VARIABLES):
        return {}
    if not environ.get("RMW_IMPLEMENTATION", "rmw_fastrtps_cpp").startswith("rmw_fastrtps"):
        return {}
    return {"FASTDDS_DEFAULT_PROFILES_FILE": str(config_dir() / DDS_PROFILES)}


def split_sets(text: str) -> list[str]:
    """The overrides of one `set:=` launch argument: shell words, where a word that does not start a new
    `dotted.key=` continues the previous value ("a.b=[1, 2, -3] c=4" -> ["a.b=[1, 2, -3]", "c=4"])."""
    items: list[str] = []
    for word in shlex.split(text):
        if items and not SET_KEY_RE.match(word):
            items[-1] += f" {word}"
        else:
            items.append(word)
    return items


def node_specs(
    plan: Plan, headless: bool = True, remappings: dict[str, list[tuple[str, str]]] | None = None
) -> list[NodeSpec]:
    """The simulation nodes and the scenario's controllers. Headless: current markers off (no viewer)."""
    remappings = remappings or {}
    specs = []
    for name, params in plan.node_parameters.items():
        params = dict(params)
        if name == "current_server" and headless:
            params["markers.rate_hz"] = 0.0
        executable = "dynamics" if name.startswith("dynamics_") else EXECUTABLES[name]
        specs.append(NodeSpec(PACKAGE, executable, name, params, tuple(remappings.get(name, ()))))
    specs += controller_host_specs(plan.controllers, remappings=remappings, state=host_state_parameters(plan))
    return specs


def host_state_parameters(plan: Plan) -> dict[str, Any]:
    """Where the controller hosts' controllers take their states (lotusim_autonomy.fleet_state_intake): the
    fleet state, stepping at physics.odom_rate_hz (the rate their gains were tuned at), unless the fleet state
    comes slower than that (physics.fleet_state_every); then their odometry topics."""
    dynamics = plan.node_parameters.get("dynamics_0", {})
    odom_hz = float(dynamics.get("odom_rate_hz", 10.0))
    state_hz = 1.0 / (float(dynamics.get("step_s", 0.02)) * int(dynamics.get("fleet_state_every", 1)))
    return {"state_rate_hz": odom_hz, "state_source": "fleet_state" if state_hz >= odom_hz * (1 - 1e-9) else "odom"}


CONTROLLERS_PER_HOST = 60  # one Python process steps ~60 controllers at 10 Hz odometry well above real time
# controller types a host steps all at once (one NumPy pass per fleet state: lotusim_autonomy.multirotor_controller
# FlightFleetIntake): they get hosts of their own, this many per host, so that one pass covers as many as it can
BATCHED_PER_HOST = {"flight_controller": 200}


def controller_host_specs(
    controllers: Sequence[ControllerPlan],
    per_host: int = CONTROLLERS_PER_HOST,
    remappings: dict[str, list[tuple[str, str]]] | None = None,
    state: dict[str, Any] | None = None,
) -> list[NodeSpec]:
    """The controllers grouped into `controller_host` processes (controller_host_0, ...): the types of
    BATCHED_PER_HOST in hosts of their own (that many per host), the others in ceil(n / per_host) hosts, dealt
    round-robin so the hosts carry similar loads; each keeps its per-vessel topics and services.
    remappings: rules by node name; a controller's (`<type>_<vessel>`, e.g. from a HIL remapping file) go to its
    host, with the host's own (`controller_host_<k>`). A host with rules publishes its controllers' commands on
    their topics (batch_commands false: the rules apply to them); the others send them in one message per burst
    (lotusim_autonomy.command_outbox). state: the hosts' `state_rate_hz` and `state_source` (host_state_parameters);
    a host whose rules remap an odometry topic reads its controllers' odometry topics (state_source odom)."""
    if not controllers:
        return []
    remappings = remappings or {}
    state = state or {}
    pools = [([c for c in controllers if c.type not in BATCHED_PER_HOST], per_host)]
    pools += [([c for c in controllers if c.type == kind], n) for kind, n in BATCHED_PER_HOST.items()]
    groups: list[list[dict[str, Any]]] = []
    rules: list[list[tuple[str, str]]] = []
    for pool, size in pools:
        first, hosts = len(groups), -(-len(pool) // size)
        groups += [[] for _ in range(hosts)]
        rules += [list(remappings.get(f"controller_host_{k}", ())) for k in range(first, first + hosts)]
        for i, c in enumerate(pool):
            groups[first + i % hosts].append(host_entry(c))
            rules[first + i % hosts] += remappings.get(c.node_name, ())
    return [
        NodeSpec(
            PACKAGE,
            "controller_host",
            f"controller_host_{k}",
            {
                "use_sim_time": True,
                "controllers_yaml": yaml.dump(group, Dumper=_DUMPER, default_flow_style=None),
                "batch_commands": not rules[k],
                **state,
                **({"state_source": "odom"} if any(src.endswith("odom") for src, _ in rules[k]) else {}),
            },
            tuple(rules[k]),
        )
        for k, group in enumerate(groups)
    ]


def host_entry(controller: ControllerPlan) -> dict[str, Any]:
    """One `controllers_yaml` entry {type, vessel, params}: the controller's parameters (model, origin, gains)
    and its scenario set-points under params["setpoints"] (controller_host.py)."""
    params = {k: v for k, v in controller.parameters.items() if k not in ("vessel", "use_sim_time")}
    params["setpoints"] = dict(controller.setpoints)
    return {"type": controller.type, "vessel": controller.vessel, "params": params}


def controller_spec(controller: ControllerPlan) -> NodeSpec:
    """One controller as its own standalone node (`ros2 run lotusim <type>`): its parameters plus the initial
    setpoints as `setpoints.<key>` parameters (empty lists
    are left out: a ROS parameter cannot be an untyped empty list)."""
    params = dict(controller.parameters)
    for key, value in controller.setpoints.items():
        if isinstance(value, list):
            if not value:
                continue
            if isinstance(value[0], list):  # [[x, y], ...] -> flat [x0, y0, x1, y1, ...]
                value = [float(c) for point in value for c in point]
        params[f"setpoints.{key}"] = value
    return NodeSpec(PACKAGE, controller.executable, controller.node_name, params)


SPAWN_SECTIONS = ("vessels", "generators", "world")  # the sections whose overrides change the spawn items
CHECKED_WITH_VESSELS = ("controllers",)  # validated against the vessels: a renamed vessel's controller follows


def spawn_command(scenario_path: str | Path, overrides: dict[str, Any]) -> list[str]:
    """The spawner process: `lotusim spawn --scenario FILE [--set key=value ...]`, with the overrides that change
    the spawn items (vessels, generators, world origin; not sensor rates, physics or environment, which only the
    nodes use), the controllers' (the spawner's scenario must validate as lotusim run's did) and the number of
    workers (the spawner waits for each of them)."""
    command = ["lotusim", "spawn", "--scenario", str(scenario_path)]
    for key, value in overrides.items():
        section = key.split(".")[0]
        spawn_item = section in SPAWN_SECTIONS and ".sensors." not in f"{key}."
        if spawn_item or section in CHECKED_WITH_VESSELS or key == "physics.workers":
            command += ["--set", f"{key}={_flow(value)}"]
    return command


CONSOLE_DEFAULTS = {"host": "127.0.0.1", "port": 8765, "http_port": 8080, "token": ""}


def console_spec(plan: Plan, **options) -> NodeSpec:
    """The operator console (lotusim_core.console.console_node) for this plan's map origin and clock master;
    options: host, port (Foxglove WebSocket), http_port (the page), token (CONSOLE_DEFAULTS)."""
    unknown = sorted(set(options) - set(CONSOLE_DEFAULTS))
    if unknown:
        raise ValueError(f"console: unknown options {unknown} (expected {sorted(CONSOLE_DEFAULTS)})")
    origin = plan.node_parameters["mas_server"]
    params = {
        **CONSOLE_DEFAULTS,
        **options,
        "master_node": plan.dynamics_nodes[0],
        "name": plan.name,
        "origin_latitude_deg": origin["origin_latitude_deg"],
        "origin_longitude_deg": origin["origin_longitude_deg"],
    }
    return NodeSpec(PACKAGE, "console", "console", params)


def viewer_spec(headless: bool) -> NodeSpec | None:
    """RViz with `map` as the fixed frame, unless headless or rviz2 is not installed."""
    if headless or shutil.which("rviz2") is None:
        return None
    return NodeSpec("rviz2", "rviz2", "rviz2", {"use_sim_time": True}, (), ("-f", "map"))


def _flow(value: Any) -> str:
    """An override value as the text of `--set key=TEXT` that reads back to it (parse_override_value): a string
    as is when it reads back to itself, else YAML flow style ('off' quoted, 1e-05 as 1.0e-05, None as null: `str`
    gives texts that YAML 1.1 reads as something else)."""
    if isinstance(value, str) and parse_override_value(value) == value:
        return value
    text = yaml.safe_dump(value, default_flow_style=True, width=1_000_000)
    return text.removesuffix("\n...\n").rstrip("\n")
