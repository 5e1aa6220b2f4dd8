"""One fleet command goal without ROS (lotusim_core.sim.fleet_goal): results by item, answers lost and settled from
a worker's listing, the flow control of batches in flight, cancel at a batch boundary, listings, and the texts of
the start-up wait for the workers. Messages are lotusim_interfaces Python classes; nothing starts DDS. Expected
values follow the rules in the module's docstrings (at most max_in_flight items and REQUESTS_IN_FLIGHT requests
per worker outstanding) and the texts tests over DDS check (test_worker_wait, test_sim_nodes_ros)."""

from __future__ import annotations

import asyncio

import pytest

from lotusim_core.sim.fleet_goal import (
    REQUESTS_IN_FLIGHT,
    GoalLedger,
    carry_out,
    gave_up_text,
    listing,
    missing_workers,
    waiting_text,
)
from lotusim_core.sim.fleet_registry import CommandPlan, PlannedItem, RegistryEntry
from lotusim_interfaces.msg import FleetCommandItem, ItemResult, VesselDescription, VesselInfo

CREATE, DELETE, MOVE = FleetCommandItem.CREATE, FleetCommandItem.DELETE, FleetCommandItem.MOVE


def _item(command: int, name: str) -> FleetCommandItem:
    return FleetCommandItem(command=command, vessel=VesselDescription(name=name, model="remus100"))


def _plan(specs: list[tuple[int, str, str]], refused: dict[int, ItemResult] | None = None):
    """Goal items and a plan accepting those not in `refused`: specs are (command, name, worker)."""
    items = [_item(command, name) for command, name, _ in specs]
    plan = CommandPlan(refused=dict(refused or {}))
    plan.accepted = [
        PlannedItem(k, items[k], worker) for k, (_, _, worker) in enumerate(specs) if k not in plan.refused
    ]
    return items, plan


def _ok(name: str, worker: str = "w0") -> ItemResult:
    return ItemResult(name=name, ok=True, code=ItemResult.OK, worker=worker)


# --- results ---------------------------------------------------------------------------------------------------
def test_the_ledger_keeps_refusals_answers_and_cancels_by_item():
    refusal = ItemResult(name="bad", ok=False, code=ItemResult.INVALID_NAME, reason="no")
    items, plan = _plan(
        [(CREATE, "a", "w0"), (CREATE, "bad", ""), (CREATE, "b", "w0"), (DELETE, "c", "w0")], {1: refusal}
    )
    ledger = GoalLedger(items, plan)
    assert ledger.done == 1 and ledger.failed == 1 and ledger.results[1] is refusal
    duplicate = ItemResult(name="b", ok=False, code=ItemResult.DUPLICATE_NAME, reason="exists")
    carried = ledger.record(plan.accepted[:2], [_ok("a"), duplicate])
    assert [p.item.vessel.name for p in carried] == ["a"]  # only what the worker carried out is committed
    ledger.done += 2
    feedback = ledger.feedback()
    assert (feedback.total, feedback.done, feedback.failed) == (4, 3, 2)
    with pytest.raises(ValueError):  # one answer per item of the batch
        ledger.record(plan.accepted[:2], [_ok("a")])
    result = ledger.close()  # "c" was never answered: the goal was canceled before it
    assert [r.code for r in result.results] == [ItemResult.OK, ItemResult.INVALID_NAME, ItemResult.DUPLICATE_NAME,
                                                ItemResult.CANCELED]  # fmt: skip
    assert (
        result.results[3].name == "c" and result.results[3].reason == "goal canceled before this item was carried out"
    )
    assert (result.succeeded, result.failed) == (1, 3)


def test_an_unanswered_batch_is_settled_from_the_worker_s_vessels():
    specs = [(CREATE, "new", "w1"), (DELETE, "old", "w1"), (MOVE, "kept", "w1"), (CREATE, "absent", "w1")]
    items, plan = _plan(specs)
    ledger = GoalLedger(items, plan)
    done = ledger.settle_unanswered(plan.accepted, present={"new", "kept"})
    assert [p.item.vessel.name for p in done] == ["new", "old"]  # the create is there, the delete gone
    new, old, kept, absent = ledger.results
    assert (new.ok, new.code, new.worker) == (True, ItemResult.OK, "w1")
    assert (old.ok, old.code, old.worker) == (True, ItemResult.OK, "")  # a deleted vessel is on no worker
    assert (kept.code, kept.reason) == (
        ItemResult.NO_WORKER,
        "worker w1 does not answer (the move may have been carried out)",
    )
    assert (absent.code, absent.reason) == (ItemResult.NO_WORKER, "worker w1 does not answer")
    # no listing either: nothing can be confirmed, no move suffix
    ledger = GoalLedger(items, plan)
    assert ledger.settle_unanswered(plan.accepted, present=None) == []
    assert {r.reason for r in ledger.results} == {"worker w1 does not answer"}


# --- flow control ----------------------------------------------------------------------------------------------
def _run(plan: CommandPlan, items, *, batch_size: int, max_in_flight: int, cancel_after: int | None = None):
    """carry_out with a send and a finish that log events: ("send", names) and ("finish", names)."""
    ledger, events, progress = GoalLedger(items, plan), [], []

    def send(batch):
        events.append(("send", [p.item.vessel.name for p in batch]))
        return len(events)

    async def finish(batch, sent):
        await asyncio.sleep(0)
        assert events[sent - 1] == ("send", [p.item.vessel.name for p in batch])  # what send returned for it
        events.append(("finish", [p.item.vessel.name for p in batch]))

    def canceled() -> bool:
        return cancel_after is not None and len(progress) >= cancel_after

    asyncio.run(carry_out(plan, ledger, send, finish, batch_size=batch_size, max_in_flight=max_in_flight,
                          canceled=canceled, progress=lambda: progress.append(ledger.done)))  # fmt: skip
    return events, progress


def test_batches_wait_while_more_than_max_in_flight_items_would_be_outstanding():
    items, plan = _plan([(CREATE, f"v{k}", "w0") for k in range(5)])
    events, progress = _run(plan, items, batch_size=2, max_in_flight=4)
    # batches of 2: two go at once (4 items), the third waits for the first answer
    assert events == [("send", ["v0", "v1"]), ("send", ["v2", "v3"]), ("finish", ["v0", "v1"]), ("send", ["v4"]),
                      ("finish", ["v2", "v3"]), ("finish", ["v4"])]  # fmt: skip
    assert progress == [2, 4, 5]


def test_one_worker_gets_at_most_requests_in_flight_requests_at_once():
    count = REQUESTS_IN_FLIGHT + 2
    items, plan = _plan([(CREATE, f"v{k}", "w0") for k in range(count)])
    events, _ = _run(plan, items, batch_size=1, max_in_flight=1000)
    kinds = [kind for kind, _ in events]
    assert kinds[:REQUESTS_IN_FLIGHT] == ["send"] * REQUESTS_IN_FLIGHT and kinds[REQUESTS_IN_FLIGHT] == "finish"
    outstanding = peak = 0
    for kind in kinds:
        outstanding += 1 if kind == "send" else -1
        peak = max(peak, outstanding)
    assert peak == REQUESTS_IN_FLIGHT and outstanding == 0 and kinds.count("send") == count
    # two workers: each has its own allowance, so all go before the first answer
    items, plan = _plan([(CREATE, f"v{k}", f"w{k % 2}") for k in range(2 * REQUESTS_IN_FLIGHT)])
    events, _ = _run(plan, items, batch_size=1, max_in_flight=1000)
    assert [kind for kind, _ in events[: 2 * REQUESTS_IN_FLIGHT]] == ["send"] * (2 * REQUESTS_IN_FLIGHT)


def test_a_cancel_stops_sending_at_a_batch_boundary_and_finishes_what_was_sent():
    items, plan = _plan([(CREATE, f"v{k}", "w0") for k in range(6)])
    events, progress = _run(plan, items, batch_size=2, max_in_flight=2, cancel_after=1)
    assert events == [("send", ["v0", "v1"]), ("finish", ["v0", "v1"])]  # canceled once the first batch finished
    assert progress == [2]
    items, plan = _plan([(CREATE, f"v{k}", "w0") for k in range(6)])
    events, _ = _run(plan, items, batch_size=2, max_in_flight=0, cancel_after=0)  # canceled before anything
    assert events == []


# --- listings and the wait for the workers ------------------------------------------------------------------------
def test_a_listing_takes_the_failover_status_then_the_worker_s_report_then_says_who_did_not_answer():
    entries = [RegistryEntry("a", "lrauv", "underwater", "w0"), RegistryEntry("b", "wamv", "surface", "w1"),
               RegistryEntry("c", "remus100", "underwater", "w2")]  # fmt: skip
    seen = VesselInfo(name="a", status=VesselInfo.STATUS_OK, status_reason="", overrides_yaml="mass: 1")
    seen.pose.position.x = 3.0

    def failed_over(info: VesselInfo) -> bool:
        if info.worker != "w1":
            return False
        info.status, info.status_reason = VesselInfo.STATUS_WORKER_DOWN, "down"
        return True

    listed = listing(entries, "", {"a": seen}, failed_over, 5.0)
    assert [(v.name, v.model, v.domain, v.worker) for v in listed] == [
        (e.name, e.model, e.domain, e.worker) for e in entries
    ]
    a, b, c = listed
    assert a.pose.position.x == 3.0 and a.overrides_yaml == "mass: 1" and a.status == VesselInfo.STATUS_OK
    assert (b.status, b.status_reason) == (VesselInfo.STATUS_WORKER_DOWN, "down")
    assert c.status_reason == "pose unknown: worker w2 did not answer within 5.0 s"
    assert [v.name for v in listing(entries, "w1", {}, failed_over, 5.0)] == ["b"]


def test_the_start_up_wait_names_the_missing_workers_and_what_happens_at_its_limit():
    assert missing_workers([], set()) == {"any"} and missing_workers([], {"w1"}) == {"w1"}
    assert missing_workers(["w0"], set()) == set() and missing_workers(["w0"], {"w0", "w1"}) == {"w1"}
    assert waiting_text({"any"}, 10.2, 300.0) == "fleet command: waiting for a dynamics worker, 10 of 300 s"
    assert waiting_text({"w2", "w1"}, 5.0, 300.0) == "fleet command: waiting for dynamics workers (w1, w2), 5 of 300 s"
    assert gave_up_text([], {"any"}, 2.0) == (
        "error",
        "no dynamics worker reported on /lotusim/stats within 2 s (parameter worker_wait_s): the fleet command's "
        "items are refused",
    )
    assert gave_up_text(["w0"], {"w1"}, 6.0) == (
        "warning",
        "w1 did not report within 6 s (parameter worker_wait_s): the fleet command goes to w0",
    )
    assert gave_up_text(["w0", "w1"], set(), 6.0) is None
