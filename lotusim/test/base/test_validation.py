"""The one configuration validator (lotusim_core.base.validation): every check names where, the key path and what
was expected versus got; scenario, catalogue and environment errors are all ConfigErrors."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from lotusim_core.base.catalogue import CatalogueError
from lotusim_core.base.validation import ConfigError, Validator, join_key, show
from lotusim_core.sim.scenario import ScenarioError
from lotusim_env import config as env_config

V = Validator("scenario.yaml")


def error_of(call) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        call()
    return info.value


def test_message_names_where_key_and_reason_and_skips_empty_parts():
    e = ConfigError("scenario.yaml", "vessels[3].pose.heading_deg", "expected a finite number, got 'abc'")
    assert str(e) == "scenario.yaml: vessels[3].pose.heading_deg: expected a finite number, got 'abc'"
    assert (e.where, e.key, e.reason) == (
        "scenario.yaml",
        "vessels[3].pose.heading_deg",
        "expected a finite number, got 'abc'",
    )
    assert str(ConfigError("", "seed", "bad")) == "seed: bad"
    assert isinstance(e, ValueError)
    again = pickle.loads(pickle.dumps(e))
    assert (again.where, again.key, again.reason, str(again)) == (e.where, e.key, e.reason, str(e))


def test_every_configuration_error_is_a_config_error():
    assert issubclass(ScenarioError, ConfigError) and issubclass(CatalogueError, ConfigError)
    assert issubclass(env_config.ConfigError, ConfigError)
    # the environment models' short form "key: reason" (a mapping in memory, no file)
    e = env_config.ConfigError("current.east: give sigma or stationary_std, not both")
    assert (e.where, e.key, e.reason) == ("", "current.east", "give sigma or stationary_std, not both")
    assert str(e) == "current.east: give sigma or stationary_std, not both"


def test_join_key():
    assert join_key("vessels", 3) == "vessels[3]"
    assert join_key("vessels[3]", "pose") == "vessels[3].pose"
    assert join_key("", "seed") == "seed"


@pytest.mark.parametrize(
    ("value", "bounds", "reason"),
    [
        ("abc", {}, "expected a number, got 'abc'"),
        (True, {}, "expected a number, got True"),
        (float("nan"), {}, "expected a finite number, got nan"),
        (float("inf"), {}, "expected a finite number, got inf"),
        (None, {}, "missing (expected a number)"),
        (-91, {"low": -90.0, "high": 90.0}, "expected a number >= -90, got -91"),
        (90.5, {"low": -90.0, "high": 90.0}, "expected a number <= 90, got 90.5"),
        (0, {"low": 0.0, "strict_low": True}, "expected a number > 0, got 0"),
    ],
)
def test_number_refusals(value, bounds, reason):
    e = error_of(lambda: V.number(value, "pose.heading_deg", **bounds))
    assert str(e) == f"scenario.yaml: pose.heading_deg: {reason}"


def test_number_accepts_ints_floats_and_numpy_scalars_within_bounds():
    assert V.number(3, "k") == 3.0 and isinstance(V.number(3, "k"), float)
    assert V.number(np.float32(0.5), "k") == 0.5 and V.number(np.int64(-2), "k") == -2.0
    assert V.number(-90, "k", low=-90.0) == -90.0  # the bound itself is inside
    assert V.number(1e-300, "k", low=0.0, strict_low=True) == 1e-300
    assert V.positive(2.5, "k") == 2.5
    assert error_of(lambda: V.positive(0.0, "mass_kg")).reason == "expected a positive number, got 0"
    assert error_of(lambda: V.positive(None, "kt")).reason == "missing (expected a positive number)"


def test_integer_boolean_text_choice():
    assert V.integer(np.int32(4), "n", low=1) == 4
    assert error_of(lambda: V.integer(2.0, "n")).reason == "expected an integer, got 2.0"
    assert error_of(lambda: V.integer(True, "n", low=0)).reason == "expected an integer >= 0, got True"
    assert error_of(lambda: V.integer(0, "workers", low=1)).reason == "expected an integer >= 1, got 0"
    assert V.boolean(False, "b") is False
    assert error_of(lambda: V.boolean("yes", "b")).reason == "expected true or false, got 'yes'"
    assert error_of(lambda: V.boolean(1, "b")).reason == "expected true or false, got 1"
    assert V.text(" x ", "t") == " x " and V.text("", "t", allow_empty=True) == ""
    assert error_of(lambda: V.text("  ", "t")).reason == "expected a non-empty string, got '  '"
    assert error_of(lambda: V.text(5, "t")).reason == "expected a string, got int 5"
    assert V.choice("fast", "mode", ("realtime", "fast")) == "fast"
    assert error_of(lambda: V.choice("warp", "mode", ("realtime", "fast"))).reason == (
        "expected one of realtime, fast, got 'warp'"
    )
    assert error_of(lambda: V.choice(["fast"], "mode", ("fast",))).reason == "expected one of fast, got ['fast']"


def test_mapping_required_and_unknown_keys():
    assert V.mapping(None, "physics") == {}
    e = error_of(lambda: V.mapping(None, "surface", none_ok=False))
    assert (e.key, e.reason) == ("surface", "expected a mapping, got NoneType None")
    e = error_of(lambda: V.mapping([1, 2], ""))
    assert (e.key, e.reason) == ("<top level>", "expected a mapping, got list [1, 2]")
    e = error_of(lambda: V.mapping({"b": 1, "a": 2, "z": 3}, "wind", ("speed_mps", "from_deg")))
    assert (e.key, e.reason) == ("wind.a", "unknown key (known keys: speed_mps, from_deg)")  # first in sorted order
    e = error_of(lambda: V.mapping({"x": 1}, "", ("y",), required=("y",)))
    assert (e.key, e.reason) == ("y", "missing required key")
    e = error_of(lambda: V.mapping({"y": 1, "x": 1}, "", ("z",), required=("y",)))
    assert (e.key, e.reason) == ("x", "unknown key (known keys: y, z)")


def test_sequence_and_vector():
    assert V.sequence(None, "fins") == [] and V.sequence([1], "fins") == [1]
    assert error_of(lambda: V.sequence({"a": 1}, "fins")).reason == "expected a list, got dict {'a': 1}"
    assert V.vector([1, 2.5, np.float64(-3)], "p", 3) == (1.0, 2.5, -3.0)
    assert V.vector(np.array([0.0, 1.0]), "p", 2) == (0.0, 1.0)
    for bad in ([1, 2], [1, 2, "3"], [1, True, 3], [1, 2, float("nan")], "1 2 3", [[1, 2, 3]]):
        e = error_of(lambda bad=bad: V.vector(bad, "vessels[0].pose.position", 3))
        assert e.reason == f"expected a list of 3 finite numbers, got {bad!r}"
    assert error_of(lambda: V.vector(None, "p", 3)).reason == "missing (expected a list of 3 finite numbers)"


def test_list_of_and_mapping_of_read_every_item_with_its_path():
    def positive(value, key):
        return V.positive(value, key)

    assert V.list_of([1, 2.5], "rates_hz", positive) == [1.0, 2.5] and V.list_of(None, "rates_hz", positive) == []
    assert error_of(lambda: V.list_of([1, -2], "rates_hz", positive)).key == "rates_hz[1]"
    assert error_of(lambda: V.list_of({"a": 1}, "rates_hz", positive)).key == "rates_hz"
    beacons = {"b1": [0, 0, -10], 7: [1, 2, 3]}
    assert V.mapping_of(beacons, "sensors.acoustic_beacons", lambda v, k: V.vector(v, k, 3)) == {
        "b1": (0.0, 0.0, -10.0),
        "7": (1.0, 2.0, 3.0),
    }
    e = error_of(lambda: V.mapping_of({"b1": [0, 0]}, "sensors.acoustic_beacons", lambda v, k: V.vector(v, k, 3)))
    assert e.key == "sensors.acoustic_beacons.b1"
    assert V.mapping_of(None, "m", positive) == {}


def test_getters_default_missing_and_path():
    raw = {"step_s": 0.01, "mode": None, "workers": 2, "name": "auv", "tf": False}
    assert V.get_number(raw, "step_s", "physics", 0.02) == 0.01
    assert V.get_number(raw, "odom_rate_hz", "physics", 10) == 10.0
    assert V.get_number(raw, "mode", "physics", 1.5) == 1.5  # None is "not given"
    e = error_of(lambda: V.get_number(raw, "latitude_deg", "world.origin"))
    assert str(e) == "scenario.yaml: world.origin.latitude_deg: missing (expected a number)"
    e = error_of(lambda: V.get_number({"lat": 95}, "lat", "", high=90.0))
    assert e.key == "lat" and e.reason == "expected a number <= 90, got 95"
    assert V.get_integer(raw, "workers", "physics", 1, low=1) == 2
    assert V.get_integer(raw, "substeps", "physics", 1, low=1) == 1
    assert error_of(lambda: V.get_integer(raw, "count", "g")).reason == "missing (expected an integer)"
    assert V.get_text(raw, "name", "") == "auv" and V.get_text(raw, "path", "rec", "x") == "x"
    assert error_of(lambda: V.get_text(raw, "model", "vessels[0]")).key == "vessels[0].model"
    assert V.get_choice(raw, "integrator", "physics", ("rk4", "euler"), "rk4") == "rk4"
    assert V.get_boolean(raw, "tf", "physics", True) is False
    assert V.get_boolean(raw, "publish_tf", "physics", True) is True


def test_error_class_is_the_callers():
    e = error_of(lambda: Validator("lrauv.yaml", CatalogueError).number("x", "mass_kg"))
    assert type(e) is CatalogueError and str(e) == "lrauv.yaml: mass_kg: expected a number, got 'x'"


def test_long_values_are_cut_in_messages():
    long = list(range(1000))
    text = show(long)
    assert len(text) == 200 and text.endswith("...") and text.startswith("[0, 1, 2")
    assert show("abc") == "'abc'"
    assert len(error_of(lambda: V.mapping(long, "vessels")).reason) < 260
