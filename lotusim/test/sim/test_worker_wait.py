"""Start-up order: the MAS server and the scenario spawner (`lotusim spawn --scenario`, what the launch file runs)
wait for dynamics workers that come up late (a cold worker compiles its physics kernels for ~20-60 s), say so
while they wait, and give up with a clear message after their stated limit."""

from __future__ import annotations

import signal
import subprocess
import time

import pytest
import rclpy
from rclpy.parameter import Parameter

from lotusim_core.ros import reliable_calls
from lotusim_core.ros.fleet_client import FleetClient
from lotusim_core.ros.node_runner import make_executor
from lotusim_core.sim.mas_server import MasServer
from lotusim_interfaces.action import FleetCommand
from lotusim_interfaces.msg import ItemResult
from lotusim_physics.dynamics_node import DynamicsWorker
from simnodes import create_item

pytestmark = pytest.mark.ros  # starts DDS participants (nodes, node processes or the ros2 CLI)

LATE_S = 12.0  # a worker that reports this long after the goal (the old limit was 10 s)


def _mas_and_client(context, **params):
    """A MAS server and a FleetClient of it on one executor, the server seen by the client."""
    executor = make_executor(context=context)
    mas = MasServer(context=context, parameter_overrides=[Parameter(k, value=v) for k, v in params.items()])
    client_node = rclpy.create_node("user", context=context)
    for node in (mas, client_node):
        executor.add_node(node)
    fleet = FleetClient(client_node, executor)
    fleet.wait_for_server(30.0, what="timed out waiting for fleet_command server", settle_s=0.0)
    return executor, [mas, client_node], fleet


def test_a_goal_sent_before_any_worker_waits_for_a_late_one(ros_context, capfd):
    executor, nodes, fleet = _mas_and_client(ros_context)  # the default worker_wait_s
    try:
        fleet.spin_for(0.5)
        goal = FleetCommand.Goal(items=[create_item("auv", "remus100")])
        handle = reliable_calls.send_goal(fleet.action, goal, fleet.spin_once)  # its result comes after the worker
        fleet.spin_for(LATE_S)
        worker = DynamicsWorker(
            context=ros_context,
            worker="worker_0",
            node_name="dynamics_0",
            parameter_overrides=[Parameter("mode", value="lockstep")],
        )
        nodes.append(worker)
        executor.add_node(worker)
        result = reliable_calls.goal_result(handle, fleet.spin_once, 60.0).result
        assert (result.succeeded, result.failed) == (1, 0), [r.reason for r in result.results]
        assert "waiting for a dynamics worker, 10 of 300 s" in capfd.readouterr().err
    finally:
        executor.shutdown()
        for node in nodes:
            node.destroy_node()


def test_a_goal_waits_for_every_expected_worker_and_shares_the_fleet(ros_context, capfd):
    """`lotusim run --workers 2` once put all 99 vessels on one worker: its goal reached the MAS server when that
    server had heard from only one worker. With the scenario's workers expected, the goal waits for the second."""

    def worker(k: int) -> DynamicsWorker:
        lockstep = [Parameter("mode", value="lockstep")]
        node = DynamicsWorker(context=ros_context, worker=f"worker_{k}", node_name=f"dynamics_{k}",
                              parameter_overrides=lockstep)  # fmt: skip
        nodes.append(node)
        executor.add_node(node)
        return node

    executor, nodes, fleet = _mas_and_client(ros_context, expected_workers=["worker_0", "worker_1"])
    try:
        worker(0)
        fleet.spin_for(2.0)
        items = [create_item(f"auv_{k}", "remus100", (10.0 * k, 0.0, -5.0)) for k in range(4)]
        handle = reliable_calls.send_goal(fleet.action, FleetCommand.Goal(items=items), fleet.spin_once)
        fleet.spin_for(6.0)
        assert "waiting for dynamics workers (worker_1), 5 of 300 s" in capfd.readouterr().err
        worker(1)
        result = reliable_calls.goal_result(handle, fleet.spin_once, 60.0).result
        assert (result.succeeded, result.failed) == (4, 0), [r.reason for r in result.results]
        assert sorted(r.worker for r in result.results) == ["worker_0", "worker_0", "worker_1", "worker_1"]
    finally:
        executor.shutdown()
        for node in nodes:
            node.destroy_node()


def test_without_a_worker_the_goal_is_refused_after_the_stated_limit(ros_context, capfd):
    executor, nodes, fleet = _mas_and_client(ros_context, worker_wait_s=2.0)
    try:
        fleet.spin_for(0.5)
        start = time.monotonic()
        result = fleet.command([create_item("auv", "remus100")], timeout_s=30.0)
        assert time.monotonic() - start < 10.0
        assert result.failed == 1 and result.results[0].code == ItemResult.NO_WORKER
        err = capfd.readouterr().err
        assert "no dynamics worker reported on /lotusim/stats within 2 s (parameter worker_wait_s)" in err, err
    finally:
        executor.shutdown()
        for node in nodes:
            node.destroy_node()


def test_the_spawner_gives_up_with_one_clear_line_after_its_limit(own_domain_env):
    start = time.monotonic()
    proc = subprocess.run(
        ["lotusim", "spawn", "--scenario", "single_auv", "--worker-wait-s", "6"],
        env=own_domain_env,
        capture_output=True,
        text=True,
        timeout=150,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    # its own 6 s, not the default 300 s (the rest is the start of Python and rclpy: tens of seconds when busy)
    assert 6.0 <= time.monotonic() - start < 120.0
    lines = proc.stderr.strip().splitlines()
    assert "lotusim spawn: waiting for worker_0: 0 of 1 worker(s) up after 5 s (at most 6 s" in lines[0], lines
    assert lines[-1].startswith("lotusim: error: spawn: worker_0 did not report within 6 s (--worker-wait-s"), lines
    assert "Traceback" not in proc.stderr


def test_the_spawner_waits_for_a_worker_that_starts_late(own_domain_env):
    """The launch order on a cold start: MAS server and spawner first, the worker reporting much later."""
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "start_new_session": True}
    processes = [subprocess.Popen(["mas_server"], env=own_domain_env, **quiet)]
    try:
        spawn = subprocess.Popen(
            ["lotusim", "spawn", "--scenario", "single_auv"],
            env=own_domain_env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        processes.append(spawn)
        time.sleep(LATE_S)
        assert spawn.poll() is None, spawn.communicate()
        # lockstep: the worker reports at once, without compiling the kernels (no step before the spawn)
        worker = ["dynamics", "--ros-args", "-p", "worker:=worker_0", "-p", "mode:=lockstep"]
        processes.append(subprocess.Popen(worker, env=own_domain_env, **quiet))
        out, err = spawn.communicate(timeout=240)
        assert spawn.returncode == 0, out + err
        assert "1 succeeded, 0 failed" in out
        assert "lotusim spawn: waiting for worker_0" in err and "lotusim spawn: 1 worker(s) up after" in err, err
    finally:
        for process in processes:
            if process.poll() is None:
                process.send_signal(signal.SIGINT)
        for process in processes:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
