"""What the launch files start, as plain data: one NodeSpec per process, built from a scenario Plan.

launch/sim.launch.py and launch/hil.launch.py only turn these into launch_ros.actions.Node / ExecuteProcess
(launch is not needed to build or test them). The executables are the console scripts of lotusim/setup.py;
the node names are the plan's (current_server, mas_server, dynamics_<k>, sensor_publisher, and
<controller type>_<vessel> for the autonomy nodes).
"""

from __future__ import annotations

import re
import shlex
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lotusim_core.scenario import ControllerPlan, Plan, Scenario, launch_overrides, load_scenario

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
    return (base.with_overrides(overrides) if overrides else base), overrides


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
    specs += [controller_spec(c) for c in plan.controllers]
    return specs


def controller_spec(controller: ControllerPlan) -> NodeSpec:
    """An autonomy node: its parameters plus the initial setpoints as `setpoints.<key>` parameters (empty lists
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


def spawn_command(scenario_path: str | Path, overrides: dict[str, Any]) -> list[str]:
    """The spawner process: `lotusim spawn --scenario FILE [--set key=value ...]`, with the overrides that change
    the spawn items (vessels, generators, world origin; not sensor rates, physics or environment, which only the
    nodes use)."""
    command = ["lotusim", "spawn", "--scenario", str(scenario_path)]
    for key, value in overrides.items():
        if key.split(".")[0] in SPAWN_SECTIONS and ".sensors." not in f"{key}.":
            command += ["--set", f"{key}={_flow(value)}"]
    return command


def viewer_spec(headless: bool) -> NodeSpec | None:
    """RViz with `map` as the fixed frame, unless headless or rviz2 is not installed."""
    if headless or shutil.which("rviz2") is None:
        return None
    return NodeSpec("rviz2", "rviz2", "rviz2", {"use_sim_time": True}, (), ("-f", "map"))


def _flow(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_flow(v) for v in value) + "]"
    return str(value)
