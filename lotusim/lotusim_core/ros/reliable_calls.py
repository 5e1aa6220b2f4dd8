"""Action goals and read-only service calls that survive a lost answer.

A ROS 2 service (an action's goal request is one) can drop its answer while discovery is still under way:
rmw_fastrtps waits for the client's response reader to be matched on the server side for the response
writer's `max_blocking_time` (100 ms by default) and then gives up with "client will not receive response"
(rmw_fastrtps_shared_cpp/src/rmw_response.cpp). The client has seen the server by then (server_is_ready), so
only its answer is lost. Seen in CI: `lotusim spawn` against a loaded `lotusim run` waited 120 s for a goal
answer that never came.

The cure is to ask again:
- a goal is re-sent with the *same* goal id; if the first copy had reached the server, rclpy's action server
  refuses the copy (the id is known) and the goal's result is then asked for by its id, so a goal runs once;
- a read-only service request (list vessels, list models) is simply sent again.
Requests that change the simulation and have no id (a lockstep Step) must not go through here.
"""

from __future__ import annotations

import uuid

from lotusim_core.ros.spin import SpinOnce, wait_for


class GoalRejected(RuntimeError):
    """The action server refused the goal (or does not know it)."""


def _total_wait_s(answer_s: float, attempts: int) -> float:
    """Wall time of all attempts when the k-th waits k * answer_s."""
    return answer_s * attempts * (attempts + 1) / 2


def send_goal(
    client,
    goal,
    spin_once: SpinOnce,
    *,
    feedback_callback=None,
    answer_s: float = 5.0,
    attempts: int = 4,
):
    """Send `goal` on the rclpy ActionClient `client` and return its accepted ClientGoalHandle.

    The k-th attempt waits k * `answer_s` seconds for the server's answer before the goal is re-sent under
    the same id. Raises GoalRejected if the server refused it, TimeoutError if no attempt was answered."""
    from rclpy.action.client import ClientGoalHandle
    from unique_identifier_msgs.msg import UUID

    goal_id = UUID(uuid=list(uuid.uuid4().bytes))
    for attempt in range(attempts):
        future = client.send_goal_async(goal, feedback_callback=feedback_callback, goal_uuid=goal_id)
        if not wait_for(spin_once, future.done, answer_s * (attempt + 1)):
            continue
        handle = future.result()
        if handle.accepted:
            return handle
        if attempt == 0:
            raise GoalRejected("the action server rejected the goal")
        # a copy refused: the server already holds this goal id (its answer to an earlier copy was lost); the
        # result request below tells whether it really does (the response type is the one rclpy builds)
        response = client._action_type.Impl.SendGoalService.Response(accepted=True, stamp=handle.stamp)
        return ClientGoalHandle(client, goal_id, response)
    raise TimeoutError(f"no answer to the goal in {attempts} attempts ({_total_wait_s(answer_s, attempts):.0f} s)")


def goal_result(handle, spin_once: SpinOnce, timeout_s: float):
    """Wait for the result of an accepted goal; returns the GetResult response (`.status`, `.result`).

    Raises GoalRejected if the server does not know the goal (a re-sent goal whose first copy never arrived
    and whose copy was refused), TimeoutError after `timeout_s`."""
    from action_msgs.msg import GoalStatus

    future = handle.get_result_async()
    if not wait_for(spin_once, future.done, timeout_s):
        raise TimeoutError(f"no goal result within {timeout_s:.0f} s")
    response = future.result()
    if response.status == GoalStatus.STATUS_UNKNOWN:
        raise GoalRejected("the action server does not know the goal (rejected)")
    return response


def call_read_only(client, request, spin_once: SpinOnce, *, answer_s: float = 5.0, attempts: int = 4):
    """Call a service whose request changes nothing (a listing), re-sending it when an answer is lost."""
    for attempt in range(attempts):
        future = client.call_async(request)
        if wait_for(spin_once, future.done, answer_s * (attempt + 1)):
            return future.result()
        client.remove_pending_request(future)
    total = _total_wait_s(answer_s, attempts)
    raise TimeoutError(f"{client.srv_name}: no answer in {attempts} attempts ({total:.0f} s)")
