"""Per-kind sensor banks (schedule, noise streams, state, checkpoint rows: lotusim_sensors.banks) and the samplers
of lotusim_sensors.samplers, checked against hand-computed values with the noise switched off, without ROS."""

from __future__ import annotations

import numpy as np
import pytest

from lotusim_core.base.geodesy import GeodeticOrigin
from lotusim_env.environment import build_environment
from lotusim_sensors.banks import SensorBanks
from lotusim_sensors.roster import Roster
from lotusim_sensors.samplers import SAMPLERS, Site, parse_beacons
from lotusim_sensors.suite import KINDS, parse_suite

G = 9.80665  # standard gravity (3rd CGPM)
P_ATM = 101325.0  # ISO 2533 sea-level pressure, Pa
STEP_NS = 10_000_000  # 100 Hz fleet states
ORIGIN = GeodeticOrigin(43.0, 5.0, 0.0)
NORTH = [0.0, 0.0, np.sin(np.pi / 4), np.cos(np.pi / 4)]  # yaw +90 deg ENU: facing north
LEVEL = [0.0, 0.0, 0.0, 1.0]  # facing east
QUIET = {
    "imu": {"accel_noise_density": 0.0, "accel_random_walk": 0.0, "accel_turn_on_bias_sigma": 0.0,
            "gyro_noise_density": 0.0, "gyro_random_walk": 0.0, "gyro_turn_on_bias_sigma": 0.0,
            "orientation_noise_std_rad": 0.0},
    "magnetometer": {"noise_std_t": 0.0},
    "pressure": {"depth_noise_std_m": 0.0},
    "gps": {"horizontal_noise_std_m": 0.0, "vertical_noise_std_m": 0.0, "velocity_noise_std_mps": 0.0},
    "dvl": {"bottom_track_noise_std_mps": 0.0, "water_track_noise_std_mps": 0.0},
    "altimeter": {"noise_std_m": 0.0},
    "ais": {"position_noise_std_m": 0.0},
    "usbl": {"range_noise_std_m": 0.0, "angle_noise_std_rad": 0.0},
}  # fmt: skip


def rig(states: dict[str, tuple[list[float], list[float], list[float]]], kinds: list[str], **site):
    """A roster with vessels {name: (position ENU m, quaternion x y z w, twist FLU)} carrying noiseless `kinds`,
    their banks (configured at t = 0, seed 1) and a site over a flat 50 m seabed."""
    roster = Roster()
    slots = roster.update("w0", tuple(states)).slots
    rows = list(states.values())
    pos, quat, twist = (np.array([r[i] for r in rows], dtype=float) for i in range(3))
    roster.set_state(slots, pos, quat, twist, np.zeros((len(rows), 6)), None)
    banks = SensorBanks(KINDS, roster.capacity)
    suite = parse_suite({k: QUIET.get(k, {}) for k in kinds}, "test")
    for name, slot in roster.slot_of.items():
        for kind in kinds:
            banks[kind].configure(slot, suite[kind], 1, name, 0)
    env = build_environment({"bathymetry": {"model": "flat", "depth_m": 50.0}})
    field = site.pop("field", np.array([0.0, 2e-5, -4e-5]))
    return roster, banks, slots, Site(env, ORIGIN, field, 1500.0, site.pop("beacons", {}))


def sample(kind: str, roster: Roster, banks: SensorBanks, slots: np.ndarray, site: Site, t_ns: int = 0):
    bank = banks[kind]
    due = bank.due(slots, t_ns)
    out = SAMPLERS[kind](bank, due, t_ns, roster, site)
    bank.schedule(due, t_ns, out.period_s)
    return due, out


def test_every_sampled_kind_has_a_sampler_the_modem_is_event_driven():
    assert set(SAMPLERS) == set(KINDS) - {"modem"}


def test_a_50_hz_sensor_on_100_hz_states_samples_every_second_state_and_a_late_state_restarts_the_grid():
    roster, banks, slots, site = rig({"a": ([0, 0, -5], LEVEL, [0] * 6)}, ["imu"])
    sampled = []
    for t_ns in [k * STEP_NS for k in range(9)] + [150_000_000, 160_000_000, 170_000_000]:
        if banks["imu"].due(slots, t_ns).size:
            sample("imu", roster, banks, slots, site, t_ns)
            sampled.append(t_ns // 1_000_000)
    assert sampled == [0, 20, 40, 60, 80, 150, 170]  # ms; 150 was late (due at 100): next at 150 + 20
    assert int(banks["imu"].counter[0]) == 7
    banks.restart_after(100_000_000)  # sim time went back to 0.1 s
    assert banks["imu"].next_due_ns[0] == 100_000_000 and banks["imu"].last_ns[0] == -1


def test_configure_starts_a_sensor_now_with_its_parameters_and_clear_removes_it():
    banks = SensorBanks(("imu", "gps", "ais"), 4)
    suite = parse_suite({"imu": {"rate_hz": 25}, "gps": {}, "ais": {"class": "B"}}, "test")
    for kind in suite:
        banks[kind].configure(2, suite[kind], 7, "auv", 1_000)
    imu = banks["imu"]
    assert imu.present.tolist() == [False, False, True, False]
    assert imu.next_due_ns[2] == 1_000 and imu.last_ns[2] == -1 and imu.counter[2] == 0
    assert imu.params["rate_hz"][2] == 25.0
    assert np.linalg.norm(imu.state["accel_bias"][2]) > 0.0  # turn-on bias drawn (sigma 0.196 m/s^2 by default)
    assert imu.key[2] != banks["gps"].key[2]  # one stream per sensor
    assert banks["gps"].state["had_fix"][2] == np.False_
    assert banks["ais"].extra[2] == {"class": "B", "mmsi": 0}
    assert banks.clear(2) == ["imu", "gps", "ais"] and banks.clear(2) == []
    assert 2 not in banks["ais"].extra


def test_banks_grow_with_their_rows():
    banks = SensorBanks(("imu",), 2)
    banks["imu"].configure(1, parse_suite({"imu": {}}, "t")["imu"], 1, "a", 5)
    bias = banks["imu"].state["accel_bias"][1].copy()
    banks.grow(8)
    assert banks["imu"].capacity == 8 and banks["imu"].present.tolist() == [False, True] + [False] * 6
    np.testing.assert_array_equal(banks["imu"].state["accel_bias"][1], bias)
    banks.grow(4)  # never shrinks
    assert banks["imu"].capacity == 8


def test_checkpoint_rows_round_trip_once_every_saved_sensor_is_configured():
    roster, banks, slots, site = rig(
        {"a": ([0, 0, 0], LEVEL, [0] * 6), "b": ([9, 0, 0], LEVEL, [0] * 6)}, ["imu", "gps"]
    )
    for k in range(3):
        for kind in ("imu", "gps"):
            sample(kind, roster, banks, slots, site, k * 200_000_000)
    rows = banks.capture(["a", None, None, None] + [None] * (roster.capacity - 4))  # b: a free slot, not saved
    assert set(rows) == {"imu", "gps"} and rows["imu"].names == ["a"]
    assert rows["imu"].counter.tolist() == [3] and rows["gps"].state["had_fix"].tolist() == [True]
    saved = {"a": {kind: {"next_due_ns": int(r.next_due_ns[0]), "last_ns": int(r.last_ns[0]),
                          "counter": r.counter[0], "state": {k: v[0] for k, v in r.state.items()}}
                   for kind, r in rows.items()}}  # fmt: skip
    banks.clear(0)
    banks.hold(saved)
    banks["imu"].configure(0, parse_suite({"imu": {}}, "t")["imu"], 1, "a", 0)
    banks.apply_saved("a", 0)
    assert "a" in banks.saved  # its GPS is not configured yet
    banks["gps"].configure(0, parse_suite({"gps": {}}, "t")["gps"], 1, "a", 0)
    banks.apply_saved("a", 0)
    assert banks.saved == {}
    assert banks["imu"].counter[0] == 3 and banks["imu"].last_ns[0] == 400_000_000
    assert banks["gps"].state["had_fix"][0] == np.True_


def test_imu_at_rest_reads_plus_g_up_and_no_rate():
    roster, banks, slots, site = rig({"a": ([0, 0, -5], LEVEL, [0] * 6)}, ["imu"])
    _, out = sample("imu", roster, banks, slots, site)
    np.testing.assert_allclose(out.columns[0][0], [0, 0, 0, 1, 0, 0, 0, 0, 0, G], atol=1e-12)
    assert out.period_s == pytest.approx(0.02)


def test_magnetometer_reads_the_field_in_body_axes():
    """Facing north, body x (forward) = north and body y (left) = west: B_flu = (B_north, -B_east, B_up)."""
    roster, banks, slots, site = rig(
        {"a": ([0, 0, 0], NORTH, [0] * 6)}, ["magnetometer"], field=np.array([1e-6, 2e-5, -4e-5])
    )
    _, out = sample("magnetometer", roster, banks, slots, site)
    np.testing.assert_allclose(out.columns[0][0], [2e-5, -1e-6, -4e-5], atol=1e-15)


def test_pressure_is_hydrostatic_at_the_sensor_depth():
    roster, banks, slots, site = rig(
        {"a": ([0, 0, -10], LEVEL, [0] * 6), "b": ([0, 0, 1], LEVEL, [0] * 6)}, ["pressure"]
    )
    _, out = sample("pressure", roster, banks, slots, site)
    rho = site.env.water_density_kgm3
    pa, var, depth = out.columns
    assert pa == pytest.approx([P_ATM + rho * G * 10.0, P_ATM]) and var == [0.0, 0.0]
    assert depth == pytest.approx([10.0, 0.0])


def test_gps_fix_at_the_surface_one_loss_message_when_diving_then_silence():
    roster, banks, slots, site = rig(
        {"usv": ([0, 0, 0], NORTH, [2, 0, 0, 0, 0, 0]), "auv": ([0, 0, -5], LEVEL, [0] * 6)}, ["gps"]
    )
    _, out = sample("gps", roster, banks, slots, site)
    send, fix, geodetic, velocity = out.columns
    assert send == [True, False] and fix == [True, False]  # the AUV never had a fix: nothing to report
    assert geodetic[0] == pytest.approx([43.0, 5.0, 0.0], abs=1e-8) and velocity[0] == pytest.approx([0.0, 2.0, 0.0])
    roster.pos[0, 2] = -3.0  # the USV dives
    send, fix, geodetic, _ = sample("gps", roster, banks, slots, site, 200_000_000)[1].columns
    assert send == [True, False] and fix == [False, False] and np.isnan(geodetic[0]).all()
    assert sample("gps", roster, banks, slots, site, 400_000_000)[1].columns[0] == [False, False]


def test_dvl_bottom_lock_gives_the_body_velocity_and_the_altitude():
    roster, banks, slots, site = rig({"a": ([0, 0, -10], LEVEL, [1.5, -0.2, 0, 0, 0, 0])}, ["dvl"])
    _, out = sample("dvl", roster, banks, slots, site)
    tracked, rows, altitude = out.columns
    assert tracked == [True] and rows[0][:3] == pytest.approx([1.5, -0.2, 0.0], abs=1e-9)
    assert np.reshape(rows[0][3:], (6, 6))[3:, 3:].tolist() == (-np.eye(3)).tolist()  # angular part not measured
    assert altitude == pytest.approx([40.0])  # 50 m seabed, sensor at 10 m


def test_altimeter_ranges_to_the_seabed_below():
    roster, banks, slots, site = rig({"a": ([0, 0, -20], LEVEL, [0] * 6)}, ["altimeter"])
    assert sample("altimeter", roster, banks, slots, site)[1].columns[0] == pytest.approx([30.0])


def test_ais_reports_position_course_speed_and_heading_and_its_interval():
    """Facing north at 2 m/s (3.9 kn, class A under way): COG 0, heading 0, a report every 10 s."""
    roster, banks, slots, site = rig({"usv": ([0, 0, 0], NORTH, [2, 0, 0, 0, 0, 0])}, ["ais"])
    _, out = sample("ais", roster, banks, slots, site)
    lat, lon, sog, cog, heading, rot = out.columns[0][0]
    assert (lat, lon) == pytest.approx((43.0, 5.0)) and sog == pytest.approx(2.0)
    assert cog == pytest.approx(0.0, abs=1e-9) and heading == pytest.approx(0.0, abs=1e-9) and rot == 0.0
    assert out.period_s == pytest.approx([10.0])


def test_usbl_ranges_other_vessels_and_beacons_in_range():
    beacons = parse_beacons("{dock: [0, 0, -30], far: [5000, 0, 0]}")
    roster, banks, slots, site = rig({"a": ([0, 0, 0], LEVEL, [0] * 6), "b": ([0, 50, 0], LEVEL, [0] * 6)}, ["usbl"],
                                     beacons=beacons)  # fmt: skip
    due, out = sample("usbl", roster, banks, slots, site)
    pairs = {(int(due[i]), t): (r, b, e, tt) for i, t, r, b, e, tt in zip(*out.columns, strict=True)}
    assert set(pairs) == {(0, "b"), (0, "dock"), (1, "a"), (1, "dock")}  # "far" is beyond 1000 m
    assert pairs[(0, "b")] == pytest.approx((50.0, np.pi / 2, 0.0, 50.0 / 1500.0))  # b is north: to the left
    assert pairs[(0, "dock")] == pytest.approx((30.0, 0.0, -np.pi / 2, 0.02))


def test_beacons_must_be_three_finite_coordinates():
    assert parse_beacons("") == {}
    with pytest.raises(ValueError, match="acoustic_beacons_yaml.dock"):
        parse_beacons("{dock: [0, 0]}")
