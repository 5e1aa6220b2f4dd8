"""Environment configuration errors: every malformed configuration fails at load time with the dotted key,
what was expected and what was found; the same configuration always builds the same environment."""

from __future__ import annotations

import numpy as np
import pytest
import yaml

from lotusim_env.environment import ConfigError, build_environment

BAD_CONFIGS = [
    ({"curent": {}}, r"^curent: unknown key"),
    ({"current": {"model": "vortex"}}, r"^current\.model: expected one of constant, .*got 'vortex'"),
    ({"current": {"model": "constant", "velocity_enu": [1, 2]}}, r"^current\.velocity_enu: expected a list of 3 finite numbers, got \[1, 2\]"),
    ({"current": {"model": "ekman"}}, r"^current\.latitude_deg: missing .*origin\.latitude_deg"),
    ({"current": {"model": "ekman", "latitude_deg": 0.3}}, r"^current\.latitude_deg: Ekman theory needs"),
    (
        {"current": {"model": "ekman", "latitude_deg": 47, "eddy_viscosity_m2s": -1}},
        r"^current\.eddy_viscosity_m2s: expected a number > 0, got -1",
    ),
    (
        {"current": {"model": "ekman", "latitude_deg": 47, "surface_depth_rule": "fixed"}},
        r"^current\.surface_layer_depth_m: missing",
    ),
    ({"current": {"model": "ekman", "latitude_deg": 47, "wind_speed": 3}}, r"^current\.wind_speed: unknown key"),
    (
        {"current": {"model": "gauss_markov", "east": {"mean": 1, "stationary_std": 0.1}}},
        r"^current\.east\.stationary_std: needs mu > 0",
    ),
    ({"current": {"model": "gauss_markov", "east": {"mean": 2, "max": 1}}}, r"^current\.east: expected min <= mean"),
    ({"current": {"model": "gauss_markov", "mode": "polar", "east": {}}}, r"^current\.east: not a process of mode"),
    ({"current": {"model": "sum", "terms": []}}, r"^current\.terms: expected a non-empty list"),
    (
        {"current": {"model": "sum", "terms": [{"model": "constant"}, {"model": "ekman", "latitude_deg": "n"}]}},
        r"^current\.terms\[1\]\.latitude_deg: expected a number, got 'n'",
    ),
    (
        {"current": {"model": "stratified", "layers": [{"depth_m": 0}, {"depth": 5}]}},
        r"^current\.layers\[1\]\.depth: unknown key",
    ),
    ({"wind": {"speed_mps": -2}}, r"^wind\.speed_mps: expected a number >= 0"),
    ({"wind": {"speed_mps": 2, "velocity_enu": [1, 0]}}, r"^wind\.velocity_enu: give velocity_enu or"),
    ({"origin": {"latitude_deg": 95, "longitude_deg": 0}}, r"^origin\.latitude_deg: expected a number <= 90"),
    ({"seed": -1}, r"^seed: expected an integer >= 0"),
    ({"water_density_kgm3": "salty"}, r"^water_density_kgm3: expected a number, got 'salty'"),
    ([1, 2], r"^environment: expected a mapping"),
]


@pytest.mark.parametrize(("config", "message"), BAD_CONFIGS)
def test_errors_name_the_key_and_what_was_expected(config, message):
    with pytest.raises(ConfigError, match=message):
        build_environment(config)


def test_yaml_round_trip_builds_the_identical_environment():
    """What current_server publishes latched (YAML) rebuilds the same field in another node."""
    config = {
        "seed": 12,
        "origin": {"latitude_deg": -35.0, "longitude_deg": 150.0},
        "wind": {"speed_mps": 12.0, "from_deg": 135.0, "gust_std_mps": 1.5},
        "bathymetry": {"model": "flat", "depth_m": 120.0},
        "current": {
            "model": "sum",
            "terms": [
                {"model": "ekman", "geostrophic_enu": [0.05, 0.0]},
                {"model": "gauss_markov", "north": {"mean": 0.0, "mu": 0.001, "stationary_std": 0.05}},
            ],
        },
    }
    a = build_environment(config)
    b = build_environment(yaml.safe_load(yaml.safe_dump(config)))
    points = np.column_stack([np.linspace(-500, 500, 30), np.linspace(0, 900, 30), -np.linspace(0, 130, 30)])
    for t in (0.0, 77.7, 3600.0):
        assert np.array_equal(a.current.velocity_enu(t, points), b.current.velocity_enu(t, points))
        assert np.array_equal(a.wind.velocity_enu(t, points), b.wind.velocity_enu(t, points))
    assert a.water_density_kgm3 == 1026.0 and a.air_density_kgm3 == 1.225
    assert np.all(a.current.velocity_enu(0.0, np.array([[0.0, 0.0, -120.0], [0.0, 0.0, -500.0]])) == 0.0)


@pytest.mark.parametrize(
    ("section", "name", "content"),
    [
        ("current", "junk.csv", 'a,b\n1\n"unclosed\n'),
        ("current", "junk.nc", "not netcdf"),
        ("bathymetry", "junk.png", "not an image"),
        ("bathymetry", "junk.npy", "not numpy"),
    ],
)
def test_unreadable_data_files_are_config_errors_naming_the_key(tmp_path, section, name, content):
    (tmp_path / name).write_text(content)
    model = "gridded" if section == "current" else "grid"
    with pytest.raises(ConfigError, match=rf"^{section}\.file: cannot read .*{name}"):
        build_environment({section: {"model": model, "file": name}}, base_dir=tmp_path)
