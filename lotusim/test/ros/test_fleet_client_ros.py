"""FleetClient (lotusim_core.ros.fleet_client) against a real MAS server and dynamics worker over DDS (simnodes.Sim:
the classes `lotusim run` starts): create, list, move, delete, a lost answer asked again, and timeouts that say
what did not answer."""

from __future__ import annotations

import math
import time

import pytest
import rclpy
from rclpy.task import Future

from lotusim_core.ros.fleet_client import LIST_VESSELS, FleetClient, ModelInfo
from lotusim_core.ros.node_runner import make_executor
from lotusim_interfaces.msg import ItemResult, VesselDescription
from simnodes import Sim, lose_first_answer, spin_until

pytestmark = pytest.mark.ros  # starts DDS participants (nodes, node processes or the ros2 CLI)
HINT = "is `lotusim run` running, same ROS_DOMAIN_ID?"


@pytest.fixture
def sim(ros_context):
    s = Sim(ros_context, mode="lockstep", step_s=0.02)
    yield s
    s.close()


@pytest.fixture
def client(sim):
    fleet = FleetClient(sim.client, sim.executor)
    fleet.wait_for_server(30.0)
    yield fleet
    fleet.destroy()


def _at(name: str, model: str, xyz: tuple[float, float, float], yaw_deg: float = 0.0) -> VesselDescription:
    """A vessel at `xyz` in map ENU (m), ENU yaw `yaw_deg` (counter-clockwise from east)."""
    vessel = VesselDescription(name=name, model=model, pose_frame=VesselDescription.POSE_ENU)
    vessel.pose.position.x, vessel.pose.position.y, vessel.pose.position.z = (float(v) for v in xyz)
    half = math.radians(yaw_deg) / 2.0
    vessel.pose.orientation.z, vessel.pose.orientation.w = math.sin(half), math.cos(half)
    return vessel


def _listed(client: FleetClient, worker: str = "") -> dict:
    return {v.name: v for v in client.list_vessels(worker)}


def test_create_list_move_delete(sim, client):
    feedback: list = []
    created = client.create([_at("a", "lrauv", (0, 0, -10)), _at("b", "wamv", (20, 5, 0))], feedback=feedback.append)
    assert [r.ok for r in created.results] == [True, True], [r.reason for r in created.results]
    assert created.succeeded == 2 and created.failed == 0 and created.results[0].worker == "worker_0"
    spin_until(sim.executor, lambda: bool(feedback), 5.0, "the goal's feedback")
    assert feedback[-1].feedback.total == 2

    listed = _listed(client)
    assert sorted(listed) == ["a", "b"]
    assert (listed["a"].model, listed["a"].domain, listed["a"].worker) == ("lrauv", "underwater", "worker_0")
    assert (listed["b"].model, listed["b"].domain) == ("wamv", "surface")
    a = listed["a"].pose.position
    assert (a.x, a.y, a.z) == pytest.approx((0.0, 0.0, -10.0), abs=1e-6)
    assert _listed(client, "worker_0").keys() == {"a", "b"} and _listed(client, "no_such_worker") == {}

    moved = client.move([_at("a", "", (100, 50, -20), yaw_deg=90.0)])
    assert moved.succeeded == 1, moved.results[0].reason
    a = _listed(client)["a"].pose
    assert (a.position.x, a.position.y, a.position.z) == pytest.approx((100.0, 50.0, -20.0), abs=1e-6)
    assert (a.orientation.z, a.orientation.w) == pytest.approx((math.sqrt(0.5), math.sqrt(0.5)), abs=1e-6)

    deleted = client.delete(["b", "ghost"])
    assert [r.code for r in deleted.results] == [ItemResult.OK, ItemResult.UNKNOWN_VESSEL]
    assert deleted.succeeded == 1 and deleted.failed == 1 and deleted.results[1].reason
    assert sorted(_listed(client)) == ["a"] == list(sim.worker.fleet.names)

    models = client.list_models()
    assert all(isinstance(m, ModelInfo) and m.description for m in models)
    domains = {m.name: m.domain for m in models}
    assert domains["lrauv"] == "underwater" and domains["wamv"] == "surface"


def test_a_lost_goal_answer_is_asked_again_and_the_goal_runs_once(sim, client):
    """The first copy of the goal reaches the server but its acceptance never reaches the caller: the goal is
    sent again under the same id, the copy is refused, and the result is fetched by id (one vessel, no duplicate)."""
    send, goal_ids = client.action.send_goal_async, []

    def lossy(goal, feedback_callback=None, goal_uuid=None):
        goal_ids.append(bytes(goal_uuid.uuid))
        future = send(goal, feedback_callback=feedback_callback, goal_uuid=goal_uuid)
        return Future() if len(goal_ids) == 1 else future

    client.action.send_goal_async = lossy
    result = client.create([_at("a", "lrauv", (0, 0, -10))], answer_s=0.5)
    assert len(goal_ids) == 2 and goal_ids[0] == goal_ids[1]
    assert [r.code for r in result.results] == [ItemResult.OK], [r.reason for r in result.results]
    assert list(sim.worker.fleet.names) == ["a"] and [e.name for e in sim.mas.registry.entries()] == ["a"]


def test_a_lost_listing_answer_is_asked_again(sim, client, monkeypatch):
    assert client.create([_at("a", "lrauv", (0, 0, -10))]).succeeded == 1
    create_client, sent = sim.client.create_client, []

    def lossy_create_client(srv_type, name, *args, **kwargs):
        service = create_client(srv_type, name, *args, **kwargs)
        if name == LIST_VESSELS:
            sent.append(lose_first_answer(service))
        return service

    monkeypatch.setattr(sim.client, "create_client", lossy_create_client)
    assert sorted(_listed(client)) == ["a"]
    assert len(sent) == 1 and len(sent[0]) == 2  # asked twice; the second answer came back


def test_timeouts_say_what_did_not_answer(ros_context):
    """No MAS server: each wait ends after its limit with the name of what did not answer and the caller's hint;
    a `check` that raises (Ctrl-C in `lotusim run`) ends a wait at once."""
    node = rclpy.create_node("lonely_client", context=ros_context)
    executor = make_executor(ros_context)
    executor.add_node(node)
    try:
        client = FleetClient(node, executor, hint=HINT)
        start = time.monotonic()
        with pytest.raises(TimeoutError) as raised:
            client.wait_for_server(0.5)
        assert 0.5 <= time.monotonic() - start < 5.0
        assert str(raised.value) == f"the MAS server (/lotusim/fleet_command): no answer within 0.5 s ({HINT})"
        with pytest.raises(TimeoutError) as raised:
            client.list_vessels(wait_s=0.5)
        assert str(raised.value) == f"/lotusim/list_vessels: no answer within 0.5 s ({HINT})"
        with pytest.raises(TimeoutError, match=r"^lotusim run: the MAS server did not come up within 0.2 s$"):
            FleetClient(node, executor).wait_for_server(0.2, what="lotusim run: the MAS server did not come up")

        def stop() -> None:
            raise KeyboardInterrupt

        start = time.monotonic()
        with pytest.raises(KeyboardInterrupt):
            FleetClient(node, executor, check=stop).wait_for_server(30.0)
        assert time.monotonic() - start < 5.0
    finally:
        executor.shutdown()
        node.destroy_node()
