"""`ros2 launch lotusim sim.launch.py scenario:=mixed_fleet_brest [real_time_factor:=R] [workers:=K] [mode:=M]
[headless:=true|false] [set:="physics.step_s=0.01 seed=3"] [worker_wait_s:=S] [console:=true] [console_port:=P]
[console_ws_port:=P]`

Starts the nodes of a scenario (current_server, mas_server, dynamics_0..K-1, sensor_publisher, the scenario's
controllers, RViz unless headless, the operator console if asked) with the parameters of its plan, and spawns its
vessels through the MAS action (`lotusim spawn --scenario FILE`). The spawner waits for the workers (on a cold start
they compile the physics kernels first) at most worker_wait_s wall seconds, as does the MAS server for a goal that
comes before them. The logic lives in lotusim_core.sim.scenario / launch_plan (tested without launch); this file only
turns it into launch actions. Scenario format: docs/scenarios.md.
"""

import os

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, ExecuteProcess, OpaqueFunction, SetEnvironmentVariable
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from lotusim_core.sim import launch_plan
from lotusim_core.sim.process_launcher import MAX_RESTARTS, RESPAWN_DELAY_S

ARGUMENTS = {
    "scenario": ("mixed_fleet_brest", "scenario name (config/scenarios/<name>.yaml) or path to a YAML file"),
    "real_time_factor": ("", "real-time factor (empty: the scenario's; != 1 selects mode scaled)"),
    "workers": ("", "number of dynamics workers (empty: the scenario's)"),
    "mode": ("", "realtime | scaled | fast | lockstep (empty: the scenario's)"),
    "headless": ("false", "true: no RViz and no current markers"),
    "set": ("", "space-separated dotted.key=value scenario overrides"),
    "worker_wait_s": ("300", "wall seconds the spawner and the MAS server wait for the dynamics workers"),
    "console": ("false", "true: the operator console (page on console_port, Foxglove WebSocket on console_ws_port)"),
    "console_port": ("8080", "the console page's port (127.0.0.1)"),
    "console_ws_port": ("8765", "the console's Foxglove WebSocket port (127.0.0.1)"),
}


def to_action(spec, extra_parameters=None):
    """A lotusim node is started again when it dies, as `lotusim run` does (process_launcher): after
    RESPAWN_DELAY_S, at most MAX_RESTARTS times (launch counts them over the whole run)."""
    respawn = spec.package == launch_plan.PACKAGE
    return Node(
        package=spec.package,
        executable=spec.executable,
        name=spec.name,
        parameters=[spec.parameters, *([extra_parameters] if extra_parameters else [])],
        remappings=list(spec.remappings),
        arguments=list(spec.arguments),
        output="screen",
        respawn=respawn,
        respawn_delay=RESPAWN_DELAY_S if respawn else None,
        respawn_max_retries=MAX_RESTARTS if respawn else -1,
    )


def setup(context, hil_plan=None, scenario=None, overrides=None):
    """The actions; hil.launch.py passes its HilPlan (remappings, plan with the HIL settings) and scenario."""
    arg = {name: LaunchConfiguration(name).perform(context) for name in ARGUMENTS}
    if scenario is None:
        scenario, overrides = launch_plan.scenario_from_arguments(
            arg["scenario"], arg["real_time_factor"], arg["workers"], arg["mode"], arg["set"]
        )
    headless = launch_plan.parse_bool(arg["headless"], "headless")
    plan = scenario.plan() if hil_plan is None else hil_plan.plan
    rules = None if hil_plan is None else hil_plan.remappings
    try:
        wait_s = float(arg["worker_wait_s"])
    except ValueError:
        raise ValueError(f"launch argument worker_wait_s: expected seconds, got {arg['worker_wait_s']!r}") from None
    mas = {"worker_wait_s": wait_s}
    specs = launch_plan.node_specs(plan, headless, rules)
    actions = [to_action(spec, mas if spec.name == "mas_server" else None) for spec in specs]
    if launch_plan.parse_bool(arg["console"], "console"):
        ports = {}
        for key, name in (("http_port", "console_port"), ("port", "console_ws_port")):
            try:
                ports[key] = int(arg[name])
            except ValueError:
                raise ValueError(f"launch argument {name}: expected a port number, got {arg[name]!r}") from None
        actions.append(to_action(launch_plan.console_spec(plan, **ports)))
    viewer = launch_plan.viewer_spec(headless)
    if viewer is not None:
        actions.append(to_action(viewer))
    spawn = [*launch_plan.spawn_command(scenario.path, overrides), "--worker-wait-s", f"{wait_s:g}"]
    actions.append(ExecuteProcess(cmd=spawn, output="screen"))
    environment = [SetEnvironmentVariable(k, v) for k, v in launch_plan.dds_environment(os.environ).items()]
    return [*environment, *actions]


def generate_launch_description():
    declared = [DeclareLaunchArgument(name, default_value=d, description=t) for name, (d, t) in ARGUMENTS.items()]
    return LaunchDescription([*declared, OpaqueFunction(function=setup)])
