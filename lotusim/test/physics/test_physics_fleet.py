"""The batched Fleet: heterogeneous fleets, batched == single bit for bit, add/remove between steps, snapshot
continuation, command validation and fault containment (docs/architecture.md, rule 7)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from physics_reference_vehicles import level_quat

from lotusim_core.base.catalogue import list_models, load_vehicle
from lotusim_physics.fleet import Fleet

DT = 0.02


def _spawn_all(fleet: Fleet, prefix: str = "") -> list[str]:
    """One vessel of every catalogue model, each with its own commands (thrusters, fins, wrench)."""
    names = []
    for k, model in enumerate(list_models()):
        spec = load_vehicle(model)
        name = f"{prefix}{model}"
        z = {"surface": 0.0, "aerial": -20.0}.get(spec.domain, 20.0)  # aerial vehicles in the air
        fleet.add(name, spec, [10.0 * k, -5.0 * k, z], level_quat(yaw_rad=0.3 * k))
        if spec.thrusters:
            lo = np.array([t.command_min for t in spec.thrusters])
            hi = np.array([t.command_max for t in spec.thrusters])
            fleet.set_thruster_commands(name, lo + (hi - lo) * np.linspace(0.6, 0.9, len(lo)))
        if spec.fins:
            fleet.set_fin_commands(name, np.linspace(-0.1, 0.1, len(spec.fins)))
        fleet.set_body_wrench(name, [1.0, -2.0, 0.5, 0.1, -0.2, 0.3])
        names.append(name)
    return names


def _current(t_s, pos):
    # sheared, time-varying current: depends on depth and time (the same for every vessel at the same point)
    return np.column_stack([0.3 + 0.01 * pos[:, 2], 0.2 * np.sin(0.1 * t_s) + 0 * pos[:, 0], 0 * pos[:, 0]])


def _wind(t_s, pos):
    return np.tile([-5.0, 3.0, 0.0], (len(pos), 1))


def test_catalogue_loads_into_one_heterogeneous_fleet_and_moves():
    fleet = Fleet(DT)
    names = _spawn_all(fleet)
    assert fleet.names == names and len(fleet) == len(names) >= 5
    for k in range(200):
        assert fleet.step(k * DT, current_ned=_current, wind_ned=_wind) == []
    assert np.all(np.isfinite(fleet.nu)) and not fleet.frozen.any()
    # every vessel is under way (thrust forward) and its quaternion stays unit; the 6,000-21,500 t ships, at 60-90 %
    # of a command range that is symmetric about zero, gain only 0.02-0.04 m/s in these 4 s
    assert np.all(np.linalg.norm(fleet.nu[:, :3], axis=1) > 0.01)
    np.testing.assert_allclose(np.linalg.norm(fleet.q_ned_frd, axis=1), 1.0, atol=1e-12)


@pytest.mark.parametrize("integrator", ["rk4", "euler"])
def test_batched_copies_are_bit_identical_to_single_vessels(integrator):
    """N copies of every model in one fleet give exactly the trajectories of each stepped alone."""
    singles = {}
    for model in list_models():
        alone = Fleet(DT, integrator=integrator, substeps=2)
        _spawn_only(alone, model, "x")
        for k in range(150):
            alone.step(k * DT, current_ned=_current, wind_ned=_wind)
        singles[model] = np.concatenate([alone.position_ned[0], alone.q_ned_frd[0], alone.nu[0], alone.nu_dot[0]])
    fleet = Fleet(DT, integrator=integrator, substeps=2, capacity=1)
    for copy in range(4):  # interleaved models, several copies each
        for model in list_models():
            _spawn_only(fleet, model, f"{copy}_")
    for k in range(150):
        fleet.step(k * DT, current_ned=_current, wind_ned=_wind)
    for i, name in enumerate(fleet.names):
        model = name.split("_", 1)[1]
        row = np.concatenate([fleet.position_ned[i], fleet.q_ned_frd[i], fleet.nu[i], fleet.nu_dot[i]])
        assert np.array_equal(row, singles[model]), name


def _spawn_only(fleet: Fleet, model: str, prefix: str) -> None:
    spec = load_vehicle(model)
    name = f"{prefix}{model}"
    z = {"surface": 0.0, "aerial": -20.0}.get(spec.domain, 20.0)
    fleet.add(name, spec, [0.0, 0.0, z], level_quat(yaw_rad=0.4))
    if spec.thrusters:
        fleet.set_thruster_commands(name, [0.7 * t.command_max for t in spec.thrusters])
    if spec.fins:
        fleet.set_fin_commands(name, [0.05] * len(spec.fins))


def test_add_and_remove_between_steps_keep_the_others_untouched():
    ref = Fleet(DT)
    _spawn_all(ref, "ref_")
    fleet = Fleet(DT, capacity=2)
    _spawn_all(fleet, "ref_")
    for k in range(50):
        ref.step(k * DT)
        fleet.step(k * DT)
        if k == 10:  # add a crowd, then remove it piecemeal while stepping: swap-remove and pool compaction
            for j in range(40):
                fleet.add(f"extra{j}", load_vehicle("bluerov2_heavy"), [j, 0.0, 5.0], [1, 0, 0, 0])
                fleet.set_thruster_commands(f"extra{j}", [0.5] * 8)
        if 20 <= k < 40:
            fleet.remove(f"extra{2 * (k - 20)}")
            fleet.remove(f"extra{2 * (k - 20) + 1}")
    assert sorted(fleet.names) == sorted(ref.names)
    for name in ref.names:
        i, j = ref.index(name), fleet.index(name)
        assert np.array_equal(ref.position_ned[i], fleet.position_ned[j])
        assert np.array_equal(ref.nu[i], fleet.nu[j])
        assert np.array_equal(ref.thrust_n(name), fleet.thrust_n(name))
    assert fleet._nt - fleet._dead_t == ref._nt  # the pools were compacted back to the live actuators
    with pytest.raises(KeyError, match="extra0"):
        fleet.remove("extra0")
    with pytest.raises(ValueError, match="already exists"):
        fleet.add("ref_lrauv", load_vehicle("lrauv"), [0, 0, 0], [1, 0, 0, 0])


def test_snapshot_continues_bit_identically():
    fleet = Fleet(DT, integrator="rk4", substeps=3)
    _spawn_all(fleet)
    for k in range(40):
        fleet.step(k * DT, current_ned=_current, wind_ned=_wind)
    snap = fleet.snapshot()
    clone = Fleet.from_snapshot(snap)
    for k in range(40, 120):
        fleet.step(k * DT, current_ned=_current, wind_ned=_wind)
        clone.step(k * DT, current_ned=_current, wind_ned=_wind)
    assert clone.names == fleet.names
    assert np.array_equal(clone._xs[: len(fleet)], fleet._xs[: len(fleet)])
    for name in fleet.names:
        assert np.array_equal(clone.thrust_n(name), fleet.thrust_n(name))
        assert np.array_equal(clone.fin_angles_rad(name), fleet.fin_angles_rad(name))


def test_nonfinite_or_wrong_length_commands_are_rejected_and_change_nothing():
    fleet = Fleet(DT)
    fleet.add("rov", load_vehicle("bluerov2_heavy"), [0, 0, 5], [1, 0, 0, 0])
    fleet.add("auv", load_vehicle("lrauv"), [0, 0, 5], [1, 0, 0, 0])
    fleet.set_thruster_commands("rov", [0.2] * 8)
    before = fleet.snapshot()
    with pytest.raises(ValueError, match=r"vessel 'rov': thruster commands must be finite"):
        fleet.set_thruster_commands("rov", [0.2] * 7 + [math.nan])
    with pytest.raises(ValueError, match=r"vessel 'rov': thruster commands expects 8 values, got 3"):
        fleet.set_thruster_commands("rov", [0.1, 0.2, 0.3])
    with pytest.raises(ValueError, match=r"vessel 'auv': fin commands must be finite"):
        fleet.set_fin_commands("auv", [math.inf, 0.0])
    with pytest.raises(ValueError, match=r"body wrench"):
        fleet.set_body_wrench("auv", [0, 0, 0, 0, 0, math.nan])
    with pytest.raises(ValueError, match="position_ned_m must be finite"):
        fleet.set_pose("auv", [math.nan, 0, 0], [1, 0, 0, 0])
    with pytest.raises(KeyError, match="ghost"):
        fleet.set_thruster_commands("ghost", [1.0])
    after = fleet.snapshot()
    for key in ("xs", "tp", "fp"):
        assert np.array_equal(before[key], after[key])


def test_exploding_vessel_is_frozen_and_reported_while_the_others_continue():
    fleet = Fleet(DT, max_speed_mps=100.0)
    fleet.add("good", load_vehicle("remus100"), [0, 0, 10], [1, 0, 0, 0])
    fleet.add("bad", load_vehicle("remus100"), [0, 0, 10], [1, 0, 0, 0])
    fleet.add("nan_env", load_vehicle("remus100"), [0, 0, 10], [1, 0, 0, 0])
    fleet.set_thruster_commands("good", [1000.0])
    for k in range(5):
        fleet.step(k * DT)
    last_good = fleet.position_ned[fleet.index("bad")].copy()
    fleet.set_body_wrench("bad", [1e9, 0, 0, 0, 0, 0])  # finite but absurd: speed jumps beyond the limit

    def current(t, pos):  # a broken environment model: NaN at one vessel only
        out = np.zeros((len(pos), 3))
        out[fleet.index("nan_env")] = np.nan
        return out

    reports = fleet.step(5 * DT, current_ned=current)
    assert {r.vessel for r in reports} == {"bad", "nan_env"}
    bad = next(r for r in reports if r.vessel == "bad")
    assert bad.sim_time_s == pytest.approx(0.1) and "speed" in bad.reason and "frozen" in str(bad)
    assert "environment" in next(r for r in reports if r.vessel == "nan_env").reason
    assert list(fleet.frozen) == [False, True, True]
    np.testing.assert_array_equal(fleet.position_ned[fleet.index("bad")], last_good)  # the last good state
    for k in range(6, 50):
        assert fleet.step(k * DT) == []  # frozen vessels are not re-reported
    assert np.all(np.isfinite(fleet.nu)) and fleet.nu[fleet.index("good"), 0] > 0.01  # still under way
    np.testing.assert_array_equal(fleet.position_ned[fleet.index("bad")], last_good)
    # a teleport (move) brings it back
    fleet.set_body_wrench("bad", [0.0] * 6)
    fleet.set_pose("bad", [1.0, 2.0, 3.0], [1, 0, 0, 0])
    fleet.step(50 * DT)
    assert not fleet.frozen[fleet.index("bad")]


@pytest.mark.parametrize("integrator", ["rk4", "euler"])
def test_several_steps_in_one_call_equal_one_call_per_step(integrator):
    """step(t, steps=k) (what the dynamics node does between two publications) is bit-identical to k calls
    with the environment held, for a heterogeneous fleet with commands."""
    held = {"current": None}

    def current_held(t_s, pos):  # sampled once per call by step(); held over the call's steps
        if held["current"] is None:
            held["current"] = _current(t_s, pos)
        return held["current"]

    one, many = Fleet(DT, integrator=integrator, substeps=2), Fleet(DT, integrator=integrator, substeps=2)
    _spawn_all(one)
    _spawn_all(many)
    k = 0
    for chunk in [1, 3, 7, 1, 20, 5, 13]:
        held["current"] = None
        assert many.step(k * DT, current_ned=current_held, wind_ned=_wind, steps=chunk) == []
        held["current"] = None
        for j in range(chunk):
            assert one.step((k + j) * DT, current_ned=current_held, wind_ned=_wind) == []
        k += chunk
    for attr in ("position_ned", "q_ned_frd", "nu", "nu_dot"):
        assert np.array_equal(getattr(one, attr), getattr(many, attr)), attr
    with pytest.raises(ValueError, match="steps must be >= 1"):
        many.step(0.0, steps=0)


def test_a_fault_inside_a_multi_step_call_is_dated_to_its_step_and_keeps_the_last_good_state():
    fleet, ref = Fleet(DT, max_speed_mps=3.0), Fleet(DT, max_speed_mps=3.0)
    for f in (fleet, ref):
        f.add("auv", load_vehicle("remus100"), [0, 0, 10], [1, 0, 0, 0])
        f.set_body_wrench("auv", [400.0, 0, 0, 0, 0, 0])  # accelerates through the 3 m/s limit in ~0.3 s
    k, reports = 0, []
    while not reports:  # the reference: one step per call, the step of the fault and the state before it
        before = ref.position_ned[0].copy()
        reports = ref.step(k * DT)
        k += 1
    assert k > 3  # the fault is well inside the multi-step call below
    reports_many = fleet.step(0.0, steps=k + 10)
    assert len(reports_many) == 1 and reports_many[0].code == reports[0].code
    assert reports_many[0].sim_time_s == pytest.approx(reports[0].sim_time_s) == pytest.approx((k - 1) * DT)
    np.testing.assert_array_equal(fleet.position_ned[0], before)


def test_state_enu_matches_frames_of_a_known_pose():
    fleet = Fleet(DT)
    spec = load_vehicle("remus100")
    fleet.add("a", spec, [10.0, 20.0, 5.0], level_quat(yaw_rad=math.pi / 2), [1.0, 0.2, 0.1, 0.0, 0.0, 0.3])
    pos, quat, twist, accel = fleet.state_enu()
    np.testing.assert_allclose(pos[0], [20.0, 10.0, -5.0])
    # heading east in NED -> ENU yaw 0: identity quaternion (x y z w)
    np.testing.assert_allclose(quat[0], [0.0, 0.0, 0.0, 1.0], atol=1e-15)
    np.testing.assert_allclose(twist[0], [1.0, -0.2, -0.1, 0.0, 0.0, -0.3])
    assert accel.shape == (1, 6)


def test_bad_settings_and_bad_models_are_refused_with_reasons():
    with pytest.raises(ValueError, match="integrator"):
        Fleet(DT, integrator="verlet")
    with pytest.raises(ValueError, match="dt_s"):
        Fleet(0.0)
    with pytest.raises(ValueError, match="substeps"):
        Fleet(DT, substeps=0)
    import dataclasses

    spec = load_vehicle("lrauv")
    fleet = Fleet(DT)
    with pytest.raises(ValueError, match=r"vessel 'x' \(model lrauv\): mass_kg must be positive"):
        fleet.add("x", dataclasses.replace(spec, mass_kg=-1.0), [0, 0, 0], [1, 0, 0, 0])
    bad_ma = np.diag([-500.0, 0, 0, 0, 0, 0])
    with pytest.raises(ValueError, match="not positive definite"):
        fleet.add("x", dataclasses.replace(spec, added_mass=bad_ma), [0, 0, 0], [1, 0, 0, 0])
    with pytest.raises(ValueError, match="non-zero quaternion"):
        fleet.add("x", spec, [0, 0, 0], [0, 0, 0, 0])
    assert len(fleet) == 0
    with pytest.raises(ValueError, match=r"must return an \(1, 3\) array"):
        fleet.add("y", spec, [0, 0, 5], [1, 0, 0, 0])
        fleet.step(0.0, current_ned=lambda t, p: np.zeros((2, 3)))


def test_substeps_equal_smaller_steps_and_euler_converges_to_rk4():
    """substeps=k at dt is k steps of dt/k (bit-identical without environment inputs, which are sampled per
    step); the first-order semi-implicit Euler approaches RK4 as the sub-step shrinks (error ~ h)."""
    spec = load_vehicle("remus100")

    def run(dt, substeps, integrator, seconds=4.0):
        fleet = Fleet(dt, integrator=integrator, substeps=substeps)
        fleet.add("r", spec, [0, 0, 10], level_quat(yaw_rad=0.3), [1.0, 0.1, 0.0, 0.0, 0.05, 0.2])
        fleet.set_thruster_commands("r", [1200.0])
        fleet.set_fin_commands("r", [0.1, -0.1, 0.05, -0.05])
        for k in range(round(seconds / dt)):
            fleet.step(k * dt)
        return np.concatenate([fleet.position_ned[0], fleet.nu[0]])

    assert np.array_equal(run(0.08, 4, "rk4"), run(0.02, 1, "rk4"))
    reference = run(0.02, 4, "rk4")
    errors = [np.max(np.abs(run(0.02, k, "euler") - reference)) for k in (1, 4)]
    assert errors[1] < errors[0] / 2.5  # first order: 4x smaller step, ~4x smaller error


def test_scatter_state_enu_follows_every_change_of_the_fleet():
    """scatter_state_enu (what the dynamics node publishes) equals state_enu after steps, after adds that grow
    the arrays and after removals: its cached views of the state must never be stale."""
    fleet = Fleet(DT, capacity=1)
    spec = load_vehicle("lrauv")

    def check():
        n = len(fleet.names)
        dst = np.full(n * 19, np.nan)
        fleet.scatter_state_enu(np.arange(n, dtype=np.int64), dst, np.arange(n * 19, dtype=np.int64).reshape(n, 19))
        np.testing.assert_array_equal(dst.reshape(n, 19), np.hstack(fleet.state_enu()))

    for k in range(5):  # capacity 1 -> 2 -> 4 -> 8: the state arrays are replaced
        fleet.add(f"v{k}", spec, [float(k), 2.0 * k, 10.0], level_quat(yaw_rad=0.2 * k), [1.0, 0, 0, 0, 0, 0.1])
        fleet.step(0.0, steps=3)
        check()
    fleet.remove("v1")
    fleet.step(0.1)
    check()
