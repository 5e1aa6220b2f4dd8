"""mas_server node: the fleet authority ([Buche2025] §III, the MAS plugin), ROS wiring over
lotusim_core.sim.fleet_registry.

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

from collections import deque

from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.clock import Clock, ClockType
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.task import Future

from lotusim_core.base.catalogue import describe_models
from lotusim_core.base.geodesy import GeodeticOrigin
from lotusim_core.ros.node_runner import run_node_main
from lotusim_core.ros.qos import LATCHED
from lotusim_core.sim import checkpoint_coordinator
from lotusim_core.sim.failover import Failover
from lotusim_core.sim.fleet_registry import FleetRegistry, PlannedItem
from lotusim_interfaces.action import FleetCommand
from lotusim_interfaces.msg import EnvironmentConfig, FleetCommandItem, ItemResult, SimStats, VesselInfo
from lotusim_interfaces.srv import Checkpoint, ListModels, ListVessels, WorkerCommand

# Requests sent to one worker before the first of them is answered: a service's request and answer queues hold
# 10 (rmw_qos_profile_services_default, KEEP_LAST), and the answers of a longer burst overwrite each other
# before they are read (lost: each cost command_timeout_s).
REQUESTS_IN_FLIGHT = 5
WORKER_WAIT_S = 300.0  # default of worker_wait_s: a cold start compiles the physics kernels (20 s to minutes)


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
        self._worker_clients: dict[str, dict] = {}
        self._worker_waiters: list[Future] = []
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
        self._answering: set[str] = set()  # workers that have answered a command
        self.create_service(ListVessels, "/lotusim/list_vessels", self._on_list_vessels, callback_group=self._group)
        self.create_service(ListModels, "/lotusim/list_models", self._on_list_models)
        # checkpoints by name in this directory (lotusim_core.base.checkpoint_store.checkpoint_dir; the workers' too)
        self.checkpoint_dir = str(self.declare_parameter("checkpoint_dir", "").value)
        self.create_service(Checkpoint, "/lotusim/checkpoint", self._on_checkpoint, callback_group=self._group)
        checkpoint_coordinator.sensor_client(self)  # matched with the sensor node's service before a checkpoint
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
    def _clients_of(self, worker: str) -> dict:
        if worker not in self._worker_clients:
            prefix = f"/lotusim/{worker}"
            self._worker_clients[worker] = {
                "command": self.create_client(WorkerCommand, f"{prefix}/command", callback_group=self._group),
                "list": self.create_client(ListVessels, f"{prefix}/list_vessels", callback_group=self._group),
                "checkpoint": self.create_client(Checkpoint, f"{prefix}/checkpoint", callback_group=self._group),
            }
        return self._worker_clients[worker]

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
            for waiter in self._worker_waiters:
                if not waiter.done():
                    waiter.set_result(True)
            self._worker_waiters.clear()
            self.get_logger().info(f"worker {msg.worker} found; reading back its {msg.vessel_count} vessels")
            self.executor.create_task(self._read_back(msg.worker))

    async def _read_back(self, worker: str) -> None:
        """Adopt a newly seen worker's vessels (registry rebuild after a restart). The client is new, which is
        when an answer is most likely lost: asked again every list_timeout_s, for a minute at most."""
        attempts = max(2, int(60.0 / max(self.list_timeout_s, 1.0)))
        reply = await self._ask_worker(worker, "list", ListVessels.Request(), self.list_timeout_s, attempts)
        if reply is None:
            self.get_logger().error(f"worker {worker} did not list its vessels: they are not in the registry")
            return
        for info in reply.vessels:
            self.registry.adopt(info.name, info.model, info.domain, worker)

    async def _ask_worker(self, worker: str, service: str, request, answer_s: float, attempts: int):
        """Call one of a worker's idempotent services (list, checkpoint), sending the request again when no
        answer came within answer_s of wall time (a lost answer, docs/simulation.md); None if none came."""
        client = self._clients_of(worker)[service]
        for _ in range(attempts):
            future = client.call_async(request)
            reply = (await self._ask_all({worker: future}, answer_s))[worker]
            if reply is not None:
                return reply
            client.remove_pending_request(future)
        return None

    # --- the bulk command action ------------------------------------------------------------------------------
    def _workers_missing(self) -> set[str]:
        """The expected workers that have not reported yet; {"any"} while no worker at all has."""
        if not self.registry.workers:
            return self.expected_workers or {"any"}
        return self.expected_workers - set(self.registry.workers)

    async def _wait_for_the_workers(self) -> None:
        """A goal that arrives before the workers reported (start-up) waits up to worker_wait_s of wall time for
        all of `expected_workers` (or for one, none being expected), saying so every 5 s: planned over the
        workers known at once, a scenario's spawn would put every vessel on the first worker to report. At the
        limit, it goes on with the workers it knows, or, knowing none, an error names the parameter (the goal's
        items are then refused)."""
        if not self._workers_missing() or self.worker_wait_s <= 0:
            return
        log, steady = self.get_logger(), Clock(clock_type=ClockType.STEADY_TIME)
        start = steady.now()

        def waited_s() -> float:
            return (steady.now() - start).nanoseconds * 1e-9

        def progress() -> None:
            missing = self._workers_missing()
            what = "a dynamics worker" if missing == {"any"} else f"dynamics workers ({', '.join(sorted(missing))})"
            log.info(f"fleet command: waiting for {what}, {waited_s():.0f} of {self.worker_wait_s:.0f} s")

        timer = self.create_timer(5.0, progress, clock=steady)
        while self._workers_missing() and waited_s() < self.worker_wait_s:
            waiter = Future()
            self._worker_waiters.append(waiter)
            await self._await_at_most(waiter, self.worker_wait_s - waited_s())
        self.destroy_timer(timer)
        if not self.registry.workers:
            log.error(
                f"no dynamics worker reported on /lotusim/stats within {self.worker_wait_s:.0f} s "
                "(parameter worker_wait_s): the fleet command's items are refused"
            )
        elif missing := self._workers_missing():
            log.warning(
                f"{', '.join(sorted(missing))} did not report within {self.worker_wait_s:.0f} s (parameter "
                f"worker_wait_s): the fleet command goes to {', '.join(sorted(self.registry.workers))}"
            )

    async def _await_at_most(self, future: Future, timeout_s: float) -> None:
        """Await `future`, resolving it with False after timeout_s of wall time if nothing resolved it before."""
        timer = self.create_timer(
            timeout_s, lambda: future.done() or future.set_result(False), clock=Clock(clock_type=ClockType.STEADY_TIME)
        )
        await future
        self.destroy_timer(timer)

    async def _execute(self, goal_handle):
        await self._wait_for_the_workers()
        items = goal_handle.request.items
        total = len(items)
        results: list[ItemResult | None] = [None] * total
        plan = self.registry.plan(items)  # validated, names assigned, poses in ENU, workers chosen
        for index, result in plan.refused.items():
            results[index] = result
        feedback = FleetCommand.Feedback(total=total)
        done = len(plan.refused)
        in_flight: deque[tuple[list[PlannedItem], Future | None]] = deque()

        async def finish_oldest() -> None:
            nonlocal done
            batch, future = in_flight.popleft()
            await self._record_batch(batch, future, results)
            done += len(batch)
            feedback.done, feedback.failed = done, sum(1 for r in results if r is not None and not r.ok)
            goal_handle.publish_feedback(feedback)

        def must_wait(batch: list[PlannedItem]) -> bool:
            items = sum(len(b) for b, _ in in_flight) + len(batch)
            requests = sum(1 for b, _ in in_flight if b[0].worker == batch[0].worker)
            return items > max(self.max_in_flight, 1) or requests >= REQUESTS_IN_FLIGHT

        for batch in plan.batches(self.batch_size):
            while in_flight and must_wait(batch):
                await finish_oldest()
            if goal_handle.is_cancel_requested:
                break
            in_flight.append((batch, self._send_batch(batch)))
        while in_flight:
            await finish_oldest()
        self.registry.release(plan)
        canceled = goal_handle.is_cancel_requested
        for index, result in enumerate(results):
            if result is None:
                results[index] = ItemResult(
                    name=items[index].vessel.name,
                    ok=False,
                    code=ItemResult.CANCELED,
                    reason="goal canceled before this item was carried out",
                )
        succeeded = sum(1 for r in results if r.ok)
        if canceled:
            goal_handle.canceled()
        else:
            goal_handle.succeed()
        return FleetCommand.Result(results=results, succeeded=succeeded, failed=total - succeeded)

    def _send_batch(self, batch: list[PlannedItem]) -> Future | None:
        """Send one batch (items of one worker, in order) without waiting: the reply's future, or None if the
        worker's command service is not there."""
        worker = batch[0].worker
        if self.failover.health.is_down(worker):
            return None
        client = self._clients_of(worker)["command"]
        # Only the first command to a worker checks that its service is matched: rclpy's wait_for_service
        # blocks this (single) executor thread in 0.25 s sleeps, and while a worker creates thousands of topics
        # the graph can take seconds to confirm it (a 1,000-vessel spawn took 5-14 s instead of 0.5 s).
        ready = worker in self._answering or client.service_is_ready() or client.wait_for_service(timeout_sec=5.0)
        if not ready:
            return None
        return client.call_async(WorkerCommand.Request(items=[p.item for p in batch]))

    async def _record_batch(self, batch: list[PlannedItem], future: Future | None, results: list) -> None:
        """Wait for a batch's reply (at most command_timeout_s) and record the worker's answers in the registry;
        a worker that does not answer gets the batch's items refused (NO_WORKER)."""
        worker = batch[0].worker
        if future is None and self.failover.settle_if_down(batch, results):
            return
        reply = None if future is None else (await self._ask_all({worker: future}, self.command_timeout_s))[worker]
        if reply is None:
            self._answering.discard(worker)
            await self._settle_unanswered(batch, results)
            return
        self._answering.add(worker)
        for planned, result in zip(batch, reply.results, strict=True):
            results[planned.index] = result
            if result.ok:
                self._commit(planned)

    def _commit(self, planned: PlannedItem) -> None:
        self.registry.commit(planned)
        self.failover.committed(planned)

    async def _settle_unanswered(self, batch: list[PlannedItem], results: list) -> None:
        """A batch its worker did not answer: the worker may have carried it out and its answer been lost (a
        service answer is dropped while discovery is still matching, docs/simulation.md), so its vessel list is
        read back: a create whose vessel is there and a delete whose vessel is gone are done (and recorded, or
        the registry would lose vessels); the rest get NO_WORKER."""
        worker = batch[0].worker
        listing = await self._ask_worker(worker, "list", ListVessels.Request(), self.list_timeout_s, 2)
        present = None if listing is None else {info.name for info in listing.vessels}
        for planned in batch:
            name, command = planned.item.vessel.name, planned.item.command
            done = present is not None and (
                (command == FleetCommandItem.CREATE and name in present)
                or (command == FleetCommandItem.DELETE and name not in present)
            )
            if done:
                self._commit(planned)
                results[planned.index] = ItemResult(
                    name=name, ok=True, code=ItemResult.OK, worker="" if command == FleetCommandItem.DELETE else worker
                )
                continue
            reason = f"worker {worker} does not answer"
            if present is not None and command == FleetCommandItem.MOVE:
                reason += " (the move may have been carried out)"
            results[planned.index] = ItemResult(name=name, ok=False, code=ItemResult.NO_WORKER, reason=reason)

    # --- services -------------------------------------------------------------------------------------------
    async def _on_list_vessels(self, request: ListVessels.Request, response: ListVessels.Response):
        """The registry's vessels (of one worker if asked) with the poses and status their workers report now;
        the workers are asked in parallel, and one that does not answer within list_timeout_s leaves its
        vessels listed with a status_reason saying so."""
        workers = sorted(w for w in self.registry.workers if not request.worker or w == request.worker)
        workers = [w for w in workers if not self.failover.health.is_down(w)]
        replies = await self._ask_all(
            {w: self._clients_of(w)["list"].call_async(ListVessels.Request()) for w in workers}, self.list_timeout_s
        )
        reported = {info.name: info for reply in replies.values() if reply is not None for info in reply.vessels}
        for entry in self.registry.entries():
            if request.worker and entry.worker != request.worker:
                continue
            info = VesselInfo(name=entry.name, model=entry.model, domain=entry.domain, worker=entry.worker)
            if self.failover.listed(info):
                pass
            elif entry.name in reported:
                info.pose, info.status = reported[entry.name].pose, reported[entry.name].status
                info.status_reason = reported[entry.name].status_reason
                info.overrides_yaml = reported[entry.name].overrides_yaml
            else:
                info.status_reason = (
                    f"pose unknown: worker {entry.worker} did not answer within {self.list_timeout_s} s"
                )
            response.vessels.append(info)
        return response

    async def _ask_all(self, futures: dict, timeout_s: float) -> dict:
        """Await service futures together for at most timeout_s of wall time: key -> reply (None if late)."""
        everything = Future()

        def check(_future=None) -> None:
            if not everything.done() and all(f.done() for f in futures.values()):
                everything.set_result(True)

        for future in futures.values():
            future.add_done_callback(check)
        check()
        await self._await_at_most(everything, timeout_s)
        return {key: f.result() if f.done() else None for key, f in futures.items()}

    def _on_list_models(self, request: ListModels.Request, response: ListModels.Response):
        for name, domain, description in describe_models():
            response.models.append(name)
            response.domains.append(domain)
            response.descriptions.append(description)
        return response

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
