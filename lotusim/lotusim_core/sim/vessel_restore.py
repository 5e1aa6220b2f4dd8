"""What the MAS server does about a down or returning dynamics worker, without ROS (lotusim_core.sim.failover
wires it to timers, the workers' services and /lotusim/resume_clock; docs/simulation.md, "Supervision and
failover"): the sim time a restarted clock master takes up, the items that give a returning worker its vessels
back, the report of a recovery, the items of a goal for a down worker, and the status of its vessels in a listing.
Poses are in `map` (ENU m; orientation map <- base_link FLU, x y z w), as VesselSnapshot holds them.
"""

from __future__ import annotations

from lotusim_core.sim.fleet_registry import PlannedItem
from lotusim_core.sim.worker_health import Heard, VesselSnapshot, WorkerHealth
from lotusim_interfaces.msg import FleetCommandItem, ItemResult, VesselDescription, VesselInfo

RESUME_GAP_S = 1.0  # a restarted worker this far behind the latest sim time takes that time up (a clock master)


def resume_time(heard: Heard, reported_sim_s: float, latest_sim_s: float) -> tuple[int, int] | None:
    """(sec, nanosec) of the sim time a restarted worker resumes from (the latest any worker reported), when the
    restarted worker reports more than RESUME_GAP_S less; None otherwise (not restarted, or not behind)."""
    if heard is not Heard.RESTARTED or not reported_sim_s + RESUME_GAP_S < latest_sim_s:
        return None
    sec, nanosec = divmod(round(latest_sim_s * 1e9), 1_000_000_000)
    return sec, nanosec


def _set_pose(pose, snap: VesselSnapshot) -> None:
    p, o = pose.position, pose.orientation
    p.x, p.y, p.z = snap.position
    o.x, o.y, o.z, o.w = snap.orientation


def create_item(name: str, snap: VesselSnapshot) -> FleetCommandItem:
    """A create of vessel `name` as it was last known (model, overrides, pose in ENU; at rest)."""
    vessel = VesselDescription(
        name=name, model=snap.model, overrides_yaml=snap.overrides_yaml, pose_frame=VesselDescription.POSE_ENU
    )
    _set_pose(vessel.pose, snap)
    return FleetCommandItem(command=FleetCommandItem.CREATE, vessel=vessel)


def delete_item(name: str) -> FleetCommandItem:
    return FleetCommandItem(command=FleetCommandItem.DELETE, vessel=VesselDescription(name=name))


def restore_items(
    expected: set[str], present: set[str], deleted: set[str], snapshots: dict[str, VesselSnapshot]
) -> list[FleetCommandItem]:
    """What a returning worker is sent: creates of the registry's vessels it lacks (`expected` - `present`) whose
    pose is known, then deletes of those it holds that were deleted while it was down; each in name order."""
    items = [create_item(name, snapshots[name]) for name in sorted(expected - present) if name in snapshots]
    return items + [delete_item(name) for name in sorted(deleted & present)]


def restore_report(
    health: WorkerHealth, worker: str, expected: set[str], present: set[str], started: float, now: float
) -> str:
    """After a recovery (monotonic s `started` .. `now`): the vessels there are no longer lost, those missing are
    (with why: not taken, or pose never known); the log line saying what was and was not restored."""
    for name in expected & present:
        health.lost.pop(name, None)
    missing = sorted(expected - present)
    for name in missing:
        why = "it did not take it" if name in health.snapshots else "its pose was never known"
        health.lost.setdefault(name, f"not restored after worker {worker} restarted: {why}")
    ages = [started - health.snapshots[n].known_at for n in expected & present if n in health.snapshots]
    return (
        f"worker {worker}: {len(expected) - len(missing)} of {len(expected)} vessels there or restored at their "
        f"last known poses (up to {max(ages, default=0.0):.1f} s old) in {now - started:.1f} s"
        + (f"; NOT restored: {', '.join(missing)}" if missing else "")
    )


def not_restored(worker: str, results: list[ItemResult]) -> dict[str, str]:
    """Vessel -> why, for the restore items a worker refused (a duplicate name means it has the vessel)."""
    return {
        r.name: f"not restored on worker {worker}: {r.reason}"
        for r in results
        if not r.ok and r.code != ItemResult.DUPLICATE_NAME
    }


def settle_down_batch(batch: list[PlannedItem], results: list) -> list[PlannedItem]:
    """A batch for a worker that is down: its deletes are done in the registry alone (returned, to be recorded;
    the name is free), the other items get NO_WORKER; results by goal index."""
    worker, deletes = batch[0].worker, []
    for planned in batch:
        name = planned.item.vessel.name
        if planned.item.command == FleetCommandItem.DELETE:
            deletes.append(planned)
            results[planned.index] = ItemResult(name=name, ok=True, code=ItemResult.OK)
        else:
            reason = f"worker {worker} is down"
            results[planned.index] = ItemResult(name=name, ok=False, code=ItemResult.NO_WORKER, reason=reason)
    return deletes


def fill_listed(info: VesselInfo, health: WorkerHealth, now: float) -> bool:
    """Set the status of a listed vessel whose worker is down (WORKER_DOWN) or that could not be restored (LOST),
    with its last known pose and overrides; True if so, False (untouched) otherwise."""
    if health.is_down(info.worker):
        info.status, info.status_reason = VesselInfo.STATUS_WORKER_DOWN, health.down_reason(info.worker, now)
    elif info.name in health.lost:
        info.status, info.status_reason = VesselInfo.STATUS_LOST, health.lost[info.name]
    else:
        return False
    snap = health.snapshots.get(info.name)
    if snap is not None:  # the last known pose, not (0, 0, 0)
        _set_pose(info.pose, snap)
        info.overrides_yaml = snap.overrides_yaml
    return True
