"""Record topics of a running simulation to a rosbag2 directory in MCAP storage, readable by `ros2 bag`,
Foxglove and PlotJuggler, without rosbag2 installed: messages are subscribed in serialized form (CDR bytes,
`raw=True`) and written as they came with the pure-Python `rosbags` writer; the message definitions (standard
and lotusim_interfaces) go into the file so that any reader can decode them.
"""

from __future__ import annotations

import importlib
import os
import struct
import time
from pathlib import Path

from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.typesys import Stores, get_types_from_msg, get_typestore


def _interface_dirs() -> list[Path]:
    dirs = []
    for prefix in os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep):
        share = Path(prefix) / "share" / "lotusim_interfaces" / "msg"
        if share.is_dir():
            dirs.append(share)
    source = Path(__file__).resolve().parents[2] / "lotusim_interfaces" / "msg"
    if source.is_dir():
        dirs.append(source)
    return dirs


def make_typestore():
    """The ROS 2 Kilted standard types plus lotusim_interfaces/msg/* from their .msg files."""
    store = get_typestore(Stores.ROS2_KILTED)
    for directory in _interface_dirs()[:1]:
        types = {}
        for path in sorted(directory.glob("*.msg")):
            types.update(get_types_from_msg(path.read_text(), f"lotusim_interfaces/msg/{path.stem}"))
        store.register(types)
    return store


QUEUE_DEPTH = 1000  # messages per topic a subscription holds before the oldest is dropped (bursts of fast mode)


def stamp_ns(data: bytes) -> int:
    """The header stamp (ns) of a serialized message that starts with a std_msgs/Header (CDR, little endian)."""
    sec, nanosec = struct.unpack_from("<iI", data, 4)
    return sec * 1_000_000_000 + nanosec


class BagRecorder:
    """Subscribe to topics (raw) on a node and write every message to `<path>` (rosbag2, MCAP storage)."""

    def __init__(
        self,
        node,
        path: str | Path,
        topics: dict[str, type],
        every: dict[str, int] | None = None,
        now_ns=None,
        every_ns: dict[str, int] | None = None,
    ) -> None:
        """topics: topic -> message class; every: topic -> keep one message in N (decimation by count,
        default 1); every_ns: topic -> keep the messages whose header stamp is a multiple of this period (ns;
        decimation by sim time, the same messages in every run; the newest message dropped is written at
        close if it is newer than the last kept, so the recording ends with the last state); now_ns: the log
        time of a message (default: the node's clock)."""
        self.path = Path(path)
        if self.path.exists():
            raise FileExistsError(f"recording {self.path} exists already: choose another --record path or delete it")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._store = make_typestore()
        self._writer = Writer(self.path, version=9, storage_plugin=StoragePlugin.MCAP)
        self._writer.open()
        self.counts: dict[str, int] = {}
        self._every = every or {}
        self._every_ns = every_ns or {}
        self._seen: dict[str, int] = {}
        self._dropped: dict[str, tuple[object, int, bytes]] = {}  # topic -> the newest message not kept
        self._kept_ns: dict[str, int] = {}  # topic -> the stamp of the newest message kept
        self.last_message_wall = time.monotonic()  # when the newest message came (monotonic s)
        self.subscriptions = {}
        self.newest_ns: dict[str, int] = {}  # stamped topic -> the newest header stamp received (ns)
        self.period_ns: dict[str, int] = {}  # stamped topic -> the interval between its last two stamps (ns)
        self._stamped = {t for t, m in topics.items() if next(iter(m.get_fields_and_field_types()), "") == "header"}
        clock = node.get_clock()
        self._now_ns = now_ns or (lambda: clock.now().nanoseconds)
        for topic, msg_type in topics.items():
            module = msg_type.__module__.split(".")[0]
            name = f"{module}/msg/{msg_type.__name__}"
            connection = self._writer.add_connection(topic, name, typestore=self._store)
            self.counts[topic] = 0
            self.subscriptions[topic] = node.create_subscription(
                msg_type, topic, lambda data, c=connection, t=topic: self._write(c, t, data), QUEUE_DEPTH, raw=True
            )

    def _write(self, connection, topic: str, data: bytes) -> None:
        if self._writer is None:
            return
        self.last_message_wall = time.monotonic()
        if topic in self._stamped:
            self._note_stamp(topic, stamp_ns(data))
        seen = self._seen.get(topic, 0)
        self._seen[topic] = seen + 1
        if seen % self._every.get(topic, 1):
            return
        period_ns = self._every_ns.get(topic)
        if period_ns:
            stamp = stamp_ns(data)
            if stamp % period_ns:
                self._dropped[topic] = (connection, self._now_ns(), data)
                return
            self._kept_ns[topic] = stamp
        self._writer.write(connection, self._now_ns(), data)
        self.counts[topic] += 1

    def _note_stamp(self, topic: str, stamp: int) -> None:
        newest = self.newest_ns.get(topic)
        if newest is not None and stamp > newest:
            self.period_ns[topic] = stamp - newest
        if newest is None or stamp > newest:
            self.newest_ns[topic] = stamp

    def behind(self, t_ns: int, active_since_ns: int, ignore: tuple[str, ...] = ()) -> list[str]:
        """The stamped topics, active since `active_since_ns` (sim time, ns), whose next message, one of their
        last intervals (x 1.5) after the newest, is due by sim time `t_ns` and has not come: their publisher
        has not caught up with sim time `t_ns` yet."""
        return [
            topic
            for topic, newest in self.newest_ns.items()
            if topic not in ignore
            and newest >= active_since_ns
            and topic in self.period_ns
            and newest + 1.5 * self.period_ns[topic] <= t_ns
        ]

    def matched(self, node) -> bool:
        """Every subscription matched with every publisher of its topic in the graph."""
        return all(s.get_publisher_count() >= node.count_publishers(t) for t, s in self.subscriptions.items())

    def close(self) -> None:
        if self._writer is None:
            return
        for topic, (connection, log_ns, data) in self._dropped.items():
            if stamp_ns(data) > self._kept_ns.get(topic, -1):
                self._writer.write(connection, log_ns, data)
                self.counts[topic] += 1
        self._writer.close()
        self._writer = None


def message_class(type_name: str) -> type:
    """'sensor_msgs/msg/Imu' -> the rclpy message class."""
    package, kind, name = type_name.split("/")
    return getattr(importlib.import_module(f"{package}.{kind}"), name)


def resolve_topic_types(
    node, executor, topics: list[str], timeout_s: float = 5.0, quiet_s: float | None = None, required=()
) -> tuple[dict[str, type], list[str]]:
    """Wait for the topics to appear in the ROS graph; return {topic: class} and the missing ones. Waits up to
    timeout_s, or, with quiet_s, only until no new topic of the list has appeared for quiet_s (a topic that
    no node publishes, such as a sensor one vessel lacks, then costs quiet_s, not the whole timeout); the quiet
    time counts only once the `required` topics (sure to come) are all there."""
    start = time.monotonic()
    deadline, last_new, count = start + timeout_s, start, -1
    while True:
        known = dict(node.get_topic_names_and_types())
        found = {t: message_class(known[t][0]) for t in topics if t in known}
        now = time.monotonic()
        if len(found) != count or not all(t in found for t in required):
            count, last_new = len(found), now
        if len(found) == len(topics) or now > deadline or (quiet_s is not None and now > last_new + quiet_s):
            return found, [t for t in topics if t not in found]
        executor.spin_once(timeout_sec=0.1)
