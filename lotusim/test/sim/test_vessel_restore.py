"""A down or returning worker without ROS (lotusim_core.sim.vessel_restore): the sim time a restarted clock master
takes up, what a returning worker is sent, the recovery's report and lost vessels, a goal's items for a down
worker, and a listed vessel's status. Expected values follow docs/simulation.md ("Supervision and failover") and
the texts the failover test over DDS checks; messages are lotusim_interfaces Python classes, no DDS."""

from __future__ import annotations

from lotusim_core.sim.fleet_registry import PlannedItem
from lotusim_core.sim.vessel_restore import (
    create_item,
    fill_listed,
    not_restored,
    restore_items,
    restore_report,
    resume_time,
    settle_down_batch,
)
from lotusim_core.sim.worker_health import Heard, VesselSnapshot, WorkerHealth
from lotusim_interfaces.msg import FleetCommandItem, ItemResult, VesselDescription, VesselInfo

SNAP = VesselSnapshot("lrauv", "mass: 150", (10.0, -2.0, -5.0), (0.0, 0.0, 0.6, 0.8), known_at=100.0)


def test_a_restarted_worker_behind_the_latest_sim_time_resumes_from_it():
    assert resume_time(Heard.RESTARTED, 0.2, 12.5) == (12, 500_000_000)
    assert resume_time(Heard.RESTARTED, 11.6, 12.5) is None  # less than 1 s behind: not a restart of the clock
    assert resume_time(Heard.BACK, 0.2, 12.5) is None and resume_time(Heard.NEW, 0.0, 12.5) is None


def test_a_returning_worker_gets_its_missing_vessels_and_loses_those_deleted_meanwhile():
    snapshots = {"a": SNAP, "b": SNAP}
    items = restore_items({"a", "b", "c", "kept"}, present={"kept", "gone"}, deleted={"gone"}, snapshots=snapshots)
    # "c" has no known pose: not sent (reported lost by the recovery)
    assert [(i.command, i.vessel.name) for i in items] == [
        (FleetCommandItem.CREATE, "a"),
        (FleetCommandItem.CREATE, "b"),
        (FleetCommandItem.DELETE, "gone"),
    ]
    vessel = create_item("a", SNAP).vessel
    assert (vessel.model, vessel.overrides_yaml, vessel.pose_frame) == (
        "lrauv",
        "mass: 150",
        VesselDescription.POSE_ENU,
    )
    p, o = vessel.pose.position, vessel.pose.orientation
    assert (p.x, p.y, p.z, o.x, o.y, o.z, o.w) == (10.0, -2.0, -5.0, 0.0, 0.0, 0.6, 0.8)


def test_the_recovery_report_says_what_was_restored_and_marks_the_rest_lost():
    health = WorkerHealth(timeout_s=5.0)
    health.snapshots = {"a": SNAP, "b": SNAP}
    health.lost = {"a": "not restored earlier"}
    report = restore_report(health, "worker_1", {"a", "b", "c"}, present={"a"}, started=103.5, now=104.8)
    assert report == (
        "worker worker_1: 1 of 3 vessels there or restored at their last known poses (up to 3.5 s old) in 1.3 s; "
        "NOT restored: b, c"
    )
    assert health.lost == {
        "b": "not restored after worker worker_1 restarted: it did not take it",
        "c": "not restored after worker worker_1 restarted: its pose was never known",
    }
    refused = [ItemResult(name="b", ok=False, code=ItemResult.INVALID_POSE, reason="below the sea floor"),
               ItemResult(name="a", ok=False, code=ItemResult.DUPLICATE_NAME, reason="exists"),
               ItemResult(name="d", ok=True, code=ItemResult.OK)]  # fmt: skip
    assert not_restored("worker_1", refused) == {"b": "not restored on worker worker_1: below the sea floor"}


def test_a_goal_for_a_down_worker_deletes_in_the_registry_and_refuses_the_rest():
    items = [
        FleetCommandItem(command=command, vessel=VesselDescription(name=name))
        for command, name in [(FleetCommandItem.MOVE, "a"), (FleetCommandItem.DELETE, "b")]
    ]
    batch = [PlannedItem(3, items[0], "worker_1"), PlannedItem(5, items[1], "worker_1")]
    results: list = [None] * 6
    deletes = settle_down_batch(batch, results)
    assert [p.item.vessel.name for p in deletes] == ["b"]
    assert (results[3].ok, results[3].code, results[3].reason) == (
        False,
        ItemResult.NO_WORKER,
        "worker worker_1 is down",
    )
    assert (results[5].ok, results[5].code, results[5].name) == (True, ItemResult.OK, "b")


def test_a_listed_vessel_of_a_down_worker_shows_its_last_known_pose():
    health = WorkerHealth(timeout_s=5.0)
    health.heard("worker_1", wall_time_s=1.0, now=0.0)
    health.heard("worker_0", wall_time_s=1.0, now=0.0)
    health.check(now=30.0)  # both silent past 4 timeouts: down
    health.heard("worker_0", wall_time_s=2.0, now=30.0)  # worker_0 back
    health.snapshots = {"a": SNAP}
    health.lost = {"c": "not restored after worker worker_0 restarted: it did not take it"}
    down = VesselInfo(name="a", worker="worker_1")
    assert fill_listed(down, health, now=42.0)
    assert (
        down.status == VesselInfo.STATUS_WORKER_DOWN
        and "worker worker_1 down (no stats for 42 s)" in down.status_reason
    )
    assert (down.pose.position.x, down.pose.orientation.w, down.overrides_yaml) == (10.0, 0.8, "mass: 150")
    lost = VesselInfo(name="c", worker="worker_0")
    assert fill_listed(lost, health, now=42.0) and lost.status == VesselInfo.STATUS_LOST
    assert lost.status_reason.endswith("it did not take it") and lost.pose.position.x == 0.0  # pose never known
    fine = VesselInfo(name="d", worker="worker_0", status_reason="as reported")
    assert not fill_listed(fine, health, now=42.0) and fine.status_reason == "as reported"
