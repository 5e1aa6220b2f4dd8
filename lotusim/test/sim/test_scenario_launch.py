"""Launch files: they compile, and what they build from a scenario is right. `launch` / `launch_ros` are not
installed here, so the two files run against minimal stand-ins of the five launch classes they use (the stand-ins
record their arguments; no ROS behaviour is imitated) and the recorded Node arguments are checked."""

from __future__ import annotations

import importlib.util
import os
import py_compile
import re
import subprocess
import sys
import types
from pathlib import Path

import pytest
import yaml

from lotusim_core.base.paths import package_share
from lotusim_core.sim import launch_plan
from lotusim_core.sim.scenario import load_scenario

pytestmark = pytest.mark.ros  # starts DDS participants (nodes, node processes or the ros2 CLI)
LAUNCH_DIR = package_share() / "launch"
SETUP_PY = Path(__file__).resolve().parents[2] / "setup.py"


def test_launch_files_compile():
    files = sorted(LAUNCH_DIR.glob("*.launch.py"))
    assert [f.name for f in files] == ["hil.launch.py", "sim.launch.py"]
    for f in files:
        py_compile.compile(str(f), doraise=True)


def test_node_executables_are_console_scripts():
    scripts = set(re.findall(r'"(\w+) = [\w.]+:main"', SETUP_PY.read_text()))
    specs = launch_plan.node_specs(load_scenario("mixed_fleet_brest").plan())
    sim_nodes = {s.executable for s in specs if s.name in ("current_server", "mas_server", "sensor_publisher")}
    assert sim_nodes | {"dynamics", "lotusim"} <= scripts
    assert {s.executable for s in specs if s.executable not in scripts} == set()
    assert {"controller_host", "waypoint_follower", "depth_heading_autopilot"} <= scripts


def test_launch_arguments_become_overrides():
    scenario, overrides = launch_plan.scenario_from_arguments("single_auv", "10", "2", "", "seed=5 duration_s=60")
    assert overrides == {
        "seed": 5,
        "duration_s": 60,
        "physics.real_time_factor": 10.0,
        "physics.mode": "scaled",
        "physics.workers": 2,
    }
    assert (scenario.physics.mode, scenario.physics.workers, scenario.seed) == ("scaled", 2, 5)
    moved, sets = launch_plan.scenario_from_arguments("single_auv", sets="vessels.0.pose.position='[5, 6, -7]'")
    assert sets == {"vessels.0.pose.position": [5, 6, -7]} and moved.vessels[0].position_enu == (5.0, 6.0, -7.0)
    listed, _ = launch_plan.scenario_from_arguments("single_auv", sets=["seed=8", "physics.step_s=0.01"])
    assert (listed.seed, listed.physics.step_s) == (8, 0.01)
    unchanged, none = launch_plan.scenario_from_arguments("single_auv")
    assert none == {} and unchanged.physics.mode == "realtime"
    with pytest.raises(ValueError, match="workers:= an integer"):
        launch_plan.scenario_from_arguments("single_auv", workers="two")
    with pytest.raises(ValueError, match="headless: expected true or false"):
        launch_plan.parse_bool("maybe", "headless")


def test_set_values_with_spaces_reach_the_scenario_whole():
    """`lotusim run --set 'vessels.0.pose.position=[1, 2, -3]'`, the spawner's `lotusim spawn --set ...` (which
    launch emits with list values) and an unquoted list in launch's `set:=` string: one override each (the CLIs
    used to join the values into one string and split it again at the spaces)."""
    from lotusim_core.cli import build_parser

    parser = build_parser()
    run = parser.parse_args(["run", "single_auv", "--set", "vessels.0.pose.position=[1, 2, -3]", "--set", "seed=4"])
    scenario, overrides = launch_plan.scenario_from_cli(run)
    assert overrides == {"vessels.0.pose.position": [1, 2, -3], "seed": 4}
    assert scenario.vessels[0].position_enu == (1.0, 2.0, -3.0) and scenario.seed == 4
    spawner = launch_plan.spawn_command("single_auv", {"vessels.0.pose.position": [1, 2, -3]})
    assert spawner[-1] == "vessels.0.pose.position=[1, 2, -3]"
    spawned, _ = launch_plan.scenario_from_cli(parser.parse_args(spawner[1:]))
    assert spawned.vessels[0].position_enu == (1.0, 2.0, -3.0)
    launched, sets = launch_plan.scenario_from_arguments("single_auv", sets="vessels.0.pose.position=[1, 2, -3] seed=4")
    assert sets == {"vessels.0.pose.position": [1, 2, -3], "seed": 4}
    assert launched.vessels[0].position_enu == (1.0, 2.0, -3.0)
    with pytest.raises(ValueError, match="expected dotted.key=value"):
        launch_plan.scenario_from_arguments("single_auv", sets="[1, 2] seed=4")


def test_a_set_list_value_is_not_changed_by_a_later_set_of_one_of_its_items():
    """`--set vessels.0.pose.position=[1, 2, -3] --set vessels.0.pose.position.2=-5`: the second override changes
    the scenario, not the first override's value (which the spawner and the error messages repeat). Through the
    entry point: an invalid third override makes `lotusim run` stop at validation and name the overrides as given."""
    sets = ["vessels.0.pose.position=[1, 2, -3]", "vessels.0.pose.position.2=-5"]
    run = subprocess.run(
        [sys.executable, "-m", "lotusim_core.cli", "run", "single_auv"]
        + [a for s in [*sets, "physics.mode=warp"] for a in ("--set", s)],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert run.returncode == 2, run.stderr
    assert "vessels.0.pose.position=[1, 2, -3], vessels.0.pose.position.2=-5" in run.stderr, run.stderr
    assert "physics.mode: expected one of realtime" in run.stderr, run.stderr
    from lotusim_core.cli import build_parser

    args = build_parser().parse_args(["run", "single_auv"] + [a for s in sets for a in ("--set", s)])
    scenario, overrides = launch_plan.scenario_from_cli(args)
    assert overrides == {"vessels.0.pose.position": [1, 2, -3], "vessels.0.pose.position.2": -5}
    assert scenario.vessels[0].position_enu == (1.0, 2.0, -5.0)


@pytest.mark.parametrize(
    ("given", "check"),
    [
        ("vessels.0.pose.position=[0.00001, 0, -1]", lambda s: s.vessels[0].position_enu == (1e-05, 0.0, -1.0)),
        ("vessels.0.pose.position=[1.0e+20, 0, -1]", lambda s: s.vessels[0].position_enu[0] == 1e20),
        ("vessels.0.worker=null", lambda s: s.vessels[0].worker == ""),
        ("vessels.0.overrides={mass_kg: 0.00002}", lambda s: s.vessels[0].overrides == {"mass_kg": 2e-05}),
    ],
)
def test_the_spawner_reads_the_set_values_lotusim_run_accepted(given, check):
    """`lotusim run` hands its --set overrides to the spawner (`lotusim spawn --set ...`) as text: that text must
    read back to the same values (a float written 1e-05 reads back as a string in YAML 1.1, None as 'None')."""
    from lotusim_core.cli import build_parser

    parser = build_parser()
    scenario, overrides = launch_plan.scenario_from_cli(parser.parse_args(["run", "single_auv", "--set", given]))
    assert check(scenario)
    spawner = launch_plan.spawn_command("single_auv", overrides)
    spawned, again = launch_plan.scenario_from_cli(parser.parse_args(spawner[1:]))
    assert again == overrides and check(spawned)


def test_a_quoted_set_string_stays_a_string(tmp_path):
    """`--set "vessels.0.name='off'"` quotes a string YAML would read as false: lotusim run reads the text once
    (it read it twice, the second time without the quotes: a vessel named false, a description 'True'), and the
    spawner's --set text reads back to the same string. Through the entry point: the run fails only at the invalid
    recording topic (checked after the vessels)."""
    path = tmp_path / "one.yaml"
    path.write_text("vessels:\n  - {name: auv, model: remus100, pose: {position: [0, 0, -5]}}\n")
    run = subprocess.run(
        [sys.executable, "-m", "lotusim_core.cli", "run", str(path)]
        + ["--set", "vessels.0.name='off'", "--set", "recording.topics=['/bad topic']"],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert run.returncode == 2 and ": recording.topics[0]: '/bad topic' is not a valid" in run.stderr, run.stderr
    from lotusim_core.cli import build_parser

    parser = build_parser()
    given = ["run", str(path), "--set", "vessels.0.name='off'", "--set", "description='yes'"]
    scenario, overrides = launch_plan.scenario_from_cli(parser.parse_args(given))
    assert overrides == {"vessels.0.name": "off", "description": "yes"}
    assert scenario.vessels[0].name == "off" and scenario.description == "yes"
    spawner = launch_plan.spawn_command(path, overrides)
    assert spawner[-2:] == ["--set", "vessels.0.name='off'"]
    spawned, again = launch_plan.scenario_from_cli(parser.parse_args(spawner[1:]))
    assert again == {"vessels.0.name": "off"} and spawned.vessels[0].name == "off"
    # the Scenario API keeps reading strings as YAML ("2" -> 2), as launch arguments come
    assert load_scenario("single_auv").with_overrides({"physics.workers": "2"}).physics.workers == 2


def test_the_spawner_accepts_a_vessel_renamed_together_with_its_controller():
    """`--set vessels.0.name=auv7 --set controllers.0.vessel=auv7`: the spawner validates the scenario as lotusim
    run does, so it gets the controllers' overrides too (with the vessel's alone, its controller named no vessel)."""
    from lotusim_core.cli import build_parser

    parser = build_parser()
    sets = ["--set", "vessels.0.name=auv7", "--set", "controllers.0.vessel=auv7"]
    scenario, overrides = launch_plan.scenario_from_cli(parser.parse_args(["run", "single_auv", *sets]))
    assert scenario.vessels[0].name == "auv7" and scenario.controllers[0].vessel == "auv7"
    spawner = launch_plan.spawn_command("single_auv", overrides)
    assert spawner[4:] == sets
    spawned, _ = launch_plan.scenario_from_cli(parser.parse_args(spawner[1:]))
    assert [v.name for v in spawned.vessels] == ["auv7"]


def test_spawner_gets_only_the_overrides_that_change_spawn_items():
    command = launch_plan.spawn_command(
        "/x/s.yaml",
        {"physics.mode": "fast", "vessels.auv.model": "lrauv", "vessels.auv.sensors.imu.rate_hz": 5, "seed": 2},
    )
    assert command == ["lotusim", "spawn", "--scenario", "/x/s.yaml", "--set", "vessels.auv.model=lrauv"]


def test_controllers_are_grouped_into_hosts_with_model_origin_and_setpoints():
    plan = load_scenario("mixed_fleet_brest").plan()
    n = len(plan.controllers)
    hosts = [s for s in launch_plan.node_specs(plan) if s.executable == "controller_host"]
    assert len(hosts) == -(-n // launch_plan.CONTROLLERS_PER_HOST) and n >= 54  # every USV and torpedo AUV
    rule = ("wamv_2/odom", "/ins/odom")  # a controller's remapping rule (HIL file `nodes:`) goes to its host
    hosts = launch_plan.controller_host_specs(plan.controllers, 20, {"waypoint_follower_wamv_2": [rule]})
    assert [h.name for h in hosts] == [f"controller_host_{k}" for k in range(-(-n // 20))]
    assert [h.remappings for h in hosts if "vessel: wamv_2\n" in h.parameters["controllers_yaml"]] == [(rule,)]
    assert sum(h.remappings == () for h in hosts) == len(hosts) - 1
    # the host with rules publishes its commands on their topics (the rules apply); the others batch them
    assert [h.parameters["batch_commands"] for h in hosts] == [h.remappings == () for h in hosts]
    entries = [e for h in hosts for e in yaml.safe_load(h.parameters["controllers_yaml"])]
    assert sorted(e["vessel"] for e in entries) == sorted(c.vessel for c in plan.controllers)
    by_vessel = {e["vessel"]: e for e in entries}
    wamv = by_vessel["wamv_2"]
    assert wamv["type"] == "waypoint_follower" and wamv["params"]["model"] == "wamv"
    assert (wamv["params"]["origin_latitude_deg"], wamv["params"]["origin_longitude_deg"]) == (48.3, -4.6)
    assert wamv["params"]["setpoints"]["waypoints_enu"][0] == [296.0, 50.0]
    auv = by_vessel["lrauv_0000"]
    assert auv["type"] == "depth_heading_autopilot" and auv["params"]["model"] == "lrauv"
    assert {k: auv["params"]["setpoints"][k] for k in ("depth_m", "heading_deg")} == {
        "depth_m": 20.0,
        "heading_deg": 270.0,
    }
    standalone = launch_plan.controller_spec(plan.controllers[0]).parameters  # one node: flat ROS parameters
    assert standalone["model"] == "wamv" and standalone["setpoints.waypoints_enu"][:2] == pytest.approx(
        [0.0, 50.0], abs=0.1
    )
    assert standalone["setpoints.latitude_deg"][0] == 48.30045  # wamv_1's first waypoint, as the file gives it


# ------------------------------------------------------------------------ the launch files, run on stand-ins
class Recorder:
    """Records the keyword arguments a launch class was built with."""

    def __init__(self, *args, **kwargs) -> None:
        self.args, self.kwargs = args, kwargs


class LaunchConfiguration:
    def __init__(self, name: str) -> None:
        self.name = name

    def perform(self, context: dict) -> str:
        return context[self.name]


@pytest.fixture
def launch_modules(monkeypatch):
    """Stand-ins for launch, launch.actions, launch.substitutions, launch_ros.actions."""
    mods = {
        name: types.ModuleType(name)
        for name in ("launch", "launch.actions", "launch.substitutions", "launch_ros", "launch_ros.actions")
    }
    mods["launch"].LaunchDescription = Recorder
    for cls in ("DeclareLaunchArgument", "ExecuteProcess", "OpaqueFunction", "SetEnvironmentVariable"):
        setattr(mods["launch.actions"], cls, type(cls, (Recorder,), {}))
    mods["launch.substitutions"].LaunchConfiguration = LaunchConfiguration
    mods["launch_ros.actions"].Node = type("Node", (Recorder,), {})
    for name, module in mods.items():
        monkeypatch.setitem(sys.modules, name, module)
    return mods


def load_launch_file(name: str):
    spec = importlib.util.spec_from_file_location(name.replace(".", "_"), LAUNCH_DIR / name)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_launch(name: str, **arguments) -> list:
    module = load_launch_file(name)
    description = module.generate_launch_description()
    declared = {a.kwargs["name"] if "name" in a.kwargs else a.args[0]: a for a in description.args[0][:-1]}
    context = {arg: decl.kwargs["default_value"] for arg, decl in declared.items()}
    context.update(arguments)
    opaque = description.args[0][-1]
    return opaque.kwargs["function"](context)


def test_sim_launch_starts_the_plan_nodes_and_the_spawner(launch_modules):
    actions = run_launch("sim.launch.py", scenario="single_auv", workers="2", headless="true", set="seed=7")
    nodes = {a.kwargs["name"]: a.kwargs for a in actions if type(a).__name__ == "Node"}
    plan = load_scenario("single_auv").with_overrides({"physics.workers": 2, "seed": 7}).plan()
    assert set(nodes) == {*plan.node_parameters, "controller_host_0"}
    hosted = yaml.safe_load(nodes["controller_host_0"]["parameters"][0]["controllers_yaml"])
    assert [(e["type"], e["vessel"], e["params"]["model"]) for e in hosted] == [
        ("depth_heading_autopilot", "remus_1", "remus100")
    ]
    for name, params in plan.node_parameters.items():
        expected = dict(params, **({"markers.rate_hz": 0.0} if name == "current_server" else {}))
        wait = [{"worker_wait_s": 300.0}] if name == "mas_server" else []  # the worker_wait_s:= default
        assert nodes[name]["parameters"] == [expected, *wait]
        assert nodes[name]["package"] == "lotusim"
        assert nodes[name]["respawn"] is True and nodes[name]["respawn_delay"] > 0  # restarted when it dies
    assert (
        nodes["dynamics_1"]["executable"] == "dynamics" and nodes["dynamics_1"]["parameters"][0]["worker"] == "worker_1"
    )
    assert yaml.safe_load(nodes["current_server"]["parameters"][0]["environment_yaml"])["seed"] == 7
    spawner = [a for a in actions if type(a).__name__ == "ExecuteProcess"]
    assert len(spawner) == 1 and spawner[0].kwargs["cmd"][:3] == ["lotusim", "spawn", "--scenario"]
    assert spawner[0].kwargs["cmd"][-2:] == ["--worker-wait-s", "300"]
    environment = [a.args for a in actions if type(a).__name__ == "SetEnvironmentVariable"]
    assert environment == list(launch_plan.dds_environment(os.environ).items())  # before the nodes start
    assert type(actions[0]).__name__ == ("SetEnvironmentVariable" if environment else "Node")


def test_hil_launch_applies_the_remapping(launch_modules, tmp_path):
    remap = package_share() / "config" / "hil" / "remus100_couguv_example.yaml"
    actions = run_launch("hil.launch.py", remap=str(remap), lockstep="true", headless="true")
    nodes = {a.kwargs["name"]: a.kwargs for a in actions if type(a).__name__ == "Node"}
    assert "controller_host_0" not in nodes  # the stack drives the vessel (the scenario's only controller)
    assert ("remus_1/imu/data", "/couguv/imu/data") in nodes["sensor_publisher"]["remappings"]
    assert ("remus_1/fins/top/cmd", "/couguv/fins/top/cmd") in nodes["dynamics_0"]["remappings"]
    assert nodes["dynamics_0"]["parameters"][0]["mode"] == "lockstep"
    with pytest.raises(ValueError, match="remap:="):
        run_launch("hil.launch.py")


def test_the_spawner_is_told_how_many_workers_to_wait_for():
    """ros2 launch ... workers:=2: the spawner waits for both workers (it waited for one and spawned early)."""
    command = launch_plan.spawn_command("s.yaml", {"physics.workers": 2, "physics.step_s": 0.01})
    assert command[-2:] == ["--set", "physics.workers=2"] and "physics.step_s=0.01" not in " ".join(command)


def test_a_number_in_exponent_notation_without_a_dot_is_a_number(tmp_path):
    """`--set physics.step_s=1e-3` and `step_s: 1e-3` in a file: YAML 1.1 reads 1e-3 as a string, and lotusim run
    refused it as "expected a number"; it is 0.001 (YAML 1.2), while a quoted '1e-3' stays text."""
    from lotusim_core.base import safe_yaml
    from lotusim_core.cli import build_parser

    parser = build_parser()
    scenario, overrides = launch_plan.scenario_from_cli(
        parser.parse_args(["run", "single_auv", "--set", "physics.step_s=1e-3"])
    )
    assert scenario.physics.step_s == 0.001 and overrides == {"physics.step_s": 0.001}
    from lotusim_core.base.paths import config_dir

    text = (config_dir() / "scenarios" / "single_auv.yaml").read_text()
    path = tmp_path / "exp.yaml"
    path.write_text(re.sub(r"step_s: *[0-9.]+", "step_s: 2e-2", text, count=1))
    assert load_scenario(str(path)).physics.step_s == 0.02
    assert safe_yaml.load("a: '1e-3'\nb: 1e\nc: 10\nd: -4.5E-1") == {"a": "1e-3", "b": "1e", "c": 10, "d": -0.45}


def test_hosts_take_states_from_the_fleet_state_at_the_odometry_rate_unless_odometry_is_remapped_or_faster():
    """The hosts' controllers step on fleet states at physics.odom_rate_hz (lotusim_autonomy.fleet_state_intake);
    a host with a remapped odometry topic (a HIL stack's INS), or a fleet state slower than the odometry, reads
    the odometry topics."""
    scenario = load_scenario("mixed_fleet_brest")
    hosts = [s for s in launch_plan.node_specs(scenario.plan()) if s.executable == "controller_host"]
    assert {(h.parameters["state_source"], h.parameters["state_rate_hz"]) for h in hosts} == {("fleet_state", 10.0)}
    plan = scenario.with_overrides({"physics.odom_rate_hz": 25.0}).plan()
    hosts = [s for s in launch_plan.node_specs(plan) if s.executable == "controller_host"]
    assert {(h.parameters["state_source"], h.parameters["state_rate_hz"]) for h in hosts} == {("fleet_state", 25.0)}
    slower = {"physics.fleet_state_every": 2, "physics.odom_rate_hz": 50.0}  # 25 Hz fleet state, 50 Hz odometry
    plan = scenario.with_overrides(slower).plan()
    hosts = [s for s in launch_plan.node_specs(plan) if s.executable == "controller_host"]
    assert {h.parameters["state_source"] for h in hosts} == {"odom"}
    rule = ("wamv_2/odom", "/ins/odom")
    state = launch_plan.host_state_parameters(scenario.plan())
    rules = {"waypoint_follower_wamv_2": [rule]}
    hosts = launch_plan.controller_host_specs(scenario.plan().controllers, 20, rules, state)
    assert [h.parameters["state_source"] for h in hosts] == ["odom" if h.remappings else "fleet_state" for h in hosts]
    assert sum(h.parameters["state_source"] == "odom" for h in hosts) == 1


def test_nodes_get_the_dds_profiles_unless_the_user_has_some_or_another_rmw():
    """config/dds/fastdds_profiles.xml: the fleet state's and the answers' writers send a heartbeat every 0.05 s
    (a lost sample is repaired within a step, not Fast DDS's default 3 s, while a clock master waits for an
    answer); its profiles name the topics lotusim uses."""
    import xml.etree.ElementTree as ET

    from lotusim_autonomy import command_outbox, fleet_state_intake

    env = launch_plan.dds_environment({})
    path = Path(env["FASTDDS_DEFAULT_PROFILES_FILE"])
    assert path.is_file() and path.parent.parent == package_share() / "config"
    ns = {"d": "http://www.eprosima.com"}
    writers = ET.parse(path).getroot().findall("d:profiles/d:data_writer", ns)
    assert {w.get("profile_name") for w in writers} == {fleet_state_intake.TOPIC, command_outbox.TOPIC}
    for w in writers:
        period = w.find("d:times/d:heartbeat_period", ns)
        assert (period.find("d:sec", ns).text, period.find("d:nanosec", ns).text) == ("0", "50000000")
    assert launch_plan.dds_environment({"RMW_IMPLEMENTATION": "rmw_fastrtps_dynamic_cpp"}) == env
    assert launch_plan.dds_environment({"FASTDDS_DEFAULT_PROFILES_FILE": "/mine.xml"}) == {}
    assert launch_plan.dds_environment({"FASTRTPS_DEFAULT_PROFILES_FILE": "/mine.xml"}) == {}
    assert launch_plan.dds_environment({"RMW_IMPLEMENTATION": "rmw_cyclonedds_cpp"}) == {}


def test_flight_controllers_get_hosts_of_their_own():
    """table_v_brest: the 90 flight controllers in one host (stepped in one pass), the 97 others in two."""
    plan = load_scenario("table_v_brest").plan()
    hosts = launch_plan.controller_host_specs(plan.controllers)
    kinds = [{e["type"] for e in yaml.safe_load(h.parameters["controllers_yaml"])} for h in hosts]
    sizes = [len(yaml.safe_load(h.parameters["controllers_yaml"])) for h in hosts]
    assert [h.name for h in hosts] == ["controller_host_0", "controller_host_1", "controller_host_2"]
    assert kinds[2] == {"flight_controller"} and sizes == [49, 48, 90]
    assert all("flight_controller" not in k for k in kinds[:2])
