"""The manoeuvre module's measuring tools on known inputs (lotusim_physics.manoeuvres): actuation signs from the
geometry, the circle fit, the step-response times, a turning circle whose radius is known in closed form, and the
default plan a vehicle file outside the catalogue gets."""

from __future__ import annotations

import math

import numpy as np
import pytest

from lotusim_core.base.catalogue import load_vehicle, vehicles_dir
from lotusim_physics import manoeuvres as M
from lotusim_physics import vehicle_validation as V


def test_actuation_signs_follow_the_fin_and_thruster_geometry():
    """REMUS: top rudder (normal -y at x = -0.8) yaws the bow to starboard with a positive deflection, the bottom
    one with a negative; the starboard stern plane (normal -z) pitches the nose down with a positive deflection
    (fins.py docstring), so a nose-up elevator angle is -1 there and +1 on the port plane. BlueROV2 Heavy: the
    front vectored thrusters push aft for a positive command, so surge takes them negative."""
    act = M.actuation(load_vehicle("remus100"))
    assert act.rudder.tolist() == [1.0, 0.0, -1.0, 0.0]
    assert act.elevator.tolist() == [0.0, -1.0, 0.0, 1.0]
    assert act.surge.tolist() == [1.0] and act.fin_max_deg == pytest.approx(15.0, abs=1e-3)
    rov = M.actuation(load_vehicle("bluerov2_heavy"))
    assert rov.surge.tolist() == [-1, -1, 1, 1, 0, 0, 0, 0]
    assert rov.heave.tolist() == [0, 0, 0, 0, 1, 1, 1, 1]
    assert not rov.has_rudder and not rov.has_differential_yaw
    kayak = M.actuation(load_vehicle("kayak_usv"))
    assert kayak.yaw.tolist() == [1, -1, 1, -1]  # port thrusters (y < 0) pushing forward yaw the bow to starboard
    np.testing.assert_allclose(kayak.thrust(kayak.surge, 0.5), [0.5] * 4)


def test_circle_fit_and_heading_interpolation():
    th = np.linspace(0.3, 2.0 * np.pi, 80)
    x, y = 3.0 + 7.5 * np.cos(th), -2.0 + 7.5 * np.sin(th)
    assert M._circle_radius(x, y) == pytest.approx(7.5, rel=1e-12)
    psi = np.array([0.0, 1.0, 2.0, 3.0])
    assert M._at_heading(psi, np.array([0.0, 10.0, 20.0, 30.0]), 1.5) == pytest.approx(15.0)
    assert math.isnan(M._at_heading(psi, psi, 4.0))


def test_step_times_of_a_first_order_response():
    """x = 1 - exp(-t / 2): tau63 = 2 s, 10-90 % rise = 2 ln 9 = 4.394 s."""
    t = np.linspace(0.0, 30.0, 30001)
    times = M._step_times(t, 1.0 - np.exp(-t / 2.0), 1.0)
    assert times["tau63_s"] == pytest.approx(2.0, abs=1e-3)
    assert times["rise_s"] == pytest.approx(2.0 * math.log(9.0), abs=1e-3)


def test_turning_circle_of_a_steady_spin_is_u_over_r():
    """WAM-V with one thruster at full and the other at zero: once steady, the horizontal track is a circle of
    diameter 2 U / r (U the speed over ground, r the yaw rate), whatever the hull; port and starboard mirror."""
    m = M.turning_circles(load_vehicle("wamv"), 0.0, approach_s=10.0, turn_s=40.0)
    port, stbd = (r.values for r in m.rows)
    assert stbd["yaw_rate_dps"] > 0.0 > port["yaw_rate_dps"]
    assert stbd["diameter_m"] == pytest.approx(port["diameter_m"], rel=1e-9)
    expected = 2.0 * stbd["speed_mps"] / math.radians(stbd["yaw_rate_dps"])
    assert stbd["diameter_m"] == pytest.approx(expected, rel=0.01)
    assert stbd["turns"] > 2.0 and stbd["speed_ratio"] < 1.0


def test_a_vehicle_file_outside_the_catalogue_gets_the_default_plan(tmp_path):
    """A user's vehicle file (here the REMUS file under another name) runs every standard manoeuvre its actuators
    allow, with no published figures to compare."""
    src = load_vehicle("remus100")
    path = tmp_path / "my_auv.yaml"
    path.write_text((vehicles_dir() / "remus100.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    spec = load_vehicle(path)
    assert spec.name == "my_auv" and spec.name not in V.PLANS
    plan = V.plan_for(spec)
    assert plan.published == () and plan.turn_angle_deg == pytest.approx(15.0, abs=1e-3)
    assert plan.zigzag_pairs and plan.pitch_angle_deg == 2.0
    results = V.run_plan(spec, plan)
    assert set(results) == {"speed", "turning", "zigzag", "pitch", "steps"}
    assert V.validate(spec, plan, results) == []
    # the same physics as the catalogue model: the same full-thrust speed
    ref = M.speed_curve(src, [("100 %", 1.0)], plan.speed_s).rows[0].values["u_mps"]
    assert results["speed"].row("100 %").values["u_mps"] == pytest.approx(ref, rel=1e-12)
