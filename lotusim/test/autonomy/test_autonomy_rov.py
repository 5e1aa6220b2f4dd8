"""The BlueROV2 Heavy station keeper (lotusim_autonomy/rov.py), ROS-free: its thrust allocation checked against
the physics' own thruster model, and closed loops on the batched physics (lotusim_physics Fleet, catalogue
bluerov2_heavy, RK4 at 0.02 s, the controller stepping at 10 Hz as on the odometry) that assert the numbers
stated in docs/autonomy.md."""

from __future__ import annotations

import math

import numpy as np
import pytest

from lotusim_autonomy.odometry import ned_state
from lotusim_autonomy.rov import (
    RovController,
    RovGains,
    RovMission,
    RovTarget,
    VectoredThrustAllocation,
    parse_setpoints,
)
from lotusim_core.base.catalogue import load_vehicle
from lotusim_core.base.geodesy import GeodeticOrigin
from lotusim_core.sim.scenario import ScenarioError, load_scenario
from lotusim_physics.fleet import Fleet
from lotusim_physics.thrusters import allocation_matrix, t200_thrust

DT_S = 0.02
CONTROL_EVERY = 5  # 10 Hz, the dynamics node's default odometry rate
# station keeping: 60 s in a 0.2 m/s current from 28.6 deg (north-north-east), started at rest on the station
STATION_RADIUS_M = 0.3
STATION_DEPTH_TOL_M = 0.05
STATION_HEADING_TOL_DEG = 1.5
# waypoint: 20 m away (bearing 57.3 deg) and from 2 m to 10 m depth, heading 000 -> 090 on the way
WAYPOINT_WITHIN_1M_S = 45.0
WAYPOINT_WITHIN_02M_S = 50.0
WAYPOINT_HEADING_SETTLED_S = 15.0  # within 2 deg from then on


@pytest.fixture(scope="module")
def spec():
    return load_vehicle("bluerov2_heavy")


def fly(spec, target, t_end_s, start_ned=(0.0, 0.0, 5.0), current_ned=None, gains=None) -> np.ndarray:
    """Closed loop on the physics; rows [t, north, east, depth, roll, pitch, heading (rad)] at each control step.
    The state goes through the ROS frames (Fleet.state_enu -> odometry.ned_state) as the odometry carries it."""
    fleet = Fleet(DT_S, "rk4", water_density_kgm3=spec.water_density_kgm3)
    fleet.add("rov", spec, list(start_ned), [1.0, 0.0, 0.0, 0.0])
    controller = RovController(spec, gains)
    current = None if current_ned is None else (lambda _t, _p: np.asarray(current_ned, dtype=float))
    rows, t_prev = [], None
    for k in range(int(round(t_end_s / DT_S)) + 1):
        t = k * DT_S
        if k % CONTROL_EVERY == 0:
            pos, q, twist, _ = fleet.state_enu()
            s = ned_state(t, pos[0], q[0], twist[0])
            h = 0.0 if t_prev is None else t - t_prev
            t_prev = t
            fleet.set_thruster_commands("rov", controller.step(s, target, h))
            rows.append((t, *s.position_ned_m, *s.rpy_ned_rad))
        assert not fleet.step(t, current_ned=current)
    return np.array(rows)


def first_time_inside(log: np.ndarray, error: np.ndarray, tol: float) -> float:
    """Sim time from which error stays <= tol to the end (inf if it never does)."""
    outside = np.flatnonzero(error > tol)
    if len(outside) == 0:
        return float(log[0, 0])
    return float(log[outside[-1] + 1, 0]) if outside[-1] + 1 < len(log) else math.inf


def test_allocation_gives_the_asked_wrench_through_the_physics_thrust_curve(spec):
    """Commands -> thrust by the physics' own T200 curve -> wrench by the physics' B: the wrench asked, with no
    thruster left in the T200's dead-band jump (0 N at 1 % throttle, 0.72 N just above)."""
    alloc = VectoredThrustAllocation(spec.thrusters, spec.water_density_kgm3, preload_n=1.0)
    b = allocation_matrix(spec.thrusters)
    rng = np.random.default_rng(7)
    for _ in range(200):
        tau = np.zeros(6)
        tau[[0, 1, 2, 5]] = rng.uniform(-1, 1, 4) * np.array([20.0, 20.0, 30.0, 4.0])
        tau[3:5] = rng.uniform(-1, 1, 2) * 1.0
        cmd = alloc.commands(tau)
        thrust = t200_thrust(cmd, spec.thrusters[0].curve)
        assert np.allclose(b @ thrust, tau, atol=0.1)  # N and N m: the inverse table's resolution
        assert not np.any((thrust > 0.0) & (thrust < 0.7)), thrust


def test_allocation_keeps_heave_and_yaw_whole_and_the_horizontal_direction_under_saturation(spec):
    alloc = VectoredThrustAllocation(spec.thrusters, spec.water_density_kgm3)
    b = allocation_matrix(spec.thrusters)
    tau = np.array([400.0, 200.0, 40.0, 0.0, 0.0, 5.0])  # far more surge and sway than four T200 give
    t = alloc.thrusts(tau)
    got = b @ t
    assert np.all(t <= alloc.t_max + 1e-9) and np.all(t >= alloc.t_min - 1e-9)
    assert got[2] == pytest.approx(40.0, abs=1e-6) and got[5] == pytest.approx(5.0, abs=1e-6)
    assert got[3:5] == pytest.approx([0.0, 0.0], abs=1e-6)
    assert got[0] < 100.0 and got[1] / got[0] == pytest.approx(0.5, rel=1e-6)  # scaled down, same direction
    assert np.max(t) == pytest.approx(np.max(alloc.t_max), rel=1e-6) or np.min(t) == pytest.approx(
        np.min(alloc.t_min), rel=1e-6
    )  # and as much of it as fits: one thruster at its limit


@pytest.mark.parametrize("model", ["remus100", "wamv"])
def test_vehicles_without_vectored_thrust_are_refused(model):
    with pytest.raises(ValueError, match="not a thruster-vectored vehicle"):
        RovController(load_vehicle(model))


def test_holds_station_in_a_current(spec):
    """60 s at a station at 5 m depth, heading 000, in a 0.2 m/s current from the side and ahead."""
    current = 0.2 * np.array([math.cos(0.5), math.sin(0.5), 0.0])
    log = fly(spec, RovTarget(0.0, 0.0, 5.0, 0.0), 60.0, current_ned=current)
    radius = np.hypot(log[:, 1], log[:, 2])
    print(f"station keeping: max radius {radius.max():.3f} m (last 30 s {radius[log[:, 0] >= 30].max():.3f} m), "
          f"max depth error {np.abs(log[:, 3] - 5.0).max():.4f} m, max heading error "
          f"{np.degrees(np.abs(log[:, 6]).max()):.2f} deg")  # fmt: skip
    assert radius.max() < STATION_RADIUS_M
    assert radius[log[:, 0] >= 30.0].max() < 0.1 * STATION_RADIUS_M  # the integral has taken the current
    assert np.abs(log[:, 3] - 5.0).max() < STATION_DEPTH_TOL_M
    assert np.degrees(np.abs(log[:, 6]).max()) < STATION_HEADING_TOL_DEG
    assert np.degrees(np.abs(log[:, 4:6]).max()) < 1.0  # level


def test_reaches_a_waypoint_20_m_away_at_depth_and_settles_heading(spec):
    bearing = 1.0  # rad
    goal = RovTarget(20.0 * math.cos(bearing), 20.0 * math.sin(bearing), 10.0, math.radians(90.0))
    log = fly(spec, goal, 70.0, start_ned=(0.0, 0.0, 2.0))
    distance = np.hypot(log[:, 1] - goal.north_m, log[:, 2] - goal.east_m)
    heading_error = np.degrees(np.abs(log[:, 6] - goal.heading_rad))
    cross_track = np.abs(log[:, 1] * math.sin(bearing) - log[:, 2] * math.cos(bearing))
    t1, t02 = first_time_inside(log, distance, 1.0), first_time_inside(log, distance, 0.2)
    t_heading = first_time_inside(log, heading_error, 2.0)
    print(f"waypoint: within 1 m from {t1:.1f} s, 0.2 m from {t02:.1f} s, heading within 2 deg from "
          f"{t_heading:.1f} s; max cross-track {cross_track.max():.3f} m, deepest {log[:, 3].max():.3f} m, "
          f"max roll/pitch {np.degrees(np.abs(log[:, 4:6]).max(axis=0))} deg")  # fmt: skip
    assert t1 <= WAYPOINT_WITHIN_1M_S and t02 <= WAYPOINT_WITHIN_02M_S
    assert t1 >= 20.0 / RovGains().speed_max_mps - 5.0  # not faster than the speed limit allows
    assert t_heading <= WAYPOINT_HEADING_SETTLED_S
    assert cross_track.max() < 0.2  # a straight line
    assert log[:, 3].max() < 10.1 and abs(log[-1, 3] - 10.0) < 0.02
    assert heading_error[-1] < 0.5 and distance[-1] < 0.05
    assert np.degrees(np.abs(log[:, 4:6]).max()) < 6.0


def test_without_levelling_the_munk_moment_rolls_the_rov_over(spec):
    """Why roll and pitch are levelled: moving and diving at once, the added-mass (Munk) moments
    (Z_wdot - Y_vdot) v w and (Z_wdot - X_udot) u w overcome the 1 cm metacentric height of the frame."""
    goal = RovTarget(20.0 * math.cos(1.0), 20.0 * math.sin(1.0), 10.0, math.radians(90.0))
    log = fly(spec, goal, 20.0, start_ned=(0.0, 0.0, 2.0), gains=RovGains(level_omega_rad_s=0.0))
    assert np.degrees(np.abs(log[:, 4:6]).max()) > 30.0


def test_mission_advances_through_its_targets_and_holds_the_last():
    targets = [RovTarget(0.0, 10.0, 5.0, 0.0), RovTarget(10.0, 10.0, 5.0, 0.0)]
    mission = RovMission(targets, acceptance_radius_m=1.0, depth_tolerance_m=0.5)

    def at(t, north, east, depth):
        return ned_state(t, [east, north, -depth], [0.0, 0.0, 0.0, 1.0], [0.0] * 6)

    assert mission.current(at(0.0, 0.0, 0.0, 5.0)) == targets[0]
    assert mission.current(at(1.0, 0.0, 9.5, 3.0)) == targets[0]  # close, but 2 m too shallow
    assert mission.current(at(2.0, 0.3, 9.5, 5.2)) == targets[1] and mission.reached == [(0, 2.0)]
    assert not mission.done
    assert mission.current(at(3.0, 9.8, 10.1, 5.0)) == targets[1] and mission.done
    assert mission.current(at(4.0, 0.0, 0.0, 5.0)) == targets[1] and mission.reached == [(0, 2.0), (1, 3.0)]


# --- scenario level: station_keeper only on thruster-vectored vehicles, set-points validated and converted -----
SCENARIO = """
world:
  origin: {latitude_deg: 48.3, longitude_deg: -4.6}
  bathymetry: {model: flat, depth_m: 50.0}
vessels:
  - {name: rov, model: bluerov2_heavy, pose: {position: [0.0, 0.0, -5.0]}}
  - {name: auv, model: remus100, pose: {position: [10.0, 0.0, -5.0]}}
  - {name: usv, model: wamv}
controllers:
"""


def load_with(tmp_path, controller: str):
    path = tmp_path / "scn.yaml"
    path.write_text(SCENARIO + f"  - {controller}\n")
    return load_scenario(path), path


@pytest.mark.parametrize(
    ("controller", "key", "reason"),
    [
        ("{type: station_keeper, vessel: auv}", "controllers[0].vessel", "not a thruster-vectored vehicle"),
        ("{type: station_keeper, vessel: usv}", "controllers[0].vessel", "drives underwater vehicles"),
        ("{type: station_keeper, vessel: rov, setpoints: {depth_m: 60}}", "controllers[0].setpoints.depth_m",
         "below the sea floor"),
        ("{type: station_keeper, vessel: rov, setpoints: {waypoints: [[1, 2, 3]]}}",
         "controllers[0].setpoints.waypoints[0]", "2 finite numbers"),
        ("{type: station_keeper, vessel: rov, setpoints: {speed: 1}}", "controllers[0].setpoints.speed", "unknown key"),
    ],
)  # fmt: skip
def test_scenario_refuses_station_keepers_that_cannot_work(tmp_path, controller, key, reason):
    with pytest.raises(ScenarioError) as info:
        load_with(tmp_path, controller)
    assert info.value.key == key and reason in info.value.reason
    assert info.value.where.endswith("scn.yaml")


def test_scenario_station_keeper_setpoints_reach_the_controller_as_meant(tmp_path):
    """scenario.py's form of the set-points (waypoints to lat/lon and ENU) read back by rov.parse_setpoints."""
    sc, _ = load_with(
        tmp_path,
        "{type: station_keeper, vessel: rov, parameters: {speed_max_mps: 0.3}, setpoints: {depth_m: 8, "
        "heading_deg: 45, waypoints: [[10, 0], {latitude_deg: 48.3001, longitude_deg: -4.6}], speed_mps: 0.4}}",
    )
    (c,) = sc.controllers
    assert c.type == "station_keeper" and c.parameters["speed_max_mps"] == 0.3
    assert c.parameters["model"] == "bluerov2_heavy"
    origin = GeodeticOrigin(c.parameters["origin_latitude_deg"], c.parameters["origin_longitude_deg"], 0.0)
    sp = parse_setpoints(c.setpoints, origin, "sp")
    assert sp["depth_m"] == 8.0 and sp["heading_rad"] == pytest.approx(math.pi / 4)
    assert sp["speed_mps"] == 0.4 and sp["loop"] is False and "acceptance_radius_m" not in sp  # 0: the default
    (x0, y0), (x1, y1) = sp["waypoints_enu"]
    assert (x0, y0) == pytest.approx((10.0, 0.0), abs=1e-6)
    assert (x1, y1) == pytest.approx((0.0, 11.12), abs=0.01)  # 0.0001 deg of latitude at 48.3 N


@pytest.mark.parametrize(
    ("setpoints", "key"),
    [
        ({"position": [1.0, 2.0, 3.0]}, "sp.position"),
        ({"position": {"latitude_deg": 48.3}}, "sp.position"),
        ({"waypoints": [1.0, 2.0, 3.0]}, "sp.waypoints"),
        ({"latitude_deg": [48.3], "longitude_deg": []}, "sp.latitude_deg"),
        ({"heading_deg": 400.0}, "sp.heading_deg"),
        ({"loop": "yes"}, "sp.loop"),
        ({"speed": 1.0}, "sp"),
    ],
)
def test_parse_setpoints_names_the_bad_key(setpoints, key):
    with pytest.raises(ValueError, match=rf"^{key}: "):
        parse_setpoints(setpoints, GeodeticOrigin(48.3, -4.6, 0.0), "sp")


def test_shipped_mixed_fleet_keeps_every_bluerov2_on_station():
    sc = load_scenario("mixed_fleet_brest")
    rovs = {v.name for v in sc.vessels if v.model == "bluerov2_heavy"}
    keepers = [c for c in sc.controllers if c.type == "station_keeper"]
    assert len(rovs) == 45 and {c.vessel for c in keepers} == rovs
    for c in keepers:
        sp = parse_setpoints(c.setpoints, GeodeticOrigin(48.3, -4.6, 0.0), c.vessel)
        assert sp == {"depth_m": 10.0, "heading_rad": 0.0, "loop": False}  # the station: where it spawns


def test_looping_mission_goes_round_and_never_hangs():
    targets = [RovTarget(0.0, 0.0, 5.0, 0.0), RovTarget(0.0, 10.0, 5.0, 0.0)]
    mission = RovMission(targets, acceptance_radius_m=1.0, loop=True)

    def at(t, north, east):
        return ned_state(t, [east, north, -5.0], [0.0, 0.0, 0.0, 1.0], [0.0] * 6)

    assert mission.current(at(0.0, 0.0, 0.2)) == targets[1]
    assert mission.current(at(1.0, 0.0, 9.8)) == targets[0] and not mission.done  # round again
    assert [i for i, _ in mission.reached] == [0, 1]
    tight = RovMission([targets[0], targets[0]], acceptance_radius_m=1.0, loop=True)  # every target inside
    assert tight.current(at(2.0, 0.0, 0.0)) == targets[0] and len(tight.reached) == 2


def test_the_mixed_fleets_station_keepers_hold_with_a_late_controller_host(spec):
    """mixed_fleet_brest's station-keeper gains, as shipped, against what a starved controller host does: steps
    at 2.5 Hz, commands applied 2 s late, in a 0.1 m/s current. The default gains oscillate from 0.3 s of delay."""
    (params,) = {
        tuple(sorted((k, v) for k, v in c.parameters.items() if k in RovGains.__dataclass_fields__))
        for c in load_scenario("mixed_fleet_brest").controllers
        if c.type == "station_keeper"
    }  # the same gains on every BlueROV2
    gains = RovGains(**dict(params))
    assert gains.level_omega_rad_s == 0.0 and gains.heading_omega_rad_s < 0.5
    fleet = Fleet(DT_S, "rk4", water_density_kgm3=spec.water_density_kgm3)
    fleet.add("rov", spec, [0.0, 0.0, 10.0], [1.0, 0.0, 0.0, 0.0])
    controller, target = RovController(spec, gains), RovTarget(0.0, 0.0, 10.0, 0.0)
    current = np.array([0.07, 0.07, 0.0])
    pending, rows, t_prev = [], [], None
    every, delay = 20, 100  # steps of 0.02 s: 2.5 Hz, 2 s
    for k in range(int(round(90.0 / DT_S))):
        t = k * DT_S
        pos, q, twist, _ = fleet.state_enu()
        s = ned_state(t, pos[0], q[0], twist[0])
        if k % every == 0:
            pending.append((k + delay, controller.step(s, target, 0.0 if t_prev is None else t - t_prev)))
            t_prev = t
        while pending and pending[0][0] <= k:
            fleet.set_thruster_commands("rov", pending.pop(0)[1])
        rows.append((t, *s.position_ned_m, *s.rpy_ned_rad))
        fleet.step(t, current_ned=lambda _t, _p: current)
    log = np.array(rows)
    late = log[:, 0] >= 30.0
    radius = np.hypot(log[:, 1], log[:, 2])
    print(f"fleet gains, 2.5 Hz, 2 s late: max radius {radius.max():.3f} m, after 30 s {radius[late].max():.3f} m, "
          f"depth {np.abs(log[late, 3] - 10).max():.3f} m, heading {np.degrees(np.abs(log[late, 6]).max()):.2f} deg, "
          f"roll/pitch {np.degrees(np.abs(log[:, 4:6]).max()):.2f} deg")  # fmt: skip
    assert radius.max() < 0.4 and radius[late].max() < 0.2
    assert np.abs(log[late, 3] - 10.0).max() < 0.1
    assert np.degrees(np.abs(log[late, 6]).max()) < 3.0 and np.degrees(np.abs(log[:, 4:6]).max()) < 3.0


def test_a_long_step_after_missed_odometry_does_not_upset_the_references(spec):
    """A host that stalls hands the controller one step of seconds; the reference models take it in short
    sub-steps and land where 0.1 s steps would have (forward Euler over 3 s at omega 0.8 diverges)."""
    state = ned_state(0.0, [0.0, 0.0, -5.0], [0.0, 0.0, 0.0, 1.0], [0.0] * 6)  # facing east
    target = RovTarget(3.0, 0.0, 6.0, 0.0)
    long, short = RovController(spec), RovController(spec)
    long.step(state, target, 0.1)
    short.step(state, target, 0.1)
    long.step(state, target, 3.0)
    for _ in range(30):
        short.step(state, target, 0.1)
    assert long.last["eta_d"] == pytest.approx(short.last["eta_d"], abs=1e-9)
    assert 0.0 < long.last["eta_d"][3] < math.pi / 2  # the heading reference on its way from 090 to 000
