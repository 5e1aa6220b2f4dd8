"""`ros2 launch lotusim hil.launch.py scenario:=single_auv remap:=/path/to/remap.yaml [lockstep:=true|false]`
(plus the arguments of sim.launch.py)

Hardware-in-the-loop: the scenario's nodes with one vessel's topics remapped onto a real vehicle stack's names
and rates (remapping file: docs/hil.md, example config/hil/remus100_couguv_example.yaml), optionally in
lockstep (the stack advances the simulation through /lotusim/step or /lotusim/step_for). The remapping logic
is lotusim_core.sim.hil (tested without launch); this file only turns it into launch actions.
"""

import importlib.util
from pathlib import Path

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration

from lotusim_core.sim import hil, launch_plan


def _sim_launch():
    """sim.launch.py, installed beside this file: one place builds the actions."""
    spec = importlib.util.spec_from_file_location("lotusim_sim_launch", Path(__file__).with_name("sim.launch.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SIM = _sim_launch()
ARGUMENTS = {
    **SIM.ARGUMENTS,
    "scenario": ("single_auv", "scenario name or path"),
    "remap": ("", "HIL remapping file (YAML: vessel, lockstep, topics -> the stack's names and rates)"),
    "lockstep": ("", "true/false: override the remapping file's lockstep (empty: the file's)"),
}


def setup(context):
    arg = {name: LaunchConfiguration(name).perform(context) for name in ARGUMENTS}
    if not arg["remap"]:
        raise ValueError("hil.launch.py: give the remapping file, remap:=/path/to/remap.yaml (docs/hil.md)")
    scenario, overrides = launch_plan.scenario_from_arguments(
        arg["scenario"], arg["real_time_factor"], arg["workers"], arg["mode"], arg["set"]
    )
    lockstep = launch_plan.parse_bool(arg["lockstep"], "lockstep") if arg["lockstep"] else None
    hil_plan = hil.apply_hil(scenario, hil.load_remapping(arg["remap"]), lockstep)
    overrides = {**overrides, **hil_plan.scenario.overrides}
    return SIM.setup(context, hil_plan=hil_plan, scenario=hil_plan.scenario, overrides=overrides)


def generate_launch_description():
    declared = [DeclareLaunchArgument(name, default_value=d, description=t) for name, (d, t) in ARGUMENTS.items()]
    return LaunchDescription([*declared, OpaqueFunction(function=setup)])
