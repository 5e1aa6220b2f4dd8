"""A dynamics worker's sim-time endpoints (ROS wiring beside lotusim_physics.dynamics_node).

A follower (not the clock master) steps to the master's /clock (lotusim_physics.pacing.follower_steps). The clock
master serves the lockstep requests, /lotusim/step (lotusim_interfaces/Step: N steps, reply when done) and the
/lotusim/step_for action (N steps in chunks with feedback, cancellable: pacing.step_in_chunks); both are cut at
`run_until_s` (lotusim_physics.run_limit), and outside lockstep mode the service refuses with the reason and the
action rejects its goals. A restarted master takes up the sim time where it was (docs/simulation.md, supervision
and failover): from the other workers' /lotusim/stats, or from the MAS server's latched /lotusim/resume_clock
(pacing.Pacer.take_up_steps). A realtime or scaled master waits for the hosts that answer every fleet state
(ControllerWait: pacing.ControlLag; docs/simulation.md, 'Waiting for the controllers'). Interfaces:
docs/interfaces.md, 'Services and actions'.
"""

from __future__ import annotations

import time

from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.node import Node
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState

from lotusim_core.ros.qos import LATCHED
from lotusim_interfaces.action import StepFor
from lotusim_interfaces.msg import SimStats
from lotusim_interfaces.srv import Step
from lotusim_physics import pacing
from lotusim_physics.dynamics_node_outputs import stamp_from_ns

NS_PER_S = 1_000_000_000
HELD_LOG_S = 0.2  # a wait for a controller host longer than this (wall s) is logged (at most every 10 s)


def step_refusal(mode: str, worker: str) -> str:
    """Why worker `worker` in mode `mode` refuses /lotusim/step; "" in lockstep mode."""
    if mode == "lockstep":
        return ""
    return f"worker {worker} runs in {mode} mode; /lotusim/step needs mode lockstep"


def step_for_ending(outcome: str, held_reason: str) -> tuple[str, bool, str]:
    """(goal handle method, success, message) that ends a /lotusim/step_for goal whose steps ended with `outcome`
    of pacing.step_in_chunks ("done", "canceled" or "held"; held: the message is `held_reason`)."""
    return {
        "done": ("succeed", True, ""),
        "canceled": ("canceled", False, "canceled"),
        "held": ("abort", False, held_reason),
    }[outcome]


def clock_ns(msg: Clock) -> int:
    """The sim time of a rosgraph_msgs/Clock, ns."""
    return msg.clock.sec * NS_PER_S + msg.clock.nanosec


class SimTimeEndpoints:
    """The sim-time endpoints of a DynamicsWorker `node`: uses its worker name, mode, step_ns, advance(),
    run_limit, pacer, core (lotusim_physics.worker.FleetWorker) and logger."""

    def __init__(self, node: Node) -> None:
        self.node = node

    def serve(self, clock_master: bool) -> None:
        """Create the follower's /clock subscription, or the clock master's services, action and subscriptions."""
        node = self.node
        if not clock_master:
            node.create_subscription(Clock, "/clock", self.on_clock, 10)
            return
        node.create_service(Step, "/lotusim/step", self.on_step)
        accept = GoalResponse.ACCEPT if node.mode == "lockstep" else GoalResponse.REJECT
        self.step_for = ActionServer(
            node,
            StepFor,
            "/lotusim/step_for",
            execute_callback=self.execute_step_for,
            goal_callback=lambda _goal: accept,
            cancel_callback=lambda _goal: CancelResponse.ACCEPT,
        )
        node.create_subscription(SimStats, "/lotusim/stats", self.on_stats_of_others, 10)
        node.create_subscription(Clock, "/lotusim/resume_clock", self.on_resume_clock, LATCHED)

    # --- follower -------------------------------------------------------------------------------------------
    def on_clock(self, msg: Clock) -> None:
        """Follower worker: integrate until our sim time reaches the master's clock."""
        node = self.node
        has_vessels = bool(node.core.fleet.names)
        skipped, steps = pacing.follower_steps(clock_ns(msg), node.core.sim_time_ns, node.step_ns, has_vessels)
        node.core.iteration += skipped
        if steps > 0:
            node.advance(steps)

    # --- clock master: lockstep -----------------------------------------------------------------------------
    def on_step(self, request: Step.Request, response: Step.Response) -> Step.Response:
        """/lotusim/step: advance request.steps steps; success only if all were done (not held)."""
        node = self.node
        response.message = step_refusal(node.mode, node.worker)
        if not response.message:
            requested = int(request.steps)
            response.success = node.advance(requested) == requested
            response.message = "" if response.success else node.run_limit.describe()
        response.sim_time, response.iteration = stamp_from_ns(node.core.sim_time_ns), node.core.iteration
        return response

    def execute_step_for(self, goal_handle) -> StepFor.Result:
        """/lotusim/step_for: the goal's steps in chunks, with feedback after each, until done, held or cancelled."""
        node, feedback = self.node, StepFor.Feedback()

        def progress(done: int) -> None:
            feedback.steps_done, feedback.sim_time = done, stamp_from_ns(node.core.sim_time_ns)
            goal_handle.publish_feedback(feedback)

        cancelled = lambda: goal_handle.is_cancel_requested  # noqa: E731
        done, outcome = pacing.step_in_chunks(int(goal_handle.request.steps), node.advance, cancelled, progress)
        end, success, message = step_for_ending(outcome, node.run_limit.describe())
        getattr(goal_handle, end)()
        sim_time = stamp_from_ns(node.core.sim_time_ns)
        return StepFor.Result(success=success, message=message, steps_done=done, sim_time=sim_time)

    # --- clock master: taking up sim time after a restart ---------------------------------------------------
    def on_stats_of_others(self, msg: SimStats) -> None:
        """A follower ahead means this master was restarted while the followers ran on."""
        if msg.worker != self.node.worker:
            self.take_up_time(round(msg.sim_time_s * 1e9), f"worker {msg.worker}")

    def on_resume_clock(self, msg: Clock) -> None:
        """The sim time the MAS server last saw, sent when this worker was restarted."""
        self.take_up_time(clock_ns(msg), "the MAS server")

    def take_up_time(self, t_ns: int, source: str) -> None:
        """Jump (without integrating) to sim time `t_ns` seen by `source` if pacing.Pacer.take_up_steps says so."""
        node = self.node
        if steps := node.pacer.take_up_steps(t_ns, node.core.sim_time_ns, node.step_ns):
            node.core.iteration += steps
            node.controller_wait.lag.forget()
            node.get_logger().warning(f"sim time taken up from {source}: {node.core.sim_time_ns * 1e-9:.3f} s")


class ControllerWait:
    """A realtime or scaled clock master's wait for the controller hosts that answer every fleet state: their
    answers on /lotusim/thruster_commands name them in frame_id (on_commands), and a step is allowed while the sim
    time stays within max_control_lag_s of each one's latest (allows); waits and hosts given up are logged. Other
    modes and followers never wait (`active` False)."""

    def __init__(self, node: Node, max_lag_s: float, active: bool) -> None:
        self.node, self.active, self.max_lag_s = node, active, max_lag_s
        self.lag = pacing.ControlLag(int(round(max_lag_s * 1e9)))

    def on_commands(self, msg: JointState) -> None:
        """An answer of a host (frame_id: its name; stamp: the fleet state it answers)."""
        if msg.header.frame_id and self.active:
            stamp_ns = msg.header.stamp.sec * NS_PER_S + msg.header.stamp.nanosec
            self.lag.heard(msg.header.frame_id, stamp_ns, len(msg.name), time.monotonic())

    def allows(self, sim_ns: int, step_ns: int, now: float) -> bool:
        """Whether one step may be integrated now (pacing.ControlLag.step_allowed), with the logs."""
        lag, log = self.lag, self.node.get_logger()
        ok = lag.step_allowed(sim_ns, step_ns, now)
        for host in lag.given_up:
            log.warning(f"{host}: no answer for {lag.silent_s:g} s; the sim time no longer waits for it")
        lag.given_up.clear()
        if lag.last_wait_s > HELD_LOG_S:
            log.info(
                f"sim time held {lag.last_wait_s:.2f} s for a controller host behind it ({lag.held_s:.2f} s in all; "
                f"max_control_lag_s {self.max_lag_s:g})",
                throttle_duration_sec=10.0,
            )
        return ok

    def report(self) -> None:
        """Log the wall time waited in all, if any (at the end)."""
        if self.lag.held_s > 0.0:
            self.node.get_logger().info(
                f"the sim time waited {self.lag.held_s:.2f} s of wall time in all for controller hosts"
            )
