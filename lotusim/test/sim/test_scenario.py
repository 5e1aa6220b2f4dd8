"""Scenario files: the shipped scenarios load and plan; every kind of error names file, key and reason;
generators, geodetic poses, overrides; the plan's node parameters are the scenario's values."""

from __future__ import annotations

import math
import textwrap

import numpy as np
import pytest
import yaml

from lotusim_core.sim.scenario import (
    ScenarioError,
    enu_positions,
    launch_overrides,
    list_scenarios,
    load_scenario,
)
from lotusim_env.environment import build_environment

# WGS84 (NIMA TR8350.2 Table 3.1), for an independent check of the geodetic placement
A_M, F = 6378137.0, 1.0 / 298.257223563
E2 = F * (2.0 - F)


def write(tmp_path, text: str, name: str = "scn.yaml"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


BASE = """
world:
  origin: {latitude_deg: 48.3, longitude_deg: -4.6}
  bathymetry: {model: flat, depth_m: 50.0}
vessels:
  - {name: auv, model: remus100, pose: {position: [0.0, 0.0, -5.0]}}
  - {name: usv, model: wamv}
"""


def scenario_text(extra: str = "", base: str = BASE) -> str:
    return textwrap.dedent(base) + textwrap.dedent(extra)


# ------------------------------------------------------------------------------------------ shipped scenarios
def test_every_shipped_scenario_loads_and_plans():
    names = list_scenarios()
    assert {"single_auv", "mixed_fleet_brest", "stress_1000"} <= set(names)
    for name in names:
        plan = load_scenario(name).plan()
        items = plan.spawn_items()
        assert len(items) == len(plan.vessels) > 0
        assert {"current_server", "mas_server", "dynamics_0", "sensor_publisher"} <= set(plan.node_parameters)
        # the environment that current_server will publish builds (the same check the node makes at startup)
        build_environment(yaml.safe_load(plan.node_parameters["current_server"]["environment_yaml"]))


def test_mixed_fleet_is_table_v_without_aerial_vessels():
    """[Buche2025] Table V: 45 LRAUVs, 45 BlueROVs underwater; 7 surface vessels (1 DTMB + 3 commando
    boats + 3 WAM-Vs, the first four replaced by kayak USVs, which the catalogue has)."""
    sc = load_scenario("mixed_fleet_brest")
    models = [v.model for v in sc.vessels]
    assert models.count("lrauv") == 45 and models.count("bluerov2_heavy") == 45
    assert models.count("wamv") == 3 and sum(v.domain == "surface" for v in sc.vessels) == 7
    assert sc.environment["current"]["model"] == "ekman"
    # the 2024-06-01 Brest window's day-0 means (data/copernicus_brest/2024-06-01_48hours/inputs.json)
    inputs = {"ubar": 0.0718478547744093, "vbar": -0.057712125276342854, "we": -3.261805555555556, "wn": -6.18597}
    assert sc.environment["current"]["geostrophic_enu"] == pytest.approx([inputs["ubar"], inputs["vbar"]], abs=1e-4)
    assert sc.environment["wind"]["velocity_enu"] == pytest.approx([inputs["we"], inputs["wn"]], abs=1e-4)
    kinds = {(c.type, sc.vessel(c.vessel).domain) for c in sc.controllers}
    assert kinds >= {("waypoint_follower", "surface"), ("depth_heading_autopilot", "underwater")}
    assert all(v.domain == "surface" for v in sc.vessels if v.model in ("wamv", "kayak_usv"))
    # every USV follows waypoints (a patrol), every torpedo AUV (45 LRAUVs, 2 REMUS) has an autopilot
    driven = {c.vessel: c for c in sc.controllers}
    usvs = {v.name for v in sc.vessels if v.domain == "surface"}
    torpedoes = {v.name for v in sc.vessels if v.model in ("lrauv", "remus100")}
    assert len(usvs) == 7 and len(torpedoes) == 47 and usvs | torpedoes <= set(driven)
    assert all(driven[n].type == "waypoint_follower" and driven[n].setpoints["loop"] for n in usvs)
    assert all(driven[n].type == "depth_heading_autopilot" for n in torpedoes)


def test_stress_scenario_has_1000_vessels_in_fast_mode():
    sc = load_scenario("stress_1000")
    assert len(sc.vessels) == 1000 and sc.physics.mode == "fast"
    names = [v.name for v in sc.vessels]
    assert names[0] == "lrauv_0000" and names[-1] == "lrauv_0999" and len(set(names)) == 1000


# ------------------------------------------------------------------------------------------------- errors
ERRORS = [
    # (yaml appended to / replacing the base, expected key, words of the reason)
    ("colour: blue\n", "colour", "unknown key"),
    ("name: 1x\n", "name", "not a valid ROS name token"),  # the top-level key is `name`, not `.name`
    ("physics: {mode: warp}\n", "physics.mode", "expected one of realtime"),
    ("physics: {real_time_factor: 5}\n", "physics.real_time_factor", "use mode: scaled"),
    ("physics: {step_s: -0.1}\n", "physics.step_s", "> 0"),
    ("physics: {step_s: 0.1, odom_rate_hz: 50}\n", "physics.odom_rate_hz", "faster than the physics step"),
    ("physics: {workers: 0}\n", "physics.workers", "integer >= 1"),
    ("physics: {publish_tf: maybe}\n", "physics.publish_tf", "true or false"),
    ("environment: {current: {model: tidal}}\n", "environment.current.model", "expected one of"),
    (
        "environment: {current: {model: ekman, eddy_viscosity_m2s: -1}}\n",
        "environment.current.eddy_viscosity_m2s",
        "> 0",
    ),
    ("environment: {origin: {latitude_deg: 40}}\n", "environment.origin", "world.origin"),
    ("environment: {seed: 3}\n", "environment.seed", "top level"),
    ("environment: {wnd: {speed_mps: 3}}\n", "environment.wnd", "unknown key"),
    ("sensors: {defaults: {sidescan: {rate_hz: 1}}}\n", "sensors.defaults.sidescan", "unknown sensor"),
    ("duration_s: -5\n", "duration_s", "> 0"),
    ("seed: -1\n", "seed", "integer >= 0"),
    ("recording: {topics: ['/bad topic']}\n", "recording.topics[0]", "not a valid topic name"),
]


@pytest.mark.parametrize(("extra", "key", "reason"), ERRORS, ids=[e[1] for e in ERRORS])
def test_section_errors_name_file_key_and_reason(tmp_path, extra, key, reason):
    path = write(tmp_path, scenario_text(extra))
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    assert info.value.where == str(path.resolve())
    assert info.value.key == key
    assert reason in info.value.reason
    assert str(info.value).startswith(f"{path.resolve()}: {key}: ")


VESSEL_ERRORS = [
    ("{name: x, model: submarine}", "vessels[x].model", "unknown model 'submarine'"),
    ("{name: 1x, model: remus100}", "vessels[1x].name", "not a valid ROS name token"),
    ("{name: auv, model: remus100}", "vessels[auv].name", "duplicate vessel name"),
    ("{name: x, model: remus100, overrides: {mass_kg: -3}}", "vessels[x].overrides.mass_kg", "positive number"),
    (
        "{name: x, model: remus100, overrides: {fins: {tail: {area_m2: 1}}}}",
        "vessels[x].overrides.fins.tail",
        "no such entry",
    ),
    ("{name: x, model: remus100, overrides: {sensors: {}}}", "vessels[x].overrides.sensors", "own `sensors:`"),
    (
        "{name: x, model: remus100, sensors: {imu: {rate_hz: 500}}}",
        "vessels[x].sensors.imu",
        "faster than /lotusim/fleet_state",
    ),
    ("{name: x, model: remus100, sensors: {imu: {rate_hz: fast}}}", "vessels[x].sensors.imu.rate_hz", ""),
    ("{name: x, model: remus100, pose: {position: [0, 0]}}", "vessels[x].pose.position", "3 finite numbers"),
    (
        "{name: x, model: remus100, pose: {position: [0, 0, -1], orientation: [0, 0, 0, 2]}}",
        "vessels[x].pose.orientation",
        "unit quaternion",
    ),
    (
        "{name: x, model: remus100, pose: {yaw_deg: 10, orientation: [0, 0, 0, 1]}}",
        "vessels[x].pose.yaw_deg",
        "not both",
    ),
    ("{name: x, model: remus100, pose: {latitude_deg: 48.3}}", "vessels[x].pose.longitude_deg", "missing"),
    (
        "{name: x, model: remus100, pose: {latitude_deg: 48.3, longitude_deg: -4.6, depth_m: 60}}",
        "vessels[x].pose",
        "at or below the sea floor",
    ),
    ("{name: x, model: remus100, pose: {position: [0, 0, 2.0]}}", "vessels[x].pose", "above the sea surface"),
    ("{name: x, model: x500, pose: {position: [0, 0, -2.0]}}", "vessels[x].pose", "aerial vehicle starts 2 m below"),
    ("{name: x, model: remus100, worker: worker_1}", "vessels[x].worker", "physics.workers = 1"),
    ("{name: x, model: remus100, speed: 3}", "vessels[x].speed", "unknown key"),
]


@pytest.mark.parametrize(("vessel", "key", "reason"), VESSEL_ERRORS, ids=[e[1] + ":" + e[2] for e in VESSEL_ERRORS])
def test_vessel_errors_name_the_vessel_and_key(tmp_path, vessel, key, reason):
    path = write(tmp_path, textwrap.dedent(BASE) + f"  - {vessel}\n")
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    assert (info.value.key, info.value.where) == (key, str(path.resolve()))
    assert reason in info.value.reason


CONTROLLER_ERRORS = [
    ("{type: pid, vessel: auv}", "controllers[0].type", "expected one of waypoint_follower"),
    ("{type: waypoint_follower, vessel: ghost}", "controllers[0].vessel", "no vessel named or matching 'ghost'"),
    ("{type: waypoint_follower, vessel: auv}", "controllers[0].vessel", "drives surface vessels"),
    (
        "{type: depth_heading_autopilot, vessel: auv, setpoints: {depth_m: 70, heading_deg: 0}}",
        "controllers[0].setpoints.depth_m",
        "below the sea floor",
    ),
    (
        "{type: depth_heading_autopilot, vessel: auv, setpoints: {depth_m: 5}}",
        "controllers[0].setpoints.heading_deg",
        "missing",
    ),
    (
        "{type: waypoint_follower, vessel: usv, setpoints: {waypoints: [[1, 2, 3]]}}",
        "controllers[0].setpoints.waypoints[0]",
        "2 finite numbers",
    ),
    (
        "{type: waypoint_follower, vessel: usv, parameters: {gains: {p: 1}}}",
        "controllers[0].parameters.gains",
        "ROS parameter value",
    ),
]


@pytest.mark.parametrize(("controller", "key", "reason"), CONTROLLER_ERRORS, ids=[e[1] for e in CONTROLLER_ERRORS])
def test_controller_errors(tmp_path, controller, key, reason):
    path = write(tmp_path, scenario_text(f"controllers:\n  - {controller}\n"))
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    assert info.value.key == key and reason in info.value.reason


@pytest.mark.parametrize(
    ("kind", "vessel", "reason"),
    [
        ("depth_heading_autopilot", "rov", "bluerov2_heavy has none (thruster-vectored)"),
        ("depth_heading_autopilot", "usv", "drives underwater vehicles; wamv is a surface vessel"),
        ("waypoint_follower", "rov", "drives surface vessels; bluerov2_heavy is an underwater vehicle"),
    ],
)
def test_a_controller_on_a_vessel_it_cannot_drive_fails_at_load_time(tmp_path, kind, vessel, reason):
    """`file: controllers[i].vessel: reason`, from the controller class's own fit check (the torpedo autopilot
    needs fins and a propeller, the follower a surface vessel with differential thrust)."""
    text = scenario_text(
        f"""
          - {{name: rov, model: bluerov2_heavy, pose: {{position: [0.0, 10.0, -5.0]}}}}
        controllers:
          - {{type: waypoint_follower, vessel: usv}}
          - {{type: {kind}, vessel: {vessel}, setpoints: {{depth_m: 5, heading_deg: 0}}}}
        """
    )
    path = write(tmp_path, text.replace("setpoints: {depth_m: 5, heading_deg: 0}", "")
                 if kind == "waypoint_follower" else text)  # fmt: skip
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    message = str(info.value)
    assert message.startswith(f"{path.resolve()}: controllers[1].vessel: {kind} cannot drive {vessel} ("), message
    assert reason in message


def test_file_level_errors(tmp_path):
    bad = write(tmp_path, "vessels: [\n", "bad.yaml")
    with pytest.raises(ScenarioError, match=r"bad\.yaml: <file>: not valid YAML"):
        load_scenario(bad)
    with pytest.raises(ScenarioError, match="scenario file not found"):
        load_scenario(tmp_path / "missing.yaml")
    with pytest.raises(ScenarioError, match="unknown scenario.*shipped: .*single_auv"):
        load_scenario("no_such_scenario")
    with pytest.raises(ScenarioError, match="no vessel"):
        load_scenario(write(tmp_path, "world: {}\n", "empty.yaml"))
    missing = write(tmp_path, scenario_text().replace("{model: flat, depth_m: 50.0}", "{model: grid, file: d.csv}"))
    with pytest.raises(ScenarioError) as info:
        load_scenario(missing)
    assert info.value.key == "world.bathymetry.file" and "file not found" in info.value.reason


# --------------------------------------------------------------------------------- poses, generators, overrides
def test_geodetic_vessel_lands_where_the_meridian_radius_puts_it(tmp_path):
    """0.003 deg of latitude north of the origin is dphi * M(phi) metres north (M = a(1-e^2)/(1-e^2 sin^2 phi)^1.5,
    the WGS84 meridian radius of curvature; second-order terms are < 1 mm over 333 m)."""
    path = write(
        tmp_path,
        textwrap.dedent(BASE) + "  - {name: geo, model: remus100, pose: {latitude_deg: 48.303, longitude_deg: -4.6, "
        "depth_m: 12.5, heading_deg: 90}}\n",
    )
    sc = load_scenario(path)
    geo = sc.vessel("geo")
    assert geo.geodetic == (48.303, -4.6, 12.5, 90.0) and geo.position_enu is None
    s = math.sin(math.radians(48.3015))
    north_m = math.radians(0.003) * A_M * (1 - E2) / (1 - E2 * s * s) ** 1.5
    xyz = enu_positions([geo], sc.world.origin)[0]
    assert xyz == pytest.approx([0.0, north_m, -12.5], abs=2e-3)
    item = [i for i in sc.plan().spawn_items() if i.vessel.name == "geo"][0]
    assert item.vessel.pose_frame == item.vessel.POSE_GEODETIC
    assert (item.vessel.latitude_deg, item.vessel.depth_m, item.vessel.heading_deg) == (48.303, 12.5, 90.0)


def test_enu_yaw_and_quaternion_poses(tmp_path):
    path = write(
        tmp_path,
        textwrap.dedent(BASE)
        + "  - {name: a, model: remus100, pose: {position: [1, 2, -3], yaw_deg: 90}}\n"
        + "  - {name: b, model: remus100, pose: {position: [0, 0, -3], orientation: [0, 0, 0.7071068, 0.7071068]}}\n",
    )
    sc = load_scenario(path)
    a, b = sc.vessel("a"), sc.vessel("b")
    # yaw 90 deg about z up: q = (0, 0, sin 45, cos 45), the nose points north
    assert a.q_enu_flu == pytest.approx((0.0, 0.0, math.sqrt(0.5), math.sqrt(0.5)))
    assert b.q_enu_flu == pytest.approx(a.q_enu_flu, abs=1e-7)
    item = sc.plan().spawn_items()[2]
    assert (item.vessel.pose.position.x, item.vessel.pose.position.y, item.vessel.pose.position.z) == (1.0, 2.0, -3.0)


def test_fleet_grid_expands_names_positions_and_heading(tmp_path):
    text = scenario_text(
        """
        generators:
          - fleet_grid: {model: lrauv, count: 12, columns: 5, spacing_m: 7.5, origin: {position: [10, 20, -8]},
                         heading_deg: 270, prefix: swarm}
          - fleet_grid: {model: bluerov2_heavy, count: 3, origin: {latitude_deg: 48.301, longitude_deg: -4.6,
                         depth_m: 4}}
        """
    )
    sc = load_scenario(write(tmp_path, text))
    swarm = [v for v in sc.vessels if v.name.startswith("swarm_")]
    assert [v.name for v in swarm] == [f"swarm_{k:04d}" for k in range(12)]
    xyz = np.array([v.position_enu for v in swarm])
    k = np.arange(12)
    assert xyz == pytest.approx(np.column_stack([10 + 7.5 * (k % 5), 20 + 7.5 * (k // 5), np.full(12, -8.0)]))
    # compass heading 270 (west) = ENU yaw 180 deg: the body x axis points to -x (west)
    q = np.array(swarm[0].q_enu_flu)
    x_axis = np.array(
        [1 - 2 * (q[1] ** 2 + q[2] ** 2), 2 * (q[0] * q[1] + q[2] * q[3]), 2 * (q[0] * q[2] - q[1] * q[3])]
    )
    assert x_axis == pytest.approx([-1.0, 0.0, 0.0], abs=1e-12)
    rovs = [v for v in sc.vessels if v.model == "bluerov2_heavy"]
    assert [v.name for v in rovs] == ["bluerov2_heavy_0000", "bluerov2_heavy_0001", "bluerov2_heavy_0002"]
    s = math.sin(math.radians(48.3005))
    north_m = math.radians(0.001) * A_M * (1 - E2) / (1 - E2 * s * s) ** 1.5
    assert rovs[1].position_enu == pytest.approx((10.0, north_m, -4.0), abs=2e-3)  # default spacing 10 m, 2 columns


def test_generator_errors(tmp_path):
    for gen, key, reason in [
        ("{fleet_grid: {model: lrauv, count: 0}}", "generators[0].fleet_grid.count", "integer >= 1"),
        ("{fleet_grid: {model: lrauv, count: 2, spacing_m: 0}}", "generators[0].fleet_grid.spacing_m", "> 0"),
        ("{fleet_grid: {model: lrauv, count: 2, prefix: auv}}", "vessels[auv_0000].name", "duplicate"),
        (
            "{fleet_grid: {model: lrauv, count: 3, origin: {position: [0, 0, -60]}}}",
            "vessels[lrauv_0000].pose",
            "sea floor",
        ),
        ("{circle: {model: lrauv}}", "generators[0].circle", "unknown key"),
    ]:
        text = textwrap.dedent(BASE) + "  - {name: auv_0000, model: remus100}\n" + f"generators:\n  - {gen}\n"
        with pytest.raises(ScenarioError) as info:
            load_scenario(write(tmp_path, text))
        assert (info.value.key, reason in info.value.reason) == (key, True), str(info.value)


def test_overrides_are_validated_and_reach_the_spawn_item(tmp_path):
    text = textwrap.dedent(BASE) + (
        "  - {name: heavy, model: remus100,\n"
        "     overrides: {mass_kg: 31.0, thrusters: {propeller: {time_constant_s: 0.5}}}}\n"
    )
    sc = load_scenario(write(tmp_path, text))
    item = sc.plan().spawn_items()[-1]
    assert yaml.safe_load(item.vessel.overrides_yaml) == {
        "mass_kg": 31.0,
        "thrusters": {"propeller": {"time_constant_s": 0.5}},
    }


def test_with_overrides_changes_values_and_validates_again(tmp_path):
    sc = load_scenario(write(tmp_path, scenario_text()))
    fast = sc.with_overrides(
        {
            "physics.mode": "fast",
            "physics.workers": "2",
            "vessels.auv.model": "lrauv",
            "vessels.1.pose.position": [5.0, 0.0, 0.0],
            "seed": 9,
        }
    )
    assert (fast.physics.mode, fast.physics.workers, fast.vessel("auv").model, fast.seed) == ("fast", 2, "lrauv", 9)
    assert fast.vessel("usv").position_enu == (5.0, 0.0, 0.0)
    assert sc.physics.mode == "realtime"  # the original is untouched
    with pytest.raises(ScenarioError) as info:
        sc.with_overrides({"physics.mode": "warp"})
    assert info.value.key == "physics.mode" and "physics.mode='warp'" in info.value.where
    with pytest.raises(ScenarioError, match="no list entry 'ghost'"):
        sc.with_overrides({"vessels.ghost.model": "lrauv"})
    assert launch_overrides(real_time_factor=10) == {"physics.real_time_factor": 10.0, "physics.mode": "scaled"}
    assert launch_overrides(workers=2, mode="fast", sets=["seed=4"]) == {
        "seed": 4,
        "physics.workers": 2,
        "physics.mode": "fast",
    }
    with pytest.raises(ValueError, match="dotted.key=value"):
        launch_overrides(sets=["seed"])


# ------------------------------------------------------------------------------------------------ the plan
def test_plan_node_parameters_match_the_scenario(tmp_path):
    text = scenario_text(
        """
        seed: 11
        duration_s: 42
        physics: {step_s: 0.01, mode: scaled, real_time_factor: 4, workers: 3, integrator: euler, substeps: 2,
                  odom_rate_hz: 20, stats_rate_hz: 2, publish_tf: false}
        world:
          origin: {latitude_deg: 43.1, longitude_deg: 5.9}
          water_density_kgm3: 1029.5
          bathymetry: {model: flat, depth_m: 50.0}
        environment:
          current: {model: constant, velocity_enu: [0.2, 0.0, 0.0]}
        sensors:
          defaults: {imu: {rate_hz: 20}, gps: {rate_hz: 2}}
          magnetic_declination_deg: 1.5
          acoustic_beacons: {buoy: [0, 0, -1]}
        recording: {topics: [/clock, "{vessel}/odom"], path: out/run}
        """
    ).replace(
        "world:\n  origin: {latitude_deg: 48.3, longitude_deg: -4.6}\n  bathymetry: {model: flat, depth_m: 50.0}\n",
        "",
        1,
    )
    sc = load_scenario(write(tmp_path, text))
    plan = sc.plan()
    p = plan.node_parameters
    assert plan.dynamics_nodes == ["dynamics_0", "dynamics_1", "dynamics_2"]
    for k in range(3):
        d = p[f"dynamics_{k}"]
        assert (d["worker"], d["clock_master"]) == (f"worker_{k}", k == 0)
        assert (d["step_s"], d["mode"], d["real_time_factor"], d["integrator"], d["substeps"]) == (
            0.01,
            "scaled",
            4.0,
            "euler",
            2,
        )
        assert (d["odom_rate_hz"], d["stats_rate_hz"], d["water_density_kgm3"]) == (20.0, 2.0, 1029.5)
        assert d["publish_tf"] is False
        assert all(type(d[key]) is float for key in ("step_s", "real_time_factor", "odom_rate_hz"))
    assert (p["mas_server"]["origin_latitude_deg"], p["mas_server"]["origin_longitude_deg"]) == (43.1, 5.9)
    env = yaml.safe_load(p["current_server"]["environment_yaml"])
    assert env["seed"] == 11 and env["water_density_kgm3"] == 1029.5 and env["origin"]["latitude_deg"] == 43.1
    assert env["current"] == {"model": "constant", "velocity_enu": [0.2, 0.0, 0.0]}
    s = p["sensor_publisher"]
    assert (s["seed"], s["origin_latitude_deg"], s["magnetic_declination_deg"]) == (11, 43.1, 1.5)
    assert yaml.safe_load(s["acoustic_beacons_yaml"]) == {"buoy": [0.0, 0.0, -1.0]}
    vessels = yaml.safe_load(s["vessels_yaml"])
    # defaults apply to sensors the vessel carries: the REMUS has an IMU and a GPS, the WAM-V both too
    assert vessels["auv"] == {"model": "remus100", "sensors": {"imu": {"rate_hz": 20}, "gps": {"rate_hz": 2}}}
    assert (plan.seed, plan.duration_s) == (11, 42.0)
    assert plan.record.path == "out/run" and plan.record.topics == ("/clock", "/auv/odom", "/usv/odom")


def test_sensor_defaults_skip_sensors_a_model_does_not_carry(tmp_path):
    text = scenario_text("sensors: {defaults: {dvl: {max_rate_hz: 2}}}\n")
    vessels = yaml.safe_load(
        load_scenario(write(tmp_path, text)).plan().node_parameters["sensor_publisher"]["vessels_yaml"]
    )
    assert vessels["auv"]["sensors"] == {"dvl": {"max_rate_hz": 2}}
    assert "sensors" not in vessels["usv"]  # the WAM-V has no DVL: no DVL added


def test_relative_data_files_resolve_against_the_scenario_directory(tmp_path):
    grid = tmp_path / "data" / "bathy.csv"
    grid.parent.mkdir()
    grid.write_text("x_m,y_m,depth_m\n-1000,-1000,40\n-1000,1000,40\n1000,-1000,40\n1000,1000,40\n")
    text = scenario_text().replace("{model: flat, depth_m: 50.0}", "{model: grid, file: data/bathy.csv}")
    sub = tmp_path / "scenarios"
    sub.mkdir()
    path = write(sub, text.replace("data/bathy.csv", "../data/bathy.csv"))
    env = yaml.safe_load(load_scenario(path).plan().node_parameters["current_server"]["environment_yaml"])
    assert env["bathymetry"]["file"] == str(grid.resolve())


def test_controllers_expand_patterns_and_convert_waypoints(tmp_path):
    text = scenario_text(
        """
          - {name: usv2, model: kayak_usv}
        controllers:
          - type: waypoint_follower
            vessel: "usv*"
            parameters: {guidance_mode: pid, lookahead_m: 5.0}
            setpoints:
              waypoints: [[100.0, 0.0], {latitude_deg: 48.301, longitude_deg: -4.6}]
              speed_mps: 1.5
          - type: depth_heading_autopilot
            vessel: auv
            setpoints: {depth_m: 10, heading_deg: 90}
        """
    )
    sc = load_scenario(write(tmp_path, text))
    follow = [c for c in sc.controllers if c.type == "waypoint_follower"]
    assert [c.vessel for c in follow] == ["usv", "usv2"]
    c = follow[0]
    assert c.parameters == {
        "vessel": "usv",
        "use_sim_time": True,
        "model": "wamv",
        "origin_latitude_deg": 48.3,
        "origin_longitude_deg": -4.6,
        "origin_altitude_m": 0.0,
        "guidance_mode": "pid",
        "lookahead_m": 5.0,
    }
    assert c.node_name == "waypoint_follower_usv"
    # 100 m east at 48.3 N is 100 / (N(phi) cos phi) rad of longitude (N: prime-vertical radius)
    n_m = A_M / math.sqrt(1 - E2 * math.sin(math.radians(48.3)) ** 2)
    assert c.setpoints["longitude_deg"][0] == pytest.approx(
        -4.6 + math.degrees(100 / (n_m * math.cos(math.radians(48.3)))), abs=1e-8
    )
    assert c.setpoints["latitude_deg"][1] == 48.301 and c.setpoints["speed_mps"] == 1.5
    assert c.setpoints["waypoints_enu"][0] == [100.0, 0.0]
    auto = [c for c in sc.controllers if c.type == "depth_heading_autopilot"][0]
    assert auto.setpoints == {"depth_m": 10.0, "heading_deg": 90.0}


def test_an_aerial_vehicle_starts_in_the_air_from_a_scenario(tmp_path):
    path = write(tmp_path, textwrap.dedent(BASE) + "  - {name: drone, model: x500, pose: {position: [5, 5, 30]}}\n")
    sc = load_scenario(path)
    assert sc.vessel("drone").domain == "aerial" and sc.vessel("drone").position_enu == (5.0, 5.0, 30.0)
