"""Several dynamics workers: a bulk goal over two workers is sent as a few large requests (not one per item),
and no worker gets more requests at once than a service's queue holds (their answers would overwrite each
other and be lost, each lost answer costing the MAS server command_timeout_s)."""

from __future__ import annotations

import time

import pytest

rclpy = pytest.importorskip("rclpy")

from lotusim_core.fleet_registry import FleetRegistry  # noqa: E402
from lotusim_core.geodesy import GeodeticOrigin  # noqa: E402
from simnodes import Sim, create_item  # noqa: E402


def test_a_goal_over_two_workers_is_one_batch_per_worker():
    """The least-loaded choice alternates between the workers; the batches still hold each worker's items in
    goal order, at most batch_size each, the workers taking turns."""
    registry = FleetRegistry(GeodeticOrigin(48.0, -4.0, 0.0))
    registry.add_worker("worker_0")
    registry.add_worker("worker_1")
    plan = registry.plan([create_item(f"v{k}", "lrauv", (float(k), 0.0, -5.0)) for k in range(9)])
    assert [p.worker for p in plan.accepted][:4] == ["worker_0", "worker_1", "worker_0", "worker_1"]
    batches = [[(p.worker, p.item.vessel.name) for p in batch] for batch in plan.batches(3)]
    assert batches == [
        [("worker_0", "v0"), ("worker_0", "v2"), ("worker_0", "v4")],
        [("worker_1", "v1"), ("worker_1", "v3"), ("worker_1", "v5")],
        [("worker_0", "v6"), ("worker_0", "v8")],
        [("worker_1", "v7")],
    ]


@pytest.mark.parametrize(
    "workers, mas_params",
    [
        (2, {}),  # the demo fleet's case: 99 items alternating between 2 workers
        (1, {"batch_size": 1}),  # one request per item: at most REQUESTS_IN_FLIGHT at once
    ],
)
def test_a_large_goal_is_answered_at_once(ros_context, workers, mas_params):
    """99 creates are all carried out and answered within seconds (before: 99 one-item requests in flight, most
    answers lost, each waited for command_timeout_s)."""
    sim = Sim(ros_context, mode="lockstep", workers=workers, mas_params={"command_timeout_s": 60.0, **mas_params})
    try:
        start = time.monotonic()
        result = sim.command([create_item(f"v{k:02d}", "lrauv", (5.0 * k, 0.0, -10.0)) for k in range(99)])
        elapsed = time.monotonic() - start
        assert result.succeeded == 99, [r.reason for r in result.results if not r.ok][:3]
        assert elapsed < 20.0, f"99 creates took {elapsed:.1f} s"
        assert sum(len(w.fleet.names) for w in sim.workers) == 99
        if workers == 2:
            assert [len(w.fleet.names) for w in sim.workers] == [50, 49]
    finally:
        sim.close()
