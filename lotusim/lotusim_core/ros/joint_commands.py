"""Commands of many joints (actuators) in one sensor_msgs/JointState, written in place: the bytes of a fixed list of
names are serialized once, each message then rewrites its stamp and the velocities through a NumPy view. What the
controller hosts send on /lotusim/thruster_commands (lotusim_physics.thruster_batch reads it)."""

from __future__ import annotations

import struct

import numpy as np
from rclpy.serialization import deserialize_message, serialize_message
from sensor_msgs.msg import JointState


class JointCommands:
    """The serialized sensor_msgs/JointState of a fixed list of names (e.g. `<vessel>/thrusters/<rotor>`) and a
    header.frame_id (the sending host, or empty), made once; each message rewrites its stamp and its velocities
    (`velocity`, an (n,) view) in place. The velocities' offset is the one place where two serializations with
    different probe velocities hold each its own probe (two independent coincidences in padding bytes would be
    needed to fool it), then checked by deserializing a third; lotusim_core.ros.cdr_layout does not follow Fast DDS
    for a JointState's sequences, so it is not used. If the check fails (another middleware's encoding), every
    message is serialized in full instead (`in_place` False)."""

    def __init__(self, names: list[str], frame_id: str = "") -> None:
        self.names, self.frame_id, n = names, frame_id, len(names)
        self._stamp = struct.Struct("<iI")  # header.stamp (sec, nanosec): the payload's first 8 bytes
        self.in_place = True
        try:
            self._buffer, offset = self._layout(names, frame_id)
            self.velocity = np.frombuffer(self._buffer, dtype="<f8", count=n, offset=offset)
            self.velocity[:] = 7.25 - np.arange(n)
            back = deserialize_message(self.message(12, 34), JointState)
            same = list(back.name) == names and list(back.velocity) == self.velocity.tolist()
            if not same or back.header.stamp.sec != 12 or back.header.frame_id != frame_id:
                raise ValueError("JointCommands: the velocities or the stamp are not where they were found")
        except ValueError:
            self.in_place, self.velocity = False, np.zeros(n)

    @staticmethod
    def _layout(names: list[str], frame_id: str) -> tuple[bytearray, int]:
        n = len(names)
        probes = [1.5 + np.arange(n, dtype=float), -1.0e300 - 3.0e299 * np.arange(n, dtype=float)]
        a, b = (serialize_message(JointCommands._full(names, frame_id, p.tolist())) for p in probes)
        if len(a) != len(b) or not a[1] & 1:
            raise ValueError("JointCommands: needs little-endian CDR of a fixed length")
        want_a, want_b = (p.astype("<f8").tobytes() for p in probes)
        offsets = [k for k in range(4, len(a) - 8 * n + 1) if a[k : k + 8 * n] == want_a and b[k : k + 8 * n] == want_b]
        if n and len(offsets) != 1:
            raise ValueError(f"JointCommands: the velocities found at {offsets}, expected one place")
        return bytearray(a), offsets[0] if n else 0

    def message(self, sec: int, nanosec: int) -> bytes:
        """The bytes with this stamp and the velocities as written."""
        if not self.in_place:
            msg = self._full(self.names, self.frame_id, self.velocity.tolist())
            msg.header.stamp.sec, msg.header.stamp.nanosec = sec, nanosec
            return serialize_message(msg)
        self._stamp.pack_into(self._buffer, 4, sec, nanosec)
        return bytes(self._buffer)

    @staticmethod
    def _full(names: list[str], frame_id: str, velocity: list[float]) -> JointState:
        msg = JointState(name=names, velocity=velocity)
        msg.header.frame_id = frame_id
        return msg
