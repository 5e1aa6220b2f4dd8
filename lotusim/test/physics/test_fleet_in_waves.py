"""Surface vessels in waves (Fleet.step(waves=...), lotusim_physics.sea_over_hulls): a small hull heaves and pitches
with long waves (response → 1), a long hull barely moves in short ones (→ 0), and without a sea the fleet steps
exactly as before (bit for bit)."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from lotusim_core.base import frames
from lotusim_core.base.catalogue import load_vehicle
from lotusim_core.base.vehicle_spec import SurfaceHydrostatics, VehicleSpec, WindSpec
from lotusim_env.waves import calm_sea, regular_wave
from lotusim_physics.fleet import Fleet
from lotusim_physics.fleet import wave_grid_size as fleet_grid_size
from lotusim_physics.worker import CREATE, FleetWorker
from lotusim_physics.worker_settings import PARAMETERS, WorkerSettings

RHO, G = 1025.0, 9.81
DT = 0.02


def barge(length_m: float = 60.0, beam_m: float = 10.0, draft_m: float = 0.5) -> VehicleSpec:
    """A box barge [assumption: a test body, not a catalogue vessel]: mass ρ L B T, box inertia, 30 % of critical
    damping in heave, roll and pitch (so that the free oscillation started by the ramp dies out)."""
    mass = RHO * length_m * beam_m * draft_m
    inertia = np.diag([mass * beam_m**2 / 12, mass * length_m**2 / 12, mass * (length_m**2 + beam_m**2) / 12])
    area = length_m * beam_m
    # box: KB = T/2, BM = B²/(12 T) (L²/(12 T) in pitch), KG = T/2  →  GM = BM
    gm_t, gm_l = beam_m**2 / (12 * draft_m), length_m**2 / (12 * draft_m)
    stiffness = RHO * G * np.array([area, area * draft_m * gm_t, area * draft_m * gm_l])  # ρgA, ρg∇GM_T, ρg∇GM_L
    critical = 2 * np.sqrt(stiffness * np.array([mass, inertia[0, 0], inertia[1, 1]]))
    damping = np.diag([0.05 * mass, 0.05 * mass, *(0.3 * critical), 0.05 * inertia[2, 2]])
    return VehicleSpec(
        name="barge_test",
        domain="surface",
        description="box barge for the wave tests",
        mass_kg=mass,
        inertia_cg_kgm2=inertia,
        cg_frd_m=np.zeros(3),
        added_mass=np.zeros((6, 6)),
        damping_linear=damping,
        damping_quadratic=np.zeros((6, 6)),
        surface=SurfaceHydrostatics(area, gm_t, gm_l, draft_m),
        wind=WindSpec(frontal_area_m2=beam_m, lateral_area_m2=length_m, length_m=length_m, cx=0.0, cy=0.0, cn=0.0),
    )


def heave_pitch_record(spec: VehicleSpec, sea, seconds: float, heading_deg: float = 0.0) -> np.ndarray:
    """(T, 3): time, heave (m, up) and pitch (rad, bow up) of one vessel at the origin heading `heading_deg`."""
    fleet = Fleet(DT, water_density_kgm3=RHO, gravity_mps2=G)
    fleet.add("v", spec, [0.0, 0.0, 0.0], frames.quat_from_euler_zyx(0.0, 0.0, math.radians(heading_deg)))
    out = []
    steps = int(round(seconds / DT))
    for k in range(0, steps, 10):
        fleet.step(k * DT, steps=10, waves=sea)
        _, pitch, _ = frames.euler_zyx_from_quat(fleet.q_ned_frd[0])
        out.append(((k + 10) * DT, -fleet.position_ned[0, 2], pitch))
    return np.array(out)


def amplitude(series: np.ndarray) -> float:
    return 0.5 * float(series.max() - series.min())


def test_no_sea_steps_exactly_as_before():
    kayak = load_vehicle("kayak_usv")
    fleets = [Fleet(DT, water_density_kgm3=RHO, gravity_mps2=G) for _ in range(3)]
    for fleet in fleets:
        fleet.add("k", kayak, [0.0, 0.0, -0.05], frames.quat_from_euler_zyx(0.05, -0.02, 0.3))
        fleet.set_thruster_commands("k", [0.3, 0.3, 0.2, 0.2])
    fleets[0].step(0.0, steps=200)
    fleets[1].step(0.0, steps=200, waves=calm_sea())
    fleets[2].step(0.0, steps=50, waves=regular_wave(0.5, 4.0))  # a sea, then none: its columns are cleared
    fleets[2].step(1.0, steps=150)
    np.testing.assert_array_equal(fleets[1].position_ned, fleets[0].position_ned)
    np.testing.assert_array_equal(fleets[1].q_ned_frd, fleets[0].q_ned_frd)
    assert not np.array_equal(fleets[2].position_ned, fleets[0].position_ned)  # the sea did something


def test_small_hull_heaves_and_pitches_with_long_waves():
    """The kayak USV (1.2 m) in head seas of 8 s (λ = 100 m), H = 0.4 m: heave amplitude ≈ a = 0.2 m and pitch
    amplitude ≈ the wave slope a k = 0.008 rad (quasi-static: its heave and pitch natural periods are < 1 s)."""
    period, a = 8.0, 0.2
    k = (2 * math.pi / period) ** 2 / G
    sea = regular_wave(2 * a, period, from_deg=0.0, ramp_time_s=4.0)  # waves from the north, bow north
    record = heave_pitch_record(load_vehicle("kayak_usv"), sea, 60.0)
    settled = record[record[:, 0] > 40.0]
    assert amplitude(settled[:, 1]) / a == pytest.approx(1.0, abs=0.05)
    assert amplitude(settled[:, 2]) / (a * k) == pytest.approx(1.0, abs=0.15)


def test_long_hull_barely_moves_in_short_waves_but_rides_long_ones():
    """A 60 m barge, sampled every 2 m along its length: in head seas of λ = 11 m the mean sea over it is 6 % of
    the wave (|sin(kL/2)|/(kL/2) = 0.058 for a continuous hull, 0.061 for its 30 points) and it heaves < 15 % of
    a; in 12 s waves (λ = 225 m) it rides them, > 80 %."""
    a = 0.3
    short_period = math.sqrt(2 * math.pi * 11.0 / G)  # deep water: λ = g T² / 2π
    short = heave_pitch_record(barge(), regular_wave(2 * a, short_period, from_deg=0.0, ramp_time_s=4.0), 40.0)
    long = heave_pitch_record(barge(), regular_wave(2 * a, 12.0, from_deg=0.0, ramp_time_s=4.0), 90.0)
    assert fleet_grid_size(60.0) == 30
    assert amplitude(short[short[:, 0] > 25.0, 1]) < 0.15 * a
    assert amplitude(long[long[:, 0] > 60.0, 1]) > 0.8 * a


def test_orbital_velocity_moves_a_drifting_hull_back_and_forth():
    """An unpowered kayak in head seas: the orbital velocity (aω = 0.157 m/s at the surface for a = 0.2 m,
    T = 8 s) enters its relative velocity, so it surges back and forth with the waves, at most as fast as the
    water (its drag only follows the water, it has no other surge force)."""
    period, a = 8.0, 0.2
    sea = regular_wave(2 * a, period, from_deg=0.0, ramp_time_s=0.0)
    fleet = Fleet(DT, water_density_kgm3=RHO, gravity_mps2=G)
    fleet.add("k", load_vehicle("kayak_usv"), [0.0, 0.0, 0.0], frames.quat_from_euler_zyx(0.0, 0.0, 0.0))
    surge = []
    for k in range(0, int(40.0 / DT), 5):
        fleet.step(k * DT, steps=5, waves=sea)
        surge.append(fleet.nu[0, 0])
    speed = np.array(surge[len(surge) // 2 :])
    assert 0.02 < amplitude(speed) < 2 * math.pi / period * a * 1.05


def wamv_at_origin(name: str) -> SimpleNamespace:
    """A VesselDescription look-alike (as test_physics_worker's): a WAM-V at rest on the waterline at the origin."""
    v3 = lambda x, y, z: SimpleNamespace(x=x, y=y, z=z)  # noqa: E731
    pose = SimpleNamespace(position=v3(0.0, 0.0, 0.0), orientation=SimpleNamespace(x=0.0, y=0.0, z=0.0, w=1.0))
    twist = SimpleNamespace(linear=v3(0.0, 0.0, 0.0), angular=v3(0.0, 0.0, 0.0))
    return SimpleNamespace(name=name, model="wamv", overrides_yaml="", pose=pose, twist=twist)


def test_a_worker_with_waves_in_its_environment_moves_its_boats_with_them():
    """The worker (dynamics node's ROS-free part) applies a configuration with waves and steps the fleet in them:
    a WAM-V at the origin heaves with a 6 s, 1 m wave (from the published YAML, as every node gets it)."""
    worker = FleetWorker("w", WorkerSettings.from_parameters({**PARAMETERS, "mode": "lockstep", "step_s": 0.02}))
    worker.run_commands([(CREATE, wamv_at_origin("boat"))])
    worker.apply_environment("waves: {model: regular, height_m: 1.0, period_s: 6.0, ramp_time_s: 0.0}\n", 1)
    assert worker.environment.sea is not None and worker.environment.sea.dtype == np.float32
    heave = []
    for _ in range(600):  # 12 s
        worker.integrate(5)
        heave.append(-worker.fleet.position_ned[0, 2])
    assert amplitude(np.array(heave[300:])) == pytest.approx(0.5, rel=0.1)
    worker.apply_environment("waves: {model: none}\n", 2)
    assert worker.environment.sea is None


def test_a_surfaced_auv_rides_a_long_swell():
    """The REMUS 100 (5.5 N buoyant) floating at the surface: its surface crossing is measured from the sea above
    it, so in a 20 s swell (λ = 625 m) it heaves with the surface, amplitude a within 10 %."""
    a = 0.3
    fleet = Fleet(DT, water_density_kgm3=RHO, gravity_mps2=G)
    fleet.add("r", load_vehicle("remus100"), [0.0, 0.0, 0.0], frames.quat_from_euler_zyx(0.0, 0.0, 0.0))
    fleet.step(0.0, steps=3000)  # 60 s to float at its waterline in still water
    swell = regular_wave(2 * a, 20.0, ramp_time_s=5.0)
    heave = []
    for k in range(0, int(120.0 / DT), 10):
        fleet.step(k * DT, steps=10, waves=swell)
        heave.append(-fleet.position_ned[0, 2])
    assert amplitude(np.array(heave[len(heave) // 2 :])) / a == pytest.approx(1.0, abs=0.1)


def test_a_fleet_restored_from_its_snapshot_continues_in_waves_bit_for_bit():
    sea = regular_wave(0.6, 5.0, from_deg=30.0, ramp_time_s=2.0)
    fleet = Fleet(DT, water_density_kgm3=RHO, gravity_mps2=G)
    fleet.add("w", load_vehicle("wamv"), [0.0, 0.0, 0.0], frames.quat_from_euler_zyx(0.0, 0.0, 0.4))
    fleet.add("r", load_vehicle("remus100"), [5.0, 0.0, 0.5], frames.quat_from_euler_zyx(0.0, 0.0, 0.0))
    fleet.step(0.0, steps=100, waves=sea)
    copy = Fleet.from_snapshot(fleet.snapshot())
    fleet.step(2.0, steps=100, waves=sea)
    copy.step(2.0, steps=100, waves=sea)
    np.testing.assert_array_equal(copy.position_ned, fleet.position_ned)
    np.testing.assert_array_equal(copy.nu, fleet.nu)
    assert fleet.step(4.0, steps=1, waves=sea) == [] and np.all(np.isfinite(fleet.nu))
    empty = Fleet(DT)
    assert empty.step(0.0, steps=3, waves=sea) == []  # no vessel: nothing to sample


def test_the_vehicle_files_sample_points_are_where_the_sea_is_sampled():
    """The WAM-V's file gives VRX's four hull points (x 0.6 / −1.4 m, y ±1.03 m): the fleet samples the sea there,
    so a beam sea of λ = 8.26 m (T = 2.3 s: a quarter wavelength across the 2.06 m between the hulls) rolls it
    by the slope between its hulls, and its hull kind is that of the points."""
    from lotusim_physics import layout as L
    from lotusim_physics.fleet import hull_kind, hull_points_frd

    wamv = load_vehicle("wamv")
    np.testing.assert_array_equal(hull_points_frd(wamv), wamv.surface.wave_points_frd)
    fleet = Fleet(DT, water_density_kgm3=RHO, gravity_mps2=G)
    fleet.add("w", wamv, [0.0, 0.0, 0.0], frames.quat_from_euler_zyx(0.0, 0.0, 0.0))  # bow north
    assert fleet.state_arrays()["vp"][0, L.V_HULL_KIND] == hull_kind(wamv.surface.wave_points_frd)
    sea = regular_wave(0.2, 2.3, from_deg=90.0, ramp_time_s=2.0)  # from the east: on the beam
    roll = []
    for k in range(0, int(20.0 / DT), 5):
        fleet.step(k * DT, steps=5, waves=sea)
        roll.append(frames.euler_zyx_from_quat(fleet.q_ned_frd[0])[0])
    # quasi-static roll: the slope of the sea between its hulls, a sin(k b) / b with b = 1.03 m (0.0685 rad)
    k = (2 * math.pi / 2.3) ** 2 / G
    assert amplitude(np.array(roll[len(roll) // 2 :])) == pytest.approx(0.1 * math.sin(k * 1.03) / 1.03, rel=0.05)
