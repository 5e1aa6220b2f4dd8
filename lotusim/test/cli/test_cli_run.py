"""`lotusim run` end to end (the README's main path): the scenario's nodes as processes, vessels spawned through
the MAS action, a summary, an MCAP recording readable without ROS, a trajectory plot; and the fleet CLI clients
(`lotusim spawn / list / delete`) against a running simulation."""

from __future__ import annotations

import subprocess
import textwrap

import numpy as np
import pytest
from cli_probe import Probe, run_cli, start_run, stop_run, tail, wait_for_text  # noqa: E402

from lotusim_core.ros import spin

# DDS participants; serial: a large fleet, a long run or the whole machine (run one at a time, Makefile)
pytestmark = [pytest.mark.ros, pytest.mark.serial]
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
    return run_cli(*args, env=env, timeout_s=timeout)


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

    from lotusim_core.sim.recorder import make_typestore

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
    stamp_ns = lambda m: m.header.stamp.sec * 10**9 + m.header.stamp.nanosec  # noqa: E731
    # sim time held at 0 until both vessels were spawned and the recorder listened; 10 Hz from 0.1 s to --duration
    assert (stamp_ns(first), stamp_ns(last), len(with_vessels)) == (10**8, 10 * 10**9, 100)
    # the scenario's current reaches the physics (environment columns: current ENU, wind ENU) ...
    np.testing.assert_allclose(np.asarray(last.environment).reshape(-1, 6)[0, :3], [0.3, 0.0, 0.0], atol=1e-12)
    # ... and starts carrying the unactuated, neutrally buoyant LRAUV eastward (from rest, the quadratic drag
    # of 155 kg of body + added mass accelerates it slowly), never faster than the water
    moved = np.asarray(last.position).reshape(-1, 3)[0] - np.asarray(first.position).reshape(-1, 3)[0]
    assert 0.05 < moved[0] < 0.3 * (stamp(last) - stamp(first))


def test_fleet_cli_spawns_lists_and_deletes_in_a_running_simulation(tmp_path, own_domain_env):
    """As a user does it: `lotusim run` in one shell, the fleet commands in another (all separate processes)."""
    scenario = tmp_path / "cli_check.yaml"
    # real time, and no scenario duration: the simulation runs until this test stops it
    scenario.write_text(
        SCENARIO.replace("mode: scaled, real_time_factor: 5.0", "mode: realtime").replace("duration_s: 10.0", "")
    )
    run = start_run([str(scenario)], tmp_path / "run.out", own_domain_env)
    try:
        wait_for_text(tmp_path / "run.out", "vessels spawned", run, 120.0)  # lotusim run started
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
        stop_run(run)


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


# --- reproducible runs: sim time from 0 with the whole fleet, --duration exact, recording in every mode -------------

REPRO_SCENARIO = textwrap.dedent(
    """
    name: repro_check
    description: two vessels drifting in a seeded random current, no controllers
    seed: 11
    world:
      origin: {latitude_deg: 48.3, longitude_deg: -4.6}
      bathymetry: {model: flat, depth_m: 60.0}
    physics: {step_s: 0.02, mode: fast}
    environment:
      current:
        model: gauss_markov
        east: {mean: 0.2, mu: 0.01, stationary_std: 0.1}
        north: {mean: 0.0, mu: 0.01, stationary_std: 0.1}
    vessels:
      - {name: auv_1, model: lrauv, pose: {position: [0.0, 0.0, -10.0], yaw_deg: 0.0}}
      - {name: usv_1, model: wamv, pose: {position: [0.0, 20.0, 0.0], yaw_deg: 90.0}}
    recording:
      topics: [/lotusim/fleet_state, "/{vessel}/odom", "/{vessel}/depth"]
    """
)


def _recorded(path, topics: tuple[str, ...]) -> dict[str, dict[int, bytes]]:
    """topic -> {header stamp (ns): the message, serialized again with zeroed padding} of a recording.

    Serialized again: every value keeps its bits, but the CDR alignment padding of the recorded bytes is not
    part of the message (the worker's serialized templates leave whatever the buffer held there)."""
    from rosbags.highlevel import AnyReader

    from lotusim_core.sim.recorder import make_typestore, stamp_ns

    store = make_typestore()
    out: dict[str, dict[int, bytes]] = {t: {} for t in topics}
    with AnyReader([path], default_typestore=store) as reader:
        for connection, _, raw in reader.messages([c for c in reader.connections if c.topic in topics]):
            by_stamp = out[connection.topic]
            assert stamp_ns(raw) not in by_stamp, f"{connection.topic}: two messages stamped {stamp_ns(raw)}"
            msg = reader.deserialize(raw, connection.msgtype)
            by_stamp[stamp_ns(raw)] = bytes(store.serialize_cdr(msg, connection.msgtype))
    return out


def _wall_s(stdout: str) -> float:
    import re

    return float(re.search(r"in ([0-9.]+) s of wall time", stdout).group(1))


def test_two_fast_recorded_runs_are_identical_from_sim_time_0_to_the_duration(tmp_path, own_domain_env):
    """`lotusim run --mode fast --record` twice: each recording starts at sim time 0 with the whole fleet, ends at
    exactly --duration, and the two hold the same fleet states and odometry, bit for bit, at the same stamps."""
    scenario = tmp_path / "repro_check.yaml"
    scenario.write_text(REPRO_SCENARIO.replace('"/{vessel}/depth"', '"/{vessel}/imu/data"'))
    topics = ("/lotusim/fleet_state", "/auv_1/odom", "/usv_1/odom")
    imus = ("/auv_1/imu/data", "/usv_1/imu/data")
    runs = []
    for k in range(2):
        record = tmp_path / f"rec_{k}"
        proc = _lotusim("run", str(scenario), "--duration", "5", "--record", str(record), env=own_domain_env)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "repro_check: 2 vessels, 5.0 s of sim time" in proc.stdout, proc.stdout
        print(f"run {k}: {_wall_s(proc.stdout):.1f} s of wall time")  # noqa: T201 - the figure for the report
        runs.append(_recorded(record, topics))
        # the sensors, derived from the fleet states by another node, are complete too: 50 Hz IMUs over 5 s
        # (a sample at 0 s is published before the recorder can match its new topic)
        for topic, by_stamp in _recorded(record, imus).items():
            assert 250 <= len(by_stamp) <= 251 and max(by_stamp) == 5 * 10**9, (topic, len(by_stamp))
    first, second = runs
    states = first["/lotusim/fleet_state"]
    step = 20_000_000
    # recorded at 10 Hz of sim time from the first 0.1 s to exactly 5 s: nothing lost, nothing after the end
    assert sorted(states) == [k * 5 * step for k in range(1, 51)]
    for topic in topics[1:]:  # odometry at 10 Hz, spread over the steps
        assert len(first[topic]) == 50 and max(first[topic]) <= 5 * 10**9 < max(first[topic]) + 5 * step
    from rclpy.serialization import deserialize_message

    from lotusim_interfaces.msg import FleetState

    assert list(deserialize_message(states[5 * step], FleetState).names) == ["auv_1", "usv_1"]  # at 0.1 s
    for topic in topics:
        assert first[topic].keys() == second[topic].keys(), topic
        different = [t for t in first[topic] if first[topic][t] != second[topic][t]]
        assert not different, f"{topic}: {len(different)} messages differ, first at {min(different)} ns"
    # the random current moved them: identical runs are not trivially identical
    a = deserialize_message(states[10**9], FleetState)
    b = deserialize_message(states[5 * 10**9], FleetState)
    assert abs(b.position[0] - a.position[0]) > 0.01


@pytest.mark.parametrize("duration", ["nan", "inf", "-1"])
def test_run_refuses_a_duration_that_is_not_a_finite_sim_time(duration):
    proc = _lotusim("run", "single_auv", "--duration", duration, timeout=60)
    error = f"argument --duration: expected a finite number of sim seconds >= 0, got '{duration}'"
    assert proc.returncode == 2 and error in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr


def test_run_starts_the_sim_time_once_every_spawned_vessel_has_its_topics(tmp_path, own_domain_env):
    """A worker makes a new vessel's topics in the background after the spawn (about a millisecond each, and DDS
    announces each to every process): `lotusim run` holds the sim time at 0 until the workers report none left
    (SimStats.endpoints_pending), so no vessel starts its run without its odometry and thruster topics, and the
    first seconds run at the requested RTF rather than being spent on topics."""
    from lotusim_interfaces.msg import SimStats

    rows = "\n".join(
        f"  - {{name: auv_{k}, model: lrauv, pose: {{position: [{4.0 * (k % 12)}, {4.0 * (k // 12)}, -10.0]}}}}"
        for k in range(120)
    )
    scenario = tmp_path / "many.yaml"
    scenario.write_text(
        "name: many_auvs\nseed: 1\nworld: {origin: {latitude_deg: 48.3, longitude_deg: -4.6}, "
        "bathymetry: {model: flat, depth_m: 60.0}}\nphysics: {step_s: 0.02, mode: realtime}\nvessels:\n" + rows + "\n"
    )
    log = tmp_path / "run.log"
    run = start_run([str(scenario), "--headless", "--duration", "4"], log, own_domain_env)
    probe = Probe(int(own_domain_env["ROS_DOMAIN_ID"]), "stats_probe")
    try:
        seen: list[SimStats] = []
        probe.node.create_subscription(SimStats, "/lotusim/stats", seen.append, 100)
        assert spin.wait_for(probe.spin_once, lambda: run.poll() is not None, 180.0), tail(log)
        assert run.returncode == 0, tail(log)
    finally:
        probe.close()
        stop_run(run)
    running = [m for m in seen if m.sim_time_s > 0.0]
    assert len(running) >= 3, [(m.sim_time_s, m.vessel_count, m.endpoints_pending) for m in seen]
    late = [(m.sim_time_s, m.endpoints_pending) for m in running if m.vessel_count != 120 or m.endpoints_pending]
    assert not late, f"the sim time ran while topics were still to make: {late}"
