"""The dynamics node's parts without DDS: its vessels' topics (lotusim_physics.dynamics_node_vessels), its sim-time
endpoints (lotusim_physics.dynamics_node_clock) and its checkpoint answer (lotusim_physics.checkpoint.serve under
checkpoint_store.answered), each driven through a stand-in node that records the endpoints it is asked for. Topic
names are those of docs/interfaces.md with the LRAUV's actuators as its vehicle file names them (propeller;
rudder, elevator)."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
from geometry_msgs.msg import Wrench
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64

from lotusim_core.base.checkpoint_store import answered
from lotusim_core.ros.endpoints import QUIET_PUBLISHER, QUIET_SUBSCRIPTION
from lotusim_interfaces.msg import SimStats
from lotusim_interfaces.srv import Step
from lotusim_physics import checkpoint as ckpt
from lotusim_physics import layout as L
from lotusim_physics.dynamics_node_clock import SimTimeEndpoints, step_for_ending, step_refusal
from lotusim_physics.dynamics_node_vessels import VesselEndpoints, actuator_topics
from lotusim_physics.endpoint_queue import EndpointQueue
from lotusim_physics.pacing import ControlLag, Pacer
from lotusim_physics.worker import CREATE, FleetWorker
from lotusim_physics.worker_settings import PARAMETERS, WorkerSettings
from simnodes import create_item

LRAUV_TOPICS = ["thrusters/propeller/cmd", "fins/rudder/cmd", "fins/elevator/cmd", "cmd_wrench"]


class Log:
    def __init__(self) -> None:
        self.lines: list[tuple[str, str]] = []

    def warning(self, text: str) -> None:
        self.lines.append(("warning", text))


class StandInNode:
    """The parts of rclpy's Node the endpoint classes use, recording what they create and destroy."""

    def __init__(self, core) -> None:
        self.core, self.log, self.created, self.destroyed = core, Log(), [], []
        self.odom_ready: list[tuple[str, object]] = []
        self.forgotten: list[str] = []
        self.outputs = SimpleNamespace(odom_ready=lambda n, s: self.odom_ready.append((n, s)),
                                       forget=self.forgotten.append)  # fmt: skip

    def get_logger(self) -> Log:
        return self.log

    def create_subscription(self, kind, topic, callback, depth, event_callbacks=None):
        endpoint = SimpleNamespace(role="sub", kind=kind, topic=topic, callback=callback, depth=depth,
                                   events=event_callbacks)  # fmt: skip
        self.created.append(endpoint)
        return endpoint

    def create_publisher(self, kind, topic, depth, event_callbacks=None):
        sent: list = []
        endpoint = SimpleNamespace(role="pub", kind=kind, topic=topic, depth=depth, events=event_callbacks,
                                   publish=sent.append, sent=sent)  # fmt: skip
        self.created.append(endpoint)
        return endpoint

    def destroy_subscription(self, endpoint) -> None:
        self.destroyed.append(("sub", endpoint.topic))

    def destroy_publisher(self, endpoint) -> None:
        self.destroyed.append(("pub", endpoint.topic))


def _worker(*names: str) -> FleetWorker:
    settings = WorkerSettings.from_parameters({**PARAMETERS, "mode": "lockstep"})
    worker = FleetWorker("worker_0", settings)
    worker.run_commands([(CREATE, create_item(n, "lrauv", (0.0, 10.0 * i, -5.0)).vessel) for i, n in enumerate(names)])
    return worker


def _float(value: float) -> Float64:
    return Float64(data=value)


def _vessels(*names: str) -> tuple[StandInNode, VesselEndpoints]:
    node = StandInNode(_worker(*names))
    endpoints = VesselEndpoints(node)
    for name in names:
        endpoints.added(name)
    return node, endpoints


# --- the vessels' topics ------------------------------------------------------------------------------------
def test_actuator_topics_are_named_after_the_vehicle_file_s_actuators():
    spec = SimpleNamespace(thrusters=(SimpleNamespace(name="propeller"),),
                           fins=(SimpleNamespace(name="rudder"), SimpleNamespace(name="elevator")))  # fmt: skip
    assert actuator_topics(spec) == [
        ("thruster", 0, "thrusters/propeller/cmd"), ("fin", 0, "fins/rudder/cmd"), ("fin", 1, "fins/elevator/cmd")
    ]  # fmt: skip


def test_a_new_vessel_gets_relative_quiet_topics_of_depth_10_and_its_odometry_goes_out():
    node, endpoints = _vessels("a")
    assert node.created == [] and list(endpoints.queue.pending) == ["a"]  # nothing made before the timer's call
    endpoints.work(budget_s=10.0)
    subs = [e for e in node.created if e.role == "sub"]
    assert [e.topic for e in subs] == [f"a/{t}" for t in LRAUV_TOPICS]
    assert [e.kind for e in subs] == [Float64, Float64, Float64, Wrench]
    assert all(e.depth == 10 and e.events is QUIET_SUBSCRIPTION for e in subs)
    (odom,) = [e for e in node.created if e.role == "pub"]
    assert (odom.topic, odom.depth, odom.events) == ("a/odom", 10, QUIET_PUBLISHER)
    assert endpoints.topics["a"].odom_pub is odom and endpoints.odom_send_of("a") is endpoints.topics["a"].odom_send
    ((name, send),) = node.odom_ready
    send(b"row")  # the raw publish function falls back to the publisher's publish
    assert name == "a" and odom.sent == [b"row"] and not endpoints.queue.pending


def test_commands_reach_the_vessel_and_a_non_finite_one_is_logged_and_not_held():
    node, endpoints = _vessels("a")
    endpoints.work(budget_s=10.0)
    on = {e.topic: e.callback for e in node.created if e.role == "sub"}
    on["a/thrusters/propeller/cmd"](_float(25.0))
    on["a/fins/elevator/cmd"](_float(0.1))
    on["a/thrusters/propeller/cmd"](_float(math.nan))
    assert node.core.vessels["a"].thruster_cmd.tolist() == [25.0] and node.core.vessels["a"].fin_cmd.tolist() == [
        0.0, 0.1
    ]  # fmt: skip
    assert len(node.log.lines) == 1 and "rejected" in node.log.lines[0][1]
    wrench = Wrench()
    wrench.force.x, wrench.force.y, wrench.torque.z = 1.0, 2.0, 3.0
    on["a/cmd_wrench"](wrench)
    held = node.core.fleet.state_arrays()["xs"][0, L.X_WRENCH : L.X_WRENCH + 6]
    np.testing.assert_array_equal(held, [1.0, -2.0, 0.0, 0.0, 0.0, -3.0])  # FLU -> FRD: y and z change sign


def test_a_batch_of_thruster_commands_is_held_per_vessel():
    node, endpoints = _vessels("a", "b")
    endpoints.on_thruster_batch(JointState(name=["b/propeller", "a/propeller"], velocity=[7.0, 3.0]))
    assert [node.core.vessels[n].thruster_cmd.tolist() for n in ("a", "b")] == [[3.0], [7.0]]
    endpoints.on_thruster_batch(JointState(name=["a/propeller"], velocity=[math.inf]))
    assert node.core.vessels["a"].thruster_cmd.tolist() == [3.0] and len(node.log.lines) == 1


def test_a_deleted_vessel_s_topics_are_destroyed_later_and_its_old_subscriptions_go_deaf():
    node, endpoints = _vessels("a")
    endpoints.work(budget_s=10.0)
    old = {e.topic: e.callback for e in node.created if e.role == "sub"}
    endpoints.removed("a")
    assert node.forgotten == ["a"] and node.destroyed == [] and "a" not in endpoints.topics
    old["a/thrusters/propeller/cmd"](_float(9.0))  # arrives before the endpoint is gone: dropped, no error
    endpoints.added("a")  # created again under its name (the FleetWorker still holds the vessel)
    endpoints.work(budget_s=10.0)
    # destroyed last first (the odometry publisher, the wrench, the fins, the thruster), then the new ones made
    assert node.destroyed == [("pub", "a/odom")] + [("sub", f"a/{t}") for t in reversed(LRAUV_TOPICS)]
    old["a/thrusters/propeller/cmd"](_float(9.0))
    assert node.core.vessels["a"].thruster_cmd.tolist() == [0.0]  # the old topic's message is not the new vessel's
    new = {e.topic: e.callback for e in node.created[len(old) + 1 :] if e.role == "sub"}
    new["a/thrusters/propeller/cmd"](_float(9.0))
    assert node.core.vessels["a"].thruster_cmd.tolist() == [9.0]


def test_a_vessel_deleted_before_its_topics_exist_gets_none():
    node, endpoints = _vessels("a", "b")
    endpoints.removed("a")
    endpoints.work(budget_s=10.0)
    assert node.destroyed == [] and {e.topic.split("/")[0] for e in node.created} == {"b"}


def test_topics_are_made_within_the_budget_one_vessel_at_a_time():
    node = StandInNode(_worker("a", "b", "c"))
    endpoints = VesselEndpoints(node)
    endpoints.queue = EndpointQueue(clock=iter([0.0, 0.0, 1.0]).__next__)  # 1 s passes while "a" is made
    for name in ("a", "b", "c"):
        endpoints.added(name)
    endpoints.work(budget_s=0.5)
    assert {e.topic.split("/")[0] for e in node.created} == {"a"} and list(endpoints.queue.pending) == ["b", "c"]


# --- sim time -----------------------------------------------------------------------------------------------
class Core:
    """The FleetWorker's sim-time fields: iteration, step_ns, sim_time_ns and a fleet's names."""

    def __init__(self, step_ns: int, names: list[str]) -> None:
        self.iteration, self.step_ns, self.fleet = 0, step_ns, SimpleNamespace(names=names)

    @property
    def sim_time_ns(self) -> int:
        return self.iteration * self.step_ns


def _clock_node(mode: str = "lockstep", names=("a",), held_after: int | None = None):
    """A stand-in worker at 20 ms steps whose advance(n) integrates n steps, or up to iteration `held_after`."""
    core = Core(20_000_000, list(names))
    asked: list[int] = []

    def advance(steps: int) -> int:
        asked.append(steps)
        done = steps if held_after is None else max(0, min(steps, held_after - core.iteration))
        core.iteration += done
        return done

    pacer = Pacer(0.02, 1.0, clock=lambda: 0.0, timer=lambda: 0.0)  # wall time stands still: a fresh restart
    node = SimpleNamespace(mode=mode, worker="worker_0", step_ns=core.step_ns, core=core, advance=advance,
                           asked=asked, run_limit=SimpleNamespace(describe=lambda: "held at run_until_s 1.0 s"),
                           pacer=pacer, log=Log(),
                           controller_wait=SimpleNamespace(lag=ControlLag(50_000_000)))  # fmt: skip
    node.get_logger = lambda: node.log
    return node


def _clock_msg(t_ns: int) -> Clock:
    msg = Clock()
    msg.clock.sec, msg.clock.nanosec = divmod(t_ns, 1_000_000_000)
    return msg


def test_a_follower_steps_to_the_master_s_clock_and_an_empty_one_skips_to_it():
    node = _clock_node(names=("a",))
    SimTimeEndpoints(node).on_clock(_clock_msg(200_000_000))  # 0.2 s = 10 steps of 20 ms, all integrated
    assert node.asked == [10] and node.core.iteration == 10
    empty = _clock_node(names=())
    SimTimeEndpoints(empty).on_clock(_clock_msg(200_000_000))  # nothing to integrate: 9 skipped, the last stepped
    assert empty.asked == [1] and empty.core.iteration == 10


def test_step_is_refused_outside_lockstep_and_says_where_it_is_held():
    assert step_refusal("lockstep", "w") == ""
    assert step_refusal("fast", "w") == "worker w runs in fast mode; /lotusim/step needs mode lockstep"
    fast = _clock_node(mode="fast")
    reply = SimTimeEndpoints(fast).on_step(Step.Request(steps=5), Step.Response())
    assert not reply.success and "fast mode" in reply.message and fast.asked == [] and reply.iteration == 0
    node = _clock_node(held_after=30)
    ok = SimTimeEndpoints(node).on_step(Step.Request(steps=25), Step.Response())
    assert ok.success and ok.message == "" and ok.iteration == 25
    assert (ok.sim_time.sec, ok.sim_time.nanosec) == (0, 500_000_000)  # 25 x 20 ms
    held = SimTimeEndpoints(node).on_step(Step.Request(steps=25), Step.Response())
    assert not held.success and held.message == "held at run_until_s 1.0 s" and held.iteration == 30


class GoalHandle:
    def __init__(self, steps: int, cancel_after_feedbacks: int | None = None) -> None:
        self.request, self.feedback, self.ended = SimpleNamespace(steps=steps), [], []
        self._cancel_after = cancel_after_feedbacks

    @property
    def is_cancel_requested(self) -> bool:
        return self._cancel_after is not None and len(self.feedback) >= self._cancel_after

    def publish_feedback(self, feedback) -> None:
        self.feedback.append((feedback.steps_done, feedback.sim_time.sec, feedback.sim_time.nanosec))

    def succeed(self) -> None:
        self.ended.append("succeed")

    def canceled(self) -> None:
        self.ended.append("canceled")

    def abort(self) -> None:
        self.ended.append("abort")


def test_step_for_goes_in_chunks_with_feedback_and_ends_done_cancelled_or_held():
    assert step_for_ending("done", "x") == ("succeed", True, "")
    assert step_for_ending("canceled", "x") == ("canceled", False, "canceled")
    assert step_for_ending("held", "why") == ("abort", False, "why")
    node, goal = _clock_node(), GoalHandle(250)
    result = SimTimeEndpoints(node).execute_step_for(goal)
    assert node.asked == [100, 100, 50] and goal.feedback == [(100, 2, 0), (200, 4, 0), (250, 5, 0)]
    assert goal.ended == ["succeed"] and result.success and result.steps_done == 250 and result.sim_time.sec == 5
    node, goal = _clock_node(), GoalHandle(250, cancel_after_feedbacks=1)
    result = SimTimeEndpoints(node).execute_step_for(goal)
    assert goal.ended == ["canceled"] and (result.success, result.message, result.steps_done) == (
        False,
        "canceled",
        100,
    )
    node, goal = _clock_node(held_after=130), GoalHandle(250)
    result = SimTimeEndpoints(node).execute_step_for(goal)
    assert goal.ended == ["abort"] and result.message == "held at run_until_s 1.0 s" and result.steps_done == 130


def test_a_restarted_master_takes_up_the_time_others_saw_but_not_its_own():
    node = _clock_node()
    endpoints = SimTimeEndpoints(node)
    endpoints.on_stats_of_others(SimStats(worker="worker_0", sim_time_s=50.0))  # its own stats: ignored
    assert node.core.iteration == 0 and node.log.lines == []
    node.controller_wait.lag.heard("/drones", 0, 8, now_s=0.0)  # a drones' host answered the state at 0 s
    endpoints.on_stats_of_others(SimStats(worker="worker_1", sim_time_s=50.0))  # 50 s / 20 ms = 2,500 steps
    assert node.core.iteration == 2500 and node.asked == []  # jumped to, not integrated
    assert node.controller_wait.lag.allowed(50 * 10**9, 20_000_000, 5, now_s=0.1) == 5  # that answer is forgotten
    assert node.log.lines == [("warning", "sim time taken up from worker worker_1: 50.000 s")]
    endpoints.on_resume_clock(_clock_msg(60_000_000_000))
    assert node.core.iteration == 3000 and node.log.lines[-1][1] == "sim time taken up from the MAS server: 60.000 s"
    endpoints.on_resume_clock(_clock_msg(60_500_000_000))  # less than 1 s ahead: kept
    assert node.core.iteration == 3000


# --- checkpoint answer --------------------------------------------------------------------------------------
def test_a_checkpoint_request_is_answered_never_raised(tmp_path):
    def answer(*request) -> tuple[bool, str, str]:  # as the node answers its service
        return answered(lambda: ckpt.serve(*request))

    def boom() -> tuple[dict, dict]:
        raise RuntimeError("disk on fire")

    def swap_in(_state) -> None:
        raise AssertionError("not reached")

    worker = _worker("a")
    where = (str(tmp_path), 0, "cp", "worker_0", worker.step_ns)
    assert answer(*where, boom, swap_in) == (False, "", "RuntimeError: disk on fire")
    bad_op = answer(str(tmp_path), 7, "cp", "worker_0", worker.step_ns, boom, swap_in)
    assert bad_op == (False, "", "request: operation: 7 is not SAVE (0), RESTORE (1) or CHECK (3)")
    bad_name = answer(str(tmp_path), 0, "../x", "worker_0", worker.step_ns, boom, swap_in)
    assert not bad_name[0] and bad_name[1] == "" and not bad_name[2].startswith("CheckpointError")  # file: key: why
    success, digest, message = answer(*where, worker.checkpoint, swap_in)
    assert success and message == "" and len(digest) == 64 and int(digest, 16) >= 0  # the manifest's SHA-256
