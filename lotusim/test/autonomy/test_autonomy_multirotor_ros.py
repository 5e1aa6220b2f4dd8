"""The flight controller over real DDS: hosted by controller_host, flying an X500 spawned in the dynamics worker in
lockstep (odometry at 50 Hz, one physics step of 0.02 s per control step), and a scenario under `lotusim run` whose
X500 takes off from the sea, flies to a waypoint and holds it. Checks use the ground-truth odometry."""

from __future__ import annotations

import numpy as np
import pytest

rclpy = pytest.importorskip("rclpy")

from geometry_msgs.msg import PoseStamped, Twist, Vector3  # noqa: E402
from nav_msgs.msg import Odometry  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from std_msgs.msg import Float64, Float64MultiArray, String  # noqa: E402
from std_srvs.srv import Trigger  # noqa: E402

from lotusim_autonomy.controller_host import ControllerHost  # noqa: E402
from lotusim_autonomy.multirotor_controller import STATUS_LABEL, FlightControllerNode  # noqa: E402
from lotusim_core.base import frames  # noqa: E402
from lotusim_interfaces.msg import Collision  # noqa: E402
from simnodes import Sim, create_item, spin_until  # noqa: E402

pytestmark = pytest.mark.ros  # starts DDS participants (nodes, node processes or the ros2 CLI)
STEP_S = 0.02


CYCLE_LIMIT_S = 30.0  # wall s for one lockstep cycle: a DDS resend on a loaded machine (two test processes) takes s


def run_lockstep(sim: Sim, fc, cycles: int) -> None:
    """One physics step (one odometry message at 50 Hz), wait for the controller's answer at the worker; repeat."""
    entry = sim.worker.vessels["drone"]
    for _ in range(cycles):
        target = fc.odom_count + 1
        sim.step(1)
        spin_until(sim.executor, lambda t=target: fc.odom_count >= t, CYCLE_LIMIT_S, "flight controller update")
        spin_until(sim.executor, lambda: np.array_equal(entry.thruster_cmd, fc.last_commands), CYCLE_LIMIT_S,
                   "commands at the worker")  # fmt: skip


def call(sim: Sim, client) -> Trigger.Response:
    spin_until(sim.executor, client.service_is_ready, 10.0, f"{client.srv_name} ready")
    future = client.call_async(Trigger.Request())
    spin_until(sim.executor, future.done, 10.0, f"{client.srv_name} reply")
    return future.result()


def test_hosted_flight_controller_hovers_takes_off_flies_a_goal_and_lands_an_x500(ros_context):
    """An X500 spawned at 10 m holds there; takeoff climbs 5 m; a goal_pose 10 m away is reached and held within
    0.1 m; cmd_vel 1 m/s forward moves it north-east along its heading; land puts it on the sea with its rotors
    stopped."""
    sim = Sim(ros_context, mode="lockstep", step_s=STEP_S, odom_rate_hz=50.0)
    host = None
    try:
        assert sim.command([create_item("drone", "x500", (0.0, 0.0, 10.0))]).results[0].ok
        spec = "[{type: flight_controller, vessel: drone, params: {model: x500, setpoints: {heading_deg: 45.0}}}]"
        host = ControllerHost(context=ros_context, parameter_overrides=[Parameter("controllers_yaml", value=spec)])
        sim.executor.add_node(host)
        fc = host.controllers[("flight_controller", "drone")]
        odom: list[Odometry] = []
        status: list[Float64MultiArray] = []
        sim.client.create_subscription(Odometry, "/drone/odom", odom.append, 10000)
        sim.client.create_subscription(Float64MultiArray, "/drone/flight_controller/status", status.append, 10000)
        goal_pub = sim.client.create_publisher(PoseStamped, "/drone/goal_pose", 10)
        vel_pub = sim.client.create_publisher(Twist, "/drone/cmd_vel", 10)
        takeoff = sim.client.create_client(Trigger, "/drone/takeoff")
        land = sim.client.create_client(Trigger, "/drone/land")
        spin_until(sim.executor, lambda: host.count_publishers("/drone/odom") > 0, 10.0, "odometry matched")
        spin_until(sim.executor, lambda: goal_pub.get_subscription_count() > 0, 10.0, "goal_pose matched")
        spin_until(sim.executor, lambda: vel_pub.get_subscription_count() > 0, 10.0, "cmd_vel matched")

        def position() -> np.ndarray:
            p = odom[-1].pose.pose.position
            return np.array([p.x, p.y, p.z])

        run_lockstep(sim, fc, 150)  # 3 s: turn to 45°, hold 10 m
        assert np.linalg.norm(position() - [0.0, 0.0, 10.0]) < 0.1
        answer = call(sim, takeoff)
        assert answer.success, answer.message
        run_lockstep(sim, fc, 300)  # 6 s
        assert abs(position()[2] - 15.0) < 0.3 and fc.pilot.phase == "hold"

        goal = PoseStamped()
        goal.header.frame_id = "map"
        goal.pose.position.x, goal.pose.position.y, goal.pose.position.z = 8.0, 6.0, 12.0
        goal.pose.orientation.w = 1.0  # ENU yaw 0: facing east
        goal_pub.publish(goal)
        spin_until(sim.executor, lambda: fc.pilot.hold_ned is not None and fc.pilot.hold_ned[0] == 6.0, 10.0, "goal")
        run_lockstep(sim, fc, 500)  # 10 s
        error = np.linalg.norm(position() - [8.0, 6.0, 12.0])
        print(f"\nflight controller over DDS: 10 m goal, error after 10 s {error:.3f} m")
        assert error < 0.1
        fields = dict(zip(STATUS_LABEL.split(","), status[-1].data, strict=True))
        assert status[-1].layout.dim[0].label == STATUS_LABEL and fields["phase"] == 2.0  # hold

        start = position()
        for _ in range(10):  # 1 m/s forward (east: it faces east), 0.2 s apart, 2 s in all
            vel_pub.publish(Twist(linear=Vector3(x=1.0)))
            run_lockstep(sim, fc, 10)
        run_lockstep(sim, fc, 150)  # the set-point times out: hold
        moved = position() - start
        print(f"cmd_vel 1 m/s east for 2 s: moved {moved.round(3).tolist()} m")
        assert 1.0 < moved[0] < 3.5 and abs(moved[1]) < 0.3 and fc.pilot.phase == "hold"

        answer = call(sim, land)
        assert answer.success, answer.message
        run_lockstep(sim, fc, 1250)  # 25 s: 12 m at 0.7 m/s, then 1 s still
        print(f"landed at {position().round(3).tolist()}, phase {fc.pilot.phase}")
        assert fc.pilot.phase == "disarmed" and np.all(fc.last_commands == 0.0)
        assert position()[2] < 0.5 and sim.worker.fleet.in_contact[sim.worker.fleet.index("drone")]
    finally:
        if host is not None:
            host.close()
            host.destroy_node()
        sim.close()


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"model": "wamv"}, "model: the flight controller flies multirotors"),
        ({"model": "x500", "setpoints.altitudes_m": [1.0]}, "setpoints.altitudes_m: expected one altitude"),
        ({"model": "x500", "rate_gain": 1.0}, "unknown parameter(s) ['rate_gain']"),
        ({"model": "x500", "cmd_vel_frame": "odom"}, "cmd_vel_frame: expected one of"),
    ],
)
def test_standalone_node_refuses_bad_parameters_with_the_key(ros_context, params, message):
    overrides = [Parameter("vessel", value="drone")] + [Parameter(k, value=v) for k, v in params.items()]
    with pytest.raises(ValueError) as info:
        FlightControllerNode(context=ros_context, parameter_overrides=overrides)
    assert str(info.value).startswith("flight_controller drone: ") and message in str(info.value)


def test_hosted_flight_controller_lands_an_x500_on_a_moving_wamv(ros_context):
    """land_on over DDS: a WAM-V driven at 0.6 throttle (1.5 m/s) by the test, an X500 holding 6 m up behind it;
    after `land_on: usv` the drone is on the WAM-V's deck (over its 2.4 m x 2.0 m rectangle, 1.0 m above its CO)
    with its rotors stopped, moving with it; `takeoff` lifts it off the moving deck again. Both on
    /lotusim/collisions."""
    sim = Sim(ros_context, mode="lockstep", step_s=STEP_S, odom_rate_hz=50.0)
    host = None
    try:
        result = sim.command(
            [create_item("usv", "wamv", (-10.0, 0.0, 0.0)), create_item("drone", "x500", (0.0, 0.0, 6.0))]
        )
        assert all(r.ok for r in result.results)
        spec = "[{type: flight_controller, vessel: drone, params: {model: x500}}]"
        host = ControllerHost(context=ros_context, parameter_overrides=[Parameter("controllers_yaml", value=spec)])
        sim.executor.add_node(host)
        fc = host.controllers[("flight_controller", "drone")]
        boat: list[Odometry] = []
        sim.client.create_subscription(Odometry, "/usv/odom", boat.append, 10000)
        throttle = [
            sim.client.create_publisher(Float64, f"/usv/thrusters/{side}/cmd", 10) for side in ("left", "right")
        ]
        land_on = sim.client.create_publisher(String, "/drone/land_on", 10)
        contacts: list[Collision] = []
        sim.client.create_subscription(Collision, "/lotusim/collisions", contacts.append, 100)
        spin_until(sim.executor, lambda: all(p.get_subscription_count() > 0 for p in throttle), 10.0, "thrusters")
        spin_until(sim.executor, lambda: land_on.get_subscription_count() > 0, 10.0, "land_on matched")
        for pub in throttle:
            pub.publish(Float64(data=0.6))
        run_lockstep(sim, fc, 750)  # 15 s: the boat gets under way
        land_on.publish(String(data="usv"))
        spin_until(sim.executor, lambda: fc._deck_sub is not None, 10.0, "land_on at the controller")
        run_lockstep(sim, fc, 1000)  # 20 s (the boat's odometry comes with the steps)
        fleet = sim.worker.fleet
        i, j = fleet.index("drone"), fleet.index("usv")
        r = frames.rotation_matrix(fleet.q_ned_frd[j])
        gear = r.T @ (fleet.position_ned[i] + [0.0, 0.0, 0.227] - fleet.position_ned[j])
        v_boat, v_drone = r @ fleet.nu[j, :3], frames.rotation_matrix(fleet.q_ned_frd[i]) @ fleet.nu[i, :3]
        print(
            f"\nlanded on the WAM-V: gear at {gear.round(3).tolist()} m in its body, "
            f"boat {np.linalg.norm(v_boat):.2f} m/s"
        )
        assert fc.pilot.phase == "disarmed" and np.all(fc.last_commands == 0.0) and fleet.in_contact[i]
        assert abs(gear[0]) <= 1.2 and abs(gear[1]) <= 1.0 and abs(gear[2] + 1.0) < 0.02
        assert np.linalg.norm(v_boat) > 1.0 and np.linalg.norm(v_drone - v_boat) < 0.05
        # the touchdown on /lotusim/collisions: on the deck of usv, at about the landing's 0.7 m/s relative descent
        spin_until(sim.executor, lambda: len(contacts) > 0, 5.0, "the touchdown event")
        deck = [(c.vessel, c.other, c.kind) for c in contacts if c.kind == Collision.KIND_DECK]
        assert deck == [("drone", "usv", Collision.KIND_DECK)], contacts
        touchdown = next(c for c in contacts if c.kind == Collision.KIND_DECK)
        print(f"touchdown: {touchdown.relative_speed:.2f} m/s relative to the deck")
        assert 0.3 < touchdown.relative_speed < 1.0
        assert (touchdown.normal.x, touchdown.normal.y, touchdown.normal.z) == (0.0, 0.0, 1.0)
        assert not touchdown.ended
        # takeoff from the moving deck: one lift-off, from over the deck, climbing relative to it
        assert call(sim, sim.client.create_client(Trigger, "/drone/takeoff")).success
        run_lockstep(sim, fc, 150)  # 3 s
        spin_until(sim.executor, lambda: any(c.ended for c in contacts), 5.0, "the lift-off event")
        (lift_off,) = [c for c in contacts if c.ended]
        print(f"lift-off: {-lift_off.relative_speed:.2f} m/s up relative to the deck")
        assert (lift_off.vessel, lift_off.other, lift_off.kind) == ("drone", "usv", Collision.KIND_DECK)
        assert lift_off.relative_speed < 0.0 and len(contacts) == 2
        assert fleet.position_ned[i, 2] < fleet.position_ned[j, 2] - 3.0 and not fleet.in_contact[i]
    finally:
        if host is not None:
            host.close()
            host.destroy_node()
        sim.close()


def test_a_host_of_a_drone_and_an_auv_takes_the_fleet_state_once_and_steps_both(ros_context):
    """A controller host with a flight controller and a depth autopilot (a hand-written controllers_yaml; `lotusim
    run` gives drones hosts of their own) has one /lotusim/fleet_state subscription for both (FleetStateFeed):
    each fleet state is taken and deserialized once, and both controllers step on it (the drone at 50 Hz, the
    AUV at the host's 10 Hz)."""
    sim = Sim(ros_context, mode="lockstep", step_s=STEP_S, odom_rate_hz=50.0)
    host = None
    try:
        result = sim.command(
            [create_item("drone", "x500", (0.0, 0.0, 6.0)), create_item("auv", "lrauv", (20.0, 0.0, -5.0))]
        )
        assert all(r.ok for r in result.results)
        spec = """
        - {type: flight_controller, vessel: drone, params: {model: x500}}
        - type: depth_heading_autopilot
          vessel: auv
          params: {model: lrauv, setpoints: {depth_m: 5.0, heading_deg: 90.0}}
        """
        host = ControllerHost(context=ros_context, parameter_overrides=[Parameter("controllers_yaml", value=spec)])
        sim.executor.add_node(host)
        fc, auv = host.controllers[("flight_controller", "drone")], host.controllers[("depth_heading_autopilot", "auv")]
        subscriptions = [
            i for i in host.get_subscriptions_info_by_topic("/lotusim/fleet_state") if i.node_name == host.get_name()
        ]
        assert len(subscriptions) == 1, subscriptions
        run_lockstep(sim, fc, 50)  # 1 s
        spin_until(sim.executor, lambda: auv.odom_count >= 10, 10.0, "the AUV's states")
        assert fc.odom_count >= 50 and 10 <= auv.odom_count <= 11, (fc.odom_count, auv.odom_count)
    finally:
        if host is not None:
            host.close()
            host.destroy_node()
        sim.close()
