"""The MAS server's calls to its dynamics workers (ROS side): each worker's service clients, service futures awaited
together under a wall-time limit, a read-only call asked again when its answer is lost, and a goal's wait for the
workers at start-up. Used by lotusim_core.sim.mas_server, .failover and .checkpoint_coordinator from coroutines
of the MAS server's executor.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from rclpy.callback_groups import CallbackGroup
from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from rclpy.task import Future

from lotusim_core.sim.fleet_goal import gave_up_text, missing_workers, waiting_text
from lotusim_interfaces.srv import Checkpoint, ListVessels, WorkerCommand


class WorkerCalls:
    """Clients of /lotusim/<worker>/{command, list_vessels, checkpoint} for one node, made on first use."""

    def __init__(self, node: Node, group: CallbackGroup) -> None:
        self.node, self.group = node, group
        self._clients: dict[str, dict] = {}
        self.answering: set[str] = set()  # workers that have answered a command (their service is matched)
        self._worker_waiters: list[Future] = []

    def clients_of(self, worker: str) -> dict:
        """{"command", "list", "checkpoint"} -> the worker's service client."""
        if worker not in self._clients:
            prefix, node, group = f"/lotusim/{worker}", self.node, self.group
            self._clients[worker] = {
                "command": node.create_client(WorkerCommand, f"{prefix}/command", callback_group=group),
                "list": node.create_client(ListVessels, f"{prefix}/list_vessels", callback_group=group),
                "checkpoint": node.create_client(Checkpoint, f"{prefix}/checkpoint", callback_group=group),
            }
        return self._clients[worker]

    async def await_at_most(self, future: Future, timeout_s: float) -> None:
        """Await `future`, resolving it with False after timeout_s of wall time if nothing resolved it before."""
        steady = Clock(clock_type=ClockType.STEADY_TIME)
        timer = self.node.create_timer(timeout_s, lambda: future.done() or future.set_result(False), clock=steady)
        await future
        self.node.destroy_timer(timer)

    async def ask_all(self, futures: dict, timeout_s: float) -> dict:
        """Await service futures together for at most timeout_s of wall time: key -> reply (None if late)."""
        everything = Future()

        def check(_future=None) -> None:
            if not everything.done() and all(f.done() for f in futures.values()):
                everything.set_result(True)

        for future in futures.values():
            future.add_done_callback(check)
        check()
        await self.await_at_most(everything, timeout_s)
        return {key: f.result() if f.done() else None for key, f in futures.items()}

    async def ask_again(self, client, request, answer_s: float, attempts: int):
        """Call an idempotent service (a listing, a checkpoint), sending the request again when no answer came
        within answer_s of wall time (a lost answer, docs/simulation.md); the reply, None if none came."""
        for _ in range(attempts):
            future = client.call_async(request)
            reply = (await self.ask_all({"reply": future}, answer_s))["reply"]
            if reply is not None:
                return reply
            client.remove_pending_request(future)
        return None

    async def ask_worker(self, worker: str, service: str, request, answer_s: float, attempts: int):
        """ask_again on one of a worker's services ("list", "checkpoint")."""
        return await self.ask_again(self.clients_of(worker)[service], request, answer_s, attempts)

    def worker_found(self) -> None:
        """A worker reported for the first time: the goals waiting for workers look again."""
        for waiter in self._worker_waiters:
            if not waiter.done():
                waiter.set_result(True)
        self._worker_waiters.clear()

    async def wait_for_workers(self, known: Callable[[], Iterable[str]], expected: set[str], limit_s: float) -> None:
        """A goal that arrives before the workers reported (start-up) waits up to limit_s of wall time for all of
        `expected` (or for one, none being expected) to be among `known()` (the workers heard from so far), saying
        so every 5 s: planned over the workers known at once, a scenario's spawn would put every
        vessel on the first worker to report. At the limit it goes on with the workers it knows, or, knowing
        none, an error names the parameter (the goal's items are then refused)."""
        if not missing_workers(known(), expected) or limit_s <= 0:
            return
        log, steady = self.node.get_logger(), Clock(clock_type=ClockType.STEADY_TIME)
        start = steady.now()

        def waited_s() -> float:
            return (steady.now() - start).nanoseconds * 1e-9

        def progress() -> None:
            log.info(waiting_text(missing_workers(known(), expected), waited_s(), limit_s))

        timer = self.node.create_timer(5.0, progress, clock=steady)
        while missing_workers(known(), expected) and waited_s() < limit_s:
            waiter = Future()
            self._worker_waiters.append(waiter)
            await self.await_at_most(waiter, limit_s - waited_s())
        self.node.destroy_timer(timer)
        if outcome := gave_up_text(known(), missing_workers(known(), expected), limit_s):
            level, line = outcome
            (log.error if level == "error" else log.warning)(line)
