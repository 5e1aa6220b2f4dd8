"""One vessel-name check (lotusim_core.base.names) wherever a name enters: its limit is what ROS accepts for every
topic, service and frame name a vessel gets."""

from __future__ import annotations

import textwrap

import pytest

from lotusim_core.base import names
from lotusim_core.sim.scenario import ScenarioError, load_scenario

BASE = """
world:
  origin: {latitude_deg: 48.3, longitude_deg: -4.6}
  bathymetry: {model: flat, depth_m: 50.0}
"""


def _scenario(tmp_path, vessels: str):
    path = tmp_path / "scn.yaml"
    path.write_text(textwrap.dedent(BASE) + textwrap.dedent(vessels))
    return load_scenario(path)


def test_the_limit_is_what_rclpy_accepts_for_every_per_vessel_name():
    validate = pytest.importorskip("rclpy.validate_full_topic_name").validate_full_topic_name
    from rclpy.exceptions import InvalidTopicNameException

    validate("/" + "a" * (names.TOPIC_NAME_MAX - 1))
    with pytest.raises(InvalidTopicNameException):
        validate("/" + "a" * names.TOPIC_NAME_MAX)
    longest = "v" * names.MAX_NAME_LENGTH
    actuator = "a" * names.ACTUATOR_NAME_ALLOWANCE
    for pattern in names.VESSEL_NAMES:
        validate("/" + pattern.format(v=longest, a=actuator).lstrip("/"))  # frames too, as if they were topics
    assert any(len(p.format(v=longest, a=actuator)) == names.TOPIC_NAME_MAX for p in names.VESSEL_NAMES)
    assert names.name_problem(longest) == ""
    assert "at most 196" in names.name_problem(longest + "v")
    assert "at most 171" in names.name_problem("v" * 180, ["t" * 60])  # a vehicle's longer actuator names
    for bad in ("", "1abc", "a-b", "a/b", "a b", "é", None, 3):
        assert "not a valid ROS name token" in names.name_problem(bad)


def test_scenario_loader_refuses_a_name_too_long_for_ros(tmp_path):
    ok = "v" * names.MAX_NAME_LENGTH
    assert [v.name for v in _scenario(tmp_path, f"vessels:\n  - {{name: {ok}, model: lrauv}}\n").vessels] == [ok]
    with pytest.raises(ScenarioError) as info:
        _scenario(tmp_path, f"vessels:\n  - {{name: {'v' * 240}, model: lrauv}}\n")
    assert info.value.key.endswith(".name") and "240 characters" in info.value.reason
    prefix = "p" * (names.MAX_NAME_LENGTH - 4)  # + "_0000" is one too many
    with pytest.raises(ScenarioError) as info:
        _scenario(tmp_path, f"generators:\n  - {{fleet_grid: {{model: lrauv, count: 2, prefix: {prefix}}}}}\n")
    assert info.value.key == "generators[0].fleet_grid.prefix", str(info.value)


def test_fleet_registry_refuses_a_name_too_long_for_ros():
    pytest.importorskip("rclpy")
    from lotusim_core.base.geodesy import GeodeticOrigin
    from lotusim_core.sim.fleet_registry import FleetRegistry
    from lotusim_interfaces.msg import FleetCommandItem, ItemResult, VesselDescription

    registry = FleetRegistry(GeodeticOrigin(48.39, -4.49, 0.0))
    registry.add_worker("worker_0")
    items = [
        FleetCommandItem(command=FleetCommandItem.CREATE, vessel=VesselDescription(name=n, model="lrauv"))
        for n in ("v" * 240, "v" * names.MAX_NAME_LENGTH)
    ]
    for item in items:
        item.vessel.pose.orientation.w = 1.0
    plan = registry.plan(items)
    assert plan.refused[0].code == ItemResult.INVALID_NAME and "240 characters" in plan.refused[0].reason
    assert [p.index for p in plan.accepted] == [1]
