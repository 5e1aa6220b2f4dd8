"""A controller host's actuator commands, sent together: the controllers of a host write their fin and thruster
commands here instead of publishing one std_msgs/Float64 per actuator, and the host sends what was written as one
sensor_msgs/JointState on /lotusim/thruster_commands once the callbacks that wrote it are done (the worker applies
it: lotusim_physics.thruster_batch). The worker publishes its vessels' odometry together, so the controllers of a
host step in one burst of callbacks and their commands leave in one message instead of hundreds.

Names are the command topics' without `/cmd` (`<vessel>/fins/<fin>`, `<vessel>/thrusters/<thruster>`); values the
numbers those topics would carry. The command topics stay advertised, and a command is published on its topic too
while someone besides the worker listens there (`ros2 topic echo`, a recorder; checked every LISTENERS_PERIOD_S).
A controller outside a host (its own node) publishes on its topics only, and so does a host whose
`batch_commands` parameter is false: for a stack that remaps the command topics, and the default of a host built
and spun inside another program (the flushes come from the host process's own spin loop,
lotusim_core.ros.node_runner.spin).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from rclpy.node import Node
from sensor_msgs.msg import JointState

from lotusim_core.ros.joint_commands import JointCommands
from lotusim_core.ros.prepacked import raw_publish

TOPIC = "/lotusim/thruster_commands"
QUIET_S = 0.001  # wall time the host's executor waits for the next callback while commands are held
MAX_HOLD_S = 0.02  # wall time the first held command may wait for the burst to end (a step at RTF 1)
LISTENERS_PERIOD_S = 1.0  # how often the command topics' subscriber counts are looked at


class CommandOutbox:
    """writer(name, ...) -> a function of the value that holds it; flush() sends every command written so far (the
    last value of each; a vessel's controller owns its actuators, so repeating an unchanged command changes
    nothing) in one message, if any was written since the last flush. node_runner.spin polls the executor for
    QUIET_S at a time while commands are held and flushes when `ready()`: a poll that waited QUIET_S without a new
    command (the burst is over), or the first one held for MAX_HOLD_S."""

    def __init__(self, node: Node) -> None:
        self.node = node
        self._send = raw_publish(node.create_publisher(JointState, TOPIC, 10))
        self.names: list[str] = []
        self._index: dict[str, int] = {}
        self._values: list[float] = []
        self._written: list[int] = []  # indices written at least once, in the order of their first write
        self._in_message: set[int] = set()  # the same, as a set
        self._template: JointCommands | None = None  # the message of the names in _written
        self.pending = False  # commands written since the last flush
        self._first = 0.0  # monotonic time of the first write since the last flush
        self.writes = 0  # commands written so far (node_runner.spin compares it before and after a poll)
        self.sent = 0  # messages sent
        self.quiet_s = QUIET_S  # how long node_runner.spin waits for the next callback while commands are held
        self._topics: list[tuple[object, list[bool]]] = []  # (publisher, [listened by more than the worker])
        self._listeners_checked = 0.0

    def writer(self, name: str, publisher: object, send: Callable[[float], None]) -> Callable[[float], None]:
        """The function that holds a command for actuator `name` until the next flush, and publishes it with
        `send` on `publisher`'s topic as well while that topic has listeners besides the worker."""
        i = self._index.get(name)
        if i is None:
            i = self._index[name] = len(self.names)
            self.names.append(name)
            self._values.append(0.0)
        values, written = self._values, self._written
        listened = [publisher.get_subscription_count() > 1]
        self._topics.append((publisher, listened))

        def write(value: float) -> None:
            if not self.pending:
                self._first, self.pending = time.monotonic(), True
            self.writes += 1
            if i not in self._in_message:  # its first command: the message gets its name
                self._in_message.add(i)
                written.append(i)
                self._template = None
            values[i] = value
            if listened[0]:
                send(value)

        return write

    def ready(self, idle: bool) -> bool:
        """Commands are held and the burst is over (`idle`: the executor waited QUIET_S and ran no callback that
        wrote one) or the first has waited MAX_HOLD_S."""
        return self.pending and (idle or time.monotonic() - self._first >= MAX_HOLD_S)

    def flush(self) -> None:
        """Send the commands as one JointState stamped with the node's (sim) time, if any was written since the
        last flush."""
        if not self.pending:
            return
        self.pending = False
        if self._template is None:
            self._template = JointCommands([self.names[i] for i in self._written])
        self._template.velocity[:] = [self._values[i] for i in self._written]
        sec, nanosec = self.node.get_clock().now().seconds_nanoseconds()
        self._send(self._template.message(sec, nanosec))
        self.sent += 1
        if time.monotonic() - self._listeners_checked > LISTENERS_PERIOD_S:
            self._listeners_checked = time.monotonic()
            for publisher, listened in self._topics:
                listened[0] = publisher.get_subscription_count() > 1  # the worker's is one
