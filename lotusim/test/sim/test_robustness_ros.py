"""Hostile and churning use of the running nodes over real DDS: the nodes survive and keep exact listings."""

from __future__ import annotations

import os
import time

import numpy as np
import pytest

rclpy = pytest.importorskip("rclpy")

from lotusim_core.base import names  # noqa: E402
from lotusim_interfaces.msg import ItemResult  # noqa: E402
from lotusim_interfaces.srv import WorkerCommand  # noqa: E402
from simnodes import Sim, create_item, delete_item, spin_until  # noqa: E402

# DDS participants; serial: a large fleet, a long run or the whole machine (run one at a time, Makefile)
pytestmark = [pytest.mark.ros, pytest.mark.serial]
CHURN_S = float(os.environ.get("LOTUSIM_CHURN_S", "25"))  # wall seconds of creates and deletes (soak: 600)
# Longer runs for the figures in docs/simulation.md: LOTUSIM_CHURN_S=600, LOTUSIM_BULK_N=5000 (with --timeout 1200)


def test_churn_of_creates_and_deletes_keeps_the_worker_alive_and_the_listing_exact(ros_context):
    """A client creating 5-60 vessels per goal and deleting half of them, for CHURN_S seconds, against a
    realtime worker publishing odometry and /tf. Before the /tf template's offsets came from the message layout,
    its build raised in the worker's timer within seconds ('cannot locate the element fields uniquely'), which
    ends the node (here: the exception surfaces from the executor)."""
    sim = Sim(ros_context, mode="realtime", step_s=0.03, odom_rate_hz=10.0, publish_tf=True)
    try:
        rng = np.random.default_rng(2026)
        alive: set[str] = set()
        created = deleted = goals = serial = 0
        start = time.monotonic()
        while time.monotonic() - start < CHURN_S:
            names = []
            for _ in range(int(rng.integers(5, 61))):
                serial += 1
                names.append(f"{'abcdefgh'[serial % 8]}{'x' * int(rng.integers(0, 9))}_{serial}")
            # in a row 8 m apart (an LRAUV is 4.3 m long): none overlaps another, so none is in contact (collisions)
            result = sim.command([create_item(n, "lrauv", (8.0 * int(n.rsplit("_", 1)[1]), 0.0, -5.0)) for n in names])
            assert [r.code for r in result.results] == [ItemResult.OK] * len(names)
            alive.update(names)
            created += len(names)
            # half of this goal's vessels, and now and then half of the whole fleet (it grows to hundreds)
            pool = sorted(alive) if goals % 10 == 8 else names
            doomed = sorted(rng.choice(pool, size=len(pool) // 2, replace=False).tolist())
            result = sim.command([delete_item(n) for n in doomed])
            assert [r.code for r in result.results] == [ItemResult.OK] * len(doomed)
            alive.difference_update(doomed)
            deleted += len(doomed)
            goals += 2
            sim.spin_for(float(rng.uniform(0.0, 0.3)))  # the worker publishes odometry and /tf meanwhile
        sim.spin_for(1.0)
        listed = sim.listing(answer_s=20.0)
        assert set(listed) == alive
        assert set(sim.worker.fleet.names) == alive
        assert all(info.status == info.STATUS_OK and info.worker == "worker_0" for info in listed.values())
        print(  # noqa: T201 - the soak's figures (docs/simulation.md)
            f"churn: {goals} goals in {CHURN_S:g} s ({goals / CHURN_S:.1f} per s), {created} created, {deleted} "
            f"deleted, {len(alive)} left; the worker alive and the listing exact"
        )
    finally:
        sim.close()


def call_worker(sim: Sim, items, worker: str = "worker_0"):
    """The worker's own command service, as a peer that bypasses the MAS server calls it: its results."""
    client = sim.client.create_client(WorkerCommand, f"/lotusim/{worker}/command")
    spin_until(sim.executor, client.service_is_ready, 10.0, "worker command service")
    future = client.call_async(WorkerCommand.Request(items=items))
    spin_until(sim.executor, future.done, 20.0, "worker command reply")
    sim.client.destroy_client(client)
    return future.result().results


def test_names_too_long_for_ros_are_refused_at_the_mas_server_and_the_worker(ros_context):
    """A 240-character name was answered OK, then creating its topics in the worker's timer exceeded ROS's
    name limit and the worker died. Now both entries refuse it; the longest accepted name gets all its topics."""
    sim = Sim(ros_context, mode="realtime", step_s=0.03)
    try:
        longest, too_long = "v" * names.MAX_NAME_LENGTH, "w" * 240
        result = sim.command([create_item(too_long, "lrauv"), create_item(longest, "lrauv")])
        assert [r.code for r in result.results] == [ItemResult.INVALID_NAME, ItemResult.OK]
        assert "240 characters" in result.results[0].reason
        results = call_worker(sim, [create_item(too_long, "lrauv")])
        assert [r.code for r in results] == [ItemResult.INVALID_NAME]
        spin_until(sim.executor, lambda: sim.worker.topics[longest].odom_pub is not None, 10.0, "topics created")
        sim.spin_for(0.5)  # the worker keeps stepping (a timer exception would surface here)
        assert set(sim.listing(answer_s=20.0)) == {longest} and set(sim.worker.fleet.names) == {longest}
    finally:
        sim.close()


DEEP_YAML = "mass_kg: " + "[" * 5000 + "]" * 5000  # a RecursionError in every YAML reader before the bound


def test_deeply_nested_payloads_are_refused_per_item_and_no_node_dies(ros_context):
    """overrides_yaml nested 5,000 deep aborted the whole goal (no results, names left reserved), killed a worker
    through its command service and the sensor node through /lotusim/environment."""
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

    from lotusim_interfaces.msg import EnvironmentConfig
    from lotusim_sensors.sensor_publisher import SensorPublisher

    sim = Sim(ros_context, mode="realtime", step_s=0.03)
    sensors = SensorPublisher(context=ros_context)
    sim.executor.add_node(sensors)
    try:
        result = sim.command([create_item("a", "lrauv"), create_item("b", "lrauv", overrides=DEEP_YAML)])
        assert [r.code for r in result.results] == [ItemResult.OK, ItemResult.INVALID_OVERRIDES]
        assert "nested more than 32 levels" in result.results[1].reason
        assert [r.code for r in call_worker(sim, [create_item("c", "lrauv", overrides=DEEP_YAML)])] == [
            ItemResult.INVALID_OVERRIDES
        ]
        latched = QoSProfile(
            depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE
        )
        env_pub = sim.client.create_publisher(EnvironmentConfig, "/lotusim/environment", latched)
        before = sensors._env
        env_pub.publish(EnvironmentConfig(revision=7, config_yaml="current: " + "[" * 5000 + "]" * 5000))
        spin_until(sim.executor, lambda: env_pub.get_subscription_count() >= 2, 10.0, "environment subscribers")
        sim.spin_for(1.0)  # an exception in any node's callback would surface here
        assert sensors._env is before
        assert [r.code for r in sim.command([create_item("b", "lrauv")]).results] == [ItemResult.OK]  # not reserved
        assert set(sim.listing(answer_s=20.0)) == {"a", "b"}
    finally:
        sim.executor.remove_node(sensors)
        sensors.destroy_node()
        sim.close()


def test_limits_count_each_create_once_and_a_name_can_be_reused_within_a_goal(ros_context):
    sim = Sim(ros_context, mode="realtime", step_s=0.03, mas_params={"max_vessels": 10})
    try:
        result = sim.command([create_item(f"v{k}", "lrauv") for k in range(12)])
        assert [r.code for r in result.results] == [ItemResult.OK] * 10 + [ItemResult.FLEET_FULL] * 2
        items = [delete_item("v0"), create_item("v0", "wamv"), delete_item("v0"), create_item("v0", "lrauv")]
        assert [r.code for r in sim.command(items).results] == [ItemResult.OK] * 4
        listed = sim.listing(answer_s=20.0)
        assert len(listed) == 10 and listed["v0"].model == "lrauv"
    finally:
        sim.close()


def test_a_frozen_vessel_is_listed_with_the_reason(ros_context):
    sim = Sim(ros_context, mode="lockstep", step_s=0.02)
    try:
        wild = create_item("wild", "remus100", (0.0, 0.0, -5.0))
        wild.vessel.twist.angular.z = 5000.0  # rad/s: over the fleet's rate limit at the first step
        assert [r.code for r in sim.command([wild, create_item("calm", "remus100", (20.0, 0.0, -5.0))]).results] == [
            ItemResult.OK,
            ItemResult.OK,
        ]
        sim.step(5)
        listed = sim.listing(answer_s=20.0)
        assert listed["wild"].status == listed["wild"].STATUS_FROZEN
        assert "vessel 'wild' frozen at t=" in listed["wild"].status_reason
        assert listed["calm"].status == listed["calm"].STATUS_OK and listed["calm"].status_reason == ""
    finally:
        sim.close()


def test_a_bulk_delete_takes_about_as_long_as_the_create(ros_context):
    """Deleting destroyed each vessel's DDS endpoints at once (about 8 ms each here): 5,005 deletes took 87 s
    against 0.8 s for 5,000 creates. Now they go like the creates' topics, within the worker's endpoint budget.
    A vessel created again under a deleted one's name (another model) gets none of the old topics' commands."""
    from std_msgs.msg import Float64

    sim = Sim(ros_context, mode="realtime", step_s=0.03)
    try:
        n = int(os.environ.get("LOTUSIM_BULK_N", "300"))  # issue 20's figure: 5,000
        start = time.perf_counter()
        result = sim.command([create_item(f"v{k}", "wamv", (10.0 * k, 0.0, 0.0)) for k in range(n)], timeout_s=120.0)
        create_s = time.perf_counter() - start
        assert result.succeeded == n
        spin_until(sim.executor, lambda: not sim.worker.endpoint_queue.pending, 300.0, "topics of the new vessels")
        start = time.perf_counter()
        items = [delete_item(f"v{k}") for k in range(n)] + [create_item("v0", "lrauv")]
        result = sim.command(items, timeout_s=300.0)
        delete_s = time.perf_counter() - start
        assert result.succeeded == n + 1
        print(f"bulk: create {n} in {create_s:.2f} s, delete {n} in {delete_s:.2f} s")
        assert delete_s < 2.0 * create_s + 1.0
        left = sim.client.create_publisher(Float64, "/v0/thrusters/right/cmd", 10)  # wamv's, not lrauv's
        for _ in range(20):
            left.publish(Float64(data=50.0))
            sim.spin_for(0.05)  # an IndexError in the worker's callback would surface here
        spin_until(sim.executor, lambda: not sim.worker.endpoint_queue.doomed, 300.0, "old topics destroyed")
        assert sim.worker.vessels["v0"].thruster_cmd.tolist() == [0.0]
        assert set(sim.listing(answer_s=20.0)) == {"v0"}
    finally:
        sim.close()


def test_cli_user_errors_are_one_line_without_a_traceback(monkeypatch, capsys):
    """`lotusim list` with no simulation running ended in a TimeoutError traceback; `--duration nan` ran forever."""
    from lotusim_core import cli
    from lotusim_core.cli import fleet as cli_fleet

    def no_simulation(_args):
        raise TimeoutError("/lotusim/list_vessels: no answer within 30 s (is `lotusim run` running?)")

    monkeypatch.setattr(cli_fleet, "cmd_list", no_simulation)
    assert cli.main(["list"]) == 1  # no simulation answers: 1 (bad input: 2)
    err = capsys.readouterr().err
    assert err.strip().splitlines() == [
        "lotusim: error: /lotusim/list_vessels: no answer within 30 s (is `lotusim run` running?)"
    ]
    for bad in ("nan", "inf", "-1", "abc"):
        with pytest.raises(SystemExit) as info:
            cli.main(["run", "single_auv", "--duration", bad])
        assert info.value.code == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert err[-1].startswith("lotusim run: error: argument --duration: expected") and "Traceback" not in "".join(
            err
        )


def test_the_mas_server_refuses_a_spawn_under_the_sea_floor_of_the_environment(ros_context):
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

    from lotusim_interfaces.msg import EnvironmentConfig

    sim = Sim(ros_context, mode="lockstep", step_s=0.03)
    try:
        latched = QoSProfile(
            depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE
        )
        env_pub = sim.client.create_publisher(EnvironmentConfig, "/lotusim/environment", latched)
        env_pub.publish(EnvironmentConfig(revision=1, config_yaml="bathymetry: {model: flat, depth_m: 60.0}"))
        spin_until(sim.executor, lambda: sim.mas.registry.environment.bathymetry.seabed_depth_m(0.0, 0.0) == 60.0)
        result = sim.command(
            [create_item("deep", "lrauv", (0.0, 0.0, -5000.0)), create_item("ok", "lrauv", (0, 0, -10))]
        )
        assert [r.code for r in result.results] == [ItemResult.INVALID_POSE, ItemResult.OK]
        assert "at or below the sea floor (60 m" in result.results[0].reason
    finally:
        sim.close()
