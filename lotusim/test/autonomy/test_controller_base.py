"""VesselController (lotusim_autonomy.controller_base): the start, close and odometry intake every controller
shares, without DDS (a stand-in node records what is created and destroyed)."""

from __future__ import annotations

import math

import pytest
from nav_msgs.msg import Odometry

from lotusim_autonomy.controller_base import SingleControllerNode, VesselController, standalone_node


class _Logger:
    def __init__(self) -> None:
        self.warnings: list[str] = []

    def warning(self, text: str) -> None:
        self.warnings.append(text)


class _Node:
    """Stands in for the host node: publishers and subscriptions are tokens, their destruction is recorded."""

    def __init__(self) -> None:
        self.logger = _Logger()
        self.destroyed: list[tuple[str, object]] = []

    def get_logger(self) -> _Logger:
        return self.logger

    def create_subscription(self, msg_type, topic, callback, qos):
        return ("subscription", topic)

    def destroy_subscription(self, entity) -> None:
        self.destroyed.append(("subscription", entity))


class _Recorder(VesselController):
    TYPE = "recorder"

    @classmethod
    def cannot_drive(cls, spec):
        return None if spec.domain == "underwater" else f"{spec.name} is not underwater"

    def __init__(self, node, vessel, params, skip_before_s: float = -1.0) -> None:
        read, self.spec = self.open(node, vessel, params)
        self.gain = read.number("gain", 1.0, 0.0)
        read.finish()
        self.skip_before_s = skip_before_s
        self.listen_for_states()
        self.steps: list[tuple[float, float]] = []

    def skip_state(self, t_s: float) -> bool:
        return t_s < self.skip_before_s

    def control(self, s, h) -> None:
        self.steps.append((s.t_s, h))


def _odom(t_s: float, x: float = 0.0) -> Odometry:
    msg = Odometry()
    msg.header.stamp.sec = int(t_s)
    msg.header.stamp.nanosec = int(round((t_s - int(t_s)) * 1e9))
    msg.pose.pose.position.x = x
    msg.pose.pose.orientation.w = 1.0
    return msg


def test_open_reads_model_and_vehicle_and_reports_where() -> None:
    node = _Node()
    c = _Recorder(node, "auv", {"model": "remus100", "gain": 2.0})
    assert (c.node, c.vessel, c.model, c.spec.name) == (node, "auv", "remus100", "remus100")
    assert (c.state, c.updates, c.odom_count) == (None, 0, 0)
    with pytest.raises(ValueError, match=r"^recorder auv: model: wamv is not underwater$"):
        _Recorder(node, "auv", {"model": "wamv"})
    with pytest.raises(ValueError, match=r"^recorder auv: unknown parameter\(s\) \['gian'\]"):
        _Recorder(node, "auv", {"model": "remus100", "gian": 2.0})


def test_odometry_is_counted_taken_and_stepped_with_the_time_since_the_last() -> None:
    node = _Node()
    c = _Recorder(node, "auv", {"model": "remus100"}, skip_before_s=1.0)
    c._on_odom(_odom(0.5))  # skipped: counted, not taken
    assert (c.odom_count, c.state, c.steps) == (1, None, [])
    c._on_odom(_odom(2.0))
    c._on_odom(_odom(2.25))
    bad = _odom(2.5, x=math.nan)
    c._on_odom(bad)  # non-finite: counted, logged, not taken
    assert c.odom_count == 4
    assert c.steps == [(2.0, 0.0), (2.25, pytest.approx(0.25, abs=1e-9))]
    assert c.state.t_s == 2.25
    assert node.logger.warnings == ["auv: non-finite odometry ignored"]


def test_close_destroys_what_the_controller_made() -> None:
    node = _Node()
    c = _Recorder(node, "auv", {"model": "remus100"})
    c.close()
    assert node.destroyed == [("subscription", ("subscription", "auv/odom"))]


def test_standalone_node_class_is_named_after_its_controller() -> None:
    cls = standalone_node(_Recorder)
    assert cls.__name__ == "_RecorderNode" and issubclass(cls, SingleControllerNode)
    assert cls.__module__ == __name__ and "recorder" in cls.__doc__


def test_param_errors_are_config_errors_with_where_key_and_reason() -> None:
    from lotusim_autonomy.controller_base import ControllerConfigError, ParamReader
    from lotusim_core.base.validation import ConfigError

    read = ParamReader({"model": "remus100", "gain": True, "law": "pd", "extra": 1}, "recorder auv")
    with pytest.raises(ControllerConfigError) as info:
        read.number("gain", 1.0, 0.0, 10.0)  # a bool is not a number
    assert isinstance(info.value, ConfigError)
    assert (info.value.where, info.value.key) == ("recorder auv", "gain")
    assert str(info.value) == "recorder auv: gain: expected a number in [0.0, 10.0], got True"
    with pytest.raises(ControllerConfigError, match=r"^recorder auv: law: expected one of \('pid',\), got 'pd'$"):
        read.text("law", "pid", ("pid",))
    with pytest.raises(ControllerConfigError, match=r"^recorder auv: unknown parameter\(s\) \['extra'\]") as info:
        read.finish()
    assert info.value.key == ""


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{a: 1}", "controllers_yaml: expected a list of {type, vessel, params}, got dict"),
        ("[{type: x, vessel: v, gains: {}}]", "controllers_yaml[0]: expected a mapping with keys type, vessel, params"),
        ("[{type: x, vessel: ''}]", "controllers_yaml[0]: type and vessel: expected strings"),
        ("[{type: x, vessel: v, params: [1]}]", "controllers_yaml[0].params: expected a mapping, got [1]"),
        ("[a, b", "controllers_yaml: not valid YAML"),
    ],
)
def test_controllers_yaml_refusals(text: str, message: str) -> None:
    from lotusim_autonomy.controller_base import ControllerConfigError, parse_controllers_yaml

    with pytest.raises(ControllerConfigError) as info:
        parse_controllers_yaml(text)
    assert str(info.value).startswith(message)


def test_controllers_yaml_entries() -> None:
    from lotusim_autonomy.controller_base import parse_controllers_yaml

    assert parse_controllers_yaml("") == []
    assert parse_controllers_yaml("[{type: t, vessel: v}, {type: u, vessel: w, params: {k: 1}}]") == [
        {"type": "t", "vessel": "v", "params": {}},
        {"type": "u", "vessel": "w", "params": {"k": 1}},
    ]


def _fleet_state(t_s: float, names: list[str], worker: str = "worker_0"):
    """A FleetState of vessels at rest at x = row index (map ENU), heading east."""
    from lotusim_interfaces.msg import FleetState

    msg = FleetState(worker=worker, names=names)
    msg.header.stamp.sec = int(t_s)
    msg.header.stamp.nanosec = int(round((t_s - int(t_s)) * 1e9))
    n = len(names)
    msg.position = [float(v) for i in range(n) for v in (i, 0.0, 0.0)]
    msg.orientation = [0.0, 0.0, 0.0, 1.0] * n
    msg.twist = [0.0] * (6 * n)
    return msg


def test_fleet_state_intake_steps_each_controller_at_the_host_rate_spread_over_the_period() -> None:
    """state_source fleet_state: 50 Hz fleet states, a 10 Hz host: each controller takes one state per 0.1 s,
    the k-th one added 0.02 k s later in the period (PHASES groups), the first at its phase; its own row, in NED."""
    node = _Node()
    node.state_rate_hz = 10.0
    made = [_Recorder(node, f"auv{k}", {"model": "remus100", "state_source": "fleet_state"}) for k in range(3)]
    intake = node._lotusim_state_intake
    assert node.destroyed == [] and len(intake.members) == 3
    names = ["ship", "auv2", "auv0", "auv1"]  # the worker's order, not the host's; "ship" is not hosted here
    for i in range(50):  # 0 .. 0.98 s
        intake.take(_fleet_state(0.02 * i, names))
    for k, c in enumerate(made):
        stamps = [t for t, _h in c.steps]
        assert stamps == pytest.approx([0.02 * k + 0.1 * j for j in range(10)])  # the first at its phase
        assert [h for _t, h in c.steps] == pytest.approx([0.0] + [0.1] * 9)
        assert c.odom_count == len(c.steps)
        row = names.index(c.vessel)
        assert c.state.position_ned_m.tolist() == [0.0, float(row), -0.0]  # ENU x = row -> NED y (east)
        assert c.state.rpy_ned_rad[2] == pytest.approx(math.pi / 2)  # facing east: NED heading 90 deg
    made[1].close()
    before = [len(c.steps) for c in made]
    intake.take(_fleet_state(0.5, names))  # a jump back (a checkpoint restore): a new period for the others
    assert [len(c.steps) for c in made] == [before[0] + 1, before[1], before[2] + 1]
    intake.take(_fleet_state(0.6, ["auv0"], worker="worker_1"))  # another worker's fleet state has auv0 now
    assert made[0].steps[-1][0] == pytest.approx(0.6)
