"""The states of a controller host's vessels from /lotusim/fleet_state instead of one nav_msgs/Odometry
subscription per vessel (state_source fleet_state, the default in a controller host; docs/autonomy.md).

A host of 50 vessel controllers on their odometry topics spends about half its time receiving: the executor's
work and the conversion of each Odometry message into Python objects. The workers publish every vessel's pose and
twist together in one FleetState at each step (lotusim_physics.dynamics_node_outputs); the intake takes that one
message and hands each of its controllers a NedState at the rate the controllers were tuned for, as their
odometry would have: a controller steps on the first fleet state at or after each multiple of the host's state
period (`state_rate_hz`, physics.odom_rate_hz in a scenario), so a 10 Hz controller sees 10 states a second
whatever the fleet state's rate. The controllers are spread over the period in PHASES groups (the k-th one added
is (k mod PHASES) / PHASES of a period late), as the workers spread the odometry messages over the steps: the
host's work comes in smaller bursts.

The drones' flight controllers have an intake of their own that steps them together on every fleet state
(lotusim_autonomy.multirotor_controller.FlightFleetIntake); both take the node's one subscription (FleetStateFeed).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
from rclpy.node import Node

from lotusim_autonomy.odometry import NedState, ned_arrays
from lotusim_interfaces.msg import FleetState

TOPIC = "/lotusim/fleet_state"
PHASES = 5  # groups of controllers a period apart / PHASES (one group per fleet state at 50 Hz and 10 Hz control)
NEVER = np.iinfo(np.int64).min  # the period index of a controller that has taken no state yet


class StateTaker(Protocol):
    """What the intake asks of a controller: its vessel's name, and take_state (VesselController)."""

    vessel: str

    def take_state(self, state: NedState) -> None: ...


@dataclass
class _Layout:
    """Where a worker's fleet state (one list of names) puts the intake's controllers: rows of its arrays, and
    the controllers' indices in the intake (members, phases, periods taken)."""

    rows: np.ndarray
    members: np.ndarray


def one_per_node(node: Node, attribute: str, make: Callable[[], Any]) -> Any:
    """The object a node keeps under `attribute`, made by `make()` at the first call."""
    found = getattr(node, attribute, None)
    if found is None:
        found = make()
        setattr(node, attribute, found)
    return found


class FleetStateFeed:
    """A node's one /lotusim/fleet_state subscription, handing each message to its listeners: the marine
    controllers' FleetStateIntake and the drones' FlightFleetIntake (lotusim_autonomy.multirotor_controller), so
    that a host of both takes and deserializes each fleet state once. A listener catches its own errors."""

    @classmethod
    def of(cls, node: Node) -> FleetStateFeed:
        """The node's feed (made at the first listener)."""
        return one_per_node(node, "_lotusim_fleet_state_feed", lambda: cls(node))

    def __init__(self, node: Node) -> None:
        self.listeners: list[Callable[[FleetState], None]] = []
        self._sub = node.create_subscription(FleetState, TOPIC, self._on_fleet_state, 10)

    def listen(self, callback: Callable[[FleetState], None]) -> None:
        self.listeners.append(callback)

    def _on_fleet_state(self, msg: FleetState) -> None:
        for callback in self.listeners:
            callback(msg)


class FleetStateIntake:
    """The fleet states of a host node's controllers (made at the first that asks: of; FleetStateFeed)."""

    @classmethod
    def of(cls, node: Node, rate_hz: float) -> FleetStateIntake:
        """The node's intake, stepping its controllers at rate_hz of sim time (the first caller's rate)."""
        return one_per_node(node, "_lotusim_state_intake", lambda: cls(node, rate_hz))

    def __init__(self, node: Node, rate_hz: float) -> None:
        if not rate_hz > 0.0:
            raise ValueError(f"state_rate_hz: expected a rate > 0 Hz, got {rate_hz!r}")
        self.node = node
        self.period_ns = max(1, round(1e9 / rate_hz))
        self.members: list[StateTaker | None] = []  # by index; None: removed
        self._index: dict[str, int] = {}  # vessel -> index in members
        self._phase_ns = np.zeros(0, dtype=np.int64)
        self._taken = np.zeros(0, dtype=np.int64)  # the period index of each member's last state
        self._layouts: dict[tuple[str, tuple[str, ...]], _Layout] = {}
        FleetStateFeed.of(node).listen(self._on_fleet_state)

    def add(self, controller: StateTaker) -> None:
        """A controller joins: it takes its vessel's rows of the fleet state from now on."""
        k = len(self.members)
        self.members.append(controller)
        self._index[controller.vessel] = k
        self._phase_ns = np.append(self._phase_ns, (k % PHASES) * self.period_ns // PHASES)
        self._taken = np.append(self._taken, NEVER)
        self._layouts.clear()

    def remove(self, controller: StateTaker) -> None:
        """A controller leaves (closed by its host)."""
        k = self._index.get(controller.vessel)
        if k is not None and self.members[k] is controller:
            del self._index[controller.vessel]
            self.members[k] = None
            self._layouts.clear()

    def _layout(self, worker: str, names: list[str]) -> _Layout:
        key = (worker, tuple(names))
        layout = self._layouts.get(key)
        if layout is None:
            found = [(i, self._index[n]) for i, n in enumerate(names) if n in self._index]
            rows, members = zip(*found, strict=True) if found else ((), ())
            layout = self._layouts[key] = _Layout(np.array(rows, dtype=int), np.array(members, dtype=int))
        return layout

    def _on_fleet_state(self, msg: FleetState) -> None:
        try:
            self.take(msg)
        except Exception as exc:  # noqa: BLE001 - logged; the host steps on with the next fleet state
            self.node.get_logger().error(f"fleet state not handled ({exc!r})", throttle_duration_sec=5.0)

    def take(self, msg: Any) -> None:
        """Hand each controller of this host found in a worker's fleet state its state, if its turn has come."""
        layout = self._layout(msg.worker, msg.names)
        if not len(layout.rows):
            return
        stamp = msg.header.stamp
        t_ns = stamp.sec * 1_000_000_000 + stamp.nanosec
        since = t_ns - self._phase_ns[layout.members]
        period, taken = since // self.period_ns, self._taken[layout.members]
        due = period != taken  # a new period (or a jump back: a restored checkpoint)
        # a controller's first state is the first at a boundary of its period (its phase), or after one
        fresh = (taken == NEVER) & (since % self.period_ns != 0)
        if fresh.any():
            self._taken[layout.members[fresh]] = period[fresh]
            due &= ~fresh
        if not due.any():
            return
        members = layout.members[due]
        self._taken[members] = period[due]
        rows = layout.rows[due]
        position = np.asarray(msg.position, dtype=float).reshape(-1, 3)[rows]
        orientation = np.asarray(msg.orientation, dtype=float).reshape(-1, 4)[rows]
        twist = np.asarray(msg.twist, dtype=float).reshape(-1, 6)[rows]
        p, rpy, nu = ned_arrays(position, orientation, twist)
        t_s = t_ns * 1e-9
        for j, k in enumerate(members.tolist()):  # the control laws are per vessel
            self.members[k].take_state(NedState(t_s, p[j], rpy[j], nu[j]))
