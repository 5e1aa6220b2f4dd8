"""The image-forming sensor models without ROS: radar PSF and strength law, sonar Eqs. 2–6, camera Eq. 1.

Expected values come from the formulas (the radar equation, OceanSim's equations [Song2025], flat-seabed
geometry), evaluated here with literal numbers, never from the models under test."""

from __future__ import annotations

import math

import numpy as np
import pytest

from lotusim_sensors import camera, radar, sonar

# ------------------------------------------------------------------------------------------------------ radar
FINE = radar.RadarGeometry(n_azimuth=1440, n_range=1000, max_range_m=1000.0, beamwidth_rad=math.radians(3.0),
                           pulse_length_s=50e-9, ppi_size_px=1000)  # fmt: skip


def _point_targets(g: radar.RadarGeometry, ranges_m: list[float], bearing_bin: int = 0) -> np.ndarray:
    """(1, n_az, n_range) PSF-spread power of unit point scatterers (ρ = 1, normal incidence) at these ranges."""
    r = np.array(ranges_m)
    power = radar.return_power(r, np.ones_like(r), np.ones_like(r))
    polar = radar.bin_returns(g, 1, np.zeros(len(r), int), np.full(len(r), bearing_bin), r, power)
    return radar.apply_psf(g, polar)


@pytest.mark.parametrize("range_m", [200.0, 400.0, 800.0])
def test_radar_blob_cross_range_width_grows_linearly_with_range(range_m):
    """A point target's blob in the PPI: its cross-range standard deviation is r θ_B / 2.3548 (the PSF's
    angular FWHM θ_B = 3° times the range), its along-range one (c τ / 2) / 2.3548 = 3.18 m at every range."""
    image = radar.ppi(FINE, _point_targets(FINE, [range_m]))[0]
    s = FINE.ppi_pixel_m
    centre = (np.arange(FINE.ppi_size_px) + 0.5 - FINE.ppi_size_px / 2.0) * s
    forward, starboard = -centre[:, None], centre[None, :]
    w = image / image.sum()
    sigma_cross = math.sqrt((w * starboard**2).sum())
    mean_fwd = (w * forward).sum()
    sigma_along = math.sqrt((w * (forward - mean_fwd) ** 2).sum())
    expected_cross = range_m * math.radians(3.0) / 2.3548  # (+ the 2 m pixels' own variance s²/12)
    assert sigma_cross == pytest.approx(math.hypot(expected_cross, s / math.sqrt(12.0)), rel=0.05)
    expected_along = 299_792_458.0 * 50e-9 / 2.0 / 2.3548  # 3.18 m
    assert sigma_along == pytest.approx(math.hypot(expected_along, s / math.sqrt(12.0)), rel=0.08)
    assert mean_fwd == pytest.approx(range_m + 0.5, abs=s)  # the blob sits on the target's range bin


def test_radar_strength_falls_as_r_to_the_fourth_and_log_gain():
    """Peaks of unit scatterers at 100 m and 400 m: power ratio 4⁴ = 256; displayed 40 log10(4) = 24.08 dB apart."""
    g = FINE
    near = _point_targets(g, [100.0])[0].max()
    far = _point_targets(g, [400.0])[0].max()
    assert near / far == pytest.approx(256.0, rel=1e-9)
    i_near, i_far = radar.log_gain(np.array([near, far]), gain_db=160.0, dynamic_range_db=80.0)
    assert i_near - i_far == pytest.approx(24.0824 / 80.0, abs=1e-4)


def test_radar_background_is_zero_without_clutter_and_clutter_follows_constant_gamma():
    g = radar.RadarGeometry(360, 500, 1500.0, math.radians(1.8), 50e-9, 256)
    polar = _point_targets(g, [300.0, 900.0], bearing_bin=90)[0]
    image = radar.log_gain(polar, 140.0, 60.0)
    far_rows = np.r_[0:60, 120:360]  # > 4 sigma (of 0.76 bins) away from bearing bin 90
    assert not image[far_rows].any()
    assert not radar.sea_clutter(g, radar.clutter_mean_power(g, 0.0, 10.0, 0.01), np.random.default_rng(1)).any()
    # Hs = 2 m, antenna 10 m: mean clutter per range bin = γ Hs sin(atan(h/r)) r θ_B (c τ / 2) / r⁴
    mean = radar.clutter_mean_power(g, 2.0, 10.0, 0.01)
    r = (np.arange(500) + 0.5) * 3.0
    expected = 0.01 * 2.0 * np.sin(np.arctan(10.0 / r)) * r * math.radians(1.8) * 7.4948 / r**4
    assert np.allclose(mean, expected, rtol=1e-4)
    clutter = radar.sea_clutter(g, mean, np.random.default_rng(3))
    assert clutter.mean(axis=0)[50:60] == pytest.approx(expected[50:60], rel=0.2)  # 360 exponential draws per bin
    again = radar.sea_clutter(g, mean, np.random.default_rng(3))
    assert np.array_equal(clutter, again)


def test_radar_psf_per_hit_equals_the_filtered_grid():
    """spread_returns (each hit's kernels added around it) = the whole grid binned then filtered by
    scipy.ndimage.gaussian_filter1d (wrap in azimuth, zeros past the range ends), 3 radars, hits at the seams."""
    g = radar.RadarGeometry(360, 200, 1000.0, math.radians(1.8), 80e-9, 64)
    rng = np.random.default_rng(4)
    n = 500
    which, az = rng.integers(0, 3, n), rng.integers(0, 360, n)
    r = np.concatenate([rng.uniform(0.0, 1100.0, n - 4), [0.1, 999.0, np.inf, 3.0]])
    az[-4:] = [0, 359, 5, 358]
    power = rng.uniform(0.0, 1.0, n)
    expected = radar.apply_psf(g, radar.bin_returns(g, 3, which, az, r, power))
    assert np.allclose(radar.spread_returns(g, 3, which, az, r, power), expected, rtol=1e-12, atol=1e-15)


def test_radar_ppi_is_head_up_with_starboard_right():
    g = radar.RadarGeometry(360, 100, 100.0, math.radians(2.0), 10e-9, 200)
    polar = np.zeros((1, 360, 100))
    polar[0, 85:96, 50] = 1.0  # bearings 85-95° (starboard beam), 50-51 m
    image = radar.ppi(g, polar)[0]
    rows, cols = np.nonzero(image)
    assert rows.mean() == pytest.approx(99.5, abs=1.0)  # the centre row
    assert (cols.mean() + 0.5 - 100) * 1.0 == pytest.approx(50.5, abs=1.0)  # 50.5 m to the right
    d = radar.fan_directions(g, np.array([0.0]))[0]  # bow east: bearing 90° points south
    assert np.allclose(d[90], [0.0, -1.0, 0.0], atol=1e-12)


# ------------------------------------------------------------------------------------------------------ sonar
def _sonar_geometry(**kw) -> sonar.SonarGeometry:
    base = dict(n_beams=16, n_bins=400, n_elevation=8, min_range_m=0.5, max_range_m=20.5,
                hfov_rad=math.radians(130.0), vfov_rad=math.radians(20.0), tilt_rad=math.radians(30.0),
                fan_height_px=200)  # fmt: skip
    return sonar.SonarGeometry(**{**base, **kw})


def test_sonar_flat_seabed_intensity_follows_eq_2():
    """Sonar 5 m above a flat seabed (normal up), fan tilted 30° down. Ray (beam azimuth φ, elevation θ) has
    vertical component v_z = −sin t cos θ cos φ + cos t sin θ; it hits at d = h / (−v_z) with −v̂·n̂ = −v_z, so
    Eq. 2 gives A_r (−v_z) e^{−α d}. Noise and normalisation off, mean binning."""
    g = _sonar_geometry()
    h, a_r, alpha, t = 5.0, 0.7, 0.1, math.radians(30.0)
    phi = np.radians(65.0) - (np.arange(16) + 0.5) * np.radians(130.0) / 16
    theta = np.radians(-10.0 + (np.arange(8) + 0.5) * 20.0 / 8)
    vz = -math.sin(t) * np.cos(theta)[None, :] * np.cos(phi)[:, None] + math.cos(t) * np.sin(theta)[None, :]
    dirs, beams = sonar.ray_fan(g)
    assert np.allclose(dirs[:, 2], vz.ravel(), atol=1e-12)
    d = h / -vz.ravel()
    cos_i = -vz.ravel()
    value = sonar.intensity(d, np.full(d.size, a_r), cos_i, alpha)
    image = sonar.bin_hits(g, 1, np.zeros(d.size, int), beams, d, value, mean=True)[0]
    row = np.floor((d - 0.5) / 0.05).astype(int)
    expected = a_r * cos_i * np.exp(-alpha * d)  # Eq. 2
    inside = (d >= 0.5) & (d < 20.5)
    single = [k for k in np.flatnonzero(inside) if np.sum((row == row[k]) & (beams == beams[k]) & inside) == 1]
    assert len(single) > 100
    for k in single:
        assert image[row[k], beams[k]] == pytest.approx(expected[k], rel=1e-12)
    # beam 7 (azimuth 4.0625° to port), elevation +1.25°: v_z = -0.47973, d = 5 / 0.47973 = 10.4226 m
    vz7 = -0.5 * math.cos(math.radians(1.25)) * math.cos(math.radians(4.0625)) + 0.866025 * math.sin(math.radians(1.25))
    assert vz7 == pytest.approx(-0.47973, abs=1e-5)
    assert 0.7 * 0.47973 * math.exp(-0.1 * 10.4226) == pytest.approx(image[int((10.4226 - 0.5) / 0.05), 7], rel=1e-3)
    assert image.sum() > 0 and np.count_nonzero(image) <= d.size


def test_sonar_noise_mean_follows_eqs_3_to_6():
    """E[Ĩ] = 0.5 I + (r²/r_max²)(1 + 0.5 e^{−φ²/σ_φ} σ_sa √(π/2)) (E w_sm = 0, E Rayleigh(σ) = σ √(π/2))."""
    g = _sonar_geometry(n_beams=256, n_bins=512)
    image = np.full((512, 256), 2.0)
    noisy = sonar.speckle(g, image, np.random.default_rng(11), 0.2, 0.05, 0.5)
    r = 0.5 + (np.arange(512) + 0.5) * 20.0 / 512
    phi = np.radians(65.0) - (np.arange(256) + 0.5) * np.radians(130.0) / 256
    expected = 0.5 * 2.0 + (r[:, None] ** 2 / 20.5**2) * (
        1.0 + 0.5 * np.exp(-(phi[None, :] ** 2) / 0.5) * 0.05 * math.sqrt(math.pi / 2.0)
    )
    residual = noisy - expected
    assert abs(residual.mean()) < 3 * 2.0 * 0.2 / math.sqrt(residual.size)
    assert residual.std() == pytest.approx(2.0 * 0.2, rel=0.05)  # dominated by I w_sm, std 0.4
    again = sonar.speckle(g, image, np.random.default_rng(11), 0.2, 0.05, 0.5)
    assert np.array_equal(noisy, again)


def test_sonar_range_normalisation_and_fan_geometry():
    g = _sonar_geometry(tilt_rad=0.0)
    polar = np.zeros((400, 16))
    polar[190, 3] = 4.0  # range bin 190: 10.0-10.05 m; beam 3: azimuth 65 - 3.5 * 8.125 = 36.56° to port
    polar[190, 5] = 1.0
    norm = sonar.normalise_ranges(polar)
    assert norm[190, 3] == 1.0 and norm[190, 5] == 0.25 and not norm[:190].any()
    lit = np.zeros((400, 16))
    lit[180:200, 3] = 1.0  # 9.5-10.5 m (the pixels, 0.1 m, are larger than the 0.05 m bins)
    image = sonar.fan(g, lit)
    rows, cols = np.nonzero(image)
    s = 20.5 / 200
    fwd = (200 - rows - 0.5) * s
    stb = (cols + 0.5 - g.fan_width_px / 2.0) * s
    assert np.hypot(fwd, stb).mean() == pytest.approx(10.0, abs=s)
    assert np.degrees(np.arctan2(-stb, fwd)).mean() == pytest.approx(65.0 - 3.5 * 130.0 / 16, abs=0.3)


# ----------------------------------------------------------------------------------------------------- camera
PAPER_WATER = camera.Water(attenuation_per_m=np.array([0.05, 0.05, 0.05]),
                           backscatter_per_m=np.array([0.05, 0.05, 0.2]),
                           veiling_light=np.array([0.0, 0.31, 0.24]), sky=np.array([0.5, 0.7, 0.9]))  # fmt: skip


@pytest.mark.parametrize("d", [0.5, 2.0, 5.0, 12.0])
def test_camera_colour_follows_eq_1_with_distance(d):
    """OceanSim's GUI defaults (Fig. 4): I_c = J e^{−0.05 d} + B∞ (1 − e^{−β_bs d}), J = (0.9, 0.5, 0.2)."""
    g = camera.CameraGeometry(8, 6, math.radians(60.0), 0.0)
    albedo = np.tile([0.9, 0.5, 0.2], (48, 1))
    image = camera.render(g, albedo, np.full(48, d), PAPER_WATER, submerged=True)
    expected = [0.9 * math.exp(-0.05 * d) + 0.0,
                0.5 * math.exp(-0.05 * d) + 0.31 * (1 - math.exp(-0.05 * d)),
                0.2 * math.exp(-0.05 * d) + 0.24 * (1 - math.exp(-0.2 * d))]  # fmt: skip
    assert np.allclose(image[3, 4], expected, atol=1e-12)


def test_camera_background_and_air():
    g = camera.CameraGeometry(4, 2, math.radians(60.0), 0.0)
    albedo = np.tile([0.9, 0.5, 0.2], (8, 1))
    miss = np.full(8, np.inf)
    assert np.allclose(camera.render(g, albedo, miss, PAPER_WATER, True), [0.0, 0.31, 0.24])
    assert np.allclose(camera.render(g, albedo, miss, PAPER_WATER, False), [0.5, 0.7, 0.9])
    assert np.allclose(camera.render(g, albedo, np.full(8, 3.0), PAPER_WATER, False), [0.9, 0.5, 0.2])


def test_camera_rays_project_back_through_k():
    """Each pixel's ray, expressed in the optical frame (x right = −y_FLU, y down = −z_FLU, z forward = x_FLU),
    projects onto its own pixel centre through K: u = f x / z + cx, v = f y / z + cy."""
    g = camera.CameraGeometry(160, 120, math.radians(90.0), 0.0)
    f = 80.0 / math.tan(math.radians(45.0))
    rays = camera.pixel_rays(g)
    u = f * (-rays[:, 1]) / rays[:, 0] + 79.5
    v = f * (-rays[:, 2]) / rays[:, 0] + 59.5
    vv, uu = np.divmod(np.arange(160 * 120), 160)
    assert np.allclose(u, uu) and np.allclose(v, vv)
    assert g.k_matrix() == pytest.approx([f, 0, 79.5, 0, f, 59.5, 0, 0, 1])
    tilted = camera.pixel_rays(camera.CameraGeometry(3, 3, math.radians(90.0), math.radians(20.0)))
    assert np.allclose(tilted[4], [math.cos(math.radians(20.0)), 0.0, -math.sin(math.radians(20.0))])


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"radar": {"n_azimuth": 0}}, "radar.n_azimuth: expected a whole number >= 1"),
        ({"radar": {"pulse_length_s": 0}}, "radar.pulse_length_s: expected a positive number"),
        ({"sonar": {"hfov_deg": 200}}, "sonar.hfov_deg: expected a field of view below 180 degrees"),
        ({"sonar": {"min_range_m": 50}}, "sonar.max_range_m: expected 0 <= min_range_m < max_range_m"),
        ({"sonar": {"rayleigh_noise_sigma": -1}}, "sonar.rayleigh_noise_sigma: expected a non-negative"),
        ({"camera": {"veiling_light_g": 2}}, "camera.veiling_light_g: expected a colour channel in [0, 1]"),
        ({"camera": {"width_px": 10.5}}, "camera.width_px: expected a whole number >= 1"),
    ],
)
def test_bad_imaging_parameters_are_refused_with_key_and_reason(given, message):
    from lotusim_sensors.suite import parse_suite

    with pytest.raises(ValueError, match=r"^v\." + message.replace("[", r"\[").replace("]", r"\]")):
        parse_suite(given, "v")
