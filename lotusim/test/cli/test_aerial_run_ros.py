"""An X500 from the user's entry points (real processes over real DDS): `lotusim run` a scenario, `lotusim spawn` an
x500 20 m up into it, command its four rotors at the hover speed sqrt(m g / 4 k_f) = 769.6 rad/s on
`<vessel>/thrusters/rotor_<i>/cmd` (std_msgs/Float64, rad/s, docs/vehicles.md 'X500') and watch its odometry.

The motors start stopped (the spawn happens while the clock master is paused, the commands arrive before it goes
on): spinning up from rest to the hover speed costs 1.5 g tau_up = 0.184 m/s of sink speed (tau_up = 0.0125 s,
[PX4GazeboModels2025]), which an uncontrolled hover keeps. So over 5 s the drone stays within 1 m of its start
height, on the line z(t) = 20 - 1.5 g tau_up t (within 5 cm), and does not drift sideways (no wind).

And `lotusim run x500_waypoints`: three drones under their flight controllers fly a square in the wind, and the
barometer reads the ISA pressure of their height (in the parallel DDS phase: three drones share a machine well)."""

from __future__ import annotations

import math
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
from rosbags.highlevel import AnyReader

rclpy = pytest.importorskip("rclpy")

from cli_probe import Probe, node_pid, start_run, stop_run, tail, wait_for_text  # noqa: E402
from recordings import read, stamp_s  # noqa: E402
from rosgraph_msgs.msg import Clock  # noqa: E402
from test_scenarios_e2e import run_scenario  # noqa: E402  (the `lotusim run` helper)

from lotusim_core.base.catalogue import load_vehicle  # noqa: E402
from lotusim_core.sim.scenario import load_scenario  # noqa: E402
from lotusim_interfaces.msg import Collision  # noqa: E402

pytestmark = pytest.mark.ros  # one to three drones under `lotusim run`: light enough to share the machine

SCENARIO = textwrap.dedent(
    """
    name: x500_hover
    description: a WAM-V at sea; an X500 joins through lotusim spawn
    seed: 4
    world:
      origin: {latitude_deg: 48.3, longitude_deg: -4.6}
      bathymetry: {model: flat, depth_m: 60.0}
    physics: {step_s: 0.01, mode: scaled, real_time_factor: 1.0}
    vessels:
      - {name: usv_1, model: wamv, pose: {position: [100.0, 0.0, 0.0], yaw_deg: 0.0}}
    """
)
MASS_KG, K_F, TAU_UP, G = 2.0 + 4 * 0.016076923076923075, 8.54858e-6, 0.0125, 9.81  # x500 SDF [PX4GazeboModels2025]
HOVER = math.sqrt(MASS_KG * G / (4 * K_F))
START_UP_M, WATCH_S = 20.0, 5.0
ALTITUDE_ERROR_M = 1.0  # stated: the uncontrolled hover stays within 1 m of its start height for 5 s
LINE_ERROR_M = 0.05  # ... and on the line of the spin-up's sink speed


def _set_paused(probe: Probe, value: bool) -> None:
    from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue
    from rcl_interfaces.srv import SetParameters

    client = probe.node.create_client(SetParameters, "/dynamics_0/set_parameters")
    deadline = time.monotonic() + 30.0
    while not client.service_is_ready():
        assert time.monotonic() < deadline, "no /dynamics_0/set_parameters"
        probe.spin_once(0.1)
    value_msg = ParameterValue(type=ParameterType.PARAMETER_BOOL, bool_value=value)
    future = client.call_async(SetParameters.Request(parameters=[Parameter(name="paused", value=value_msg)]))
    while not future.done():
        assert time.monotonic() < deadline, "no answer from /dynamics_0/set_parameters"
        probe.spin_once(0.1)
    assert future.result().results[0].successful


@pytest.mark.timeout(420)
def test_an_x500_spawned_in_the_air_hovers_on_its_rotor_topics(tmp_path, own_domain_env):
    from nav_msgs.msg import Odometry
    from rosgraph_msgs.msg import Clock
    from std_msgs.msg import Float64

    scenario = tmp_path / "x500_hover.yaml"
    scenario.write_text(SCENARIO)
    out = tmp_path / "run.out"
    run = start_run([str(scenario)], out, own_domain_env)
    probe = Probe(int(own_domain_env["ROS_DOMAIN_ID"]), "aerial_probe")
    odom: list[tuple[float, float, float, float]] = []  # (stamp s, x, y, z) ENU
    clock: list[float] = []
    probe.node.create_subscription(
        Odometry,
        "/hover_x500/odom",
        lambda m: odom.append(
            (m.header.stamp.sec + 1e-9 * m.header.stamp.nanosec, *(getattr(m.pose.pose.position, a) for a in "xyz"))
        ),
        10,
    )
    probe.node.create_subscription(Clock, "/clock", lambda m: clock.append(m.clock.sec + 1e-9 * m.clock.nanosec), 10)
    rotors = [probe.node.create_publisher(Float64, f"/hover_x500/thrusters/rotor_{i}/cmd", 10) for i in range(4)]
    try:
        wait_for_text(out, "vessels spawned", run, 240.0, pause=probe.spin)
        _set_paused(probe, True)
        spawned = subprocess.run(
            [
                sys.executable,
                "-m",
                "lotusim_core.cli",
                "spawn",
                "hover_x500",
                "x500",
                "--enu",
                "0",
                "0",
                str(START_UP_M),
            ],
            env=own_domain_env,
            capture_output=True,
            text=True,
            timeout=120.0,
            stdin=subprocess.DEVNULL,
        )
        assert spawned.returncode == 0 and "1 succeeded" in spawned.stdout, spawned
        probe.wait_until(
            "the rotor topics subscribed", lambda: all(p.get_subscription_count() for p in rotors), run, 60
        )
        for _ in range(3):  # held by the worker: sent a few times against a lost first message
            for p in rotors:
                p.publish(Float64(data=HOVER))
            probe.spin(0.3)
        probe.spin(1.0)
        paused_at = clock[-1] if clock else 0.0
        odom.clear()
        _set_paused(probe, False)
        probe.wait_until(
            f"{WATCH_S} s of the x500's odometry",
            lambda: bool(odom) and odom[-1][0] - paused_at >= WATCH_S,
            run,
            120.0,
        )
    finally:
        probe.close()
        stop_run(run)
    samples = [(t - paused_at, x, y, z) for t, x, y, z in odom if t - paused_at <= WATCH_S + 1e-6]
    assert len(samples) >= 40, tail(out)  # 10 Hz odometry
    sink = 1.5 * G * TAU_UP  # m/s, the spin-up's
    worst_height = max(abs(z - START_UP_M) for _, _, _, z in samples)
    worst_line = max(abs(z - (START_UP_M - sink * t)) for t, _, _, z in samples)
    worst_side = max(math.hypot(x, y) for _, x, y, _ in samples)
    print(f"x500 hover: {len(samples)} odometry samples over {samples[-1][0]:.2f} s;", end=" ")
    print(f"height error <= {worst_height:.3f} m,")
    print(f"  off the 1.5 g tau_up line <= {worst_line:.4f} m, sideways <= {worst_side:.4f} m")
    assert worst_height < ALTITUDE_ERROR_M
    assert worst_line < LINE_ERROR_M
    assert worst_side < 0.05


def test_x500_waypoints_each_drone_flies_its_square_and_holds_the_last_corner(tmp_path, own_domain_env):
    """x500_waypoints: three X500s take off from the sea into a 6 m/s westerly with light Dryden turbulence, fly
    their three corners at 15 m and hold the last one. In real time: each flight controller steps on every 50 Hz
    odometry message, and one starved of CPU (RTF 3 on this machine under load) flies on stale rotor commands and
    loses its drone (docs/performance.md, 'Table V')."""
    scenario = load_scenario("x500_waypoints")
    tracks, wall_s = run_scenario("x500_waypoints", tmp_path, duration_s=45.0, rtf=1.0, env=dict(own_domain_env))
    lines, failed = [], []
    for c in scenario.controllers:
        t, xyz, _ = tracks[c.vessel]
        corners = np.asarray(c.setpoints["waypoints_enu"], dtype=float)
        last = t >= t[-1] - 5.0
        off = np.hypot(*(xyz[last, :2] - corners[-1]).T).max()
        height = np.abs(xyz[last, 2] - 15.0).max()
        # each corner passed within 3 m (the acceptance radius is 1 m; the log keeps ~2 Hz of the fleet state)
        passed = [round(float(np.hypot(*(xyz[:, :2] - corner).T).min()), 2) for corner in corners]
        ok = off < 1.0 and height < 1.0 and max(passed) < 3.0
        what = f"last 5 s within {off:.2f} m of its last corner, {height:.2f} m of 15 m; corners passed {passed}"
        (lines if ok else failed).append(f"{c.vessel}: {what}")
    print(f"\nx500_waypoints ({wall_s:.0f} s wall):\n" + "\n".join(lines + failed))
    assert len(lines) + len(failed) == 3 and not failed, "\n".join(failed)
    # the barometer (50 Hz) over the last 5 s of hover at 15 m: the ISA pressure at the drone's height
    t, xyz, _ = tracks["drone_1"]
    readings = [(stamp_s(m), m.fluid_pressure) for m in read(tmp_path / "rec", "/drone_1/air_pressure")]
    held = [(stamp, p) for stamp, p in readings if stamp > t[-1] - 5]
    heights = np.interp([stamp for stamp, _ in held], t, xyz[:, 2])
    isa = 101325.0 * (1.0 - 0.0065 * heights / 288.15) ** 5.2559  # ISO 2533 troposphere
    error = np.array([p for _, p in held]) - isa
    print(
        f"drone_1 barometer: {len(held)} readings in 5 s, median error {np.median(error):.2f} Pa, std {error.std():.2f}"
    )
    assert 200 <= len(held) <= 260 and abs(np.median(error)) < 3.0 and error.std() < 6.0
    # each drone, spawned with its gear 0.073 m above the calm sea, touched down on it once, at the start, at
    # sqrt(2 g h) = 1.20 m/s less at most one step's g dt (its speed at the start of that step): /lotusim/collisions
    contacts = list(read(tmp_path / "rec", "/lotusim/collisions"))
    touchdowns = [m for m in contacts if not m.ended]
    contact_height_m = load_vehicle("x500").aerial.contact_height_m
    assert sorted(m.vessel for m in touchdowns) == ["drone_1", "drone_2", "drone_3"], touchdowns
    for m in touchdowns:
        spawn = next(v for v in scenario.vessels if v.name == m.vessel).position_enu
        drop = spawn[2] - contact_height_m
        assert (m.kind, m.other, m.header.frame_id) == (Collision.KIND_SEA, "sea", "map")
        assert stamp_s(m) < 0.5 and (m.normal.x, m.normal.y, m.normal.z) == (0.0, 0.0, 1.0)
        assert (m.position.x, m.position.y) == pytest.approx(spawn[:2], abs=0.01)
        assert m.position.z == pytest.approx(contact_height_m, abs=1e-4)  # the gear on the sea at z = 0 (nearly level)
        assert math.sqrt(2 * 9.81 * drop) - 9.81 * 0.02 - 0.01 <= m.relative_speed <= math.sqrt(2 * 9.81 * drop)
    # ... and lifted off it once, at its takeoff: after the touchdown, near its spot (the 6 m/s wind pushes the
    # resting drone a few cm), climbing
    lift_offs = {m.vessel: m for m in contacts if m.ended}
    assert sorted(lift_offs) == ["drone_1", "drone_2", "drone_3"] and len(contacts) == 6, contacts
    for m in touchdowns:
        up = lift_offs[m.vessel]
        assert (up.kind, up.other) == (Collision.KIND_SEA, "sea") and stamp_s(up) > stamp_s(m)
        assert (up.position.x, up.position.y) == pytest.approx((m.position.x, m.position.y), abs=0.5)
        assert contact_height_m < up.position.z < contact_height_m + 0.5 and up.relative_speed < 0.0


def starve_host_during_takeoff(
    out_dir: Path, env: dict, stops: int, stop_s: float, run_s: float, sets: tuple[str, ...] = ()
) -> tuple:
    """`lotusim run x500_waypoints` for 16 s; 4 s after the spawn (the drones climbing) its controller host is
    stopped (SIGSTOP) `stops` times for stop_s wall seconds, running run_s between two stops, as the OS stops a
    process starved of CPU. Returns (the largest sim time /clock advanced during one stop (s), [(drone, height at
    the end m, largest fall m)], the run's output and logs)."""
    out, record = out_dir / "run.txt", out_dir / "rec"
    args = ["x500_waypoints", "--duration", "16", "--rtf", "1", "--headless", "--record", str(record)]
    args += [a for s in sets for a in ("--set", s)]
    probe = Probe(int(env["ROS_DOMAIN_ID"]), name="starving_probe")
    clock: list[tuple[float, float]] = []  # (monotonic wall s, sim s) of each /clock
    probe.node.create_subscription(
        Clock, "/clock", lambda m: clock.append((time.monotonic(), m.clock.sec + m.clock.nanosec * 1e-9)), 100
    )
    windows = []
    run = start_run([*args, "--log-dir", str(out_dir / "logs")], out, env)
    try:
        wait_for_text(out, "running for", run, timeout_s=90.0, pause=probe.spin_once)
        host = node_pid(run.pid, "controller_host_0")
        assert host is not None, tail(out)
        probe.spin(4.0)  # the takeoff starts after 2 s of steady states: climbing by now
        for _ in range(stops):
            os.kill(host, signal.SIGSTOP)
            windows.append(time.monotonic())
            probe.spin(stop_s)
            windows[-1] = (windows[-1], time.monotonic())
            os.kill(host, signal.SIGCONT)
            probe.spin(run_s)
        deadline = time.monotonic() + 120.0
        while run.poll() is None and time.monotonic() < deadline:
            probe.spin_once(0.1)
    finally:
        stop_run(run)
        probe.close()
    assert run.returncode == 0, tail(out)
    wall, sim = np.array(clock).T
    advanced = max(float(np.interp(b, wall, sim) - np.interp(a, wall, sim)) for a, b in windows)
    heights: dict[str, list] = {}
    bags = sorted(record.rglob("*.mcap"))
    assert bags, tail(out)
    with AnyReader([bags[0].parent]) as reader:  # the drones' odometry (50 Hz)
        connections = [c for c in reader.connections if c.topic.endswith("/odom")]
        for connection, _, raw in reader.messages(connections=connections):
            m = reader.deserialize(raw, connection.msgtype)
            heights.setdefault(connection.topic.split("/")[1], []).append((stamp_s(m), m.pose.pose.position.z))
    drones = []
    for name, rows in sorted(heights.items()):
        z = np.array(sorted(rows))[:, 1]
        drones.append((name, float(z[-1]), float((np.maximum.accumulate(z) - z).max())))
    logs = "\n".join(p.read_text(errors="replace") for p in (out_dir / "logs").rglob("*") if p.is_file())
    return advanced, drones, out.read_text(errors="replace") + logs


def test_a_starved_drone_host_holds_the_sim_time_and_its_drones_climb_on(tmp_path, own_domain_env):
    """`lotusim run x500_waypoints`, the drones' controller host stopped (SIGSTOP) four times for 0.5 s of wall
    time during their takeoff: the clock master waits for the host's answers (max_control_lag_s 0.05 s,
    docs/simulation.md 'Waiting for the controllers'), so /clock advances by less than 0.1 s during a stop (by the
    whole 0.5 s with max_control_lag_s 0), the worker logs the wait, and every drone climbs on to its 15 m without
    falling back by more than 0.3 m. (Why the wait matters: test_autonomy_multirotor.py, commands late all the
    time by 0.08 s flip an X500.)"""
    advanced, drones, logs = starve_host_during_takeoff(tmp_path, dict(own_domain_env), 4, stop_s=0.5, run_s=0.5)
    print(f"\nhost stopped 4 x 0.5 s: /clock advanced {advanced:.3f} s at most during a stop")
    print("\n".join(f"  {n}: height at the end {z:.2f} m, largest fall {f:.2f} m" for n, z, f in drones))
    assert advanced < 0.1, f"the sim time went on {advanced:.2f} s while the host was stopped"
    assert "sim time held" in logs, "the wait is not logged"
    assert len(drones) == 3
    for name, z, fell in drones:
        assert abs(z - 15.0) < 1.0 and fell < 0.3, f"{name}: height {z:.2f} m, fell {fell:.2f} m"
