"""dynamics node: one fleet integrator worker. ROS wiring only; the physics is lotusim_physics.fleet.Fleet.

A worker owns a set of vessels (added and removed by the MAS server through /lotusim/<worker>/command), steps
them at a fixed step, and publishes (docs/interfaces.md):
- /clock (rosgraph_msgs/Clock) every step, when it is the clock master (parameter `clock_master`);
- /lotusim/fleet_state (lotusim_interfaces/FleetState) every `fleet_state_every` steps, or at
  `fleet_state_rate_hz` of sim time when that is set (> 0);
- <vessel>/odom (nav_msgs/Odometry, ground truth, frame `odom` (= `map`) ENU, child `<vessel>/base_link` FLU) at
  `odom_rate_hz` of sim time (vessels are spread over the steps of one period to smooth the load);
- /tf (tf2_msgs/TFMessage): odom -> <vessel>/base_link of the same vessels at the same steps as the odometry, one
  message per step (parameter `publish_tf`; the clock master then also latches map -> odom on /tf_static);
- /lotusim/stats (lotusim_interfaces/SimStats) at `stats_rate_hz` of wall time.
A rate of sim time is kept exactly on average: the output follows the first step at or after each multiple of
its period (lotusim_physics.output_schedule; 0.03 s steps at 10 Hz: intervals of 0.12, 0.09, 0.09 s). It
subscribes per vessel to `<vessel>/thrusters/<thruster>/cmd`, `<vessel>/fins/<fin>/cmd`
(std_msgs/Float64; actuator names from the vehicle file) and `<vessel>/cmd_wrench` (geometry_msgs/Wrench,
body FLU). Per-vessel names are relative (in the node's namespace), fleet-wide ones absolute
(lotusim_core.ros.ros_names). Non-finite commands are rejected and logged; the vessel keeps its last valid command.

Modes (`mode`): "realtime" (RTF 1), "scaled" (RTF `real_time_factor`), "fast" (as fast as possible) and
"lockstep" (advances only through /lotusim/step or the /lotusim/step_for action). A worker with
`clock_master: false` follows /clock: it steps until its sim time reaches the master's, so several workers stay
on one clock. In every mode, the parameter `run_until_s` holds the worker at the first step at or after that sim
time (lotusim_physics.run_limit; `lotusim run` starts it at 0 and releases it once the scenario is spawned).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np
import yaml
from builtin_interfaces.msg import Time
from geometry_msgs.msg import TransformStamped, Wrench
from nav_msgs.msg import Odometry
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rclpy.subscription import Subscription
from rosgraph_msgs.msg import Clock
from std_msgs.msg import Float64
from tf2_msgs.msg import TFMessage

from lotusim_core.base import frames, safe_yaml
from lotusim_core.base.catalogue import apply_overrides, load_vehicle
from lotusim_core.base.names import name_problem
from lotusim_core.ros import static_frames
from lotusim_core.ros.cdr import RawArrays, RawBatch, RawMessage, RawSequence, raw_publish
from lotusim_core.ros.endpoints import QUIET_PUBLISHER, QUIET_SUBSCRIPTION
from lotusim_core.ros.node_runner import run_node_main
from lotusim_core.ros.ros_names import ODOM_FRAME
from lotusim_env.environment import Environment, build_environment
from lotusim_interfaces.action import StepFor
from lotusim_interfaces.msg import EnvironmentConfig, FleetState, ItemResult, SimStats, VesselInfo
from lotusim_interfaces.msg import FleetCommandItem as Item
from lotusim_interfaces.srv import Checkpoint, ListVessels, Step, WorkerCommand
from lotusim_physics import checkpoint as worker_checkpoint
from lotusim_physics.fleet import Fleet
from lotusim_physics.output_schedule import OutputPlan, SimTimeRate
from lotusim_physics.run_limit import RunLimit

MODES = ("realtime", "scaled", "fast", "lockstep")
# FleetState arrays and their columns per vessel
FLEET_STATE_ARRAYS = {"position": 3, "orientation": 4, "twist": 6, "accel": 6, "environment": 6}
STATE_ENU_ARRAYS = ("position", "orientation", "twist", "accel")  # the columns of Fleet.scatter_state_enu
# the numbers of nav_msgs/Odometry that change from one publication to the next: pose and twist, then the stamp
ODOM_DOUBLES = [
    "pose.pose.position.x", "pose.pose.position.y", "pose.pose.position.z",
    "pose.pose.orientation.x", "pose.pose.orientation.y", "pose.pose.orientation.z", "pose.pose.orientation.w",
    "twist.twist.linear.x", "twist.twist.linear.y", "twist.twist.linear.z",
    "twist.twist.angular.x", "twist.twist.angular.y", "twist.twist.angular.z",
]  # fmt: skip
ODOM_INTS = ["header.stamp.sec", "header.stamp.nanosec"]
# the numbers of a geometry_msgs/TransformStamped that change: the first 7 columns of Fleet.scatter_state_enu
TF_DOUBLES = [f"transform.translation.{a}" for a in "xyz"] + [f"transform.rotation.{a}" for a in "xyzw"]
LATCHED = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE)
ENDPOINT_BUDGET_S = 0.005  # wall time per tick for creating new vessels' topics
# "fast" mode: a timer every FAST_PERIOD_S creates pending topics, then integrates until FAST_GAP_S before the
# timer is due again. In that gap the events executor serves what arrived meanwhile (commands, services, the
# DDS side of new topics). The gap must be real idle time before the timer is due: a batch that ends with the
# timer already due (or sleeps instead) let the timer win over the queued events, and a spawn of 1,000
# vessels took 6-14 s instead of 0.5 s.
FAST_PERIOD_S = 0.02
FAST_GAP_S = 0.0005
# A batch ends before the next tick is due by less than one step (plus the gap): with large fleets (ms per step)
# the tick period grows to this many steps, so that idle end stays a few percent of the time.
FAST_STEPS_PER_TICK = 20
TAKE_UP_WINDOW_S = 60.0  # a restarted clock master takes up the sim time others saw within this wall time
FAST_ENDPOINT_SHARE = 0.5  # of a fast-mode tick, at most, for creating new vessels' topics
MAX_CHUNK_STEPS = 1000  # steps integrated in one physics call at most (between two publications)


def physics_poses(vessels) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The VesselDescriptions' poses (ENU, ENU<-FLU x y z w) and twists (FLU) in physics frames, one vectorised
    pass: per vessel (NED position, NED<-FRD quaternion w x y z, FRD twist). Raises ValueError if any
    quaternion is zero or not finite."""
    if not vessels:
        return []
    p = np.array([(v.pose.position.x, v.pose.position.y, v.pose.position.z) for v in vessels], dtype=float)
    q = np.array([(o.x, o.y, o.z, o.w) for o in (v.pose.orientation for v in vessels)], dtype=float)
    twists = ((v.twist.linear, v.twist.angular) for v in vessels)
    nu = np.array([(lin.x, lin.y, lin.z, ang.x, ang.y, ang.z) for lin, ang in twists], dtype=float)
    converted = (frames.enu_to_ned(p), frames.q_enu_flu_to_q_ned_frd(q), frames.twist_flu_to_frd(nu))
    return list(zip(*converted, strict=True))


@dataclass
class StateOutput:
    """The serialized FleetState of one fleet layout: its writer, the buffer as float64, where each vessel's
    19 state numbers go in it, the rows to write, and the version of the environment / status written."""

    writer: RawArrays
    doubles: np.ndarray
    index: np.ndarray
    rows: np.ndarray
    extras_version: int = -1


def stamp_from_ns(t_ns: int) -> Time:
    return Time(sec=t_ns // 1_000_000_000, nanosec=t_ns % 1_000_000_000)


@dataclass
class VesselEntry:
    """What the worker keeps per vessel besides the fleet arrays: its model, commands and ROS endpoints."""

    name: str
    model: str
    domain: str
    overrides_yaml: str
    thruster_cmd: np.ndarray
    fin_cmd: np.ndarray
    odom_pub: object = None
    odom_send: object = None  # odom_pub's raw publish function (lotusim_core.ros.cdr.raw_publish)
    frozen_reason: str = ""  # the fault report of its last freeze (listed as status_reason while frozen)
    subscriptions: list = field(default_factory=list)


class DynamicsWorker(Node):
    """ROS wiring of one Fleet: commands in, clock / fleet state / odometry / stats out."""

    def __init__(self, **node_kwargs) -> None:
        worker = node_kwargs.pop("worker", None)
        super().__init__(node_kwargs.pop("node_name", "dynamics"), **node_kwargs)
        self.worker = worker or self.declare_parameter("worker", "worker_0").value
        self.step_s = float(self.declare_parameter("step_s", 0.03).value)
        self.mode = self.declare_parameter("mode", "realtime").value
        self.rtf_target = float(self.declare_parameter("real_time_factor", 1.0).value)
        self.clock_master = bool(self.declare_parameter("clock_master", True).value)
        self.fleet_state_every = max(1, int(self.declare_parameter("fleet_state_every", 1).value))
        self.fleet_state_rate_hz = float(self.declare_parameter("fleet_state_rate_hz", 0.0).value)
        self.odom_rate_hz = float(self.declare_parameter("odom_rate_hz", 10.0).value)
        publish_tf = bool(self.declare_parameter("publish_tf", True).value)
        self.stats_rate_hz = float(self.declare_parameter("stats_rate_hz", 1.0).value)
        integrator = self.declare_parameter("integrator", "rk4").value
        substeps = int(self.declare_parameter("substeps", 1).value)
        water_density = float(self.declare_parameter("water_density_kgm3", 1025.0).value)
        # Currents and wind vary over minutes and hundreds of metres: they are sampled at the vessels every
        # environment_period_s of sim time (and whenever the fleet changes) and held in between.
        self.environment_period_s = float(self.declare_parameter("environment_period_s", 0.1).value)
        # checkpoints: saved and restored by name in this directory (lotusim_core.base.checkpoint_store.checkpoint_dir)
        self.checkpoint_dir = str(self.declare_parameter("checkpoint_dir", "").value)
        if self.mode not in MODES:
            raise ValueError(f"parameter mode: expected one of {MODES}, got {self.mode!r}")
        if not (self.step_s > 0 and math.isfinite(self.step_s)):
            raise ValueError(f"parameter step_s: expected a positive step in seconds, got {self.step_s}")
        for name in ("fleet_state_rate_hz", "odom_rate_hz"):
            rate = getattr(self, name)
            if not (rate >= 0 and math.isfinite(rate)):
                raise ValueError(f"parameter {name}: expected a rate >= 0 Hz (0: off / default), got {rate}")
        if self.mode == "realtime":
            self.rtf_target = 1.0

        self.fleet = Fleet(self.step_s, integrator=integrator, substeps=substeps, water_density_kgm3=water_density)
        self.step_ns = int(round(self.step_s * 1e9))
        self.run_limit = RunLimit(self, self.step_ns)  # parameter run_until_s: hold at that sim time
        # when the fleet state and each vessel's odometry are due (odometry: row i in group i % groups)
        self._state_schedule = (
            SimTimeRate.from_rate_hz(self.step_ns, self.fleet_state_rate_hz)
            if self.fleet_state_rate_hz > 0
            else SimTimeRate(self.step_ns, self.fleet_state_every * self.step_ns)
        )
        self._odom_schedule = SimTimeRate.from_rate_hz(self.step_ns, self.odom_rate_hz) if self.odom_rate_hz else None
        for what, schedule in (("fleet_state_rate_hz", self._state_schedule), ("odom_rate_hz", self._odom_schedule)):
            if schedule is not None and schedule.period_ns < self.step_ns:
                self.get_logger().warning(f"{what}: faster than the physics step; published after every step")
        self._env_period_ns = max(1, round(self.environment_period_s * 1e9))
        self.iteration = 0
        self.vessels: dict[str, VesselEntry] = {}
        self.environment: Environment = build_environment(None)
        self.environment_yaml = ""
        self.environment_revision = 0  # of the /lotusim/environment applied (0: none yet), reported in the stats
        self._env_cache: dict[str, np.ndarray] = {}
        self._env_next_ns = 0  # sim time of the next environment sample, ns
        self._clock_bytes = RawMessage(Clock(), ["clock.sec", "clock.nanosec"]).packer()  # (sec, nanosec) -> CDR
        self._state_out: StateOutput | None = None  # the serialized FleetState of the current fleet
        self._extras_version = 0  # bumped when the environment or a status changes (FleetState extras)
        self._pending_endpoints: dict[str, None] = {}  # vessels whose topics are still to be created (ordered)
        self._doomed_endpoints: list = []  # deleted vessels' subscriptions and publishers, destroyed later
        self._odom = RawBatch(ODOM_DOUBLES, ODOM_INTS)  # one row per vessel of the fleet, in fleet order
        self._odom_sends: list | None = None  # per fleet row: its odom raw publish function (None: no topic yet)
        # due odometry groups -> their rows (array, list) and the positions of their stamps in the batch
        self._odom_rows: dict[tuple[int, ...], tuple[np.ndarray, list[int], np.ndarray]] = {}
        self._plan = OutputPlan(self._state_schedule, self._odom_schedule, 0, MAX_CHUNK_STEPS)  # what is due when

        self._clock_pub = self.create_publisher(Clock, "/clock", 10) if self.clock_master else None
        self._clock_send = raw_publish(self._clock_pub) if self._clock_pub is not None else None
        self._state_pub = self.create_publisher(FleetState, "/lotusim/fleet_state", 10)
        self._state_send = raw_publish(self._state_pub)
        # /tf with the depth of tf2's broadcasters; the transforms of the vessels due, per set of due groups
        self._tf_pub = self.create_publisher(TFMessage, "/tf", 100) if publish_tf else None
        if publish_tf and self.clock_master:  # REP 105: map -> odom, identity (ground truth does not drift)
            self._static_pub = static_frames.publish_once(self, [static_frames.map_to_odom()])
        self._tf_send = raw_publish(self._tf_pub) if self._tf_pub is not None else None
        self._tf_out: dict[tuple[int, ...], tuple[RawSequence, np.ndarray]] = {}
        self._tf_names: tuple[str, ...] = ()  # the fleet (in order) that _tf_out was laid out for
        self._stats_pub = self.create_publisher(SimStats, "/lotusim/stats", 10)
        self.create_subscription(EnvironmentConfig, "/lotusim/environment", self._on_environment, LATCHED)
        prefix = f"/lotusim/{self.worker}"
        self.create_service(WorkerCommand, f"{prefix}/command", self._on_command)
        self.create_service(ListVessels, f"{prefix}/list_vessels", self._on_list)
        self.create_service(Checkpoint, f"{prefix}/checkpoint", self._on_checkpoint)
        if self.clock_master:
            self.create_service(Step, "/lotusim/step", self._on_step)
            ActionServer(
                self,
                StepFor,
                "/lotusim/step_for",
                execute_callback=self._execute_step_for,
                goal_callback=self._accept_step_for,
                cancel_callback=lambda _goal: CancelResponse.ACCEPT,
            )
            # a restarted master takes up sim time where it was (docs/simulation.md, supervision and failover)
            self.create_subscription(SimStats, "/lotusim/stats", self._on_stats_of_others, 10)
            self.create_subscription(Clock, "/lotusim/resume_clock", self._on_resume_clock, LATCHED)
        else:
            self.create_subscription(Clock, "/clock", self._on_clock, 10)

        self._wall_start = time.monotonic()
        self._window = {"wall": self._wall_start, "iter": 0, "compute": 0.0, "compute_max": 0.0, "n": 0}
        self._step_cost_s = 20e-6  # wall time per integrated step with its outputs (measured as we go)
        self._next_wall = self._wall_start
        if self.mode in ("realtime", "scaled") and self.clock_master:
            self._timer = self.create_timer(self.step_s / self.rtf_target, self._on_realtime_tick)
        elif self.mode == "fast" and self.clock_master:
            self._timer = self.create_timer(FAST_PERIOD_S, self._on_fast_tick)
        self._next_stats = self._wall_start
        # a timer for idle times (lockstep), and a check after each batch of steps: a busy fast-mode worker
        # keeps the events executor's queue full and would starve the timer
        self.create_timer(1.0 / self.stats_rate_hz, self._maybe_publish_stats)
        if not (self.mode == "fast" and self.clock_master):  # the fast tick creates them itself, within its period
            self.create_timer(0.02, lambda: self._create_pending_endpoints())  # (rclpy would pass a TimerInfo)
        self.get_logger().info(
            f"worker {self.worker}: mode {self.mode}, step {self.step_s} s, RTF target {self.rtf_target}, "
            f"integrator {integrator}, clock master {self.clock_master}"
        )

    # --- time ----------------------------------------------------------------------------------------------
    @property
    def sim_time_ns(self) -> int:
        return self.iteration * self.step_ns

    def _on_realtime_tick(self) -> None:
        self.advance(1)

    def _on_fast_tick(self) -> None:
        # new vessels' topics: up to half of the tick while some are pending (a spawn of 1,000 vessels has 6,000)
        self._create_pending_endpoints(budget_s=FAST_ENDPOINT_SHARE * self._timer.timer_period_ns * 1e-9)
        self._maybe_publish_stats()
        until_due_s = self._timer.time_until_next_call() * 1e-9
        self.advance(1 << 62, wall_deadline=time.monotonic() + max(0.0, until_due_s - FAST_GAP_S))
        self._fit_fast_period()

    def _fit_fast_period(self) -> None:
        """Fast-mode tick period: FAST_PERIOD_S, or FAST_STEPS_PER_TICK steps at the measured cost per step if
        longer (changed only when off by more than a quarter). Commands wait at most one period."""
        period_ns = int(1e9 * max(FAST_PERIOD_S, FAST_STEPS_PER_TICK * self._step_cost_s))
        current_ns = self._timer.timer_period_ns
        if abs(period_ns - current_ns) > current_ns // 4:
            self._timer.timer_period_ns = period_ns

    def _on_clock(self, msg: Clock) -> None:
        """Follower worker: integrate until our sim time reaches the master's clock."""
        target_ns = msg.clock.sec * 1_000_000_000 + msg.clock.nanosec
        steps = (target_ns - self.sim_time_ns) // self.step_ns
        if steps > 1 and not self.fleet.names:  # nothing to integrate (a follower started late, or restarted)
            self.iteration += int(steps) - 1
            steps = 1
        if steps > 0:
            self.advance(int(steps))

    def _on_stats_of_others(self, msg: SimStats) -> None:
        """Clock master: a follower ahead means this master was restarted while the followers ran on."""
        if msg.worker != self.worker:
            self._take_up_time(round(msg.sim_time_s * 1e9), f"worker {msg.worker}")

    def _on_resume_clock(self, msg: Clock) -> None:
        """Clock master: the sim time the MAS server last saw, sent when this worker was restarted."""
        self._take_up_time(msg.clock.sec * 1_000_000_000 + msg.clock.nanosec, "the MAS server")

    def _take_up_time(self, t_ns: int, source: str) -> None:
        """Jump to sim time t_ns if it is more than 1 s ahead, in the first TAKE_UP_WINDOW_S of wall time of this
        process (a restarted master; the gap is not integrated; later, a checkpoint restore may set the clock
        back while a follower's older stats are on their way, and must not be undone)."""
        ahead_ns = t_ns - self.sim_time_ns
        if ahead_ns > 1_000_000_000 and time.monotonic() - self._wall_start < TAKE_UP_WINDOW_S:
            self.iteration += ahead_ns // self.step_ns
            self.get_logger().warning(f"sim time taken up from {source}: {self.sim_time_ns * 1e-9:.3f} s")

    def advance(self, steps: int, wall_deadline: float | None = None) -> int:
        """Integrate `steps` fixed steps (fewer if the monotonic wall clock passes `wall_deadline`), publishing
        /clock after each step and the fleet outputs when due; returns the steps done.

        The steps between two publications go to the physics in one call (Fleet.step(steps=k)): the states
        are the same as step by step, and nothing is observable in between (commands are handled between
        calls of advance), so the Python cost per step is one /clock message."""
        done, steps = 0, self.run_limit.allowed(self.iteration, steps)
        while done < steps:
            k = min(steps - done, self._steps_to_next_output(), MAX_CHUNK_STEPS)
            if wall_deadline is not None:
                k = min(k, self._steps_before(wall_deadline, at_least=0 if done else 1))
                if k == 0:
                    break
            self._integrate(k)
            done += k
        return done

    def _steps_before(self, wall_deadline: float, at_least: int) -> int:
        """How many steps fit before `wall_deadline` (monotonic s) at the measured cost per step (at least
        `at_least`). A batch must not run past the deadline: with one vessel or none, a thousand steps are a
        thousand /clock messages, and a fast-mode tick that overran its period delayed the worker's incoming
        commands by seconds (docs/performance.md)."""
        return max(at_least, int((wall_deadline - time.monotonic()) / self._step_cost_s))

    def _steps_to_next_output(self) -> int:
        """The smallest k >= 1 such that after k steps the fleet state or some odometry is due, or the
        environment must be sampled again (at most MAX_CHUNK_STEPS when nothing is due)."""
        k = self._plan.at(self.iteration).steps_to_next
        if self.environment_yaml and self.fleet.names:
            t_ns = self.sim_time_ns
            if t_ns < self._env_next_ns:
                k = min(k, -(-(self._env_next_ns - t_ns) // self.step_ns))
            else:
                k = min(k, -(-self._env_period_ns // self.step_ns))
        return max(1, k)

    def _integrate(self, k: int) -> None:
        """k steps of the physics (environment held), their k /clock messages, then the outputs due."""
        start = time.perf_counter()
        t_ns = self.sim_time_ns
        t_s = t_ns * 1e-9
        if self.environment_yaml:
            self._sample_environment(t_ns)
            faults = self.fleet.step(t_s, current_ned=self._held_current, wind_ned=self._held_wind, steps=k)
        else:  # still water, no wind
            faults = self.fleet.step(t_s, steps=k)
        it0 = self.iteration
        self.iteration += k
        for fault in faults:
            self.get_logger().error(f"vessel frozen: {fault}")
            if fault.vessel in self.vessels:
                self.vessels[fault.vessel].frozen_reason = str(fault)
            self._extras_version += 1
        if self._clock_send is not None:
            send, clock_bytes, step_ns = self._clock_send, self._clock_bytes, self.step_ns
            for it in range(it0 + 1, it0 + k + 1):
                send(clock_bytes(*divmod(it * step_ns, 1_000_000_000)))
        self._publish_outputs()
        elapsed = time.perf_counter() - start
        # moving average of the wall time per step; one slow batch (the process descheduled) counts as twice the
        # average at most, or the next ticks would plan too few steps and leave the CPU idle
        self._step_cost_s += 0.1 * (min(elapsed / k, 2.0 * self._step_cost_s) - self._step_cost_s)
        w = self._window
        w["compute"] += elapsed
        if elapsed / k > w["compute_max"]:
            w["compute_max"] = elapsed / k
        w["n"] += k

    # --- environment (pure function of the latched configuration) -------------------------------------------
    def _on_environment(self, msg: EnvironmentConfig) -> None:
        try:
            env = build_environment(safe_yaml.load(msg.config_yaml))
        except Exception as exc:  # noqa: BLE001 - a bad configuration must not stop the physics
            self.get_logger().error(f"environment revision {msg.revision} ignored: {exc}")
            return
        self.environment, self.environment_yaml = env, msg.config_yaml
        self.environment_revision = msg.revision
        self._fleet_changed()
        self.get_logger().info(f"environment revision {msg.revision} applied")

    def _sample_environment(self, t_ns: int) -> None:
        """Evaluate current and wind at the vessels (ENU models, NED physics) if the held values are stale."""
        n = len(self.fleet.names)
        if t_ns < self._env_next_ns and self._env_cache.get("current", np.zeros((0, 3))).shape[0] == n:
            return
        self._env_next_ns = t_ns + self._env_period_ns
        t_s = t_ns * 1e-9
        positions_enu = frames.ned_to_enu(self.fleet.position_ned)
        env = self.environment
        self._env_cache = {
            "current": frames.enu_to_ned(env.current.velocity_enu(t_s, positions_enu)),
            "wind": frames.enu_to_ned(env.wind.velocity_enu(t_s, positions_enu)),
        }
        self._extras_version += 1

    def _held_current(self, _t_s: float, _positions_ned: np.ndarray) -> np.ndarray:
        return self._env_cache["current"]

    def _held_wind(self, _t_s: float, _positions_ned: np.ndarray) -> np.ndarray:
        return self._env_cache["wind"]

    def _fleet_changed(self) -> None:
        self._env_cache = {}
        self._plan = OutputPlan(self._state_schedule, self._odom_schedule, len(self.fleet.names), MAX_CHUNK_STEPS)
        self._odom_sends = None  # re-laid out at the next odometry
        self._state_out = None  # likewise the fleet state

    # --- publishing ---------------------------------------------------------------------------------------
    def _publish_outputs(self) -> None:
        """The fleet state and the odometry due after the step that made `iteration`."""
        publish_state, groups, _ = self._plan.at(self.iteration)
        if not (publish_state or groups):
            return
        stamp = divmod(self.sim_time_ns, 1_000_000_000)
        if publish_state:
            self._publish_fleet_state(stamp)
        if groups:
            self._publish_odom(stamp, groups)

    def _fleet_state_output(self) -> StateOutput:
        """The serialized FleetState of the current fleet (names fixed), rebuilt when the fleet changes."""
        if self._state_out is None:
            names = list(self.fleet.names)
            n = len(names)
            msg = FleetState(worker=self.worker, names=names)
            msg.header.frame_id = "map"
            for field_name, width in FLEET_STATE_ARRAYS.items():
                setattr(msg, field_name, [0.0] * (n * width))
            msg.status = bytes(n)
            writer = RawArrays(
                msg, list(FLEET_STATE_ARRAYS), ["header.stamp.sec", "header.stamp.nanosec", "iteration"], ["status"]
            )
            for field_name, width in FLEET_STATE_ARRAYS.items():  # (N, width) views of the flat arrays
                writer.views[field_name] = writer.views[field_name].reshape(n, width)
            # per vessel, the 19 numbers of Fleet.scatter_state_enu: position, orientation, twist, accel
            index = np.hstack([writer.double_index(f).reshape(n, FLEET_STATE_ARRAYS[f]) for f in STATE_ENU_ARRAYS])
            self._state_out = StateOutput(writer, writer.doubles(), index, np.arange(n, dtype=np.int64))
        return self._state_out

    def _publish_fleet_state(self, stamp: tuple[int, int]) -> None:
        """One FleetState for the whole fleet: the state is written straight into the serialized message by one
        compiled pass (Fleet.scatter_state_enu), no per-vessel Python work; environment and status are
        rewritten only when they changed."""
        out = self._fleet_state_output()
        self.fleet.scatter_state_enu(out.rows, out.doubles, out.index)
        if out.extras_version != self._extras_version:
            self._write_state_extras(out.writer.views)
            out.extras_version = self._extras_version
        self._state_send(out.writer.pack((*stamp, self.iteration)))

    def _write_state_extras(self, views: dict[str, np.ndarray]) -> None:
        """The held environment at each vessel (current, wind; ENU, m/s) and the vessels' status."""
        env, n = views["environment"], len(self.fleet.names)
        if self._env_cache and len(self._env_cache["current"]) == n:
            env[:, :3] = frames.ned_to_enu(self._env_cache["current"])
            env[:, 3:] = frames.ned_to_enu(self._env_cache["wind"])
        else:
            env[:] = 0.0
        views["status"][:] = self.fleet.frozen

    def _publish_odom(self, stamp: tuple[int, int], groups: tuple[int, ...]) -> None:
        """Publish the odometry of the vessels whose turn it is (rows i with i % odometry groups in `groups`):
        pose and twist of all of them written into their serialized messages by one compiled pass
        (Fleet.scatter_state_enu into lotusim_core.ros.cdr.RawBatch), the stamps by one assignment, then one publish
        call each."""
        batch = self._odom
        if self._odom_sends is None:
            self._layout_odometry()
        due = self._odom_rows.get(groups)
        if due is None:
            n, period = len(self.fleet.names), self._odom_schedule.groups
            rows = np.concatenate([np.arange(g, n, period) for g in groups])
            due = self._odom_rows[groups] = (rows, rows.tolist(), batch.int_positions(rows))
        rows, row_list, stamp_positions = due
        self.fleet.scatter_state_enu(rows, batch.doubles, batch.double_index)
        batch.write_ints(stamp_positions, stamp)
        sends, message = self._odom_sends, batch.message
        for i in row_list:
            send = sends[i]
            if send is not None:
                send(message(i))
        if self._tf_send is not None:
            self._publish_tf(rows, stamp, groups)

    def _publish_tf(self, rows: np.ndarray, stamp: tuple[int, int], groups: tuple[int, ...]) -> None:
        """One tf2_msgs/TFMessage with map -> <vessel>/base_link (ENU position, ENU <- FLU rotation) of fleet rows
        `rows`: written into its serialized bytes by one compiled pass, the stamps by one assignment."""
        out = self._tf_out.get(groups)
        if out is None:
            out = self._tf_out[groups] = self._transforms_message(rows)
        transforms, index = out
        self.fleet.scatter_state_enu(rows, transforms.doubles, index)
        transforms.write_ints(stamp)
        self._tf_send(transforms.message())

    def _transforms_message(self, rows: np.ndarray) -> tuple[RawSequence, np.ndarray]:
        """The serialized TFMessage of fleet rows `rows` and, per fleet row, where its pose goes in it."""
        names = self.fleet.names
        msg = TFMessage(transforms=[TransformStamped(child_frame_id=f"{names[i]}/base_link") for i in rows.tolist()])
        for transform in msg.transforms:
            transform.header.frame_id = ODOM_FRAME
        transforms = RawSequence(msg, "transforms", TF_DOUBLES, ["header.stamp.sec", "header.stamp.nanosec"])
        index = np.zeros((len(names), len(TF_DOUBLES)), dtype=np.int64)  # columns of Fleet.scatter_state_enu
        index[rows] = transforms.double_index
        return transforms, index

    def _layout_odometry(self) -> None:
        """One odometry row per vessel in fleet order, and its publish function (None until its topic exists)."""
        names = self.fleet.names
        self._odom.layout(names, self._odom_message)
        self._odom_sends = [self.vessels[name].odom_send for name in names]
        self._odom_rows = {}  # the rows due for each set of due groups, filled as they come
        if self._tf_names != tuple(names):  # a move or a new environment keeps the transforms' layout
            self._tf_out, self._tf_names = {}, tuple(names)

    @staticmethod
    def _odom_message(name: str) -> Odometry:
        msg = Odometry()
        msg.header.frame_id = ODOM_FRAME
        msg.child_frame_id = f"{name}/base_link"
        return msg

    def _maybe_publish_stats(self) -> None:
        now = time.monotonic()
        if now >= self._next_stats:
            self._next_stats = max(self._next_stats + 1.0 / self.stats_rate_hz, now)
            self._publish_stats(now)

    def _publish_stats(self, now: float) -> None:
        w = self._window
        wall = now - w["wall"]
        iters = self.iteration - w["iter"]
        msg = SimStats(
            worker=self.worker,
            mode=self.mode,
            sim_time_s=self.sim_time_ns * 1e-9,
            wall_time_s=now - self._wall_start,
            iterations=self.iteration,
            real_time_factor=(iters * self.step_s / wall) if wall > 0 else 0.0,
            target_real_time_factor=self.rtf_target if self.mode in ("realtime", "scaled") else 0.0,
            step_size_s=self.step_s,
            vessel_count=len(self.fleet.names),
            frozen_count=int(np.count_nonzero(self.fleet.frozen)) if self.fleet.names else 0,
            step_compute_time_s=w["compute"] / w["n"] if w["n"] else 0.0,
            step_compute_time_max_s=w["compute_max"],
            environment_revision=self.environment_revision,
        )
        msg.header.stamp = stamp_from_ns(self.sim_time_ns)
        self._stats_pub.publish(msg)
        self._window = {"wall": now, "iter": self.iteration, "compute": 0.0, "compute_max": 0.0, "n": 0}

    # --- commands from the vessels' topics ---------------------------------------------------------------------
    def _subscribe_vessel(self, entry: VesselEntry, spec) -> None:
        """Command topics are named after the actuators of the vehicle file (ROS 2 name tokens cannot be bare
        numbers, so `thrusters/<name>/cmd` rather than an index)."""
        name = entry.name
        for i, thruster in enumerate(spec.thrusters):
            entry.subscriptions.append(
                self.create_subscription(
                    Float64,
                    f"{name}/thrusters/{thruster.name}/cmd",
                    lambda m, e=entry, k=i: self._live(e) and self._on_thruster(e.name, k, m.data),
                    10,
                    event_callbacks=QUIET_SUBSCRIPTION,
                )
            )
        for i, fin in enumerate(spec.fins):
            entry.subscriptions.append(
                self.create_subscription(
                    Float64,
                    f"{name}/fins/{fin.name}/cmd",
                    lambda m, e=entry, k=i: self._live(e) and self._on_fin(e.name, k, m.data),
                    10,
                    event_callbacks=QUIET_SUBSCRIPTION,
                )
            )
        entry.subscriptions.append(
            self.create_subscription(
                Wrench,
                f"{name}/cmd_wrench",
                lambda m, e=entry: self._live(e) and self._on_wrench(e.name, m),
                10,
                event_callbacks=QUIET_SUBSCRIPTION,  # lotusim_core.ros.endpoints: deleting thousands stays fast
            )
        )
        entry.odom_pub = self.create_publisher(Odometry, f"{name}/odom", 10, event_callbacks=QUIET_PUBLISHER)
        entry.odom_send = raw_publish(entry.odom_pub)
        if self._odom_sends is not None:  # the layout stands: only this row's publish function is new
            self._odom_sends[self.fleet.index(name)] = entry.odom_send

    def _live(self, entry: VesselEntry) -> bool:
        """Whether `entry` is still the vessel of its name: the endpoints of a deleted vessel live on for a moment
        (_delete), and a vessel created again under its name (maybe of another model) must not get its commands."""
        return self.vessels.get(entry.name) is entry

    def _reject(self, name: str, what: str, value) -> None:
        self.get_logger().warning(f"{name}: {what} command {value!r} rejected (not finite); keeping the last valid one")

    def _on_thruster(self, name: str, index: int, value: float) -> None:
        self._on_actuator(name, "thruster", index, value)

    def _on_fin(self, name: str, index: int, value: float) -> None:
        self._on_actuator(name, "fin", index, value)

    def _on_actuator(self, name: str, kind: str, index: int, value: float) -> None:
        """Hold a finite command for actuator `index` of vessel `name` (kind "thruster" or "fin")."""
        entry = self.vessels.get(name)
        if entry is None:
            return
        if not math.isfinite(value):
            self._reject(name, f"{kind} {index}", value)
            return
        if kind == "thruster":
            entry.thruster_cmd[index] = value
            self.fleet.set_thruster_commands(name, entry.thruster_cmd)
        else:
            entry.fin_cmd[index] = value
            self.fleet.set_fin_commands(name, entry.fin_cmd)

    def _on_wrench(self, name: str, msg: Wrench) -> None:
        if name not in self.vessels:
            return
        f, t = msg.force, msg.torque
        wrench_flu = np.array([f.x, f.y, f.z, t.x, t.y, t.z])
        if not np.all(np.isfinite(wrench_flu)):
            self._reject(name, "wrench", wrench_flu.tolist())
            return
        self.fleet.set_body_wrench(name, frames.twist_flu_to_frd(wrench_flu))

    # --- vessel management (from the MAS server) ------------------------------------------------------------
    def _on_command(self, request: WorkerCommand.Request, response: WorkerCommand.Response):
        poses = self._poses_of(request.items)
        response.results = [self._do_item(item, poses.get(i)) for i, item in enumerate(request.items)]
        if not self.run_limit.allowed(self.iteration, 1):  # held: show the new fleet now (the sensors learn of it)
            self._publish_fleet_state(divmod(self.sim_time_ns, 1_000_000_000))
        return response

    @staticmethod
    def _poses_of(items) -> dict[int, tuple | ValueError]:
        """Physics pose of each create and move item (NED position, NED<-FRD quaternion w x y z, FRD twist),
        converted for the whole request in one vectorised pass; item by item (and an item's ValueError as its
        entry) only if some pose of the request cannot be converted."""
        index = [i for i, item in enumerate(items) if item.command in (Item.CREATE, Item.MOVE)]
        try:
            return dict(zip(index, physics_poses([items[i].vessel for i in index]), strict=True))
        except ValueError:
            pass
        poses: dict[int, tuple | ValueError] = {}
        for i in index:
            try:
                poses[i] = physics_poses([items[i].vessel])[0]
            except ValueError as exc:
                poses[i] = exc
        return poses

    @staticmethod
    def _given_pose(pose: tuple | ValueError) -> tuple:
        """The pose converted with the request, or its conversion error raised."""
        if isinstance(pose, ValueError):
            raise pose
        return pose

    def _do_item(self, item: Item, pose: tuple | ValueError | None) -> ItemResult:
        name = item.vessel.name
        try:
            if item.command == Item.CREATE:
                return self._create(item.vessel, pose)
            if name not in self.vessels:
                return ItemResult(
                    name=name,
                    ok=False,
                    code=ItemResult.UNKNOWN_VESSEL,
                    reason=f"no vessel named {name!r} on worker {self.worker}",
                )
            if item.command == Item.DELETE:
                self._delete(name)
                return ItemResult(name=name, ok=True, code=ItemResult.OK)
            if item.command == Item.MOVE:
                position_ned, q_ned_frd, nu = self._given_pose(pose)
                self.fleet.set_pose(name, position_ned, q_ned_frd, nu)
                self._fleet_changed()
                return ItemResult(name=name, ok=True, code=ItemResult.OK, worker=self.worker)
            return ItemResult(
                name=name, ok=False, code=ItemResult.INTERNAL_ERROR, reason=f"unknown command {item.command}"
            )
        except (ValueError, KeyError) as exc:
            return ItemResult(name=name, ok=False, code=ItemResult.INVALID_POSE, reason=str(exc))

    def _create(self, vessel, pose: tuple | ValueError) -> ItemResult:
        name = vessel.name
        if problem := name_problem(name):
            return ItemResult(name=name, ok=False, code=ItemResult.INVALID_NAME, reason=problem)
        if name in self.vessels:
            return ItemResult(
                name=name,
                ok=False,
                code=ItemResult.DUPLICATE_NAME,
                reason=f"a vessel named {name!r} exists on worker {self.worker}",
            )
        try:
            spec = load_vehicle(vessel.model)
            if vessel.overrides_yaml.strip():
                spec = apply_overrides(spec, safe_yaml.load(vessel.overrides_yaml) or {})
        except FileNotFoundError as exc:
            return ItemResult(name=name, ok=False, code=ItemResult.UNKNOWN_MODEL, reason=str(exc))
        except (ValueError, yaml.YAMLError) as exc:
            return ItemResult(name=name, ok=False, code=ItemResult.INVALID_OVERRIDES, reason=str(exc))
        if problem := name_problem(name, [a.name for a in (*spec.thrusters, *spec.fins)]):
            return ItemResult(name=name, ok=False, code=ItemResult.INVALID_NAME, reason=problem)
        position_ned, q_ned_frd, nu = self._given_pose(pose)
        try:
            self.fleet.add(name, spec, position_ned, q_ned_frd, nu)
        except ValueError as exc:
            return ItemResult(name=name, ok=False, code=ItemResult.INTERNAL_ERROR, reason=str(exc))
        entry = VesselEntry(
            name=name,
            model=vessel.model,
            domain=spec.domain,
            overrides_yaml=vessel.overrides_yaml,
            thruster_cmd=np.zeros(len(spec.thrusters)),
            fin_cmd=np.zeros(len(spec.fins)),
        )
        self.vessels[name] = entry
        self._pending_endpoints[name] = None  # topics created by _create_pending_endpoints, in creation order
        self._fleet_changed()
        return ItemResult(name=name, ok=True, code=ItemResult.OK, worker=self.worker)

    def _create_pending_endpoints(self, budget_s: float = ENDPOINT_BUDGET_S) -> None:
        """Create the per-vessel topics of new vessels within a wall-time budget per call.

        Creating a DDS reader or writer costs about a millisecond here, and a vessel has several (one per
        actuator, the wrench, the odometry): 1,000 vessels would block the simulation for seconds. So a create
        returns as soon as the vessel is in the physics and the fleet state, and its topics appear over the
        next moments, in creation order (wait for them like for any ROS endpoint: get_subscription_count)."""
        deadline = time.perf_counter() + budget_s
        while self._doomed_endpoints and time.perf_counter() < deadline:  # a deleted vessel's, likewise
            self._destroy_endpoint(self._doomed_endpoints.pop())
        while self._pending_endpoints and time.perf_counter() < deadline:
            name = next(iter(self._pending_endpoints))
            del self._pending_endpoints[name]
            if name in self.vessels:
                self._subscribe_vessel(self.vessels[name], self.fleet.spec(name))

    def _delete(self, name: str) -> None:
        self._pending_endpoints.pop(name, None)
        entry = self.vessels.pop(name)
        self.fleet.remove(name)
        self._odom.forget(name)
        self._fleet_changed()
        # destroyed within the endpoint budget, as topics are created: about 8 ms each here, so destroying them
        # at once made a 5,000-vessel delete block the worker for a minute (a deleted vessel's callbacks find
        # no entry and do nothing)
        self._doomed_endpoints += entry.subscriptions
        if entry.odom_pub is not None:
            self._doomed_endpoints.append(entry.odom_pub)

    def _destroy_endpoint(self, endpoint) -> None:
        if isinstance(endpoint, Subscription):
            self.destroy_subscription(endpoint)
        else:
            self.destroy_publisher(endpoint)

    def _on_list(self, request: ListVessels.Request, response: ListVessels.Response):
        if not self.fleet.names:
            return response
        pos, quat, _, _ = self.fleet.state_enu()
        for i, name in enumerate(self.fleet.names):
            entry = self.vessels[name]
            info = VesselInfo(
                name=name,
                model=entry.model,
                domain=entry.domain,
                worker=self.worker,
                overrides_yaml=entry.overrides_yaml,
            )
            info.pose.position.x, info.pose.position.y, info.pose.position.z = pos[i].tolist()
            o = info.pose.orientation
            o.x, o.y, o.z, o.w = quat[i].tolist()
            info.status = VesselInfo.STATUS_FROZEN if self.fleet.frozen[i] else VesselInfo.STATUS_OK
            if self.fleet.frozen[i]:
                info.status_reason = entry.frozen_reason or "frozen by a physics fault"
            response.vessels.append(info)
        return response

    # --- lockstep -------------------------------------------------------------------------------------------
    def _on_step(self, request: Step.Request, response: Step.Response):
        if self.mode != "lockstep":
            response.message = f"worker {self.worker} runs in {self.mode} mode; /lotusim/step needs mode lockstep"
        else:
            requested = int(request.steps)
            response.success = self.advance(requested) == requested
            response.message = "" if response.success else self.run_limit.describe()
        response.sim_time = stamp_from_ns(self.sim_time_ns)
        response.iteration = self.iteration
        return response

    def _accept_step_for(self, _goal) -> GoalResponse:
        return GoalResponse.ACCEPT if self.mode == "lockstep" else GoalResponse.REJECT

    def _execute_step_for(self, goal_handle):
        total = int(goal_handle.request.steps)
        done = 0
        feedback = StepFor.Feedback()
        while done < total:
            if goal_handle.is_cancel_requested:
                goal_handle.canceled()
                return StepFor.Result(
                    success=False, message="canceled", steps_done=done, sim_time=stamp_from_ns(self.sim_time_ns)
                )
            chunk = min(total - done, 100)
            got = self.advance(chunk)
            done += got
            if got < chunk:  # held by run_until_s
                goal_handle.abort()
                return StepFor.Result(
                    success=False,
                    message=self.run_limit.describe(),
                    steps_done=done,
                    sim_time=stamp_from_ns(self.sim_time_ns),
                )
            feedback.steps_done, feedback.sim_time = done, stamp_from_ns(self.sim_time_ns)
            goal_handle.publish_feedback(feedback)
        goal_handle.succeed()
        return StepFor.Result(success=True, steps_done=done, sim_time=stamp_from_ns(self.sim_time_ns))

    # --- checkpoint / restore (data, not code: lotusim_physics.checkpoint) ------------------------------------
    def checkpoint(self) -> tuple[dict, dict]:
        """(meta, arrays) of everything needed to continue identically (lotusim_physics.checkpoint.capture)."""
        vessels = {n: (e.model, e.domain, e.overrides_yaml) for n, e in self.vessels.items()}
        return worker_checkpoint.capture(
            self.step_ns, self.iteration, self.fleet, vessels, self.environment_yaml, self._env_cache, self._env_next_ns
        )

    def restore(self, state: worker_checkpoint.WorkerState) -> None:
        """Swap in a checkpoint validated and rebuilt by lotusim_physics.checkpoint.load (nothing fails here)."""
        for name in list(self.vessels):
            self._delete(name)
        self.fleet = state.fleet
        self._fleet_changed()
        self.iteration = state.iteration
        self.environment, self.environment_yaml = state.environment, state.environment_yaml
        self._env_cache, self._env_next_ns = state.env_cache, state.env_next_ns  # held samples: exact continuation
        self._extras_version += 1
        for r in state.vessels:
            self.vessels[r.name] = VesselEntry(r.name, r.model, r.domain, r.overrides_yaml, r.thruster_cmd, r.fin_cmd)
            self._pending_endpoints[r.name] = None

    def _on_checkpoint(self, request: Checkpoint.Request, response: Checkpoint.Response):
        """SAVE / CHECK / RESTORE checkpoint NAME (request.path) in the checkpoint directory; a refusal leaves the
        worker unchanged and answers `file: key: reason`."""
        try:
            response.digest = worker_checkpoint.serve(
                self.checkpoint_dir, request.operation, request.path, self.worker, self.step_ns, self.checkpoint,
                self.restore,
            )  # fmt: skip
            response.success = True
        except Exception as exc:  # noqa: BLE001 - no file or request may take the worker down
            response.message = str(exc) if isinstance(exc, ValueError) else f"{type(exc).__name__}: {exc}"
        response.sim_time = stamp_from_ns(self.sim_time_ns)
        response.vessel_count = len(self.vessels)
        return response


def main(args: list[str] | None = None) -> None:
    """Entry point of `ros2 run lotusim dynamics`."""
    run_node_main(DynamicsWorker, args)


if __name__ == "__main__":
    main()
