"""Goals and listings whose answer is lost (a DDS discovery race seen in CI) are asked for again, and a goal
still runs once. Real action server and service over DDS; the loss is injected on the client side: the
client's first request is sent but its answer is never delivered to the caller (or the request is not sent at
all), which is what the caller sees when rmw drops the answer."""

from __future__ import annotations

import pytest
from rclpy.action import ActionClient, ActionServer
from rclpy.action.client import ClientGoalHandle
from rclpy.task import Future

from lotusim_core.ros import reliable_calls
from lotusim_core.ros.node_runner import make_executor
from lotusim_interfaces.action import FleetCommand
from lotusim_interfaces.msg import FleetCommandItem, ItemResult, VesselDescription
from lotusim_interfaces.srv import ListModels
from simnodes import lose_first_answer, spin_until

pytestmark = pytest.mark.ros  # starts DDS participants (nodes, node processes or the ros2 CLI)


class LossyActionClient(ActionClient):
    """An action client whose first goal answer never reaches the caller (`send_first`: whether the first
    request still reaches the server)."""

    def __init__(self, *args, send_first: bool, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.send_first = send_first
        self.requests = 0

    def send_goal_async(self, goal, feedback_callback=None, goal_uuid=None):
        self.requests += 1
        if self.requests > 1:
            return super().send_goal_async(goal, feedback_callback=feedback_callback, goal_uuid=goal_uuid)
        if self.send_first:
            super().send_goal_async(goal, feedback_callback=feedback_callback, goal_uuid=goal_uuid)
        return Future()  # the answer is lost


@pytest.fixture
def two_nodes(ros_context):
    """A server node and a client node on one executor."""
    import rclpy

    server_node = rclpy.create_node("reliable_server", context=ros_context)
    client_node = rclpy.create_node("reliable_client", context=ros_context)
    executor = make_executor(ros_context)
    for node in (server_node, client_node):
        executor.add_node(node)
    yield executor, server_node, client_node
    executor.shutdown()
    for node in (server_node, client_node):
        node.destroy_node()


@pytest.fixture
def action_pair(two_nodes):
    """A FleetCommand server that counts its executions, and a client node, on one executor."""
    executor, server_node, client_node = two_nodes
    executed: list[int] = []

    def execute(goal_handle):
        executed.append(len(goal_handle.request.items))
        goal_handle.publish_feedback(FleetCommand.Feedback(done=len(goal_handle.request.items)))
        goal_handle.succeed()
        names = [item.vessel.name for item in goal_handle.request.items]
        return FleetCommand.Result(results=[ItemResult(ok=True, name=n) for n in names], succeeded=len(names), failed=0)

    server = ActionServer(server_node, FleetCommand, "/test/fleet_command", execute_callback=execute)
    yield executor, client_node, executed
    server.destroy()


def _goal(*names: str) -> FleetCommand.Goal:
    items = [FleetCommandItem(command=FleetCommandItem.CREATE, vessel=VesselDescription(name=n)) for n in names]
    return FleetCommand.Goal(items=items)


@pytest.mark.parametrize("send_first", [True, False], ids=["answer-lost", "request-lost"])
def test_goal_whose_answer_is_lost_runs_once(action_pair, send_first):
    executor, node, executed = action_pair
    client = LossyActionClient(node, FleetCommand, "/test/fleet_command", send_first=send_first)
    spin_until(executor, client.server_is_ready, 30.0, "test action server")
    feedback: list = []

    def spin_once(timeout_s: float) -> None:
        executor.spin_once(timeout_sec=timeout_s)

    handle = reliable_calls.send_goal(
        client, _goal("a", "b", "c"), spin_once, feedback_callback=feedback.append, answer_s=0.5
    )
    result = reliable_calls.goal_result(handle, spin_once, 10.0)
    assert client.requests == 2  # asked twice
    assert executed == [3]  # ... and the goal ran once
    assert [r.name for r in result.result.results] == ["a", "b", "c"] and result.result.succeeded == 3
    spin_until(executor, lambda: bool(feedback), 5.0, "the goal's feedback")  # still delivered
    assert feedback[0].feedback.done == 3
    client.destroy()


def test_unanswered_goal_times_out_and_unknown_goal_is_rejected(action_pair):
    executor, node, executed = action_pair

    def spin_once(timeout_s: float) -> None:
        executor.spin_once(timeout_sec=timeout_s)

    silent = ActionClient(node, FleetCommand, "/test/nobody_serves_this")
    with pytest.raises(TimeoutError, match="2 attempts"):
        reliable_calls.send_goal(silent, _goal("x"), spin_once, answer_s=0.2, attempts=2)
    silent.destroy()
    # a goal id the server never saw: its result request says so, and goal_result raises
    client = ActionClient(node, FleetCommand, "/test/fleet_command")
    spin_until(executor, client.server_is_ready, 30.0, "test action server")
    from unique_identifier_msgs.msg import UUID

    stranger = ClientGoalHandle(client, UUID(uuid=[7] * 16), FleetCommand.Impl.SendGoalService.Response(accepted=True))
    with pytest.raises(reliable_calls.GoalRejected):
        reliable_calls.goal_result(stranger, spin_once, 10.0)
    assert executed == []
    client.destroy()


def test_read_only_call_is_sent_again_when_its_answer_is_lost(two_nodes):
    executor, server_node, client_node = two_nodes
    asked: list[int] = []

    def answer(_request, response):
        asked.append(1)
        response.models = ["lrauv", "remus100"]
        return response

    server_node.create_service(ListModels, "/test/list_models", answer)
    client = client_node.create_client(ListModels, "/test/list_models")
    spin_until(executor, client.service_is_ready, 30.0, "test service")
    sent = lose_first_answer(client)

    def spin_once(timeout_s: float) -> None:
        executor.spin_once(timeout_sec=timeout_s)

    reply = reliable_calls.call_read_only(client, ListModels.Request(), spin_once, answer_s=0.5)
    assert list(reply.models) == ["lrauv", "remus100"]
    assert len(asked) == len(sent) == 2  # the server answered twice; the caller got the second answer
