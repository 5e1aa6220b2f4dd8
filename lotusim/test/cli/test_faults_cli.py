"""Fault suite: `kill -9` of each node kind under `lotusim run` (real processes over real DDS). The run goes on,
the node is restarted, and once it has recovered no vessel is lost: the MAS listing has the same vessels on the
same workers, all OK, and sim time never goes back. Recovery times (kill -> listing complete) are printed."""

from __future__ import annotations

import os
import signal
import textwrap
import time

import pytest

rclpy = pytest.importorskip("rclpy")

from cli_probe import Probe, node_pid, start_run, stop_run, wait_for_text  # noqa: E402

# DDS participants; serial: a large fleet, a long run or the whole machine (run one at a time, Makefile)
pytestmark = [pytest.mark.ros, pytest.mark.serial]
SCENARIO = textwrap.dedent(
    """
    name: fault_check
    description: two workers, four vessels, one controller, for the kill -9 tests
    seed: 5
    world:
      origin: {latitude_deg: 48.3, longitude_deg: -4.6}
      bathymetry: {model: flat, depth_m: 60.0}
    physics: {step_s: 0.02, mode: scaled, real_time_factor: 2.0, workers: 2}
    environment:
      current: {model: constant, velocity_enu: [0.2, 0.0, 0.0]}
    vessels:
      - {name: remus_1, model: remus100, pose: {position: [0.0, 0.0, -5.0], yaw_deg: 0.0}}
    controllers:
      - type: depth_heading_autopilot
        vessel: remus_1
        setpoints: {depth_m: 10.0, heading_deg: 90.0}
    """
)
# the follower first: a restarted clock master takes up the followers' sim time
KINDS = [
    "dynamics_1",
    "dynamics_0",
    "mas_server",
    "sensor_publisher",
    "current_server",
    "controller_host_0",  # the process hosting the scenario's controllers
]
RECOVERY_LIMIT_S = 90.0  # per node kind, from the kill to a complete listing and both workers advancing


@pytest.mark.timeout(240 + len(KINDS) * RECOVERY_LIMIT_S)
def test_kill_9_of_each_node_kind_loses_no_vessel(tmp_path, own_domain_env):
    scenario = tmp_path / "fault_check.yaml"
    scenario.write_text(SCENARIO)
    out = tmp_path / "run.out"
    run = start_run([str(scenario), "--log-dir", str(tmp_path / "logs")], out, own_domain_env)
    probe = Probe(int(own_domain_env["ROS_DOMAIN_ID"]))
    recovery: dict[str, float] = {}
    try:
        wait_for_text(out, "vessels spawned", run, 180.0, pause=probe.spin)
        probe.spawn_on_each_worker()
        before = probe.listing(10.0)
        assert before is not None and len(before) == 4, before
        assert {w for _, w, _, _ in before.values()} == {"worker_0", "worker_1"}
        assert all(status == 0 and not reason for _, _, status, reason in before.values()), before
        for node in KINDS:
            pid = node_pid(run.pid, node)
            assert pid is not None, f"{node} is not running"
            probe.spin(2.5)  # a pose snapshot of the latest poses, and stats of every worker
            sim_before = {w: s.sim_time_s for w, s in probe.stats.items()}
            killed = time.monotonic()
            os.kill(pid, signal.SIGKILL)

            def left(since: float = killed) -> float:
                return max(1.0, RECOVERY_LIMIT_S - (time.monotonic() - since))

            restarted = lambda n=node, p=pid: node_pid(run.pid, n) not in (None, p)  # noqa: E731
            probe.wait_until(f"{node} restarted", restarted, run, left())
            probe.wait_until(f"no vessel lost after {node}", lambda: probe.listing() == before, run, left())
            probe.stats.clear()
            probe.wait_until(
                "stats of both workers with all vessels",
                lambda: len(probe.stats) == 2 and sum(s.vessel_count for s in probe.stats.values()) == 4,
                run,
                left(),
            )
            recovery[node] = time.monotonic() - killed
            # sim time goes on from where it was (a restarted clock master takes it up from the follower)
            probe.wait_until(
                f"sim time after {node}",
                lambda sb=sim_before: all(probe.stats[w].sim_time_s > sb.get(w, 0.0) for w in probe.stats),
                run,
                left(),
            )
        print("recovery after kill -9 (s):", {n: round(t, 1) for n, t in recovery.items()})
        assert run.poll() is None
        assert out.read_text().count("restarted after") == len(KINDS)
    finally:
        probe.close()
        stop_run(run)
