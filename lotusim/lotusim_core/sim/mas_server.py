"""mas_server node: the fleet authority ([Buche2025] §III, the MAS plugin), ROS wiring over
lotusim_core.sim.fleet_registry (vessels, planning), .fleet_goal (a goal's results, batches in flight, listings)
and .worker_calls (the workers' services, answers awaited and asked again).

- /lotusim/fleet_command (lotusim_interfaces/action/FleetCommand): bulk create / delete / move. Every item gets
  its own result; invalid items are refused with a reason while the others go through; feedback after each
  batch; cancel stops at the next batch boundary (remaining items: CANCELED).
- /lotusim/list_vessels, /lotusim/list_models (services). Poses in a listing are read from the workers when
  asked (their list_vessels): the mas_server stays off the fleet_state stream, which costs a fleet-sized
  message per step to every subscriber.
- /lotusim/checkpoint (Checkpoint): save / restore / list checkpoints of the whole simulation by name (every
  worker's state, then the registry; lotusim_core.sim.checkpoint_coordinator).
Vessels are assigned to dynamics workers (least loaded, or the worker an item asks for). Workers are found
from /lotusim/stats; when a worker is first seen its vessels are read back (/lotusim/<worker>/list_vessels),
so a restarted mas_server rebuilds its registry and loses nothing.
"""

from __future__ import annotations

from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.task import Future

from lotusim_core.base.catalogue import describe_models
from lotusim_core.base.geodesy import GeodeticOrigin
from lotusim_core.ros.node_runner import run_node_main
from lotusim_core.ros.qos import LATCHED
from lotusim_core.sim import checkpoint_coordinator, fleet_goal
from lotusim_core.sim.failover import Failover
from lotusim_core.sim.fleet_registry import FleetRegistry, PlannedItem
from lotusim_core.sim.worker_calls import WorkerCalls
from lotusim_core.sim.worker_health import WORKER_WAIT_S
from lotusim_interfaces.action import FleetCommand
from lotusim_interfaces.msg import EnvironmentConfig, SimStats
from lotusim_interfaces.srv import Checkpoint, ListModels, ListVessels, WorkerCommand


class MasServer(Node):
    """ROS wiring of the fleet registry: the bulk command action, listings, checkpoints, worker discovery."""

    def __init__(self, **node_kwargs) -> None:
        super().__init__("mas_server", **node_kwargs)
        origin = GeodeticOrigin(
            latitude_deg=float(self.declare_parameter("origin_latitude_deg", 48.3904).value),
            longitude_deg=float(self.declare_parameter("origin_longitude_deg", -4.4861).value),
            altitude_m=0.0,
        )
        self.batch_size = int(self.declare_parameter("batch_size", 250).value)
        # batches sent before the first of them is answered (items): they reach a worker before it starts
        # creating the new vessels' topics, whose discovery traffic delays later requests (docs/performance.md)
        self.max_in_flight = int(self.declare_parameter("max_in_flight", 1000).value)
        self.registry = FleetRegistry(origin, max_vessels=int(self.declare_parameter("max_vessels", 10_000).value))
        self._group = ReentrantCallbackGroup()
        self.calls = WorkerCalls(self, self._group)  # the workers' services (lotusim_core.sim.worker_calls)
        # a goal sent before any worker reported waits this long (wall s): a cold worker compiles its kernels
        self.worker_wait_s = float(self.declare_parameter("worker_wait_s", WORKER_WAIT_S).value)
        # the workers a start-up goal waits for (the scenario's; none given: the first that reports)
        expected = self.declare_parameter("expected_workers", [""]).value
        self.expected_workers = {w for w in expected if w}
        self.create_subscription(SimStats, "/lotusim/stats", self._on_stats, 10)
        self.create_subscription(EnvironmentConfig, "/lotusim/environment", self._on_environment, LATCHED)
        self.list_timeout_s = float(self.declare_parameter("list_timeout_s", 5.0).value)
        # a worker that does not answer a command within this wall time gets its items refused (NO_WORKER)
        self.command_timeout_s = float(self.declare_parameter("command_timeout_s", 60.0).value)
        self.create_service(ListVessels, "/lotusim/list_vessels", self._on_list_vessels, callback_group=self._group)
        self.create_service(ListModels, "/lotusim/list_models", self._on_list_models)
        # checkpoints by name in this directory (lotusim_core.base.checkpoint_store.checkpoint_dir; the workers' too)
        self.checkpoint_dir = str(self.declare_parameter("checkpoint_dir", "").value)
        self.create_service(Checkpoint, "/lotusim/checkpoint", self._on_checkpoint, callback_group=self._group)
        # made now: matched with the sensor node's service before a checkpoint (checkpoint_coordinator)
        self.sensor_checkpoint = self.create_client(
            Checkpoint, "/lotusim/sensors/checkpoint", callback_group=self._group
        )
        self._action = ActionServer(
            self,
            FleetCommand,
            "/lotusim/fleet_command",
            execute_callback=self._execute,
            goal_callback=lambda _goal: GoalResponse.ACCEPT,
            cancel_callback=lambda _goal: CancelResponse.ACCEPT,
            callback_group=self._group,
        )
        self.failover = Failover(self)  # dead workers: status in listings, no creates, vessels restored

    # --- workers --------------------------------------------------------------------------------------------
    def _on_environment(self, msg: EnvironmentConfig) -> None:
        """The environment's sea floor, to refuse creates at or below it (as the scenario loader does)."""
        try:
            self.registry.set_environment(msg.config_yaml)
        except Exception as exc:  # noqa: BLE001 - a bad configuration must not stop the server
            self.get_logger().error(f"environment revision {msg.revision} ignored: {exc}")

    def _on_stats(self, msg: SimStats) -> None:
        if msg.worker:
            self.failover.on_stats(msg.worker, msg.wall_time_s, msg.vessel_count, msg.sim_time_s)
        if msg.worker and msg.worker not in self.registry.workers:
            self.registry.add_worker(msg.worker)
            self.calls.worker_found()
            self.get_logger().info(f"worker {msg.worker} found; reading back its {msg.vessel_count} vessels")
            self.executor.create_task(self._read_back(msg.worker))

    async def _read_back(self, worker: str) -> None:
        """Adopt a newly seen worker's vessels (registry rebuild after a restart). The client is new, which is
        when an answer is most likely lost: asked again every list_timeout_s, for a minute at most."""
        attempts = max(2, int(60.0 / max(self.list_timeout_s, 1.0)))
        reply = await self.calls.ask_worker(worker, "list", ListVessels.Request(), self.list_timeout_s, attempts)
        if reply is None:
            self.get_logger().error(f"worker {worker} did not list its vessels: they are not in the registry")
            return
        for info in reply.vessels:
            self.registry.adopt(info.name, info.model, info.domain, worker)

    # --- the bulk command action ------------------------------------------------------------------------------
    async def _execute(self, goal_handle):
        """Carry a goal out (lotusim_core.sim.fleet_goal): plan it, send its batches, record the answers."""
        await self.calls.wait_for_workers(lambda: self.registry.workers, self.expected_workers, self.worker_wait_s)
        items = goal_handle.request.items
        plan = self.registry.plan(items)  # validated, names assigned, poses in ENU, workers chosen
        ledger = fleet_goal.GoalLedger(items, plan)

        async def finish(batch: list[PlannedItem], future: Future | None) -> None:
            await self._record_batch(batch, future, ledger)

        await fleet_goal.carry_out(
            plan,
            ledger,
            self._send_batch,
            finish,
            batch_size=self.batch_size,
            max_in_flight=self.max_in_flight,
            canceled=lambda: goal_handle.is_cancel_requested,
            progress=lambda: goal_handle.publish_feedback(ledger.feedback()),
        )
        self.registry.release(plan)
        if goal_handle.is_cancel_requested:
            goal_handle.canceled()
        else:
            goal_handle.succeed()
        return ledger.close()

    def _send_batch(self, batch: list[PlannedItem]) -> Future | None:
        """Send one batch (items of one worker, in order) without waiting: the reply's future, or None if the
        worker's command service is not there."""
        worker = batch[0].worker
        if self.failover.health.is_down(worker):
            return None
        client = self.calls.clients_of(worker)["command"]
        # Only the first command to a worker checks that its service is matched: rclpy's wait_for_service
        # blocks this (single) executor thread in 0.25 s sleeps, and while a worker creates thousands of topics
        # the graph can take seconds to confirm it (a 1,000-vessel spawn took 5-14 s instead of 0.5 s).
        ready = worker in self.calls.answering or client.service_is_ready() or client.wait_for_service(timeout_sec=5.0)
        if not ready:
            return None
        return client.call_async(WorkerCommand.Request(items=[p.item for p in batch]))

    async def _record_batch(self, batch: list[PlannedItem], future: Future | None, ledger) -> None:
        """Wait for a batch's reply (at most command_timeout_s) and record the worker's answers in the registry;
        a batch not answered is settled from the worker's vessel list (fleet_goal.GoalLedger.settle_unanswered)."""
        worker = batch[0].worker
        if future is None and self.failover.settle_if_down(batch, ledger.results):
            return
        reply = None if future is None else (await self.calls.ask_all({worker: future}, self.command_timeout_s))[worker]
        if reply is None:
            self.calls.answering.discard(worker)
            listing = await self.calls.ask_worker(worker, "list", ListVessels.Request(), self.list_timeout_s, 2)
            present = None if listing is None else {info.name for info in listing.vessels}
            done = ledger.settle_unanswered(batch, present)
        else:
            self.calls.answering.add(worker)
            done = ledger.record(batch, reply.results)
        for planned in done:
            self.commit(planned)

    def commit(self, planned: PlannedItem) -> None:
        """A planned item done: in the registry, and in the failover's memory of the vessels."""
        self.registry.commit(planned)
        self.failover.committed(planned)

    # --- services -------------------------------------------------------------------------------------------
    async def _on_list_vessels(self, request: ListVessels.Request, response: ListVessels.Response):
        """The registry's vessels (of one worker if asked) with the poses and status their workers report now;
        the workers are asked in parallel, and one that does not answer within list_timeout_s leaves its
        vessels listed with a status_reason saying so."""
        workers = sorted(w for w in self.registry.workers if not request.worker or w == request.worker)
        workers = [w for w in workers if not self.failover.health.is_down(w)]
        replies = await self.calls.ask_all(
            {w: self.calls.clients_of(w)["list"].call_async(ListVessels.Request()) for w in workers},
            self.list_timeout_s,
        )
        reported = {info.name: info for reply in replies.values() if reply is not None for info in reply.vessels}
        entries = self.registry.entries()
        response.vessels = fleet_goal.listing(
            entries, request.worker, reported, self.failover.listed, self.list_timeout_s
        )
        return response

    def _on_list_models(self, request: ListModels.Request, response: ListModels.Response):
        for name, domain, description in describe_models():
            response.models.append(name)
            response.domains.append(domain)
            response.descriptions.append(description)
        return response

    def destroy_node(self) -> None:
        self.failover.close()
        super().destroy_node()

    async def _on_checkpoint(self, request: Checkpoint.Request, response: Checkpoint.Response):
        """Save / restore / list checkpoints of every worker by name (lotusim_core.sim.checkpoint_coordinator)."""
        return await checkpoint_coordinator.handle(self, request, response)


def main(args: list[str] | None = None) -> None:
    """Entry point of `ros2 run lotusim mas_server`.

    The single-threaded executor, not the events executor of the other nodes: the events executor re-queues a
    coroutine that awaits a future at once, so the MAS server used a whole CPU while waiting for a worker's answer
    (measured 100 % over a 5 s wait, 1 % with this executor); its few entities make the wait set cheap."""
    run_node_main(MasServer, args, executor_factory=SingleThreadedExecutor)


if __name__ == "__main__":
    main()
