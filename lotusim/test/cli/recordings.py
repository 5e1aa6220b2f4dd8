"""Reading back what a `lotusim run --record` wrote, for the end-to-end tests: a topic's messages, a vessel's pose
at a message's stamp, and the rotation of a quaternion written from its formula (not the code under test)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from rosbags.highlevel import AnyReader


def read(record: Path, topic: str) -> list:
    """The messages of `topic` in the recording under `record` (its first MCAP's directory), in log order."""
    bags = sorted(record.rglob("*.mcap"))
    with AnyReader([bags[0].parent]) as reader:
        conns = [c for c in reader.connections if c.topic == topic]
        return [reader.deserialize(raw, c.msgtype) for c, _, raw in reader.messages(connections=conns)]


def stamp_s(msg) -> float:
    """A stamped message's header stamp in seconds."""
    return msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9


def rotation(q_xyzw: np.ndarray) -> np.ndarray:
    """3 x 3 rotation map <- base_link of a unit quaternion x y z w."""
    x, y, z, w = q_xyzw
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ])  # fmt: skip


def pose_at(tracks: dict, vessel: str, stamp) -> tuple[np.ndarray, np.ndarray]:
    """`vessel`'s recorded position (map ENU m) and rotation nearest to `stamp` (a builtin_interfaces Time);
    tracks as test_scenarios_e2e.run_scenario returns them."""
    t, xyz, q = tracks[vessel]
    i = int(np.argmin(np.abs(t - (stamp.sec + stamp.nanosec * 1e-9))))
    return xyz[i], rotation(q[i])
