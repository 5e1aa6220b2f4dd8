"""A dynamics worker dies and comes back (over real DDS, in one process): the MAS server lists its vessels as
WORKER_DOWN at their last known poses, sends new vessels elsewhere (or refuses at once when no worker is left),
lets its vessels' names be deleted and reused, and re-creates its vessels on the restarted worker."""

from __future__ import annotations

import time

import numpy as np
import pytest

rclpy = pytest.importorskip("rclpy")

from rclpy.parameter import Parameter  # noqa: E402

from lotusim_interfaces.msg import ItemResult, VesselInfo  # noqa: E402
from lotusim_physics.dynamics_node import DynamicsWorker  # noqa: E402
from simnodes import Sim, create_item, delete_item, spin_until  # noqa: E402

pytestmark = pytest.mark.ros  # starts DDS participants (nodes, node processes or the ros2 CLI)
FAST_HEALTH = {"worker_timeout_s": 2.0, "pose_snapshot_s": 0.5, "list_timeout_s": 1.0}


def _kill(sim: Sim, worker: DynamicsWorker) -> None:
    """The worker dies: out of the executor, then destroyed once the events the executor already held for it (a
    listing request, a timer) have run on the live node (the events executor runs them after remove_node)."""
    sim.executor.remove_node(worker)
    sim.workers.remove(worker)
    sim.spin_for(0.2)
    worker.destroy_node()


def _restart(sim: Sim, index: int) -> DynamicsWorker:
    overrides = [Parameter("mode", value="lockstep"), Parameter("step_s", value=0.02)]
    overrides.append(Parameter("clock_master", value=index == 0))
    worker = DynamicsWorker(
        context=sim.context, worker=f"worker_{index}", node_name=f"dynamics_{index}", parameter_overrides=overrides
    )
    sim.executor.add_node(worker)
    sim.workers.insert(index, worker)
    return worker


def test_a_dead_worker_s_vessels_are_listed_kept_away_from_and_restored(ros_context):
    sim = Sim(ros_context, mode="lockstep", workers=2, mas_params=FAST_HEALTH)
    try:
        poses = {"a": (0.0, 0.0, -5.0), "b": (10.0, 0.0, -5.0), "c": (20.0, 5.0, -6.0), "d": (30.0, 0.0, -5.0)}
        result = sim.command([create_item(n, "lrauv", xyz) for n, xyz in poses.items()])
        assert [r.worker for r in result.results] == ["worker_0", "worker_1", "worker_0", "worker_1"]
        sim.step(5)
        sim.spin_for(1.5)  # a pose snapshot
        _kill(sim, sim.workers[1])
        spin_until(sim.executor, lambda: sim.mas.failover.health.is_down("worker_1"), 10.0, "worker_1 seen down")

        listed = sim.listing()
        assert {n: v.status for n, v in listed.items()} == {
            "a": VesselInfo.STATUS_OK,
            "b": VesselInfo.STATUS_WORKER_DOWN,
            "c": VesselInfo.STATUS_OK,
            "d": VesselInfo.STATUS_WORKER_DOWN,
        }
        assert "worker_1 down" in listed["b"].status_reason
        p = listed["d"].pose.position
        assert [p.x, p.y, p.z] == pytest.approx(poses["d"], abs=0.5)  # its last known pose, not (0, 0, 0)

        start = time.monotonic()
        result = sim.command([create_item("e", "remus100", (0.0, 20.0, -5.0)), delete_item("b")])
        pinned = create_item("f", "lrauv")
        pinned.vessel.worker = "worker_1"
        refused = sim.command([pinned]).results[0]
        assert time.monotonic() - start < 5.0  # nothing waits for the dead worker
        assert [(r.ok, r.worker) for r in result.results] == [(True, "worker_0"), (True, "")]
        assert refused.code == ItemResult.NO_WORKER and "down" in refused.reason
        reused = sim.command([create_item("b", "wamv", (0.0, -20.0, 0.0))]).results[0]
        assert reused.ok and reused.worker == "worker_0"  # the deleted name is free again

        restarted = _restart(sim, 1)
        spin_until(sim.executor, lambda: list(restarted.fleet.names) == ["d"], 20.0, "d re-created on worker_1")
        position, _, _, _ = restarted.fleet.state_enu()
        np.testing.assert_allclose(position[0], poses["d"], atol=0.5)
        spin_until(sim.executor, lambda: not sim.mas.failover.health.is_down("worker_1"), 5.0, "worker_1 up")
        listed = sim.listing()
        assert sorted(listed) == ["a", "b", "c", "d", "e"]
        assert all(v.status == VesselInfo.STATUS_OK for v in listed.values()), listed
        assert listed["d"].worker == "worker_1" and listed["b"].model == "wamv"
    finally:
        sim.close()


def test_with_every_worker_down_a_create_is_refused_at_once(ros_context):
    sim = Sim(ros_context, mode="lockstep", mas_params=FAST_HEALTH)
    try:
        assert sim.command([create_item("a", "lrauv")]).results[0].ok
        _kill(sim, sim.workers[0])
        spin_until(sim.executor, lambda: sim.mas.failover.health.is_down("worker_0"), 10.0, "worker_0 seen down")
        start = time.monotonic()
        result = sim.command([create_item("b", "lrauv")]).results[0]
        assert time.monotonic() - start < 3.0
        assert result.code == ItemResult.NO_WORKER and "no dynamics worker is running (worker_0 down)" in result.reason
    finally:
        sim.close()


def test_a_restarted_single_worker_takes_up_sim_time_and_gets_its_vessels_back(ros_context):
    """The only worker (the clock master) restarts at once: the MAS server sees a new process from its stats,
    sends it the sim time it last saw (sim time does not go back) and re-creates its vessel."""
    sim = Sim(ros_context, mode="lockstep", mas_params=FAST_HEALTH)
    try:
        assert sim.command([create_item("a", "lrauv", (5.0, 0.0, -5.0))]).results[0].ok
        sim.step(150)  # 3 s of sim time
        sim.spin_for(1.5)  # stats and a pose snapshot
        _kill(sim, sim.workers[0])
        restarted = _restart(sim, 0)
        spin_until(sim.executor, lambda: list(restarted.fleet.names) == ["a"], 20.0, "a re-created")
        spin_until(sim.executor, lambda: restarted.sim_time_ns >= 2_000_000_000, 10.0, "sim time taken up")
        assert sim.mas.failover.health.lost == {}
    finally:
        sim.close()
