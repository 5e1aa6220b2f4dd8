"""Fault suite: `kill -9` of each node kind under `lotusim run` (real processes over real DDS). The run goes on,
the node is restarted, and once it has recovered no vessel is lost: the MAS listing has the same vessels on the
same workers, all OK, and sim time never goes back. Recovery times (kill -> listing complete) are printed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

rclpy = pytest.importorskip("rclpy")


pytestmark = pytest.mark.ros  # starts DDS participants (nodes, node processes or the ros2 CLI)
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


def _node_pid(parent: int, node: str) -> int | None:
    """The pid of the child of `parent` running ROS node `node` (none: not running)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
        except (OSError, IndexError, ValueError):
            continue
        if ppid == parent and f"__node:={node}".encode() in cmdline:
            return int(entry.name)
    return None


class Probe:
    """A client node on the run's ROS domain: the MAS listing and the workers' stats."""

    def __init__(self, domain: int) -> None:
        from lotusim_core.ros.node_runner import make_executor
        from lotusim_interfaces.msg import SimStats
        from lotusim_interfaces.srv import ListVessels

        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=domain)
        self.node = rclpy.create_node("fault_probe", context=self.context)
        self.executor = make_executor(self.context)
        self.executor.add_node(self.node)
        self.stats: dict[str, SimStats] = {}
        self.node.create_subscription(SimStats, "/lotusim/stats", lambda m: self.stats.__setitem__(m.worker, m), 10)
        self.ListVessels = ListVessels
        self.client = self.node.create_client(ListVessels, "/lotusim/list_vessels")

    def spawn_on_each_worker(self, limit_s: float = 60.0) -> None:
        """Three more vessels, on worker_0, worker_1, worker_1 (asked again while the MAS server does not know
        both workers yet)."""
        from rclpy.action import ActionClient

        from lotusim_core.ros import reliable_calls
        from lotusim_interfaces.action import FleetCommand
        from lotusim_interfaces.msg import ItemResult
        from simnodes import create_item

        client = ActionClient(self.node, FleetCommand, "/lotusim/fleet_command")
        wanted = {
            "usv_1": ("wamv", "worker_0"),
            "auv_1": ("lrauv", "worker_1"),
            "rov_1": ("bluerov2_heavy", "worker_1"),
        }
        deadline = time.monotonic() + limit_s
        while wanted:
            assert time.monotonic() < deadline, f"could not spawn {sorted(wanted)}"
            items = []
            for k, (name, (model, worker)) in enumerate(sorted(wanted.items())):
                item = create_item(name, model, (20.0 * (k + 1), 0.0, 0.0 if model == "wamv" else -8.0))
                item.vessel.worker = worker
                items.append(item)
            handle = reliable_calls.send_goal(client, FleetCommand.Goal(items=items), self.spin)
            for r in reliable_calls.goal_result(handle, self.spin, 60.0).result.results:
                assert r.ok or r.code == ItemResult.NO_WORKER, r.reason
                if r.ok:
                    del wanted[r.name]
            self.spin(1.0)
        client.destroy()

    def spin(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.executor.spin_once(timeout_sec=0.02)

    def listing(self, answer_s: float = 3.0) -> dict[str, tuple] | None:
        """name -> (model, worker, status, status_reason), or None when the MAS server does not answer (a vessel
        its worker does not report has a status_reason)."""
        future = self.client.call_async(self.ListVessels.Request())
        end = time.monotonic() + answer_s
        while not future.done() and time.monotonic() < end:
            self.executor.spin_once(timeout_sec=0.02)
        if not future.done():
            self.client.remove_pending_request(future)
            return None
        return {v.name: (v.model, v.worker, v.status, v.status_reason) for v in future.result().vessels}

    def close(self) -> None:
        self.executor.shutdown()
        self.node.destroy_node()
        self.context.try_shutdown()


def _wait(what: str, predicate, probe: Probe, run: subprocess.Popen, limit_s: float = RECOVERY_LIMIT_S) -> float:
    start = time.monotonic()
    while not predicate():
        assert run.poll() is None, f"lotusim run exited while waiting for {what}"
        assert time.monotonic() - start < limit_s, f"{what}: not within {limit_s} s"
        probe.spin(0.2)
    return time.monotonic() - start


@pytest.mark.timeout(240 + len(KINDS) * RECOVERY_LIMIT_S)
def test_kill_9_of_each_node_kind_loses_no_vessel(tmp_path, own_domain_env):
    scenario = tmp_path / "fault_check.yaml"
    scenario.write_text(SCENARIO)
    out = tmp_path / "run.out"
    with open(out, "w") as sink:
        run = subprocess.Popen(
            [sys.executable, "-m", "lotusim_core.cli", "run", str(scenario), "--log-dir", str(tmp_path / "logs")],
            stdout=sink,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            env=own_domain_env,
        )
    probe = Probe(int(own_domain_env["ROS_DOMAIN_ID"]))
    recovery: dict[str, float] = {}
    try:
        _wait("the spawn", lambda: "vessels spawned" in out.read_text(), probe, run, 180.0)
        probe.spawn_on_each_worker()
        before = probe.listing(10.0)
        assert before is not None and len(before) == 4, before
        assert {w for _, w, _, _ in before.values()} == {"worker_0", "worker_1"}
        assert all(status == 0 and not reason for _, _, status, reason in before.values()), before
        for node in KINDS:
            pid = _node_pid(run.pid, node)
            assert pid is not None, f"{node} is not running"
            probe.spin(2.5)  # a pose snapshot of the latest poses, and stats of every worker
            sim_before = {w: s.sim_time_s for w, s in probe.stats.items()}
            killed = time.monotonic()
            os.kill(pid, signal.SIGKILL)

            def left(since: float = killed) -> float:
                return max(1.0, RECOVERY_LIMIT_S - (time.monotonic() - since))

            restarted = lambda n=node, p=pid: _node_pid(run.pid, n) not in (None, p)  # noqa: E731
            _wait(f"{node} restarted", restarted, probe, run, left())
            _wait(f"no vessel lost after {node}", lambda: probe.listing() == before, probe, run, left())
            probe.stats.clear()
            _wait(
                "stats of both workers with all vessels",
                lambda: len(probe.stats) == 2 and sum(s.vessel_count for s in probe.stats.values()) == 4,
                probe,
                run,
                left(),
            )
            recovery[node] = time.monotonic() - killed
            # sim time goes on from where it was (a restarted clock master takes it up from the follower)
            _wait(
                f"sim time after {node}",
                lambda sb=sim_before: all(probe.stats[w].sim_time_s > sb.get(w, 0.0) for w in probe.stats),
                probe,
                run,
                left(),
            )
        print("recovery after kill -9 (s):", {n: round(t, 1) for n, t in recovery.items()})
        assert run.poll() is None
        assert out.read_text().count("restarted after") == len(KINDS)
    finally:
        probe.close()
        os.killpg(run.pid, signal.SIGINT)
        try:
            run.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(run.pid, signal.SIGKILL)
            run.wait()
