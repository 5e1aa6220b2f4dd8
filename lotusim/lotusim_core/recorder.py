"""Record topics of a running simulation to a rosbag2 directory in MCAP storage, readable by `ros2 bag`,
Foxglove and PlotJuggler, without rosbag2 installed: messages are subscribed in serialized form (CDR bytes,
`raw=True`) and written as they came with the pure-Python `rosbags` writer; the message definitions (standard
and lotusim_interfaces) go into the file so that any reader can decode them.
"""

from __future__ import annotations

import importlib
import os
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


class BagRecorder:
    """Subscribe to topics (raw) on a node and write every message to `<path>` (rosbag2, MCAP storage)."""

    def __init__(
        self, node, path: str | Path, topics: dict[str, type], every: dict[str, int] | None = None, now_ns=None
    ) -> None:
        """topics: topic -> message class; every: topic -> keep one message in N (decimation, default 1);
        now_ns: the log time of a message (default: the node's clock)."""
        self.path = Path(path)
        if self.path.exists():
            raise FileExistsError(f"recording {self.path} exists already: choose another --record path or delete it")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._store = make_typestore()
        self._writer = Writer(self.path, version=9, storage_plugin=StoragePlugin.MCAP)
        self._writer.open()
        self.counts: dict[str, int] = {}
        self._every = every or {}
        self._seen: dict[str, int] = {}
        clock = node.get_clock()
        self._now_ns = now_ns or (lambda: clock.now().nanoseconds)
        for topic, msg_type in topics.items():
            module = msg_type.__module__.split(".")[0]
            name = f"{module}/msg/{msg_type.__name__}"
            connection = self._writer.add_connection(topic, name, typestore=self._store)
            self.counts[topic] = 0
            node.create_subscription(
                msg_type, topic, lambda data, c=connection, t=topic: self._write(c, t, data), 100, raw=True
            )

    def _write(self, connection, topic: str, data: bytes) -> None:
        if self._writer is None:
            return
        seen = self._seen.get(topic, 0)
        self._seen[topic] = seen + 1
        if seen % self._every.get(topic, 1):
            return
        self._writer.write(connection, self._now_ns(), data)
        self.counts[topic] += 1

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None


def message_class(type_name: str) -> type:
    """'sensor_msgs/msg/Imu' -> the rclpy message class."""
    package, kind, name = type_name.split("/")
    return getattr(importlib.import_module(f"{package}.{kind}"), name)


def resolve_topic_types(node, executor, topics: list[str], timeout_s: float = 5.0) -> tuple[dict[str, type], list[str]]:
    """Wait up to timeout_s for the topics to appear in the ROS graph; return {topic: class} and the missing."""
    deadline = time.monotonic() + timeout_s
    while True:
        known = dict(node.get_topic_names_and_types())
        found = {t: message_class(known[t][0]) for t in topics if t in known}
        if len(found) == len(topics) or time.monotonic() > deadline:
            return found, [t for t in topics if t not in found]
        executor.spin_once(timeout_sec=0.1)
