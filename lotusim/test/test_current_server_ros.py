"""current_server over real DDS: a client node calls the QueryCurrent service and reads the latched config."""

from __future__ import annotations

import time

import numpy as np
import pytest
import yaml

rclpy = pytest.importorskip("rclpy")

from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from rclpy.qos import DurabilityPolicy, QoSProfile  # noqa: E402

from lotusim_env.current_server import CurrentServer  # noqa: E402
from lotusim_interfaces.msg import EnvironmentConfig  # noqa: E402
from lotusim_interfaces.srv import QueryCurrent  # noqa: E402


@pytest.fixture
def server_and_client(ros_context):
    config = "current: {model: constant, velocity_enu: [0.3, -0.2, 0.0]}"
    server = CurrentServer(
        context=ros_context, parameter_overrides=[Parameter("environment_yaml", value=config)]
    )
    client_node = rclpy.create_node("test_client", context=ros_context)
    executor = SingleThreadedExecutor(context=ros_context)
    executor.add_node(server)
    executor.add_node(client_node)
    yield server, client_node, executor
    executor.shutdown()
    client_node.destroy_node()
    server.destroy_node()


def _call(executor, client, request, timeout=10.0):
    deadline = time.monotonic() + timeout
    while not client.service_is_ready():
        assert time.monotonic() < deadline, "service did not appear"
        executor.spin_once(timeout_sec=0.05)
    future = client.call_async(request)
    executor.spin_until_future_complete(future, timeout_sec=timeout)
    assert future.done(), "service call timed out"
    return future.result()


def test_query_returns_configured_current_at_every_point(server_and_client):
    _, client_node, executor = server_and_client
    client = client_node.create_client(QueryCurrent, "/lotusim/query_current")
    points = np.array([[0.0, 0.0, -1.0], [100.0, -50.0, -30.0], [5.0, 5.0, 0.0]])
    reply = _call(executor, client, QueryCurrent.Request(time_s=12.5, points_enu=points.ravel().tolist()))
    assert reply.success, reply.message
    assert reply.time_s == 12.5
    velocities = np.frombuffer(reply.velocities_enu, dtype=float).reshape(-1, 3)
    np.testing.assert_allclose(velocities, np.tile([0.3, -0.2, 0.0], (3, 1)))


@pytest.mark.parametrize(
    ("points", "expected"),
    [([1.0, 2.0], "multiple of 3"), ([0.0, float("nan"), 0.0], "finite")],
)
def test_bad_queries_get_a_clear_refusal(server_and_client, points, expected):
    _, client_node, executor = server_and_client
    client = client_node.create_client(QueryCurrent, "/lotusim/query_current")
    reply = _call(executor, client, QueryCurrent.Request(time_s=0.0, points_enu=points))
    assert not reply.success
    assert expected in reply.message
    assert len(reply.velocities_enu) == 0


def test_config_is_latched_and_follows_parameter_changes(server_and_client):
    server, client_node, executor = server_and_client
    received: list[EnvironmentConfig] = []
    qos = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)
    client_node.create_subscription(EnvironmentConfig, "/lotusim/environment", received.append, qos)
    deadline = time.monotonic() + 10.0
    while not received and time.monotonic() < deadline:
        executor.spin_once(timeout_sec=0.05)
    assert received, "latched configuration not received by a late subscriber"
    assert yaml.safe_load(received[-1].config_yaml)["current"]["velocity_enu"] == [0.3, -0.2, 0.0]

    new = "current: {model: constant, velocity_enu: [1.0, 0.0, 0.0]}"
    result = server.set_parameters([Parameter("environment_yaml", value=new)])[0]
    assert result.successful
    deadline = time.monotonic() + 10.0
    while received[-1].config_yaml != new and time.monotonic() < deadline:
        executor.spin_once(timeout_sec=0.05)
    assert received[-1].config_yaml == new
    assert received[-1].revision == received[0].revision + 1

    bad = server.set_parameters([Parameter("environment_yaml", value="current: {model: nonsense}")])[0]
    assert not bad.successful and "nonsense" in bad.reason
