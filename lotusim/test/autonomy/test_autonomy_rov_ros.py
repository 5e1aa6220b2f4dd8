"""The station keeper over real DDS: hosted by the controller_host node (the contract of controller_host.py),
driving a BlueROV2 Heavy spawned in the dynamics worker, in lockstep (deterministic whatever the machine's load).
The checks use the ground-truth odometry with the test's own conversions (z -> depth, quaternion -> compass)."""

from __future__ import annotations

import math

import numpy as np
import pytest

rclpy = pytest.importorskip("rclpy")

from geometry_msgs.msg import PoseStamped  # noqa: E402
from nav_msgs.msg import Odometry  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402

from lotusim_autonomy.controller_host import ControllerHost  # noqa: E402
from lotusim_autonomy.rov_controller import STATUS_LABEL, StationKeeperNode  # noqa: E402
from simnodes import Sim, create_item, spin_until  # noqa: E402

pytestmark = pytest.mark.ros  # starts DDS participants (nodes, node processes or the ros2 CLI)
STEP_S = 0.02
STATION_ENU = (2.0, 1.0)  # m from the spawn point (0, 0)
STATION_DEPTH_M = 6.0  # spawned at 5 m
# held over the last 40 s of a 60 s run (calm water: the worker here has no current server)
HOLD_RADIUS_M = 0.05
HOLD_DEPTH_TOL_M = 0.02
HOLD_HEADING_TOL_DEG = 0.5


def compass_heading_deg(q) -> float:
    yaw_enu = math.atan2(2.0 * (q.w * q.z + q.x * q.y), 1.0 - 2.0 * (q.y * q.y + q.z * q.z))
    return (90.0 - math.degrees(yaw_enu)) % 360.0


def run_lockstep(sim: Sim, keeper, cycles: int, steps_per_cycle: int = 5) -> None:
    """Step one odometry period, wait for the keeper's answer and for its commands at the worker; repeat."""
    entry = sim.worker.vessels["rov"]
    for _ in range(cycles):
        target = keeper.odom_count + 1
        sim.step(steps_per_cycle)
        spin_until(sim.executor, lambda t=target: keeper.odom_count >= t, 10.0, "station keeper update")
        spin_until(sim.executor, lambda: np.array_equal(entry.thruster_cmd, keeper.last_commands), 10.0,
                   "commands at the worker")  # fmt: skip


def test_hosted_station_keeper_holds_a_bluerov2_at_its_station_and_takes_a_goal_pose(ros_context):
    sim = Sim(ros_context, mode="lockstep", step_s=STEP_S, odom_rate_hz=10.0)
    host = None
    try:
        assert sim.command([create_item("rov", "bluerov2_heavy", (0.0, 0.0, -5.0))]).results[0].ok
        spec = (
            "[{type: station_keeper, vessel: rov, params: {model: bluerov2_heavy, setpoints: "
            f"{{position: [{STATION_ENU[0]}, {STATION_ENU[1]}], depth_m: {STATION_DEPTH_M}, heading_deg: 45.0}}}}}}]"
        )
        host = ControllerHost(context=ros_context, parameter_overrides=[Parameter("controllers_yaml", value=spec)])
        sim.executor.add_node(host)
        keeper = host.controllers[("station_keeper", "rov")]
        odom: list[Odometry] = []
        status: list[Float64MultiArray] = []
        sim.client.create_subscription(Odometry, "/rov/odom", odom.append, 1000)
        sim.client.create_subscription(Float64MultiArray, "/rov/station_keeper/status", status.append, 1000)
        goal_pub = sim.client.create_publisher(PoseStamped, "/rov/goal_pose", 10)
        spin_until(sim.executor, lambda: host.count_publishers("/rov/odom") > 0, 10.0, "odometry matched")
        spin_until(sim.executor, lambda: goal_pub.get_subscription_count() > 0, 10.0, "goal_pose matched")
        run_lockstep(sim, keeper, 600)  # 60 s
        spin_until(sim.executor, lambda: len(odom) >= 600 and len(status) >= 590, 10.0, "odometry and status")
        t = np.array([m.header.stamp.sec + m.header.stamp.nanosec * 1e-9 for m in odom])
        xy = np.array([[m.pose.pose.position.x, m.pose.pose.position.y] for m in odom])
        depth = np.array([-m.pose.pose.position.z for m in odom])
        heading = np.array([compass_heading_deg(m.pose.pose.orientation) for m in odom])
        late = t >= t[0] + 20.0
        radius = np.hypot(*(xy - np.array(STATION_ENU)).T)
        print(f"\nstation keeper over DDS: last 40 s max radius {radius[late].max():.4f} m, depth error "
              f"{np.abs(depth[late] - STATION_DEPTH_M).max():.4f} m, heading error "
              f"{np.abs(heading[late] - 45.0).max():.3f} deg")  # fmt: skip
        assert np.hypot(*xy[0]) < 0.01 and abs(depth[0] - 5.0) < 0.01  # it started away from the station
        assert radius[late].max() < HOLD_RADIUS_M
        assert np.abs(depth[late] - STATION_DEPTH_M).max() < HOLD_DEPTH_TOL_M
        assert np.abs(heading[late] - 45.0).max() < HOLD_HEADING_TOL_DEG
        last = status[-1]
        assert last.layout.dim[0].label == STATUS_LABEL
        fields = dict(zip(STATUS_LABEL.split(","), last.data, strict=True))
        assert fields["done"] == 1.0 and fields["horizontal_error_m"] < HOLD_RADIUS_M

        # a goal in map ENU: 5 m north of the station, 8 m deep, facing east (ENU yaw 0)
        goal = PoseStamped()
        goal.header.frame_id = "map"
        goal.pose.position.x, goal.pose.position.y, goal.pose.position.z = STATION_ENU[0], STATION_ENU[1] + 5.0, -8.0
        goal.pose.orientation.w = 1.0
        goal_pub.publish(goal)
        spin_until(sim.executor, lambda: keeper.mission.targets[0].depth_m == 8.0, 10.0, "goal at the keeper")
        n0 = len(odom)
        run_lockstep(sim, keeper, 300)  # 30 s
        spin_until(sim.executor, lambda: len(odom) >= n0 + 300, 10.0, "odometry")
        p, q = odom[-1].pose.pose.position, odom[-1].pose.pose.orientation
        print(f"goal 5 m away: after 30 s at ({p.x:.3f}, {p.y:.3f}, {p.z:.3f}), heading {compass_heading_deg(q):.2f}")
        assert math.hypot(p.x - STATION_ENU[0], p.y - STATION_ENU[1] - 5.0) < 0.1 and abs(p.z + 8.0) < 0.05
        assert abs(compass_heading_deg(q) - 90.0) < 1.0
    finally:
        if host is not None:
            host.close()
            host.destroy_node()
        sim.close()


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"model": "remus100"}, "model: the station keeper needs vectored thrusters"),
        ({"model": "bluerov2_heavy", "setpoints.depth_m": -2.0}, "setpoints.depth_m: expected a number"),
        ({"model": "bluerov2_heavy", "speed_max": 1.0}, "unknown parameter(s) ['speed_max']"),
    ],
)
def test_standalone_node_refuses_bad_parameters_with_the_key(ros_context, params, message):
    overrides = [Parameter("vessel", value="rov")] + [Parameter(k, value=v) for k, v in params.items()]
    with pytest.raises(ValueError) as info:
        StationKeeperNode(context=ros_context, parameter_overrides=overrides)
    assert str(info.value).startswith("station_keeper rov: ") and message in str(info.value)


E2E_SCENARIO = """
name: rovs_on_station
description: three BlueROV2s hold station in a 0.2 m/s current, for the station keeper's end-to-end test
seed: 5
duration_s: 60.0
world:
  origin: {latitude_deg: 48.3, longitude_deg: -4.6}
  bathymetry: {model: flat, depth_m: 50.0}
physics: {step_s: 0.02, mode: scaled, real_time_factor: 2.0, odom_rate_hz: 10.0}
environment:
  current: {model: constant, velocity_enu: [0.2, 0.0, 0.0]}
vessels:
  - {name: rov_1, model: bluerov2_heavy, pose: {position: [0.0, 0.0, -10.0]}}
  - {name: rov_2, model: bluerov2_heavy, pose: {position: [10.0, 0.0, -10.0]}}
  - {name: rov_3, model: bluerov2_heavy, pose: {position: [20.0, 0.0, -10.0], yaw_deg: 90.0}}
controllers:
  - {type: station_keeper, vessel: rov_1, setpoints: {position: [0.0, 0.0], depth_m: 10.0, heading_deg: 0.0}}
  - {type: station_keeper, vessel: rov_2, setpoints: {position: [10.0, 0.0], depth_m: 10.0, heading_deg: 0.0}}
  - {type: station_keeper, vessel: rov_3, setpoints: {position: [20.0, 0.0], depth_m: 10.0, heading_deg: 0.0}}
"""
# over 20 s of sim time before the last 3 s (the vessels drift with the current from their spawn until the
# controller host has started, a load-dependent few seconds of sim time, then go back to their stations; at the
# end `lotusim run` stops the controller host a moment before the dynamics and the recorder)
E2E_RADIUS_M = 0.1
E2E_DEPTH_TOL_M = 0.05
E2E_HEADING_TOL_DEG = 1.0


def test_lotusim_run_keeps_three_bluerov2s_on_station_in_a_current(tmp_path, own_domain_env):
    """The user's path: a scenario file through `lotusim run` (nodes and a controller_host as processes, the
    scenario's current); each ROV's recorded odometry ends at its station, 10 m deep, heading north (uncontrolled,
    the current would carry it 12 m)."""
    import subprocess
    import sys
    from pathlib import Path

    from rosbags.highlevel import AnyReader

    from lotusim_core.sim.recorder import make_typestore

    scenario, record = tmp_path / "rovs.yaml", tmp_path / "rec"
    scenario.write_text(E2E_SCENARIO)
    proc = subprocess.run(
        [sys.executable, "-m", "lotusim_core.cli", "run", str(scenario), "--headless", "--record", str(record)],
        env=own_domain_env, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "3 vessels spawned (0 failed)" in proc.stdout and "3 controller(s)" in proc.stdout
    station = {"rov_1": (0.0, 0.0), "rov_2": (10.0, 0.0), "rov_3": (20.0, 0.0)}
    with AnyReader([Path(record)], default_typestore=make_typestore()) as reader:
        odoms = [c for c in reader.connections if c.topic.endswith("/odom")]
        assert sorted(c.topic for c in odoms) == [f"/rov_{k}/odom" for k in (1, 2, 3)]
        for connection in odoms:
            vessel = connection.topic.split("/")[1]
            rows = []
            for conn, _, raw in reader.messages(connections=[connection]):
                m = reader.deserialize(raw, conn.msgtype)
                p = m.pose.pose.position
                rows.append((m.header.stamp.sec + m.header.stamp.nanosec * 1e-9, p.x, p.y, -p.z,
                             compass_heading_deg(m.pose.pose.orientation)))  # fmt: skip
            a = np.array(rows)
            late = (a[:, 0] >= a[-1, 0] - 23.0) & (a[:, 0] <= a[-1, 0] - 3.0)  # shutdown: controllers go first
            radius = np.hypot(a[:, 1] - station[vessel][0], a[:, 2] - station[vessel][1])
            heading = (a[:, 4] + 180.0) % 360.0 - 180.0
            print(f"\n{vessel}: odometry from {a[0, 0]:.1f} to {a[-1, 0]:.1f} s; max distance from the station "
                  f"{radius.max():.3f} m, over 20 s {radius[late].max():.3f} m; depth error "
                  f"{np.abs(a[late, 3] - 10.0).max():.4f} m, heading {np.abs(heading[late]).max():.2f}")  # fmt: skip
            assert a[-1, 0] - a[0, 0] >= 40.0
            assert radius[late].max() < E2E_RADIUS_M
            assert np.abs(a[late, 3] - 10.0).max() < E2E_DEPTH_TOL_M
            assert np.abs(heading[late]).max() < E2E_HEADING_TOL_DEG


def test_min_step_s_thins_the_control_steps_and_keeps_h_in_sim_time(ros_context):
    """min_step_s 0.4 on 10 Hz odometry: a step on every fourth message, each over 0.4 s of sim time."""
    node = rclpy.create_node("min_step_check", context=ros_context)
    try:
        params = {"model": "bluerov2_heavy", "min_step_s": 0.4, "setpoints": {"depth_m": 5.0}}
        keeper = host_class()(node, "rov", params)  # the class the registry hands a host
        steps: list[float] = []
        step = keeper.controller.step
        keeper.controller.step = lambda s, target, h: steps.append(h) or step(s, target, h)
        msg = Odometry()
        msg.pose.pose.orientation.w = 1.0
        msg.pose.pose.position.z = -5.0
        for k in range(21):  # 0.0 .. 2.0 s
            msg.header.stamp.sec, msg.header.stamp.nanosec = k // 10, (k % 10) * 100_000_000
            keeper._on_odom(msg)
        assert keeper.odom_count == 21 and keeper.updates == 5
        assert steps == pytest.approx([0.4] * 5)
        keeper.close()
    finally:
        node.destroy_node()


def host_class():
    from lotusim_autonomy.controller_host import CONTROLLER_TYPES

    return CONTROLLER_TYPES["station_keeper"]
