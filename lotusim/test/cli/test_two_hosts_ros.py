"""A dynamics worker on a second machine, as docs/simulation.md ("Several machines") tells a user to run one.

Two network namespaces joined by a veth pair stand for two machines on one subnet: each has only its loopback
and its end of the pair, so DDS discovery (ROS_AUTOMATIC_DISCOVERY_RANGE=SUBNET, as the docs say) reaches the
other "machine" and nothing else. Host A runs `lotusim run` (MAS server, clock-master worker, sensors, current
server); host B runs only `dynamics` as a follower worker. A vessel spawned on B's worker from A's shell is listed
there and moves on the master's clock. Skipped where network namespaces cannot be made (not root, no `ip`)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

# DDS participants; serial: a large fleet, a long run or the whole machine (run one at a time, Makefile)
pytestmark = [pytest.mark.ros, pytest.mark.serial]
pytest.importorskip("rclpy")

from cli_probe import wait_for_text  # noqa: E402

STEP_NS = 20_000_000  # the scenario's physics step
SCENARIO = textwrap.dedent(
    """
    name: two_hosts
    description: one local LRAUV; a second worker joins from another machine
    seed: 4
    world:
      origin: {latitude_deg: 48.3, longitude_deg: -4.6}
      bathymetry: {model: flat, depth_m: 60.0}
    physics: {step_s: 0.02, mode: realtime}
    environment:
      current: {model: constant, velocity_enu: [0.2, 0.0, 0.0]}
    vessels:
      - {name: auv_1, model: lrauv, pose: {position: [0.0, 0.0, -10.0], yaw_deg: 0.0}}
    """
)
# Run on host A: the fleet states of both workers for a few seconds of wall time, as JSON {worker: [stamp ns]}.
PROBE = textwrap.dedent(
    """
    import json, sys
    import rclpy
    from lotusim_core.ros.spin import wait_for
    from lotusim_core.sim.run_clock import fleet_state_head
    from lotusim_interfaces.msg import FleetState
    rclpy.init()
    node = rclpy.create_node("two_hosts_probe")
    stamps = {}
    def on_state(raw):
        stamp, worker = fleet_state_head(raw)
        stamps.setdefault(worker, []).append(stamp)
    node.create_subscription(FleetState, "/lotusim/fleet_state", on_state, 100, raw=True)
    spin_once = lambda timeout_s: rclpy.spin_once(node, timeout_sec=timeout_s)
    wait_for(spin_once, lambda: len(stamps) >= 2, 60.0)
    stamps.clear()
    wait_for(spin_once, lambda: False, float(sys.argv[1]))
    print(json.dumps(stamps))
    """
)


class TwoHosts:
    """Network namespaces `a` and `b` joined by a veth pair (10.213.0.1/24 and 10.213.0.2/24)."""

    def __init__(self) -> None:
        tag = os.getpid() % 100_000
        self.a, self.b = f"lsa{tag}", f"lsb{tag}"
        veth_a, veth_b = f"lva{tag}", f"lvb{tag}"
        commands = [
            ["ip", "netns", "add", self.a],
            ["ip", "netns", "add", self.b],
            ["ip", "link", "add", veth_a, "type", "veth", "peer", "name", veth_b],
            ["ip", "link", "set", veth_a, "netns", self.a],
            ["ip", "link", "set", veth_b, "netns", self.b],
        ]
        for ns, dev, address in ((self.a, veth_a, "10.213.0.1/24"), (self.b, veth_b, "10.213.0.2/24")):
            commands += [
                ["ip", "-n", ns, "addr", "add", address, "dev", dev],
                ["ip", "-n", ns, "link", "set", "lo", "up"],
                ["ip", "-n", ns, "link", "set", dev, "up"],
                ["ip", "-n", ns, "route", "add", "224.0.0.0/4", "dev", dev],  # DDS discovery's multicast
            ]
        for command in commands:
            done = subprocess.run(command, capture_output=True, text=True)
            if done.returncode != 0:
                self.close()
                pytest.skip(f"cannot make network namespaces here ({' '.join(command)}: {done.stderr.strip()})")

    def command(self, host: str, args: list[str]) -> list[str]:
        return ["ip", "netns", "exec", host, *args]

    def close(self) -> None:
        for ns in (self.a, self.b):
            pids = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True).stdout.split()
            for pid in pids:
                subprocess.run(["kill", "-9", pid], capture_output=True)
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)  # its end of the veth pair goes too


@pytest.fixture
def hosts():
    if shutil.which("ip") is None:
        pytest.skip("no `ip` command (iproute2) to make network namespaces")
    pair = TwoHosts()
    try:
        yield pair
    finally:
        pair.close()


@pytest.mark.timeout(420)
def test_a_worker_on_a_second_machine_joins_the_fleet_on_the_master_s_clock(hosts, tmp_path, own_domain_env):
    # UDP only: shared memory (/dev/shm is common to both namespaces) would bypass the veth pair
    env = dict(own_domain_env, ROS_AUTOMATIC_DISCOVERY_RANGE="SUBNET", FASTDDS_BUILTIN_TRANSPORTS="UDPv4")
    env["PYTHONUNBUFFERED"] = "1"
    scenario = tmp_path / "two_hosts.yaml"
    scenario.write_text(SCENARIO)
    bin_dir = Path(sys.executable).parent
    run_log, worker_log = tmp_path / "run.log", tmp_path / "worker.log"
    run = subprocess.Popen(
        hosts.command(hosts.a, [str(bin_dir / "lotusim"), "run", str(scenario), "--headless"]),
        env=env,
        stdout=run_log.open("w"),
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
    )
    worker_args = ["-r", "__node:=dynamics_remote", "-p", "worker:=worker_remote", "-p", "clock_master:=false"]
    worker_args += ["-p", "step_s:=0.02", "-p", "fleet_state_every:=5"]
    worker = subprocess.Popen(
        hosts.command(hosts.b, [str(bin_dir / "dynamics"), "--ros-args", *worker_args]),
        env=env,
        stdout=worker_log.open("w"),
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
    )
    try:
        wait_for_text(run_log, "vessels spawned", run, 240.0)
        spawn = [str(bin_dir / "lotusim"), "spawn", "remote_auv", "lrauv", "--lat", "48.3005", "--lon", "-4.6"]
        spawn += ["--depth", "10", "--heading", "0", "--worker", "worker_remote"]
        deadline = time.monotonic() + 180.0  # B's worker is heard of once it has started (imports, compiled physics)
        while True:
            done = subprocess.run(hosts.command(hosts.a, spawn), env=env, capture_output=True, text=True, timeout=120)
            if "1 succeeded" in done.stdout:
                break
            assert worker.poll() is None, worker_log.read_text()[-3000:]
            assert "unknown worker" in done.stdout and time.monotonic() < deadline, done.stdout + done.stderr
            time.sleep(2.0)
        listed = subprocess.run(
            hosts.command(hosts.a, [str(bin_dir / "lotusim"), "list"]), env=env, capture_output=True, text=True
        ).stdout
        assert any("remote_auv" in line and "worker_remote" in line for line in listed.splitlines()), listed
        probe = subprocess.run(
            hosts.command(hosts.a, [sys.executable, "-c", PROBE, "6"]),
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert probe.returncode == 0, probe.stderr[-3000:]
        stamps = json.loads(probe.stdout)
        master, remote = sorted(stamps.get("worker_0", [])), sorted(stamps.get("worker_remote", []))
        assert master and remote, f"fleet states seen: { {w: len(s) for w, s in stamps.items()} }"
        print(  # noqa: T201 - the figures for the report
            f"\nover 6 s of wall time: master {len(master)} fleet states to {master[-1] / 1e9:.2f} s, remote "
            f"{len(remote)} to {remote[-1] / 1e9:.2f} s (sim time)"
        )
        # B's worker advances with the master (realtime: about 6 s of sim time; a loaded host runs behind) ...
        assert len(remote) > 10 and remote[-1] - remote[0] > 2 * 10**9, remote
        # ... on the master's steps, never ahead of it, and close behind (its /clock crosses the veth pair)
        assert all(stamp % STEP_NS == 0 for stamp in remote)
        assert remote[-1] <= master[-1] + 10**9 and master[-1] - remote[-1] < 2 * 10**9, (master[-1], remote[-1])
    finally:
        for proc in (run, worker):
            if proc.poll() is None:
                proc.send_signal(2)  # Ctrl-C (ip netns exec passes it on: it execs the command)
        for proc in (run, worker):
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
