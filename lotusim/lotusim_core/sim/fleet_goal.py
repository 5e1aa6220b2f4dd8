"""One fleet command goal carried out over the workers, without ROS (the MAS server, lotusim_core.sim.mas_server,
wires it to its action server and its workers' command services).

- `GoalLedger`: every item's result (refused at planning, answered by its worker, settled from the worker's vessel
  list when its answer was lost, or CANCELED), the feedback counts and the goal's result.
- `carry_out`: the batches of a plan sent without waiting for each answer, at most `max_in_flight` items and
  REQUESTS_IN_FLIGHT requests per worker outstanding; a cancel stops at the next batch boundary.
- `listing`: the registry's vessels with the poses and status their workers reported.
- `missing_workers` and the texts of the start-up wait for the workers.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any

from lotusim_core.sim.fleet_registry import CommandPlan, PlannedItem, RegistryEntry
from lotusim_interfaces.action import FleetCommand
from lotusim_interfaces.msg import FleetCommandItem, ItemResult, VesselInfo

# Requests sent to one worker before the first of them is answered: a service's request and answer queues hold
# 10 (rmw_qos_profile_services_default, KEEP_LAST), and the answers of a longer burst overwrite each other
# before they are read (lost: each cost command_timeout_s).
REQUESTS_IN_FLIGHT = 5


class GoalLedger:
    """The results of one goal's items, by goal index (None: not settled yet)."""

    def __init__(self, items: list[FleetCommandItem], plan: CommandPlan) -> None:
        self.items = items
        self.results: list[ItemResult | None] = [None] * len(items)
        for index, result in plan.refused.items():
            self.results[index] = result
        self.done = len(plan.refused)  # items settled, counted batch by batch (the feedback's `done`)

    @property
    def failed(self) -> int:
        return sum(1 for r in self.results if r is not None and not r.ok)

    def feedback(self) -> FleetCommand.Feedback:
        return FleetCommand.Feedback(total=len(self.items), done=self.done, failed=self.failed)

    def record(self, batch: list[PlannedItem], answers: Iterable[ItemResult]) -> list[PlannedItem]:
        """Record a worker's answers to a batch (one per item, in order); the items it carried out."""
        carried_out = []
        for planned, result in zip(batch, answers, strict=True):
            self.results[planned.index] = result
            if result.ok:
                carried_out.append(planned)
        return carried_out

    def settle_unanswered(self, batch: list[PlannedItem], present: set[str] | None) -> list[PlannedItem]:
        """A batch its worker did not answer: the worker may have carried it out and its answer been lost (a
        service answer is dropped while discovery is still matching, docs/simulation.md). Judged from the names
        the worker lists now (`present`; None: it did not list them either): a create whose vessel is there and
        a delete whose vessel is gone are done (returned, to be recorded, or the registry would lose vessels);
        the rest get NO_WORKER (a move "may have been carried out": a listing cannot tell)."""
        worker, done = batch[0].worker, []
        for planned in batch:
            name, command = planned.item.vessel.name, planned.item.command
            if present is not None and (
                (command == FleetCommandItem.CREATE and name in present)
                or (command == FleetCommandItem.DELETE and name not in present)
            ):
                done.append(planned)
                where = "" if command == FleetCommandItem.DELETE else worker
                self.results[planned.index] = ItemResult(name=name, ok=True, code=ItemResult.OK, worker=where)
                continue
            reason = f"worker {worker} does not answer"
            if present is not None and command == FleetCommandItem.MOVE:
                reason += " (the move may have been carried out)"
            self.results[planned.index] = ItemResult(name=name, ok=False, code=ItemResult.NO_WORKER, reason=reason)
        return done

    def close(self) -> FleetCommand.Result:
        """The goal's result: the items never settled (the goal was canceled first) are CANCELED."""
        for index, result in enumerate(self.results):
            if result is None:
                self.results[index] = ItemResult(
                    name=self.items[index].vessel.name,
                    ok=False,
                    code=ItemResult.CANCELED,
                    reason="goal canceled before this item was carried out",
                )
        succeeded = sum(1 for r in self.results if r.ok)
        return FleetCommand.Result(results=self.results, succeeded=succeeded, failed=len(self.results) - succeeded)


async def carry_out(
    plan: CommandPlan,
    ledger: GoalLedger,
    send: Callable[[list[PlannedItem]], Any],
    finish: Callable[[list[PlannedItem], Any], Awaitable[None]],
    *,
    batch_size: int,
    max_in_flight: int,
    canceled: Callable[[], bool],
    progress: Callable[[], None],
) -> None:
    """Send the plan's batches (`send(batch)`: returns what `finish(batch, sent)` awaits and records) without
    waiting for each answer: before a batch goes, the oldest batches are finished while more than `max_in_flight`
    items (at least 1) or REQUESTS_IN_FLIGHT requests to its worker would be outstanding. Batches sent before
    the first answer reach a worker before it starts creating the new vessels' topics, whose discovery traffic
    delays later requests (docs/performance.md). `progress()` after each finished batch; no batch is sent once
    `canceled()` (those sent are finished)."""
    in_flight: deque[tuple[list[PlannedItem], Any]] = deque()

    async def finish_oldest() -> None:
        batch, sent = in_flight.popleft()
        await finish(batch, sent)
        ledger.done += len(batch)
        progress()

    def must_wait(batch: list[PlannedItem]) -> bool:
        items = sum(len(b) for b, _ in in_flight) + len(batch)
        requests = sum(1 for b, _ in in_flight if b[0].worker == batch[0].worker)
        return items > max(max_in_flight, 1) or requests >= REQUESTS_IN_FLIGHT

    for batch in plan.batches(batch_size):
        while in_flight and must_wait(batch):
            await finish_oldest()
        if canceled():
            break
        in_flight.append((batch, send(batch)))
    while in_flight:
        await finish_oldest()


def listing(
    entries: Iterable[RegistryEntry],
    worker: str,
    reported: Mapping[str, VesselInfo],
    failed_over: Callable[[VesselInfo], bool],
    list_timeout_s: float,
) -> list[VesselInfo]:
    """The registry's vessels (of `worker` only, if given) as VesselInfo: the status set by `failed_over` (True
    for a vessel of a down worker or one not restored, lotusim_core.sim.failover), else the pose, status and
    overrides its worker reported (`reported`, by name), else a status_reason saying its worker did not answer."""
    out = []
    for entry in entries:
        if worker and entry.worker != worker:
            continue
        info = VesselInfo(name=entry.name, model=entry.model, domain=entry.domain, worker=entry.worker)
        if failed_over(info):
            pass
        elif entry.name in reported:
            seen = reported[entry.name]
            info.pose, info.status, info.status_reason = seen.pose, seen.status, seen.status_reason
            info.overrides_yaml = seen.overrides_yaml
        else:
            info.status_reason = f"pose unknown: worker {entry.worker} did not answer within {list_timeout_s} s"
        out.append(info)
    return out


# --- the start-up wait for the workers ------------------------------------------------------------------------------
def missing_workers(known: Iterable[str], expected: set[str]) -> set[str]:
    """The expected workers not heard from yet; {"any"} while no worker at all was (none expected: any one)."""
    known = set(known)
    if not known:
        return expected or {"any"}
    return expected - known


def waiting_text(missing: set[str], waited_s: float, limit_s: float) -> str:
    """The line logged every 5 s while a goal waits for the workers."""
    what = "a dynamics worker" if missing == {"any"} else f"dynamics workers ({', '.join(sorted(missing))})"
    return f"fleet command: waiting for {what}, {waited_s:.0f} of {limit_s:.0f} s"


def gave_up_text(known: Iterable[str], missing: set[str], limit_s: float) -> tuple[str, str] | None:
    """("error" | "warning", line) when the wait ended without every expected worker; None if none is missing."""
    known = sorted(known)
    if not known:
        return "error", (
            f"no dynamics worker reported on /lotusim/stats within {limit_s:.0f} s "
            "(parameter worker_wait_s): the fleet command's items are refused"
        )
    if missing:
        return "warning", (
            f"{', '.join(sorted(missing))} did not report within {limit_s:.0f} s (parameter "
            f"worker_wait_s): the fleet command goes to {', '.join(known)}"
        )
    return None
