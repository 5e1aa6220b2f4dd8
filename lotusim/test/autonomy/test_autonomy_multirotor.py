"""The multirotor flight controller (lotusim_autonomy.multirotor) flying the X500 in the batched physics
(lotusim_physics.fleet with the rotor model): hover, the step responses of the attitude, yaw and velocity loops,
a flight to a point, a position hold in a steady wind and in Dryden turbulence, takeoff and landing, and the mixer.

Control step 0.02 s (the physics' 50 Hz odometry), physics step 0.01 s, the commands held between control steps.
Expected values: the hover speed √(m g / 4 k_f) and the thrust limits from PX4's published X500 numbers
[PX4GazeboModels2025]; the other figures are the specifications the loops are designed to (settling times,
errors), stated in each test.
"""

from __future__ import annotations

import math
from collections import deque

import numpy as np
import pytest
from physics_reference_vehicles import level_quat

from lotusim_autonomy.multirotor import (
    FlightMission,
    FlightTarget,
    MultirotorController,
    MultirotorPilot,
    RotorMixer,
    attitude_error,
    cannot_fly,
    desired_attitude,
)
from lotusim_autonomy.odometry import NedState
from lotusim_core.base import frames
from lotusim_core.base.catalogue import load_vehicle
from lotusim_env.environment import build_environment
from lotusim_physics import layout as L
from lotusim_physics.fleet import Fleet

MASS_KG = 2.0 + 4 * 0.016076923076923075  # x500_base: base_link + four rotor links [PX4GazeboModels2025]
K_F, K_M, OMEGA_MAX, ARM_XY = 8.54858e-6, 0.016, 1000.0, 0.174
G = 9.81
HOVER = math.sqrt(MASS_KG * G / (4 * K_F))  # 769.6 rad/s
CONTROL_S, PHYSICS_S = 0.02, 0.01


@pytest.fixture(scope="module")
def x500():
    return load_vehicle("x500")


class Flight:
    """One X500 in a fleet, flown by a controller callback every CONTROL_S; records time, position, Euler angles,
    NED velocity, body rates and commands."""

    def __init__(self, spec, z_ned: float = -20.0, hovering: bool = True, wind=None, yaw_rad: float = 0.0):
        self.spec, self.fleet = spec, Fleet(PHYSICS_S)
        self.fleet.add("x500", spec, [0.0, 0.0, z_ned], level_quat(yaw_rad))
        if hovering:  # motors already at the hover speed
            self.fleet.set_thruster_commands("x500", [HOVER] * 4)
            arrays = self.fleet.state_arrays()
            arrays["thrusters"][:, L.T_STATE] = HOVER
            self.fleet.overwrite_state(arrays["xs"], arrays["frozen"], arrays["thrusters"], arrays["fins"])
        self.wind = wind  # callable (t, positions NED) -> wind NED, or None
        self.t = 0.0
        self.rows: list[np.ndarray] = []

    def state(self) -> NedState:
        i = self.fleet.index("x500")  # its row (the fleet groups rows its own way)
        q = self.fleet.q_ned_frd[i].copy()
        return NedState(
            self.t, self.fleet.position_ned[i].copy(), frames.euler_zyx_from_quat(q), self.fleet.nu[i].copy()
        )

    def fly(self, seconds: float, command) -> np.ndarray:
        """command(state, h) -> rotor speeds; returns the record of this leg (rows: t, N E D, roll pitch yaw,
        v_N v_E v_D, p q r, four commands)."""
        start = len(self.rows)
        for _ in range(round(seconds / CONTROL_S)):
            s = self.state()
            cmd = command(s, CONTROL_S)
            self.fleet.set_thruster_commands("x500", cmd)
            self.fleet.step(self.t, wind_ned=self.wind, steps=round(CONTROL_S / PHYSICS_S))
            self.t += CONTROL_S
            i = self.fleet.index("x500")
            r = frames.rotation_matrix(self.fleet.q_ned_frd[i])
            row = [self.t, *self.fleet.position_ned[i], *s.rpy_ned_rad, *(r @ self.fleet.nu[i, :3])]
            self.rows.append(np.array([*row, *self.fleet.nu[i, 3:], *cmd]))
        return np.array(self.rows[start:])


def settling_time(t: np.ndarray, y: np.ndarray, final: float, band: float) -> float:
    """Time after which |y − final| stays within band (the first sample time if it always does)."""
    outside = np.flatnonzero(np.abs(y - final) > band)
    return float(t[0]) if outside.size == 0 else float(t[outside[-1] + 1]) if outside[-1] + 1 < len(t) else math.inf


def hold(position_ned, heading_rad=0.0) -> FlightTarget:
    return FlightTarget(np.asarray(position_ned, dtype=float), heading_rad=heading_rad)


# ------------------------------------------------------------------------------------------------ the mixer
def test_the_mixer_inverts_the_x500s_rotor_geometry(x500):
    """Thrust, roll, pitch and yaw moments rebuilt from the mixer's rotor thrusts with the SDF geometry (rotor i at
    (x, y) FRD, thrust up: K = −y T, M = x T, N = ±k_m T, + for the ccw rotors 0 and 1) equal what was asked."""
    mixer = RotorMixer(x500)
    xy_spin = [(ARM_XY, ARM_XY, 1), (-ARM_XY, -ARM_XY, 1), (ARM_XY, -ARM_XY, -1), (-ARM_XY, ARM_XY, -1)]
    for f, m in ((MASS_KG * G, [0.0, 0.0, 0.0]), (25.0, [0.3, -0.2, 0.05]), (15.0, [-0.1, 0.4, -0.08])):
        t = mixer.thrusts(f, np.array(m))
        rebuilt = [
            sum(t),
            sum(-y * ti for (_, y, _), ti in zip(xy_spin, t, strict=True)),
            sum(x * ti for (x, _, _), ti in zip(xy_spin, t, strict=True)),
            sum(s * K_M * ti for (_, _, s), ti in zip(xy_spin, t, strict=True)),
        ]
        np.testing.assert_allclose(rebuilt, [f, *m], atol=1e-9)
    hover = mixer.speeds(MASS_KG * G, np.zeros(3))
    np.testing.assert_allclose(hover, HOVER, rtol=1e-9)  # √(m g / 4 k_f) = 769.6 rad/s


def test_saturation_keeps_thrust_and_roll_and_gives_up_yaw_first(x500):
    mixer = RotorMixer(x500)
    t = mixer.thrusts(30.0, np.array([0.5, 0.0, 1.0]))  # far more yaw than four 8.55 N rotors can add at 30 N
    assert np.all(t >= -1e-12) and np.all(t <= K_F * OMEGA_MAX**2 + 1e-9)
    assert sum(t) == pytest.approx(30.0, rel=1e-9)
    assert sum(-y * ti for y, ti in zip([ARM_XY, -ARM_XY, -ARM_XY, ARM_XY], t, strict=True)) == pytest.approx(0.5)


def test_only_multirotors_are_flown(x500):
    assert cannot_fly(x500) is None
    assert "domain aerial" in cannot_fly(load_vehicle("wamv"))


def test_attitude_error_is_the_rotation_between_the_two_attitudes():
    """[Lee2010] §III: e_R = ½ (R_dᵀR − RᵀR_d)^∨; for R = R_d Rx(a) that is (sin a, 0, 0)."""
    r_d = desired_attitude(np.array([0.0, 0.0, 1.0]), 0.3)
    a = 0.2
    rx = np.array([[1, 0, 0], [0, math.cos(a), -math.sin(a)], [0, math.sin(a), math.cos(a)]])
    np.testing.assert_allclose(attitude_error(r_d @ rx, r_d), [math.sin(a), 0.0, 0.0], atol=1e-12)


# -------------------------------------------------------------------------------------- loops in the physics
def test_hover_holds_altitude_at_the_hover_rotor_speed(x500):
    """Position hold at 20 m for 10 s: altitude within 1 cm, mean rotor speed within 2 % of √(m g / 4 k_f)."""
    c = MultirotorController(x500)
    rec = Flight(x500).fly(10.0, lambda s, h: c.step(s, hold([0.0, 0.0, -20.0]), h))
    assert np.max(np.abs(rec[:, 3] + 20.0)) < 0.01
    assert np.mean(rec[-100:, 13:17]) == pytest.approx(HOVER, rel=0.02)


def test_attitude_step_settles_within_0_4_s(x500):
    """A 10° roll step at hover thrust / cos 10° through the attitude and rate loops and the mixer (the velocity
    loop off): within 1° of 10° from 0.4 s to 1.5 s (design: attitude 5 /s inside a 12 /s rate loop), overshoot
    below 1.5° (by 1.5 s the drone slides sideways at 2.5 m/s and the rotor drag's
    rolling moment, which the velocity loop would remove, tips it back slowly), pitch within 0.2°."""
    c = MultirotorController(x500)
    roll = math.radians(10.0)
    r_d = frames.rotation_matrix(frames.quat_from_euler_zyx(roll, 0.0, 0.0))
    thrust = MASS_KG * G / math.cos(roll)

    def attitude_only(s, h):
        r = frames.rotation_matrix(frames.quat_from_euler_zyx(*s.rpy_ned_rad))
        rates = c.attitude_loop(r, r_d, 0.0)
        return c.mixer.speeds(thrust, c.rate_loop(s.nu_frd[3:], rates, h))

    rec = Flight(x500).fly(1.5, attitude_only)
    t, phi = rec[:, 0], np.degrees(rec[:, 4])
    assert settling_time(t, phi, 10.0, 1.0) <= 0.4 and phi[t >= 0.4].min() > 9.0
    assert phi.max() < 11.5 and np.abs(np.degrees(rec[:, 5])).max() < 0.2


def test_yaw_step_settles_within_2_s(x500):
    """A 90° heading step while holding position: within 2° after 2 s (the yaw rate is limited to 1.5 rad/s),
    the position within 5 cm meanwhile."""
    c = MultirotorController(x500)
    rec = Flight(x500).fly(4.0, lambda s, h: c.step(s, hold([0.0, 0.0, -20.0], math.pi / 2), h))
    assert settling_time(rec[:, 0], np.degrees(rec[:, 6]), 90.0, 2.0) <= 2.0
    assert np.max(np.hypot(rec[:, 1], rec[:, 2])) < 0.05 and np.max(np.abs(rec[:, 3] + 20.0)) < 0.05


def test_velocity_step_settles_within_1_5_s(x500):
    """From hover to 2 m/s north: within 0.1 m/s of it after 1.5 s (velocity loop 2 /s), overshoot < 0.2 m/s;
    a 1 m/s climb step likewise within 0.05 m/s after 1.5 s."""
    c = MultirotorController(x500)
    rec = Flight(x500).fly(5.0, lambda s, h: c.step(s, FlightTarget(velocity_ned_mps=np.array([2.0, 0, 0])), h))
    assert settling_time(rec[:, 0], rec[:, 7], 2.0, 0.1) <= 1.5
    assert rec[:, 7].max() < 2.2
    c = MultirotorController(x500)
    rec = Flight(x500).fly(4.0, lambda s, h: c.step(s, FlightTarget(velocity_ned_mps=np.array([0, 0, -1.0])), h))
    assert settling_time(rec[:, 0], rec[:, 9], -1.0, 0.05) <= 1.5


def test_flies_10_m_and_holds_the_point(x500):
    """A 10 m hop north: within 0.5 m after 4 s, overshoot below 0.6 m, within 5 cm after 10 s."""
    c = MultirotorController(x500)
    rec = Flight(x500).fly(10.0, lambda s, h: c.step(s, hold([10.0, 0.0, -20.0]), h))
    assert settling_time(rec[:, 0], rec[:, 1], 10.0, 0.5) <= 4.0
    assert rec[:, 1].max() < 10.6
    assert np.hypot(rec[-1, 1] - 10.0, rec[-1, 2]) < 0.05 and abs(rec[-1, 3] + 20.0) < 0.05


def test_holds_its_point_in_a_steady_wind_and_drifts_without_control(x500):
    """An 8 m/s wind from the west sets in at once on a drone holding (0, 0, 20 m): it is pushed at most 1.5 m
    and is back within 0.1 m after 15 s (the velocity integral learns the drag), leaning into the wind. The same
    drone with its rotors held at the hover speed drifts east with the wind."""
    wind = lambda t, p: np.tile([0.0, 8.0, 0.0], (len(p), 1))  # noqa: E731 - NED: towards the east
    c = MultirotorController(x500)
    rec = Flight(x500, wind=wind).fly(40.0, lambda s, h: c.step(s, hold([0.0, 0.0, -20.0]), h))
    error = np.hypot(rec[:, 1], rec[:, 2])
    assert error.max() < 1.5
    assert error[rec[:, 0] >= 15.0].max() < 0.1 and np.abs(rec[rec[:, 0] >= 15.0, 3] + 20.0).max() < 0.1
    assert rec[-1, 4] < -math.radians(2.0)  # rolled left (negative roll, FRD): thrust tilted west, into the wind
    drift = Flight(x500, wind=wind).fly(10.0, lambda s, h: np.full(4, HOVER))
    assert drift[-1, 2] > 5.0 and drift[-1, 8] > 1.0  # east, and still moving east


def test_holds_its_point_in_moderate_dryden_turbulence(x500):
    """10 m/s wind at 10 m (11.0 m/s at 30 m, log profile), moderate Dryden turbulence at 30 m (σ_u = 2.65 m/s,
    σ_w = 1.54 m/s, the environment's model): over 60 s after 10 s of settling the horizontal error stays below
    1.5 m with an RMS below 0.5 m, the altitude within 0.5 m (measured: 0.69 m, 0.25 m, 0.13 m)."""
    env = build_environment(
        {
            "seed": 5,
            "wind": {"speed_mps": 10.0, "from_deg": 270.0, "turbulence": {"model": "dryden", "intensity": "moderate"}},
        }
    )

    def wind(t, p_ned):
        return frames.enu_to_ned(env.wind.velocity_enu(t, frames.ned_to_enu(p_ned)))

    c = MultirotorController(x500)
    rec = Flight(x500, z_ned=-30.0, wind=wind).fly(70.0, lambda s, h: c.step(s, hold([0.0, 0.0, -30.0]), h))
    late = rec[rec[:, 0] >= 10.0]
    error = np.hypot(late[:, 1], late[:, 2])
    assert error.max() < 1.5 and math.sqrt(np.mean(error**2)) < 0.5
    assert np.abs(late[:, 3] + 30.0).max() < 0.5


# ----------------------------------------------------------------------------------------- flight phases
def test_takes_off_from_the_ground_flies_a_mission_and_lands(x500):
    """From rest on the ground (motors stopped, gear on z = 0): take off 5 m, fly two waypoints at 8 m, land at
    the last one; the rotors are stopped after the touchdown, on the ground within 0.3 m of the waypoint."""
    contact = x500.aerial.contact_height_m
    flight = Flight(x500, z_ned=-contact, hovering=False)
    pilot = MultirotorPilot(x500)
    flight.fly(1.0, pilot.step)  # armed, idling on the ground
    assert np.all(flight.fleet.in_contact)
    mission = FlightMission([np.array([10.0, 0.0, -8.0]), np.array([10.0, 10.0, -8.0])], acceptance_radius_m=0.5)
    assert pilot.takeoff(flight.state())[0]
    pilot.set_mission(mission)
    rec = flight.fly(25.0, pilot.step)
    assert -rec[:, 3].min() > 4.0  # left the ground
    assert mission.done and pilot.phase == "hold"
    assert np.linalg.norm(flight.state().position_ned_m - [10.0, 10.0, -8.0]) < 0.3
    assert pilot.land(flight.state())[0]
    flight.fly(20.0, pilot.step)
    assert pilot.phase == "disarmed" and np.all(flight.fleet.in_contact)
    p = flight.state().position_ned_m
    assert np.hypot(p[0] - 10.0, p[1] - 10.0) < 0.3 and p[2] == pytest.approx(-contact, abs=0.02)
    assert np.all(flight.rows[-1][13:17] == 0.0)


@pytest.mark.parametrize(("delay_s", "flies"), [(0.04, True), (0.08, False)])
def test_commands_late_by_a_few_states_fly_and_later_ones_flip_the_drone(x500, delay_s, flies):
    """The flight controller's commands applied delay_s late, all the time (a host behind its fleet states): the
    takeoff from the ground and a flight to 20 m at 10 m, 10 m is flown with 0.04 s (2 states), and flips the
    drone (tilt past 90 deg, back on the ground) with 0.08 s. Why a realtime clock master keeps its sim time within
    max_control_lag_s = 0.05 s of the drones' hosts (lotusim_physics.pacing.ControlLag; at 0.06 s the tilt reaches
    48 deg where 36 are flown without delay)."""
    flight = Flight(x500, z_ned=-x500.aerial.contact_height_m, hovering=False)
    pilot, late = MultirotorPilot(x500), deque()

    def command(state: NedState, h: float) -> np.ndarray:
        late.append(pilot.step(state, h))
        return late.popleft() if len(late) > round(delay_s / CONTROL_S) else np.zeros(4)

    flight.fly(1.0, command)
    assert pilot.takeoff(flight.state())[0]
    pilot.set_mission(FlightMission([np.array([10.0, 0.0, -20.0]), np.array([10.0, 10.0, -20.0])], 0.5))
    rec = flight.fly(20.0, command)
    tilt_deg = np.degrees(np.abs(rec[:, 4:6]).max())
    end_error = np.linalg.norm(rec[-1, 1:4] - [10.0, 10.0, -20.0])
    print(f"\ncommands {delay_s} s late: largest tilt {tilt_deg:.1f} deg, {end_error:.2f} m from the goal at 20 s")
    if flies:
        assert tilt_deg < 45.0 and end_error < 0.3
    else:
        assert tilt_deg > 90.0 and end_error > 15.0


def test_velocity_set_points_time_out_into_a_hold(x500):
    flight = Flight(x500)
    pilot = MultirotorPilot(x500)
    flight.fly(0.2, pilot.step)
    assert pilot.set_velocity(np.array([1.0, 0.0, 0.0]), 0.0, flight.t)[0]
    flight.fly(0.4, pilot.step)
    assert pilot.phase == "velocity"
    flight.fly(5.0, pilot.step)
    assert pilot.phase == "hold" and np.linalg.norm(flight.state().nu_frd[:3]) < 0.05


def test_lines_up_over_a_moving_vessel_and_descends_with_it(x500):
    """land_on a point moving north at 1.5 m/s, 10 m up (a vessel's reference point; no deck here): the drone
    lines up 2 m above it, then descends at 0.7 m/s relative to it, within 0.4 m of it horizontally and moving at
    its speed (within 0.3 m/s, the line-up criterion) while it does."""
    flight = Flight(x500, z_ned=-15.0)
    pilot = MultirotorPilot(x500)
    flight.fly(0.2, pilot.step)

    def vessel(t: float) -> tuple[np.ndarray, np.ndarray]:
        return np.array([-10.0 + 1.5 * t, 5.0, -10.0]), np.array([1.5, 0.0, 0.0])

    assert pilot.land_on(flight.state(), *vessel(flight.t))[0]

    def command(s, h):
        pilot.update_vessel(*vessel(s.t_s))
        speeds = pilot.step(s, h)
        flags.append(pilot._descending)
        return speeds

    flags: list[bool] = []
    rec = flight.fly(20.0, command)
    rec = rec[np.array(flags)]  # the steps after the line-up
    above = rec[:, 3] < -10.5  # still above the point
    offset = np.hypot(rec[above, 1] - (-10.0 + 1.5 * rec[above, 0]), rec[above, 2] - 5.0)
    assert above.sum() > 50 and offset.max() < 0.4
    assert np.abs(rec[above, 7] - 1.5).max() < 0.3 and np.abs(rec[above, 9][-25:] - 0.7).max() < 0.1


def test_lands_on_a_moving_wamv_rides_it_and_takes_off_again(x500):
    """A WAM-V under way at 1.5 m/s (both thrusters at 0.6) carries a landing deck 1.0 m above its CO (2.4 m x
    2.0 m, lotusim_physics.decks); an X500 10 m behind it at 6 m lands on it under land_on: rotors stopped, on the
    deck (its gear 1.0 m above the WAM-V's CO, over the rectangle), moving with the boat; a takeoff then lifts it
    5 m off the moving deck."""
    wamv = load_vehicle("wamv")
    flight = Flight(x500, z_ned=-6.0)
    flight.fleet.add("usv", wamv, [-15.0, 0.0, 0.0], level_quat())
    flight.fleet.set_thruster_commands("usv", [0.6] * len(wamv.thrusters))
    pilot = MultirotorPilot(x500)
    usv = flight.fleet.index("usv")

    def boat() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        r = frames.rotation_matrix(flight.fleet.q_ned_frd[usv])
        return flight.fleet.position_ned[usv].copy(), r @ flight.fleet.nu[usv, :3], r

    def command(s, h):
        pilot.update_vessel(*boat()[:2])
        return pilot.step(s, h)

    flight.fly(20.0, pilot.step)  # the boat gets under way; the drone holds
    assert pilot.land_on(flight.state(), *boat()[:2])[0]
    flight.fly(20.0, command)
    p_boat, v_boat, r_boat = boat()
    gear_body = r_boat.T @ (flight.state().position_ned_m + [0.0, 0.0, x500.aerial.contact_height_m] - p_boat)
    drone = flight.fleet.index("x500")
    assert pilot.phase == "disarmed" and flight.fleet.in_contact[drone]
    assert abs(gear_body[0]) <= 1.2 and abs(gear_body[1]) <= 1.0 and gear_body[2] == pytest.approx(-1.0, abs=0.02)
    assert np.linalg.norm(flight.rows[-1][7:10] - v_boat) < 0.05 and np.linalg.norm(v_boat[:2]) > 1.0
    assert pilot.takeoff(flight.state())[0]
    flight.fly(8.0, command)
    assert not flight.fleet.in_contact[drone] and flight.state().position_ned_m[2] < boat()[0][2] - 5.0


def test_a_scenario_with_slow_states_is_refused_with_its_key(tmp_path):
    """The rate loop steps on every state: in a controller host (the default, state_source fleet_state) on every
    fleet state, so a 0.03 s step (33 Hz) is refused when the scenario loads (file: key: reason) and the default
    0.02 s (50 Hz) accepted; with state_source odom on every odometry message, so physics.odom_rate_hz at its 10 Hz
    default is refused and 50 Hz accepted."""
    from lotusim_core.sim.scenario import ScenarioError, load_scenario

    drone = "vessels: [{name: drone, model: x500, pose: {position: [0.0, 0.0, 5.0]}}]\n"
    path = tmp_path / "slow.yaml"
    slow_sensors = ", ".join(f"{kind}: {{rate_hz: 10.0}}" for kind in load_vehicle("x500").sensors)  # under 33 Hz
    for controller, slow, fast in (
        (
            "{type: flight_controller, vessel: drone}",
            f"physics: {{step_s: 0.03}}\nsensors: {{defaults: {{{slow_sensors}}}}}\n",
            "",
        ),
        (
            "{type: flight_controller, vessel: drone, parameters: {state_source: odom}}",
            "physics: {step_s: 0.02}\n",
            "physics: {step_s: 0.02, odom_rate_hz: 50.0}\n",
        ),
    ):
        text = drone + f"controllers: [{controller}]\n"
        path.write_text(text + slow)
        with pytest.raises(ScenarioError) as info:
            load_scenario(path)
        assert str(info.value).startswith(f"{path.resolve()}: controllers[0].type: flight_controller steps on every")
        path.write_text(text + fast)
        assert load_scenario(path).controllers[0].type == "flight_controller"
