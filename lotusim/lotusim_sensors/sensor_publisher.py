"""sensor_publisher node: turns /lotusim/fleet_state + the environment into per-vessel sensor messages.

Only ROS is wired here (parameters, endpoints, timers). Every sensor is sampled in **sim time** from the FleetState
stamps (lotusim_sensors.banks: schedule; lotusim_sensors.samplers: models batched over the vessels due at a step)
for the vessels of every worker's latest FleetState (lotusim_sensors.roster), with the suite of each vessel's
model, creation overrides (from its worker's roster, latched on /lotusim/fleet_roster) and `vessels_yaml` entry
(lotusim_sensors.suite_sources); acoustic modem: lotusim_sensors.modem. Messages:
one adapter per kind (lotusim_sensors.sensor_messages; the high-rate ones pre-serialized, lotusim_core.ros.prepacked).
Topics (`<vessel>/...` in the node's namespace, and /lotusim/ais), frames (`<vessel>/<sensor>_link`, latched on
/tf_static under `<vessel>/base_link` by lotusim_core.ros.static_frames) and parameters: docs/sensors.md.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import yaml
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.qos import QoSProfile

from lotusim_core.base import safe_yaml
from lotusim_core.base.checkpoint_store import answered
from lotusim_core.base.geodesy import GeodeticOrigin
from lotusim_core.ros import ros_names, static_frames
from lotusim_core.ros.endpoints import QUIET_SUBSCRIPTION
from lotusim_core.ros.node_runner import run_node_main
from lotusim_core.ros.qos import LATCHED
from lotusim_core.ros.ros_arrays import from_float64_array
from lotusim_env.environment import Environment, build_environment
from lotusim_interfaces.msg import AIS, AcousticMessage, EnvironmentConfig, FleetRoster, FleetState
from lotusim_interfaces.srv import Checkpoint
from lotusim_sensors import acoustic, imu, lidar, sensor_messages
from lotusim_sensors import checkpoint as sensor_checkpoint
from lotusim_sensors.banks import NS_PER_S, SensorBanks
from lotusim_sensors.modem import ModemQueue
from lotusim_sensors.roster import Roster, RosterUpdate, shape_errors
from lotusim_sensors.samplers import SAMPLERS, Site, parse_beacons
from lotusim_sensors.sensor_messages import IMU_FIELDS as IMU_FIELDS  # re-exported for bench/bench_sensors.py
from lotusim_sensors.suite import KINDS
from lotusim_sensors.suite_sources import SuiteSources, entries_of, parse_vessels_yaml

SENSOR_QOS = 10
# every worker latches its roster (depth 1 per publisher): the subscription keeps enough for all of them to arrive
# at once when the node starts late
ROSTERS_QOS = QoSProfile(depth=256, durability=LATCHED.durability, reliability=LATCHED.reliability)


class SensorPublisher(Node):
    """ROS wiring of the lotusim_sensors models for every vessel of every dynamics worker."""

    def __init__(self, **node_kwargs) -> None:
        super().__init__("sensor_publisher", **node_kwargs)
        param = self._param
        self._seed_param = int(param("seed", -1))
        self._sources = SuiteSources(parse_vessels_yaml(param("vessels_yaml", "")))
        origin = GeodeticOrigin(float(param("origin_latitude_deg", 0.0)), float(param("origin_longitude_deg", 0.0)),
                                float(param("origin_altitude_m", 0.0)))  # fmt: skip
        field = imu.earth_field_enu_t(float(param("magnetic_declination_deg", 0.0)),
                                      float(param("magnetic_inclination_deg", 60.0)),
                                      float(param("magnetic_intensity_nt", 50000.0)) * 1e-9)  # fmt: skip
        sound_speed = float(param("sound_speed_mps", acoustic.SOUND_SPEED_MPS))
        # the environment, replaced by /lotusim/environment (and by tests, benchmarks): the samplers' site takes it
        # at each fleet state
        self._env: Environment = build_environment(None)
        self._site = Site(self._env, origin, field, sound_speed, parse_beacons(param("acoustic_beacons_yaml", "")))
        self._seed = self._seed_param if self._seed_param >= 0 else 0
        self._fleet, self._modem_queue = Roster(), ModemQueue()
        self._banks = SensorBanks(KINDS, self._fleet.capacity)
        self._slot_of = self._fleet.slot_of  # vessel -> slot (the roster's, read by tests)
        self._io: dict[str, sensor_messages.Io] = {kind: {} for kind in KINDS}  # kind -> slot -> endpoints
        self._modem_subs: dict[int, Any] = {}
        self._t_ns, self._last_worker = 0, ""
        self._warned: set[str] = set()
        self.published = 0  # messages published since start (benchmarks, tests)
        self._messages = sensor_messages.adapters(self.create_publisher(AIS, "/lotusim/ais", SENSOR_QOS))
        self._static_frames = static_frames.StaticFrames(self)  # <vessel>/base_link -> <vessel>/<sensor>_link
        # depth 100: lockstep bursts (StepFor, Step with many steps) publish many states back to back
        self.create_subscription(FleetState, "/lotusim/fleet_state", self._on_fleet_state, 100)
        self.create_subscription(EnvironmentConfig, "/lotusim/environment", self._on_environment, LATCHED)
        self.create_subscription(FleetRoster, "/lotusim/fleet_roster", self._on_roster, ROSTERS_QOS)
        # checkpoints (lotusim_sensors.checkpoint): saved and restored by name, asked by the MAS server
        self.checkpoint_dir = str(param("checkpoint_dir", ""))
        self._restored = self._banks.saved  # vessel -> kind -> saved sensor state not yet applied
        self.create_service(Checkpoint, "/lotusim/sensors/checkpoint", self._on_checkpoint)

    def _param(self, name: str, default: Any) -> Any:
        return self.declare_parameter(name, default).value

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
                self._reconfigure(name, slot)

    # --- vessels and their suites -------------------------------------------------------------------------------
    def _update_fleet(self, worker: str, names: tuple[str, ...]) -> np.ndarray:
        """Slots of a worker's vessels; removes the vessels it no longer lists, configures the new ones."""
        return self._apply(self._fleet.update(worker, names), worker)

    def _apply(self, update: RosterUpdate, worker: str) -> np.ndarray:
        for name, slot in update.removed:
            self._sources.forget(name)
            self._unconfigure(slot)
            self._modem_queue.drop(name)
        self._banks.grow(self._fleet.capacity)
        for name, slot in update.added:
            self._configure(name, slot, worker)
        for _, slot in update.seen:  # configured from the roster: sampled from this first state on
            self._banks.start_at(slot, self._t_ns)
        return update.slots

    def _on_roster(self, msg: FleetRoster) -> None:
        """A worker's latest roster: the vessels whose model or creation overrides it changes are configured again,
        and the vessels it lists before any fleet state does get their topics now (Roster.announce: a node started
        after the spawn, while `lotusim run` holds the sim time at 0, hears no fleet state until the sim time runs,
        but the latched roster at once)."""
        entries = entries_of(msg.vessels)
        for name in self._sources.on_roster(msg.worker, entries):
            slot = self._slot_of.get(name)
            if slot is not None:
                self._reconfigure(name, slot)
        self._apply(self._fleet.announce(msg.worker, list(entries)), msg.worker)

    def _reconfigure(self, name: str, slot: int) -> None:
        self._unconfigure(slot)
        self._configure(name, slot, self._fleet.owner.get(name, ""))

    def _configure(self, name: str, slot: int, worker: str) -> None:
        try:
            suite, model = self._sources.resolve(name, worker)
        except (ValueError, OSError, yaml.YAMLError) as exc:
            self.get_logger().error(f"vessel {name}: no sensors ({exc})")
            return
        if model:  # the hull box other vessels' LiDARs see (lotusim_sensors.lidar)
            self._fleet.set_hull(slot, *lidar.hull_of_model(model))
        for kind, params in suite.items():
            self._banks[kind].configure(slot, params, self._seed, name, self._t_ns)
            try:
                self._create_io(kind, name, slot)
            except Exception as exc:  # noqa: BLE001 - e.g. a name that is not a valid ROS topic token
                self.get_logger().error(f"vessel {name}: no sensors (cannot create the {kind} topics: {exc})")
                self._unconfigure(slot)
                return
        self._static_frames.set(slot, static_frames.sensor_transforms(name, suite))
        self._banks.apply_saved(name, slot)
        if suite:
            self.get_logger().debug(f"vessel {name} (model {model or '?'}): sensors {', '.join(suite)}")

    def _unconfigure(self, slot: int) -> None:
        self._static_frames.discard(slot)
        for kind in self._banks.clear(slot):
            for outlet in self._io[kind].pop(slot, ((), ()))[0]:
                self.destroy_publisher(outlet.publisher)
        sub = self._modem_subs.pop(slot, None)
        if sub is not None:
            self.destroy_subscription(sub)

    def _create_io(self, kind: str, name: str, slot: int) -> None:
        """Publishers and reusable messages of one sensor (lotusim_sensors.sensor_messages), the modem's tx."""
        bank, make_publisher = self._banks[kind], sensor_messages.vessel_publishers(self, name, SENSOR_QOS)
        p, frame = {k: float(v[slot]) for k, v in bank.params.items()}, ros_names.sensor_frame(name, kind)
        self._io[kind][slot] = self._messages[kind].create(make_publisher, name, frame, p, bank.extra[slot])
        if kind == "modem":
            self._modem_subs[slot] = self.create_subscription(
                AcousticMessage, ros_names.vessel_name(name, "modem/tx"), lambda m, n=name: self._on_modem_tx(n, m),
                SENSOR_QOS, event_callbacks=QUIET_SUBSCRIPTION,
            )  # fmt: skip

    # --- the step ------------------------------------------------------------------------------------------------
    def _warn_once(self, key: str, text: str) -> None:
        if key not in self._warned:
            self._warned.add(key)
            self.get_logger().warning(text)

    def _on_fleet_state(self, msg: FleetState) -> None:
        n = len(msg.names)
        widths = {"position": 3, "orientation": 4, "twist": 6, "accel": 6}
        bad = shape_errors(n, {k: (len(getattr(msg, k)), c) for k, c in widths.items()})
        if bad:
            self._warn_once(f"shape/{msg.worker}", f"fleet_state from worker {msg.worker!r} ignored: {'; '.join(bad)}")
            return
        t_ns = msg.header.stamp.sec * NS_PER_S + msg.header.stamp.nanosec
        if t_ns < self._t_ns and msg.worker == self._last_worker:  # sim time went back (reset): restart schedules
            self._banks.restart_after(t_ns)
            self._modem_queue.clear()
        self._t_ns, self._last_worker, self._site.env = t_ns, msg.worker, self._env
        slots = self._update_fleet(msg.worker, tuple(msg.names))
        current = from_float64_array(msg.environment, 6)[:, :3] if len(msg.environment) == 6 * n else None
        rows = [from_float64_array(getattr(msg, k), c) for k, c in widths.items()]
        kept = self._fleet.set_state(slots, *rows, current)
        if len(kept) != len(slots):
            self._warn_once(f"nan/{msg.worker}", f"worker {msg.worker!r}: non-finite state rows skipped by the sensors")
        for kind, sample in SAMPLERS.items():
            bank = self._banks[kind]
            due = bank.due(kept, t_ns)
            if not due.size:
                continue
            try:
                samples = sample(bank, due, t_ns, self._fleet, self._site)
                self.published += self._messages[kind].publish(self._io[kind], due.tolist(), samples, t_ns)
                bank.schedule(due, t_ns, samples.period_s)
            except Exception as exc:  # noqa: BLE001 - one failing sensor kind must not stop the others
                text = f"{kind} sampling failed at t = {t_ns} ns, retried every sim second: {exc!r}"
                self._warn_once(f"fail/{kind}/{type(exc).__name__}", text)
                bank.next_due_ns[due] = t_ns + NS_PER_S  # retry in 1 s of sim time
        modem, arrived = self._banks["modem"], self._modem_queue.arrived(t_ns)
        self.published += sensor_messages.publish_arrivals(self._io["modem"], self._slot_of, modem.present, arrived)

    # --- acoustic modem (lotusim_sensors.modem) ------------------------------------------------------------------
    def _on_modem_tx(self, source: str, msg: AcousticMessage) -> None:
        why = self._modem_queue.send(self._banks["modem"], self._fleet, source, msg.destination, bytes(msg.data),
                                     self._seed, self._t_ns, self._site.sound_speed_mps)  # fmt: skip
        if why:
            self._warn_once(f"modem/{source}/{msg.destination}", why)

    # --- checkpoint / restore (lotusim_sensors.checkpoint) --------------------------------------------------------
    def _on_checkpoint(self, request: Checkpoint.Request, response: Checkpoint.Response):
        response.success, response.digest, response.message = answered(lambda: sensor_checkpoint.serve(
            self.checkpoint_dir, request.operation, request.path, set(self._banks), self._capture, self._restore
        ))  # fmt: skip
        response.sim_time = sensor_messages.ros_time(self._t_ns)
        response.vessel_count = len(self._slot_of)
        return response

    def _capture(self) -> tuple[dict, dict]:
        """(meta, arrays) of every configured sensor's schedule, noise counter and state, and the modem queue."""
        modem, kinds = self._modem_queue, self._banks.capture(self._fleet.names)
        return sensor_checkpoint.capture(self._t_ns, modem.next_seq, kinds, modem.in_flight())

    def _restore(self, state: sensor_checkpoint.SensorState) -> None:
        """Swap in a validated sensor checkpoint: time, modem queue now; each vessel's sensors now if configured,
        else when it is (the restored fleet's next state brings back the vessels deleted since the save)."""
        self._t_ns = state.t_ns
        self._modem_queue.restore(state.modem, state.modem_seq)
        self._banks.hold(state.per_vessel())
        for name, slot in list(self._slot_of.items()):
            self._banks.apply_saved(name, slot)


def main(args: list[str] | None = None) -> None:
    """Entry point of `ros2 run lotusim sensor_publisher` (run it with use_sim_time:=true); Ctrl-C and
    `ros2 launch`'s SIGINT end it cleanly (lotusim_core.ros.node_runner)."""
    run_node_main(SensorPublisher, args, SingleThreadedExecutor, refused=(ValueError,), what="sensor_publisher")
