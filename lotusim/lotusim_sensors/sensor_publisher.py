"""sensor_publisher node: turns /lotusim/fleet_state + the environment into per-vessel sensor messages.

Time: every sensor is sampled in **sim time** from the FleetState stamps (not wall timers): a sensor of period T
first samples at the first state after its vessel appears, then at the first state whose stamp reaches the
previous due time + T (integer nanoseconds, so a 50 Hz IMU on a 100 Hz physics step publishes exactly every
second step). A sensor cannot be faster than the fleet-state rate.
Vessels: a vessel exists while its name is in its worker's latest FleetState; when it disappears its
publishers are destroyed. Its sensor suite is the `sensors:` mapping of its catalogue model, merged with the
`sensors:` of the overrides it was created with (FleetCommand), then with its entry in the `vessels_yaml`
parameter (docs/sensors.md). Model and creation overrides come from the worker's /lotusim/<worker>/list_vessels
service; the model may also be given by `vessels_yaml`, else the name (`<model>` or `<model>_<k>`) or
`default_model` tells it.
Models: lotusim_sensors.* (batched over every vessel due at this step); this module only wires ROS. Publishing is
the cost: the high-rate sensors publish pre-serialized messages patched in place (lotusim_core.ros.cdr).

Topics (per vessel, relative `<vessel>/...`, in the node's namespace; see docs/sensors.md): imu/data
(sensor_msgs/Imu), mag (sensor_msgs/MagneticField), pressure (sensor_msgs/FluidPressure), depth
(geometry_msgs/PoseWithCovarianceStamped, z = -depth in `map`), gps/fix (sensor_msgs/NavSatFix), gps/vel
(geometry_msgs/TwistWithCovarianceStamped, ENU), dvl (geometry_msgs/TwistWithCovarianceStamped), dvl/altitude and
altimeter (sensor_msgs/Range), ais (lotusim_interfaces/AIS, also on /lotusim/ais), acoustic/range
(lotusim_interfaces/AcousticRange), modem/rx (lotusim_interfaces/AcousticMessage, from other vessels' modem/tx).
Frames: a sensor's messages are stamped in its mount frame `<vessel>/<sensor>_link` (depth and gps/vel: `map`),
which it latches on /tf_static under `<vessel>/base_link` (lotusim_core.ros.static_frames).
"""

from __future__ import annotations

import functools
import heapq
import itertools
import json
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import yaml
from builtin_interfaces.msg import Time
from geometry_msgs.msg import PoseWithCovarianceStamped, TwistWithCovarianceStamped
from rclpy.clock import Clock, ClockType
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import FluidPressure, Imu, MagneticField, NavSatFix, NavSatStatus, Range

from lotusim_core.base import safe_yaml
from lotusim_core.base.catalogue import list_models, load_vehicle
from lotusim_core.base.geodesy import GeodeticOrigin, enu_to_geodetic
from lotusim_core.ros import ros_names, static_frames
from lotusim_core.ros.cdr import RawMessage
from lotusim_core.ros.endpoints import QUIET_PUBLISHER, QUIET_SUBSCRIPTION
from lotusim_core.ros.node_runner import run_node_main
from lotusim_core.ros.ros_arrays import from_float64_array
from lotusim_env.environment import Environment, build_environment
from lotusim_interfaces.msg import AIS, AcousticMessage, AcousticRange, EnvironmentConfig, FleetState, VesselInfo
from lotusim_interfaces.srv import Checkpoint, ListVessels
from lotusim_sensors import acoustic, ais, dvl, gps, imu, noise, pressure, rotations
from lotusim_sensors import checkpoint as sensor_checkpoint
from lotusim_sensors.suite import KINDS, merge_sensors, numeric_keys, parse_suite

LIST_RETRY_S = 5.0  # wall seconds before an unanswered list_vessels request is sent again
STAMP = ["header.stamp.sec", "header.stamp.nanosec"]
XYZ = ("x", "y", "z")
# Fields rewritten at each sample in the pre-serialized messages (lotusim_core.ros.cdr), in the order the values
# are passed.
IMU_FIELDS = [*STAMP, *(f"orientation.{a}" for a in "xyzw"), *(f"angular_velocity.{a}" for a in XYZ),
              *(f"linear_acceleration.{a}" for a in XYZ)]  # fmt: skip
MAG_FIELDS = [*STAMP, *(f"magnetic_field.{a}" for a in XYZ)]
PRESSURE_FIELDS = [*STAMP, "fluid_pressure", "variance"]
DEPTH_FIELDS = [*STAMP, "pose.pose.position.z"]
FIX_FIELDS = [*STAMP, "status.status", "latitude", "longitude", "altitude", "position_covariance_type"]
TWIST_FIELDS = [*STAMP, *(f"twist.twist.linear.{a}" for a in XYZ)]
DVL_FIELDS = [*TWIST_FIELDS, "twist.covariance[]"]
RANGE_FIELDS = [*STAMP, "range"]

LATCHED = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE)
SENSOR_QOS = 10
NS_PER_S = 1_000_000_000


def _stamp(msg_header, t_ns: int) -> None:
    msg_header.stamp.sec, msg_header.stamp.nanosec = divmod(int(t_ns), NS_PER_S)


def _time(t_ns: int) -> Time:
    """builtin_interfaces/Time of a sim time in ns (built once per step, shared by that step's messages)."""
    sec, nanosec = divmod(int(t_ns), NS_PER_S)
    return Time(sec=sec, nanosec=nanosec)


def _diag3(values) -> list[float]:
    a, b, c = (float(v) for v in values)
    return [a, 0.0, 0.0, 0.0, b, 0.0, 0.0, 0.0, c]


@dataclass
class Bank:
    """Per-slot arrays of one sensor kind: presence, schedule, noise stream, parameters, state, publishers."""

    kind: str
    capacity: int
    present: np.ndarray = field(init=False)
    next_due_ns: np.ndarray = field(init=False)
    last_ns: np.ndarray = field(init=False)
    counter: np.ndarray = field(init=False)
    key: np.ndarray = field(init=False)
    params: dict[str, np.ndarray] = field(init=False)
    state: dict[str, np.ndarray] = field(default_factory=dict)
    extra: dict[int, dict[str, Any]] = field(default_factory=dict)  # non-numeric parameters per slot
    pubs: dict[int, tuple] = field(default_factory=dict)  # slot -> publishers
    msgs: dict[int, tuple] = field(default_factory=dict)  # slot -> reusable messages

    def __post_init__(self) -> None:
        self.present = np.zeros(self.capacity, dtype=bool)
        self.next_due_ns = np.zeros(self.capacity, dtype=np.int64)
        self.last_ns = np.full(self.capacity, -1, dtype=np.int64)
        self.counter = np.zeros(self.capacity, dtype=np.uint64)
        self.key = np.zeros(self.capacity, dtype=np.uint64)
        self.params = {k: np.zeros(self.capacity) for k in numeric_keys(self.kind)}
        if self.kind == "imu":
            self.state = {"accel_bias": np.zeros((self.capacity, 3)), "gyro_bias": np.zeros((self.capacity, 3))}
        elif self.kind == "gps":
            self.state = {"had_fix": np.zeros(self.capacity, dtype=bool)}

    def grow(self, capacity: int) -> None:
        """Enlarge every per-slot array to `capacity` rows (keeping the existing rows)."""

        def pad(a: np.ndarray) -> np.ndarray:
            out = np.zeros((capacity, *a.shape[1:]), dtype=a.dtype)
            out[: len(a)] = a
            return out

        for name in ("present", "next_due_ns", "last_ns", "counter", "key"):
            setattr(self, name, pad(getattr(self, name)))
        self.params = {k: pad(v) for k, v in self.params.items()}
        self.state = {k: pad(v) for k, v in self.state.items()}
        self.capacity = capacity


class SensorPublisher(Node):
    """ROS wiring of the lotusim_sensors models for every vessel of every dynamics worker."""

    def __init__(self, **node_kwargs) -> None:
        super().__init__("sensor_publisher", **node_kwargs)
        self._seed_param = int(self.declare_parameter("seed", -1).value)
        self._vessels_cfg = self._parse_vessels_yaml(self.declare_parameter("vessels_yaml", "").value)
        self._default_model = str(self.declare_parameter("default_model", "").value)
        self._origin_param = GeodeticOrigin(
            float(self.declare_parameter("origin_latitude_deg", 0.0).value),
            float(self.declare_parameter("origin_longitude_deg", 0.0).value),
            float(self.declare_parameter("origin_altitude_m", 0.0).value),
        )
        declination = float(self.declare_parameter("magnetic_declination_deg", 0.0).value)
        inclination = float(self.declare_parameter("magnetic_inclination_deg", 60.0).value)
        intensity_nt = float(self.declare_parameter("magnetic_intensity_nt", 50000.0).value)
        self._field_enu_t = imu.earth_field_enu_t(declination, inclination, intensity_nt * 1e-9)
        self._sound_speed = float(self.declare_parameter("sound_speed_mps", acoustic.SOUND_SPEED_MPS).value)
        self._beacons = self._parse_beacons(self.declare_parameter("acoustic_beacons_yaml", "").value)

        self._env: Environment = build_environment(None)
        self._seed = self._seed_param if self._seed_param >= 0 else 0
        capacity = 16
        self._slot_of: dict[str, int] = {}
        self._names: list[str | None] = [None] * capacity
        self._free: list[int] = list(range(capacity - 1, -1, -1))
        self._pos = np.zeros((capacity, 3))
        self._quat = np.tile([0.0, 0.0, 0.0, 1.0], (capacity, 1))
        self._twist = np.zeros((capacity, 6))
        self._accel = np.zeros((capacity, 6))
        self._current = np.zeros((capacity, 3))
        self._alive = np.zeros(capacity, dtype=bool)
        self._worker_names: dict[str, tuple[str, ...]] = {}
        self._worker_slots: dict[str, np.ndarray] = {}
        self._owner: dict[str, str] = {}  # vessel -> worker that publishes it
        self._last_worker = ""
        # vessel -> (model, `sensors:` of its creation overrides), from its worker's list_vessels
        self._listed: dict[str, tuple[str, dict | None]] = {}
        self._unsuited: set[str] = set()  # vessels without sensors until their worker's listing tells the model
        self._list_clients: dict[str, Any] = {}
        self._pending: dict[str, str] = {}  # vessel -> worker whose list_vessels reply it waits for
        # workers with a list_vessels request in flight: (its future, monotonic wall time sent); a request not
        # answered within LIST_RETRY_S is sent again (an answer can be lost while discovery is still matching a
        # new client, docs/simulation.md), or its vessels would wait for their sensors for ever
        self._inflight: dict[str, tuple[Any, float]] = {}
        self.create_timer(1.0, self._ask_again, clock=Clock(clock_type=ClockType.STEADY_TIME))
        self._model_names = sorted(list_models(), key=len, reverse=True)
        self._banks = {kind: Bank(kind, capacity) for kind in KINDS}
        self._modem_subs: dict[int, Any] = {}
        self._modem_queue: list[tuple[int, int, str, AcousticMessage]] = []
        self._modem_seq = itertools.count()
        self._t_ns = 0
        self._warned: set[str] = set()
        self.published = 0  # messages published since start (benchmarks, tests)

        self._ais_all = self.create_publisher(AIS, "/lotusim/ais", SENSOR_QOS)
        self._static_frames = static_frames.StaticFrames(self)  # <vessel>/base_link -> <vessel>/<sensor>_link
        # depth 100: lockstep bursts (StepFor, Step with many steps) publish many states back to back
        self.create_subscription(FleetState, "/lotusim/fleet_state", self._on_fleet_state, 100)
        self.create_subscription(EnvironmentConfig, "/lotusim/environment", self._on_environment, LATCHED)
        # checkpoints (lotusim_sensors.checkpoint): saved and restored by name, asked by the MAS server
        self.checkpoint_dir = str(self.declare_parameter("checkpoint_dir", "").value)
        self._restored: dict[str, dict[str, dict]] = {}  # vessel -> kind -> saved sensor state not yet applied
        self.create_service(Checkpoint, "/lotusim/sensors/checkpoint", self._on_checkpoint)

    # --- configuration ------------------------------------------------------------------------------------------
    def _parse_vessels_yaml(self, text: str) -> dict[str, dict]:
        if not text.strip():
            return {}
        try:  # JSON (what the scenario planner writes: 100x faster to parse than YAML for 1000 vessels) or YAML
            data = json.loads(text)
        except json.JSONDecodeError:
            try:
                data = safe_yaml.load(text)
            except yaml.YAMLError as exc:
                raise ValueError(f"parameter vessels_yaml: invalid YAML ({exc})") from None
        if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
            found = type(data).__name__ if not isinstance(data, dict) else "a non-mapping vessel entry"
            expected = "{vessel: {model: ..., sensors: {...}}}"
            raise ValueError(f"parameter vessels_yaml: expected {expected}, got {found}")
        return data

    def _parse_beacons(self, text: str) -> dict[str, np.ndarray]:
        data = safe_yaml.load(text) if text.strip() else {}
        beacons = {}
        for name, xyz in (data or {}).items():
            point = np.asarray(xyz, dtype=float)
            if point.shape != (3,) or not np.all(np.isfinite(point)):
                raise ValueError(
                    f"parameter acoustic_beacons_yaml.{name}: expected [x, y, z] in map ENU m, got {xyz!r}"
                )
            beacons[str(name)] = point
        return beacons

    def _on_environment(self, msg: EnvironmentConfig) -> None:
        try:
            env = build_environment(safe_yaml.load(msg.config_yaml) or {})
        except (ValueError, yaml.YAMLError) as exc:
            self.get_logger().error(
                f"/lotusim/environment revision {msg.revision} rejected, keeping the previous: {exc}"
            )
            return
        self._env = env
        seed = self._seed_param if self._seed_param >= 0 else int(env.seed)
        if seed != self._seed:  # new noise streams: restart every vessel's sensors (keys, turn-on biases)
            self._seed = seed
            for name, slot in list(self._slot_of.items()):
                self._unconfigure(slot)
                self._configure(name, slot, self._owner.get(name, ""))

    @property
    def origin(self) -> GeodeticOrigin:
        """Geodetic origin of `map`: the environment's `origin` if set, else the node parameters."""
        return self._env.origin if self._env.origin is not None else self._origin_param

    def _catalogue_sensors(self, model: str) -> dict:
        """The `sensors:` mapping of a catalogue model (lotusim_core.base.catalogue, validated and cached there)."""
        return load_vehicle(model).sensors

    def _model_from_name(self, name: str) -> str:
        for model in self._model_names:
            if name == model or (name.startswith(model + "_") and name[len(model) + 1 :].isdigit()):
                return model
        return self._default_model

    # --- vessel registry ----------------------------------------------------------------------------------------
    def _slots(self, worker: str, names: tuple[str, ...]) -> np.ndarray:
        if self._worker_names.get(worker) == names:
            return self._worker_slots[worker]
        previous = set(self._worker_names.get(worker, ()))
        for gone in previous - set(names):
            if self._slot_of.get(gone) is not None and self._owner.get(gone) == worker:
                self._remove_vessel(gone)
        slots = np.empty(len(names), dtype=np.intp)
        for i, name in enumerate(names):
            slot = self._slot_of.get(name)
            if slot is None:
                slot = self._add_vessel(name, worker)
            self._owner[name] = worker
            slots[i] = slot
        self._worker_names[worker], self._worker_slots[worker] = names, slots
        return slots

    def _add_vessel(self, name: str, worker: str) -> int:
        if not self._free:
            self._grow(2 * len(self._names))
        slot = self._free.pop()
        self._slot_of[name], self._names[slot] = slot, name
        self._alive[slot] = True
        self._configure(name, slot, worker)
        return slot

    def _remove_vessel(self, name: str) -> None:
        slot = self._slot_of.pop(name)
        self._owner.pop(name, None)
        self._listed.pop(name, None)  # a later vessel of the same name may be another model
        self._pending.pop(name, None)
        self._unsuited.discard(name)
        self._names[slot] = None
        self._alive[slot] = False
        self._unconfigure(slot)
        self._free.append(slot)
        self._queue_drop(name)

    def _grow(self, capacity: int) -> None:
        old = len(self._names)
        self._names += [None] * (capacity - old)
        self._free += list(range(capacity - 1, old - 1, -1))
        for attr in ("_pos", "_twist", "_accel", "_current", "_alive"):
            a = getattr(self, attr)
            out = np.zeros((capacity, *a.shape[1:]), dtype=a.dtype)
            out[:old] = a
            setattr(self, attr, out)
        quat = np.tile([0.0, 0.0, 0.0, 1.0], (capacity, 1))
        quat[:old] = self._quat
        self._quat = quat
        for bank in self._banks.values():
            bank.grow(capacity)

    def _suite_for(self, name: str, worker: str) -> tuple[dict[str, dict], str]:
        """(parsed suite, model) of a new vessel; {} while its worker's list_vessels reply is awaited for its model.

        The suite: the model's catalogue `sensors:`, then the `sensors:` of the overrides the vessel was created
        with (from the worker's listing), then this node's `vessels_yaml` entry for it. A vessel whose model
        `vessels_yaml` gives starts at once; its creation overrides, if any, apply when the listing arrives."""
        entry = self._vessels_cfg.get(name, {})
        listed = self._listed.get(name)
        if listed is None and self._ask_worker(name, worker) and not entry.get("model"):
            self._unsuited.add(name)
            return {}, ""
        listed_model, spawn_sensors = listed or ("", None)
        model = entry.get("model") or listed_model or self._model_from_name(name)
        base = merge_sensors(self._catalogue_sensors(model) if model else {}, spawn_sensors)
        return parse_suite(merge_sensors(base, entry.get("sensors")), f"vessel {name} (model {model!r}) sensors"), model

    def _ask_worker(self, name: str, worker: str) -> bool:
        """Ask the vessel's worker for its listing (one request in flight per worker answers every vessel that
        waits); False if the worker's list_vessels service is not there."""
        client = self._list_client(worker)
        if client is None or not client.service_is_ready():
            return False
        self._pending[name] = worker
        if worker not in self._inflight:
            self._send_list_request(worker, client)
        return True

    def _send_list_request(self, worker: str, client) -> None:
        future = client.call_async(ListVessels.Request())
        self._inflight[worker] = (future, time.monotonic())
        future.add_done_callback(lambda f, w=worker: self._on_vessel_list(w, f))

    def _ask_again(self) -> None:
        """Re-send the list_vessels requests left unanswered for LIST_RETRY_S of wall time."""
        now = time.monotonic()
        for worker, (future, sent) in list(self._inflight.items()):
            if now - sent > LIST_RETRY_S and not future.done():
                client = self._list_clients[worker]
                client.remove_pending_request(future)
                self.get_logger().info(
                    f"no list_vessels answer from worker {worker} in {LIST_RETRY_S:.0f} s: asked again"
                )
                self._send_list_request(worker, client)

    @staticmethod
    def _spawn_sensors(info: VesselInfo) -> dict | None:
        """The `sensors:` mapping of the overrides a vessel was created with (None if there are none). The
        worker validated them against the catalogue when it created the vessel."""
        try:
            overrides = safe_yaml.load(info.overrides_yaml) if info.overrides_yaml.strip() else None
        except yaml.YAMLError:  # the worker refuses such overrides: a peer's listing, not ours
            return None
        sensors = overrides.get("sensors") if isinstance(overrides, dict) else None
        return sensors if isinstance(sensors, dict) else None

    def _list_client(self, worker: str):
        if not worker:
            return None
        if worker not in self._list_clients:
            self._list_clients[worker] = self.create_client(ListVessels, f"/lotusim/{worker}/list_vessels")
        return self._list_clients[worker]

    def _on_vessel_list(self, worker: str, future) -> None:
        self._inflight.pop(worker, None)  # (a request given up on never answers: its future was removed)
        try:
            vessels = future.result().vessels
        except Exception as exc:  # noqa: BLE001 - a failed query must not stop the node
            self.get_logger().warning(f"list_vessels failed ({exc}); vessels get their suite from their name")
            vessels = []
        listed = {}
        for info in vessels:
            try:
                listed[info.name] = (info.model, self._spawn_sensors(info))
            except yaml.YAMLError as exc:
                self.get_logger().error(f"vessel {info.name}: creation overrides ignored by the sensors ({exc})")
                listed[info.name] = (info.model, None)
        for name in [n for n, w in self._pending.items() if w == worker]:
            del self._pending[name]
            self._listed[name] = listed.get(name, ("", None))  # not listed (yet): suite from the name
            slot = self._slot_of.get(name)
            waited = name in self._unsuited
            self._unsuited.discard(name)
            if slot is not None and (waited or self._listed[name][1] is not None):
                self._unconfigure(slot)
                self._configure(name, slot, self._owner.get(name, ""))

    def _configure(self, name: str, slot: int, worker: str) -> None:
        try:
            suite, model = self._suite_for(name, worker)
        except (ValueError, OSError, yaml.YAMLError) as exc:
            self.get_logger().error(f"vessel {name}: no sensors ({exc})")
            return
        for kind, params in suite.items():
            bank = self._banks[kind]
            bank.present[slot] = True
            bank.next_due_ns[slot] = self._t_ns
            bank.last_ns[slot] = -1
            bank.counter[slot] = 0
            bank.key[slot] = noise.stream_key(self._seed, name, kind)
            for key in bank.params:
                bank.params[key][slot] = params[key]
            bank.extra[slot] = {k: v for k, v in params.items() if k not in bank.params}
            try:
                self._create_io(bank, name, slot)
            except Exception as exc:  # noqa: BLE001 - e.g. a name that is not a valid ROS topic token
                self.get_logger().error(f"vessel {name}: no sensors (cannot create the {kind} topics: {exc})")
                self._unconfigure(slot)
                return
        if "imu" in suite:
            n6 = noise.normal(np.array([noise.stream_key(self._seed, name, "imu/turn_on")]), [0], 6)
            p = {k: v[slot : slot + 1] for k, v in self._banks["imu"].params.items()}
            a, g = imu.turn_on_bias(p, n6)
            self._banks["imu"].state["accel_bias"][slot], self._banks["imu"].state["gyro_bias"][slot] = a[0], g[0]
        if "gps" in suite:
            self._banks["gps"].state["had_fix"][slot] = False
        self._static_frames.set(slot, static_frames.sensor_transforms(name, suite))
        if name in self._restored:
            self._apply_restored(name, slot)
        if suite:
            self.get_logger().debug(f"vessel {name} (model {model or '?'}): sensors {', '.join(suite)}")

    def _unconfigure(self, slot: int) -> None:
        self._static_frames.discard(slot)
        for bank in self._banks.values():
            if not bank.present[slot]:
                continue
            bank.present[slot] = False
            for pub in bank.pubs.pop(slot, ()):
                self.destroy_publisher(pub)
            bank.msgs.pop(slot, None)
            bank.extra.pop(slot, None)
        sub = self._modem_subs.pop(slot, None)
        if sub is not None:
            self.destroy_subscription(sub)

    def _create_io(self, bank: Bank, name: str, slot: int) -> None:
        """Publishers and reusable messages (constant fields and covariances filled once) of one sensor."""
        frame = ros_names.sensor_frame(name, bank.kind)

        def topic(relative: str) -> str:  # relative to the node's namespace (lotusim_core.ros.ros_names)
            return ros_names.vessel_name(name, relative)

        p = {k: float(v[slot]) for k, v in bank.params.items()}
        pub = functools.partial(self.create_publisher, event_callbacks=QUIET_PUBLISHER)  # lotusim_core.ros.endpoints
        if bank.kind == "imu":
            msg = Imu()
            msg.header.frame_id = frame
            period = 1.0 / p["rate_hz"]
            msg.linear_acceleration_covariance = _diag3([p["accel_noise_density"] ** 2 / period] * 3)
            msg.angular_velocity_covariance = _diag3([p["gyro_noise_density"] ** 2 / period] * 3)
            msg.orientation_covariance = _diag3([p["orientation_noise_std_rad"] ** 2] * 3)
            bank.pubs[slot] = (pub(Imu, topic("imu/data"), SENSOR_QOS),)
            bank.msgs[slot] = (RawMessage(msg, IMU_FIELDS),)
        elif bank.kind == "magnetometer":
            msg = MagneticField()
            msg.header.frame_id = frame
            msg.magnetic_field_covariance = _diag3([p["noise_std_t"] ** 2] * 3)
            bank.pubs[slot] = (pub(MagneticField, topic("mag"), SENSOR_QOS),)
            bank.msgs[slot] = (RawMessage(msg, MAG_FIELDS),)
        elif bank.kind == "pressure":
            fp, depth = FluidPressure(), PoseWithCovarianceStamped()
            fp.header.frame_id, depth.header.frame_id = frame, "map"
            depth.pose.covariance = [0.0] * 14 + [p["depth_noise_std_m"] ** 2] + [0.0] * 21
            depth.pose.pose.orientation.w = 1.0
            bank.pubs[slot] = (
                pub(FluidPressure, topic("pressure"), SENSOR_QOS),
                pub(PoseWithCovarianceStamped, topic("depth"), SENSOR_QOS),
            )
            bank.msgs[slot] = (RawMessage(fp, PRESSURE_FIELDS), RawMessage(depth, DEPTH_FIELDS))
        elif bank.kind == "gps":
            fix, vel = NavSatFix(), TwistWithCovarianceStamped()
            fix.header.frame_id, vel.header.frame_id = frame, "map"
            fix.status.service = NavSatStatus.SERVICE_GPS
            fix.position_covariance_type = NavSatFix.COVARIANCE_TYPE_DIAGONAL_KNOWN
            h, v = p["horizontal_noise_std_m"] ** 2, p["vertical_noise_std_m"] ** 2
            fix.position_covariance = _diag3([h, h, v])
            vv = p["velocity_noise_std_mps"] ** 2
            vel.twist.covariance = [vv if i in (0, 7, 14) else 0.0 for i in range(36)]
            bank.pubs[slot] = (
                pub(NavSatFix, topic("gps/fix"), SENSOR_QOS),
                pub(TwistWithCovarianceStamped, topic("gps/vel"), SENSOR_QOS),
            )
            bank.msgs[slot] = (RawMessage(fix, FIX_FIELDS), RawMessage(vel, TWIST_FIELDS))
        elif bank.kind == "dvl":
            twist, alt = TwistWithCovarianceStamped(), Range()
            twist.header.frame_id = alt.header.frame_id = frame
            alt.radiation_type = Range.ULTRASOUND
            alt.field_of_view = float(np.radians(2.0 * p["beam_tilt_deg"]))
            alt.min_range = p["min_range_m"] * float(np.cos(np.radians(p["beam_tilt_deg"])))
            alt.max_range = p["max_range_m"] * float(np.cos(np.radians(p["beam_tilt_deg"])))
            bank.pubs[slot] = (
                pub(TwistWithCovarianceStamped, topic("dvl"), SENSOR_QOS),
                pub(Range, topic("dvl/altitude"), SENSOR_QOS),
            )
            bank.msgs[slot] = (RawMessage(twist, DVL_FIELDS), RawMessage(alt, RANGE_FIELDS))
        elif bank.kind == "altimeter":
            alt = Range()
            alt.header.frame_id = frame
            alt.radiation_type = Range.ULTRASOUND
            alt.field_of_view = 0.1
            alt.min_range, alt.max_range = p["min_range_m"], p["max_range_m"]
            bank.pubs[slot] = (pub(Range, topic("altimeter"), SENSOR_QOS),)
            bank.msgs[slot] = (RawMessage(alt, RANGE_FIELDS),)
        elif bank.kind == "ais":
            msg = AIS(name=name, ais_class=AIS.CLASS_A if bank.extra[slot]["class"] == "A" else AIS.CLASS_B)
            msg.mmsi = int(bank.extra[slot]["mmsi"]) or ais.default_mmsi(name)
            msg.navigational_status = int(p["navigational_status"])
            bank.pubs[slot], bank.msgs[slot] = (pub(AIS, topic("ais"), SENSOR_QOS),), (msg,)
        elif bank.kind == "usbl":
            bank.pubs[slot] = (pub(AcousticRange, topic("acoustic/range"), SENSOR_QOS),)
        elif bank.kind == "modem":
            bank.pubs[slot] = (pub(AcousticMessage, topic("modem/rx"), SENSOR_QOS),)
            self._modem_subs[slot] = self.create_subscription(
                AcousticMessage,
                topic("modem/tx"),
                lambda m, n=name: self._on_modem_tx(n, m),
                SENSOR_QOS,
                event_callbacks=QUIET_SUBSCRIPTION,
            )

    # --- the step ------------------------------------------------------------------------------------------------
    def _warn_once(self, key: str, text: str) -> None:
        if key not in self._warned:
            self._warned.add(key)
            self.get_logger().warning(text)

    def _on_fleet_state(self, msg: FleetState) -> None:
        n = len(msg.names)
        arrays = {
            "position": (msg.position, 3),
            "orientation": (msg.orientation, 4),
            "twist": (msg.twist, 6),
            "accel": (msg.accel, 6),
        }
        bad = [f"{k} has {len(v)} values, expected {n} x {c}" for k, (v, c) in arrays.items() if len(v) != n * c]
        if bad:
            self._warn_once(f"shape/{msg.worker}", f"fleet_state from worker {msg.worker!r} ignored: {'; '.join(bad)}")
            return
        t_ns = msg.header.stamp.sec * NS_PER_S + msg.header.stamp.nanosec
        if t_ns < self._t_ns and msg.worker == self._last_worker:
            self._drop_schedule_after(t_ns)  # sim time went back (reset): restart the schedules
        self._t_ns, self._last_worker = t_ns, msg.worker
        slots = self._slots(msg.worker, tuple(msg.names))
        pos = from_float64_array(msg.position, 3)
        quat = from_float64_array(msg.orientation, 4)
        twist = from_float64_array(msg.twist, 6)
        accel = from_float64_array(msg.accel, 6)
        finite = (
            np.isfinite(pos).all(1) & np.isfinite(quat).all(1) & np.isfinite(twist).all(1) & np.isfinite(accel).all(1)
        )
        norm = np.linalg.norm(quat, axis=1)
        finite &= norm > 0.5
        if not finite.all():
            self._warn_once(f"nan/{msg.worker}", f"worker {msg.worker!r}: non-finite state rows skipped by the sensors")
        slots = slots[finite]
        self._pos[slots] = pos[finite]
        self._quat[slots] = quat[finite] / norm[finite, None]
        self._twist[slots] = twist[finite]
        self._accel[slots] = accel[finite]
        if len(msg.environment) == 6 * n:
            self._current[slots] = from_float64_array(msg.environment, 6)[finite, :3]
        for kind in ("imu", "magnetometer", "pressure", "gps", "dvl", "altimeter", "ais", "usbl"):
            bank = self._banks[kind]
            due = slots[bank.present[slots] & (bank.next_due_ns[slots] <= t_ns)]
            if not due.size:
                continue
            try:
                getattr(self, f"_sample_{kind}")(bank, due, t_ns)
            except Exception as exc:  # noqa: BLE001 - one failing sensor kind must not stop the others
                text = f"{kind} sampling failed at t = {t_ns} ns, retried every sim second: {exc!r}"
                self._warn_once(f"fail/{kind}/{type(exc).__name__}", text)
                bank.next_due_ns[due] = t_ns + NS_PER_S  # retry in 1 s of sim time
        self._deliver_modem(t_ns)

    def _drop_schedule_after(self, t_ns: int) -> None:
        for bank in self._banks.values():
            bank.next_due_ns[:] = np.minimum(bank.next_due_ns, t_ns)
            bank.last_ns[:] = -1
        self._modem_queue.clear()

    def _draw(self, bank: Bank, due: np.ndarray, dim: int) -> np.ndarray:
        """dim standard normals per due vessel from its stream (sample number = the sensor's counter)."""
        return noise.normal(bank.key[due], bank.counter[due], dim)

    def _schedule(self, bank: Bank, due: np.ndarray, t_ns: int, period_s: np.ndarray) -> None:
        period_ns = np.maximum(np.round(period_s * NS_PER_S).astype(np.int64), 1)
        nxt = bank.next_due_ns[due] + period_ns
        bank.next_due_ns[due] = np.where(nxt <= t_ns, t_ns + period_ns, nxt)
        bank.last_ns[due] = t_ns
        bank.counter[due] += np.uint64(1)

    def _params(self, bank: Bank, due: np.ndarray) -> dict[str, np.ndarray]:
        return {k: v[due] for k, v in bank.params.items()}

    def _sample_imu(self, bank: Bank, due: np.ndarray, t_ns: int) -> None:
        p = self._params(bank, due)
        last = bank.last_ns[due]
        dt = np.where(last >= 0, (t_ns - last) / NS_PER_S, 1.0 / p["rate_hz"])
        f, w, q, ab, gb = imu.imu_measure(
            p, bank.state["accel_bias"][due], bank.state["gyro_bias"][due], dt,
            self._quat[due], self._accel[due], self._twist[due], self._draw(bank, due, 15),
        )  # fmt: skip
        bank.state["accel_bias"][due], bank.state["gyro_bias"][due] = ab, gb
        sec, nsec = divmod(t_ns, NS_PER_S)
        rows = np.hstack([q, w, f]).tolist()
        for slot, r in zip(due.tolist(), rows, strict=True):
            bank.pubs[slot][0].publish(bank.msgs[slot][0].pack([sec, nsec, *r]))
        self.published += len(rows)
        self._schedule(bank, due, t_ns, 1.0 / p["rate_hz"])

    def _sample_magnetometer(self, bank: Bank, due: np.ndarray, t_ns: int) -> None:
        p = self._params(bank, due)
        b = imu.magnetometer_measure(p["noise_std_t"], self._field_enu_t, self._quat[due], self._draw(bank, due, 3))
        sec, nsec = divmod(t_ns, NS_PER_S)
        for slot, r in zip(due.tolist(), b.tolist(), strict=True):
            bank.pubs[slot][0].publish(bank.msgs[slot][0].pack([sec, nsec, *r]))
        self.published += len(due)
        self._schedule(bank, due, t_ns, 1.0 / p["rate_hz"])

    def _sample_pressure(self, bank: Bank, due: np.ndarray, t_ns: int) -> None:
        p = self._params(bank, due)
        mount = np.column_stack([p["x_m"], p["y_m"], p["z_m"]])
        where = pressure.sensor_positions_enu(self._pos[due], self._quat[due], mount)
        pa, std, depth = pressure.pressure_measure(
            where, p["depth_noise_std_m"], self._env.water_density_kgm3, self._draw(bank, due, 1)
        )
        sec, nsec = divmod(t_ns, NS_PER_S)
        for slot, pr, var, d in zip(due.tolist(), pa.tolist(), (std * std).tolist(), depth.tolist(), strict=True):
            (fp, dm), pubs = bank.msgs[slot], bank.pubs[slot]
            pubs[0].publish(fp.pack([sec, nsec, pr, var]))
            pubs[1].publish(dm.pack([sec, nsec, -d]))
        self.published += 2 * len(due)
        self._schedule(bank, due, t_ns, 1.0 / p["rate_hz"])

    def _sample_gps(self, bank: Bank, due: np.ndarray, t_ns: int) -> None:
        p = self._params(bank, due)
        draws = noise.normal(bank.key[due], bank.counter[due], 6)
        u = noise.uniform(bank.key[due] ^ np.uint64(0x5A5A5A5A), bank.counter[due], 1)
        s = gps.gps_measure(p, self._pos[due], self._quat[due], self._twist[due], self.origin, draws, u)
        had = bank.state["had_fix"][due]
        sec, nsec = divmod(t_ns, NS_PER_S)
        geodetic, velocity = s.geodetic.tolist(), s.velocity_enu_mps.tolist()
        count = 0
        for i, slot in enumerate(due.tolist()):
            fix_ok = bool(s.has_fix[i])
            if not fix_ok and not had[i]:
                continue  # no fix and the loss was already reported: stay silent (submerged)
            (fix, vel), pubs = bank.msgs[slot], bank.pubs[slot]
            if fix_ok:
                status, cov_type = NavSatStatus.STATUS_FIX, NavSatFix.COVARIANCE_TYPE_DIAGONAL_KNOWN
            else:  # NaN latitude / longitude / altitude
                status, cov_type = NavSatStatus.STATUS_NO_FIX, NavSatFix.COVARIANCE_TYPE_UNKNOWN
            pubs[0].publish(fix.pack([sec, nsec, status, *geodetic[i], cov_type]))
            count += 1
            if fix_ok:
                pubs[1].publish(vel.pack([sec, nsec, *velocity[i]]))
                count += 1
        bank.state["had_fix"][due] = s.has_fix
        self.published += count
        self._schedule(bank, due, t_ns, 1.0 / p["rate_hz"])

    def _sample_dvl(self, bank: Bank, due: np.ndarray, t_ns: int) -> None:
        p = self._params(bank, due)
        s = dvl.dvl_measure(
            p, self._pos[due], self._quat[due], self._twist[due], self._current_at(t_ns / NS_PER_S),
            self._env.bathymetry.seabed_depth_m, self._draw(bank, due, 8), self._sound_speed,
        )  # fmt: skip
        cov = np.zeros((len(due), 6, 6))
        cov[:, :3, :3] = s.covariance
        cov[:, 3:, 3:] = -np.eye(3)  # angular velocity not measured (-1: not provided)
        rows = np.hstack([s.velocity_flu_mps, cov.reshape(len(due), 36)]).tolist()
        altitude = s.altitude_m.tolist()
        sec, nsec = divmod(t_ns, NS_PER_S)
        count = 0
        for i, slot in enumerate(due.tolist()):
            (twist, alt), pubs = bank.msgs[slot], bank.pubs[slot]
            if s.mode[i] > 0:  # nothing on dropout
                pubs[0].publish(twist.pack([sec, nsec, *rows[i]]))
                count += 1
            pubs[1].publish(alt.pack([sec, nsec, altitude[i]]))
            count += 1
        self.published += count
        self._schedule(bank, due, t_ns, s.period_s)

    def _sample_altimeter(self, bank: Bank, due: np.ndarray, t_ns: int) -> None:
        p = self._params(bank, due)
        seabed = self._env.bathymetry.seabed_depth_m
        r = dvl.altimeter_measure(p, self._pos[due], self._quat[due], seabed, self._draw(bank, due, 1))
        sec, nsec = divmod(t_ns, NS_PER_S)
        for slot, value in zip(due.tolist(), r.tolist(), strict=True):
            bank.pubs[slot][0].publish(bank.msgs[slot][0].pack([sec, nsec, value]))
        self.published += len(due)
        self._schedule(bank, due, t_ns, 1.0 / p["rate_hz"])

    def _current_at(self, t_s: float):
        env = self._env
        return lambda points: env.current.velocity_enu(t_s, points)

    def _sample_ais(self, bank: Bank, due: np.ndarray, t_ns: int) -> None:
        stamp = _time(t_ns)
        p = self._params(bank, due)
        q = self._quat[due]
        v_enu = rotations.rotate(q, self._twist[due, :3])
        sog, cog = ais.course_and_speed(v_enu)
        heading = ais.compass_heading_deg(rotations.yaw_enu_rad(q))
        yaw_rate = rotations.rotate(q, self._twist[due, 3:])[:, 2]  # ENU z component of the angular velocity
        rot_dps = -np.degrees(yaw_rate)
        std = p["position_noise_std_m"][:, None]
        noisy = self._pos[due] + np.column_stack([std * self._draw(bank, due, 2), np.zeros(len(due))])
        geo = enu_to_geodetic(noisy, self.origin)
        cls = np.array([0 if bank.extra[s]["class"] == "A" else 1 for s in due.tolist()])
        turning = np.abs(rot_dps) >= p["course_change_threshold_dps"]
        interval = ais.report_interval_s(cls, sog, turning, p["navigational_status"])
        rows = np.column_stack([geo[:, :2], sog, cog, heading, rot_dps]).tolist()
        for slot, r in zip(due.tolist(), rows, strict=True):
            (msg,) = bank.msgs[slot]
            msg.header.stamp = stamp
            msg.latitude_deg, msg.longitude_deg, msg.sog_mps, msg.cog_deg, msg.heading_deg, msg.rate_of_turn_dps = r
            bank.pubs[slot][0].publish(msg)
            self._ais_all.publish(msg)
        self.published += 2 * len(due)
        self._schedule(bank, due, t_ns, interval)

    def _sample_usbl(self, bank: Bank, due: np.ndarray, t_ns: int) -> None:
        stamp = _time(t_ns)
        p = self._params(bank, due)
        alive = np.flatnonzero(self._alive)
        names = [self._names[s] for s in alive.tolist()] + list(self._beacons)
        targets = (
            np.vstack([self._pos[alive], *(b[None] for b in self._beacons.values())]) if names else np.zeros((0, 3))
        )
        receivers, target_idx = [], []
        for i, slot in enumerate(due.tolist()):
            wanted = bank.extra[slot]["targets"]
            rng = np.linalg.norm(targets - self._pos[slot], axis=1)
            ok = (rng <= p["max_range_m"][i]) & (np.array(names) != self._names[slot])
            if wanted != "all":
                ok &= np.isin(np.array(names), wanted)
            hits = np.flatnonzero(ok)
            receivers += [i] * len(hits)
            target_idx += hits.tolist()
        if receivers:
            r_i = np.array(receivers)
            keys = bank.key[due][r_i] ^ np.array(
                [noise.stream_key(0, "", names[t]) for t in target_idx], dtype=np.uint64
            )
            draws = noise.normal(keys, bank.counter[due][r_i], 3)
            rb = acoustic.range_bearing(
                self._pos[due][r_i], self._quat[due][r_i], targets[target_idx], p["range_noise_std_m"][r_i],
                p["angle_noise_std_rad"][r_i], draws, self._sound_speed,
            )  # fmt: skip
            for k, (i, t) in enumerate(zip(r_i.tolist(), target_idx, strict=True)):
                slot = int(due[i])
                msg = AcousticRange(
                    target=names[t],
                    range_m=float(rb.range_m[k]),
                    bearing_rad=float(rb.bearing_rad[k]),
                    elevation_rad=float(rb.elevation_rad[k]),
                    travel_time_s=float(rb.travel_time_s[k]),
                )
                msg.header.frame_id = ros_names.sensor_frame(self._names[slot], "usbl")
                msg.header.stamp = stamp
                bank.pubs[slot][0].publish(msg)
            self.published += len(r_i)
        self._schedule(bank, due, t_ns, 1.0 / p["rate_hz"])

    # --- acoustic modem --------------------------------------------------------------------------------------------
    def _on_modem_tx(self, source: str, msg: AcousticMessage) -> None:
        bank = self._banks["modem"]
        src = self._slot_of.get(source)
        if src is None or not bank.present[src]:
            return
        receivers = np.flatnonzero(bank.present & self._alive)
        receivers = receivers[receivers != src]
        if msg.destination:
            receivers = receivers[[self._names[r] == msg.destination for r in receivers.tolist()]]
            if receivers.size == 0:
                self._warn_once(
                    f"modem/{source}/{msg.destination}", f"{source} modem/tx: no modem on {msg.destination!r}"
                )
                return
        if receivers.size == 0:
            return
        seq = int(bank.counter[src])
        bank.counter[src] += np.uint64(1)
        keys = np.array(
            [noise.stream_key(self._seed, source, f"modem->{self._names[r]}") for r in receivers.tolist()],
            dtype=np.uint64,
        )
        u = noise.uniform(keys, np.full(len(receivers), seq), 1)[:, 0]
        p = bank.params
        ok, rng, delay = acoustic.modem_delivery(
            self._pos[src], self._pos[receivers], np.full(len(receivers), p["reliable_range_m"][src]),
            np.full(len(receivers), p["max_range_m"][src]), np.full(len(receivers), p["drop_probability_min"][src]),
            u, self._sound_speed,
        )  # fmt: skip
        data = bytes(msg.data)
        for r, delivered, dist, dt in zip(receivers.tolist(), ok.tolist(), rng.tolist(), delay.tolist(), strict=True):
            if not delivered:
                continue
            rx = AcousticMessage(source=source, destination=msg.destination, data=data, range_m=dist, travel_time_s=dt)
            t_rx = self._t_ns + int(round(dt * NS_PER_S))
            heapq.heappush(self._modem_queue, (t_rx, next(self._modem_seq), self._names[r], rx))

    def _deliver_modem(self, t_ns: int) -> None:
        bank = self._banks["modem"]
        while self._modem_queue and self._modem_queue[0][0] <= t_ns:
            t_rx, _, dest, rx = heapq.heappop(self._modem_queue)
            slot = self._slot_of.get(dest)
            if slot is None or not bank.present[slot]:
                continue
            _stamp(rx.header, t_rx)
            bank.pubs[slot][0].publish(rx)
            self.published += 1

    def _queue_drop(self, name: str) -> None:
        self._modem_queue = [item for item in self._modem_queue if item[2] != name]
        heapq.heapify(self._modem_queue)

    # --- checkpoint / restore (lotusim_sensors.checkpoint) --------------------------------------------------------
    def _on_checkpoint(self, request: Checkpoint.Request, response: Checkpoint.Response):
        try:
            response.digest = sensor_checkpoint.serve(
                self.checkpoint_dir, request.operation, request.path, set(self._banks), self._capture, self._restore
            )
            response.success = True
        except Exception as exc:  # noqa: BLE001 - no file or request may take the node down
            response.message = str(exc) if isinstance(exc, ValueError) else f"{type(exc).__name__}: {exc}"
        response.sim_time = _time(self._t_ns)
        response.vessel_count = len(self._slot_of)
        return response

    def _capture(self) -> tuple[dict, dict]:
        """(meta, arrays) of every configured sensor's schedule, noise counter and state, and the modem queue."""
        named = np.array([n is not None for n in self._names])
        kinds = {}
        for kind, bank in self._banks.items():
            slots = np.flatnonzero(named & bank.present[: len(named)])
            if slots.size:
                kinds[kind] = sensor_checkpoint.SensorRows(
                    [self._names[s] for s in slots.tolist()], bank.next_due_ns[slots], bank.last_ns[slots],
                    bank.counter[slots], {k: v[slots] for k, v in bank.state.items()},
                )  # fmt: skip
        modem = [
            sensor_checkpoint.ModemInFlight(
                t, seq, dest, rx.source, rx.destination, bytes(rx.data), rx.range_m, rx.travel_time_s
            )
            for t, seq, dest, rx in sorted(self._modem_queue, key=lambda item: item[:2])
        ]
        seq = next(self._modem_seq)
        self._modem_seq = itertools.count(seq)
        return sensor_checkpoint.capture(self._t_ns, seq, kinds, modem)

    def _restore(self, state: sensor_checkpoint.SensorState) -> None:
        """Swap in a validated sensor checkpoint: time, modem queue now; each vessel's sensors now if configured,
        else when it is (the restored fleet's next state brings back the vessels deleted since the save)."""
        self._t_ns = state.t_ns
        self._modem_seq = itertools.count(state.modem_seq)
        self._modem_queue = [
            (m.t_rx_ns, m.seq, m.receiver, AcousticMessage(
                source=m.source, destination=m.destination, data=m.data, range_m=m.range_m,
                travel_time_s=m.travel_time_s))
            for m in state.modem
        ]  # fmt: skip
        heapq.heapify(self._modem_queue)
        self._restored = state.per_vessel()
        for name, slot in list(self._slot_of.items()):
            if name in self._restored:
                self._apply_restored(name, slot)

    def _apply_restored(self, name: str, slot: int) -> None:
        """Give vessel `name` (at `slot`) its saved sensor state, once every saved sensor of it is configured."""
        saved = self._restored[name]
        if not all(self._banks[kind].present[slot] for kind in saved):
            return  # its suite is not (fully) configured yet: applied at its next configuration
        for kind, s in saved.items():
            bank = self._banks[kind]
            bank.next_due_ns[slot], bank.last_ns[slot], bank.counter[slot] = (
                s["next_due_ns"],
                s["last_ns"],
                s["counter"],
            )
            for key, value in s["state"].items():
                bank.state[key][slot] = value
        del self._restored[name]


def main(args: list[str] | None = None) -> None:
    """Entry point of `ros2 run lotusim sensor_publisher` (run it with use_sim_time:=true); Ctrl-C and
    `ros2 launch`'s SIGINT end it cleanly (lotusim_core.ros.node_runner)."""
    run_node_main(SensorPublisher, args, executor_factory=SingleThreadedExecutor)
