"""dynamics node: one fleet integrator worker, ROS wiring only: its parameters, endpoints and timers.

Its vessels, their commands and checkpoints are lotusim_physics.worker.FleetWorker; the pacing of the modes
lotusim_physics.pacing (`run_until_s` and `paused` hold it: lotusim_physics.run_limit); the parameters
lotusim_physics.worker_settings; its publications (clock, fleet state, odometry, /tf, stats, collisions, roster)
lotusim_physics.dynamics_node_outputs; its vessels' topics (actuator and wrench commands in, odometry out, made
and destroyed in the background) lotusim_physics.dynamics_node_vessels; following the master's /clock, or as
clock master the lockstep requests and taking up sim time after a restart, lotusim_physics.dynamics_node_clock.
It serves /lotusim/<worker>/command (vessels created, deleted and moved by the MAS server), list_vessels and
checkpoint; it latches its roster (lotusim_physics.fleet_roster) on /lotusim/fleet_roster at start and whenever
its vessels change. Per-vessel names are relative (in the node's namespace), fleet-wide ones absolute.
Interfaces: docs/interfaces.md; parameters and behaviour: docs/simulation.md.
"""

from __future__ import annotations

import time

from rclpy.node import Node
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from tf2_msgs.msg import TFMessage

from lotusim_core.base.checkpoint_store import answered
from lotusim_core.ros import static_frames
from lotusim_core.ros.node_runner import run_node_main
from lotusim_core.ros.prepacked import raw_publish
from lotusim_core.ros.qos import LATCHED
from lotusim_interfaces.msg import Collision, EnvironmentConfig, FleetRoster, FleetState, SimStats
from lotusim_interfaces.msg import FleetCommandItem as Item
from lotusim_interfaces.srv import Checkpoint, ListVessels, WorkerCommand
from lotusim_physics import checkpoint as worker_checkpoint
from lotusim_physics import dynamics_node_outputs as out
from lotusim_physics import pacing
from lotusim_physics.dynamics_node_clock import ControllerWait, SimTimeEndpoints
from lotusim_physics.dynamics_node_vessels import ENDPOINT_BUDGET_S, HELD_ENDPOINT_S, VesselEndpoints
from lotusim_physics.fleet_roster import RosterRevisions, roster_of
from lotusim_physics.run_limit import RateParameter, RunLimit
from lotusim_physics.worker import CREATE, DELETE, MOVE, FleetWorker
from lotusim_physics.worker_settings import PARAMETERS, WorkerSettings

COMMANDS = {Item.CREATE: CREATE, Item.DELETE: DELETE, Item.MOVE: MOVE}


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
        self.endpoints = VesselEndpoints(self)  # the vessels' topics, made and destroyed in the background
        self._create_publishers(s)
        self._create_services(s)
        self.pacer = pacing.Pacer(s.step_s, s.stats_rate_hz)
        self.realtime = pacing.RealtimeSchedule(s.step_s)
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
        self.outputs = out.FleetOutputs(self.core, send_clock, send_state, send_tf, self.endpoints.odom_send_of)
        self._stats_pub = self.create_publisher(SimStats, "/lotusim/stats", 10)
        self._roster_pub = self.create_publisher(FleetRoster, "/lotusim/fleet_roster", LATCHED)
        self._collision_pub = self.create_publisher(Collision, "/lotusim/collisions", 100)
        self._roster_revisions = RosterRevisions()

    def _create_services(self, s: WorkerSettings) -> None:
        """The worker's services, the subscriptions that are not per vessel, and those of sim time."""
        self.create_subscription(EnvironmentConfig, "/lotusim/environment", self._on_environment, LATCHED)
        # several hosts send here (one message per control step each): a history deep enough that none is dropped
        self.create_subscription(JointState, "/lotusim/thruster_commands", self._on_thruster_batch, 100)
        prefix = f"/lotusim/{self.worker}"
        self.create_service(WorkerCommand, f"{prefix}/command", self._on_command)
        self.create_service(ListVessels, f"{prefix}/list_vessels", self._on_list)
        self.create_service(Checkpoint, f"{prefix}/checkpoint", self._on_checkpoint)
        self.sim_time = SimTimeEndpoints(self)  # follower: /clock; clock master: lockstep, taking up sim time
        self.sim_time.serve(s.clock_master)

    def _create_timers(self, s: WorkerSettings) -> None:
        """The tick of the mode (lotusim_physics.pacing.tick_of), the statistics and the vessels' topics."""
        tick = pacing.tick_of(s.mode, s.clock_master, s.step_s, s.rtf_target)
        # a realtime or scaled master waits for the hosts that answer every fleet state (max_control_lag_s)
        self.controller_wait = ControllerWait(self, s.max_control_lag_s, tick is not None and tick[0] == "realtime")
        if tick is not None:
            self._timer = self.create_timer(tick[1], self._on_fast_tick if tick[0] == "fast" else self._on_tick)
        # a timer for idle times (lockstep), and a check after each batch of steps: a busy fast-mode worker
        # keeps the events executor's queue full and would starve the timer
        self.create_timer(1.0 / s.stats_rate_hz, self._maybe_publish_stats)
        if tick is None or tick[0] != "fast":  # the fast tick creates them itself, within its period
            self.create_timer(0.02, lambda: self._create_pending_endpoints())  # (rclpy would pass a TimerInfo)

    def destroy_node(self) -> None:
        """Destroy the node; a timer event still queued in the executor then finds no vessel topic to make."""
        endpoints = getattr(self, "endpoints", None)  # none when the constructor refused its parameters
        if endpoints is not None:
            endpoints.queue.abandon()
        if getattr(self, "controller_wait", None) is not None:
            self.controller_wait.report()
        super().destroy_node()

    fleet = property(lambda self: self.core.fleet, doc="the worker's lotusim_physics.fleet.Fleet")
    vessels = property(lambda self: self.core.vessels, doc="name -> lotusim_physics.worker.VesselEntry")
    iteration = property(lambda self: self.core.iteration, doc="steps integrated (sim time / step)")
    sim_time_ns = property(lambda self: self.core.sim_time_ns)
    environment_yaml = property(lambda self: self.core.environment.config_yaml)
    environment_revision = property(lambda self: self.core.environment.revision)
    topics = property(lambda self: self.endpoints.topics, doc="name -> dynamics_node_vessels.VesselTopics")
    endpoint_queue = property(lambda self: self.endpoints.queue, doc="vessels' topics still to make or destroy")

    # --- pacing (lotusim_physics.pacing) --------------------------------------------------------------------
    def _on_tick(self) -> None:
        """Realtime / scaled: one step if the sim time is behind the wall clock (pacing.RealtimeSchedule) and
        within max_control_lag_s of the hosts' answers (pacing.ControlLag)."""
        now = time.monotonic()
        if not self.realtime.due(now, self.core.iteration, self.settings.rtf_target):
            return
        if not self.controller_wait.allows(self.core.sim_time_ns, self.step_ns, now) or not self.advance(1):
            self.realtime.restart()  # held (a host behind, run_until_s, paused): the wall time held is not made up

    def _on_thruster_batch(self, msg: JointState) -> None:
        """/lotusim/thruster_commands: this worker's vessels' commands, and the hosts' answers waited for."""
        self.controller_wait.on_commands(msg)
        self.endpoints.on_thruster_batch(msg)

    def _on_fast_tick(self) -> None:
        # new vessels' topics: up to half of the tick while some are pending (a spawn of 1,000 vessels has 6,000)
        self._create_pending_endpoints(budget_s=pacing.FAST_ENDPOINT_SHARE * self._timer.timer_period_ns * 1e-9)
        self._maybe_publish_stats()
        self.advance(1 << 62, wall_deadline=self.pacer.fast_deadline(self._timer.time_until_next_call() * 1e-9))
        self._fit_fast_period()

    def retime(self, period_s: float) -> None:
        """A new period (wall s) for the tick of the mode (the RTF set at run time: run_limit.RateParameter)."""
        self._timer.timer_period_ns = round(period_s * 1e9)

    def _fit_fast_period(self) -> None:
        if (period_ns := self.pacer.fast_period_ns(self._timer.timer_period_ns)) is not None:
            self._timer.timer_period_ns = period_ns

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
            self._collision_pub.publish(out.aerial_contact_message(event, self.worker))  # KIND_SEA, KIND_DECK
        for event in self.core.fleet.take_collision_events():  # contacts that began (lotusim_physics.collisions)
            self.get_logger().warning(str(event))
            self._collision_pub.publish(out.collision_message(event, self.worker))
        self.outputs.after_steps(first, k)

    def _maybe_publish_stats(self) -> None:
        if (now := self.pacer.stats_due()) is not None:
            self._publish_stats(now)

    def _publish_stats(self, now: float) -> None:
        """The statistics of the window ending at wall time `now` (the pacer's clock)."""
        window = self.pacer.close_window(now, self.core.iteration)
        pending = self.endpoints.queue.backlog
        self._stats_pub.publish(out.stats_message(self.core, self.settings, window, pending))

    def _create_pending_endpoints(self, budget_s: float = ENDPOINT_BUDGET_S) -> None:
        """New vessels' topics made and deleted vessels' destroyed, within `budget_s` wall seconds (HELD_ENDPOINT_S
        while the sim time is held: nothing else is to be done); the statistics at once when none is left, so that
        `lotusim run` starts the sim time as soon as the fleet's topics exist."""
        queue = self.endpoints.queue
        if not queue.backlog:
            return
        if not self.run_limit.allowed(self.core.iteration, 1):
            budget_s = max(budget_s, HELD_ENDPOINT_S)
        self.endpoints.work(budget_s)
        if not queue.backlog:
            self._publish_stats(self.pacer.clock())

    def _on_environment(self, msg: EnvironmentConfig) -> None:
        try:
            self.core.apply_environment(msg.config_yaml, msg.revision)
        except Exception as exc:  # noqa: BLE001 - a bad configuration must not stop the physics
            self.get_logger().error(f"environment revision {msg.revision} ignored: {exc}")
            return
        self.get_logger().info(f"environment revision {msg.revision} applied")

    # --- services ---------------------------------------------------------------------------------------------
    def _on_command(self, request: WorkerCommand.Request, response: WorkerCommand.Response):
        commands = [(COMMANDS.get(item.command, item.command), item.vessel) for item in request.items]
        results = self.core.run_commands(commands)
        for (command, _), result in zip(commands, results, strict=True):
            if result.ok and command in (CREATE, DELETE):
                (self.endpoints.added if command == CREATE else self.endpoints.removed)(result.name)
        response.results = [out.item_result(r) for r in results]
        self._publish_roster()
        if not self.run_limit.allowed(self.core.iteration, 1):  # held: show the new fleet now (sensors learn of it)
            self.outputs.publish_state(divmod(self.sim_time_ns, 1_000_000_000))
        return response

    def _on_list(self, request: ListVessels.Request, response: ListVessels.Response):
        response.vessels = out.vessel_infos(self.core)
        return response

    def _on_checkpoint(self, request: Checkpoint.Request, response: Checkpoint.Response):
        """SAVE / CHECK / RESTORE checkpoint NAME (request.path) in the checkpoint directory; a refusal leaves the
        worker unchanged and answers `file: key: reason` (lotusim_physics.checkpoint.serve, never raising:
        checkpoint_store.answered)."""
        where = (self.settings.checkpoint_dir, request.operation, request.path, self.worker, self.step_ns)
        answer = answered(lambda: worker_checkpoint.serve(*where, self.core.checkpoint, self.restore))
        response.success, response.digest, response.message = answer
        response.sim_time, response.vessel_count = out.stamp_from_ns(self.sim_time_ns), len(self.core.vessels)
        return response

    def restore(self, state: worker_checkpoint.WorkerState) -> None:
        """Swap in a checkpoint validated and rebuilt by lotusim_physics.checkpoint.load (nothing fails here)."""
        self.controller_wait.lag.forget()  # the hosts' answers so far are of another sim time
        for name in self.core.restore(state):
            self.endpoints.removed(name)
        for name in self.core.vessels:
            self.endpoints.added(name)
        self._publish_roster()

    def _publish_roster(self) -> None:
        """Latch the worker's roster on /lotusim/fleet_roster if it changed (lotusim_physics.fleet_roster)."""
        revision = self._roster_revisions.changed(entries := roster_of(self.core))
        if revision is not None:
            self._roster_pub.publish(out.roster_message(self.worker, revision, entries))


def main(args: list[str] | None = None) -> None:
    """Entry point of `ros2 run lotusim dynamics`."""
    run_node_main(DynamicsWorker, args, refused=(ValueError,), what="dynamics")


if __name__ == "__main__":
    main()
