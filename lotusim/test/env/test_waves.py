"""Waves (lotusim_env.waves): spectra and spreading against their closed forms, dispersion, sampled records that
recover Hs and Tp, the regular wave against Airy's solution written out here, depth decay, seeds, the ramp."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.integrate import quad
from scipy.optimize import brentq
from scipy.signal import welch

from lotusim_env.config import (
    ConfigError,
    ConfigRefused,
    apply_parameters,
    build_checked,
    config_leaves,
    derive_seed,
    dump_config,
    leaf_to_parameter_value,
    parse_environment_yaml,
)
from lotusim_env.environment import build_environment
from lotusim_env.waves import (
    SeaState,
    WaveField,
    build_waves,
    cos2s_spreading,
    elevation_m,
    irregular_sea,
    jonswap_spectrum,
    pierson_moskowitz_spectrum,
    ramp_factor,
    regular_wave,
    significant_height_m,
    wave_sample,
    wavenumber_radpm,
)

G = 9.81
RHO = 1026.0
# LOTUSim's ship sea: JONSWAP Hs 1.5 m, Tp 3 s, γ 1.2, cos-2s s = 2
# [Buche2025, code: assets/models/dtmb_hull/dtmb-xdyn-faster.yml]
HS, TP, GAMMA = 1.5, 3.0, 1.2


def record_at_origin(sea: WaveField | object, t_s: np.ndarray) -> np.ndarray:
    """η(0, 0, t) for a time series (one evaluation per sample, through the public function)."""
    c = sea.components if isinstance(sea, WaveField) else sea
    return np.array([elevation_m(c, float(t), np.zeros((1, 3)))[0] for t in t_s])


def record_fast(c, t_s: np.ndarray, points_en: np.ndarray) -> np.ndarray:
    """η (T x P) at points over time, the same sum evaluated with time as the batch axis (for long records)."""
    k_en = c.wavenumber_radpm[:, None] * c.direction_en
    out = np.empty((t_s.size, points_en.shape[0]))
    for j, p in enumerate(points_en):
        out[:, j] = np.cos(np.outer(t_s, -c.omega_radps) + (k_en @ p + c.phase_rad)) @ c.amplitude_m
    return out


# ------------------------------------------------------------------------------------------- spectra, spreading
@pytest.mark.parametrize("gamma", [1.0, 1.2, 3.3, 7.0])
def test_jonswap_integrates_to_hs_and_peaks_at_tp(gamma):
    m0, _ = quad(lambda w: jonswap_spectrum(w, HS, TP, gamma), 0.05, 60.0, limit=400, points=[2 * math.pi / TP])
    assert 4.0 * math.sqrt(m0) == pytest.approx(HS, rel=0.01)  # Goda's (1 − 0.287 ln γ) normalisation
    omega = np.linspace(0.5, 6.0, 55001)
    assert omega[np.argmax(jonswap_spectrum(omega, HS, TP, gamma))] == pytest.approx(2 * math.pi / TP, abs=1e-4)


def test_pierson_moskowitz_is_the_closed_form_and_jonswap_peak_is_enhanced_by_gamma():
    omega = np.linspace(0.3, 8.0, 200)
    wp = 2 * math.pi / TP
    pm = 5.0 / 16.0 * HS**2 * wp**4 / omega**5 * np.exp(-1.25 * (wp / omega) ** 4)
    np.testing.assert_allclose(pierson_moskowitz_spectrum(omega, HS, TP), pm, rtol=1e-12)
    ratio = jonswap_spectrum(np.array([wp]), HS, TP, 3.3) / pierson_moskowitz_spectrum(np.array([wp]), HS, TP)
    assert ratio[0] == pytest.approx(3.3 * (1 - 0.287 * math.log(3.3)), rel=1e-12)


@pytest.mark.parametrize("s", [1.0, 2.0, 7.5, 30.0])
def test_cos2s_spreading_integrates_to_one_around_the_mean_direction(s):
    psi0 = 0.7
    total, _ = quad(lambda p: cos2s_spreading(np.array([p]), psi0, s)[0], psi0 - math.pi, psi0 + math.pi, limit=200)
    assert total == pytest.approx(1.0, rel=1e-8)
    psi = psi0 + np.linspace(-math.pi, math.pi, 3601)
    assert psi[np.argmax(cos2s_spreading(psi, psi0, s))] == pytest.approx(psi0, abs=1e-9)
    assert cos2s_spreading(np.array([psi0 + math.pi]), psi0, s)[0] == pytest.approx(0.0, abs=1e-12)


def test_dispersion_deep_finite_and_shallow():
    omega = np.array([0.2, 0.5, 1.0, 2.0, 5.0])
    np.testing.assert_allclose(wavenumber_radpm(omega), omega**2 / G, rtol=1e-15)
    for h in (2.0, 10.0, 50.0, 500.0):
        k = wavenumber_radpm(omega, h)
        np.testing.assert_allclose(G * k * np.tanh(k * h), omega**2, rtol=1e-12)
        for w, kk in zip(omega, k, strict=True):
            root = brentq(lambda x, w=w, h=h: G * x * math.tanh(x * h) - w**2, 1e-9, 100.0)
            assert kk == pytest.approx(root, rel=1e-10)
    # long waves in shallow water: c = √(gh), k → ω/√(gh) (kh = 0.045 here)
    assert wavenumber_radpm(np.array([0.1]), 2.0)[0] == pytest.approx(0.1 / math.sqrt(G * 2.0), rel=1e-3)


# ----------------------------------------------------------------------------------------- sampled records
def test_long_crested_record_recovers_hs_and_its_welch_spectrum_peaks_at_tp():
    sea = irregular_sea(SeaState(HS, TP, 3.3, frequencies=256, directions=1, jitter=True, ramp_time_s=0.0), 11)
    dt = 0.1
    t = np.arange(0.0, 3600.0, dt)
    eta = record_fast(sea, t, np.zeros((1, 2)))[:, 0]
    # the evaluation function itself on a stretch of the record
    np.testing.assert_allclose(record_at_origin(sea, t[:50]), eta[:50], atol=1e-12)
    assert 4.0 * eta.std() == pytest.approx(HS, rel=0.05)
    f, psd = welch(eta, fs=1.0 / dt, nperseg=512)
    assert abs(f[np.argmax(psd)] - 1.0 / TP) <= f[1] - f[0]  # within one Welch bin (0.0195 Hz)
    # and the level at the peak is the one-sided spectrum in Hz, S_f(fp) = 2π S_ω(ωp), within 15 %
    expected = 2 * math.pi * jonswap_spectrum(np.array([2 * math.pi / TP]), HS, TP, 3.3)[0]
    assert psd.max() == pytest.approx(expected, rel=0.15)


def test_lotusim_fast_setting_recovers_hs_over_space():
    """8 directions x 16 frequencies over 0.1–10 rad/s, LOTUSim's own sea: at one point, components of one
    frequency add with random phases, so the record's variance is averaged over 300 points."""
    config = {"model": "jonswap", "significant_height_m": HS, "peak_period_s": TP, "gamma": GAMMA,
              "spreading_s": 2, "frequencies": 16, "directions": 8, "omega_min_radps": 0.1, "omega_max_radps": 10.0,
              "ramp_time_s": 0.0}  # fmt: skip
    field = build_waves(config, "waves", derive_seed(2, "waves"))
    assert field.components.size == 128
    points = np.random.default_rng(0).uniform(-2000.0, 2000.0, (300, 2))
    t = np.arange(0.0, 2 * math.pi / (9.9 / 16), 0.05)  # one repeat period 2π/Δω of the equally spaced sea
    eta = record_fast(field.components, t, points)
    assert 4.0 * math.sqrt(np.mean(eta**2)) == pytest.approx(HS, rel=0.05)


def test_direction_spread_is_centred_on_where_the_waves_go():
    sea = irregular_sea(SeaState(HS, TP, GAMMA, from_deg=30.0, directions=24), 1)
    energy = sea.amplitude_m**2
    mean = energy @ sea.direction_en / energy.sum()
    towards = math.radians(210.0)  # from 30° → towards 210°: (sin, cos) of the bearing
    np.testing.assert_allclose(mean / np.linalg.norm(mean), [math.sin(towards), math.cos(towards)], atol=1e-12)
    assert significant_height_m(sea) == pytest.approx(HS, rel=0.01)


# ------------------------------------------------------------------------------------------------- seeds
def test_same_seed_same_sea_other_seed_other_sea():
    config = {"model": "jonswap", "significant_height_m": 2.0, "peak_period_s": 7.0, "jitter": True}
    points = np.random.default_rng(3).uniform(-300.0, 300.0, (50, 3))
    a = build_waves(config, "waves", derive_seed(5, "waves")).sample(42.0, points)
    b = build_waves(config, "waves", derive_seed(5, "waves")).sample(42.0, points)
    c = build_waves(config, "waves", derive_seed(6, "waves")).sample(42.0, points)
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x, y)
    assert np.sqrt(np.mean((a.elevation_m - c.elevation_m) ** 2)) > 0.2  # an other sea of Hs 2 m (σ 0.5 m)


# ------------------------------------------------------------------------------------------------- Airy
def test_regular_deep_water_wave_is_airy():
    """H 2 m, T 8 s, coming from the west (travelling east): η = a cos(kx − ωt), u = aω e^{kz} cos(kx − ωt),
    w = aω e^{kz} sin(kx − ωt), p = ρ g a e^{kz} cos(kx − ωt), k = ω²/g."""
    a, omega = 1.0, 2 * math.pi / 8.0
    k = omega**2 / G
    field = WaveField(regular_wave(2.0, 8.0, from_deg=270.0), RHO)
    rng = np.random.default_rng(1)
    points = np.column_stack([rng.uniform(-200, 200, 40), rng.uniform(-200, 200, 40), -rng.uniform(1.5, 40, 40)])
    for t in (0.0, 3.3, 100.0):
        phase = k * points[:, 0] - omega * t
        decay = np.exp(k * points[:, 2])
        got = field.sample(t, points)
        np.testing.assert_allclose(got.elevation_m, a * np.cos(phase), atol=1e-12)
        np.testing.assert_allclose(got.velocity_enu[:, 0], a * omega * decay * np.cos(phase), atol=1e-12)
        np.testing.assert_allclose(got.velocity_enu[:, 1], 0.0, atol=1e-12)
        np.testing.assert_allclose(got.velocity_enu[:, 2], a * omega * decay * np.sin(phase), atol=1e-12)
        np.testing.assert_allclose(got.dynamic_pressure_pa, RHO * G * a * decay * np.cos(phase), rtol=1e-10)


def test_regular_finite_depth_wave_is_airy():
    """h 10 m, T 6 s: u = aω cosh k(z+h)/sinh kh cos, w = aω sinh k(z+h)/sinh kh sin, p = ρga cosh k(z+h)/cosh kh cos;
    coming from the north (travelling south, −y)."""
    a, h, omega = 0.5, 10.0, 2 * math.pi / 6.0
    k = brentq(lambda x: G * x * math.tanh(x * h) - omega**2, 1e-6, 10.0)
    field = WaveField(regular_wave(1.0, 6.0, from_deg=0.0, depth_m=h), RHO)
    y = np.linspace(-50.0, 50.0, 21)
    z = np.linspace(-10.0, -0.6, 21)
    points = np.column_stack([np.full(21, 7.0), y, z])
    t = 12.3
    phase = -k * y - omega * t
    got = field.sample(t, points)
    np.testing.assert_allclose(got.elevation_m, a * np.cos(phase), atol=1e-12)
    u = a * omega * np.cosh(k * (z + h)) / np.sinh(k * h) * np.cos(phase)
    np.testing.assert_allclose(got.velocity_enu[:, 1], -u, atol=1e-12)  # along −y
    np.testing.assert_allclose(got.velocity_enu[:, 0], 0.0, atol=1e-12)
    w = a * omega * np.sinh(k * (z + h)) / np.sinh(k * h) * np.sin(phase)
    np.testing.assert_allclose(got.velocity_enu[:, 2], w, atol=1e-12)
    p = RHO * G * a * np.cosh(k * (z + h)) / np.cosh(k * h) * np.cos(phase)
    np.testing.assert_allclose(got.dynamic_pressure_pa, p, rtol=1e-9, atol=1e-9)
    assert got.velocity_enu[0, 2] == pytest.approx(0.0, abs=1e-12)  # no flow through the sea floor


def test_orbital_speed_decays_as_exp_kz():
    """Deep water orbits are circles of radius a e^{kz}: the speed is aω e^{kz} at every phase."""
    period = 6.0
    omega = 2 * math.pi / period
    k = omega**2 / G
    wavelength = 2 * math.pi / k
    field = WaveField(regular_wave(1.0, period, from_deg=123.0), RHO)
    z = -np.array([0.0, wavelength / 8, wavelength / 4, wavelength / 2, wavelength])
    z[0] = -1e-9  # just under the mean level
    xy = np.random.default_rng(2).uniform(-100.0, 100.0, (8, 2))
    for t in (1.0, 4.7):
        for x, y in xy:
            eta = field.elevation_m(t, np.array([[x, y, 0.0]]))[0]
            points = np.column_stack([np.full(5, x), np.full(5, y), np.minimum(z, eta - 1e-6)])
            speed = np.linalg.norm(field.velocity_enu(t, points), axis=1)
            np.testing.assert_allclose(speed, 0.5 * omega * np.exp(k * points[:, 2]), rtol=1e-9)
    assert math.exp(-math.pi) == pytest.approx(0.0432, abs=1e-4)  # half a wavelength down: 4 % of the surface speed


def test_points_above_the_surface_are_in_the_air():
    field = WaveField(regular_wave(2.0, 8.0, from_deg=270.0), RHO)
    points = np.array([[0.0, 0.0, 1.5], [0.0, 0.0, 0.5], [0.0, 0.0, -0.5]])  # η(0, 0, 0) = 1 m (a crest)
    got = field.sample(0.0, points)
    assert got.elevation_m == pytest.approx([1.0, 1.0, 1.0])
    np.testing.assert_array_equal(got.velocity_enu[0], 0.0)
    assert got.dynamic_pressure_pa[0] == 0.0
    # under the crest but above z = 0: the value at z = 0 (ρ g a)
    assert got.dynamic_pressure_pa[1] == pytest.approx(RHO * G * 1.0)


def test_crests_travel_at_the_phase_speed_towards_where_the_waves_go():
    period, from_deg = 10.0, 60.0  # travelling towards 240°
    omega = 2 * math.pi / period
    c = G / omega  # deep-water phase speed ω/k
    field = WaveField(regular_wave(1.0, period, from_deg=from_deg), RHO)
    heading = math.radians(from_deg + 180.0)
    for dt in (1.0, 7.5):
        moved = c * dt * np.array([math.sin(heading), math.cos(heading), 0.0])
        p = np.array([[10.0, -4.0, 0.0]])
        assert field.elevation_m(3.0 + dt, p + moved)[0] == pytest.approx(field.elevation_m(3.0, p)[0], abs=1e-10)


def test_float32_is_float64_within_its_precision():
    sea = irregular_sea(SeaState(2.0, 7.0, 3.3), 4)
    points = np.random.default_rng(5).uniform(-5000.0, 5000.0, (200, 3))
    points[:, 2] = -np.abs(points[:, 2]) / 500.0
    a = wave_sample(sea, 3600.0, points)
    b = wave_sample(sea.astype(np.float32), 3600.0, points)
    assert b.elevation_m.dtype == np.float32 and b.velocity_enu.dtype == np.float32
    np.testing.assert_allclose(b.elevation_m, a.elevation_m, atol=2e-3)  # m, for a sea of Hs 2 m
    np.testing.assert_allclose(b.velocity_enu, a.velocity_enu, atol=2e-3)


# ------------------------------------------------------------------------------------------------- the ramp
def test_start_up_ramp():
    tau = 5.0
    ramped = WaveField(regular_wave(2.0, 8.0, ramp_time_s=tau), RHO)
    full = WaveField(regular_wave(2.0, 8.0, ramp_time_s=0.0), RHO)
    p = np.array([[3.0, 1.0, -2.0]])
    assert ramped.elevation_m(0.0, p)[0] == 0.0 and ramped.elevation_m(-1.0, p)[0] == 0.0
    for t in (1.0, tau, 3 * tau):
        expected = (1 - math.exp(-t / tau)) * full.sample(t, p).dynamic_pressure_pa[0]
        assert ramped.sample(t, p).dynamic_pressure_pa[0] == pytest.approx(expected, rel=1e-12)
    assert ramp_factor(tau, tau) == pytest.approx(1 - math.exp(-1.0))
    assert ramp_factor(50 * tau, tau) == pytest.approx(1.0, abs=1e-12)
    assert ramp_factor(0.5, 0.0) == 1.0


def test_calm_sea_is_zero():
    field = WaveField()
    got = field.sample(10.0, np.ones((4, 3)))
    assert got.elevation_m.shape == (4,) and got.velocity_enu.shape == (4, 3)
    assert not np.any(got.elevation_m) and not np.any(got.velocity_enu) and not np.any(got.dynamic_pressure_pa)


# ------------------------------------------------------------------------------------------ configuration
BAD = [
    ({"model": "tsunami"}, "waves.model", "expected one of"),
    ({"significant_height_m": 2.0}, "waves.model", "missing"),
    ({"model": "none", "significant_height_m": 2.0}, "waves.significant_height_m", "unknown key"),
    ({"model": "jonswap", "peak_period_s": 8.0}, "waves.significant_height_m", "missing"),
    ({"model": "jonswap", "significant_height_m": -1.0, "peak_period_s": 8.0}, "waves.significant_height_m", "> 0"),
    ({"model": "jonswap", "significant_height_m": 1.0, "peak_period_s": 8.0, "gamma": 0.5}, "waves.gamma", ">= 1"),
    ({"model": "pierson_moskowitz", "significant_height_m": 1, "peak_period_s": 8, "gamma": 2}, "waves.gamma", "γ = 1"),
    ({"model": "jonswap", "significant_height_m": 1.0, "peak_period_s": 8.0, "frequencies": 0}, "waves.frequencies",
     "integer >= 1"),
    ({"model": "jonswap", "significant_height_m": 1.0, "peak_period_s": 8.0, "directions": 1000}, "waves.directions",
     "<= 360"),
    ({"model": "jonswap", "significant_height_m": 1.0, "peak_period_s": 8.0, "omega_min_radps": 2.0},
     "waves.peak_period_s", "outside the discretised band"),
    ({"model": "jonswap", "significant_height_m": 2.5, "peak_period_s": 8.0, "omega_min_radps": 0.1,
      "omega_max_radps": 10.0}, "waves.frequencies", "peak period of 6.11 s for 8 s"),  # LOTUSim's band at Tp 8 s
    ({"model": "jonswap", "significant_height_m": 2.5, "peak_period_s": 8.0, "omega_min_radps": 0.75,
      "omega_max_radps": 1.0}, "waves.frequencies", "significant height 4√m0"),
    ({"model": "jonswap", "significant_height_m": 1.0, "peak_period_s": 8.0, "jitter": "yes"}, "waves.jitter",
     "true or false"),
    ({"model": "regular", "height_m": 1.0}, "waves.period_s", "missing"),
    ({"model": "regular", "height_m": 1.0, "period_s": 5.0, "depth_m": 0.0}, "waves.depth_m", "> 0"),
    ({"model": "regular", "height_m": 1.0, "period_s": 5.0, "gamma": 2.0}, "waves.gamma", "unknown key"),
    ({"model": "regular", "height_m": 1.0, "period_s": 5.0, "ramp_time_s": -1}, "waves.ramp_time_s", ">= 0"),
]  # fmt: skip


@pytest.mark.parametrize(("config", "key", "reason"), BAD, ids=[f"{b[1]}-{i}" for i, b in enumerate(BAD)])
def test_bad_configuration_names_key_and_reason(config, key, reason):
    with pytest.raises(ConfigError) as info:
        build_waves(config, "waves", derive_seed(0, "waves"))
    assert info.value.key == key
    assert reason in info.value.reason


# ------------------------------------------------------------------------------- in the environment function
WAVES = {"model": "jonswap", "significant_height_m": 1.5, "peak_period_s": 3.0, "gamma": 1.2, "from_deg": 250.0}


def test_environment_carries_the_sea_and_every_node_rebuilds_the_same_one():
    """current_server publishes the configuration as YAML; a node that rebuilds the environment from that text,
    or from the typed ROS parameters of its leaves, evaluates the same sea bit for bit."""
    config = {"seed": 9, "wind": {"speed_mps": 5.0, "from_deg": 250.0}, "waves": dict(WAVES, frequencies=32)}
    env = build_environment(config)
    assert env.waves.model == "jonswap" and env.waves.components.size == 32 * 8
    points = np.random.default_rng(8).uniform(-500.0, 500.0, (64, 3))
    points[:, 2] = -np.abs(points[:, 2]) / 50.0
    expected = env.waves.sample(17.0, points)
    published = build_environment(parse_environment_yaml(dump_config(config)))
    leaves = {path: leaf_to_parameter_value(path, value) for path, value in config_leaves(config)}
    assert leaves["waves.frequencies"] == 32 and isinstance(leaves["waves.frequencies"], int)
    from_parameters = build_checked(apply_parameters({}, leaves, set(leaves)))
    for rebuilt in (published, from_parameters):
        for x, y in zip(expected, rebuilt.waves.sample(17.0, points), strict=True):
            np.testing.assert_array_equal(x, y)
    # the sea is seeded by the root seed (or waves.seed), under its own stream
    other = build_environment(dict(config, seed=10)).waves.elevation_m(17.0, points)
    assert not np.allclose(other, expected.elevation_m)
    own = build_environment(dict(config, seed=10, waves=dict(config["waves"], seed=9))).waves
    np.testing.assert_array_equal(own.elevation_m(17.0, points), expected.elevation_m)


def test_no_waves_key_is_a_calm_sea_and_changing_the_model_drops_the_old_keys():
    assert build_environment({}).waves.calm
    assert build_environment({"waves": {"model": "none"}}).waves.calm
    config = {"waves": dict(WAVES)}
    regular = apply_parameters(config, {"waves.model": "regular", "waves.height_m": 1.0, "waves.period_s": 6.0},
                               {"waves.model", "waves.height_m", "waves.period_s"})  # fmt: skip
    assert regular["waves"] == {"model": "regular", "height_m": 1.0, "period_s": 6.0}
    assert build_checked(regular).waves.components.size == 1


def test_out_of_range_leaf_and_bad_waves_are_refused_with_their_key():
    with pytest.raises(ConfigRefused, match=r"waves.significant_height_m: expected a value in \[0.0, 30.0\]"):
        build_checked({"waves": dict(WAVES, significant_height_m=45.0)})
    with pytest.raises(ConfigError) as info:
        build_environment({"waves": dict(WAVES, directions=0)})
    assert info.value.key == "waves.directions" and "integer >= 1" in info.value.reason
