"""Hydrodynamic lift and the surface crossing: fins that see the local flow's angle of attack (fins.py: LRAUV Sim
Eq. 5 of [Player2023] with gz LiftDrag's true angle of attack [GzSim2026]), Prestero's
hull lift (body_lift.py), the straight-running stability this gives the shipped torpedoes with C_A in full (the
Munk moment), and the buoyancy of an underwater vehicle that reaches the surface (restoring.py)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from lotusim_core.base import frames
from lotusim_core.base.catalogue import load_vehicle
from lotusim_core.base.fossen import m_rb
from lotusim_physics import layout as L
from lotusim_physics.fins import fin_wrench
from lotusim_physics.fleet import Fleet, pack_vessel

DT = 0.02
RHO = 1025.0


def _fin_pool(spec):
    """The packed fin rows of a catalogue vehicle (deflections 0)."""
    return pack_vessel(spec, "v", RHO, 9.81)[2]


def _run(fleet: Fleet, seconds: float, record=None) -> np.ndarray:
    out = []
    for k in range(round(seconds / fleet.dt_s)):
        assert fleet.step(k * fleet.dt_s) == []
        if record is not None:
            out.append(record(fleet))
    return np.array(out)


# --- fins: lift from the angle of attack --------------------------------------------------------------------


def test_fin_at_zero_deflection_in_a_cross_flow_lifts_against_the_incidence():
    """REMUS starboard stern plane (x = -0.8 m, c_La 3.12, A 0.00665 m^2) at zero deflection, vehicle moving at
    u = 2 m/s and sinking through the water at w = 0.2 m/s: the fin meets the flow at alpha = atan(0.2 / 2)
    = 0.0997 rad and lifts the tail up, 1/2 rho (u^2 + w^2) A c_La alpha = 4.28 N perpendicular to the flow,
    i.e. against the incidence; its pitch moment (nose down) turns the hull back into the flow."""
    spec = load_vehicle("remus100")
    fp = _fin_pool(spec)
    k = [f.name for f in spec.fins].index("starboard")
    fin = spec.fins[k]
    u, w = 2.0, 0.2
    alpha = math.atan(w / u)
    lift = 0.5 * RHO * (u * u + w * w) * fin.area_m2 * fin.lift_slope_per_rad * alpha
    assert lift == pytest.approx(4.28, abs=0.01)
    drag = 0.5 * RHO * (u * u + w * w) * fin.area_m2 * fin.induced_drag_factor * alpha**2
    fx, fy, fz, mx, my, mz = fin_wrench(fp, k, RHO, u, 0.0, w, 0.0, 0.0, 0.0)
    # lift along (w, 0, -u) / V (perpendicular to the flow, upwards), drag along -(u, 0, w) / V
    speed = math.hypot(u, w)
    assert fz == pytest.approx((-lift * u - drag * w) / speed, rel=1e-12)
    assert fx == pytest.approx((lift * w - drag * u) / speed, rel=1e-12)
    assert fz < 0.0 and abs(fy) < 1e-12  # against the sinking motion
    assert my == pytest.approx(0.8 * fz, rel=1e-12) and my < 0.0  # nose down: the incidence decreases
    assert mx == pytest.approx(0.1 * fz, rel=1e-12)  # the fin's roll lever (it sits 0.1 m to starboard)
    # the same fin in the same flow without incidence (deflection-only model) would produce nothing
    assert fin_wrench(fp, k, RHO, u, 0.0, 0.0, 0.0, 0.0, 0.0)[2] == 0.0


def test_fin_lift_damps_the_turn_rate_and_reverses_astern():
    """The fin's own motion w x r enters its incidence: a pitch rate q > 0 moves the tail fin down (w = -x q > 0
    at x < 0), so it lifts the tail back: a moment against q (Prestero's fin part of M_uq). Going astern, a
    positive deflection lifts the other way (a reversible flat plate, as gz LiftDrag)."""
    spec = load_vehicle("remus100")
    fp = _fin_pool(spec)
    k = [f.name for f in spec.fins].index("starboard")
    u, q = 2.0, 0.1
    my = fin_wrench(fp, k, RHO, u, 0.0, 0.0, 0.0, q, 0.0)[4]
    fin = spec.fins[k]
    x = fin.position_frd_m[0]
    alpha = math.atan(-x * q / u)  # the fin moves down at -x q: the water comes from below
    speed2 = u * u + (x * q) ** 2
    lift = 0.5 * RHO * speed2 * fin.area_m2 * fin.lift_slope_per_rad * alpha
    drag = 0.5 * RHO * speed2 * fin.area_m2 * fin.induced_drag_factor * alpha**2
    fz = (lift * u + drag * (-x * q)) / math.sqrt(speed2)  # force along the normal -z, sign folded in below
    assert my == pytest.approx(x * fz, rel=1e-9)
    assert my < 0.0  # against q > 0
    fp[k, L.F_STATE] = 0.1  # deflection, rad
    ahead = fin_wrench(fp, k, RHO, u, 0.0, 0.0, 0.0, 0.0, 0.0)[2]
    astern = fin_wrench(fp, k, RHO, -u, 0.0, 0.0, 0.0, 0.0, 0.0)[2]
    assert ahead < 0.0 and astern == pytest.approx(-ahead, rel=1e-12)


def test_hull_lift_matches_prestero_body_lift_terms():
    """REMUS hull in a cross flow, fins removed, at rest in attitude: the kernel's heave force and pitch moment
    at (u, w) = (1.5, 0.1) m/s are Prestero's Z_uwl u w and M_uwl u w with Z_uwl = -1/2 rho d^2 c_yd and
    M_uwl = -Z_uwl x_cp (measured as the change of nu_dot when body_lift is switched on)."""
    base = dataclasses.replace(load_vehicle("remus100"), fins=())
    u, w = 1.5, 0.1
    nu = [u, 0.0, w, 0.0, 0.0, 0.0]
    acc = {}
    for name, spec in (("on", base), ("off", dataclasses.replace(base, body_lift=None))):
        fleet = Fleet(1e-6, water_density_kgm3=RHO)
        fleet.add("v", spec, [0.0, 0.0, 30.0], [1.0, 0.0, 0.0, 0.0], nu)
        fleet.step(0.0)
        acc[name] = fleet.nu_dot[0].copy()
    mass = m_rb(base.mass_kg, base.inertia_cg_kgm2, base.cg_frd_m) + base.added_mass
    tau = mass @ (acc["on"] - acc["off"])
    z_uwl = -0.5 * RHO * 0.191**2 * 1.2
    assert tau[2] == pytest.approx(z_uwl * u * w, rel=1e-4)
    assert tau[4] == pytest.approx(-z_uwl * -0.321 * u * w, rel=1e-4)
    assert tau[4] < 0.0  # nose down for w > 0: against the Munk moment (Z_wdot - X_udot) u w > 0
    assert abs(tau[0]) < 1e-6 and abs(tau[1]) < 1e-6 and abs(tau[3]) < 1e-6 and abs(tau[5]) < 1e-6


# --- open-loop stability of the shipped torpedoes with C_A in full ---------------------------------------


def _perturbed_run(spec, thrust_cmd, axis: int, kick: float, settle_s: float, after_s: float):
    """Run at constant thrust, zero fins, until steady; add `kick` to nu[axis]; record nu and the Euler angles."""
    fleet = Fleet(DT, water_density_kgm3=RHO)
    fleet.add("v", spec, [0.0, 0.0, 50.0], [1.0, 0.0, 0.0, 0.0])
    fleet.set_thruster_commands("v", [thrust_cmd])
    _run(fleet, settle_s)
    steady = fleet.nu[0].copy()
    nu = steady.copy()
    nu[axis] += kick
    fleet.set_pose("v", fleet.position_ned[0].copy(), fleet.q_ned_frd[0].copy(), nu)
    hist = _run(fleet, after_s, record=lambda f: np.concatenate([f.nu[0], frames.euler_zyx_from_quat(f.q_ned_frd[0])]))
    return steady, hist


@pytest.mark.parametrize(("axis", "name"), [(4, "pitch"), (5, "yaw")])
def test_remus_pitch_and_yaw_perturbations_decay_at_cruise(axis, name):
    """Catalogue REMUS 100 (C_A in full: Munk stiffness 34.6 u^2 N m/rad) at 1000 rpm, fins at zero: a 0.1 rad/s
    pitch or yaw rate kick dies out (|rate| < 1e-3 rad/s after 20 s, < 1e-6 after 60 s) and the vehicle runs
    straight again at its trim speed; the attitude change stays below 10 deg. Without the hull lift and the
    incidence-aware fins (fins and body lift removed) the same kick diverges: the Munk moment is really there."""
    spec = load_vehicle("remus100")
    assert spec.coriolis_added_mass == "full"
    steady, hist = _perturbed_run(spec, 1000.0, axis, 0.1, 90.0, 60.0)
    assert steady[0] == pytest.approx(1.44, abs=0.01)  # trim speed: Prestero X_u|u| against the thrust
    rate = hist[:, axis]
    assert np.max(np.abs(rate[int(20 / DT) :])) < 1e-3
    assert abs(rate[-1]) < 1e-6
    assert np.max(np.abs(hist[:, 3:6] - steady[3:6])) < 0.1 + 1e-9  # never more than the kick
    angle = hist[:, 7] if name == "pitch" else hist[:, 8]
    assert np.max(np.abs(angle - angle[0])) < math.radians(10.0)
    assert hist[-1, 0] == pytest.approx(steady[0], rel=1e-3)
    bare = dataclasses.replace(spec, fins=(), body_lift=None)
    _, hist = _perturbed_run(bare, 1000.0, axis, 0.1, 40.0, 20.0)
    assert np.max(np.abs(hist[:, 3:6])) > 0.2 or np.max(np.abs(hist[:, 6:8])) > math.radians(30.0)


def test_lrauv_with_full_coriolis_runs_straight_at_300_rpm():
    """Catalogue LRAUV (C_A in full: Munk stiffness 121 u^2 N m/rad) at 300 rpm, fins at zero: HydrodynamicsTest.
    DampForwardThrust speed 1.01 +- 0.1 m/s at 45 s and the damping-law steady state sqrt(T / X_u|u|) = 1.0586 m/s
    (from [LRAUV2023]); pitch and yaw kicks of 0.1 rad/s decay (< 1e-3 rad/s after 40 s) and it runs straight."""
    spec = load_vehicle("lrauv")
    assert spec.coriolis_added_mass == "full"
    fleet = Fleet(DT, water_density_kgm3=RHO)
    fleet.add("v", spec, [0.0, 0.0, 50.0], [1.0, 0.0, 0.0, 0.0])
    fleet.set_thruster_commands("v", [10.0 * math.pi])
    _run(fleet, 45.0)
    assert np.linalg.norm(fleet.nu[0, :3]) == pytest.approx(1.01, abs=0.1)
    for axis in (4, 5):
        steady, hist = _perturbed_run(spec, 10.0 * math.pi, axis, 0.1, 150.0, 60.0)
        assert steady[0] == pytest.approx(math.sqrt(6.98 / 6.2282), rel=1e-3)
        assert np.max(np.abs(hist[int(40 / DT) :, axis])) < 1e-3
        assert hist[-1, 0] == pytest.approx(1.0586, rel=1e-3)
        assert np.max(np.abs(hist[:, 7])) < math.radians(10.0)


# --- surface crossing ------------------------------------------------------------------------------------


def _immersion_for_fraction(f: float) -> float:
    """eta (submerged fraction of the diameter) of a circle whose submerged area fraction is f (bisection)."""
    lo, hi = 0.0, 1.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        c = 1.0 - 2.0 * mid
        area = (math.acos(c) - c * math.sqrt(1.0 - c * c)) / math.pi
        lo, hi = (mid, hi) if area < f else (lo, mid)
    return 0.5 * (lo + hi)


def test_buoyant_remus_released_at_5_m_rises_and_floats_with_its_top_at_the_surface():
    """Catalogue REMUS (W = 299.0 N, B = rho g V = 304.5 N in 1025 kg/m^3) released at rest at 5 m: it rises and
    floats where the submerged part of its 0.191 m section carries its weight, f = W / B = 0.982, i.e. immersed to
    eta = 0.951 of its diameter: the top of the hull 9.3 mm above the water. It never flies out of the water (the
    bottom of the hull stays wet) and the heave motion dies out (slowly: quadratic damping only)."""
    spec = load_vehicle("remus100")
    d = spec.hull_height_m
    fleet = Fleet(DT, water_density_kgm3=RHO)
    fleet.add("v", spec, [0.0, 0.0, 5.0], [1.0, 0.0, 0.0, 0.0])
    z = _run(fleet, 300.0, record=lambda f: f.position_ned[0, 2])  # CO = CB on the axis
    weight, buoyancy = spec.mass_kg * 9.81, RHO * 9.81 * spec.volume_m3
    assert buoyancy - weight == pytest.approx(5.51, abs=0.01)
    eta = _immersion_for_fraction(weight / buoyancy)
    top_expected = -(1.0 - eta) * d  # NED z of the top of the hull at rest: above the water (< 0)
    assert top_expected == pytest.approx(-0.0093, abs=0.0001)
    assert z[int(10 / DT)] < 4.0  # it rises
    assert np.min(z + 0.5 * d) > 0.0  # the bottom of the hull never leaves the water
    assert z[-1] - 0.5 * d == pytest.approx(top_expected, abs=5e-4)
    assert np.max(np.abs(z[int(250 / DT) :] - z[-1])) < 1e-3  # the heave oscillation has died out
    roll, pitch, _ = frames.euler_zyx_from_quat(fleet.q_ned_frd[0])
    assert abs(roll) < 1e-9 and abs(pitch) < math.radians(0.5)


def test_underwater_vehicle_without_hull_height_keeps_full_buoyancy():
    """hull_height_m = 0 (not given) keeps the previous behaviour: the buoyancy does not depend on depth, so the
    buoyant REMUS keeps accelerating upwards through z = 0 (what the surface crossing prevents)."""
    spec = dataclasses.replace(load_vehicle("remus100"), hull_height_m=0.0)
    fleet = Fleet(DT, water_density_kgm3=RHO)
    fleet.add("v", spec, [0.0, 0.0, 5.0], [1.0, 0.0, 0.0, 0.0])
    _run(fleet, 60.0)
    assert fleet.position_ned[0, 2] < -5.0
