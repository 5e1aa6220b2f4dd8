"""A dynamics worker's per-vessel topics (ROS wiring beside lotusim_physics.dynamics_node): each vessel's command
subscriptions `<vessel>/thrusters/<thruster>/cmd` and `<vessel>/fins/<fin>/cmd` (std_msgs/Float64, actuator names
from the vehicle file) and `<vessel>/cmd_wrench` (geometry_msgs/Wrench, body FLU), and its odometry publisher
`<vessel>/odom`; also the handler of /lotusim/thruster_commands (many vessels' thruster commands in one
sensor_msgs/JointState, lotusim_physics.thruster_batch). Names are relative: in the node's namespace
(docs/interfaces.md, 'Per-vessel topics').

A vessel's topics are made after its create and destroyed after its delete in the background, within a budget
of wall time per call (lotusim_physics.endpoint_queue: a DDS endpoint costs about a millisecond), without rclpy's
QoS event handlers (lotusim_core.ros.endpoints). A message for a vessel deleted since (its endpoints live on for a
moment), or created again under its name, is dropped. The FleetWorker refuses non-finite commands (the vessel
keeps its last valid one); the refusal is logged here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

import numpy as np
from geometry_msgs.msg import Wrench
from nav_msgs.msg import Odometry
from rclpy.node import Node
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64

from lotusim_core.base.vehicle_spec import VehicleSpec
from lotusim_core.ros.endpoints import QUIET_PUBLISHER, QUIET_SUBSCRIPTION
from lotusim_core.ros.prepacked import raw_publish
from lotusim_physics.endpoint_queue import EndpointQueue
from lotusim_physics.thruster_batch import ThrusterCommandBatch

ENDPOINT_BUDGET_S = 0.005  # wall time per call for creating and destroying vessels' topics (outside fast ticks)
HELD_ENDPOINT_S = 0.015  # the same while the sim time is held (run_until_s, paused): 15 ms of each 20 ms timer period
DEPTH = 10  # history depth of every per-vessel topic (reliable, volatile: rclpy's default QoS)


@dataclass
class VesselTopics:
    """A vessel's ROS endpoints: its command subscriptions and its odometry publisher (None until created)."""

    subscriptions: list = field(default_factory=list)
    odom_pub: object = None
    odom_send: object = None  # odom_pub's raw publish function (lotusim_core.ros.prepacked.raw_publish)


def actuator_topics(spec: VehicleSpec) -> list[tuple[str, int, str]]:
    """(kind, index, relative topic) of each actuator command of a vehicle: its thrusters, then its fins, in the
    vehicle file's order. Topics are named after the actuators (a ROS 2 name token cannot be a bare number)."""
    return [
        (kind, i, f"{kind}s/{actuator.name}/cmd")
        for kind, actuators in (("thruster", spec.thrusters), ("fin", spec.fins))
        for i, actuator in enumerate(actuators)
    ]


class VesselEndpoints:
    """The per-vessel topics of a DynamicsWorker `node`: uses its `core` (lotusim_physics.worker.FleetWorker),
    its `outputs` (lotusim_physics.dynamics_node_outputs.FleetOutputs: a vessel's odometry goes out once its
    publisher exists), its create_/destroy_ endpoint functions and its logger."""

    def __init__(self, node: Node) -> None:
        self.node, self.core = node, node.core  # (the worker's FleetWorker is restored in place, never replaced)
        self.topics: dict[str, VesselTopics] = {}
        self.queue = EndpointQueue()  # vessels whose topics are still to be made, endpoints still to be destroyed
        self._batch = ThrusterCommandBatch(self.core)

    def odom_send_of(self, name: str) -> Callable[[bytes], None] | None:
        """Vessel `name`'s odometry publish function, None until its topic exists."""
        return self.topics[name].odom_send

    def added(self, name: str) -> None:
        """Vessel `name` was created: its topics are to be made."""
        self.topics[name] = VesselTopics()
        self.queue.add(name)

    def removed(self, name: str) -> None:
        """Vessel `name` was deleted: its topics made so far are to be destroyed, the others not made."""
        self.node.outputs.forget(name)
        topics = self.topics.pop(name)
        doomed = [partial(self.node.destroy_subscription, sub) for sub in topics.subscriptions]
        if topics.odom_pub:
            doomed.append(partial(self.node.destroy_publisher, topics.odom_pub))
        self.queue.retire(name, doomed)

    def work(self, budget_s: float = ENDPOINT_BUDGET_S) -> None:
        """Destroy deleted vessels' topics, then make new vessels' topics, within `budget_s` wall seconds."""
        self.queue.work(budget_s, self._make, _call)

    def _make(self, name: str) -> None:
        """Vessel `name`'s command subscriptions and odometry publisher."""
        topics, node = self.topics[name], self.node

        def subscribe(kind, topic: str, handle) -> None:
            live = lambda m: self.topics.get(name) is topics and handle(m)  # noqa: E731
            sub = node.create_subscription(kind, f"{name}/{topic}", live, DEPTH, event_callbacks=QUIET_SUBSCRIPTION)
            topics.subscriptions.append(sub)

        for kind, i, topic in actuator_topics(self.core.fleet.spec(name)):
            subscribe(Float64, topic, partial(self._on_actuator, name, kind, i))
        subscribe(Wrench, "cmd_wrench", partial(self._on_wrench, name))
        topics.odom_pub = node.create_publisher(Odometry, f"{name}/odom", DEPTH, event_callbacks=QUIET_PUBLISHER)
        topics.odom_send = raw_publish(topics.odom_pub)
        node.outputs.odom_ready(name, topics.odom_send)

    def _on_actuator(self, name: str, kind: str, index: int, msg: Float64) -> None:
        self._warn(self.core.command_actuator(name, kind, index, msg.data))

    def _on_wrench(self, name: str, msg: Wrench) -> None:
        f, t = msg.force, msg.torque
        self._warn(self.core.command_wrench(name, np.array([f.x, f.y, f.z, t.x, t.y, t.z])))

    def on_thruster_batch(self, msg: JointState) -> None:
        """/lotusim/thruster_commands: this worker's vessels' commands of the batch (lotusim_physics.thruster_batch)."""
        self._warn(self._batch.apply(msg.name, msg.velocity))

    def _warn(self, problem: str) -> None:
        if problem:
            self.node.get_logger().warning(problem)


def _call(destroy: Callable[[], None]) -> None:
    destroy()
