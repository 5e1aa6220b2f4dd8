"""worker_health (ROS-free): heartbeats tell new, restarted, back and down workers apart; the registry keeps
creates away from down and quiet workers. No DDS: the registry builds lotusim_interfaces messages only."""

from __future__ import annotations

from lotusim_core.base.geodesy import GeodeticOrigin
from lotusim_core.sim.fleet_registry import FleetRegistry
from lotusim_core.sim.worker_health import HUNG_FACTOR, Heard, WorkerHealth
from lotusim_interfaces.msg import ItemResult
from simnodes import create_item


def test_heartbeats_tell_new_alive_restarted_and_back_apart():
    health = WorkerHealth(timeout_s=5.0)
    assert health.heard("w", wall_time_s=10.0, now=100.0) is Heard.NEW
    assert health.heard("w", wall_time_s=11.0, now=101.0) is Heard.ALIVE
    assert health.heard("w", wall_time_s=0.3, now=103.0) is Heard.RESTARTED  # its own clock went back
    assert health.check(now=107.0, in_graph=lambda _w: False) == []  # 4 s of silence: not yet
    assert health.quiet(now=108.5) == {"w"}
    assert health.check(now=108.5, in_graph=lambda _w: False) == ["w"] and health.is_down("w")
    assert health.quiet(now=109.0) == set() and health.down() == {"w"}
    assert health.check(now=109.0) == []  # reported once
    assert health.heard("w", wall_time_s=6.0, now=110.0) is Heard.BACK  # same process, speaking again
    assert not health.is_down("w")


def test_a_silent_worker_still_in_the_graph_is_down_only_when_hung():
    health = WorkerHealth(timeout_s=5.0)
    health.heard("busy", wall_time_s=1.0, now=0.0)
    assert health.check(now=10.0, in_graph=lambda _w: True) == []
    assert health.check(now=HUNG_FACTOR * 5.0 + 0.1, in_graph=lambda _w: True) == ["busy"]


def test_creates_avoid_down_and_quiet_workers():
    registry = FleetRegistry(GeodeticOrigin(48.0, -4.0, 0.0))
    for worker in ("worker_0", "worker_1"):
        registry.add_worker(worker)
    registry.quiet = {"worker_1"}
    plan = registry.plan([create_item(f"a{k}", "lrauv") for k in range(3)])
    assert [p.worker for p in plan.accepted] == ["worker_0"] * 3
    registry.release(plan)
    registry.down, registry.quiet = {"worker_0"}, {"worker_1"}  # only a quiet one left: it gets them
    plan = registry.plan([create_item("b", "lrauv")])
    assert [p.worker for p in plan.accepted] == ["worker_1"]
    registry.release(plan)
    registry.down = {"worker_0", "worker_1"}
    refused = registry.plan([create_item("c", "lrauv")]).refused[0]
    assert refused.code == ItemResult.NO_WORKER and "(worker_0, worker_1 down)" in refused.reason
