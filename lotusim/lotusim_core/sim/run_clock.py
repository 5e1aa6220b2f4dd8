"""How `lotusim run` drives sim time: held at 0 until the scenario is spawned, then run to `--duration` exactly.

The clock master starts with `run_until_s: 0` (lotusim_physics.run_limit), so no step is integrated while the
nodes start, the vessels are spawned and the recorder subscribes: every run starts at sim time 0 with its whole
fleet. RunClock then sets `run_until_s` through the master's parameter service:
- to `--duration` at once (or no limit without one): the worker stops at the first step at or after it, in
  every mode (in lockstep, the steps requested by others are cut there);
- or, for a recorded fast run (`paced`), in chunks of about `chunk_s` of sim time, each raised only once every
  worker's fleet state at the end of the previous chunk has arrived: the outputs come in bursts the recorder
  can take, so it misses nothing (a free-running fast worker publishes faster than any subscriber reads).
Sim time is read from the fleet states' stamps (per worker) and from the master's answers to a `/lotusim/step`
of 0 steps (which changes nothing, in any mode); lotusim run itself does not use sim time and never subscribes
to `/clock`.
"""

from __future__ import annotations

import dataclasses
import struct
import time

from lotusim_core.sim.launch_plan import NodeSpec

PARAMETER = "run_until_s"  # lotusim_physics.run_limit.PARAMETER (not imported: no physics in the CLI)
QUERY_PERIOD_S = 0.1  # wall time between two sim-time queries to the master
PACED_CHUNK_S = 1.0  # sim time released at once in a recorded fast run
PACED_QUIET_S = 0.01  # ... once the recorded topics have caught up and nothing came for this wall time ...
PACED_WAIT_S = 5.0  # ... or this long after the chunk's fleet states came (a topic that fell silent)
WORKER_TOPICS = ("/lotusim/fleet_state", "/lotusim/stats")  # paced by the fleet state, stats by wall time
LOCKSTEP_NOTE = (
    "lotusim: lockstep: waiting for /lotusim/step or /lotusim/step_for calls (sim time advances only when asked: "
    "Step.srv, N steps, or the StepFor action; Ctrl-C to stop; with --duration, steps stop at it and the run "
    "ends there)"
)


def held(specs: list[NodeSpec], master: str) -> list[NodeSpec]:
    """The node specs with the clock master `master` held at sim time 0 (parameter run_until_s = 0)."""
    return [
        dataclasses.replace(s, parameters={**s.parameters, PARAMETER: 0.0}) if s.name == master else s for s in specs
    ]


def fleet_state_head(raw: bytes) -> tuple[int, str]:
    """(header stamp in ns, worker) of a serialized lotusim_interfaces/FleetState (CDR, little endian): the
    encapsulation header, header.stamp (int32 sec, uint32 nanosec), header.frame_id, then worker."""
    sec, nanosec = struct.unpack_from("<iI", raw, 4)
    offset = 12
    (length,) = struct.unpack_from("<I", raw, offset)
    offset += 4 + length
    offset += -(offset - 4) % 4  # CDR alignment counts from the end of the encapsulation header
    (length,) = struct.unpack_from("<I", raw, offset)
    worker = raw[offset + 4 : offset + 4 + length - 1].decode()
    return sec * 1_000_000_000 + nanosec, worker


def until_iteration(duration_s: float, step_ns: int) -> int | None:
    """The iteration of the first step at or after `duration_s` (None: no limit, duration 0)."""
    return -(-round(duration_s * 1e9) // step_ns) if duration_s > 0 else None


class RunClock:
    """Holds, releases and paces the clock master `master_node` (worker `master_worker`) of workers `workers`,
    which step `step_s` and publish their fleet state every `fleet_state_every` steps."""

    def __init__(
        self,
        node,
        spin_once,
        master_node: str,
        workers: list[str],
        step_s: float,
        fleet_state_every: int,
    ) -> None:
        from rcl_interfaces.srv import SetParameters

        from lotusim_core.ros.qos import LATCHED
        from lotusim_interfaces.msg import EnvironmentConfig
        from lotusim_interfaces.srv import Step

        self._node, self._spin_once = node, spin_once
        self.environment_revision: int | None = None  # of the latest /lotusim/environment seen
        node.create_subscription(
            EnvironmentConfig,
            "/lotusim/environment",
            lambda m: setattr(self, "environment_revision", m.revision),
            LATCHED,
        )
        self._set = node.create_client(SetParameters, f"/{master_node}/set_parameters")
        self._step = node.create_client(Step, "/lotusim/step")
        self.master_worker = workers[0]
        self.workers = list(workers)
        self.step_ns = round(step_s * 1e9)
        self.fleet_state_every = max(1, fleet_state_every)
        self.state_iteration: dict[str, int] = {}  # per worker: its newest fleet state's iteration
        self.master_iteration = 0  # the master's newest known iteration
        self.target: int | None = None  # the last iteration of the run (None: until Ctrl-C)
        self.chunk: int | None = None  # steps per release when paced
        self.released = 0  # the iteration the master may run to (-1: no limit)
        self._query = None
        self._next_query = 0.0
        self.recorder = None  # the BagRecorder of a paced run (set by lotusim run)
        self._complete_since: float | None = None
        self._started = False
        self._rerelease = False  # the master was restarted (held at 0 again by its spec): release it again

    # --- inputs -------------------------------------------------------------------------------------------
    def on_fleet_state(self, raw: bytes) -> None:
        stamp_ns, worker = fleet_state_head(raw)
        iteration = stamp_ns // self.step_ns
        if iteration > self.state_iteration.get(worker, -1):
            self.state_iteration[worker] = iteration
        if worker == self.master_worker and iteration > self.master_iteration:
            self.master_iteration = iteration

    @property
    def sim_time_s(self) -> float:
        return self.master_iteration * self.step_ns * 1e-9

    # --- control ------------------------------------------------------------------------------------------
    def wait_ready(self, timeout_s: float, spin_until, stats: dict) -> None:
        """The master's services are up and every worker applies the published environment (its SimStats in
        `stats`, by worker, report that revision): released earlier, a worker that got the latched environment
        late (a loaded machine) would apply it at some random sim time and the run would not be reproducible."""
        try:
            spin_until(
                lambda: self.environment_revision is not None, timeout_s, "no environment on /lotusim/environment"
            )
        except TimeoutError as exc:  # say what the graph shows: no publisher (its node down), or one not heard
            publishers = [i.node_name for i in self._node.get_publishers_info_by_topic("/lotusim/environment")]
            raise TimeoutError(
                f"{exc}; its publishers in the graph: {', '.join(publishers) or 'none'} (the scenario's "
                "current_server publishes it, latched; its log says why if it stopped)"
            ) from None

        def applied() -> bool:
            return all(w in stats and stats[w].environment_revision >= self.environment_revision for w in self.workers)

        try:
            spin_until(applied, timeout_s, "the dynamics workers did not apply the environment")
        except TimeoutError as exc:
            reported = {w: (stats[w].environment_revision if w in stats else "no stats") for w in self.workers}
            raise TimeoutError(
                f"{exc}: revision {self.environment_revision} published, the workers report {reported} "
                "(a worker that refused it says why in its log)"
            ) from None
        spin_until(self._set.service_is_ready, timeout_s, "the clock master's parameter service did not come up")
        spin_until(self._step.service_is_ready, timeout_s, "/lotusim/step did not come up")

    def start(self, duration_s: float, chunk_s: float | None = None, with_vessels: set[str] | None = None) -> None:
        """Release the held master: to `duration_s` (0: no limit) at once, or in chunks of about `chunk_s`.
        with_vessels: the workers that hold vessels (a worker without any publishes no fleet state)."""
        self._started = True
        if with_vessels is not None:
            self.workers = [w for w in self.workers if w in with_vessels]
        self.target = until_iteration(duration_s, self.step_ns)
        if chunk_s:
            per_state = self.fleet_state_every
            self.chunk = per_state * max(1, round(chunk_s * 1e9 / (self.step_ns * per_state)))
            self._release(self.chunk if self.target is None else min(self.chunk, self.target))
        else:
            self._release(-1 if self.target is None else self.target)

    def _release(self, iteration: int) -> None:
        """Set the master's run_until_s to the sim time of `iteration` (-1: no limit)."""
        from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue
        from rcl_interfaces.srv import SetParameters

        from lotusim_core.ros import reliable_calls

        value = -1.0 if iteration < 0 else iteration * self.step_ns * 1e-9
        request = SetParameters.Request(
            parameters=[
                Parameter(name=PARAMETER, value=ParameterValue(type=ParameterType.PARAMETER_DOUBLE, double_value=value))
            ]
        )
        # setting the same value twice is harmless: asked again if an answer is lost
        response = reliable_calls.call_read_only(self._set, request, self._spin_once, answer_s=1.0)
        if not response.results[0].successful:
            raise RuntimeError(f"{self._set.srv_name}: {PARAMETER} = {value}: {response.results[0].reason}")
        self.released = iteration

    def master_restarted(self) -> None:
        """The clock master died and was started again: its spec holds it at 0 (held()), so once its parameter
        service answers, poll() releases it again to where the run was released (it resumes the sim time)."""
        self._rerelease = self._started

    def poll(self) -> bool:
        """Query the master's sim time now and then, release the next chunk when the current one is complete;
        True once the run has reached its target."""
        if self._rerelease and self._set.service_is_ready():
            try:
                self._release(self.released)
                self._rerelease = False
            except TimeoutError:  # the dead master's service can linger in the graph: asked again next poll
                pass
        self._maybe_query()
        if self.released < 0 or not self._complete(self.released):
            return False
        if self.target is not None and self.released >= self.target:
            return True
        if self.chunk is not None and not self._settled():
            return False
        if self.chunk is not None:
            self._complete_since = None
            end = self.released + self.chunk
            self._release(end if self.target is None else min(end, self.target))
        return False

    def _settled(self) -> bool:
        """A complete chunk's derived outputs (the sensors) recorded: every recorded topic active in the last
        two chunks has caught up with the chunk's end and nothing came for PACED_QUIET_S; or PACED_WAIT_S
        passed. The next chunk's fleet states then do not pile up behind them in the sensor node's queue."""
        now = time.monotonic()
        if self._complete_since is None:
            self._complete_since = now
        return now - self._complete_since >= PACED_WAIT_S or self.caught_up()

    def caught_up(self) -> bool:
        """Every recorded topic active in the last two chunks has caught up with the released sim time, and
        nothing came for PACED_QUIET_S (True without a recorder)."""
        if self.recorder is None:
            return True
        end_ns = self.released * self.step_ns
        since_ns = (self.released - 2 * (self.chunk or self.released)) * self.step_ns
        caught_up = not self.recorder.behind(end_ns, since_ns, WORKER_TOPICS)
        return caught_up and time.monotonic() - self.recorder.last_message_wall >= PACED_QUIET_S

    def _complete(self, iteration: int) -> bool:
        """The master is at `iteration` and every worker's (with vessels) fleet state of its last due step has
        come."""
        if self.master_iteration < iteration:
            return False
        last_state = iteration // self.fleet_state_every * self.fleet_state_every
        return all(self.state_iteration.get(w, -1) >= last_state for w in self.workers)

    def _maybe_query(self) -> None:
        """Ask the master for its iteration (a Step of 0 steps) unless a question is pending."""
        from lotusim_interfaces.srv import Step

        now = time.monotonic()
        if self._query is not None:
            if self._query.done():
                self.master_iteration = max(self.master_iteration, int(self._query.result().iteration))
                self._query = None
            elif now > self._next_query + 2.0:  # answer lost: ask again
                self._step.remove_pending_request(self._query)
                self._query = None
        if self._query is None and now >= self._next_query:
            self._query = self._step.call_async(Step.Request(steps=0))
            self._next_query = now + QUERY_PERIOD_S


def vessels_with_sensors(plan) -> set[str]:
    """The plan's vessels that carry at least one sensor (catalogue suite merged with the vessel's overrides)."""
    from lotusim_core.base.catalogue import load_vehicle
    from lotusim_sensors.suite import merge_sensors, parse_suite

    specs: dict[str, object] = {}
    out = set()
    for vessel in plan.vessels:
        spec = specs.setdefault(vessel.model, load_vehicle(vessel.model))
        if parse_suite(merge_sensors(spec.sensors, vessel.sensors or None), f"vessel {vessel.name}"):
            out.add(vessel.name)
    return out


def sensors_set_up(node, vessels: set[str], sensor_node: str = "sensor_publisher", expected: bool = False) -> bool:
    """Whether the sensor node has created the topics of every vessel of `vessels` (it creates a vessel's
    sensor topics all at once, when its worker's roster or a fleet state first lists the vessel). expected: the
    run started that node, so a node not (yet) in the graph is one still starting, not one that does not exist."""
    return not sensors_missing(node, vessels, sensor_node, expected)


def sensors_missing(node, vessels: set[str], sensor_node: str = "sensor_publisher", expected: bool = False) -> set:
    """The vessels of `vessels` whose sensor topics the sensor node has not created (all of them while the node
    is not in the graph and `expected`; none when there is no such node and it is not expected)."""
    if (sensor_node, "/") not in node.get_node_names_and_namespaces():
        return set(vessels) if expected else set()
    try:
        topics = node.get_publisher_names_and_types_by_node(sensor_node, "/")
    except Exception:  # noqa: BLE001 - rclpy raises NodeNameNonExistentError for a node gone meanwhile
        return set(vessels)
    return vessels - {name.split("/")[1] for name, _ in topics if name.count("/") >= 2}
