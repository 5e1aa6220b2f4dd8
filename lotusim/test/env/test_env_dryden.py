"""Dryden turbulence (MIL-F-8785C low altitude) and the wind at altitude.

Expected values come from the specification's formulas, typed here again [MILF8785C; MathWorksDryden2024]:
L_w = h, L_u = L_v = h/(0.177 + 0.000823 h)^1.2 (ft), σ_w = 0.1 W20, σ_u/σ_w = σ_v/σ_w = (0.177 + 0.000823 h)^−0.4,
W20 = 15/30/45 kt; the Dryden autocorrelations R_u(ξ) = σ_u² e^{−ξ/L_u}, R_w(ξ) = σ_w² e^{−ξ/L_w}(1 − ξ/(2L_w))
(the Fourier pairs of the spectra Φ_u, Φ_w), seen at a fixed point through Taylor's frozen turbulence, ξ = V τ,
V the mean wind at the height, from the log profile U10 ln(h/z0)/ln(10/z0).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from lotusim_core.sim.scenario import ScenarioError, load_scenario
from lotusim_env.config import ConfigError, ConfigRefused, build_checked, dump_config
from lotusim_env.environment import build_environment
from lotusim_env.wind import towards_enu

FT, KT = 0.3048, 1852.0 / 3600.0
Z0 = 0.0002  # the default roughness (open sea)


def spec_scales(h_m: float, w20_mps: float) -> dict[str, float]:
    """MIL-F-8785C low-altitude scales (m) and intensities (m/s) at h_m, typed from the specification."""
    h = h_m / FT
    d = 0.177 + 0.000823 * h
    return {
        "L_u": h / d**1.2 * FT,
        "L_w": h * FT,
        "sigma_w": 0.1 * w20_mps,
        "sigma_u": 0.1 * w20_mps / d**0.4,
    }


def log_speed(u10: float, h_m: float) -> float:
    return u10 * math.log(h_m / Z0) / math.log(10.0 / Z0)


def config(root_seed: int = 7, **turbulence) -> dict:
    turb = {"model": "dryden", "intensity": "moderate", **turbulence}
    return {"seed": root_seed, "wind": {"speed_mps": 10.0, "from_deg": 270.0, "turbulence": turb}}


def fixed_point_series(wind, height_m: float, dt_s: float, n: int) -> np.ndarray:
    """(n, 3) turbulence (ENU, mean removed) seen at (0, 0, h) at times k dt_s, from the turbulence's field: at a
    fixed point the series at times t_k equals, at t = 0, the points −V t_k downwind (Taylor), evaluated at once."""
    v = log_speed(10.0, height_m)
    t = np.arange(n) * dt_s
    # (t, s) enters only as V t − s: the series at one point equals one instant at points s = −V t (east = along)
    pts = np.column_stack([-v * t, np.zeros(n), np.full(n, height_m)])
    return wind.turbulence.velocity_enu(0.0, pts)


def autocorrelation(x: np.ndarray, lag: int) -> float:
    x = x - x.mean()
    return float(np.mean(x[:-lag] * x[lag:]) / np.mean(x * x))


# ---------------------------------------------------------------------------------------------- scales
@pytest.mark.parametrize(("intensity", "knots"), [("light", 15.0), ("moderate", 30.0), ("severe", 45.0)])
def test_intensities_are_w20_of_15_30_45_knots(intensity, knots):
    from lotusim_env.dryden import low_altitude_scales

    lengths, sigma = low_altitude_scales(np.array([100.0 * FT]), knots * KT)
    expected = spec_scales(100.0 * FT, knots * KT)
    assert sigma[2, 0] == pytest.approx(0.1 * knots * KT, rel=1e-12)  # 0.1 W20: 0.772 / 1.543 / 2.315 m/s
    assert sigma[0, 0] == pytest.approx(expected["sigma_u"], rel=1e-12) and sigma[1, 0] == sigma[0, 0]
    assert lengths[0, 0] == pytest.approx(expected["L_u"], rel=1e-12) and lengths[1, 0] == lengths[0, 0]
    assert lengths[2, 0] == pytest.approx(100.0 * FT, rel=1e-12)
    wind = build_environment(config(intensity=intensity)).wind
    assert wind.turbulence.w20_mps == pytest.approx(knots * KT, rel=1e-12)


def test_at_1000_ft_the_low_altitude_model_is_isotropic():
    from lotusim_env.dryden import low_altitude_scales

    lengths, sigma = low_altitude_scales(np.array([1000.0 * FT]), 15.0)  # 0.177 + 0.823 = 1: L = h, σ_u = σ_w
    assert np.allclose(lengths[:, 0], 304.8, rtol=1e-12) and np.allclose(sigma[:, 0], 1.5, rtol=1e-12)


# -------------------------------------------------------------------------------------- the statistics
@pytest.fixture(scope="module")
def moderate():
    return build_environment(config()).wind


@pytest.mark.parametrize("height_m", [40.0, 30.0])  # 40 m is a level of the field, 30 m lies between two
def test_variance_is_sigma_squared(moderate, height_m):
    """Over a record of 4000 L_u (8000 L_w): each variance within 6 % of σ² (the sampling error of such a record
    is about 2 % for u, 1.5 % for w; the grid interpolation takes 0.3 %)."""
    s = spec_scales(height_m, 30.0 * KT)
    v = log_speed(10.0, height_m)
    dt = 0.1 * s["L_w"] / v
    n = int(4000 * s["L_u"] / v / dt)
    x = fixed_point_series(moderate, height_m, dt, n)
    along, across, up = x[:, 0], x[:, 1], x[:, 2]  # wind from 270: along = east, across = north
    assert np.var(along) / s["sigma_u"] ** 2 == pytest.approx(1.0, abs=0.06)
    assert np.var(across) / s["sigma_u"] ** 2 == pytest.approx(1.0, abs=0.06)
    assert np.var(up) / s["sigma_w"] ** 2 == pytest.approx(1.0, abs=0.06)
    assert abs(np.mean(along)) < 0.1 * s["sigma_u"] and abs(np.mean(up)) < 0.05 * s["sigma_w"]


def test_autocorrelation_has_the_dryden_correlation_length(moderate):
    """At 40 m, moderate: u's autocorrelation at lags τ = (0.5, 1, 2) L_u/V is e^{−Vτ/L_u} (0.607, 0.368,
    0.135) and w's is e^{−x}(1 − x/2), x = Vτ/L_w (0.455, 0.184, 0.000): each within 0.04."""
    h = 40.0
    s = spec_scales(h, 30.0 * KT)
    v = log_speed(10.0, h)
    dt = 0.05 * s["L_w"] / v
    n = int(3000 * s["L_u"] / v / dt)
    x = fixed_point_series(moderate, h, dt, n)
    for ratio in (0.5, 1.0, 2.0):
        lag_u = round(ratio * s["L_u"] / v / dt)
        assert autocorrelation(x[:, 0], lag_u) == pytest.approx(math.exp(-lag_u * dt * v / s["L_u"]), abs=0.04)
        lag_w = round(ratio * s["L_w"] / v / dt)
        xi = lag_w * dt * v / s["L_w"]
        assert autocorrelation(x[:, 2], lag_w) == pytest.approx(math.exp(-xi) * (1.0 - xi / 2.0), abs=0.04)
    # the integral time scale of u, ∫ρ_u dτ over 0 … 5 L_u/V = (L_u/V)(1 − e^−5), within 15 %
    lags = np.arange(1, round(5.0 * s["L_u"] / v / dt))
    rho = np.array([autocorrelation(x[:, 0], int(k)) for k in lags[::10]])
    taus = lags[::10] * dt
    integral = np.trapezoid(rho, taus)
    expected = s["L_u"] / v * (math.exp(-taus[0] * v / s["L_u"]) - math.exp(-taus[-1] * v / s["L_u"]))
    assert integral == pytest.approx(expected, rel=0.15)


def test_a_point_downwind_sees_the_same_turbulence_later(moderate):
    """Taylor's frozen turbulence: 300 m downwind of (0, 0, 40 m) the turbulence of time t arrives at t + 300/V."""
    v = log_speed(10.0, 40.0)
    for t in (3.0, 47.5, 1000.0):
        here = moderate.turbulence.velocity_enu(t, np.array([[0.0, 0.0, 40.0]]))
        there = moderate.turbulence.velocity_enu(t + 300.0 / v, np.array([[300.0, 0.0, 40.0]]))
        assert np.allclose(here, there, rtol=0, atol=1e-9)


def test_the_field_is_continuous_in_height(moderate):
    """Two points 1 cm apart in height, after an hour of drift, see nearly the same wind (< 2 % of σ_w apart)."""
    s = spec_scales(30.0, 30.0 * KT)
    pts = np.array([[0.0, 0.0, 30.0], [0.0, 0.0, 30.01]])
    for t in (3600.0, 7200.0):
        a, b = moderate.turbulence.velocity_enu(t, pts)
        assert np.max(np.abs(a - b)) < 0.02 * s["sigma_w"]


# ----------------------------------------------------------------------------------------- determinism
def test_same_seed_same_gusts_bit_for_bit_in_any_order():
    rng = np.random.default_rng(0)
    times = rng.uniform(-50.0, 3000.0, 200)
    pts = np.column_stack([rng.uniform(-2000, 2000, 200), rng.uniform(-2000, 2000, 200), rng.uniform(0, 200, 200)])
    one = build_environment(config(root_seed=11)).wind
    fresh = build_environment(config(root_seed=11)).wind
    batch = np.array([one.velocity_enu(t, p[None, :])[0] for t, p in zip(times, pts, strict=True)])
    order = rng.permutation(200)
    again = np.empty_like(batch)
    for i in order:
        again[i] = fresh.velocity_enu(times[i], pts[i][None, :])[0]
    assert np.array_equal(batch, again)
    other = build_environment(config(root_seed=12)).wind
    different = np.array([other.velocity_enu(t, p[None, :])[0] for t, p in zip(times, pts, strict=True)])
    assert np.all(np.abs(different - batch).max(axis=1) > 0.0)
    # a turbulence seed of its own changes the turbulence only
    own = build_environment(config(root_seed=11, seed=5)).wind
    assert not np.array_equal(own.velocity_enu(10.0, pts), one.velocity_enu(10.0, pts))


def test_a_vectorised_call_equals_one_point_at_a_time(moderate):
    rng = np.random.default_rng(1)
    pts = np.column_stack([rng.uniform(-500, 500, 64), rng.uniform(-500, 500, 64), rng.uniform(-5, 400, 64)])
    together = moderate.velocity_enu(123.4, pts)
    alone = np.array([moderate.velocity_enu(123.4, p[None, :])[0] for p in pts])
    assert np.array_equal(together, alone)


# ------------------------------------------------------------------------------ the wind at altitude
def test_surface_vessels_keep_their_10_m_wind_bit_for_bit_without_turbulence():
    gusty = {"speed_mps": 9.0, "from_deg": 200.0, "gust_std_mps": 1.5, "gust_time_constant_s": 6.0}
    old = build_environment({"seed": 4, "wind": gusty}).wind
    pts = np.array([[0.0, 0.0, 0.0], [250.0, -40.0, 1.5], [10.0, 3.0, -20.0], [0.0, 0.0, 10.0]])
    mean = towards_enu(9.0, 200.0)
    calm = build_environment({"wind": {"speed_mps": 9.0, "from_deg": 200.0}}).wind.velocity_enu(5.0, pts)
    assert np.array_equal(calm, np.tile([mean[0], mean[1], 0.0], (4, 1)))  # exactly the 10 m mean
    for extra in ({}, {"profile": {"model": "log"}}, {"turbulence": {"model": "none"}}):
        same = build_environment({"seed": 4, "wind": {**gusty, **extra}}).wind
        assert np.array_equal(same.velocity_enu(33.3, pts), old.velocity_enu(33.3, pts))


def test_a_drone_at_30_m_sees_the_wind_of_its_height():
    wind = build_environment({"wind": {"speed_mps": 10.0, "from_deg": 270.0}}).wind
    v = wind.velocity_enu(0.0, np.array([[0.0, 0.0, 30.0], [0.0, 0.0, 120.0]]))
    assert v[0, 0] == pytest.approx(log_speed(10.0, 30.0), rel=1e-12)  # 11.02 m/s
    assert v[1, 0] == pytest.approx(log_speed(10.0, 120.0), rel=1e-12)  # 12.30 m/s
    uniform = build_environment({"wind": {"speed_mps": 10.0, "from_deg": 270.0, "profile": {"model": "uniform"}}})
    assert uniform.wind.velocity_enu(0.0, np.array([[0.0, 0.0, 30.0]]))[0, 0] == pytest.approx(10.0, rel=1e-12)


def test_w20_defaults_to_the_mean_wind_at_20_ft():
    wind = build_environment({"wind": {"speed_mps": 10.0, "turbulence": {"model": "dryden"}}}).wind
    assert wind.turbulence.w20_mps == pytest.approx(log_speed(10.0, 20.0 * FT), rel=1e-12)  # 9.54 m/s


# --------------------------------------------------------------------------------- configuration
BAD = [
    ({"model": "karman"}, "wind.turbulence.model", "expected one of"),
    ({"model": "dryden", "intensity": "gale"}, "wind.turbulence.intensity", "expected one of"),
    ({"model": "dryden", "intensity": "light", "w20_mps": 3.0}, "wind.turbulence.w20_mps", "not both"),
    ({"model": "dryden", "w20_mps": -1.0}, "wind.turbulence.w20_mps", ">= 0"),
    ({"model": "dryden", "gusts": 1}, "wind.turbulence", "unknown key"),
    ({"intensity": "light"}, "wind.turbulence.model", "required"),
    ({"model": "none", "intensity": "light"}, "wind.turbulence", "no other key"),
]


@pytest.mark.parametrize(("turbulence", "key", "reason"), BAD, ids=[b[2] for b in BAD])
def test_bad_turbulence_names_key_and_reason(turbulence, key, reason):
    with pytest.raises(ConfigError) as info:
        build_environment({"wind": {"speed_mps": 5.0, "turbulence": turbulence}})
    assert info.value.key.startswith(key) and reason in str(info.value)


def test_turbulence_needs_a_mean_wind():
    with pytest.raises(ConfigError, match="wind.turbulence: Dryden turbulence is carried by the mean wind"):
        build_environment({"wind": {"speed_mps": 0.0, "turbulence": {"model": "dryden", "intensity": "light"}}})


def test_scenario_errors_name_file_key_and_reason(tmp_path):
    path = tmp_path / "drone.yaml"
    path.write_text(
        "vessels:\n  - {name: usv, model: wamv}\n"
        "environment: {wind: {speed_mps: 6.0, turbulence: {model: dryden, intensity: stormy}}}\n"
    )
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    assert str(info.value).startswith(f"{path.resolve()}: environment.wind.turbulence.intensity: ")


def test_the_published_configuration_rebuilds_the_same_turbulence():
    """current_server publishes dump_config(config) latched on /lotusim/environment; every node rebuilds from it."""
    cfg = config(root_seed=3)
    cfg["wind"]["profile"] = {"model": "log", "roughness_m": 0.001}
    rebuilt = build_checked(__import__("yaml").safe_load(dump_config(cfg))).wind
    pts = np.array([[0.0, 0.0, 50.0], [100.0, 20.0, 0.0]])
    assert np.array_equal(rebuilt.velocity_enu(12.0, pts), build_environment(cfg).wind.velocity_enu(12.0, pts))
    with pytest.raises(ConfigRefused, match="w20_mps"):
        build_checked({"wind": {"speed_mps": 5.0, "turbulence": {"model": "dryden", "w20_mps": 500.0}}})
