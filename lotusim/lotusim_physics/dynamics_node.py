"""dynamics node: one fleet integrator worker, ROS wiring only. Its vessels, their commands and checkpoints are
lotusim_physics.worker.FleetWorker; the pacing of the modes lotusim_physics.pacing; the parameters
lotusim_physics.worker_settings; its publications (clock, fleet state, odometry, /tf, stats)
lotusim_physics.dynamics_node_outputs; its vessels' topics come and go by lotusim_physics.endpoint_queue.

It serves /lotusim/<worker>/command (vessels created, deleted and moved by the MAS server), list_vessels and
checkpoint, and as clock master /lotusim/step and the /lotusim/step_for action (lockstep mode). It latches its
roster (lotusim_physics.fleet_roster) on /lotusim/fleet_roster at start and whenever its vessels change (create,
delete, restore). It subscribes per vessel to `<vessel>/thrusters/<thruster>/cmd`, `<vessel>/fins/<fin>/cmd`
(std_msgs/Float64; actuator names from the vehicle file) and `<vessel>/cmd_wrench` (geometry_msgs/Wrench, body
FLU), and to /lotusim/thruster_commands (sensor_msgs/JointState: many vessels' thruster commands in one message,
lotusim_physics.thruster_batch; what the controller hosts send for their drones); non-finite commands are
rejected and logged, the vessel keeps its last valid command. Per-vessel names are relative (in the node's
namespace), fleet-wide ones absolute (lotusim_core.ros.ros_names). In every mode, the parameter `run_until_s` holds
the worker at the first step at or after that sim time (lotusim_physics.run_limit).
Interfaces: docs/interfaces.md.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial

import numpy as np
from geometry_msgs.msg import Wrench
from nav_msgs.msg import Odometry
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.node import Node
from rclpy.subscription import Subscription
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64
from tf2_msgs.msg import TFMessage

from lotusim_core.ros import static_frames
from lotusim_core.ros.endpoints import QUIET_PUBLISHER, QUIET_SUBSCRIPTION
from lotusim_core.ros.node_runner import run_node_main
from lotusim_core.ros.prepacked import raw_publish
from lotusim_core.ros.qos import LATCHED
from lotusim_interfaces.action import StepFor
from lotusim_interfaces.msg import Collision, EnvironmentConfig, FleetRoster, FleetState, SimStats
from lotusim_interfaces.msg import FleetCommandItem as Item
from lotusim_interfaces.srv import Checkpoint, ListVessels, Step, WorkerCommand
from lotusim_physics import checkpoint as worker_checkpoint
from lotusim_physics import dynamics_node_outputs as out
from lotusim_physics import pacing
from lotusim_physics.endpoint_queue import EndpointQueue
from lotusim_physics.fleet_roster import RosterRevisions, roster_of
from lotusim_physics.run_limit import RateParameter, RunLimit
from lotusim_physics.thruster_batch import ThrusterCommandBatch
from lotusim_physics.worker import CREATE, DELETE, MOVE, FleetWorker
from lotusim_physics.worker_settings import PARAMETERS, WorkerSettings

ENDPOINT_BUDGET_S = 0.005  # wall time per tick for creating new vessels' topics
COMMANDS = {Item.CREATE: CREATE, Item.DELETE: DELETE, Item.MOVE: MOVE}


@dataclass
class VesselTopics:
    """A vessel's ROS endpoints: its command subscriptions and its odometry publisher (None until created)."""

    subscriptions: list = field(default_factory=list)
    odom_pub: object = None
    odom_send: object = None  # odom_pub's raw publish function (lotusim_core.ros.prepacked.raw_publish)


class DynamicsWorker(Node):
    """ROS wiring of one FleetWorker: commands in, clock / fleet state / odometry / stats out."""

    def __init__(self, **node_kwargs) -> None:
        worker = node_kwargs.pop("worker", None)
        super().__init__(node_kwargs.pop("node_name", "dynamics"), **node_kwargs)
        self.worker = worker or self.declare_parameter("worker", "worker_0").value
        values = {name: self.declare_parameter(name, default).value for name, default in PARAMETERS.items()}
        s = self.settings = WorkerSettings.from_parameters(values)
        self.mode, self.step_ns, self.core = s.mode, s.step_ns, FleetWorker(self.worker, s)
        self.run_limit = RunLimit(self, self.step_ns)  # parameters run_until_s, paused: hold at that sim time
        RateParameter(self)  # real_time_factor set at run time
        for name in s.too_fast():
            self.get_logger().warning(f"{name}: faster than the physics step; published after every step")
        self.topics: dict[str, VesselTopics] = {}
        self.endpoint_queue = EndpointQueue()  # the vessels' topics, made and destroyed in the background
        self._create_publishers(s)
        self._create_services(s)
        self.pacer = pacing.Pacer(s.step_s, s.stats_rate_hz)
        self._create_timers(s)
        self._publish_roster()
        self.get_logger().info(
            f"worker {self.worker}: mode {s.mode}, step {s.step_s} s, RTF target {s.rtf_target}, "
            f"integrator {s.integrator}, clock master {s.clock_master}"
        )

    def _create_publishers(self, s: WorkerSettings) -> None:
        self._clock_pub = self.create_publisher(Clock, "/clock", 10) if s.clock_master else None
        self._state_pub = self.create_publisher(FleetState, "/lotusim/fleet_state", 10)
        self._tf_pub = self.create_publisher(TFMessage, "/tf", 100) if s.publish_tf else None  # tf2's depth
        if s.publish_tf and s.clock_master:  # REP 105: map -> odom, identity (ground truth does not drift)
            self._static_pub = static_frames.publish_once(self, [static_frames.map_to_odom()])
        send_clock, send_tf = (raw_publish(p) if p is not None else None for p in (self._clock_pub, self._tf_pub))
        send_state = raw_publish(self._state_pub)
        self.outputs = out.FleetOutputs(self.core, send_clock, send_state, send_tf, self._odom_send_of)
        self._stats_pub = self.create_publisher(SimStats, "/lotusim/stats", 10)
        self._roster_pub = self.create_publisher(FleetRoster, "/lotusim/fleet_roster", LATCHED)
        self._collision_pub = self.create_publisher(Collision, "/lotusim/collisions", 100)
        self._roster_revisions = RosterRevisions()

    def _create_services(self, s: WorkerSettings) -> None:
        """The worker's services, and the subscriptions that are not per vessel."""
        self.create_subscription(EnvironmentConfig, "/lotusim/environment", self._on_environment, LATCHED)
        self._thruster_batch = ThrusterCommandBatch(self.core)  # many vessels' thruster commands in one message
        self.create_subscription(JointState, "/lotusim/thruster_commands", self._on_thruster_batch, 10)
        prefix = f"/lotusim/{self.worker}"
        self.create_service(WorkerCommand, f"{prefix}/command", self._on_command)
        self.create_service(ListVessels, f"{prefix}/list_vessels", self._on_list)
        self.create_service(Checkpoint, f"{prefix}/checkpoint", self._on_checkpoint)
        if not s.clock_master:
            self.create_subscription(Clock, "/clock", self._on_clock, 10)
            return
        self.create_service(Step, "/lotusim/step", self._on_step)
        accept = GoalResponse.ACCEPT if s.mode == "lockstep" else GoalResponse.REJECT
        ActionServer(
            self,
            StepFor,
            "/lotusim/step_for",
            execute_callback=self._execute_step_for,
            goal_callback=lambda _goal: accept,
            cancel_callback=lambda _goal: CancelResponse.ACCEPT,
        )
        # a restarted master takes up sim time where it was (docs/simulation.md, supervision and failover)
        self.create_subscription(SimStats, "/lotusim/stats", self._on_stats_of_others, 10)
        self.create_subscription(Clock, "/lotusim/resume_clock", self._on_resume_clock, LATCHED)

    def _create_timers(self, s: WorkerSettings) -> None:
        """The tick of the mode (lotusim_physics.pacing.tick_of), the statistics and the vessels' topics."""
        tick = pacing.tick_of(s.mode, s.clock_master, s.step_s, s.rtf_target)
        if tick is not None:
            self._timer = self.create_timer(tick[1], self._on_fast_tick if tick[0] == "fast" else self._on_tick)
        # a timer for idle times (lockstep), and a check after each batch of steps: a busy fast-mode worker
        # keeps the events executor's queue full and would starve the timer
        self.create_timer(1.0 / s.stats_rate_hz, self._maybe_publish_stats)
        if tick is None or tick[0] != "fast":  # the fast tick creates them itself, within its period
            self.create_timer(0.02, lambda: self._create_pending_endpoints())  # (rclpy would pass a TimerInfo)

    fleet = property(lambda self: self.core.fleet, doc="the worker's lotusim_physics.fleet.Fleet")
    vessels = property(lambda self: self.core.vessels, doc="name -> lotusim_physics.worker.VesselEntry")
    iteration = property(lambda self: self.core.iteration, doc="steps integrated (sim time / step)")
    sim_time_ns = property(lambda self: self.core.sim_time_ns)
    environment_yaml = property(lambda self: self.core.environment.config_yaml)
    environment_revision = property(lambda self: self.core.environment.revision)

    # --- pacing (lotusim_physics.pacing) --------------------------------------------------------------------
    def _on_tick(self) -> None:
        self.advance(1)

    def _on_fast_tick(self) -> None:
        # new vessels' topics: up to half of the tick while some are pending (a spawn of 1,000 vessels has 6,000)
        self._create_pending_endpoints(budget_s=pacing.FAST_ENDPOINT_SHARE * self._timer.timer_period_ns * 1e-9)
        self._maybe_publish_stats()
        self.advance(1 << 62, wall_deadline=self.pacer.fast_deadline(self._timer.time_until_next_call() * 1e-9))
        self._fit_fast_period()

    def _fit_fast_period(self) -> None:
        if (period_ns := self.pacer.fast_period_ns(self._timer.timer_period_ns)) is not None:
            self._timer.timer_period_ns = period_ns

    def _on_clock(self, msg: Clock) -> None:
        """Follower worker: integrate until our sim time reaches the master's clock."""
        target_ns = msg.clock.sec * 1_000_000_000 + msg.clock.nanosec
        skipped, steps = pacing.follower_steps(target_ns, self.sim_time_ns, self.step_ns, bool(self.fleet.names))
        self.core.iteration += skipped
        if steps > 0:
            self.advance(steps)

    def _on_stats_of_others(self, msg: SimStats) -> None:
        """Clock master: a follower ahead means this master was restarted while the followers ran on."""
        if msg.worker != self.worker:
            self._take_up_time(round(msg.sim_time_s * 1e9), f"worker {msg.worker}")

    def _on_resume_clock(self, msg: Clock) -> None:
        """Clock master: the sim time the MAS server last saw, sent when this worker was restarted."""
        self._take_up_time(msg.clock.sec * 1_000_000_000 + msg.clock.nanosec, "the MAS server")

    def _take_up_time(self, t_ns: int, source: str) -> None:
        if steps := self.pacer.take_up_steps(t_ns, self.sim_time_ns, self.step_ns):
            self.core.iteration += steps
            self.get_logger().warning(f"sim time taken up from {source}: {self.sim_time_ns * 1e-9:.3f} s")

    def advance(self, steps: int, wall_deadline: float | None = None) -> int:
        """Integrate `steps` fixed steps (fewer if the monotonic wall clock passes `wall_deadline`, or held by
        run_until_s), publishing /clock after each step and the fleet outputs when due; returns the steps done.
        The steps between two publications go to the physics in one call (pacing.Pacer.run)."""
        steps = self.run_limit.allowed(self.core.iteration, steps)
        return self.pacer.run(steps, self.core.steps_to_next_output, self._integrate, wall_deadline)

    def _integrate(self, k: int) -> None:
        """k steps of the physics, their k /clock messages, then the outputs due."""
        first = self.core.iteration
        for fault in self.core.integrate(k):
            self.get_logger().error(f"vessel frozen: {fault}")
        for event in self.core.fleet.take_contact_events():  # aerial vehicles' touchdowns and lift-offs
            self.get_logger().info(str(event))
        for event in self.core.fleet.take_collision_events():  # contacts that began (lotusim_physics.collisions)
            self.get_logger().warning(str(event))
            self._collision_pub.publish(out.collision_message(event, self.worker))
        self.outputs.after_steps(first, k)

    def _maybe_publish_stats(self) -> None:
        if (now := self.pacer.stats_due()) is not None:
            window = self.pacer.close_window(now, self.core.iteration)
            self._stats_pub.publish(out.stats_message(self.core, self.settings, window))

    def _on_environment(self, msg: EnvironmentConfig) -> None:
        try:
            self.core.apply_environment(msg.config_yaml, msg.revision)
        except Exception as exc:  # noqa: BLE001 - a bad configuration must not stop the physics
            self.get_logger().error(f"environment revision {msg.revision} ignored: {exc}")
            return
        self.get_logger().info(f"environment revision {msg.revision} applied")

    # --- the vessels' topics ----------------------------------------------------------------------------------
    def _subscribe_vessel(self, name: str) -> None:
        """Command topics are named after the actuators of the vehicle file (ROS 2 name tokens cannot be bare
        numbers, so `thrusters/<name>/cmd` rather than an index). A message for a vessel deleted since (its
        endpoints live on for a moment), or created again under its name, is dropped."""

        def subscribe(kind, topic: str, handle) -> None:
            live = lambda m: self.topics.get(name) is topics and handle(m)  # noqa: E731
            sub = self.create_subscription(kind, f"{name}/{topic}", live, 10, event_callbacks=QUIET_SUBSCRIPTION)
            topics.subscriptions.append(sub)  # (lotusim_core.ros.endpoints: deleting thousands stays fast)

        topics, spec = self.topics[name], self.fleet.spec(name)
        for kind, actuators in (("thruster", spec.thrusters), ("fin", spec.fins)):
            for i, actuator in enumerate(actuators):
                subscribe(Float64, f"{kind}s/{actuator.name}/cmd", partial(self._on_actuator, name, kind, i))
        subscribe(Wrench, "cmd_wrench", partial(self._on_wrench, name))
        topics.odom_pub = self.create_publisher(Odometry, f"{name}/odom", 10, event_callbacks=QUIET_PUBLISHER)
        topics.odom_send = raw_publish(topics.odom_pub)
        self.outputs.odom_ready(name, topics.odom_send)

    def _on_actuator(self, name: str, kind: str, index: int, msg: Float64) -> None:
        self._warn(self.core.command_actuator(name, kind, index, msg.data))

    def _on_thruster_batch(self, msg: JointState) -> None:
        self._warn(self._thruster_batch.apply(msg.name, msg.velocity))

    def _on_wrench(self, name: str, msg: Wrench) -> None:
        f, t = msg.force, msg.torque
        self._warn(self.core.command_wrench(name, np.array([f.x, f.y, f.z, t.x, t.y, t.z])))

    def _warn(self, problem: str) -> None:
        if problem:
            self.get_logger().warning(problem)

    def _odom_send_of(self, name: str):
        return self.topics[name].odom_send

    def _create_pending_endpoints(self, budget_s: float = ENDPOINT_BUDGET_S) -> None:
        """New vessels' topics made and deleted vessels' destroyed, within `budget_s` wall seconds."""
        self.endpoint_queue.work(budget_s, self._subscribe_vessel, self._destroy)

    def _destroy(self, endpoint) -> None:
        (self.destroy_subscription if isinstance(endpoint, Subscription) else self.destroy_publisher)(endpoint)

    def _added(self, name: str) -> None:
        self.topics[name] = VesselTopics()
        self.endpoint_queue.add(name)

    def _removed(self, name: str) -> None:
        self.outputs.forget(name)
        topics = self.topics.pop(name)
        self.endpoint_queue.retire(name, [*topics.subscriptions, *([topics.odom_pub] if topics.odom_pub else [])])

    # --- services and actions ---------------------------------------------------------------------------------
    def _on_command(self, request: WorkerCommand.Request, response: WorkerCommand.Response):
        commands = [(COMMANDS.get(item.command, item.command), item.vessel) for item in request.items]
        results = self.core.run_commands(commands)
        for (command, _), result in zip(commands, results, strict=True):
            if result.ok and command in (CREATE, DELETE):
                (self._added if command == CREATE else self._removed)(result.name)
        response.results = [out.item_result(r) for r in results]
        self._publish_roster()
        if not self.run_limit.allowed(self.core.iteration, 1):  # held: show the new fleet now (sensors learn of it)
            self.outputs.publish_state(divmod(self.sim_time_ns, 1_000_000_000))
        return response

    def _on_list(self, request: ListVessels.Request, response: ListVessels.Response):
        response.vessels = out.vessel_infos(self.core)
        return response

    def _on_step(self, request: Step.Request, response: Step.Response):
        if self.mode != "lockstep":
            response.message = f"worker {self.worker} runs in {self.mode} mode; /lotusim/step needs mode lockstep"
        else:
            requested = int(request.steps)
            response.success = self.advance(requested) == requested
            response.message = "" if response.success else self.run_limit.describe()
        response.sim_time, response.iteration = out.stamp_from_ns(self.sim_time_ns), self.core.iteration
        return response

    def _execute_step_for(self, goal_handle):
        feedback = StepFor.Feedback()

        def progress(done: int) -> None:
            feedback.steps_done, feedback.sim_time = done, out.stamp_from_ns(self.sim_time_ns)
            goal_handle.publish_feedback(feedback)

        cancelled = lambda: goal_handle.is_cancel_requested  # noqa: E731
        done, outcome = pacing.step_in_chunks(int(goal_handle.request.steps), self.advance, cancelled, progress)
        {"done": goal_handle.succeed, "canceled": goal_handle.canceled, "held": goal_handle.abort}[outcome]()
        message = {"done": "", "canceled": "canceled", "held": self.run_limit.describe()}[outcome]
        sim_time = out.stamp_from_ns(self.sim_time_ns)
        return StepFor.Result(success=outcome == "done", message=message, steps_done=done, sim_time=sim_time)

    def checkpoint(self) -> tuple[dict, dict]:
        """(meta, arrays) of everything needed to continue identically (lotusim_physics.checkpoint.capture)."""
        return self.core.checkpoint()

    def restore(self, state: worker_checkpoint.WorkerState) -> None:
        """Swap in a checkpoint validated and rebuilt by lotusim_physics.checkpoint.load (nothing fails here)."""
        for name in self.core.restore(state):
            self._removed(name)
        for name in self.core.vessels:
            self._added(name)
        self._publish_roster()

    def _publish_roster(self) -> None:
        """Latch the worker's roster on /lotusim/fleet_roster if it changed (lotusim_physics.fleet_roster)."""
        entries = roster_of(self.core)
        revision = self._roster_revisions.changed(entries)
        if revision is not None:
            self._roster_pub.publish(out.roster_message(self.worker, revision, entries))

    def _on_checkpoint(self, request: Checkpoint.Request, response: Checkpoint.Response):
        """SAVE / CHECK / RESTORE checkpoint NAME (request.path) in the checkpoint directory; a refusal leaves the
        worker unchanged and answers `file: key: reason`."""
        try:
            where = (self.settings.checkpoint_dir, request.operation, request.path, self.worker, self.step_ns)
            response.digest = worker_checkpoint.serve(*where, self.checkpoint, self.restore)
            response.success = True
        except Exception as exc:  # noqa: BLE001 - no file or request may take the worker down
            response.message = str(exc) if isinstance(exc, ValueError) else f"{type(exc).__name__}: {exc}"
        response.sim_time = out.stamp_from_ns(self.sim_time_ns)
        response.vessel_count = len(self.core.vessels)
        return response


def main(args: list[str] | None = None) -> None:
    """Entry point of `ros2 run lotusim dynamics`."""
    run_node_main(DynamicsWorker, args, refused=(ValueError,), what="dynamics")


if __name__ == "__main__":
    main()
