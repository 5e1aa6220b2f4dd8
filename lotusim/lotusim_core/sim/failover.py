"""The MAS server's side of a dynamics worker's death: notice it, list its vessels as such, keep commands away
from it, and bring its vessels back when it returns (docs/simulation.md, "Supervision and failover").

- Heartbeat: every worker's /lotusim/stats (lotusim_core.sim.worker_health). Silent for `worker_timeout_s` of wall
  time: down. Its vessels are listed with STATUS_WORKER_DOWN at their last known pose; creates go to the other
  workers (none left: NO_WORKER at once); a delete of one of its vessels is done in the registry alone (the name
  is free again); a move is refused (NO_WORKER).
- Last known poses: the live workers' vessel lists are read every `pose_snapshot_s` of wall time (and a create
  or move records its own pose at once).
- Back: a worker restarted (a new process, seen from its stats) or speaking again after being down is compared
  with the registry: the registry's vessels it lacks are created on it again at their last known poses (model
  and overrides as created; at rest: velocities and actuator commands are not kept); vessels deleted while it
  was down are deleted from it. A vessel that cannot be re-created stays listed with STATUS_LOST and the reason
  until it is deleted; every recovery is logged with what was and was not restored.
The decisions are ROS-free (lotusim_core.sim.worker_health, .vessel_restore); this module wires them to a timer,
the workers' services and /lotusim/resume_clock.
"""

from __future__ import annotations

import time

from builtin_interfaces.msg import Time
from rclpy.clock import Clock, ClockType
from rclpy.task import Future
from rosgraph_msgs.msg import Clock as ClockMsg

from lotusim_core.ros.qos import LATCHED
from lotusim_core.sim import vessel_restore
from lotusim_core.sim.fleet_registry import PlannedItem
from lotusim_core.sim.worker_health import Heard, WorkerHealth
from lotusim_interfaces.msg import FleetCommandItem, VesselInfo
from lotusim_interfaces.srv import ListVessels, WorkerCommand

RECOVERY_ROUNDS = 3  # list the worker, send the missing vessels, again while some are missing


class Failover:
    """Worker health for one MasServer (`mas`): called from its stats callback, listings and commands."""

    def __init__(self, mas) -> None:
        self.mas = mas
        self.health = WorkerHealth(float(mas.declare_parameter("worker_timeout_s", 5.0).value))
        self.snapshot_period_s = float(mas.declare_parameter("pose_snapshot_s", 2.0).value)
        self._next_snapshot = 0.0
        self._snapshotting = False
        self._queued = None  # the snapshot coroutine handed to the executor and not started yet
        self._recovering: set[str] = set()
        mas.create_timer(0.5, self._tick, clock=Clock(clock_type=ClockType.STEADY_TIME))
        self.sim_time_s = 0.0  # the latest sim time a worker reported
        self._resume_pub = mas.create_publisher(ClockMsg, "/lotusim/resume_clock", LATCHED)

    def log(self):
        return self.mas.get_logger()

    # --- heartbeat ----------------------------------------------------------------------------------------------
    def on_stats(self, worker: str, wall_time_s: float, vessel_count: int, sim_time_s: float) -> None:
        heard = self.health.heard(worker, wall_time_s, time.monotonic())
        if resume := vessel_restore.resume_time(heard, sim_time_s, self.sim_time_s):  # a clock master takes it up
            self._resume_pub.publish(ClockMsg(clock=Time(sec=resume[0], nanosec=resume[1])))
        self.sim_time_s = max(self.sim_time_s, sim_time_s)
        if heard in (Heard.BACK, Heard.RESTARTED):
            what = "was restarted" if heard is Heard.RESTARTED else "is back"
            self.log().warning(f"worker {worker} {what} ({vessel_count} vessels); restoring its vessels")
            self.mas.calls.answering.discard(worker)  # its command service is a new one: check it before sending
            self.mas.executor.create_task(self.recover(worker))

    def _tick(self) -> None:
        now = time.monotonic()
        for worker in self.health.check(now, lambda w: self.mas.calls.clients_of(w)["command"].service_is_ready()):
            count = sum(1 for e in self.mas.registry.entries() if e.worker == worker)
            self.log().error(
                f"worker {worker}: no stats for {self.health.timeout_s:.0f} s and gone (or hung): down; its {count} "
                "vessels are listed as WORKER_DOWN and will be re-created when it is back; new vessels go to the "
                "other workers"
            )
        self.mas.registry.down, self.mas.registry.quiet = self.health.down(), self.health.quiet(now)
        if now >= self._next_snapshot and not self._snapshotting:
            self._next_snapshot = now + self.snapshot_period_s
            if self.mas.context.ok():
                self._queued = self._snapshot()
                self.mas.executor.create_task(self._queued)

    def close(self) -> None:
        """A snapshot queued but never started (the executor shut down first) is closed, not left to the garbage
        collector's 'coroutine was never awaited' warning at the end of every run."""
        if self._queued is not None:
            self._queued.close()
            self._queued = None

    async def _snapshot(self) -> None:
        """Read the live workers' vessel lists (in parallel) for their last known poses."""
        self._queued = None
        self._snapshotting = True
        try:
            workers = [w for w in self.mas.registry.workers if not self.health.is_down(w) and w not in self._recovering]
            clients = {w: self.mas.calls.clients_of(w)["list"] for w in workers}
            futures = {w: c.call_async(ListVessels.Request()) for w, c in clients.items()}
            replies = await self.mas.calls.ask_all(futures, self.mas.list_timeout_s)
            now = time.monotonic()
            for worker, reply in replies.items():
                if reply is None:
                    clients[worker].remove_pending_request(futures[worker])
                    continue
                for info in reply.vessels:
                    self.health.remember(info.name, info.model, info.overrides_yaml, info.pose, now)
        finally:
            self._snapshotting = False

    # --- commands -------------------------------------------------------------------------------------------
    def committed(self, planned: PlannedItem) -> None:
        """A create or move carried out records its pose; a delete forgets the vessel."""
        vessel = planned.item.vessel
        if planned.item.command == FleetCommandItem.DELETE:
            self.health.forget(vessel.name)
        elif planned.item.command == FleetCommandItem.CREATE:
            self.health.remember(vessel.name, vessel.model, vessel.overrides_yaml, vessel.pose, time.monotonic())
        elif vessel.name in self.health.snapshots:
            snap = self.health.snapshots[vessel.name]
            self.health.remember(vessel.name, snap.model, snap.overrides_yaml, vessel.pose, time.monotonic())

    def settle_if_down(self, batch: list[PlannedItem], results: list) -> bool:
        """A batch for a worker that is down: deletes are done in the registry alone (the name is free; the
        vessel is not re-created and is deleted from the worker if it comes back with it), other items get
        NO_WORKER. False if the worker is not down."""
        worker = batch[0].worker
        if not self.health.is_down(worker):
            return False
        for planned in vessel_restore.settle_down_batch(batch, results):
            self.mas.commit(planned)
            self.health.deleted_while_down(worker, planned.item.vessel.name)
        return True

    # --- listings -----------------------------------------------------------------------------------------------
    def listed(self, info: VesselInfo) -> bool:
        """Fill in the status of a vessel whose worker is down or that could not be restored (True if so)."""
        return vessel_restore.fill_listed(info, self.health, time.monotonic())

    # --- recovery -------------------------------------------------------------------------------------------
    async def recover(self, worker: str) -> None:
        if worker in self._recovering:
            return
        self._recovering.add(worker)
        try:
            await self._recover(worker)
        finally:
            self._recovering.discard(worker)

    async def _recover(self, worker: str) -> None:
        """Make the worker hold the registry's vessels again (rounds: list it, send what is missing)."""
        mas, started = self.mas, time.monotonic()
        deleted = self.health.take_deleted_while_down(worker)
        expected = {e.name for e in mas.registry.entries() if e.worker == worker}
        present: set[str] | None = None
        await self._matched(mas.calls.clients_of(worker)["list"])
        for attempt in range(RECOVERY_ROUNDS + 1):
            # a new server's first answers are the likeliest to be lost: asked again after 1 s
            reply = await mas.calls.ask_worker(worker, "list", ListVessels.Request(), 1.0, 5)
            if reply is None:
                continue
            present = {info.name for info in reply.vessels}
            for info in reply.vessels:  # vessels it has that the registry lacks (this server restarted) are adopted
                if info.name not in deleted:
                    mas.registry.adopt(info.name, info.model, info.domain, worker)
            items = vessel_restore.restore_items(expected, present, deleted, self.health.snapshots)
            if not items or attempt == RECOVERY_ROUNDS:
                break
            await self._send(worker, items)
        if present is None:
            self.log().error(f"worker {worker} did not list its vessels: {len(expected)} vessels not restored")
            present = set()
        report = vessel_restore.restore_report(self.health, worker, expected, present, started, time.monotonic())
        self.log().warning(report)

    async def _matched(self, client) -> None:
        """Wait (at most command_timeout_s) until a client sees its server (a restarted worker's is new)."""
        deadline = time.monotonic() + self.mas.command_timeout_s
        while not client.service_is_ready() and time.monotonic() < deadline:
            await self.mas.calls.await_at_most(Future(), 0.2)

    async def _send(self, worker: str, items: list[FleetCommandItem]) -> None:
        """Send items to the worker's command service once it is matched (a restarted worker's service is new);
        an unanswered request is settled by the next round's listing."""
        client = self.mas.calls.clients_of(worker)["command"]
        await self._matched(client)
        size = max(self.mas.batch_size, 1)
        for k in range(0, len(items), size):
            future = client.call_async(WorkerCommand.Request(items=items[k : k + size]))
            reply = (await self.mas.calls.ask_all({worker: future}, self.mas.list_timeout_s * 2))[worker]
            if reply is None:
                client.remove_pending_request(future)
                continue
            self.health.lost.update(vessel_restore.not_restored(worker, reply.results))
