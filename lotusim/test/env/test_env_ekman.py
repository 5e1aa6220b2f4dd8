"""Layered Ekman current against textbook Ekman theory.

Reference values (lat 47°, A_z = 0.01 m²/s, U10 = 10 m/s) derived from Stewart, Introduction to Physical
Oceanography (2008) §9.2–9.3 and Cushman-Roisin & Beckers (2011) ch. 8; LOTUSim-Xdyn [LOTUSimXdyn2025] as a
negative reference. Angles are measured in the ENU horizontal plane, anticlockwise positive, so "to the
right" (clockwise, northern hemisphere) is a negative angle.
"""

from __future__ import annotations

import numpy as np
import pytest

from lotusim_env.ekman import drag_coefficient
from lotusim_env.environment import build_environment
from lotusim_env.wind import towards_enu

LAT = 47.0
A_Z = 0.01
U10 = 10.0
RHO = 1026.0
# derived from [Stewart2008] §9.2 (docs/environment.md, reference numbers)
REF_CD = 1.59e-3
REF_TAU = 0.19478
REF_F = 1.0667e-4
REF_D = 43.02
REF_V0 = 0.18381
REF_TRANSPORT = 1.7798


def ekman_env(lat=LAT, from_deg=0.0, u10=U10, seabed=5000.0, geostrophic=(0.0, 0.0), **current):
    config = {
        "origin": {"latitude_deg": lat, "longitude_deg": -6.0},
        "water_density_kgm3": RHO,
        "wind": {"speed_mps": u10, "from_deg": from_deg},
        "bathymetry": {"model": "flat", "depth_m": seabed},
        "current": {"model": "ekman", "eddy_viscosity_m2s": A_Z, "geostrophic_enu": list(geostrophic), **current},
    }
    return build_environment(config)


def column(env, depths_m, x=0.0, y=0.0):
    depths = np.atleast_1d(np.asarray(depths_m, dtype=float))
    points = np.column_stack([np.full(depths.size, x), np.full(depths.size, y), -depths])
    return env.current.velocity_enu(0.0, points)


def signed_angle_deg(v, ref):
    """Angle from ref to v (deg), anticlockwise positive, in (-180, 180]."""
    cross = ref[0] * v[..., 1] - ref[1] * v[..., 0]
    dot = ref[0] * v[..., 0] + ref[1] * v[..., 1]
    return np.degrees(np.arctan2(cross, dot))


def test_reference_parameters_lat47_az001_u10():
    model = ekman_env().current.model
    assert model.drag_coefficient == pytest.approx(REF_CD, rel=1e-6)
    assert model.stress_nm2 == pytest.approx(REF_TAU, rel=1e-4)
    assert model.f == pytest.approx(REF_F, rel=1e-4)
    assert model.surface_depth_m == pytest.approx(REF_D, abs=0.005)
    assert model.surface_speed_v0_mps == pytest.approx(REF_V0, rel=1e-4)
    speed0 = np.hypot(*column(ekman_env(), 0.0)[0, :2])
    assert speed0 == pytest.approx(REF_V0, rel=1e-4)


@pytest.mark.parametrize("from_deg", [0.0, 90.0, 200.0])
@pytest.mark.parametrize(("lat", "expected_deg"), [(LAT, -45.0), (-LAT, 45.0)])
def test_surface_current_45_degrees_right_north_left_south(from_deg, lat, expected_deg):
    v = column(ekman_env(lat=lat, from_deg=from_deg), 0.0)[0, :2]
    wind = towards_enu(U10, from_deg)
    assert signed_angle_deg(v, wind) == pytest.approx(expected_deg, abs=1e-6)


@pytest.mark.parametrize(("lat", "sign"), [(LAT, -1.0), (-LAT, 1.0)])
def test_spiral_decay_and_rotation_at_half_and_full_ekman_depth(lat, sign):
    env = ekman_env(lat=lat, from_deg=200.0)
    d = env.current.model.surface_depth_m
    v = column(env, [0.0, d / 2, d])[:, :2]
    speed = np.hypot(v[:, 0], v[:, 1])
    assert speed[2] / speed[0] == pytest.approx(np.exp(-np.pi), rel=1e-6)  # 0.0432
    assert speed[1] / speed[0] == pytest.approx(np.exp(-np.pi / 2), rel=1e-6)  # 0.2079
    assert signed_angle_deg(v[1], v[0]) == pytest.approx(sign * 90.0, abs=1e-6)  # clockwise with depth (NH)
    assert abs(signed_angle_deg(v[2], v[0])) == pytest.approx(180.0, abs=1e-6)  # reversed at D


@pytest.mark.parametrize(("lat", "expected_deg"), [(LAT, -90.0), (-LAT, 90.0)])
@pytest.mark.parametrize("from_deg", [0.0, 90.0, 200.0])
def test_depth_integrated_transport_is_tau_over_rho_f_at_90_degrees(lat, expected_deg, from_deg):
    env = ekman_env(lat=lat, from_deg=from_deg)
    depths = np.linspace(0.0, 12 * REF_D, 60_001)
    v = column(env, depths)[:, :2]
    transport = np.trapezoid(v, depths, axis=0)  # m²/s
    assert np.hypot(*transport) == pytest.approx(REF_TRANSPORT, rel=1e-4)
    assert signed_angle_deg(transport, towards_enu(U10, from_deg)) == pytest.approx(expected_deg, abs=0.01)


@pytest.mark.parametrize(("lat", "expected_deg"), [(LAT, 45.0), (-LAT, -45.0)])
def test_bottom_layer_no_slip_veer_overshoot_and_return(lat, expected_deg):
    seabed = 300.0
    interior = np.array([0.1, -0.05])
    env = ekman_env(lat=lat, u10=0.0, seabed=seabed, geostrophic=interior)
    db = env.current.model.bottom_depth_m
    assert db == pytest.approx(REF_D, abs=0.005)  # bottom A_z defaults to the surface one
    heights = np.array([0.0, 1e-3, db, 2 * db, seabed - 1.0])
    v = column(env, seabed - heights)[:, :2]
    ratio = np.hypot(v[:, 0], v[:, 1]) / np.hypot(*interior)
    assert np.all(v[0] == 0.0)  # no slip at the bed
    assert signed_angle_deg(v[1], interior) == pytest.approx(expected_deg, abs=0.01)  # left of U in the NH
    assert ratio[2] == pytest.approx(1.0 + np.exp(-np.pi), rel=1e-9)  # overshoot 1.0432 at ζ = D_b
    assert np.hypot(*(v[3] - interior)) / np.hypot(*interior) == pytest.approx(np.exp(-2 * np.pi), rel=1e-9)
    assert np.hypot(*(v[3] - interior)) / np.hypot(*interior) < 0.0019
    assert np.allclose(v[4], interior, rtol=0, atol=1e-9)  # interior 299 m above the bed: e^{-π·299/D} ≈ 3e-10


def test_continuous_across_layer_boundaries_unlike_a_2d_cutoff():
    seabed = 150.0  # shallow: surface and bottom layers both matter
    env = ekman_env(from_deg=90.0, seabed=seabed, geostrophic=(0.05, 0.08))
    model = env.current.model
    d, db = model.surface_depth_m, model.bottom_depth_m
    eps = 1e-7
    for boundary in (d, 2 * d, seabed - db, seabed - 2 * db):
        below, above = column(env, [boundary + eps, boundary - eps])
        assert np.hypot(*(below - above)[:2]) < 1e-6 * model.surface_speed_v0_mps
    # a jump does not shrink with the sampling step, a continuous profile's largest step does (∝ dz)
    coarse, fine = (
        np.max(np.hypot(*np.diff(column(env, np.linspace(0, seabed, n))[:, :2], axis=0).T)) for n in (15_001, 150_001)
    )
    assert coarse / fine == pytest.approx(10.0, rel=0.01)
    assert coarse < np.exp(-2 * np.pi) * model.surface_speed_v0_mps  # below LOTUSim's 2D cut-off jump (0.19 % V0)


def test_zero_at_and_below_the_seabed_with_a_sloping_bed(tmp_path):
    x = np.array([0.0, 100.0, 300.0])
    y = np.array([0.0, 50.0])
    depth = np.array([[40.0, 60.0], [80.0, 100.0], [120.0, 200.0]])
    config = {
        "origin": {"latitude_deg": LAT, "longitude_deg": 0.0},
        "wind": {"speed_mps": U10, "from_deg": 45.0},
        "current": {"model": "ekman", "geostrophic_enu": [0.1, 0.0]},
    }
    rows = [(xi, yj, depth[i, j]) for i, xi in enumerate(x) for j, yj in enumerate(y)]
    np.savetxt(tmp_path / "bed.csv", rows, delimiter=",", header="x_m,y_m,depth_m", comments="")
    config["bathymetry"] = {"model": "grid", "file": str(tmp_path / "bed.csv")}
    env = build_environment(config)
    px, py = np.array([0.0, 100.0, 300.0, 150.0, 200.0]), np.array([0.0, 50.0, 50.0, 25.0, 10.0])
    h = env.bathymetry.seabed_depth_m(px, py)
    at_bed = env.current.velocity_enu(0.0, np.column_stack([px, py, -h]))
    below = env.current.velocity_enu(0.0, np.column_stack([px, py, -h - 5.0]))
    above = env.current.velocity_enu(0.0, np.column_stack([px, py, -h + 5.0]))
    assert np.all(at_bed == 0.0) and np.all(below == 0.0)
    assert np.all(np.hypot(above[:, 0], above[:, 1]) > 0.01)


def test_shallow_water_spiral_has_no_slip_at_the_bed_and_deep_water_limit():
    shallow = ekman_env(seabed=0.5 * REF_D)
    h = 0.5 * REF_D
    v = column(shallow, [h - 1e-9, h])
    assert np.hypot(*v[0, :2]) < 1e-9 and np.all(v[1] == 0.0)
    deep = column(ekman_env(seabed=50 * REF_D), [0.0])[0, :2]
    textbook = REF_V0 * np.array([np.cos(np.radians(-45 - 90)), np.sin(np.radians(-45 - 90))])  # wind towards S
    assert np.allclose(deep, textbook, rtol=1e-4)


def test_drag_coefficient_eq1_threshold_and_xdyn_discrepancy():
    assert drag_coefficient(25.0) == pytest.approx(2.43e-3)
    assert drag_coefficient(20.5) == pytest.approx(2.43e-3)
    assert abs(drag_coefficient(20.5 - 1e-9) - 2.43e-3) < 0.002e-3  # paper's law is continuous at 20.5 m/s
    jump = drag_coefficient(20.2, "xdyn") - drag_coefficient(20.2 - 1e-9, "xdyn")
    assert jump == pytest.approx(2.423e-3 - (0.79 + 0.08 * 20.2) * 1e-3)  # xdyn: 0.017e-3 jump at 20.2 m/s
    assert abs(drag_coefficient(20.228 - 1e-9, "prototype") - 2.423e-3) < 0.001e-3


def test_textbook_v0_is_xdyn_value_divided_by_sqrt_rho():
    """LOTUSim-Xdyn's V0 = √2 π τ/(D f √ρ) is √ρ = 32.03 times ours ([LOTUSimXdyn2025])."""
    model = ekman_env().current.model
    xdyn_v0 = np.sqrt(2) * np.pi * model.stress_nm2 / (model.surface_depth_m * model.f * np.sqrt(RHO))
    assert xdyn_v0 / model.surface_speed_v0_mps == pytest.approx(32.03, abs=0.005)


def test_wind_depth_rule_and_wind_override():
    env = ekman_env(surface_depth_rule="wind")
    assert env.current.model.surface_depth_m == pytest.approx(88.87, abs=0.01)  # Stewart eq. 9.16 at 47°, 10 m/s
    own = ekman_env(u10=0.0, wind_speed_mps=U10, wind_from_deg=200.0)
    assert np.allclose(column(own, [0.0, 20.0]), column(ekman_env(from_deg=200.0), [0.0, 20.0]), rtol=0, atol=0)


def test_bottom_layer_follows_the_local_seabed(tmp_path):
    """Over a sloping bed the bottom layer sits on the local depth: overshoot 1 + e^-π at ζ = D_b everywhere."""
    xs, ys = np.array([0.0, 1000.0]), np.array([0.0, 1000.0])
    rows = [(x, y, 200.0 + 0.1 * x + 0.05 * y) for x in xs for y in ys]  # 200 .. 350 m
    np.savetxt(tmp_path / "bed.csv", rows, delimiter=",", header="x_m,y_m,depth_m", comments="")
    interior = np.array([0.0, 0.12])
    config = {
        "origin": {"latitude_deg": LAT, "longitude_deg": 0.0},
        "bathymetry": {"model": "grid", "file": "bed.csv"},
        "current": {"model": "ekman", "geostrophic_enu": interior.tolist()},
    }
    env = build_environment(config, base_dir=tmp_path)
    db = env.current.model.bottom_depth_m
    x, y = np.array([0.0, 500.0, 1000.0, 250.0]), np.array([0.0, 500.0, 1000.0, 900.0])
    h = env.bathymetry.seabed_depth_m(x, y)
    assert np.allclose(h, 200.0 + 0.1 * x + 0.05 * y)
    v = env.current.velocity_enu(0.0, np.column_stack([x, y, -(h - db)]))
    assert np.allclose(np.hypot(v[:, 0], v[:, 1]), (1.0 + np.exp(-np.pi)) * 0.12, rtol=1e-9)
