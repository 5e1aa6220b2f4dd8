"""Limits counted once and bounded input: the fleet size limit, create -> delete -> create of one name in one
goal, and the YAML loader's nesting and size bounds (lotusim_core.base.safe_yaml) on files and payloads."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
import yaml

from lotusim_core.base import safe_yaml

DEEP = "a: " + "[" * 100_000 + "]" * 100_000 + "\n"  # the C composer recursed once per level (segfault)


def test_safe_yaml_loads_ordinary_documents_as_yaml_safe_load_does():
    text = "a: {b: [1, 2.5, {c: x}]}\nd: &x [1, 2]\ne: *x\nf: null\n"
    assert safe_yaml.load(text) == yaml.safe_load(text)
    at_limit = "a: " + "[" * 31 + "]" * 31  # 32 levels with the mapping
    assert safe_yaml.load(at_limit) == yaml.safe_load(at_limit)
    with pytest.raises(yaml.YAMLError):
        safe_yaml.load("!!python/object/apply:os.system [echo hi]")


@pytest.mark.parametrize(
    "text",
    [
        "[" * 1000 + "]" * 1000,  # flow
        "".join("  " * i + "-\n" for i in range(40)),  # block sequences
        "".join("  " * i + f"k{i}:\n" for i in range(40)),  # block mappings
        "a0: &a0 [x]\n" + "".join(f"a{i}: &a{i} [*a{i - 1}]\n" for i in range(1, 60)),  # depth through aliases
        DEEP,
    ],
    ids=["flow", "block-seq", "block-map", "aliases", "100k"],
)
def test_documents_nested_too_deep_are_refused_with_the_line(text):
    with pytest.raises(safe_yaml.YAMLLimitError, match=r"nested more than 32 levels deep \(line \d+"):
        safe_yaml.load(text)


def test_a_billion_laughs_is_refused_by_what_it_expands_to():
    text = "a: &a [" + ",".join(["x"] * 10) + "]\n"
    text += "".join(
        f"{c}: &{c} [" + ",".join([f"*{p}"] * 10) + "]\n" for p, c in zip("abcdefgh", "bcdefghi", strict=True)
    )
    with pytest.raises(safe_yaml.YAMLLimitError, match="values"):
        safe_yaml.load(text)


def test_a_deeply_nested_scenario_file_is_a_clear_error_not_a_crash(tmp_path):
    """In a subprocess: before the bound, the YAML C loader overflowed the stack (SIGSEGV)."""
    path = tmp_path / "deep.yaml"
    path.write_text(DEEP)
    code = textwrap.dedent(f"""
        from lotusim_core.sim.scenario import ScenarioError, load_scenario
        try:
            load_scenario({str(path)!r})
        except ScenarioError as exc:
            print(exc)
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "<file>" in done.stdout and "nested more than 32 levels deep" in done.stdout


# --- the fleet registry ------------------------------------------------------------------------------------------
rclpy = pytest.importorskip("rclpy")

from lotusim_core.base.geodesy import GeodeticOrigin  # noqa: E402
from lotusim_core.sim.fleet_registry import FleetRegistry  # noqa: E402
from lotusim_interfaces.msg import FleetCommandItem, ItemResult, VesselDescription  # noqa: E402


def _item(command: int, name: str, overrides: str = "") -> FleetCommandItem:
    vessel = VesselDescription(name=name, model="lrauv", overrides_yaml=overrides)
    vessel.pose.orientation.w = 1.0
    return FleetCommandItem(command=command, vessel=vessel)


def _registry(max_vessels: int = 10_000) -> FleetRegistry:
    registry = FleetRegistry(GeodeticOrigin(48.39, -4.49, 0.0), max_vessels=max_vessels)
    registry.add_worker("worker_0")
    return registry


def _codes(registry: FleetRegistry, items) -> list[int]:
    plan = registry.plan(items)
    accepted = {p.index for p in plan.accepted}
    return [ItemResult.OK if i in accepted else plan.refused[i].code for i in range(len(items))]


def test_each_create_counts_once_towards_the_fleet_size_limit():
    """A limit of 10 let 5 be created (each create of a goal counted twice); 5,001 of 10,000 likewise."""
    codes = _codes(_registry(10), [_item(FleetCommandItem.CREATE, f"v{k}") for k in range(12)])
    assert codes == [ItemResult.OK] * 10 + [ItemResult.FLEET_FULL] * 2
    codes = _codes(_registry(), [_item(FleetCommandItem.CREATE, f"v{k}") for k in range(5_005)])
    assert codes == [ItemResult.OK] * 5_005


def test_other_goals_in_flight_count_and_are_duplicates():
    registry = _registry(10)
    first = registry.plan([_item(FleetCommandItem.CREATE, f"a{k}") for k in range(6)])  # in flight
    codes = _codes(registry, [_item(FleetCommandItem.CREATE, n) for n in ("a0", "b0", "b1", "b2", "b3", "b4")])
    assert codes == [ItemResult.DUPLICATE_NAME] + [ItemResult.OK] * 4 + [ItemResult.FLEET_FULL]
    registry.release(first)


def test_create_delete_create_of_one_name_in_one_goal():
    C, D = FleetCommandItem.CREATE, FleetCommandItem.DELETE
    codes = _codes(_registry(), [_item(C, "x"), _item(D, "x"), _item(C, "x"), _item(C, "x")])
    assert codes == [ItemResult.OK, ItemResult.OK, ItemResult.OK, ItemResult.DUPLICATE_NAME]


def test_deeply_nested_overrides_are_refused_alone_and_reserve_nothing():
    """A RecursionError used to abort the whole goal with no results, its names left reserved."""
    registry = _registry()
    deep = "mass_kg: " + "[" * 5000 + "]" * 5000
    items = [_item(FleetCommandItem.CREATE, "a"), _item(FleetCommandItem.CREATE, "b", deep)]
    plan = registry.plan(items)
    assert [p.index for p in plan.accepted] == [0]
    assert plan.refused[1].code == ItemResult.INVALID_OVERRIDES and "nested more than" in plan.refused[1].reason
    assert plan.reserved == {"a"}
    registry.release(plan)
    assert _codes(registry, [_item(FleetCommandItem.CREATE, "b")]) == [ItemResult.OK]


# --- spawn-time checks shared with the scenario loader ----------------------------------------------------------
def test_spawns_are_checked_like_scenario_vessels(tmp_path):
    """A spawn 5,000 m under a 60 m sea floor was accepted, and bad sensor overrides left a vessel silently
    without sensors; the scenario loader refused both. Now one set of checks (lotusim_core.sim.spawn_checks)."""
    from lotusim_core.sim.scenario import ScenarioError, load_scenario

    registry = _registry()
    registry.set_environment("bathymetry: {model: flat, depth_m: 60.0}")
    deep, ok, above = (_item(FleetCommandItem.CREATE, n) for n in ("deep", "ok", "above"))
    deep.vessel.pose.position.z, ok.vessel.pose.position.z, above.vessel.pose.position.z = -5000.0, -10.0, 3.0
    bad_gps = _item(FleetCommandItem.CREATE, "bad_gps", "sensors: {gps: {rate_hz: -1}}")
    unknown = _item(FleetCommandItem.CREATE, "unknown", "sensors: {sidescan: {}}")
    good = _item(FleetCommandItem.CREATE, "good", "sensors: {gps: {rate_hz: 2.0}}")
    plan = registry.plan([deep, ok, above, bad_gps, unknown, good])
    assert sorted(p.index for p in plan.accepted) == [1, 5]
    assert (
        plan.refused[0].code == ItemResult.INVALID_POSE and "at or below the sea floor (60 m" in plan.refused[0].reason
    )
    assert plan.refused[2].code == ItemResult.INVALID_POSE and "above the sea surface" in plan.refused[2].reason
    assert plan.refused[3].code == ItemResult.INVALID_OVERRIDES and "gps.rate_hz" in plan.refused[3].reason
    assert plan.refused[4].code == ItemResult.INVALID_OVERRIDES and "unknown sensor" in plan.refused[4].reason
    scenario = textwrap.dedent("""
        world:
          origin: {latitude_deg: 48.3, longitude_deg: -4.6}
          bathymetry: {model: flat, depth_m: 60.0}
        vessels:
          - {name: deep, model: lrauv, pose: {position: [0.0, 0.0, -5000.0]}}
    """)
    (tmp_path / "s.yaml").write_text(scenario)
    with pytest.raises(ScenarioError, match="at or below the sea floor"):
        load_scenario(tmp_path / "s.yaml")


def test_orientations_near_the_float_range_are_normalised_not_an_internal_error():
    """Found by test_fuzz: a quaternion with components of 1e214 and 1e308 (finite) made the MAS server's
    normalisation overflow (x**2) and the item came back INTERNAL_ERROR. Its direction is a valid rotation; a
    zero quaternion is refused with its reason."""
    big = _item(FleetCommandItem.CREATE, "big")
    o = big.vessel.pose.orientation
    o.x, o.y, o.z, o.w = -1.1343822557781535e214, -5000.0, 1e308, 1.0448636018423092e-301
    zero = _item(FleetCommandItem.CREATE, "zero")
    zero.vessel.pose.orientation.w = 0.0
    registry = _registry()
    plan = registry.plan([big, zero])
    assert [p.index for p in plan.accepted] == [0]
    o = plan.accepted[0].item.vessel.pose.orientation
    assert (o.x, o.y, o.z, o.w) == pytest.approx((-1.1343822557781535e-94, 0.0, 1.0, 0.0))
    assert "orientation quaternion is zero" in plan.refused[1].reason
