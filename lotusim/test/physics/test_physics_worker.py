"""The vessels of one dynamics worker without ROS (lotusim_physics.worker, worker_settings, held_environment,
output_layout): parameters and their checks, create / delete / move and their result codes, poses converted from
ROS frames, actuator and wrench commands, stepping with the held environment and the outputs due, faults, the
listing, and a checkpoint that continues bit for bit. Expected values are worked out by hand in the comments."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from lotusim_physics import checkpoint as ckpt
from lotusim_physics import layout as L
from lotusim_physics import output_layout
from lotusim_physics.held_environment import HeldEnvironment
from lotusim_physics.worker import CREATE, DELETE, MOVE, FleetWorker, physics_poses
from lotusim_physics.worker_settings import PARAMETERS, WorkerSettings

ENV_YAML = (
    "current: {model: constant, velocity_enu: [0.3, 0.4, 0.0]}\n"
    "wind: {speed_mps: 10.0, from_deg: 270.0}\n"  # a westerly: the air moves towards the east
)


def _settings(**values) -> WorkerSettings:
    return WorkerSettings.from_parameters({**PARAMETERS, "mode": "lockstep", **values})


def _vessel(name: str, model: str = "lrauv", xyz=(0.0, 0.0, -5.0), q_xyzw=(0.0, 0.0, 0.0, 1.0), overrides=""):
    """A VesselDescription look-alike: ENU position, ENU <- FLU quaternion x y z w, FLU twist zero."""
    v3 = lambda x, y, z: SimpleNamespace(x=x, y=y, z=z)  # noqa: E731
    pose = SimpleNamespace(position=v3(*xyz), orientation=SimpleNamespace(**dict(zip("xyzw", q_xyzw, strict=True))))
    twist = SimpleNamespace(linear=v3(0.0, 0.0, 0.0), angular=v3(0.0, 0.0, 0.0))
    return SimpleNamespace(name=name, model=model, overrides_yaml=overrides, pose=pose, twist=twist)


def _codes(results) -> list[str]:
    return [r.code for r in results]


# --- parameters ---------------------------------------------------------------------------------------------
def test_parameters_are_checked_and_realtime_means_rtf_1():
    s = WorkerSettings.from_parameters({**PARAMETERS, "real_time_factor": 4.0, "fleet_state_every": 0})
    assert s.mode == "realtime" and s.rtf_target == 1.0 and s.fleet_state_every == 1 and s.step_ns == 30_000_000
    assert _settings(mode="scaled", real_time_factor=4.0).rtf_target == 4.0
    for bad, match in (
        ({"mode": "warp"}, "parameter mode"),
        ({"step_s": 0.0}, "parameter step_s"),
        ({"step_s": float("nan")}, "parameter step_s"),
        ({"odom_rate_hz": -1.0}, "parameter odom_rate_hz"),
        ({"fleet_state_rate_hz": float("inf")}, "parameter fleet_state_rate_hz"),
    ):
        with pytest.raises(ValueError, match=match):
            _settings(**bad)


def test_output_schedules_come_from_the_rates():
    state, odom = _settings(step_s=0.025, fleet_state_every=4).schedules()
    assert state.period_ns == 100_000_000 and odom.period_ns == 100_000_000  # every 4 steps; odometry at 10 Hz
    state, odom = _settings(fleet_state_rate_hz=5.0, odom_rate_hz=0.0).schedules()
    assert state.period_ns == 200_000_000 and odom is None
    assert _settings(step_s=0.03, odom_rate_hz=50.0).too_fast() == ["odom_rate_hz"]  # 20 ms < 30 ms
    assert _settings().too_fast() == []


# --- commands -----------------------------------------------------------------------------------------------
def test_poses_are_converted_from_ros_frames_to_the_physics_frames():
    # ENU (1, 2, -3) is NED (2, 1, 3); yaw 90 deg ENU (facing north) is NED heading 0: q_ned_frd identity
    s = np.sqrt(0.5)
    ((p, q, nu),) = physics_poses([_vessel("a", xyz=(1.0, 2.0, -3.0), q_xyzw=(0.0, 0.0, s, s))])
    np.testing.assert_allclose(p, [2.0, 1.0, 3.0])
    np.testing.assert_allclose(np.abs(q), [1.0, 0.0, 0.0, 0.0], atol=1e-12)
    np.testing.assert_array_equal(nu, np.zeros(6))


def test_create_delete_move_and_their_result_codes():
    w = FleetWorker("worker_3", _settings())
    results = w.run_commands(
        [
            (CREATE, _vessel("a", xyz=(1.0, 2.0, -3.0))),
            (CREATE, _vessel("a")),
            (CREATE, _vessel("9lives")),
            (CREATE, _vessel("b", model="no_such_model")),
            (CREATE, _vessel("c", overrides="mass_kg: [1")),
            (CREATE, _vessel("d", q_xyzw=(0.0, 0.0, 0.0, 0.0))),  # zero quaternion: only this one fails
            (MOVE, _vessel("ghost")),
            (DELETE, _vessel("ghost")),
            (7, _vessel("a")),
            (CREATE, _vessel("e")),
        ]
    )
    assert _codes(results[:4]) == ["OK", "DUPLICATE_NAME", "INVALID_NAME", "UNKNOWN_MODEL"]
    assert "unknown vehicle model" in results[3].reason  # (the MAS server refuses it first; a worker too)
    assert _codes(results[4:]) == [
        "INVALID_OVERRIDES", "INVALID_POSE", "UNKNOWN_VESSEL", "UNKNOWN_VESSEL", "INTERNAL_ERROR", "OK"
    ]  # fmt: skip
    assert results[0].ok and results[0].worker == "worker_3" and not results[1].ok
    assert "worker_3" in results[1].reason and "quaternion" in results[5].reason and "7" in results[8].reason
    assert w.fleet.names == ["a", "e"] and set(w.vessels) == {"a", "e"}
    np.testing.assert_allclose(w.fleet.position_ned[0], [2.0, 1.0, 3.0])
    entry = w.vessels["a"]
    assert (entry.model, entry.domain, len(entry.thruster_cmd), len(entry.fin_cmd)) == ("lrauv", "underwater", 1, 2)

    version = w.layout_version
    moved = w.run_commands([(MOVE, _vessel("a", xyz=(10.0, 20.0, -1.0))), (DELETE, _vessel("e"))])
    assert _codes(moved) == ["OK", "OK"] and moved[0].worker == "worker_3" and moved[1].worker == ""
    assert w.fleet.names == ["a"] and w.layout_version > version
    np.testing.assert_allclose(w.fleet.position_ned[0], [20.0, 10.0, 1.0])


def test_commands_are_held_and_non_finite_ones_rejected():
    w = FleetWorker("w", _settings())
    w.run_commands([(CREATE, _vessel("a"))])
    assert w.command_actuator("a", "thruster", 0, 25.0) == ""
    assert w.command_actuator("a", "fin", 1, 0.1) == ""
    problem = w.command_actuator("a", "thruster", 0, float("nan"))
    assert "thruster 0" in problem and "rejected" in problem
    assert w.vessels["a"].thruster_cmd.tolist() == [25.0] and w.vessels["a"].fin_cmd.tolist() == [0.0, 0.1]
    assert w.command_actuator("gone", "thruster", 0, float("nan")) == ""  # another vessel's: ignored
    assert w.command_wrench("a", np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])) == ""
    # FLU -> FRD: y and z (force and torque) change sign
    np.testing.assert_array_equal(
        w.fleet.state_arrays()["xs"][0, L.X_WRENCH : L.X_WRENCH + 6], [1.0, -2.0, -3.0, 4.0, -5.0, -6.0]
    )
    assert "wrench" in w.command_wrench("a", np.array([np.inf, 0, 0, 0, 0, 0]))


# --- stepping ----------------------------------------------------------------------------------------------
def test_batches_end_where_outputs_are_due_and_where_the_environment_is_sampled():
    w = FleetWorker("w", _settings(step_s=0.025, fleet_state_every=4, odom_rate_hz=0.0))
    assert w.steps_to_next_output() == 1000  # no vessel, nothing due: the chunk limit
    w.run_commands([(CREATE, _vessel("a"))])
    assert w.steps_to_next_output() == 4  # the fleet state after step 4
    w.integrate(4)
    assert w.iteration == 4 and w.sim_time_ns == 100_000_000 and w.due().state
    w.apply_environment(ENV_YAML, 3)
    assert w.steps_to_next_output() == 4  # sample due now: then again 100 ms = 4 steps later
    w.integrate(1)
    assert w.steps_to_next_output() == 3  # sampled at 100 ms, next at 200 ms: 3 steps from 125 ms


def test_the_held_environment_reaches_the_physics_in_ned():
    w = FleetWorker("w", _settings(step_s=0.02))
    w.run_commands([(CREATE, _vessel("a")), (CREATE, _vessel("b", xyz=(50.0, 0.0, -5.0)))])
    extras = w.extras_version
    w.apply_environment(ENV_YAML, 5)
    assert w.environment.revision == 5 and w.environment.config_yaml == ENV_YAML
    w.integrate(1)
    assert w.extras_version == extras + 1  # the new samples change the fleet state's environment columns
    xs = w.fleet.state_arrays()["xs"]
    # current ENU (0.3, 0.4, 0) is NED (0.4, 0.3, 0); wind towards the east at 10 m/s is NED (0, 10, 0)
    np.testing.assert_allclose(xs[:, L.X_CUR : L.X_CUR + 3], [[0.4, 0.3, 0.0]] * 2)
    np.testing.assert_allclose(xs[:, L.X_WIND : L.X_WIND + 3], [[0.0, 10.0, 0.0]] * 2, atol=1e-12)
    enu = np.zeros((2, 6))
    w.environment.write_enu(enu)
    np.testing.assert_allclose(enu, [[0.3, 0.4, 0.0, 10.0, 0.0, 0.0]] * 2, atol=1e-12)
    with pytest.raises(Exception):  # noqa: B017 - whatever the loader raises; nothing changes
        w.apply_environment("current: {model: nonsense}", 6)
    assert w.environment.revision == 5 and w.environment.config_yaml == ENV_YAML


def test_a_fault_freezes_one_vessel_and_the_listing_says_why():
    w = FleetWorker("w", _settings(step_s=0.02))
    w.run_commands([(CREATE, _vessel("ok")), (CREATE, _vessel("bad", xyz=(9.0, 0.0, -5.0)))])
    w.command_wrench("bad", np.array([1e9, 0.0, 0.0, 0.0, 0.0, 0.0]))  # finite but absurd: speed beyond the limit
    extras = w.extras_version
    faults = w.integrate(1)
    assert [f.vessel for f in faults] == ["bad"] and w.extras_version == extras + 1
    (ok, pos_ok, q_ok, why_ok), (bad, _, _, why_bad) = w.listing()
    assert (ok.name, why_ok) == ("ok", None) and bad.name == "bad" and "speed" in why_bad
    np.testing.assert_allclose(pos_ok, [0.0, 0.0, -5.0], atol=1e-3)  # ENU, barely moved in one step
    np.testing.assert_allclose(q_ok, [0.0, 0.0, 0.0, 1.0], atol=1e-6)  # x y z w


def test_a_restored_checkpoint_continues_bit_for_bit():
    settings = _settings(step_s=0.02)
    w = FleetWorker("w", settings)
    w.run_commands([(CREATE, _vessel("auv")), (CREATE, _vessel("usv", "wamv", (5.0, 0.0, 0.0)))])
    w.apply_environment(ENV_YAML, 1)
    w.command_actuator("auv", "thruster", 0, 30.0)
    w.command_actuator("auv", "fin", 0, 0.05)
    w.integrate(13)
    meta, arrays = w.checkpoint()
    state = ckpt.build("test", meta, arrays, settings.step_ns)
    other = FleetWorker("w", settings)
    other.run_commands([(CREATE, _vessel("gone"))])
    assert other.restore(state) == ["gone"]
    assert other.iteration == 13 and other.fleet.names == ["auv", "usv"] and other.vessels["auv"].fin_cmd[0] == 0.05
    for worker in (w, other):
        for _ in range(3):
            worker.integrate(worker.steps_to_next_output())
    assert w.iteration == other.iteration
    for key, value in w.fleet.state_arrays().items():
        assert np.array_equal(value, other.fleet.state_arrays()[key]), key


# --- held environment -----------------------------------------------------------------------------------------
def test_samples_are_held_for_a_period_and_taken_again_when_the_fleet_changes():
    env = HeldEnvironment(0.1)
    fleet = SimpleNamespace(names=["a"], position_ned=np.zeros((1, 3)))
    assert not env.active and env.steps_to_next_sample(0, 30_000_000) == 4  # ceil(100 / 30)
    env.apply(ENV_YAML, 2)
    assert env.active and env.sample(0, fleet) and env.next_ns == 100_000_000
    assert not env.sample(90_000_000, fleet)  # held until 100 ms
    assert env.steps_to_next_sample(90_000_000, 30_000_000) == 1
    np.testing.assert_allclose(env.current(0.0, fleet.position_ned), [[0.4, 0.3, 0.0]])
    two = SimpleNamespace(names=["a", "b"], position_ned=np.zeros((2, 3)))
    assert env.sample(90_000_000, two) and env.held_for(2)  # another vessel count: sampled again at once
    env.invalidate()
    assert not env.held_for(2)
    dst = np.ones((2, 6))
    env.write_enu(dst)
    assert not dst.any()  # nothing held: zeros


# --- output layout ---------------------------------------------------------------------------------------------
def test_odometry_rows_and_state_positions():
    # 7 vessels in 3 groups: group 0 holds rows 0 3 6, group 2 rows 2 5
    assert output_layout.odometry_rows(7, (0, 2), 3).tolist() == [0, 3, 6, 2, 5]
    assert output_layout.odometry_rows(2, (1,), 3).tolist() == [1]
    assert output_layout.stamp_of(3_250_000_001) == (3, 250_000_001)
    # a FleetState whose flat arrays start at doubles 100, 200, 300, 400: vessel 1's columns
    flat = {name: 100 * (k + 1) + np.arange(2 * width) for k, (name, width) in enumerate(
        output_layout.FLEET_STATE_ARRAYS.items())}  # fmt: skip
    index = output_layout.state_index(flat, 2)
    assert index.shape == (2, 19)
    assert index[1].tolist() == [103, 104, 105, 204, 205, 206, 207, *range(306, 312), *range(406, 412)]
    assert output_layout.ODOM_DOUBLES[:3] == ["pose.pose.position.x", "pose.pose.position.y", "pose.pose.position.z"]
    assert output_layout.ODOM_DOUBLES[3:7] == [f"pose.pose.orientation.{a}" for a in "xyzw"]  # columns 3:7 x y z w
    assert len(output_layout.ODOM_DOUBLES) == 13 and len(output_layout.TF_DOUBLES) == 7
    assert output_layout.TF_DOUBLES[3:] == [f"transform.rotation.{a}" for a in "xyzw"]
