"""current_server over real DDS: a client node sets parameters through the parameter services (as
`ros2 param set` does), reads the latched configuration, calls the QueryCurrent service and listens to markers."""

from __future__ import annotations

import shlex
from pathlib import Path

import numpy as np
import pytest
import yaml

rclpy = pytest.importorskip("rclpy")

from rcl_interfaces.msg import Parameter as ParameterMsg  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from rclpy.parameter import Parameter, get_parameter_value  # noqa: E402
from rclpy.parameter_client import AsyncParameterClient  # noqa: E402
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy  # noqa: E402
from rclpy.serialization import serialize_message  # noqa: E402
from visualization_msgs.msg import Marker, MarkerArray  # noqa: E402

from lotusim_env.current_server import CONFIG_TOPIC, MARKER_TOPIC, QUERY_SERVICE, CurrentServer  # noqa: E402
from lotusim_interfaces.msg import EnvironmentConfig  # noqa: E402
from lotusim_interfaces.srv import QueryCurrent  # noqa: E402
from simnodes import spin_until  # noqa: E402

pytestmark = pytest.mark.ros  # starts DDS participants (nodes, node processes or the ros2 CLI)
LATCHED = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE)
START = "current: {model: constant, velocity_enu: [0.3, -0.2, 0.0]}"


class Harness:
    """A server node and a client node on one executor (same DDS domain, real discovery)."""

    def __init__(self, context, overrides: list[Parameter]) -> None:
        self.server = CurrentServer(context=context, parameter_overrides=overrides)
        self.client = rclpy.create_node("test_client", context=context)
        self.executor = SingleThreadedExecutor(context=context)
        self.executor.add_node(self.server)
        self.executor.add_node(self.client)
        self.query = self.client.create_client(QueryCurrent, QUERY_SERVICE)
        self.params = AsyncParameterClient(self.client, "current_server")

    def spin_until(self, predicate, timeout: float = 10.0, what: str = "condition") -> None:
        """simnodes.spin_until on this harness's executor (timeout in wall seconds)."""
        spin_until(self.executor, predicate, timeout, what)

    def wait(self, future, timeout: float = 10.0):
        self.spin_until(future.done, timeout, "a reply")
        return future.result()

    def call(self, points, time_s: float = 0.0) -> QueryCurrent.Response:
        self.spin_until(self.query.service_is_ready, what="the query service")
        request = QueryCurrent.Request(time_s=time_s, points_enu=np.asarray(points, float).ravel().tolist())
        return self.wait(self.query.call_async(request))

    def remote_set(self, *params: Parameter):
        """Set parameters through the node's parameter service (what `ros2 param set` does)."""
        self.spin_until(lambda: self.params.services_are_ready(), what="the parameter services")
        return self.wait(self.params.set_parameters(list(params))).results

    def latched_config(self) -> EnvironmentConfig:
        """Subscribe late (a new subscription each time) and return the latched configuration."""
        received: list[EnvironmentConfig] = []
        sub = self.client.create_subscription(EnvironmentConfig, CONFIG_TOPIC, received.append, LATCHED)
        self.spin_until(lambda: received, what="the latched configuration")
        self.client.destroy_subscription(sub)
        return received[-1]

    def close(self) -> None:
        self.executor.shutdown()
        self.client.destroy_node()
        self.server.destroy_node()


@pytest.fixture
def harness(ros_context):
    h = Harness(ros_context, [Parameter("environment_yaml", value=START), Parameter("markers.rate_hz", value=0.0)])
    yield h
    h.close()


def velocities(reply: QueryCurrent.Response) -> np.ndarray:
    return np.frombuffer(reply.velocities_enu, dtype=float).reshape(-1, 3)


def test_query_returns_configured_current_at_every_point(harness):
    points = np.array([[0.0, 0.0, -1.0], [100.0, -50.0, -30.0], [5.0, 5.0, 0.0]])
    reply = harness.call(points, time_s=12.5)
    assert reply.success, reply.message
    assert reply.time_s == 12.5
    np.testing.assert_allclose(velocities(reply), np.tile([0.3, -0.2, 0.0], (3, 1)))


def test_bad_queries_get_a_clear_refusal_and_the_server_keeps_answering(harness):
    cases = [
        ([1.0, 2.0], 0.0, "multiple of 3"),
        ([0.0, float("nan"), 0.0], 0.0, "finite"),
        ([0.0, 0.0, float("-inf")], 0.0, "finite"),
        ([0.0, 0.0, 0.0], float("inf"), "finite"),
        ([0.0, 0.0, 0.0], float("nan"), "finite"),
        ([0.0, 0.0, 0.0], float("-inf"), "finite"),
    ]
    for points, time_s, expected in cases:
        reply = harness.call(points, time_s)
        assert not reply.success and expected in reply.message, (points, reply.message)
        assert len(reply.velocities_enu) == 0
    assert harness.remote_set(Parameter("max_query_points", value=2))[0].successful
    reply = harness.call(np.zeros((3, 3)))
    assert not reply.success and "3 points requested, at most 2" in reply.message
    assert harness.call(np.zeros((2, 3))).success


def test_typed_parameters_mirror_the_configuration_with_descriptors(harness):
    server = harness.server
    assert server.get_parameter("current.model").value == "constant"
    assert list(server.get_parameter("current.velocity_enu").value) == [0.3, -0.2, 0.0]
    descriptors = harness.wait(harness.params.describe_parameters(["current.velocity_enu", "markers.rate_hz"]))
    assert "current.velocity_enu" in descriptors.descriptors[0].description
    assert descriptors.descriptors[1].floating_point_range[0].to_value == 10.0


def test_typed_parameter_change_republishes_latched_config_and_changes_answers(harness):
    first = harness.latched_config()
    assert yaml.safe_load(first.config_yaml)["current"]["velocity_enu"] == [0.3, -0.2, 0.0]

    result = harness.remote_set(Parameter("current.velocity_enu", value=[1.0, 0.5, -0.1]))[0]
    assert result.successful, result.reason
    harness.spin_until(lambda: harness.latched_config().revision == first.revision + 1, what="revision + 1")
    config = yaml.safe_load(harness.latched_config().config_yaml)
    assert config == {"current": {"model": "constant", "velocity_enu": [1.0, 0.5, -0.1]}}
    assert yaml.safe_load(harness.server.get_parameter("environment_yaml").value) == config
    np.testing.assert_allclose(velocities(harness.call([[10.0, 0.0, -5.0]])), [[1.0, 0.5, -0.1]])


def test_environment_yaml_change_updates_the_typed_parameters(harness):
    new = "current: {model: constant, velocity_enu: [0.0, 2.0, 0.0]}"
    assert harness.remote_set(Parameter("environment_yaml", value=new))[0].successful
    assert list(harness.server.get_parameter("current.velocity_enu").value) == [0.0, 2.0, 0.0]
    np.testing.assert_allclose(velocities(harness.call([[0.0, 0.0, -1.0]])), [[0.0, 2.0, 0.0]])


@pytest.mark.parametrize(
    ("param", "expected"),
    [
        (Parameter("environment_yaml", value="current: {model: nonsense}"), "nonsense"),
        (Parameter("environment_yaml", value="current: [unclosed"), "YAML"),
        (Parameter("environment_yaml", value="- just\n- a list"), "mapping"),
        (Parameter("current.velocity_enu", value=[1.0, 2.0]), "velocity_enu"),
        (Parameter("current.model", value="no_such_model"), "no_such_model"),
        (Parameter("markers.rate_hz", value=50.0), ""),  # outside its descriptor range: ROS refuses
    ],
)
def test_bad_configuration_is_refused_and_nothing_changes(harness, param, expected):
    before = harness.latched_config()
    result = harness.remote_set(param)[0]
    assert not result.successful and expected in result.reason
    after = harness.latched_config()
    assert (after.revision, after.config_yaml) == (before.revision, before.config_yaml)
    np.testing.assert_allclose(velocities(harness.call([[0.0, 0.0, -1.0]])), [[0.3, -0.2, 0.0]])


def test_markers_are_arrows_along_the_current_on_the_configured_grid(ros_context):
    overrides = [
        Parameter("environment_yaml", value=START),
        Parameter("markers.rate_hz", value=5.0),
        Parameter("markers.half_count", value=2),
        Parameter("markers.spacing_m", value=10.0),
        Parameter("markers.depths_m", value=[0.0, 20.0]),
        Parameter("markers.arrow_scale_s", value=50.0),
    ]
    h = Harness(ros_context, overrides)
    try:
        received: list[MarkerArray] = []
        h.client.create_subscription(MarkerArray, MARKER_TOPIC, received.append, 1)
        h.spin_until(lambda: received, what="a MarkerArray")
        markers = received[-1].markers
        assert markers[0].action == Marker.DELETEALL
        arrows = markers[1:]
        assert len(arrows) == 5 * 5 * 2
        assert {m.header.frame_id for m in arrows} == {"map"} and {m.type for m in arrows} == {Marker.ARROW}
        starts = np.array([[m.points[0].x, m.points[0].y, m.points[0].z] for m in arrows])
        tips = np.array([[m.points[1].x, m.points[1].y, m.points[1].z] for m in arrows])
        np.testing.assert_allclose(tips - starts, np.tile(50.0 * np.array([0.3, -0.2, 0.0]), (50, 1)), atol=1e-9)
        assert sorted(set(starts[:, 2])) == [-20.0, 0.0]
        assert sorted(set(starts[:, 0])) == [-20.0, -10.0, 0.0, 10.0, 20.0]

        assert h.remote_set(Parameter("markers.half_count", value=1))[0].successful  # smaller grid, no stale arrows
        received.clear()
        h.spin_until(lambda: received and len(received[-1].markers) == 1 + 3 * 3 * 2, what="the resized grid")
        assert received[-1].markers[0].action == Marker.DELETEALL
    finally:
        h.close()


# Textbook case ([Stewart2008], docs/environment.md): lat 47°, A_z = 0.01 m²/s, U10 = 10 m/s -> V0 = 0.18381 m/s,
# surface current 45° to the right of the wind (northern hemisphere), spiral turning with the wind.
EKMAN = """
origin: {latitude_deg: 47.0, longitude_deg: -6.0}
wind: {speed_mps: 10.0, from_deg: 270.0}
current: {model: ekman, surface_depth_rule: eddy_viscosity, eddy_viscosity_m2s: 0.01}
"""


def _surface_heading_deg(h: Harness) -> tuple[float, float]:
    v = velocities(h.call([[0.0, 0.0, 0.0]]))[0]
    return float(np.hypot(v[0], v[1])), float(np.degrees(np.arctan2(v[1], v[0])))


def test_ekman_field_follows_wind_parameter_changes(ros_context):
    h = Harness(ros_context, [Parameter("environment_yaml", value=EKMAN), Parameter("markers.rate_hz", value=0.0)])
    try:
        assert h.server.get_parameter("wind.from_deg").value == 270.0
        speed, heading = _surface_heading_deg(h)  # westerly wind blows toward east (0°): current toward -45°
        assert speed == pytest.approx(0.18381, abs=5e-5)
        assert heading == pytest.approx(-45.0, abs=1e-6)
        revision = h.latched_config().revision

        assert h.remote_set(Parameter("wind.from_deg", value=180.0))[0].successful  # now blowing toward north
        config = yaml.safe_load(h.latched_config().config_yaml)
        assert config["wind"]["from_deg"] == 180.0 and h.latched_config().revision == revision + 1
        speed, heading = _surface_heading_deg(h)
        assert speed == pytest.approx(0.18381, abs=5e-5)
        assert heading == pytest.approx(45.0, abs=1e-6)  # rotated with the wind, still 45° to its right

        refused = h.remote_set(Parameter("wind.speed_mps", value=-1.0))[0]  # below the descriptor range
        assert not refused.successful
        refused = h.remote_set(Parameter("origin.latitude_deg", value=0.5))[0]  # Ekman undefined near f = 0
        assert not refused.successful and "latitude" in refused.reason
        assert h.latched_config().revision == revision + 1

        assert h.remote_set(Parameter("current.model", value="constant"))[0].successful
        assert yaml.safe_load(h.latched_config().config_yaml)["current"] == {"model": "constant"}
        assert not h.server.has_parameter("current.eddy_viscosity_m2s")  # typed parameters mirror the config
        np.testing.assert_allclose(velocities(h.call([[0.0, 0.0, -1.0]])), [[0.0, 0.0, 0.0]])
    finally:
        h.close()


def test_default_configuration_exposes_seed_and_wind(ros_context):
    """Without configuration: calm water, and seed / wind speed / wind direction are typed parameters already;
    a wind set through them reaches every node that rebuilds the environment from the latched revision."""
    from lotusim_env.environment import build_environment

    h = Harness(ros_context, [Parameter("markers.rate_hz", value=0.0)])
    try:
        assert h.server.get_parameter("seed").value == 0
        assert h.server.get_parameter("wind.speed_mps").value == 0.0
        np.testing.assert_allclose(velocities(h.call([[0.0, 0.0, -1.0]])), [[0.0, 0.0, 0.0]])
        assert h.remote_set(Parameter("wind.speed_mps", value=8.0))[0].successful
        env = build_environment(yaml.safe_load(h.latched_config().config_yaml))
        # from_deg 0: a northerly, blowing toward the south (meteorological convention, docs/environment.md)
        np.testing.assert_allclose(env.wind.velocity_enu(0.0, np.zeros((1, 3)))[0, :2], [0.0, -8.0], atol=1e-12)
    finally:
        h.close()


def _documented_param_set(name: str) -> Parameter:
    """The `ros2 param set /current_server <name> VALUE` line of docs/current_server.md, turned into the parameter
    that `ros2 param set` sends (its value typed from the shell word as the CLI does, by YAML)."""
    doc = Path(__file__).resolve().parents[3] / "docs" / "current_server.md"
    lines = [ln for ln in doc.read_text().splitlines() if ln.startswith(f"ros2 param set /current_server {name} ")]
    assert len(lines) == 1, f"docs/current_server.md: one `ros2 param set ... {name}` example expected"
    words = shlex.split(lines[0].split("#")[0])
    msg = ParameterMsg(name=name, value=get_parameter_value(string_value=words[5]))
    serialize_message(msg)  # what the CLI's service call does: a YAML mapping here raised TypeError
    return Parameter.from_parameter_msg(msg)


def test_documented_environment_yaml_set_switches_model_from_ekman(ros_context):
    """docs/current_server.md: from the Ekman example, the documented `ros2 param set /current_server
    environment_yaml ...` switches the model to a constant current (the documented quoting used to make the CLI
    raise a TypeError); a value of the wrong type is refused with a reason and the node keeps answering (it used
    to raise inside the node's parameter service)."""
    h = Harness(ros_context, [Parameter("environment_yaml", value=EKMAN), Parameter("markers.rate_hz", value=0.0)])
    try:
        revision = h.latched_config().revision
        result = h.remote_set(_documented_param_set("environment_yaml"))[0]
        assert result.successful, result.reason
        assert h.latched_config().revision == revision + 1
        assert yaml.safe_load(h.latched_config().config_yaml)["current"] == {
            "model": "constant",
            "velocity_enu": [0.5, 0.0, 0.0],
        }
        np.testing.assert_allclose(velocities(h.call([[0.0, 0.0, -1.0]])), [[0.5, 0.0, 0.0]])
        for bad in (Parameter("environment_yaml", value=3), Parameter("environment_yaml", value=[1.0, 2.0])):
            refused = h.remote_set(bad)[0]
            assert not refused.successful and refused.reason
        assert h.latched_config().revision == revision + 1
        np.testing.assert_allclose(velocities(h.call([[0.0, 0.0, -1.0]])), [[0.5, 0.0, 0.0]])
    finally:
        h.close()
