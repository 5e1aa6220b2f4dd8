"""Node side of the dynamics worker's outputs (lotusim_physics.dynamics_node): the fleet state, odometry and
/tf written straight into prepacked CDR messages (lotusim_core.ros.prepacked) by compiled passes, and the ROS messages
of its replies and statistics. What goes where is lotusim_physics.output_layout; the numbers come from the
worker's Fleet (lotusim_physics.worker.FleetWorker). A worker publishes (docs/interfaces.md):
- /clock (rosgraph_msgs/Clock) every step, when it is the clock master (parameter `clock_master`; the node);
- /lotusim/fleet_state (lotusim_interfaces/FleetState) every `fleet_state_every` steps, or at
  `fleet_state_rate_hz` of sim time when that is set (> 0);
- <vessel>/odom (nav_msgs/Odometry, ground truth, frame `odom` (= `map`) ENU, child `<vessel>/base_link` FLU) at
  `odom_rate_hz` of sim time (vessels are spread over the steps of one period to smooth the load);
- /tf (tf2_msgs/TFMessage): odom -> <vessel>/base_link of the same vessels at the same steps as the odometry, one
  message per step (parameter `publish_tf`; the clock master then also latches map -> odom on /tf_static);
- /lotusim/stats (lotusim_interfaces/SimStats) at `stats_rate_hz` of wall time;
- /lotusim/fleet_roster (lotusim_interfaces/FleetRoster, latched) at start and whenever its vessels change (the node).
A rate of sim time is kept exactly on average: the output follows the first step at or after each multiple of
its period (lotusim_physics.output_schedule; 0.03 s steps at 10 Hz: intervals of 0.12, 0.09, 0.09 s).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from builtin_interfaces.msg import Time
from geometry_msgs.msg import TransformStamped
from nav_msgs.msg import Odometry
from rosgraph_msgs.msg import Clock
from tf2_msgs.msg import TFMessage

from lotusim_core.base import frames
from lotusim_core.ros.prepacked import RawArrays, RawBatch, RawMessage, RawSequence
from lotusim_core.ros.ros_names import ODOM_FRAME
from lotusim_interfaces.msg import Collision, FleetRoster, FleetState, ItemResult, SimStats, VesselInfo
from lotusim_physics.collisions import KIND_NAMES, CollisionEvent
from lotusim_physics.faults import ContactEvent
from lotusim_physics.fleet_roster import RosterEntry
from lotusim_physics.output_layout import (
    FLEET_STATE_ARRAYS,
    ODOM_DOUBLES,
    ODOM_INTS,
    STAMP_INTS,
    TF_DOUBLES,
    odometry_rows,
    stamp_of,
    state_index,
)
from lotusim_physics.pacing import WindowStats
from lotusim_physics.worker import CommandResult, FleetWorker
from lotusim_physics.worker_settings import WorkerSettings


def stamp_from_ns(t_ns: int) -> Time:
    sec, nanosec = stamp_of(t_ns)
    return Time(sec=sec, nanosec=nanosec)


@dataclass
class StateOutput:
    """The serialized FleetState of one fleet layout: its writer, the buffer as float64, where each vessel's
    19 state numbers go in it, the rows to write, and the version of the environment / status written."""

    writer: RawArrays
    doubles: np.ndarray
    index: np.ndarray
    rows: np.ndarray
    extras_version: int = -1


class FleetOutputs:
    """The clock, fleet state, odometry and transforms of `worker`'s fleet, laid out again when its
    layout_version changes. send_clock / send_state / send_tf: raw publish functions
    (lotusim_core.ros.prepacked.raw_publish; send_clock None: not the clock master; send_tf None: no /tf);
    odom_send_of(name): a vessel's odometry publish function, None until its topic exists."""

    def __init__(
        self,
        worker: FleetWorker,
        send_clock: Callable[[bytes], None] | None,
        send_state: Callable[[bytes], None],
        send_tf: Callable[[bytes], None] | None,
        odom_send_of: Callable[[str], Callable[[bytes], None] | None],
    ) -> None:
        self.worker, self._send_state, self._send_tf, self._odom_send_of = worker, send_state, send_tf, odom_send_of
        self._send_clock = send_clock
        self._clock_bytes = RawMessage(Clock(), ["clock.sec", "clock.nanosec"]).packer()  # (sec, nanosec) -> CDR
        self._state_out: StateOutput | None = None  # the serialized FleetState of the current fleet
        self._state_version = -1  # the worker's layout_version _state_out was laid out for
        self._odom = RawBatch(ODOM_DOUBLES, ODOM_INTS)  # one row per vessel of the fleet, in fleet order
        self._odom_sends: list | None = None  # per fleet row: its odom raw publish function (None: no topic yet)
        self._odom_version = -1
        # due odometry groups -> their rows (array, list) and the positions of their stamps in the batch
        self._odom_rows: dict[tuple[int, ...], tuple[np.ndarray, list[int], np.ndarray]] = {}
        self._tf_out: dict[tuple[int, ...], tuple[RawSequence, np.ndarray]] = {}
        self._tf_names: tuple[str, ...] = ()  # the fleet (in order) that _tf_out was laid out for

    def after_steps(self, first: int, k: int) -> None:
        """After steps `first` + 1 .. `first` + k (the worker's iteration is now first + k): one /clock per step,
        then the fleet state and the odometry due after the last (none is due before it: Pacer.run)."""
        worker = self.worker
        if self._send_clock is not None:
            send, clock_bytes, step_ns = self._send_clock, self._clock_bytes, worker.step_ns
            for it in range(first + 1, first + k + 1):
                send(clock_bytes(*divmod(it * step_ns, 1_000_000_000)))
        publish_state, groups, _ = worker.plan.at(worker.iteration)
        if not (publish_state or groups):
            return
        stamp = divmod(worker.iteration * worker.step_ns, 1_000_000_000)  # (sec, nanosec): output_layout.stamp_of
        if publish_state:
            self.publish_state(stamp)
        if groups:
            self._publish_odom(stamp, groups)

    def odom_ready(self, name: str, send: Callable[[bytes], None]) -> None:
        """Vessel `name`'s odometry topic now exists: publish its rows with `send`."""
        if self._odom_sends is not None and self._odom_version == self.worker.layout_version:
            self._odom_sends[self.worker.fleet.index(name)] = send  # the layout stands: only this row is new

    def forget(self, name: str) -> None:
        """Vessel `name` was deleted: drop its cached odometry serialization."""
        self._odom.forget(name)

    # --- fleet state ----------------------------------------------------------------------------------------
    def _fleet_state_output(self) -> StateOutput:
        """The serialized FleetState of the current fleet (names fixed), rebuilt when the fleet changes."""
        if self._state_out is None or self._state_version != self.worker.layout_version:
            names = list(self.worker.fleet.names)
            n = len(names)
            msg = FleetState(worker=self.worker.name, names=names)
            msg.header.frame_id = "map"
            for field_name, width in FLEET_STATE_ARRAYS.items():
                setattr(msg, field_name, [0.0] * (n * width))
            msg.status = bytes(n)
            writer = RawArrays(msg, list(FLEET_STATE_ARRAYS), [*STAMP_INTS, "iteration"], ["status"])
            for field_name, width in FLEET_STATE_ARRAYS.items():  # (N, width) views of the flat arrays
                writer.views[field_name] = writer.views[field_name].reshape(n, width)
            index = state_index({f: writer.double_index(f) for f in FLEET_STATE_ARRAYS}, n)
            self._state_out = StateOutput(writer, writer.doubles(), index, np.arange(n, dtype=np.int64))
            self._state_version = self.worker.layout_version
        return self._state_out

    def publish_state(self, stamp: tuple[int, int]) -> None:
        """One FleetState for the whole fleet: the state is written straight into the serialized message by one
        compiled pass (Fleet.scatter_state_enu), no per-vessel Python work; environment and status are
        rewritten only when they changed."""
        out = self._fleet_state_output()
        worker = self.worker
        worker.fleet.scatter_state_enu(out.rows, out.doubles, out.index)
        if out.extras_version != worker.extras_version:
            views = out.writer.views
            worker.environment.write_enu(views["environment"])  # held current and wind at each vessel, ENU m/s
            views["status"][:] = fleet_status(worker.fleet.frozen, worker.fleet.colliding)
            out.extras_version = worker.extras_version
        self._send_state(out.writer.pack((*stamp, worker.iteration)))

    # --- odometry and /tf -----------------------------------------------------------------------------------
    def _publish_odom(self, stamp: tuple[int, int], groups: tuple[int, ...]) -> None:
        """Publish the odometry of the vessels whose turn it is (rows i with i % odometry groups in `groups`):
        pose and twist of all of them written into their serialized messages by one compiled pass
        (Fleet.scatter_state_enu into lotusim_core.ros.prepacked.RawBatch), the stamps by one assignment, then one
        publish call each."""
        batch, fleet = self._odom, self.worker.fleet
        if self._odom_sends is None or self._odom_version != self.worker.layout_version:
            self._layout_odometry()
        due = self._odom_rows.get(groups)
        if due is None:
            rows = odometry_rows(len(fleet.names), groups, self.worker.odom_schedule.groups)
            due = self._odom_rows[groups] = (rows, rows.tolist(), batch.int_positions(rows))
        rows, row_list, stamp_positions = due
        fleet.scatter_state_enu(rows, batch.doubles, batch.double_index)
        batch.write_ints(stamp_positions, stamp)
        sends, message = self._odom_sends, batch.message
        for i in row_list:
            send = sends[i]
            if send is not None:
                send(message(i))
        if self._send_tf is not None:
            self._publish_tf(rows, stamp, groups)

    def _publish_tf(self, rows: np.ndarray, stamp: tuple[int, int], groups: tuple[int, ...]) -> None:
        """One tf2_msgs/TFMessage with odom -> <vessel>/base_link (ENU position, ENU <- FLU rotation) of fleet
        rows `rows`: written into its serialized bytes by one compiled pass, the stamps by one assignment."""
        out = self._tf_out.get(groups)
        if out is None:
            out = self._tf_out[groups] = self._transforms_message(rows)
        transforms, index = out
        self.worker.fleet.scatter_state_enu(rows, transforms.doubles, index)
        transforms.write_ints(stamp)
        self._send_tf(transforms.message())

    def _transforms_message(self, rows: np.ndarray) -> tuple[RawSequence, np.ndarray]:
        """The serialized TFMessage of fleet rows `rows` and, per fleet row, where its pose goes in it."""
        names = self.worker.fleet.names
        msg = TFMessage(transforms=[TransformStamped(child_frame_id=f"{names[i]}/base_link") for i in rows.tolist()])
        for transform in msg.transforms:
            transform.header.frame_id = ODOM_FRAME
        transforms = RawSequence(msg, "transforms", TF_DOUBLES, STAMP_INTS)
        index = np.zeros((len(names), len(TF_DOUBLES)), dtype=np.int64)  # columns of Fleet.scatter_state_enu
        index[rows] = transforms.double_index
        return transforms, index

    def _layout_odometry(self) -> None:
        """One odometry row per vessel in fleet order, and its publish function (None until its topic exists)."""
        names = self.worker.fleet.names
        self._odom.layout(names, _odom_message)
        self._odom_sends = [self._odom_send_of(name) for name in names]
        self._odom_version = self.worker.layout_version
        self._odom_rows = {}  # the rows due for each set of due groups, filled as they come
        if self._tf_names != tuple(names):  # a move or a new environment keeps the transforms' layout
            self._tf_out, self._tf_names = {}, tuple(names)


def _odom_message(name: str) -> Odometry:
    msg = Odometry()
    msg.header.frame_id = ODOM_FRAME
    msg.child_frame_id = f"{name}/base_link"
    return msg


# --- replies and statistics -----------------------------------------------------------------------------------
def item_result(result: CommandResult) -> ItemResult:
    """The lotusim_interfaces/ItemResult of a worker's command result."""
    code = getattr(ItemResult, result.code)
    return ItemResult(name=result.name, ok=result.ok, code=code, reason=result.reason, worker=result.worker)


def fleet_status(frozen: np.ndarray, colliding: np.ndarray) -> np.ndarray:
    """(N,) VesselInfo status bytes: STATUS_FROZEN, else STATUS_CONTACT, else STATUS_OK."""
    contact = np.where(colliding, VesselInfo.STATUS_CONTACT, VesselInfo.STATUS_OK)
    return np.where(frozen, VesselInfo.STATUS_FROZEN, contact).astype(np.uint8)


def collision_message(event: CollisionEvent, worker: str) -> Collision:
    """The lotusim_interfaces/Collision of a contact that began (stamp: its sim time; frame map)."""
    msg = Collision(worker=worker, vessel=event.vessel, other=event.other, kind=KIND_NAMES.index(event.kind))
    msg.header.stamp = stamp_from_ns(round(event.sim_time_s * 1e9))
    msg.header.frame_id = "map"
    msg.position.x, msg.position.y, msg.position.z = event.point_enu
    msg.normal.x, msg.normal.y, msg.normal.z = event.normal_enu
    msg.relative_speed = event.relative_speed_mps
    return msg


def aerial_contact_message(event: ContactEvent, worker: str) -> Collision:
    """The lotusim_interfaces/Collision of an aerial vehicle's touchdown or lift-off (ended; KIND_SEA or KIND_DECK;
    position: where it came to rest or where it left, map ENU; normal up; relative_speed: its vertical speed
    relative to the surface, down positive)."""
    msg = Collision(worker=worker, vessel=event.vessel, other=event.surface, ended=not event.touchdown)
    msg.kind = Collision.KIND_SEA if event.surface == "sea" else Collision.KIND_DECK
    msg.header.stamp = stamp_from_ns(round(event.sim_time_s * 1e9))
    msg.header.frame_id = "map"
    if event.position_ned is not None:
        msg.position.x, msg.position.y, msg.position.z = (float(v) for v in frames.ned_to_enu(event.position_ned))
    msg.normal.z = 1.0
    msg.relative_speed = event.descent_mps
    return msg


def vessel_infos(worker: FleetWorker) -> list[VesselInfo]:
    """The worker's vessels as lotusim_interfaces/VesselInfo, in fleet order (pose ENU, ENU <- FLU); a vessel in
    contact is listed with STATUS_CONTACT and what it touches as its status_reason."""
    infos = []
    contacts = worker.contacts()
    for entry, position, quaternion, frozen_reason in worker.listing():
        info = VesselInfo(
            name=entry.name,
            model=entry.model,
            domain=entry.domain,
            worker=worker.name,
            overrides_yaml=entry.overrides_yaml,
        )
        info.pose.position.x, info.pose.position.y, info.pose.position.z = position.tolist()
        o = info.pose.orientation
        o.x, o.y, o.z, o.w = quaternion.tolist()
        info.status = VesselInfo.STATUS_OK if frozen_reason is None else VesselInfo.STATUS_FROZEN
        if frozen_reason is not None:
            info.status_reason = frozen_reason
        elif entry.name in contacts:
            info.status = VesselInfo.STATUS_CONTACT
            info.status_reason = "in contact with " + ", ".join(contacts[entry.name])
        infos.append(info)
    return infos


def roster_message(worker: str, revision: int, entries: tuple[RosterEntry, ...]) -> FleetRoster:
    """The lotusim_interfaces/FleetRoster of a worker's roster (lotusim_physics.fleet_roster; pose and status left
    at their defaults)."""
    vessels = [
        VesselInfo(name=e.name, model=e.model, domain=e.domain, worker=worker, overrides_yaml=e.overrides_yaml)
        for e in entries
    ]
    return FleetRoster(worker=worker, revision=revision, vessels=vessels)


def stats_message(
    worker: FleetWorker, settings: WorkerSettings, window: WindowStats, endpoints_pending: int = 0
) -> SimStats:
    """The lotusim_interfaces/SimStats of `worker` at the end of a statistics window (endpoints_pending: the
    vessels whose topics are still to make or destroy)."""
    fleet = worker.fleet
    msg = SimStats(
        worker=worker.name,
        mode=settings.mode,
        sim_time_s=worker.sim_time_ns * 1e-9,
        wall_time_s=window.wall_time_s,
        iterations=worker.iteration,
        real_time_factor=window.real_time_factor,
        target_real_time_factor=settings.rtf_target if settings.mode in ("realtime", "scaled") else 0.0,
        step_size_s=settings.step_s,
        vessel_count=len(fleet.names),
        frozen_count=int(np.count_nonzero(fleet.frozen)) if fleet.names else 0,
        step_compute_time_s=window.step_compute_time_s,
        step_compute_time_max_s=window.step_compute_time_max_s,
        environment_revision=worker.environment.revision,
        endpoints_pending=endpoints_pending,
    )
    msg.header.stamp = stamp_from_ns(worker.sim_time_ns)
    return msg
