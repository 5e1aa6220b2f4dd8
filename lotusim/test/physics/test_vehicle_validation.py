"""Every catalogue vehicle against its published manoeuvring figures (lotusim_physics.vehicle_validation):
steady speed against propeller command, turning rate or circle at a rudder angle, spin rate under differential
thrust, surge and heave speeds of the ROV. Each figure cites its source (docs/references.md) and its tolerance
with the reason; a figure our model is known to miss is a strict expected failure whose reason says why.

Then the REMUS 100's open-loop nose-down trim (issue 21: 12.4 deg, diving): its cause, checked against the
static balance computed from the cited coefficients, and gone when the vehicle is made neutral; and the
issue's 105 m turning circle, which came from deflecting the top and bottom rudders the same way.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import re
from pathlib import Path

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.optimize import fsolve

from lotusim_core.base.catalogue import load_vehicle
from lotusim_physics import manoeuvres as M
from lotusim_physics import vehicle_validation as V

REFERENCES = Path(__file__).resolve().parents[3] / "docs" / "references.md"


@functools.cache
def _results(model: str, variant: str = "") -> dict[str, M.Manoeuvre]:
    """The manoeuvres of a model's plan that carry published figures (run once per model and variant)."""
    spec = load_vehicle(model)
    if variant:
        spec = V.VARIANTS[variant](spec)
    plan = V.PLANS[model]
    wanted = {p.manoeuvre for p in plan.published if p.vehicle_overrides == variant}
    plan = dataclasses.replace(
        plan,
        turn_angle_deg=plan.turn_angle_deg if "turning" in wanted else None,
        zigzag_pairs=plan.zigzag_pairs if "zigzag" in wanted else (),
        pitch_angle_deg=plan.pitch_angle_deg if "pitch" in wanted else None,
        step_levels=plan.step_levels if "steps" in wanted else (),
    )
    return V.run_plan(spec, plan)


def _cases():
    for model, plan in V.PLANS.items():
        for pub in plan.published:
            marks = [pytest.mark.xfail(strict=True, reason=pub.known_gap)] if pub.known_gap else []
            label = f"{model}-{pub.manoeuvre}-{pub.row}-{pub.quantity}" + (
                f"-{pub.vehicle_overrides}" if pub.vehicle_overrides else ""
            )
            yield pytest.param(model, pub, marks=marks, id=label.replace(" ", "_"))


@pytest.mark.parametrize("model, pub", list(_cases()))
def test_published_figure(model: str, pub: V.Published):
    """Our open-loop value is within the stated relative tolerance of the published figure."""
    c = V.compare_one(pub, _results(model, pub.vehicle_overrides))
    assert abs(c.error) <= pub.tolerance, (
        f"{model} {pub.manoeuvre} {pub.row} {pub.quantity}: ours {c.ours:.4g}, published {pub.value:.4g} "
        f"({pub.source}), error {100 * c.error:+.1f} % > {100 * pub.tolerance:.0f} %"
    )


def test_every_source_key_is_in_the_references():
    keys = set(re.findall(r"^- \*\*(\w+)\*\*", REFERENCES.read_text(encoding="utf-8"), flags=re.M))
    for plan in V.PLANS.values():
        for pub in plan.published:
            cited = re.findall(r"\[(\w+)\]", pub.source + " " + pub.known_gap)
            assert cited, f"{pub.source!r} cites no author-year key"
            assert set(cited) <= keys, f"unknown reference keys {set(cited) - keys}"


def test_every_catalogue_vehicle_has_published_figures():
    from lotusim_core.base.catalogue import list_models, load_vehicle

    marine = [m for m in list_models() if load_vehicle(m).domain != "aerial"]  # the manoeuvres are the sea's
    assert set(marine) <= set(V.PLANS)
    assert all(V.PLANS[m].published for m in marine)


# --- REMUS 100: the nose-down trim of issue 21 -----------------------------------------------------------------
# Prestero 2001 (via the catalogue file's sources): m 30.48 kg, z_g 0.0196 m, B = 306 N at rho 1030 (V fixed),
# X_udot -0.93, Z_wdot -35.5 kg, Z_w|w| -131 kg/m, M_w|w| +3.18 kg; hull lift 1/2 rho d^2 c_yd, d 0.191 m, c_yd 1.2 at
# x_cp -0.321 m (Prestero sec. 3.5.4, Hall & Anstee's set); fins: S_fin 0.00665 m^2, c_La 3.12 (Prestero), two
# horizontal fins at x -0.8 m (PVS2025). Water 1025 kg/m^3 (the simulator's default), g 9.81.
RHO, G = 1025.0, 9.81
W = 30.48 * G
B = RHO * G * 306.0 / (1030.0 * G)
ZG = 0.0196
MUNK = 35.5 - 0.93  # (m_z - m_x), N m per (m/s)^2 of u w: destabilising
K_HULL, X_CP = 0.5 * RHO * 0.191**2 * 1.2, -0.321
K_FINS, X_FIN = 2 * 0.5 * RHO * 0.00665 * 3.12, -0.8
Z_WW, M_WW = 131.0, 3.18


def _static_trim(u: float) -> tuple[float, float]:
    """(pitch rad, heave velocity w m/s) at which, running straight at surge u with the fins at zero, the heave
    force and the pitch moment balance: the net buoyancy B - W against the lift of hull and fins,
    -(K_HULL + K_FINS) u w - Z_ww w|w|, and the pitch moment of the Munk term, the hull and fin lift and M_w|w|
    against the metacentric restoring -z_g W sin(theta)."""

    def residual(x):
        theta, w = x
        z = -(B - W) * math.cos(theta) - (K_HULL + K_FINS) * u * w - Z_WW * w * abs(w)
        m = (MUNK + X_CP * K_HULL + X_FIN * K_FINS) * u * w + M_WW * w * abs(w) - ZG * W * math.sin(theta)
        return [z, m]

    theta, w = fsolve(residual, [-0.2, -0.05], xtol=1e-12)
    return float(theta), float(w)


def test_remus_static_stability_coefficients_make_the_buoyancy_a_nose_down_trim():
    """The closed form behind the trim (no quadratic terms): tan(theta) = -N (B - W) / ((K_HULL + K_FINS) z_g W)
    with N = MUNK + x_cp K_HULL + x_fin K_FINS = +10.4 N m / (m/s)^2, independent of the speed: -12.6 deg."""
    net = MUNK + X_CP * K_HULL + X_FIN * K_FINS
    net_buoyancy = B - W
    assert net == pytest.approx(10.4, abs=0.05) and net_buoyancy == pytest.approx(5.5, abs=0.05)
    theta = math.atan(-net * (B - W) / ((K_HULL + K_FINS) * ZG * W))
    assert math.degrees(theta) == pytest.approx(-12.6, abs=0.1)


def test_remus_open_loop_trim_is_the_static_balance_of_buoyancy_and_munk_moment():
    """Issue 21's 12.4 deg nose-down: the simulated straight run at 1000 and 1525 rpm trims at the pitch the
    static balance predicts (within 0.3 deg) and sinks through the water at the predicted w (within 10 %)."""
    spec = load_vehicle("remus100")
    m = M.speed_curve(spec, [("1000 rpm", 1000 / 1525), ("1525 rpm", 1.0)], duration_s=90.0)
    for row, trace in zip(m.rows, m.traces, strict=True):
        theta, w = _static_trim(row.values["u_mps"])
        assert row.values["pitch_deg"] == pytest.approx(math.degrees(theta), abs=0.3), row.label
        assert float(np.mean(trace.nu[-100:, 2])) == pytest.approx(w, rel=0.10), row.label
        assert row.values["pitch_deg"] < -10.0 and row.values["heave_rate_mps"] > 0.15  # it dives, nose down


def test_remus_made_neutral_runs_level():
    """The cause, removed: with V = m / rho (neutral) the same open-loop run holds its depth and runs level."""
    spec = load_vehicle("remus100")
    neutral = dataclasses.replace(spec, volume_m3=spec.mass_kg / RHO)
    row = M.speed_curve(neutral, [("1525 rpm", 1.0)], duration_s=90.0).rows[0].values
    assert abs(row["pitch_deg"]) < 0.1 and abs(row["heave_rate_mps"]) < 1e-3
    assert row["u_mps"] == pytest.approx(2.5, rel=0.01)  # K_T was sized for 2.5 m/s in level flight


def test_remus_rudder_pair_needs_opposite_deflections():
    """Issue 21's 1.9 deg/s turn (D ~ 105 m) came from deflecting the top and bottom rudders by the same +15 deg:
    their lift directions are opposite (normals -y and +y), so their side forces cancel and only a roll moment
    is left. The rudder angle of the manoeuvres deflects them oppositely (Actuation.rudder) and turns ten times
    faster."""
    spec = load_vehicle("remus100")
    delta = math.radians(15.0)
    same = np.array([delta, 0.0, delta, 0.0])
    rudder = delta * M.actuation(spec).rudder

    def control(t, pos, eul, nu):
        fins = np.stack([same, rudder]) if t >= 30.0 else np.zeros((2, 4))
        return np.full((2, 1), 1525.0), fins, np.zeros(2)

    run = M.run_rows(spec, control, 2, 60.0)
    r_same, r_rudder = np.degrees(run["nu"][:, -50:, 5].mean(axis=1))
    assert abs(r_same) < 1.5 and r_rudder > 15.0
    assert abs(np.degrees(run["euler_rad"][0, -50:, 0].mean())) > 15.0  # the same-sign pair rolls the hull


# --- REMUS 100: Prestero's own turning circle ------------------------------------------------------------------
def prestero_turn(rudder_deg: float, u0: float = 2.34, seconds: float = 60.0) -> dict[str, float]:
    """Steady turn of Prestero 2001's horizontal-plane model (his eqs. of motion in surge, sway, yaw with the
    Table C.1-C.10 coefficients, cross-flow terms as printed: Y_v|v| -1310, N_r|r| -94; x_g = 0, W = B), X_prop
    = -X_u|u| u0^2, rudder held from a straight run at u0. Returns diameter_m 2U/|r|, yaw_rate_dps |r|,
    speed_ratio U/u0."""
    m, izz = 30.48, 3.45
    xuu, xvr, xrr = -1.62, 35.5, -1.93
    yvv, yrr, yuv, yur, yuudr = -1310.0, 0.632, -28.6, 5.22, 9.64
    nvv, nrr, nuv, nur, nuudr = -3.18, -94.0, -24.0, -2.0, -6.15
    mass = np.array([[m + 0.93, 0.0, 0.0], [0.0, m + 35.5, -1.93], [0.0, -1.93, izz + 4.88]])
    xprop, dr = -xuu * u0 * u0, math.radians(rudder_deg)

    def rhs(_t, s):
        u, v, r = s
        x = xuu * u * abs(u) + (xvr + m) * v * r + xrr * r * r + xprop
        y = yvv * v * abs(v) + yrr * r * abs(r) + yuv * u * v + (yur - m) * u * r + yuudr * u * u * dr
        n = nvv * v * abs(v) + nrr * r * abs(r) + nuv * u * v + nur * u * r + nuudr * u * u * dr
        return np.linalg.solve(mass, [x, y, n])

    u, v, r = solve_ivp(rhs, (0.0, seconds), [u0, 0.0, 0.0], max_step=0.02, rtol=1e-9, atol=1e-12).y[:, -1]
    speed = math.hypot(u, v)
    return {"diameter_m": 2.0 * speed / abs(r), "yaw_rate_dps": math.degrees(abs(r)), "speed_ratio": speed / u0}


def test_prestero_turn_figures():
    """The REMUS turning figures of vehicle_validation are what Prestero's coefficient model gives."""
    for rudder, published in ((15.0, V.PRESTERO_TURN_15), (5.0, V.PRESTERO_TURN_5)):
        ours = prestero_turn(rudder)
        for key, value in published.items():
            assert ours[key] == pytest.approx(value, rel=2e-3), (rudder, key)
