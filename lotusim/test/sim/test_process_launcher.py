"""process_launcher supervision: a node that dies is started again (after the respawn delay, its log kept), and
one that keeps dying is given up with its log."""

from __future__ import annotations

import os
import signal
import time

import pytest

from lotusim_core.sim import process_launcher as pl
from lotusim_core.sim.launch_plan import NodeSpec


def _script(tmp_path, name: str, body: str) -> str:
    path = tmp_path / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return str(path)


def _supervise_until(launcher, predicate, timeout_s: float = 10.0) -> list:
    restarts, deadline = [], time.monotonic() + timeout_s
    while not predicate(restarts):
        assert time.monotonic() < deadline, f"restarts so far: {restarts}"
        restarts += launcher.supervise()
        time.sleep(0.05)
    return restarts


def test_a_killed_node_is_restarted_after_the_delay_with_its_log_kept(tmp_path):
    node = NodeSpec("lotusim", _script(tmp_path, "sleeper", "echo started; exec sleep 60"), "sleeper")
    with pl.ProcessLauncher([node], tmp_path / "logs") as launcher:
        first = launcher.processes["sleeper"]
        assert launcher.supervise() == []
        log = tmp_path / "logs" / "sleeper.log"
        deadline = time.monotonic() + 10.0  # killed before its echo, the first instance would log nothing
        while "started" not in log.read_text() and time.monotonic() < deadline:
            time.sleep(0.05)
        os.killpg(first.pid, signal.SIGKILL)
        first.wait()
        killed = time.monotonic()
        restarts = _supervise_until(launcher, lambda r: r)
        assert time.monotonic() - killed >= pl.RESPAWN_DELAY_S
        assert [(r.name, r.returncode) for r in restarts] == [("sleeper", -signal.SIGKILL)]
        second = launcher.processes["sleeper"]
        assert second.pid != first.pid and second.poll() is None
        deadline = time.monotonic() + 5.0
        while log.read_text().splitlines().count("started") < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert (
            log.read_text().splitlines().count("started") == 2 and "exited with code -9; restarted" in log.read_text()
        )


def test_a_node_that_keeps_dying_is_given_up(tmp_path, monkeypatch):
    monkeypatch.setattr(pl, "RESPAWN_DELAY_S", 0.05)
    node = NodeSpec("lotusim", _script(tmp_path, "crasher", "echo 'bad parameter' >&2; exit 3"), "crasher")
    with pl.ProcessLauncher([node], tmp_path / "logs") as launcher, pytest.raises(pl.NodeGaveUp) as raised:
        _supervise_until(launcher, lambda r: False)
    assert len(launcher.restarts) == pl.MAX_RESTARTS
    assert "crasher died 6 times" in str(raised.value) and "bad parameter" in str(raised.value)


def test_the_nodes_end_when_their_launcher_is_killed(tmp_path):
    """kill -9 of the process that started the nodes (lotusim run, the fleet bench) ends them too: they run in
    sessions of their own, so before die_with_parent they ran on unseen (a fast-mode worker on a full core)."""
    import subprocess
    import sys

    script = _script(tmp_path, "sleeper", "exec sleep 120")
    launcher_code = (
        "import sys, time\n"
        "from lotusim_core.sim import process_launcher as pl\n"
        "from lotusim_core.sim.launch_plan import NodeSpec\n"
        f"with pl.ProcessLauncher([NodeSpec('lotusim', {script!r}, 'sleeper')], {str(tmp_path / 'logs')!r}) as l:\n"
        "    print(l.processes['sleeper'].pid, flush=True)\n"
        "    time.sleep(120)\n"
    )
    launcher = subprocess.Popen([sys.executable, "-c", launcher_code], stdout=subprocess.PIPE, text=True)
    node_pid = int(launcher.stdout.readline())
    try:
        os.kill(node_pid, 0)  # the node runs
        launcher.kill()
        launcher.wait()
        deadline = time.monotonic() + 10.0
        while time.monotonic() < deadline and _running(node_pid):
            time.sleep(0.05)
        assert not _running(node_pid), "the node outlived its killed launcher"
    finally:
        if _running(node_pid):
            os.kill(node_pid, signal.SIGKILL)


def _running(pid: int) -> bool:
    """Whether pid is a live process (not gone, not a zombie waiting for its reaper)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
