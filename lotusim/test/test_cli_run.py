"""`lotusim run` end to end (the README's main path): the scenario's nodes as processes, vessels spawned through
the MAS action, a summary, an MCAP recording readable without ROS, a trajectory plot; and the fleet CLI clients
(`lotusim spawn / list / delete`) against a running simulation."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

pytest.importorskip("rclpy")

SCENARIO = textwrap.dedent(
    """
    name: cli_check
    description: two vessels, no controllers, for the CLI test
    seed: 3
    duration_s: 10.0
    world:
      origin: {latitude_deg: 48.3, longitude_deg: -4.6}
      bathymetry: {model: flat, depth_m: 60.0}
    physics: {step_s: 0.02, mode: scaled, real_time_factor: 5.0}
    environment:
      current: {model: constant, velocity_enu: [0.3, 0.0, 0.0]}
    vessels:
      - {name: auv_1, model: lrauv, pose: {position: [0.0, 0.0, -10.0], yaw_deg: 0.0}}
      - {name: usv_1, model: wamv, pose: {position: [0.0, 20.0, 0.0], yaw_deg: 90.0}}
    """
)


def _lotusim(*args: str, timeout: float = 240.0, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "lotusim_core.cli", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def test_run_spawns_runs_records_and_plots(tmp_path, own_domain_env):
    scenario = tmp_path / "cli_check.yaml"
    scenario.write_text(SCENARIO)
    record, plot = tmp_path / "rec", tmp_path / "traj.png"
    proc = _lotusim(
        "run", str(scenario), "--duration", "10", "--record", str(record), "--plot", str(plot), env=own_domain_env
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "2 vessels spawned (0 failed)" in proc.stdout
    assert "cli_check: 2 vessels" in proc.stdout
    assert plot.stat().st_size > 10_000

    from rosbags.highlevel import AnyReader

    from lotusim_core.recorder import make_typestore

    with AnyReader([record], default_typestore=make_typestore()) as reader:
        topics = {c.topic for c in reader.connections}
        assert {"/lotusim/fleet_state", "/lotusim/stats", "/auv_1/odom", "/usv_1/odom"} <= topics
        states = [c for c in reader.connections if c.topic == "/lotusim/fleet_state"]
        with_vessels = []
        for connection, _, raw in reader.messages(connections=states):
            msg = reader.deserialize(raw, connection.msgtype)
            if len(msg.names) == 2:
                with_vessels.append(msg)
    first, last = with_vessels[0], with_vessels[-1]
    assert list(last.names) == ["auv_1", "usv_1"]
    stamp = lambda m: m.header.stamp.sec + m.header.stamp.nanosec * 1e-9  # noqa: E731
    assert stamp(last) - stamp(first) >= 5.0  # --duration 10, recorded from once its subscription matched
    # the scenario's current reaches the physics (environment columns: current ENU, wind ENU) ...
    np.testing.assert_allclose(np.asarray(last.environment).reshape(-1, 6)[0, :3], [0.3, 0.0, 0.0], atol=1e-12)
    # ... and starts carrying the unactuated, neutrally buoyant LRAUV eastward (from rest, the quadratic drag
    # of 155 kg of body + added mass accelerates it slowly), never faster than the water
    moved = np.asarray(last.position).reshape(-1, 3)[0] - np.asarray(first.position).reshape(-1, 3)[0]
    assert 0.05 < moved[0] < 0.3 * (stamp(last) - stamp(first))


def test_fleet_cli_spawns_lists_and_deletes_in_a_running_simulation(tmp_path, own_domain_env):
    """As a user does it: `lotusim run` in one shell, the fleet commands in another (all separate processes)."""
    import signal
    import time

    scenario = tmp_path / "cli_check.yaml"
    # real time, and no scenario duration: the simulation runs until this test stops it
    scenario.write_text(
        SCENARIO.replace("mode: scaled, real_time_factor: 5.0", "mode: realtime").replace("duration_s: 10.0", "")
    )
    run = subprocess.Popen(
        [sys.executable, "-m", "lotusim_core.cli", "run", str(scenario)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
        env=own_domain_env,
    )
    try:
        deadline = time.monotonic() + 120.0
        while "vessels spawned" not in (line := run.stdout.readline()):
            assert line and time.monotonic() < deadline, "lotusim run did not start"
        spawned = _lotusim(
            "spawn",
            "cli_auv",
            "remus100",
            "--lat",
            "48.301",
            "--lon",
            "-4.599",
            "--depth",
            "5",
            "--heading",
            "90",
            env=own_domain_env,
        )
        assert spawned.returncode == 0 and "cli_auv" in spawned.stdout and "1 succeeded" in spawned.stdout, spawned
        bad = _lotusim("spawn", "cli_auv", "remus100", env=own_domain_env)
        assert bad.returncode == 1 and "already exists" in bad.stdout
        listed = _lotusim("list", env=own_domain_env)
        assert listed.returncode == 0 and "3 vessels" in listed.stdout and "remus100" in listed.stdout, listed
        models = _lotusim("list", "--models", env=own_domain_env)
        assert "lrauv" in models.stdout and "surface" in models.stdout
        deleted = _lotusim("delete", "cli_auv", env=own_domain_env)
        assert deleted.returncode == 0 and "1 succeeded" in deleted.stdout, deleted
        assert "2 vessels" in _lotusim("list", env=own_domain_env).stdout
    finally:
        os.killpg(run.pid, signal.SIGINT)
        try:
            run.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(run.pid, signal.SIGKILL)
            run.wait()


def test_run_reports_a_bad_scenario_in_one_line(tmp_path):
    scenario = tmp_path / "bad.yaml"
    scenario.write_text(SCENARIO.replace("model: lrauv", "model: submarine_x"))
    proc = _lotusim("run", str(scenario), timeout=60)
    assert proc.returncode == 2
    assert "submarine_x" in proc.stderr and str(scenario) in proc.stderr
    assert "Traceback" not in proc.stderr


def test_run_reports_a_bad_remapping_file_in_one_line(tmp_path):
    remap = tmp_path / "remap.yaml"
    remap.write_text("vessel: remus_1\ntopics: {thrusters/main/cmd: /stack/thrust}\n")
    proc = _lotusim("run", "single_auv", "--remap", str(remap), timeout=60)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert f"{remap}: topics.thrusters/main/cmd: remus_1 (remus100) has no thruster 'main'" in proc.stderr
