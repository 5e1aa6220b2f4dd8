"""Surface vessels: waterplane hydrostatics (Fossen 2021 sec. 4.2, no buoyancy above the waterline), wind loads
([SaldarriagaMesa2025] sec. 4.3 / Fossen 2021 sec. 10.1) and the WAM-V speed of the classic VRX damping
(classic [VRX2025], derived)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from physics_reference_vehicles import level_quat, wamv

from lotusim_core.base.vehicle_spec import SurfaceHydrostatics, VehicleSpec, WindSpec
from lotusim_physics.fleet import Fleet

DT = 0.02
RHO, G = 1025.0, 9.81


def _box(damping: bool = False, wind: WindSpec | None = None) -> VehicleSpec:
    """A 2 m x 1 m box barge of 500 kg (draft 0.244 m): textbook hydrostatics, no added mass."""
    m = 500.0
    return VehicleSpec(
        name="box",
        domain="surface",
        description="box barge",
        mass_kg=m,
        inertia_cg_kgm2=np.diag([50.0, 200.0, 220.0]),
        cg_frd_m=np.zeros(3),
        added_mass=np.zeros((6, 6)),
        damping_linear=np.diag([200.0, 400.0, 800.0, 100.0, 300.0, 300.0]) if damping else np.zeros((6, 6)),
        damping_quadratic=np.zeros((6, 6)),
        surface=SurfaceHydrostatics(waterplane_area_m2=2.0, gm_transverse_m=0.3, gm_longitudinal_m=1.2, draft_m=0.244),
        wind=wind,
    )


def _run(fleet, seconds, record=None, **env):
    out = []
    for k in range(round(seconds / fleet.dt_s)):
        assert fleet.step(k * fleet.dt_s, **env) == []
        if record is not None:
            out.append(record(fleet))
    return np.array(out)


def test_surface_vessel_floats_at_its_waterline():
    fleet = Fleet(DT)
    fleet.add("box", _box(damping=True), [0.0, 0.0, 0.0], [1, 0, 0, 0])
    _run(fleet, 20.0)
    assert np.max(np.abs(fleet.position_ned[0])) < 1e-9
    assert np.max(np.abs(fleet.nu[0])) < 1e-9


@pytest.mark.parametrize(
    ("axis", "stiffness", "inertia"),
    [
        ("heave", RHO * G * 2.0, 500.0),  # rho g A_wp
        ("roll", 500.0 * G * 0.3, 50.0),  # rho g nabla GM_T = W GM_T
        ("pitch", 500.0 * G * 1.2, 200.0),  # W GM_L
    ],
)
def test_hydrostatic_natural_periods(axis, stiffness, inertia):
    """Undamped small oscillations about the waterline: omega = sqrt(C / M) with C = rho g A_wp (heave),
    rho g nabla GM_T (roll), rho g nabla GM_L (pitch) (Fossen 2021 sec. 4.2)."""
    fleet = Fleet(DT)
    if axis == "heave":
        fleet.add("box", _box(), [0.0, 0.0, 0.02], [1, 0, 0, 0])
        col = 2
    else:
        q0 = level_quat(roll_rad=0.02) if axis == "roll" else level_quat(pitch_rad=0.02)
        fleet.add("box", _box(), [0.0, 0.0, 0.0], q0)
        col = 3 if axis == "roll" else 4
    hist = _run(fleet, 30.0, record=lambda f: f.nu[0, col])
    t = np.arange(1, len(hist) + 1) * DT
    idx = np.flatnonzero((hist[:-1] < 0) & (hist[1:] >= 0))
    tc = t[idx] - hist[idx] * DT / (hist[idx + 1] - hist[idx])
    omega = 2 * math.pi / np.mean(np.diff(tc))
    assert omega == pytest.approx(math.sqrt(stiffness / inertia), rel=5e-3)


def test_no_buoyancy_above_the_waterline():
    """A hull held 1 m above the water falls freely (g) until it touches the water; lifted only partly out,
    it is pushed down by the missing buoyancy rho g A_wp dz."""
    fleet = Fleet(1e-3)
    fleet.add("high", _box(), [0.0, 0.0, -1.0], [1, 0, 0, 0])
    fleet.add("partly", _box(), [0.0, 0.0, -0.1], [1, 0, 0, 0])
    fleet.step(0.0)
    assert fleet.nu_dot[0, 2] == pytest.approx(G, rel=1e-6)
    assert fleet.nu_dot[1, 2] == pytest.approx(RHO * G * 2.0 * 0.1 / 500.0, rel=1e-3)


def test_wamv_top_speed_with_classic_vrx_damping():
    """Derived from [VRX2025]: 2 x 250 N with X_u = 51.3, X_u|u| = 72.4 -> 2.297 m/s (classic VRX)."""
    fleet = Fleet(DT)
    fleet.add("wamv", wamv(wind=False), [0.0, 0.0, 0.0], [1, 0, 0, 0])
    fleet.set_body_wrench("wamv", [500.0, 0, 0, 0, 0, 0])
    _run(fleet, 60.0)
    u = (-51.3 + math.sqrt(51.3**2 + 4 * 72.4 * 500.0)) / (2 * 72.4)
    assert u == pytest.approx(2.297, abs=1e-3)
    assert fleet.nu[0, 0] == pytest.approx(u, rel=1e-4)
    assert abs(fleet.position_ned[0, 2]) < 1e-6  # it stays on its waterline


WIND = WindSpec(frontal_area_m2=0.5, lateral_area_m2=1.0, length_m=2.0, cx=0.7, cy=0.8, cn=0.1)


def _wind_push(wind_ned, yaw=0.0, nu=None):
    fleet = Fleet(1e-4)
    fleet.add("box", _box(wind=WIND), [0.0, 0.0, 0.0], level_quat(yaw_rad=yaw), nu)
    fleet.step(0.0, wind_ned=lambda t, p: np.tile(wind_ned, (len(p), 1)))
    return fleet.nu_dot[0] * np.array([500.0, 500.0, 500.0, 50.0, 200.0, 220.0])  # M nu_dot = tau (M diagonal)


def test_wind_from_astern_pushes_ahead_and_beam_wind_pushes_to_leeward():
    """Relative wind, C_X = -c_x cos(gamma), C_Y = c_y sin(gamma), C_N = c_n sin(2 gamma), q = 1/2 rho_a V^2."""
    q = 0.5 * 1.225 * 10.0**2
    # heading north, wind blowing towards north (from astern) at 10 m/s: X = q c_x A_F
    tau = _wind_push([10.0, 0.0, 0.0])
    assert tau[0] == pytest.approx(q * 0.7 * 0.5, rel=1e-4)
    assert abs(tau[1]) < 1e-9 and abs(tau[5]) < 1e-9
    # wind blowing towards east (from port) on a north-heading vessel: pushed to starboard, Y = q c_y A_L
    tau = _wind_push([0.0, 10.0, 0.0])
    assert tau[1] == pytest.approx(q * 0.8 * 1.0, rel=1e-4)
    assert abs(tau[0]) < 1e-6
    # the same wind seen by a vessel heading east is from astern again
    tau = _wind_push([0.0, 10.0, 0.0], yaw=math.pi / 2)
    assert tau[0] == pytest.approx(q * 0.7 * 0.5, rel=1e-4)
    # a wind on the starboard bow (from north-east, blowing towards south-west) turns the bow away (N < 0)
    tau = _wind_push([-10.0 / math.sqrt(2), -10.0 / math.sqrt(2), 0.0])
    assert tau[5] == pytest.approx(-q * 0.1 * 1.0 * 2.0, rel=1e-4)
    assert tau[0] < 0 and tau[1] < 0


def test_no_wind_load_when_drifting_with_the_wind():
    tau = _wind_push([3.0, 4.0, 0.0], nu=[3.0, 4.0, 0.0, 0.0, 0.0, 0.0])
    assert np.max(np.abs(tau[[0, 1, 5]])) < 1e-9


def test_underwater_vehicles_feel_no_wind_and_still_water_is_the_default():
    spec = dataclasses.replace(_box(wind=WIND), domain="underwater", surface=None, volume_m3=500.0 / RHO)
    fleet = Fleet(DT)
    fleet.add("sub", spec, [0.0, 0.0, 10.0], [1, 0, 0, 0])
    fleet.step(0.0, wind_ned=lambda t, p: np.tile([20.0, 0.0, 0.0], (len(p), 1)))
    assert np.max(np.abs(fleet.nu[0])) < 1e-12
