"""`lotusim run` in lockstep mode: it says what it waits for, waits for /lotusim/step as long as it takes (it
used to give up after 30 s without a fleet state) and ends at --duration. Mostly idle, so it runs beside the
other light ros tests rather than alone (test_cli_run.py holds the serial ones)."""

from __future__ import annotations

import pytest
from cli_probe import start_run, stop_run, tail, wait_for_text  # noqa: E402
from test_cli_run import REPRO_SCENARIO, _recorded  # noqa: E402  (the scenario and the recording reader)

pytestmark = pytest.mark.ros  # a lockstep run of two vessels waiting for requests: light
pytest.importorskip("rclpy")


def test_lockstep_run_says_what_it_waits_for_and_stops_at_the_duration(tmp_path, own_domain_env):
    """Under lotusim run, a lockstep simulation advances through /lotusim/step only; --duration cuts the steps
    at its sim time and ends the run there. A recording topic that one vessel lacks (a surface vessel has no
    depth sensor) is reported and the others are recorded."""
    import time

    import rclpy
    import rclpy.executors

    from lotusim_interfaces.srv import Step

    scenario = tmp_path / "repro_check.yaml"
    scenario.write_text(REPRO_SCENARIO)
    record, log = tmp_path / "rec", tmp_path / "run.out"
    run = start_run(
        [str(scenario), "--mode", "lockstep", "--duration", "1", "--record", str(record)], log, own_domain_env
    )
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=int(own_domain_env["ROS_DOMAIN_ID"]))
    node = rclpy.create_node("stepper", context=context)
    try:
        wait_for_text(log, "lockstep:", run, 180.0)
        before, _, after = log.read_text().partition("lockstep:")
        lines, line = before.splitlines(), "lockstep:" + after.split("\n", 1)[0]
        assert "waiting for /lotusim/step" in line
        assert any("not recorded" in x and "/usv_1/depth" in x and "/auv_1/depth" not in x for x in lines), lines
        time.sleep(35.0)  # the run used to give up after 30 s without a fleet state
        assert run.poll() is None, tail(log)
        client = node.create_client(Step, "/lotusim/step")
        assert client.wait_for_service(timeout_sec=30.0)
        future = client.call_async(Step.Request(steps=80))
        executor = rclpy.executors.SingleThreadedExecutor(context=context)
        executor.add_node(node)
        executor.spin_until_future_complete(future, timeout_sec=30.0)
        reply = future.result()
        assert not reply.success and reply.iteration == 50 and "run_until_s" in reply.message  # 1 s / 0.02 s
        assert run.wait(timeout=60) == 0, tail(log)
        assert "1.0 s of sim time" in log.read_text()
    finally:
        stop_run(run)
        node.destroy_node()
        context.try_shutdown()
    recorded = _recorded(record, ("/lotusim/fleet_state", "/auv_1/depth", "/auv_1/odom"))
    assert max(recorded["/lotusim/fleet_state"]) == 10**9 and len(recorded["/lotusim/fleet_state"]) == 10
    assert recorded["/auv_1/depth"] and recorded["/auv_1/odom"]
