"""Reproducible runs, the parts below `lotusim run`: the dynamics worker's run limit (`run_until_s`: held at a sim
time in every mode, exact to the step, set over ROS's parameter service), the fleet state shown while held, and
the CDR reading lotusim run uses to follow sim time without /clock."""

from __future__ import annotations

import math
import time

import pytest

pytestmark = pytest.mark.ros  # starts DDS participants (nodes, node processes or the ros2 CLI)
pytest.importorskip("rclpy")

from rcl_interfaces.msg import Parameter as ParameterMsg  # noqa: E402
from rcl_interfaces.msg import ParameterType, ParameterValue  # noqa: E402
from rcl_interfaces.srv import SetParameters  # noqa: E402
from rclpy.serialization import serialize_message  # noqa: E402

from lotusim_core.sim.run_clock import fleet_state_head, until_iteration  # noqa: E402
from lotusim_interfaces.msg import FleetState  # noqa: E402
from simnodes import Sim, create_item, spin_until  # noqa: E402


def _set_until(sim: Sim, value: float):
    """Set dynamics_0's run_until_s through its parameter service, as lotusim run and `ros2 param set` do."""
    return _set(sim, "run_until_s", ParameterValue(type=ParameterType.PARAMETER_DOUBLE, double_value=value))


def _set(sim: Sim, name: str, value_msg: ParameterValue, node: str = "dynamics_0"):
    client = sim.client.create_client(SetParameters, f"/{node}/set_parameters")
    spin_until(sim.executor, client.service_is_ready, 30.0, "set_parameters")
    future = client.call_async(SetParameters.Request(parameters=[ParameterMsg(name=name, value=value_msg)]))
    spin_until(sim.executor, future.done, 30.0, "set_parameters answer")
    return future.result().results[0]


def _paused(value: bool) -> ParameterValue:
    return ParameterValue(type=ParameterType.PARAMETER_BOOL, bool_value=value)


def _rtf(value: float) -> ParameterValue:
    return ParameterValue(type=ParameterType.PARAMETER_DOUBLE, double_value=value)


def test_pause_resume_and_real_time_factor_at_run_time(ros_context):
    """`paused` holds a realtime master (and its follower) at the step it reached and releases it; a new
    `real_time_factor` re-times the master's step timer (scaled mode); bad values and followers refuse it."""
    sim = Sim(ros_context, mode="realtime", step_s=0.02, workers=2)
    try:
        sim.spin_for(0.5)
        assert _set(sim, "paused", _paused(True)).successful
        sim.spin_for(0.2)  # a step already under way may finish
        held = sim.worker.iteration
        sim.spin_for(1.0)
        assert sim.worker.iteration == held and sim.workers[1].iteration <= held
        assert _set(sim, "paused", _paused(False)).successful
        spin_until(sim.executor, lambda: sim.worker.iteration > held + 10, 10.0, "the worker to run on")
        assert _set(sim, "real_time_factor", _rtf(4.0)).successful
        assert sim.worker.settings.mode == "scaled" and sim.worker.settings.rtf_target == 4.0
        start, t0 = sim.worker.iteration, time.monotonic()
        sim.spin_for(2.0)
        rtf = (sim.worker.iteration - start) * 0.02 / (time.monotonic() - t0)
        assert rtf > 2.0  # sanity bound (realtime would give 1): the timer ticks four times faster
        for bad in (0.0, -1.0, math.nan, 1e9):
            refused = _set(sim, "real_time_factor", _rtf(bad))
            assert not refused.successful and "real_time_factor" in refused.reason
        follower = _set(sim, "real_time_factor", _rtf(2.0), node="dynamics_1")
        assert not follower.successful and "clock master" in follower.reason
        assert sim.worker.settings.rtf_target == 4.0
    finally:
        sim.close()


@pytest.mark.parametrize("mode", ["fast", "realtime"])
def test_worker_held_at_run_until_then_released_to_the_exact_step(ros_context, mode):
    """Held at 0 from the start (no step while the fleet is spawned), then run to 0.5 s and held at exactly the
    first step at or after it (0.5 s / 0.02 s = step 25), in a free-running mode."""
    sim = Sim(ros_context, mode=mode, step_s=0.02, run_until_s=0.0)
    try:
        states: list[FleetState] = []
        sim.client.create_subscription(FleetState, "/lotusim/fleet_state", states.append, 100)
        sim.spin_for(0.5)
        assert sim.worker.iteration == 0  # held
        result = sim.command([create_item("auv", "lrauv")])
        assert result.succeeded == 1
        # held: the new fleet is published at once, at sim time 0 (the sensor node learns of it from there)
        spin_until(sim.executor, lambda: any(list(s.names) == ["auv"] for s in states), 10.0, "fleet state at 0")
        assert all(s.header.stamp.sec == 0 and s.header.stamp.nanosec == 0 for s in states)
        assert sim.worker.iteration == 0
        assert _set_until(sim, 0.5).successful
        spin_until(sim.executor, lambda: sim.worker.iteration >= 25, 30.0, "the worker to run to 0.5 s")
        sim.spin_for(0.3)
        assert sim.worker.iteration == 25
        spin_until(sim.executor, lambda: states[-1].iteration == 25, 10.0, "the last fleet state")
        assert (states[-1].header.stamp.sec, states[-1].header.stamp.nanosec) == (0, 500_000_000)
        # NaN is refused (the limit stays); negative means no limit
        refused = _set_until(sim, math.nan)
        assert not refused.successful and "nan" in refused.reason
        sim.spin_for(0.2)
        assert sim.worker.iteration == 25
        assert _set_until(sim, -1.0).successful
        spin_until(sim.executor, lambda: sim.worker.iteration > 30, 30.0, "the worker to run on")
    finally:
        sim.close()


def test_lockstep_steps_are_cut_at_run_until(ros_context):
    sim = Sim(ros_context, mode="lockstep", step_s=0.02, run_until_s=0.1)
    try:
        reply = sim.step(3)
        assert reply.success and reply.iteration == 3
        reply = sim.step(10)  # only 2 more reach 0.1 s
        assert not reply.success and reply.iteration == 5 and "run_until_s" in reply.message
        assert sim.step(0).iteration == 5  # a step of 0 is a query of the sim time
    finally:
        sim.close()


def test_until_iteration_is_exact_in_integer_nanoseconds():
    assert until_iteration(30.0, 20_000_000) == 1500
    assert until_iteration(10.0, 30_000_000) == 334  # the first step at or after 10 s: 10.02 s
    assert until_iteration(0.0, 20_000_000) is None  # no duration: no limit


def test_fleet_state_head_reads_stamp_and_worker_from_cdr():
    for frame in ("", "m", "map", "abcd", "abcde"):  # every alignment of the worker string
        msg = FleetState(worker="worker_12", names=["a"])
        msg.header.frame_id = frame
        msg.header.stamp.sec, msg.header.stamp.nanosec = 7, 20_000_000
        assert fleet_state_head(serialize_message(msg)) == (7_020_000_000, "worker_12")


def test_recorder_keeps_fleet_states_by_sim_time_and_ends_with_the_last(ros_context, tmp_path):
    """Decimation by stamp (the same messages in every run, whatever was lost in between) and the newest state
    written at close: a 10 s run at 0.03 s steps ends at 10.02 s, off the 0.09 s grid, and is recorded there."""
    import rclpy
    from rosbags.highlevel import AnyReader

    from lotusim_core.sim.recorder import BagRecorder, make_typestore, stamp_ns

    node = rclpy.create_node("recorder_probe", context=ros_context)
    try:
        recorder = BagRecorder(
            node, tmp_path / "rec", {"/lotusim/fleet_state": FleetState}, every_ns={"/lotusim/fleet_state": 90_000_000}
        )
        connection = next(iter(recorder._writer.connections))
        for k in (*range(1, 301), *range(302, 335)):  # step 301 lost on the way
            msg = FleetState(worker="worker_0", iteration=k)
            msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(k * 30_000_000, 10**9)
            recorder._write(connection, "/lotusim/fleet_state", serialize_message(msg))
        recorder.close()
    finally:
        node.destroy_node()
    with AnyReader([tmp_path / "rec"], default_typestore=make_typestore()) as reader:
        stamps = [stamp_ns(raw) for _, _, raw in reader.messages()]
    assert stamps == [k * 90_000_000 for k in range(1, 112)] + [10_020_000_000]


def test_release_waits_until_every_worker_applies_the_published_environment(ros_context):
    """lotusim run releases sim time only once each worker reports (SimStats.environment_revision) the
    environment revision on /lotusim/environment: a worker that got the latched environment late (seen in CI on a
    loaded machine) would otherwise start the run without its current and apply it at some random sim time."""
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

    from lotusim_core.sim.run_clock import RunClock
    from lotusim_interfaces.msg import EnvironmentConfig, SimStats

    sim = Sim(ros_context, mode="fast", step_s=0.02, run_until_s=0.0)
    try:
        stats: dict[str, SimStats] = {}
        sim.client.create_subscription(SimStats, "/lotusim/stats", lambda m: stats.__setitem__(m.worker, m), 10)
        clock = RunClock(sim.client, sim.spin_once, "dynamics_0", ["worker_0"], 0.02, 1)

        # no environment published yet: the error says which nodes publish it (none)
        with pytest.raises(
            TimeoutError, match=r"no environment on /lotusim/environment within 1 s; its publishers in the graph: none"
        ):
            clock.wait_ready(1.0, sim.spin_until, stats)
        # a worker's report from before the environment came: held, with the reason in the error
        stale = {"worker_0": SimStats(worker="worker_0", environment_revision=0)}
        latched = QoSProfile(
            depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE
        )
        publisher = sim.client.create_publisher(EnvironmentConfig, "/lotusim/environment", latched)
        publisher.publish(
            EnvironmentConfig(revision=7, config_yaml="current: {model: constant, velocity_enu: [0.3, 0.0, 0.0]}")
        )
        with pytest.raises(TimeoutError, match="did not apply the environment"):
            clock.wait_ready(3.0, sim.spin_until, stale)
        # the worker's own reports: ready once it applies revision 7
        clock.wait_ready(30.0, sim.spin_until, stats)
        assert stats["worker_0"].environment_revision == 7 and sim.worker.environment_revision == 7
        assert sim.worker.iteration == 0  # still held: wait_ready releases nothing
    finally:
        sim.close()
