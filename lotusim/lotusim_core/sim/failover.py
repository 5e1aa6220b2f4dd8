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
"""

from __future__ import annotations

import time

from builtin_interfaces.msg import Time
from rclpy.clock import Clock, ClockType
from rclpy.task import Future
from rosgraph_msgs.msg import Clock as ClockMsg

from lotusim_core.ros.qos import LATCHED
from lotusim_core.sim.fleet_registry import PlannedItem
from lotusim_core.sim.worker_health import Heard, WorkerHealth
from lotusim_interfaces.msg import FleetCommandItem, ItemResult, VesselDescription, VesselInfo
from lotusim_interfaces.srv import ListVessels, WorkerCommand

RECOVERY_ROUNDS = 3  # list the worker, send the missing vessels, again while some are missing


def _delete_item(name: str) -> FleetCommandItem:
    return FleetCommandItem(command=FleetCommandItem.DELETE, vessel=VesselDescription(name=name))


class Failover:
    """Worker health for one MasServer (`mas`): called from its stats callback, listings and commands."""

    def __init__(self, mas) -> None:
        self.mas = mas
        self.health = WorkerHealth(float(mas.declare_parameter("worker_timeout_s", 5.0).value))
        self.snapshot_period_s = float(mas.declare_parameter("pose_snapshot_s", 2.0).value)
        self._next_snapshot = 0.0
        self._snapshotting = False
        self._recovering: set[str] = set()
        mas.create_timer(0.5, self._tick, clock=Clock(clock_type=ClockType.STEADY_TIME))
        self.sim_time_s = 0.0  # the latest sim time a worker reported
        self._resume_pub = mas.create_publisher(ClockMsg, "/lotusim/resume_clock", LATCHED)

    def log(self):
        return self.mas.get_logger()

    # --- heartbeat ----------------------------------------------------------------------------------------------
    def on_stats(self, worker: str, wall_time_s: float, vessel_count: int, sim_time_s: float) -> None:
        heard = self.health.heard(worker, wall_time_s, time.monotonic())
        if heard is Heard.RESTARTED and sim_time_s + 1.0 < self.sim_time_s:  # a clock master takes it up
            sec, nanosec = divmod(round(self.sim_time_s * 1e9), 1_000_000_000)
            self._resume_pub.publish(ClockMsg(clock=Time(sec=sec, nanosec=nanosec)))
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
                self.mas.executor.create_task(self._snapshot())

    async def _snapshot(self) -> None:
        """Read the live workers' vessel lists (in parallel) for their last known poses."""
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
        reason = f"worker {worker} is down"
        for planned in batch:
            name = planned.item.vessel.name
            if planned.item.command == FleetCommandItem.DELETE:
                self.mas._commit(planned)
                self.health.deleted_while_down(worker, name)
                results[planned.index] = ItemResult(name=name, ok=True, code=ItemResult.OK)
            else:
                results[planned.index] = ItemResult(name=name, ok=False, code=ItemResult.NO_WORKER, reason=reason)
        return True

    # --- listings -----------------------------------------------------------------------------------------------
    def listed(self, info: VesselInfo) -> bool:
        """Fill in the status of a vessel whose worker is down or that could not be restored (True if so)."""
        if self.health.is_down(info.worker):
            info.status, info.status_reason = (
                VesselInfo.STATUS_WORKER_DOWN,
                self.health.down_reason(info.worker, time.monotonic()),
            )
        elif info.name in self.health.lost:
            info.status, info.status_reason = VesselInfo.STATUS_LOST, self.health.lost[info.name]
        else:
            return False
        snap = self.health.snapshots.get(info.name)
        if snap is not None:  # the last known pose, not (0, 0, 0)
            p, o = info.pose.position, info.pose.orientation
            p.x, p.y, p.z = snap.position
            o.x, o.y, o.z, o.w = snap.orientation
            info.overrides_yaml = snap.overrides_yaml
        return True

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
            items = [self._create_item(n) for n in sorted(expected - present) if n in self.health.snapshots]
            items += [_delete_item(n) for n in sorted(deleted & present)]
            if not items or attempt == RECOVERY_ROUNDS:
                break
            await self._send(worker, items)
        if present is None:
            self.log().error(f"worker {worker} did not list its vessels: {len(expected)} vessels not restored")
            present = set()
        for name in expected & present:
            self.health.lost.pop(name, None)
        missing = sorted(expected - present)
        for name in missing:
            why = "it did not take it" if name in self.health.snapshots else "its pose was never known"
            self.health.lost.setdefault(name, f"not restored after worker {worker} restarted: {why}")
        ages = [started - self.health.snapshots[n].known_at for n in expected & present if n in self.health.snapshots]
        self.log().warning(
            f"worker {worker}: {len(expected) - len(missing)} of {len(expected)} vessels there or restored at their "
            f"last known poses (up to {max(ages, default=0.0):.1f} s old) in {time.monotonic() - started:.1f} s"
            + (f"; NOT restored: {', '.join(missing)}" if missing else "")
        )

    def _create_item(self, name: str) -> FleetCommandItem:
        snap = self.health.snapshots[name]
        vessel = VesselDescription(
            name=name, model=snap.model, overrides_yaml=snap.overrides_yaml, pose_frame=VesselDescription.POSE_ENU
        )
        p, o = vessel.pose.position, vessel.pose.orientation
        p.x, p.y, p.z = snap.position
        o.x, o.y, o.z, o.w = snap.orientation
        return FleetCommandItem(command=FleetCommandItem.CREATE, vessel=vessel)

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
            for result in reply.results:
                if not result.ok and result.code != ItemResult.DUPLICATE_NAME:
                    self.health.lost[result.name] = f"not restored on worker {worker}: {result.reason}"
