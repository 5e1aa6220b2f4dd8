"""HIL remapping files (lotusim_core.sim.hil): the shipped example applies to single_auv; every kind of mistake is
refused with file, key and reason; rates must be reachable exactly in sim time."""

from __future__ import annotations

import textwrap

import pytest
import yaml

from lotusim_core.base.paths import config_dir
from lotusim_core.sim import hil
from lotusim_core.sim.scenario import load_scenario

EXAMPLE = config_dir() / "hil" / "remus100_couguv_example.yaml"


def remap_file(tmp_path, body: str, name: str = "remap.yaml"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return path


def apply(tmp_path, body: str, scenario: str = "single_auv", lockstep=None) -> hil.HilPlan:
    return hil.apply_hil(load_scenario(scenario), hil.load_remapping(remap_file(tmp_path, body)), lockstep)


def test_example_file_remaps_each_topic_on_the_node_that_owns_it():
    h = hil.apply_hil(load_scenario("single_auv"), hil.load_remapping(EXAMPLE))
    rules = {node: dict(pairs) for node, pairs in h.remappings.items()}
    assert set(rules) == {"sensor_publisher", "dynamics_0"}
    assert rules["sensor_publisher"]["remus_1/imu/data"] == "/couguv/imu/data"
    assert rules["sensor_publisher"]["remus_1/depth"] == "/couguv/depth/data"
    assert rules["dynamics_0"]["remus_1/odom"] == "/couguv/sim/ground_truth"
    assert rules["dynamics_0"]["remus_1/fins/top/cmd"] == "/couguv/fins/top/cmd"
    assert rules["dynamics_0"]["remus_1/thrusters/propeller/cmd"] == "/couguv/thruster/cmd"
    # the rates became the vessel's sensor settings and the odometry rate of the workers
    vessels = yaml.safe_load(h.plan.node_parameters["sensor_publisher"]["vessels_yaml"])
    sensors = vessels["remus_1"]["sensors"]
    assert sensors["imu"]["rate_hz"] == 50.0 and sensors["pressure"]["rate_hz"] == 10.0
    assert sensors["dvl"]["max_rate_hz"] == 5.0 and sensors["gps"]["rate_hz"] == 5.0
    assert h.plan.node_parameters["dynamics_0"]["odom_rate_hz"] == 10.0
    # the real stack drives the vessel: the scenario's autopilot for it is not started
    assert h.dropped_controllers == ("depth_heading_autopilot_remus_1",) and h.plan.controllers == ()
    assert h.plan.node_parameters["dynamics_0"]["mode"] == "realtime"


def test_lockstep_from_the_file_or_the_argument(tmp_path):
    body = """
        vessel: remus_1
        lockstep: true
        topics: {imu/data: /stack/imu}
    """
    assert apply(tmp_path, body).plan.node_parameters["dynamics_0"]["mode"] == "lockstep"
    assert apply(tmp_path, body, lockstep=False).plan.node_parameters["dynamics_0"]["mode"] == "realtime"


def test_every_worker_gets_the_command_remappings(tmp_path):
    h = hil.apply_hil(
        load_scenario("single_auv").with_overrides({"physics.workers": 2}),
        hil.load_remapping(remap_file(tmp_path, "vessel: remus_1\ntopics: {cmd_wrench: /stack/wrench}\n")),
    )
    assert h.remappings == {
        "dynamics_0": [("remus_1/cmd_wrench", "/stack/wrench")],
        "dynamics_1": [("remus_1/cmd_wrench", "/stack/wrench")],
    }


BAD_FILES = [
    ("vessel: remus_1\ntopics: {imu/data: /s/imu}\nspeed: 2\n", "speed", "unknown key"),
    ("topics: {imu/data: /s/imu}\n", "vessel", "expected the name of a scenario vessel"),
    ("vessel: remus_1\nlockstep: maybe\ntopics: {imu/data: /s/imu}\n", "lockstep", "true or false"),
    ("vessel: remus_1\ntopics: []\n", "topics", "expected a mapping"),
    ("vessel: remus_1\ntopics: {/remus_1/imu/data: /s/imu}\n", "topics./remus_1/imu/data", "relative"),
    ("vessel: remus_1\ntopics: {imu/data: 'bad name'}\n", "topics.imu/data.name", "ROS topic name"),
    ("vessel: remus_1\ntopics: {imu/data: {name: /s/imu, rate_hz: -1}}\n", "topics.imu/data.rate_hz", "> 0"),
    ("vessel: remus_1\ntopics: {imu/data: {name: /s/imu, hz: 1}}\n", "topics.imu/data.hz", "unknown key"),
    ("vessel: remus_1\ntopics: {imu/data: /s/x, mag: /s/x}\n", "topics.mag.name", "already the name of imu/data"),
]


@pytest.mark.parametrize(("body", "key", "reason"), BAD_FILES, ids=[b[1] for b in BAD_FILES])
def test_malformed_remapping_files(tmp_path, body, key, reason):
    path = remap_file(tmp_path, body)
    with pytest.raises(hil.HilError) as info:
        hil.load_remapping(path)
    assert (info.value.where, info.value.key) == (str(path), key)
    assert reason in info.value.reason


MISFITS = [
    ("vessel: ghost\ntopics: {imu/data: /s/imu}\n", "vessel", "no vessel 'ghost'"),
    ("vessel: remus_1\ntopics: {sonar: /s/sonar}\n", "topics.sonar", "not a per-vessel topic"),
    ("vessel: remus_1\ntopics: {ais: /s/ais}\n", "topics.ais", "has no ais sensor"),
    ("vessel: remus_1\ntopics: {fins/rudder/cmd: /s/rudder}\n", "topics.fins/rudder/cmd", "no fin 'rudder'"),
    ("vessel: remus_1\ntopics: {thrusters/main/cmd: /s/t}\n", "topics.thrusters/main/cmd", "no thruster 'main'"),
    ("vessel: remus_1\ntopics: {cmd_wrench: {name: /s/w, rate_hz: 10}}\n", "topics.cmd_wrench.rate_hz", "real stack"),
    ("vessel: remus_1\ntopics: {modem/rx: {name: /s/rx, rate_hz: 1}}\n", "topics.modem/rx.rate_hz", "no rate"),
    (
        "vessel: remus_1\ntopics: {depth: {name: /s/d, rate_hz: 10}, pressure: {name: /s/p, rate_hz: 5}}\n",
        "topics.pressure.rate_hz",
        "one pressure sensor: one rate",
    ),
    # single_auv: step 0.02 s -> 50 Hz fleet state; 30 Hz is 1.67 periods (intervals would alternate 20/40 ms)
    ("vessel: remus_1\ntopics: {imu/data: {name: /s/imu, rate_hz: 30}}\n", "topics.imu/data.rate_hz", "not reachable"),
    ("vessel: remus_1\ntopics: {odom: {name: /s/odom, rate_hz: 15}}\n", "topics.odom.rate_hz", "not reachable"),
    # faster than the fleet state: refused by the scenario's own check, reported against the remapping file
    (
        "vessel: remus_1\ntopics: {imu/data: {name: /s/imu, rate_hz: 100}}\n",
        "vessels[remus_1].sensors.imu",
        "faster than /lotusim/fleet_state",
    ),
]


@pytest.mark.parametrize(("body", "key", "reason"), MISFITS, ids=[m[1] + ":" + m[2] for m in MISFITS])
def test_remapping_that_does_not_fit_the_scenario(tmp_path, body, key, reason):
    with pytest.raises(hil.HilError) as info:
        apply(tmp_path, body)
    assert info.value.where == str(tmp_path / "remap.yaml")
    assert info.value.key == key and reason in info.value.reason


def test_generated_vessels_must_be_declared(tmp_path):
    with pytest.raises(hil.HilError, match="comes from a generator"):
        apply(tmp_path, "vessel: lrauv_0000\ntopics: {imu/data: /s/imu}\n", scenario="stress_1000")


def test_exact_rates_follow_the_physics_step(tmp_path):
    """A rate is exact when its period is a whole number of fleet-state periods: 30 Hz, refused at 50 Hz (1.67
    periods), is exact with a 90 Hz step (3 periods); 25 Hz is exact at 50 Hz (2 periods)."""
    body = "vessel: remus_1\ntopics: {imu/data: {name: /s/imu, rate_hz: 30}}\n"
    scenario = load_scenario("single_auv").with_overrides({"physics.step_s": 1.0 / 90.0})
    h = hil.apply_hil(scenario, hil.load_remapping(remap_file(tmp_path, body)))
    assert h.rates_hz == {"imu/data": 30.0}
    ok = apply(tmp_path, "vessel: remus_1\ntopics: {imu/data: {name: /s/imu, rate_hz: 25}}\n")
    assert yaml.safe_load(ok.plan.node_parameters["sensor_publisher"]["vessels_yaml"])["remus_1"]["sensors"] == {
        "imu": {"rate_hz": 25.0}
    }


def test_several_vessels_and_node_rules_in_one_file(tmp_path):
    """`vessels:` remaps more than one vessel (their controllers all dropped); `nodes:` adds raw rules to a node
    of the plan; a node that the plan does not have is refused."""
    body = """
        vessels:
          a: {imu/data: {name: /a_stack/imu, rate_hz: 25}, thrusters/propeller/cmd: /a_stack/thrust}
          b: {odom: /b_stack/odom}
        nodes:
          current_server: {/lotusim/environment: /sim/environment}
    """
    scenario = """
        name: two
        vessels:
          - {name: a, model: remus100, pose: {position: [0, 0, -5]}}
          - {name: b, model: remus100, pose: {position: [20, 0, -5]}}
        controllers:
          - {type: depth_heading_autopilot, vessel: a, setpoints: {depth_m: 5, heading_deg: 0}}
          - {type: depth_heading_autopilot, vessel: b, setpoints: {depth_m: 5, heading_deg: 0}}
    """
    h = hil.apply_hil(
        load_scenario(remap_file(tmp_path, scenario, "two.yaml")), hil.load_remapping(remap_file(tmp_path, body))
    )
    assert h.remappings == {
        "sensor_publisher": [("a/imu/data", "/a_stack/imu")],
        "dynamics_0": [("a/thrusters/propeller/cmd", "/a_stack/thrust"), ("b/odom", "/b_stack/odom")],
        "current_server": [("/lotusim/environment", "/sim/environment")],
    }
    assert h.rates_hz == {"a/imu/data": 25.0} and h.plan.controllers == ()
    assert set(h.dropped_controllers) == {"depth_heading_autopilot_a", "depth_heading_autopilot_b"}
    bad = "vessel: remus_1\ntopics: {imu/data: /s/imu}\nnodes: {ghost_node: {/a: /b}}\n"
    with pytest.raises(hil.HilError) as info:
        apply(tmp_path, bad)
    assert info.value.key == "nodes.ghost_node" and "no node 'ghost_node'" in info.value.reason
    with pytest.raises(hil.HilError) as info:
        hil.load_remapping(remap_file(tmp_path, "nodes: {dynamics_0: {/a: 'b c'}}\n"))
    assert info.value.key == "nodes.dynamics_0./a" and "ROS names" in info.value.reason
