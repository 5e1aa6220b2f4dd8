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
    (
        {"current": {"model": "constant", "velocity_enu": [1, 2]}},
        r"^current\.velocity_enu: expected a list of 3 finite numbers, got \[1, 2\]",
    ),
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


# --- the configuration as current_server holds it (lotusim_env.config, ROS-free) ------------------------------
def test_config_leaves_are_the_typed_parameters_with_their_ros_types():
    from lotusim_env.config import DEFAULT_ENVIRONMENT, config_leaves, leaf_to_parameter_value

    config = {
        "seed": 3,
        "wind": {"speed_mps": 5, "from_deg": 90.0},
        "current": {"model": "sum", "terms": [{"model": "constant"}], "velocity_enu": [1, 0, 0]},
    }
    leaves = dict(config_leaves(config))
    # the list of terms is not a leaf (editable through environment_yaml only)
    assert leaves == {
        "seed": 3,
        "wind.speed_mps": 5,
        "wind.from_deg": 90.0,
        "current.model": "sum",
        "current.velocity_enu": [1, 0, 0],
    }
    typed = {path: leaf_to_parameter_value(path, v) for path, v in leaves.items()}
    assert typed["seed"] == 3 and type(typed["seed"]) is int  # seed is an integer parameter
    assert type(typed["wind.speed_mps"]) is float and typed["current.velocity_enu"] == [1.0, 0.0, 0.0]
    assert {p for p, _ in config_leaves(DEFAULT_ENVIRONMENT)} == {
        "seed",
        "wind.speed_mps",
        "wind.from_deg",
        "current.model",
        "current.velocity_enu",
    }


def test_apply_parameters_yaml_first_then_leaves_and_a_new_model_resets_its_section():
    from lotusim_env.config import apply_parameters

    old = {"seed": 1, "current": {"model": "ekman", "latitude_deg": 47.0}}
    leaves = {"seed", "current.model", "current.latitude_deg", "current.velocity_enu"}
    new = apply_parameters(old, {"current.model": "constant", "current.velocity_enu": (0.5, 0.0, 0.0)}, leaves)
    assert new == {"seed": 1, "current": {"model": "constant", "velocity_enu": [0.5, 0.0, 0.0]}}
    assert old == {"seed": 1, "current": {"model": "ekman", "latitude_deg": 47.0}}  # not modified
    same_model = apply_parameters(old, {"current.model": "ekman", "current.latitude_deg": 10.0}, leaves)
    assert same_model["current"] == {"model": "ekman", "latitude_deg": 10.0}
    yaml_then_leaf = apply_parameters(old, {"seed": 9, "environment_yaml": "{seed: 2, wind: {speed_mps: 1}}"}, leaves)
    assert yaml_then_leaf == {"seed": 9, "wind": {"speed_mps": 1}}
    assert apply_parameters(old, {"unrelated": 1}, leaves) == old


def test_refused_configurations_say_which_key_and_why():
    from lotusim_env.config import ConfigError, ConfigRefused, build_checked, parse_environment_yaml, set_path

    with pytest.raises(ConfigRefused, match=r"^environment_yaml: expected a string of YAML, got int 3"):
        parse_environment_yaml(3)
    with pytest.raises(ConfigRefused, match=r"^environment_yaml: not valid YAML"):
        parse_environment_yaml("{current: [")
    with pytest.raises(ConfigRefused, match=r"^environment_yaml: expected a mapping .*got list"):
        parse_environment_yaml("[1, 2]")
    assert parse_environment_yaml("") == {}
    with pytest.raises(ConfigRefused, match=r"^current\.model\.x: model is not a section"):
        set_path({"current": {"model": "constant"}}, "current.model.x", 1)
    with pytest.raises(ConfigRefused, match=r"^wind\.speed_mps: expected a value in \[0\.0, 100\.0\], got 150"):
        build_checked({"wind": {"speed_mps": 150}})
    with pytest.raises(ConfigRefused) as info:
        build_checked({"current": {"model": "vortex"}})
    assert isinstance(info.value, ConfigError) and info.value.key == "current.model"
    assert info.value.reason.startswith("expected one of constant")
    env = build_checked({"current": {"model": "constant", "velocity_enu": [0.2, 0.0, 0.0]}})
    assert env.current.velocity_enu(0.0, np.zeros((1, 3))).tolist() == [[0.2, 0.0, 0.0]]


def test_dump_config_round_trips_and_keeps_key_order():
    from lotusim_env.config import dump_config, parse_environment_yaml, plain_value

    config = {"seed": 4, "current": {"model": "constant", "velocity_enu": [0.1, 0.0, 0.0]}, "wind": {"speed_mps": 2}}
    text = dump_config(config)
    assert text.splitlines()[0] == "seed: 4" and parse_environment_yaml(text) == config
    assert plain_value(np.array([1.5, 2.0])) == [1.5, 2.0] and plain_value("x") == "x"
