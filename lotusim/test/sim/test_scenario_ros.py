"""A scenario's plan drives the real nodes over DDS: the four node classes start with the plan's parameters
(types accepted, values read back), the plan's spawn items go through the MAS action, and the vessels appear
where the scenario put them (ENU, geodetic, fleet grid), on the worker it asked for, with its sensor rates."""

from __future__ import annotations

import math
import textwrap

import numpy as np
import pytest

rclpy = pytest.importorskip("rclpy")

from rclpy.parameter import Parameter  # noqa: E402
from sensor_msgs.msg import Imu  # noqa: E402

from lotusim_core.ros.fleet_client import FleetClient  # noqa: E402
from lotusim_core.ros.node_runner import make_executor  # noqa: E402
from lotusim_core.sim.mas_server import MasServer  # noqa: E402
from lotusim_core.sim.scenario import enu_positions, load_scenario  # noqa: E402
from lotusim_env.current_server import CurrentServer  # noqa: E402
from lotusim_interfaces.msg import FleetState  # noqa: E402
from lotusim_interfaces.srv import Step  # noqa: E402
from lotusim_physics.dynamics_node import DynamicsWorker  # noqa: E402
from lotusim_sensors.sensor_publisher import SensorPublisher  # noqa: E402
from simnodes import spin_until  # noqa: E402

pytestmark = pytest.mark.ros  # starts DDS participants (nodes, node processes or the ros2 CLI)
SCENARIO = """
name: plan_e2e
seed: 5
world:
  origin: {latitude_deg: 48.3, longitude_deg: -4.6}
  bathymetry: {model: flat, depth_m: 40.0}
physics: {step_s: 0.02, mode: lockstep, workers: 2}
sensors:
  defaults: {imu: {rate_hz: 25.0}}
vessels:
  - {name: auv, model: remus100, pose: {position: [10.0, -5.0, -8.0], yaw_deg: 30.0}, worker: worker_1}
  - {name: boat, model: wamv, pose: {latitude_deg: 48.301, longitude_deg: -4.599, heading_deg: 90.0}}
generators:
  - fleet_grid: {model: bluerov2_heavy, count: 3, spacing_m: 6.0, origin: {position: [0.0, 20.0, -3.0]}}
"""


def node_overrides(params: dict) -> list[Parameter]:
    return [Parameter(name, value=value) for name, value in params.items()]


def test_plan_starts_the_nodes_and_spawns_the_scenario(ros_context, tmp_path):
    path = tmp_path / "plan_e2e.yaml"
    path.write_text(textwrap.dedent(SCENARIO))
    scenario = load_scenario(path)
    plan = scenario.plan()
    p = plan.node_parameters
    executor = make_executor(context=ros_context)
    nodes = [CurrentServer(context=ros_context, parameter_overrides=node_overrides(p["current_server"]))]
    for name in plan.dynamics_nodes:
        nodes.append(DynamicsWorker(context=ros_context, node_name=name, parameter_overrides=node_overrides(p[name])))
    nodes.append(MasServer(context=ros_context, parameter_overrides=node_overrides(p["mas_server"])))
    nodes.append(SensorPublisher(context=ros_context, parameter_overrides=node_overrides(p["sensor_publisher"])))
    client = rclpy.create_node("scenario_test_client", context=ros_context)
    for node in [*nodes, client]:
        executor.add_node(node)
    try:
        # every parameter of the plan reads back with its value on the node that received it
        for node in nodes:
            for name, value in p[node.get_name()].items():
                assert node.get_parameter(name).value == value, (node.get_name(), name)
        mas = nodes[-2]
        spin_until(executor, lambda: len(mas.registry.workers) == 2, 15.0, "both workers found by mas_server")
        imu: list = []
        client.create_subscription(Imu, "/auv/imu/data", imu.append, 100)
        states: dict[str, FleetState] = {}  # latest fleet state of each worker
        client.create_subscription(FleetState, "/lotusim/fleet_state", lambda m: states.__setitem__(m.worker, m), 100)

        fleet = FleetClient(client, executor)
        fleet.wait_for_server(30.0, what="timed out waiting for fleet_command", settle_s=0.0)
        # acceptance: 20 s on the first attempt (the goal re-sent under its id if its answer is lost)
        result = fleet.command(plan.spawn_items(), timeout_s=30.0, answer_s=20.0)
        assert [r.ok for r in result.results] == [True] * 5, result.results

        step = client.create_client(Step, "/lotusim/step")
        spin_until(executor, step.service_is_ready, 10.0, "/lotusim/step")
        for _ in range(10):  # 0.2 s of sim time
            done = step.call_async(Step.Request(steps=1))
            spin_until(executor, done.done, 10.0, "step")
        spin_until(executor, lambda: len(imu) >= 5, 10.0, "IMU of the REMUS at 25 Hz")

        vessels = fleet.list_vessels(wait_s=10.0)
        assert len(vessels) == 5, [v.name for v in vessels]
        infos = {v.name: v for v in vessels}
    finally:
        executor.shutdown()
        for node in [client, *nodes]:
            node.destroy_node()

    assert infos["auv"].worker == "worker_1"
    assert set(states) == {"worker_0", "worker_1"}
    poses = {}
    for state in states.values():
        position = np.asarray(state.position).reshape(-1, 3)
        orientation = np.asarray(state.orientation).reshape(-1, 4)
        poses.update({name: (position[i], orientation[i]) for i, name in enumerate(state.names)})
    assert "auv" in states["worker_1"].names  # the worker the scenario asked for
    expected = enu_positions(scenario.vessels, scenario.world.origin)
    for vessel, xyz in zip(scenario.vessels, expected, strict=True):
        # 0.2 s after the spawn a vessel has moved millimetres (hydrostatic imbalance), not metres
        assert poses[vessel.name][0] == pytest.approx(xyz, abs=0.05), vessel.name

    def yaw_deg(q_xyzw) -> float:
        x, y, z, w = q_xyzw
        return math.degrees(math.atan2(2 * (w * z + x * y), 1 - 2 * (y**2 + z**2)))

    assert yaw_deg(poses["boat"][1]) == pytest.approx(0.0, abs=0.5)  # compass 090 = ENU yaw 0: the bow points east
    assert yaw_deg(poses["auv"][1]) == pytest.approx(30.0, abs=0.5)
    # the scenario's sensor default reached the sensor publisher: one IMU sample every 2 steps of 20 ms
    stamps = np.array([m.header.stamp.sec * 10**9 + m.header.stamp.nanosec for m in imu])
    assert np.all(np.diff(stamps) == 40_000_000)
