"""Property-based fuzzing (hypothesis, derandomized: the same inputs in every run) of the two entries of user
input: FleetCommand goals against a running MAS server + worker, and the scenario loader. Properties: no node
dies, every item gets a result, the MAS listing and the worker's fleet are exactly what the OK results say; the
loader returns a scenario or raises ScenarioError (file: key: reason), nothing else. Bounded in wall time."""

from __future__ import annotations

import math
import time

import pytest
import yaml

pytestmark = pytest.mark.ros  # starts DDS participants (nodes, node processes or the ros2 CLI)
hypothesis = pytest.importorskip("hypothesis")
rclpy = pytest.importorskip("rclpy")

from hypothesis import HealthCheck, Phase, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from test_robustness_ros import DEEP_YAML  # noqa: E402

from lotusim_core.base import names  # noqa: E402
from lotusim_core.sim.scenario import ScenarioError, load_scenario, resolve_scenario  # noqa: E402
from lotusim_interfaces.msg import FleetCommandItem, ItemResult, VesselDescription  # noqa: E402
from simnodes import Sim  # noqa: E402

FUZZ_S = 30.0  # wall seconds per fuzz target at most (examples stop being generated after it)
POOL = ["a", "b", "c", "auv_1", "usv_2"]  # names that recur, so deletes, moves and duplicates happen

floats = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True, width=64),
    st.floats(min_value=-200.0, max_value=200.0),
    st.sampled_from([0.0, -0.0, 1e308, -1e308, 5e-324, -5000.0, 90.0, 91.0]),
)
texts = st.one_of(
    st.text(max_size=12),
    st.text(alphabet=st.characters(codec="utf-8"), max_size=300),
    st.sampled_from(["", "x" * 196, "y" * 197, "w" * 240, "1abc", "a/b", "a b", "_x", "ü"]),
)
overrides = st.one_of(
    st.just(""),
    st.sampled_from(
        [
            "mass_kg: 50.0",
            "mass_kg: -1",
            "[1, 2]",
            "{unknown_key: 1}",
            "sensors: {gps: {rate_hz: 1.0}}",
            "sensors: 3",
            "thrusters: {propeller: {time_constant_s: 0.5}}",
            ": : :",
            "!!python/object/apply:os.system [echo hi]",
            "a: &a [x, x]\nb: [*a, *a]",
            DEEP_YAML,
        ]
    ),
    st.text(max_size=40),
)


@st.composite
def fleet_items(draw) -> FleetCommandItem:
    vessel = VesselDescription(
        name=draw(st.one_of(st.sampled_from(POOL), texts)),
        model=draw(st.one_of(st.sampled_from(["lrauv", "remus100", "wamv", "kayak_usv", "bluerov2_heavy"]), texts)),
        pose_frame=draw(st.sampled_from([0, 1, 2, 255])),
        overrides_yaml=draw(overrides),
        worker=draw(st.sampled_from(["", "", "worker_0", "worker_9", "ü"])),
    )
    p, o = vessel.pose.position, vessel.pose.orientation
    p.x, p.y, p.z = draw(floats), draw(floats), draw(st.one_of(floats, st.just(-5.0)))
    o.x, o.y, o.z, o.w = draw(floats), draw(floats), draw(floats), draw(st.one_of(floats, st.just(1.0)))
    vessel.latitude_deg, vessel.longitude_deg = draw(floats), draw(floats)
    vessel.depth_m, vessel.heading_deg = draw(floats), draw(floats)
    vessel.twist.linear.x, vessel.twist.angular.z = draw(floats), draw(floats)
    command = draw(st.sampled_from([0, 0, 0, 1, 1, 2, 3, 255]))
    return FleetCommandItem(command=command, vessel=vessel)


def _finite_or_skip(value: float) -> float:
    return value if math.isfinite(value) else 0.0


def test_fuzzed_fleet_commands_never_crash_and_listings_match_the_results(ros_context):
    sim = Sim(ros_context, mode="realtime", step_s=0.03, odom_rate_hz=10.0, publish_tf=True)
    expected: dict[str, str] = {}  # name -> model, from the OK results
    tried = {"goals": 0, "items": 0}
    start = time.monotonic()

    @settings(
        max_examples=500,
        deadline=None,
        derandomize=True,
        database=None,
        phases=[Phase.generate],  # no shrinking: the simulation keeps its state from one goal to the next
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example],
    )
    @given(items=st.lists(fleet_items(), max_size=12))
    def run(items: list[FleetCommandItem]) -> None:
        if time.monotonic() - start > FUZZ_S:
            return
        models = [item.vessel.model for item in items]
        result = sim.command(items, timeout_s=60.0)  # an exception in any node's callback surfaces here
        tried["goals"] += 1
        tried["items"] += len(items)
        assert len(result.results) == len(items)
        assert result.succeeded + result.failed == len(items)
        for item, model, res in zip(items, models, result.results, strict=True):
            assert res.code != ItemResult.INTERNAL_ERROR or item.command > 2, res.reason
            if not res.ok:
                assert res.reason, res
                continue
            if item.command == FleetCommandItem.CREATE:
                assert not names.name_problem(res.name) and res.name not in expected
                expected[res.name] = model
            elif item.command == FleetCommandItem.DELETE:
                del expected[res.name]
        assert {n: sim.worker.vessels[n].model for n in sim.worker.fleet.names} == expected
        if tried["goals"] % 10 == 0:
            listed = sim.listing(answer_s=20.0)
            assert {n: v.model for n, v in listed.items()} == expected
            assert all(v.status == v.STATUS_OK or v.status_reason for v in listed.values())

    try:
        run()
        sim.spin_for(0.5)
        assert {n: v.model for n, v in sim.listing(answer_s=20.0).items()} == expected
        print(f"fuzz: {tried['goals']} goals, {tried['items']} items in {time.monotonic() - start:.0f} s, 0 crashes")
        assert tried["goals"] >= 20
    finally:
        sim.close()


# --- the scenario loader -----------------------------------------------------------------------------------------
yaml_values = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-(2**70), max_value=2**70),
        st.floats(allow_nan=True, allow_infinity=True),
        st.text(max_size=20),
        st.sampled_from(["lrauv", "wamv", "remus_1", "map", "fast", "flat", "constant"]),
    ),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=12), inner, max_size=4)),
    max_leaves=12,
)


def _paths(data, prefix=()):
    """Every (path) to a value in nested dicts and lists."""
    yield prefix
    if isinstance(data, dict):
        for key, value in data.items():
            yield from _paths(value, (*prefix, key))
    elif isinstance(data, list):
        for i, value in enumerate(data):
            yield from _paths(value, (*prefix, i))


def _replaced(data, path, value):
    if not path:
        return value
    copy = dict(data) if isinstance(data, dict) else list(data)
    copy[path[0]] = _replaced(data[path[0]], path[1:], value)
    return copy


def test_fuzzed_scenarios_load_or_fail_with_a_scenario_error(tmp_path):
    base = {
        name: yaml.safe_load(resolve_scenario(name).read_text())
        for name in ("single_auv", "mixed_fleet_brest", "stress_1000")
    }
    tried = {"files": 0, "loaded": 0}
    start = time.monotonic()

    @settings(max_examples=400, deadline=None, derandomize=True, database=None)
    @given(data=st.data())
    def run(data) -> None:
        scenario = base[data.draw(st.sampled_from(sorted(base)))]
        kind = data.draw(st.sampled_from(["replace", "replace", "replace", "text"]))
        if kind == "text":
            text = data.draw(st.text(max_size=200))
        else:
            paths = list(_paths(scenario))
            for _ in range(data.draw(st.integers(1, 3))):
                path = data.draw(st.sampled_from(paths))
                scenario = _replaced(scenario, path, data.draw(yaml_values))
                paths = list(_paths(scenario))
            text = yaml.safe_dump(scenario, allow_unicode=True)
        if time.monotonic() - start > FUZZ_S:  # after the draws: a replayed example must draw what it drew before
            return
        path = tmp_path / "fuzz.yaml"
        path.write_text(text, encoding="utf-8")
        tried["files"] += 1
        try:
            loaded = load_scenario(path)
            loaded.plan()
            tried["loaded"] += 1
        except ScenarioError as exc:
            assert str(exc).startswith(str(path)) and exc.reason

    run()
    print(f"scenario fuzz: {tried['files']} files, {tried['loaded']} loaded, 0 crashes")
    assert tried["files"] >= 50
