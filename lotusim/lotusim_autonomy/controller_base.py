"""Helpers shared by the vessel controllers (the contract is in controller_host.py): typed reads of a controller's
params dict (and of its vessel's model), the endpoints a controller creates on its host node, the start, close and
odometry intake every controller shares (`VesselController`), dotted ROS parameter names to nested params, the
standalone one-controller node and its main()."""

from __future__ import annotations

import dataclasses
import struct
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

import yaml
from nav_msgs.msg import Odometry
from rclpy.node import Node
from std_msgs.msg import Float64, Float64MultiArray, MultiArrayDimension

from lotusim_autonomy.fleet_state_intake import FleetStateIntake
from lotusim_autonomy.odometry import NedState, from_odometry, is_finite, step_since
from lotusim_core.base import safe_yaml
from lotusim_core.base.catalogue import load_vehicle
from lotusim_core.base.geodesy import GeodeticOrigin
from lotusim_core.base.validation import ConfigError, Validator, is_number, join_key
from lotusim_core.base.vehicle_spec import VehicleSpec
from lotusim_core.ros.node_runner import run_node_main, with_sim_time
from lotusim_core.ros.prepacked import raw_publish

DEFAULT_ORIGIN = GeodeticOrigin(48.3904, -4.4861, 0.0)  # the MAS server's default origin (Brest)
COMMON_KEYS = ("model", "origin_latitude_deg", "origin_longitude_deg", "origin_altitude_m", "setpoints")
# node parameters that are not controller params (rclpy declares the last two on every node)
ROS_ONLY_KEYS = ("vessel", "controllers_yaml", "use_sim_time", "start_type_description_service")


# where a controller's states come from: its <vessel>/odom topic, or its vessel's rows of /lotusim/fleet_state (a
# controller host's default: its `state_source` parameter; lotusim_autonomy.fleet_state_intake)
STATE_SOURCES = ("odom", "fleet_state")
DEFAULT_STATE_RATE_HZ = 10.0  # the rate a host's controllers step on fleet states: physics.odom_rate_hz's default

GainsT = TypeVar("GainsT")
FLOAT64_CDR_HEADER = b"\x00\x01\x00\x00"  # CDR encapsulation: little endian, no options
_DOUBLE = struct.Struct("<d")


class ControllerConfigError(ConfigError):
    """A controller's params, or a host's `controllers_yaml`, refused: where (`<type> <vessel>`, or empty), key,
    reason (lotusim_core.base.validation)."""


class ParamReader:
    """Typed reads from a controller's params dict, with `where: key: reason` errors (ControllerConfigError,
    through the one validator) and a check for unknown keys (a misspelt gain must not be silently ignored)."""

    def __init__(self, params: Mapping[str, Any], where: str) -> None:
        self.params = dict(params)
        self.where = where
        self.check = Validator(where, ControllerConfigError)
        self.used: set[str] = set(COMMON_KEYS) | set(ROS_ONLY_KEYS)

    def number(self, key: str, default: float, low: float = -float("inf"), high: float = float("inf")) -> float:
        self.used.add(key)
        value = self.params.get(key, default)
        if not is_number(value) or not (low <= float(value) <= high):
            raise self.check.fail(key, f"expected a number in [{low}, {high}], got {value!r}")
        return float(value)

    def text(self, key: str, default: str, choices: Sequence[str] | None = None) -> str:
        self.used.add(key)
        value = self.params.get(key, default)
        if not isinstance(value, str) or (choices is not None and value not in choices):
            expected = f"one of {tuple(choices)}" if choices is not None else "a string"
            raise self.check.fail(key, f"expected {expected}, got {value!r}")
        return value

    def gains(self, cls: type[GainsT], low: float = -float("inf"), choices: Sequence[str] = ()) -> GainsT:
        """A gains dataclass with every field read under its own name (the field's default when absent): numbers
        >= low, text fields one of `choices`."""
        defaults = cls()
        values = {}
        for f in dataclasses.fields(cls):
            default = getattr(defaults, f.name)
            if isinstance(default, str):
                values[f.name] = self.text(f.name, default, choices or None)
            else:
                values[f.name] = self.number(f.name, default, low)
        return cls(**values)

    def model(self) -> str:
        value = self.params.get("model")
        if not isinstance(value, str) or not value:
            raise self.check.fail("model", f"expected the vessel's catalogue model name, got {value!r}")
        return value

    def vehicle(self, cannot_drive: Callable[[VehicleSpec], str | None]) -> VehicleSpec:
        """The catalogue vehicle named by `model`; ValueError `where: model: reason` if the controller cannot
        drive it (cannot_drive returns the reason, or None)."""
        spec = load_vehicle(self.model())
        reason = cannot_drive(spec)
        if reason is not None:
            raise self.check.fail("model", reason)
        return spec

    def origin(self) -> GeodeticOrigin:
        return GeodeticOrigin(
            self.number("origin_latitude_deg", DEFAULT_ORIGIN.latitude_deg, -90.0, 90.0),
            self.number("origin_longitude_deg", DEFAULT_ORIGIN.longitude_deg, -180.0, 360.0),
            self.number("origin_altitude_m", DEFAULT_ORIGIN.altitude_m),
        )

    def setpoints(self) -> dict[str, Any]:
        value = self.params.get("setpoints") or {}
        if not isinstance(value, Mapping):
            raise self.check.fail("setpoints", f"expected a mapping, got {value!r}")
        return dict(value)

    def finish(self) -> None:
        """Raise if params holds a key nobody read."""
        unknown = sorted(set(self.params) - self.used)
        if unknown:
            known = sorted(self.used - set(ROS_ONLY_KEYS))
            raise self.check.fail("", f"unknown parameter(s) {unknown}; expected some of {known}")


def parse_controllers_yaml(text: str) -> list[dict[str, Any]]:
    """A host's `controllers_yaml` parameter: a list of {type: str, vessel: str, params: mapping (optional)};
    ControllerConfigError `controllers_yaml[i]...: reason` otherwise."""
    check = Validator("", ControllerConfigError)
    try:
        data = safe_yaml.load(text) if text.strip() else []
    except yaml.YAMLError as exc:
        raise check.fail("controllers_yaml", f"not valid YAML ({exc})") from None
    if not isinstance(data, list):
        raise check.fail("controllers_yaml", f"expected a list of {{type, vessel, params}}, got {type(data).__name__}")
    out = []
    for i, item in enumerate(data):
        key = join_key("controllers_yaml", i)
        if not isinstance(item, Mapping) or set(item) - {"type", "vessel", "params"}:
            raise check.fail(key, f"expected a mapping with keys type, vessel, params; got {item!r}")
        kind, vessel, params = item.get("type"), item.get("vessel"), item.get("params") or {}
        if not isinstance(kind, str) or not isinstance(vessel, str) or not vessel:
            raise check.fail(key, f"type and vessel: expected strings, got {kind!r}, {vessel!r}")
        if not isinstance(params, Mapping):
            raise check.fail(f"{key}.params", f"expected a mapping, got {params!r}")
        out.append({"type": kind, "vessel": vessel, "params": dict(params)})
    return out


def status_message(label: str, values: Sequence[float]) -> Float64MultiArray:
    """A controller's status: one row of floats whose fields the label names (`<vessel>/<controller>/status`)."""
    out = Float64MultiArray()
    out.layout.dim = [MultiArrayDimension(label=label, size=len(values), stride=len(values))]
    out.data = [float(v) for v in values]
    return out


class Endpoints:
    """The publishers, subscriptions and services one controller creates on its host node; close() destroys them
    all, so that a host can drop one controller and keep the others."""

    def __init__(self, node: Node) -> None:
        self.node = node
        self._made: list[tuple[str, Any]] = []

    def publisher(self, msg_type: type, topic: str, qos: Any = 10) -> Any:
        return self._keep("publisher", self.node.create_publisher(msg_type, topic, qos))

    def command(self, topic: str) -> Callable[[float], None]:
        """A std_msgs/Float64 actuator command publisher as a function of the value: the message serialized by
        hand (CDR little endian: the 4-byte header, then the double) and written raw, a third of the cost of
        building and publishing a Float64 (a host of ~50 controllers at 50 Hz sends thousands a second). On a
        host with a command outbox (`node.outbox`, lotusim_autonomy.command_outbox) the value is held there and
        sent with the other controllers' commands in one message."""
        publisher = self.publisher(Float64, topic)
        send = raw_publish(publisher)
        publish = lambda value: send(FLOAT64_CDR_HEADER + _DOUBLE.pack(value))  # noqa: E731
        outbox = getattr(self.node, "outbox", None)
        if outbox is not None and topic.endswith("/cmd"):
            return outbox.writer(topic.removesuffix("/cmd"), publisher, publish)
        return publish

    def subscription(self, msg_type: type, topic: str, callback: Callable, qos: Any = 10) -> Any:
        return self._keep("subscription", self.node.create_subscription(msg_type, topic, callback, qos))

    def service(self, srv_type: type, name: str, callback: Callable) -> Any:
        return self._keep("service", self.node.create_service(srv_type, name, callback))

    def _keep(self, kind: str, entity: Any) -> Any:
        self._made.append((kind, entity))
        return entity

    def close(self) -> None:
        for kind, entity in reversed(self._made):
            getattr(self.node, f"destroy_{kind}")(entity)
        self._made.clear()


class VesselController:
    """What every vessel controller on a host shares (contract: controller_host.py): its node, vessel, model and
    endpoints (`open`, the start of its __init__), `close`, and the intake of its states that steps it
    (`listen_for_states`: its odometry topic or the host's fleet states; each state counted, taken by take_state,
    then `control(state, h)`). A subclass sets TYPE and cannot_drive."""

    TYPE = ""

    @classmethod
    def cannot_drive(cls, spec: VehicleSpec) -> str | None:
        """Why this controller cannot drive the vehicle, or None."""
        return None

    def open(self, node: Node, vessel: str, params: Mapping[str, Any]) -> tuple[ParamReader, VehicleSpec]:
        """The start of a controller's __init__: node, vessel, model (checked by cannot_drive), its Endpoints, no
        state yet. Returns the reader of its own params (errors `<TYPE> <vessel>: key: reason`) and the vehicle."""
        self.node, self.vessel = node, vessel
        read = ParamReader(params, f"{self.TYPE} {vessel}")
        self.model = read.model()
        spec = read.vehicle(self.cannot_drive)
        self.state_source = read.text("state_source", getattr(node, "default_state_source", "odom"), STATE_SOURCES)
        self._endpoints = Endpoints(node)
        self._intake: FleetStateIntake | None = None
        self.state: NedState | None = None
        self.updates = 0  # control steps done
        self.odom_count = 0  # states handled (odometry messages or fleet-state rows; the first initialises h)
        return read, spec

    def listen_for_states(self) -> None:
        """Take the vessel's states from its `<vessel>/odom` topic (depth 1: a host that lags steps on the newest
        state), or with state_source fleet_state from the host's FleetStateIntake at the host's
        `state_rate_hz`."""
        if self.state_source == "fleet_state":
            rate_hz = float(getattr(self.node, "state_rate_hz", DEFAULT_STATE_RATE_HZ))
            self._intake = FleetStateIntake.of(self.node, rate_hz)
            self._intake.add(self)
        else:
            self._endpoints.subscription(Odometry, f"{self.vessel}/odom", self._on_odom, 1)

    def close(self) -> None:
        """Destroy this controller's publishers, subscriptions and services on the host node."""
        if self._intake is not None:
            self._intake.remove(self)
            self._intake = None
        self._endpoints.close()

    def _on_odom(self, msg: Any) -> None:
        """A nav_msgs/Odometry of the vessel, taken as its new state (take_state)."""
        self.take_state(from_odometry(msg))

    def take_state(self, state: NedState) -> None:
        """A new state of the vessel: counted; unless skip_state, taken as `state` (a non-finite one is logged
        and dropped: a controller must not step on NaN) and passed to control(state, sim seconds since the
        previous state; 0 for the first)."""
        self.odom_count += 1
        if self.skip_state(state.t_s):
            return
        if not is_finite(state):
            self.node.get_logger().warning(f"{self.vessel}: non-finite odometry ignored")
            return
        h = step_since(self.state, state)
        self.state = state
        self.control(state, h)

    def skip_state(self, t_s: float) -> bool:
        """Whether to leave the state stamped t_s (sim s) untaken (none by default)."""
        return False

    def control(self, s: NedState, h: float) -> None:
        """One control step on the new state s, h sim seconds after the previous one (0 for the first)."""
        raise NotImplementedError


def nest(flat: Mapping[str, Any]) -> dict[str, Any]:
    """{"setpoints.depth_m": 10, "model": "x"} -> {"setpoints": {"depth_m": 10}, "model": "x"}."""
    out: dict[str, Any] = {}
    for key, value in flat.items():
        parts = key.split(".")
        d = out
        for p in parts[:-1]:
            d = d.setdefault(p, {})
        d[parts[-1]] = value
    return out


class SingleControllerNode(Node):
    """A node that runs one controller (the `ros2 run lotusim <type>` executables): its ROS parameters, dotted
    names nested, are the controller's params; `vessel` names the vessel."""

    def __init__(self, cls: type, **node_kwargs) -> None:
        overrides = with_sim_time(node_kwargs.pop("parameter_overrides", []))
        super().__init__(
            node_kwargs.pop("node_name", cls.TYPE),
            parameter_overrides=overrides,
            allow_undeclared_parameters=True,
            automatically_declare_parameters_from_overrides=True,
            **node_kwargs,
        )
        flat = {name: p.value for name, p in self._parameters.items()}
        vessel = flat.get("vessel") or ""
        if not isinstance(vessel, str) or not vessel:
            raise ValueError(f"{cls.TYPE}: parameter vessel: expected the vessel's name, got {vessel!r}")
        params = nest({k: v for k, v in flat.items() if k not in ROS_ONLY_KEYS and not k.startswith("qos_overrides.")})
        self.controller = cls(self, vessel, params)

    def close(self) -> None:
        close = getattr(self.controller, "close", None)
        if close is not None:
            close()


def standalone_node(cls: type) -> type[SingleControllerNode]:
    """The node class `<cls name>Node` of a `ros2 run lotusim <type>` executable: one cls controller, its params
    from the node's ROS parameters."""

    def __init__(self, **node_kwargs) -> None:
        SingleControllerNode.__init__(self, cls, **node_kwargs)

    doc = f"The standalone node: one {cls.TYPE}, its params from the node's ROS parameters."
    return type(
        f"{cls.__name__}Node",
        (SingleControllerNode,),
        {"__init__": __init__, "__doc__": doc, "__module__": cls.__module__},
    )


def main_for(make_node: Callable[[], Node], what: str, args: list[str] | None = None) -> None:
    """`main()` of a controller executable: a parameter error ends the process with its message, no traceback."""
    run_node_main(make_node, args, refused=(ValueError,), what=what)
