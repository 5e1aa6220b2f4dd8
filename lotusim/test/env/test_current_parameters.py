"""current_server's parameters, queries and arrows without ROS (lotusim_env.current_parameters, .current_queries)
and the arrows as markers (lotusim_env.current_markers: messages only, no DDS). Expected values come from
docs/current_server.md's settings table, lotusim_env.config.LEAF_RANGES's documented ranges, and the formulas
in the docstrings (arrow tip = point + scale x v, widths 0.1 / 0.2 of the fastest arrow's length)."""

from __future__ import annotations

import math
import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from lotusim_env.current_parameters import (
    NODE_SETTINGS,
    YAML_SETTING,
    changes_of,
    is_startup_leaf,
    leaf_setting,
    leaf_values,
    marker_setting_problem,
    mirrored_changes,
    touches_config,
)
from lotusim_env.current_queries import (
    answer_query,
    current_arrows,
    grid_arrows,
    marker_grid_enu,
    query_time_s,
)

DOC = Path(__file__).resolve().parents[3] / "docs" / "current_server.md"


def _documented_settings() -> dict[str, tuple[str, str]]:
    """name -> (default, range) from the 'Node settings' table of docs/current_server.md."""
    rows = re.findall(r"^\| `([\w.]+)` \| ([^|]+) \| ([^|]+) \|", DOC.read_text(), flags=re.M)
    return {name: (default.strip(), bounds.strip()) for name, default, bounds in rows}


def test_node_settings_are_the_documented_ones_with_their_ranges():
    documented = _documented_settings()
    assert [s.name for s in NODE_SETTINGS] == list(documented)
    for setting in NODE_SETTINGS:
        default, bounds = documented[setting.name]
        if default.startswith("["):
            assert setting.default == [float(v) for v in default.strip("[]").split(",")] and not setting.ranged
            continue
        assert setting.default == float(default) and setting.is_integer == ("." not in default), setting
        low, high = (float(v.replace(",", "")) for v in bounds.split(" – "))
        assert setting.ranged and (setting.low, setting.high) == (low, high), setting


def test_a_leaf_gets_its_documented_range_and_type():
    latitude = leaf_setting("current.latitude_deg", 47.0)
    assert latitude.ranged and not latitude.is_integer and (latitude.low, latitude.high) == (-90.0, 90.0)
    assert latitude.description.startswith("environment configuration key current.latitude_deg: WGS84 latitude")
    assert latitude.description.endswith("(docs/environment.md)")
    seed = leaf_setting("seed", 3)
    assert seed.ranged and seed.is_integer and (seed.low, seed.high) == (0, 2**31 - 1)
    model = leaf_setting("current.model", "ekman")
    assert not model.ranged and model.description == "environment configuration key current.model (docs/environment.md)"
    assert not leaf_setting("wind.enabled", True).is_integer  # a boolean is not an integer parameter
    assert YAML_SETTING.name == "environment_yaml" and "model: constant" in YAML_SETTING.default


def test_a_change_brings_the_yaml_and_the_other_leaves_with_it():
    old = {"seed": 1, "current": {"model": "ekman", "latitude_deg": 47.0}}
    leaves = {"seed", "current.model", "current.latitude_deg"}
    # a new model resets its section: the YAML follows, the other declared leaf keeps its value
    assert mirrored_changes(old, {"current.model": "constant"}, leaves) == [
        ("environment_yaml", "seed: 1\ncurrent: {model: constant}\n"),  # flow style for a leaf mapping
        ("seed", 1),
    ]
    # the YAML itself: only the leaves follow, with their parameter types (latitude a double)
    assert mirrored_changes(old, {"environment_yaml": "{seed: 2, current: {latitude_deg: 10}}"}, leaves) == [
        ("seed", 2),
        ("current.latitude_deg", 10.0),
    ]
    assert mirrored_changes(old, {"environment_yaml": "[1, 2]"}, leaves) is None  # refused: on-set says why
    assert old == {"seed": 1, "current": {"model": "ekman", "latitude_deg": 47.0}}


def test_which_names_touch_the_configuration():
    assert touches_config(["markers.rate_hz", "seed"], {"seed"}) and touches_config(["environment_yaml"], set())
    assert not touches_config(["markers.rate_hz", "max_query_points"], {"seed"})
    assert is_startup_leaf("current.latitude_deg") and is_startup_leaf("wind.speed_mps")
    assert not any(map(is_startup_leaf, ["markers.rate_hz", "qos_overrides./x.depth", "max_query_points", "seed"]))
    params = [SimpleNamespace(name="seed", value=3), SimpleNamespace(name="wind.speed_mps", value=2.0)]
    assert changes_of(params) == {"seed": 3, "wind.speed_mps": 2.0}
    assert leaf_values({"seed": 4, "current": {"velocity_enu": [1, 0, 0]}}) == {
        "seed": 4,
        "current.velocity_enu": [1.0, 0.0, 0.0],
    }


def test_marker_vectors_must_be_finite_and_the_centre_three():
    assert marker_setting_problem({"markers.center_enu": [1.0, 2.0, 3.0], "markers.depths_m": [0.0]}) is None
    assert marker_setting_problem({"markers.rate_hz": 2.0, "seed": 1}) is None
    assert (
        marker_setting_problem({"markers.center_enu": [0.0, 0.0]})
        == "markers.center_enu: expected finite numbers, 3 of them, got [0.0, 0.0]"
    )
    assert (
        marker_setting_problem({"markers.depths_m": [0.0, math.inf]})
        == "markers.depths_m: expected finite numbers, got [0.0, inf]"
    )


# --- queries -----------------------------------------------------------------------------------------------------
def _still_then_east(t_s: float, points: np.ndarray) -> np.ndarray:
    """0.1 m/s east per second of sim time, everywhere."""
    return np.tile([0.1 * t_s, 0.0, 0.0], (len(points), 1))


def test_query_time_negative_means_now_and_non_finite_is_kept():
    assert query_time_s(-1.0, 5.0) == 5.0 and query_time_s(3.0, 5.0) == 3.0 and query_time_s(0.0, 5.0) == 0.0
    assert math.isnan(query_time_s(math.nan, 5.0)) and query_time_s(-math.inf, 5.0) == -math.inf


@pytest.mark.parametrize(
    ("points", "t_s", "message"),
    [
        ([1.0, 2.0], 0.0, "points_enu has 2 values, expected a multiple of 3 (x, y, z per point)"),
        ([0.0] * 9, 0.0, "3 points requested, at most 2 per query (parameter max_query_points)"),
        (
            [0.0, math.nan, math.inf],
            0.0,
            "points_enu and time_s must be finite: 2 non-finite coordinate(s), time_s=0.0",
        ),
        ([0.0] * 3, math.inf, "points_enu and time_s must be finite: 0 non-finite coordinate(s), time_s=inf"),
    ],
)
def test_bad_queries_are_refused_with_their_reason(points, t_s, message):
    assert answer_query(_still_then_east, np.array(points), t_s, 2) == (None, message)


def test_a_query_answers_the_field_and_a_failing_model_is_a_refusal():
    velocities, message = answer_query(_still_then_east, np.arange(6.0), 2.0, 2)
    assert message == "" and velocities.tolist() == [[0.2, 0.0, 0.0], [0.2, 0.0, 0.0]]

    def broken(_t, _p):
        raise ValueError("outside the data set")

    assert answer_query(broken, np.zeros(3), 1.0, 2) == (None, "current model failed at t=1.0 s: outside the data set")
    assert grid_arrows(broken, 1.0, np.zeros((1, 3)), 10.0) == (None, "current model failed (outside the data set)")


# --- arrows ------------------------------------------------------------------------------------------------------
def test_marker_grid_is_square_around_the_centre_at_each_depth():
    points = marker_grid_enu(np.array([100.0, 200.0, 1.0]), 5.0, 1, np.array([0.0, 10.0]))
    assert points.shape == (3 * 3 * 2, 3)
    assert sorted(set(points[:, 0])) == [95.0, 100.0, 105.0] and sorted(set(points[:, 1])) == [195.0, 200.0, 205.0]
    assert sorted(set(points[:, 2])) == [-9.0, 1.0]  # depth positive down: z = centre z - depth


def test_arrows_point_along_the_current_and_skip_non_finite_velocities():
    points = np.array([[0.0, 0.0, 0.0], [10.0, 0.0, -5.0], [20.0, 0.0, 0.0]])
    velocities = np.array([[1.0, 0.0, 0.0], [0.0, 2.0, 0.0], [math.nan, 0.0, 0.0]])
    arrows = current_arrows(points, velocities, 10.0)
    assert arrows.starts.tolist() == points[:2].tolist()
    assert arrows.tips.tolist() == [[10.0, 0.0, 0.0], [10.0, 20.0, -5.0]]
    # fastest 2 m/s drawn 20 m long: shaft 0.1 x 20 = 2 m, head 0.2 x 20 = 4 m; levels speed / 2
    assert (arrows.shaft_m, arrows.head_m) == pytest.approx((2.0, 4.0)) and arrows.levels.tolist() == [0.5, 1.0]
    still = current_arrows(points, np.zeros((3, 3)), 10.0)
    assert still.levels.tolist() == [0.0, 0.0, 0.0] and np.isfinite(still.shaft_m)


def test_arrow_markers_start_with_deleteall_and_are_rewritten_in_place():
    from builtin_interfaces.msg import Time
    from visualization_msgs.msg import Marker

    from lotusim_env.current_markers import CurrentArrows

    board = CurrentArrows()
    points = np.array([[0.0, 0.0, 0.0], [10.0, 0.0, -5.0]])
    first = board.update(current_arrows(points, np.array([[1.0, 0.0, 0.0], [0.0, 2.0, 0.0]]), 10.0), Time(sec=7))
    assert [m.action for m in first.markers] == [Marker.DELETEALL, Marker.ADD, Marker.ADD]
    tip = first.markers[2].points[1]
    assert (tip.x, tip.y, tip.z) == (10.0, 20.0, -5.0) and first.markers[2].header.frame_id == "map"
    assert (first.markers[1].color.r, first.markers[1].color.b) == (0.5, 0.5) and first.markers[1].scale.y == 4.0
    assert first.markers[1].header.stamp.sec == 7
    again = board.update(current_arrows(points[:1], np.array([[0.0, 1.0, 0.0]]), 1.0), Time(sec=8))
    assert len(again.markers) == 2 and again.markers[1] is first.markers[1]  # the same Marker, rewritten
    assert (again.markers[1].points[1].x, again.markers[1].points[1].y) == (0.0, 1.0)
