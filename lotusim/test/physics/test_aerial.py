"""The aerial domain: X500 multirotors as rows of the batched fleet (lotusim_physics.rotors, docs/physics.md
'Multirotors'). Expected values come from PX4's published X500 parameters [PX4GazeboModels2025] and closed forms,
never from the code under test."""

from __future__ import annotations

import math

import numpy as np
import pytest
from physics_reference_vehicles import level_quat

from lotusim_core.base import frames
from lotusim_core.base.catalogue import load_vehicle
from lotusim_physics import layout as L
from lotusim_physics.fleet import Fleet

# PX4-gazebo-models x500_base / x500 model.sdf [PX4GazeboModels2025]
MASS_KG = 2.0 + 4 * 0.016076923076923075
K_F = 8.54858e-6  # motorConstant, N / (rad/s)^2
K_M = 0.016  # momentConstant, m
OMEGA_MAX = 1000.0  # maxRotVelocity, rad/s
TAU_UP, TAU_DOWN = 0.0125, 0.025  # timeConstantUp / Down, s
C_D = 8.06428e-5  # rotorDragCoefficient
CONTACT_H = 0.2195 + 0.0075  # landing-skid boxes: centre 0.2195 m below base_link, 0.015 m thick
G = 9.81
HOVER = math.sqrt(MASS_KG * G / (4 * K_F))  # 769.6 rad/s


@pytest.fixture(scope="module")
def x500():
    return load_vehicle("x500")


def _drone(x500, dt: float = 0.01, z: float = -20.0, omega: float | None = None, **kw) -> Fleet:
    """A fleet with one X500 at height -z, level, its motors already turning at `omega` (rad/s) if given."""
    fleet = Fleet(dt, **kw)
    fleet.add("x500", x500, [0.0, 0.0, z], level_quat())
    if omega is not None:
        fleet.set_thruster_commands("x500", [omega] * 4)
        arrays = fleet.state_arrays()
        arrays["thrusters"][:, L.T_STATE] = omega
        fleet.overwrite_state(arrays["xs"], arrays["frozen"], arrays["thrusters"], arrays["fins"])
    return fleet


def test_the_vehicle_file_carries_px4s_numbers_in_frd(x500):
    assert x500.domain == "aerial"
    assert x500.mass_kg == pytest.approx(MASS_KG, rel=1e-6)
    assert x500.aerial.contact_height_m == pytest.approx(CONTACT_H)
    rotors = {t.name: t for t in x500.thrusters}
    # SDF (FLU): rotor_0 (0.174, -0.174) ccw, rotor_1 (-0.174, 0.174) ccw, rotor_2 (0.174, 0.174) cw,
    # rotor_3 (-0.174, -0.174) cw, all 0.06 m up; FRD = (x, -y, -z)
    sdf = {"rotor_0": (0.174, -0.174, "ccw"), "rotor_1": (-0.174, 0.174, "ccw"), "rotor_2": (0.174, 0.174, "cw")}
    sdf["rotor_3"] = (-0.174, -0.174, "cw")
    for name, (x, y, spin) in sdf.items():
        t = rotors[name]
        np.testing.assert_allclose(t.position_frd_m, [x, -y, -0.06])
        np.testing.assert_allclose(t.direction_frd, [0.0, 0.0, -1.0])
        assert t.spin == spin and t.model == "rotor" and t.command_unit == "rad_s"
        assert (t.motor_constant, t.moment_constant_m, t.command_max) == (K_F, K_M, OMEGA_MAX)
        assert (t.time_constant_s, t.time_constant_down_s, t.rotor_drag_coefficient) == (TAU_UP, TAU_DOWN, C_D)
        assert t.rolling_moment_coefficient == 1e-6


def test_hover_speed_holds_altitude_and_two_percent_either_side_does_not(x500):
    """sqrt(m g / 4 k_f) = 769.6 rad/s [derived from PX4's numbers] holds altitude within 1 mm over 5 s; 2 % less
    sinks and 2 % more climbs (so the hover speed of the model is that formula's within 2 %), as a body under a
    constant force a m against the file's quadratic drag D_z does: z(t) = (v_t^2 / a) ln cosh(a t / v_t),
    v_t = sqrt(m a / D_z)."""
    assert abs(HOVER - 769.56) < 0.01
    dz = {}
    for scale in (0.98, 1.0, 1.02):
        fleet = _drone(x500, omega=scale * HOVER)
        fleet.step(0.0, steps=500)
        dz[scale] = fleet.position_ned[0, 2] + 20.0
    assert abs(dz[1.0]) < 1e-3
    for scale, sign in ((0.98, 1.0), (1.02, -1.0)):
        a = abs(1.0 - scale**2) * G  # the thrust error (s^2 - 1) m g
        v_t = math.sqrt(MASS_KG * a / x500.damping_quadratic[2, 2])
        assert sign * dz[scale] == pytest.approx(v_t**2 / a * math.log(math.cosh(a * 5.0 / v_t)), rel=0.01)


def test_thrust_to_weight_is_1_69(x500):
    fleet = _drone(x500, omega=OMEGA_MAX)
    fleet.step(0.0)
    assert fleet.thrust_n("x500").sum() / (MASS_KG * G) == pytest.approx(4 * K_F * OMEGA_MAX**2 / (MASS_KG * G))
    assert fleet.thrust_n("x500").sum() / (MASS_KG * G) == pytest.approx(1.69, abs=0.005)


def test_motor_steps_reach_63_percent_at_their_time_constants(x500):
    dt = 0.0025  # tau_up = 5 steps, tau_down = 10 steps
    fleet = _drone(x500, dt=dt, z=-100.0, omega=0.0)
    fleet.set_thruster_commands("x500", [OMEGA_MAX] * 4)
    fleet.step(0.0, steps=5)
    np.testing.assert_allclose(fleet.thruster_states("x500"), OMEGA_MAX * (1 - math.exp(-1.0)), rtol=1e-9)
    fleet.step(0.0, steps=400)  # settled at omega_max
    fleet.set_thruster_commands("x500", [0.0] * 4)
    fleet.step(1.0, steps=10)
    settled = OMEGA_MAX * (1 - math.exp(-405 * dt / TAU_UP))
    np.testing.assert_allclose(fleet.thruster_states("x500"), settled * math.exp(-1.0), rtol=1e-9)


def test_the_spin_up_from_rest_costs_one_and_a_half_g_tau_of_sink_speed(x500):
    """Motors from 0 to hover at once: thrust deficit 1 - (1 - e^{-t/tau})^2 integrates to 1.5 tau, so the drone
    keeps sinking at 1.5 g tau_up = 0.184 m/s (first-order motor, T ~ w^2), whatever the step: each step's
    thrust impulse is the exact one of the motor's response (10 ms steps against tau_up = 12.5 ms here)."""
    fleet = _drone(x500, dt=0.01, omega=0.0)
    fleet.set_thruster_commands("x500", [HOVER] * 4)
    fleet.step(0.0, steps=30)
    assert fleet.nu[0, 2] == pytest.approx(1.5 * G * TAU_UP, rel=2e-3)


def test_free_fall_accelerates_at_g_less_the_body_drag(x500):
    """Motors off: nu_dot = g at rest, then v(t) = v_t tanh(g t / v_t), v_t = sqrt(m g / D_z) for the file's
    quadratic body drag D_z (its stated assumption, docs/vehicles.md)."""
    fleet = _drone(x500, dt=0.005, z=-500.0, omega=0.0)
    fleet.step(0.0)
    assert fleet.nu_dot[0, 2] == pytest.approx(G, rel=1e-3)
    fleet.step(0.005, steps=199)
    v_t = math.sqrt(MASS_KG * G / x500.damping_quadratic[2, 2])
    assert fleet.nu[0, 2] == pytest.approx(v_t * math.tanh(G * 1.0 / v_t), rel=2e-3)
    assert fleet.nu[0, 2] < G * 1.0


def test_an_uncontrolled_hovering_drone_drifts_downwind(x500):
    """A 5 m/s westerly (towards +E): the rotors' drag 4 w C_D V (0.124 N/(m/s) each... [derived]) and the body drag
    push the drone east; its first acceleration is (4 w C_D V + D_y V^2) / m."""
    fleet = _drone(x500, omega=HOVER)
    wind = np.array([0.0, 5.0, 0.0])
    fleet.step(0.0, wind_ned=lambda t, p: np.tile(wind, (len(p), 1)))
    expected = (4 * HOVER * C_D * 5.0 + x500.damping_quadratic[1, 1] * 25.0) / MASS_KG
    assert fleet.nu_dot[0, 1] == pytest.approx(expected, rel=0.02)
    fleet.step(0.01, wind_ned=lambda t, p: np.tile(wind, (len(p), 1)), steps=299)
    north, east = fleet.position_ned[0, :2]
    assert east > 1.0 and abs(north) < 0.05 * east
    assert fleet.state_enu()[0][0, 0] > 1.0  # ENU x = east


def falling_speed(height_m: float, terminal_mps: float = 16.0) -> float:
    """Speed after a fall of height_m from rest with quadratic drag: v_t sqrt(1 - exp(-2 g h / v_t²))."""
    return terminal_mps * math.sqrt(1.0 - math.exp(-2.0 * G * height_m / terminal_mps**2))


def test_a_drone_rests_on_the_sea_surface_and_touchdown_is_reported(x500):
    fleet = _drone(x500, z=-2.0, omega=0.0)
    fleet.step(0.0, steps=200)
    assert fleet.position_ned[0, 2] == pytest.approx(-CONTACT_H, abs=1e-12)  # gear on the surface, CO above it
    assert fleet.nu[0, 2] == pytest.approx(0.0, abs=1e-12)
    assert fleet.in_contact[0]
    events = fleet.take_contact_events()
    assert [(e.vessel, e.touchdown) for e in events] == [("x500", True)]
    # the gear falls 2 - 0.227 m: sqrt(2 h / g) = 0.601 s, v_t = 16 m/s makes drag negligible; at the end of that step
    assert events[0].sim_time_s == pytest.approx(math.sqrt(2 * (2.0 - CONTACT_H) / G), abs=0.011)
    # at v_t sqrt(1 - exp(-2 g h / v_t²)) = 5.70 m/s (quadratic drag, v_t 16 m/s; sqrt(2 g h) = 5.90 without),
    # within the last step's g dt (the speed at its start); and where it came to rest
    assert events[0].descent_mps == pytest.approx(falling_speed(2.0 - CONTACT_H), abs=G * 0.011)
    assert events[0].position_ned == pytest.approx((0.0, 0.0, -CONTACT_H), abs=1e-9)
    assert str(events[0]) == "vessel 'x500' touched down on the sea at t=0.610 s (descending at 5.64 m/s)"
    # on the surface it stays there; full throttle lifts it off again, reported with where it left and its climb
    fleet.set_thruster_commands("x500", [OMEGA_MAX] * 4)
    k = 0
    while fleet.in_contact[0]:
        fleet.step(2.0 + 0.01 * k)
        k += 1
        assert k < 50, "no lift-off at full throttle within 0.5 s"
    (lift_off,) = fleet.take_contact_events()
    assert (lift_off.touchdown, lift_off.surface) == (False, "sea")
    assert lift_off.sim_time_s == pytest.approx(2.0 + 0.01 * k)
    assert lift_off.position_ned == pytest.approx(tuple(fleet.position_ned[0]), abs=1e-12)
    assert lift_off.position_ned[2] < -CONTACT_H  # above the sea
    climb = -(frames.rotation_matrix(fleet.q_ned_frd[0]) @ fleet.nu[0, :3])[2]
    assert climb > 0.0 and lift_off.descent_mps == pytest.approx(-climb, abs=1e-12)
    assert (
        str(lift_off)
        == f"vessel 'x500' lifted off the sea at t={lift_off.sim_time_s:.3f} s (climbing at {climb:.2f} m/s)"
    )
    fleet.step(3.0, steps=100)
    assert fleet.position_ned[0, 2] < -1.0 and not fleet.in_contact[0] and fleet.take_contact_events() == []


def test_a_sinking_drone_is_stopped_by_the_surface_not_below_it(x500):
    """Falling from 10 m with motors off, it lands at z = -contact height and stays there (a plastic contact)."""
    fleet = _drone(x500, z=-10.0, omega=0.0)
    lowest = -math.inf
    for k in range(300):
        fleet.step(k * 0.01)
        lowest = max(lowest, fleet.position_ned[0, 2])
    assert lowest == pytest.approx(-CONTACT_H, abs=1e-12)


def test_marine_rows_are_bit_identical_with_and_without_drones_among_them(x500):
    """Drones interleaved with every marine model change nothing in the marine rows (the kernel's marine paths)."""
    marine = ["bluerov2_heavy", "kayak_usv", "lrauv", "remus100", "wamv"]

    def run(with_drones: bool) -> dict[str, np.ndarray]:
        fleet = Fleet(0.02, substeps=2)
        for k, model in enumerate(marine):
            spec = load_vehicle(model)
            fleet.add(model, spec, [10.0 * k, 0.0, 0.0 if spec.domain == "surface" else 20.0], level_quat(0.3))
            fleet.set_thruster_commands(model, [0.7 * t.command_max for t in spec.thrusters])
            if with_drones:
                fleet.add(f"d{k}", x500, [10.0 * k, 5.0, -30.0], level_quat())
                fleet.set_thruster_commands(f"d{k}", [HOVER * (1 + 0.01 * k)] * 4)
        for k in range(100):
            fleet.step(k * 0.02, wind_ned=lambda t, p: np.tile([1.0, -2.0, 0.0], (len(p), 1)))
        rows = np.concatenate([fleet.position_ned, fleet.q_ned_frd, fleet.nu, fleet.nu_dot], axis=1)
        return {name: rows[i] for i, name in enumerate(fleet.names)}

    alone, mixed = run(False), run(True)
    for model in marine:
        assert np.array_equal(alone[model], mixed[model]), model


# --- the vehicle file's checks and the start checks ------------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "key", "reason"),
    [
        (lambda d: d.pop("aerial"), "aerial", "missing"),
        (lambda d: d.update(volume_m3=0.01), "volume_m3", "takes no water keys"),
        (lambda d: d.update(added_mass=[1.0, 1.0, 1.0, 0.0, 0.0, 0.0]), "added_mass", "no added mass"),
        (lambda d: d["thrusters"][0].pop("spin"), "thrusters[0].spin", "missing"),
        (lambda d: d["thrusters"][0].update(spin="left"), "thrusters[0].spin", "expected one of ccw, cw"),
        (lambda d: d["thruster_defaults"].update(command_min=-100.0), "thrusters[0].command_min", ">= 0"),
        (lambda d: d["thruster_defaults"].update(model="quadratic"), "thrusters[0]", "only rotor thrusters"),
        (lambda d: d["aerial"].update(contact_height_m=-0.1), "aerial.contact_height_m", ""),
    ],
)
def test_bad_aerial_files_fail_with_file_key_reason(tmp_path, change, key, reason):
    import yaml

    from lotusim_core.base.catalogue import CatalogueError, read_vehicle_mapping, vehicles_dir

    data = read_vehicle_mapping(vehicles_dir() / "x500.yaml")
    change(data)
    path = tmp_path / "bad_x500.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(CatalogueError) as err:
        load_vehicle(path)
    assert str(err.value).startswith(f"{path}: {key}") and reason in str(err.value)


def test_rotors_on_a_boat_are_refused(tmp_path):
    import yaml

    from lotusim_core.base.catalogue import CatalogueError, read_vehicle_mapping, vehicles_dir

    boat = read_vehicle_mapping(vehicles_dir() / "wamv.yaml")
    rotor = read_vehicle_mapping(vehicles_dir() / "x500.yaml")["thruster_defaults"]
    boat["thruster_defaults"] = rotor
    for t in boat["thrusters"]:
        t["spin"] = "ccw"
    path = tmp_path / "rotor_boat.yaml"
    path.write_text(yaml.safe_dump(boat))
    with pytest.raises(CatalogueError, match=r"thrusters\[0\]\.model: rotor thrusters .* aerial vehicles only"):
        load_vehicle(path)


def test_aerial_vehicles_start_above_the_surface_not_below():
    from lotusim_core.sim.spawn_checks import start_problem

    assert start_problem(-30.0, 100.0, "aerial") == ""  # 30 m up over 100 m of water
    assert start_problem(0.0, 100.0, "aerial") == ""  # on the surface
    assert "aerial vehicle starts 2 m below the sea surface" in start_problem(2.0, 100.0, "aerial")
    assert "underwater vessel starts 30 m above" in start_problem(-30.0, 100.0, "underwater")


def test_a_drone_rests_on_a_swell_and_rides_it():
    """Motors off on a regular swell (H 1 m, T 8 s; its vertical acceleration a w^2 = 0.31 m/s^2 is far below g): the
    gear stays on the sea, z = -(H/2) cos(w t) - contact height at the drone (x = 0), within 1 cm."""
    from lotusim_env.waves import regular_wave

    x500 = load_vehicle("x500")
    fleet = _drone(x500, dt=0.02, z=-1.0, omega=0.0)
    sea = regular_wave(1.0, 8.0)
    omega = 2 * math.pi / 8.0
    worst = 0.0
    for k in range(800):
        fleet.step(k * 0.02, waves=sea)
        if k >= 100:  # landed
            eta = 0.5 * math.cos(omega * k * 0.02)  # the sea sampled at the start of the step
            worst = max(worst, abs(fleet.position_ned[0, 2] + eta + CONTACT_H))
    assert worst < 0.01
    assert fleet.in_contact[0]


def test_differential_rotor_speeds_roll_and_yaw_the_drone_as_px4s_quad_x(x500):
    """Left rotors (1, 2) faster: roll to the right, K = 0.174 m x 2 dT; cw rotors (2, 3) faster: yaw anticlockwise
    seen from above (r < 0 FRD), N = -2 k_m dT (the ccw rotors' reaction is clockwise). First step's accelerations
    against K / I_xx and N / I_zz of the file's inertia (CG 2 mm above CO: the rotation about CO differs by m z_g^2)."""
    d_omega = 20.0
    d_thrust = K_F * ((HOVER + d_omega) ** 2 - HOVER**2)
    for speeds, axis, moment in (
        ([HOVER, HOVER + d_omega, HOVER + d_omega, HOVER], 3, 2 * 0.174 * d_thrust),  # rotors 1, 2 on the left
        ([HOVER, HOVER, HOVER + d_omega, HOVER + d_omega], 5, -2 * K_M * d_thrust),  # rotors 2, 3 cw
    ):
        fleet = Fleet(0.001)
        fleet.add("x500", x500, [0.0, 0.0, -20.0], level_quat())
        fleet.set_thruster_commands("x500", speeds)
        arrays = fleet.state_arrays()
        arrays["thrusters"][:, L.T_STATE] = speeds
        fleet.overwrite_state(arrays["xs"], arrays["frozen"], arrays["thrusters"], arrays["fins"])
        fleet.step(0.0)
        inertia = x500.inertia_cg_kgm2[axis - 3, axis - 3]
        assert fleet.nu_dot[0, axis] == pytest.approx(moment / inertia, rel=0.01)


def test_a_fleet_of_drones_continues_bit_for_bit_from_its_snapshot(x500):
    """The motor speeds are state: a snapshot taken mid-spin-up continues exactly."""
    fleet = _drone(x500, omega=0.0)
    fleet.set_thruster_commands("x500", [900.0, 700.0, 800.0, 600.0])
    fleet.step(0.0, steps=3)
    copy = Fleet.from_snapshot(fleet.snapshot())
    for f in (fleet, copy):
        f.step(0.03, steps=50)
    np.testing.assert_array_equal(copy.position_ned, fleet.position_ned)
    np.testing.assert_array_equal(copy.thruster_states("x500"), fleet.thruster_states("x500"))


# --- decks of moving vessels ------------------------------------------------------------------------------------
DECK_H = 1.0  # the WAM-V file's deck height above the waterline [assumption in the file]


def _boat_under_way(x500_spec=None) -> Fleet:
    """A WAM-V at full thrust on both motors for 30 s (steady 2.25 m/s, docs/vehicles.md 'WAM-V 16')."""
    fleet = Fleet(0.02)
    fleet.add("usv", load_vehicle("wamv"), [0.0, 0.0, 0.0], level_quat())
    fleet.set_thruster_commands("usv", [1.0, 1.0])
    fleet.step(0.0, steps=1500)
    return fleet


def test_a_drone_dropped_over_a_moving_usv_lands_on_its_deck_and_rides_along(x500):
    fleet = _boat_under_way()
    boat_speed = fleet.nu[0, 0]
    assert boat_speed > 2.0
    above = fleet.position_ned[0] + [0.0, 0.0, -(DECK_H + CONTACT_H + 2.0)]  # gear 2 m above the deck
    fleet.add("drone", x500, above, level_quat(), nu_frd=[boat_speed, 0, 0, 0, 0, 0])  # flying along, motors off
    fleet.step(30.0, steps=100)
    assert fleet.on_deck("drone") == "usv" and fleet.in_contact[1]
    events = fleet.take_contact_events()
    assert [(e.vessel, e.touchdown, e.surface) for e in events] == [("drone", True, "usv")]
    # a fall of 2 m: sqrt(2 x 2 / g) = 0.64 s after the drop, to the step; onto the deck at 6.03 m/s (drag as above)
    assert events[0].sim_time_s - 30.0 == pytest.approx(math.sqrt(4.0 / G), abs=0.03)
    assert events[0].descent_mps == pytest.approx(falling_speed(2.0), abs=G * 0.03)
    assert events[0].position_ned[2] == pytest.approx(fleet.position_ned[1, 2], abs=0.05)  # at rest on the deck
    fleet.step(32.0, steps=500)  # 10 s on the moving deck
    from lotusim_core.base.frames import rotation_matrix

    boat, drone = fleet.position_ned
    r_boat, r_drone = rotation_matrix(fleet.q_ned_frd)
    gear_in_boat = r_boat.T @ (drone + r_drone[:, 2] * CONTACT_H - boat)
    assert abs(gear_in_boat[0]) < 1.2 and abs(gear_in_boat[1]) < 1.0  # still on the 2.4 m x 2.0 m deck
    assert gear_in_boat[2] == pytest.approx(-DECK_H, abs=1e-9)  # on the deck plane (the boat trims under way)
    np.testing.assert_allclose(r_drone @ fleet.nu[1, :3], r_boat @ fleet.nu[0, :3], atol=0.01)  # moving with it
    assert np.abs(fleet.nu_dot[1, :3]).max() < 0.05  # its acceleration is the steady boat's, not the kernel's free fall
    assert fleet.on_deck("drone") == "usv"


def test_a_drone_takes_off_from_a_moving_usvs_deck(x500):
    fleet = _boat_under_way()
    on_deck = fleet.position_ned[0] + [0.0, 0.0, -(DECK_H + CONTACT_H)]
    fleet.add("drone", x500, on_deck, level_quat(), nu_frd=[fleet.nu[0, 0], 0, 0, 0, 0, 0])
    fleet.step(30.0, steps=10)
    assert fleet.on_deck("drone") == "usv"
    fleet.set_thruster_commands("drone", [OMEGA_MAX] * 4)  # T/W 1.69: up at 0.69 g
    fleet.step(30.2, steps=50)
    assert fleet.on_deck("drone") is None and fleet.position_ned[1, 2] < fleet.position_ned[0, 2] - 3.0
    assert [(e.touchdown, e.surface) for e in fleet.take_contact_events()] == [(True, "usv"), (False, "usv")]


def test_a_drone_beside_the_deck_falls_past_it_into_the_sea(x500):
    fleet = Fleet(0.02)
    fleet.add("usv", load_vehicle("wamv"), [0.0, 0.0, 0.0], level_quat())
    fleet.add("drone", x500, [0.0, 3.0, -4.0], level_quat())  # 3 m to starboard: off the 2 m wide deck
    fleet.step(0.0, steps=150)
    assert fleet.on_deck("drone") is None
    assert fleet.position_ned[1, 2] == pytest.approx(-CONTACT_H, abs=1e-9)  # on the sea
    assert [(e.touchdown, e.surface) for e in fleet.take_contact_events()] == [(True, "sea")]


@pytest.mark.parametrize(
    ("model", "deck", "key", "reason"),
    [
        ("remus100", {"height_m": 0.1, "length_m": 1.0, "beam_m": 0.5}, "deck", "only surface vessels take a deck"),
        ("wamv", {"height_m": 1.0, "length_m": 2.4}, "deck.beam_m", "missing"),
        ("wamv", {"height_m": -1.0, "length_m": 2.4, "beam_m": 2.0}, "deck.height_m", ""),
    ],
)
def test_bad_decks_fail_with_file_key_reason(tmp_path, model, deck, key, reason):
    import yaml

    from lotusim_core.base.catalogue import CatalogueError, read_vehicle_mapping, vehicles_dir

    data = read_vehicle_mapping(vehicles_dir() / f"{model}.yaml")
    data["deck"] = deck
    data["sources"]["deck"] = "test"
    path = tmp_path / "bad_deck.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(CatalogueError) as err:
        load_vehicle(path)
    assert str(err.value).startswith(f"{path}: {key}") and reason in str(err.value)


def test_marine_vessels_added_after_drones_keep_every_vessels_state(x500):
    """Rows are regrouped (aerial rows last) when a marine vessel joins or leaves: each vessel keeps its own state."""
    fleet = Fleet(0.02)
    fleet.add("d1", x500, [0.0, 0.0, -10.0], level_quat())
    fleet.add("boat", load_vehicle("wamv"), [5.0, 0.0, 0.0], level_quat())
    fleet.add("d2", x500, [0.0, 5.0, -20.0], level_quat())
    fleet.add("auv", load_vehicle("remus100"), [9.0, 9.0, 5.0], level_quat())
    assert fleet.names[:2] == ["boat", "auv"] and set(fleet.names[2:]) == {"d1", "d2"}
    for name, z in (("d1", -10.0), ("d2", -20.0), ("boat", 0.0), ("auv", 5.0)):
        assert fleet.position_ned[fleet.index(name), 2] == z
    fleet.remove("boat")
    assert fleet.names[0] == "auv" and set(fleet.names[1:]) == {"d1", "d2"}
    fleet.set_thruster_commands("d2", [HOVER] * 4)
    assert fleet.spec("d2") is x500 and fleet.position_ned[fleet.index("d2"), 1] == 5.0
    fleet.step(0.0, steps=10)
    assert fleet.thruster_states("d2")[0] > 0.0 and fleet.thruster_states("d1")[0] == 0.0
