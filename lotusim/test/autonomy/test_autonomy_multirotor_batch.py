"""The batched multirotor cascade (lotusim_autonomy.multirotor_batch) against the per-drone law
(lotusim_autonomy.multirotor.MultirotorController): the same rotor speeds, integrals and held headings to 1e-12 on
random states and targets of every kind (position with feed-forward and speed limit, velocity with yaw rate,
tilted and saturating cases), with different gains per drone; and MultirotorFleet (pilots + batch) flying a
takeoff and a mission step for step as the per-drone MultirotorPilot does. No DDS."""

from __future__ import annotations

import numpy as np
import pytest

from lotusim_autonomy.multirotor import (
    FlightMission,
    FlightTarget,
    MultirotorController,
    MultirotorGains,
    MultirotorPilot,
)
from lotusim_autonomy.multirotor_batch import MultirotorBatch, MultirotorFleet
from lotusim_autonomy.odometry import NedState
from lotusim_core.base.catalogue import load_vehicle

N = 64


@pytest.fixture(scope="module")
def x500():
    return load_vehicle("x500")


def random_gains(rng: np.random.Generator) -> MultirotorGains:
    g = MultirotorGains()
    g.position_p_per_s *= rng.uniform(0.5, 1.5)
    g.velocity_i_per_s2 *= rng.uniform(0.0, 2.0)
    g.rate_p_per_s *= rng.uniform(0.7, 1.3)
    g.speed_max_mps = rng.uniform(2.0, 8.0)
    g.tilt_max_deg = rng.uniform(20.0, 45.0)
    return g


def random_states(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    p = rng.normal(0.0, 20.0, (n, 3))
    rpy = np.column_stack([rng.uniform(-0.6, 0.6, n), rng.uniform(-0.6, 0.6, n), rng.uniform(-np.pi, np.pi, n)])
    nu = np.column_stack([rng.normal(0.0, 3.0, (n, 3)), rng.normal(0.0, 1.5, (n, 3))])
    return p, rpy, nu


def random_target(rng: np.random.Generator) -> FlightTarget:
    kind = rng.integers(4)
    heading = None if rng.random() < 0.4 else float(rng.uniform(-np.pi, np.pi))
    speed = None if rng.random() < 0.5 else float(rng.uniform(0.5, 10.0))
    if kind < 2:  # position, with or without feed-forward
        v_ff = rng.normal(0.0, 2.0, 3) if kind == 1 else np.zeros(3)
        return FlightTarget(rng.normal(0.0, 40.0, 3), v_ff, heading, 0.0, speed)
    return FlightTarget(None, rng.normal(0.0, 6.0, 3), heading, float(rng.normal(0.0, 2.0)), speed)


def targets_of(targets: list[FlightTarget]) -> dict[str, np.ndarray]:
    return {
        "position_ned": np.array([t.position_ned_m if t.position_ned_m is not None else np.zeros(3) for t in targets]),
        "has_position": np.array([t.position_ned_m is not None for t in targets]),
        "velocity_ned": np.array([t.velocity_ned_mps for t in targets]),
        "heading_rad": np.array([np.nan if t.heading_rad is None else t.heading_rad for t in targets]),
        "yaw_rate_rad_s": np.array([t.yaw_rate_rad_s for t in targets]),
        "speed_max_mps": np.array([np.nan if t.speed_max_mps is None else t.speed_max_mps for t in targets]),
    }


def test_the_batched_cascade_equals_the_per_drone_law_on_random_states(x500):
    rng = np.random.default_rng(7)
    gains = [random_gains(rng) for _ in range(N)]
    singles = [MultirotorController(x500, g) for g in gains]
    batch = MultirotorBatch(x500, gains)
    rows = np.arange(N)
    saturated = 0
    for step in range(20):  # several steps: integrals and held headings carried along
        p, rpy, nu = random_states(rng, N)
        targets = [random_target(rng) for _ in range(N)]
        h = np.full(N, 0.02) if step else np.zeros(N)  # the first step of a controller has h = 0
        h[rng.random(N) < 0.1] = 0.0
        got = batch.step(rows, p, rpy, nu, targets_of(targets), h)
        for i, c in enumerate(singles):
            want = c.step(NedState(0.0, p[i], rpy[i], nu[i]), targets[i], float(h[i]))
            # rotor thrusts k_f ω² to 1e-12 of the largest (ω = √(T/k_f) itself turns a rounding of 1e-16 N at
            # zero thrust into 1e-5 rad/s), speeds to 1e-12 relative where the thrust is not zero
            k_f, t_max = c.mixer.k_f, c.mixer.thrust_max_n.max()
            np.testing.assert_allclose(k_f * got[i] ** 2, k_f * want**2, rtol=0, atol=1e-12 * t_max)
            lit = k_f * want**2 > 1e-9
            np.testing.assert_allclose(got[i][lit], want[lit], rtol=1e-12, atol=0)
            np.testing.assert_allclose(batch.velocity_integral[i], c.velocity_pid.integral, rtol=0, atol=1e-12)
            np.testing.assert_allclose(batch.rate_integral[i], c.rate_pid.integral, rtol=0, atol=1e-12)
            assert batch.heading_rad[i] == pytest.approx(c.heading_rad, abs=1e-12)
            np.testing.assert_allclose(batch.last["moment"][i], c.moment, rtol=1e-12, atol=1e-12)
            saturated += bool(np.any(want >= c.mixer.omega_max) or np.any(want <= c.mixer.omega_min))
    assert saturated > 50  # the saturation branches of the mixer were exercised


def test_a_subset_of_rows_steps_only_those_rows(x500):
    rng = np.random.default_rng(3)
    batch = MultirotorBatch(x500, [MultirotorGains() for _ in range(6)])
    single = MultirotorController(x500)
    p, rpy, nu = random_states(rng, 2)
    target = random_target(rng)
    rows = np.array([4, 1])
    got = batch.step(rows, p, rpy, nu, targets_of([target, target]), np.full(2, 0.02))
    want = single.step(NedState(0.0, p[0], rpy[0], nu[0]), target, 0.02)
    np.testing.assert_allclose(got[0], want, rtol=1e-12, atol=1e-5)
    assert not batch.velocity_integral[[0, 2, 3, 5]].any() and batch.velocity_integral[4].any()


def test_the_fleet_of_pilots_flies_as_the_per_drone_pilots(x500):
    """Takeoff, then a mission, then a landing, on a crude point-mass model of the states (any state sequence
    will do: both must give the same commands for the same states)."""
    rng = np.random.default_rng(11)
    n = 5
    fleet = MultirotorFleet(x500)
    pilots = [fleet.add() for _ in range(n)]
    singles = [MultirotorPilot(x500) for _ in range(n)]
    p, rpy, nu = random_states(rng, n)
    p[:, 2] = -0.3
    rpy[:, :2] *= 0.05
    for k in range(n):
        s = NedState(0.0, p[k], rpy[k], nu[k])
        for pilot in (pilots[k], singles[k]):
            pilot.takeoff(s, -10.0)
            pilot.set_mission(FlightMission([p[k] + [5.0, 0.0, -10.0], p[k] + [5.0, 5.0, -10.0]], 1.5))
    rows = np.arange(n)
    for step in range(300):
        t = 0.02 * step
        if step == 200:
            for k in range(n):
                s = NedState(t, p[k], rpy[k], nu[k])
                assert pilots[k].land(s) == singles[k].land(s)
        states = [NedState(t, p[k], rpy[k], nu[k]) for k in range(n)]
        got = fleet.step(rows, states, p, rpy, nu, np.full(n, 0.02 if step else 0.0))
        for k in range(n):
            want = singles[k].step(NedState(t, p[k], rpy[k], nu[k]), 0.02 if step else 0.0)
            np.testing.assert_allclose(got[k], want, rtol=1e-12, atol=1e-5)  # √ at zero thrust: see above
            assert pilots[k].phase == singles[k].phase
        # move the states: toward each pilot's target, with some noise
        for k in range(n):
            target = singles[k].target.position_ned_m
            if target is not None:
                p[k] += np.clip(target - p[k], -0.1, 0.1) + rng.normal(0.0, 0.01, 3)
        nu[:, :3] = rng.normal(0.0, 0.05, (n, 3))
    assert {pl.phase for pl in singles} <= {"landing", "disarmed"}
    assert all(pl.mission is not None and pl.mission.index == 1 for pl in singles)


def test_fleet_state_rows_convert_as_the_odometry_of_each_vessel():
    """odometry.ned_arrays (a FleetState's ENU/FLU rows) against ned_state (the frames module's path) per row."""
    from lotusim_autonomy.odometry import ned_arrays, ned_state

    rng = np.random.default_rng(5)
    n = 50
    p = rng.normal(0.0, 100.0, (n, 3))
    q = rng.normal(0.0, 1.0, (n, 4))
    q /= np.linalg.norm(q, axis=1)[:, None]
    twist = rng.normal(0.0, 2.0, (n, 6))
    position, rpy, nu = ned_arrays(p, q, twist)
    for i in range(n):
        want = ned_state(0.0, p[i], q[i], twist[i])
        np.testing.assert_allclose(position[i], want.position_ned_m, rtol=0, atol=1e-12)
        np.testing.assert_allclose(nu[i], want.nu_frd, rtol=0, atol=1e-12)
        d = (rpy[i] - want.rpy_ned_rad + np.pi) % (2 * np.pi) - np.pi  # angles equal modulo 2π
        np.testing.assert_allclose(d, 0.0, atol=1e-9)


def test_the_rotor_commands_message_is_written_in_place_and_reads_back():
    """The host's JointState of rotor commands (serialized once, stamp and velocities rewritten in place) reads back
    with rclpy as the names, stamp and values written, for names of every length modulo the CDR alignments."""
    from rclpy.serialization import deserialize_message
    from sensor_msgs.msg import JointState

    from lotusim_core.ros.joint_commands import JointCommands

    for n in (1, 2, 3, 5, 8, 13, 360):
        names = [f"{'x' * (i % 9)}500_{i:04d}/rotor_{i % 4}" for i in range(n)]
        out = JointCommands(names)
        assert out.in_place
        for stamp in ((12, 500), (1_000_000, 999_999_999)):
            values = np.random.default_rng(n).uniform(0.0, 1000.0, n)
            out.velocity[:] = values
            back = deserialize_message(out.message(*stamp), JointState)
            assert list(back.name) == names and (back.header.stamp.sec, back.header.stamp.nanosec) == stamp
            assert list(back.velocity) == values.tolist() and len(back.position) == len(back.effort) == 0
    fallback = JointCommands(["a/rotor_0", "b/rotor_1"])  # the full serialization when the layout check fails
    fallback.in_place, fallback.velocity = False, np.array([3.0, 4.0])
    back = deserialize_message(fallback.message(5, 6), JointState)
    assert (
        list(back.velocity) == [3.0, 4.0] and back.header.stamp.nanosec == 6 and back.name == ["a/rotor_0", "b/rotor_1"]
    )
