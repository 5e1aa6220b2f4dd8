"""Helpers for tests that start `lotusim run` (or another lotusim process) and watch it from outside: start and
stop the run (`start_run`, `stop_run`), a `lotusim` command run to its end (`run_cli`), a client node on the run's
ROS domain (`Probe`: the MAS listing, the workers' stats, spawns through FleetClient; `Probe.wait_until` gives up
when the run ends), and the wait for a text in a process's output file (`wait_for_text`). Every wait is in wall
seconds (time.monotonic)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from lotusim_core.ros import spin

TEXT_POLL_S = 0.2  # wall seconds between two reads of an output file
TAIL_CHARS = 3000  # how much of an output file a failure shows


def start_run(args: list[str], out: Path, env: dict) -> subprocess.Popen:
    """`python -m lotusim_core.cli run ARGS` in a process group of its own (as a terminal starts it), its stdout
    and stderr written to the file `out` (a file, not a pipe: an unread pipe fills and stalls the run)."""
    with open(out, "w") as sink:
        return subprocess.Popen(
            [sys.executable, "-m", "lotusim_core.cli", "run", *args],
            stdout=sink,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            env=env,
        )


def run_cli(*args: str, env: dict | None = None, timeout_s: float = 240.0) -> subprocess.CompletedProcess:
    """`python -m lotusim_core.cli ARGS` to its end (a user's command in a second shell: `lotusim list`,
    `lotusim checkpoint save NAME`), its stdout and stderr captured as text; subprocess.TimeoutExpired after
    `timeout_s` wall seconds."""
    return subprocess.run(
        [sys.executable, "-m", "lotusim_core.cli", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout_s,
        stdin=subprocess.DEVNULL,
    )


def stop_run(run: subprocess.Popen, timeout_s: float = 30.0) -> None:
    """Ctrl-C (SIGINT to the process group) if `run` still runs; SIGKILL to the group if it has not ended after
    `timeout_s` wall seconds."""
    if run.poll() is not None:
        return
    os.killpg(run.pid, signal.SIGINT)
    try:
        run.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(run.pid, signal.SIGKILL)
        run.wait()


def tail(path: Path, chars: int = TAIL_CHARS) -> str:
    """The last `chars` characters of the text file `path`."""
    return path.read_text(errors="replace")[-chars:]


def wait_for_text(
    path: Path,
    text: str,
    proc: subprocess.Popen,
    timeout_s: float,
    *,
    pause: Callable[[float], None] = time.sleep,
) -> None:
    """Wait until `text` appears in the output file `path` of `proc`; `pause(TEXT_POLL_S)` between two reads
    (time.sleep, or a probe's spin). AssertionError, with the file's tail, if `proc` exits or `timeout_s` passes."""

    def alive() -> None:
        assert proc.poll() is None, f"exited with {proc.returncode}:\n{tail(path)}"

    found = spin.wait_for(
        pause, lambda: text in path.read_text(errors="replace"), timeout_s, check=alive, step_s=TEXT_POLL_S
    )
    assert found, f"no {text!r} within {timeout_s:.0f} s:\n{tail(path)}"


class Probe:
    """A client node on the run's ROS domain `domain`: the MAS listing, the workers' stats, spawns."""

    def __init__(self, domain: int, name: str = "fault_probe") -> None:
        import rclpy

        from lotusim_core.ros.fleet_client import LIST_VESSELS, FleetClient
        from lotusim_core.ros.node_runner import make_executor
        from lotusim_interfaces.msg import SimStats
        from lotusim_interfaces.srv import ListVessels

        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=domain)
        self.node = rclpy.create_node(name, context=self.context)
        self.executor = make_executor(self.context)
        self.executor.add_node(self.node)
        self.stats: dict[str, SimStats] = {}
        self.node.create_subscription(SimStats, "/lotusim/stats", lambda m: self.stats.__setitem__(m.worker, m), 10)
        self.fleet = FleetClient(self.node, self.executor)
        # made now: a service client made just before its first call may not be matched yet (the answer is lost)
        self._listing = self.node.create_client(ListVessels, LIST_VESSELS)

    def spin_once(self, timeout_s: float) -> None:
        """Spin the probe's executor for at most `timeout_s` wall seconds."""
        self.executor.spin_once(timeout_sec=timeout_s)

    def spin(self, seconds: float) -> None:
        """Spin for `seconds` of wall time (20 ms steps)."""
        spin.wait_for(self.spin_once, lambda: False, seconds, step_s=0.02)

    def spawn_on_each_worker(self, limit_s: float = 60.0) -> None:
        """Three more vessels, on worker_0, worker_1, worker_1 (asked again while the MAS server does not know
        both workers yet)."""
        from lotusim_interfaces.msg import ItemResult
        from simnodes import create_item

        wanted = {
            "usv_1": ("wamv", "worker_0"),
            "auv_1": ("lrauv", "worker_1"),
            "rov_1": ("bluerov2_heavy", "worker_1"),
        }
        deadline = time.monotonic() + limit_s
        self.fleet.wait_for_server(limit_s)  # and a second more: a goal sent at once may have its answers lost
        while wanted:
            assert time.monotonic() < deadline, f"could not spawn {sorted(wanted)}"
            items = []
            for k, (name, (model, worker)) in enumerate(sorted(wanted.items())):
                item = create_item(name, model, (20.0 * (k + 1), 0.0, 0.0 if model == "wamv" else -8.0))
                item.vessel.worker = worker
                items.append(item)
            for r in self.fleet.command(items, timeout_s=60.0).results:
                assert r.ok or r.code == ItemResult.NO_WORKER, r.reason
                if r.ok:
                    del wanted[r.name]
            self.spin(1.0)
        self.fleet.destroy()

    def listing(self, answer_s: float = 3.0) -> dict[str, tuple] | None:
        """name -> (model, worker, status, status_reason), or None when the MAS server does not answer within
        `answer_s` wall seconds (a vessel its worker does not report has a status_reason). One attempt: a poll
        of a run that may be recovering (FleetClient.list_vessels asks again for up to 50 s)."""
        from lotusim_core.ros import reliable_calls
        from lotusim_interfaces.srv import ListVessels

        try:
            reply = reliable_calls.call_read_only(
                self._listing, ListVessels.Request(), self.spin_once, answer_s=answer_s, attempts=1
            )
        except TimeoutError:
            return None
        return {v.name: (v.model, v.worker, v.status, v.status_reason) for v in reply.vessels}

    def wait_until(self, what: str, predicate: Callable[[], bool], run: subprocess.Popen, limit_s: float) -> float:
        """Spin (0.2 s at a time) until `predicate()`; the wall seconds it took. AssertionError if `run` exits
        or `limit_s` wall seconds pass."""

        def alive() -> None:
            assert run.poll() is None, f"lotusim run exited while waiting for {what}"

        start = time.monotonic()
        assert spin.wait_for(self.spin, predicate, limit_s, check=alive, step_s=0.2), f"{what}: not within {limit_s} s"
        return time.monotonic() - start

    def close(self) -> None:
        self.executor.shutdown()
        self.node.destroy_node()
        self.context.try_shutdown()


def node_pid(parent: int, node: str) -> int | None:
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
