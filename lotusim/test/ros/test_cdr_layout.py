"""Field offsets of serialized messages come from the CDR layout, never from searching bytes: templates build
every time (the padding bytes the middleware leaves uninitialised may hold earlier probe values) and patch the
right bytes."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("rclpy")

from geometry_msgs.msg import TransformStamped  # noqa: E402
from rclpy.serialization import deserialize_message, serialize_message  # noqa: E402
from tf2_msgs.msg import TFMessage  # noqa: E402

from lotusim_core.ros import cdr_layout  # noqa: E402
from lotusim_core.ros.prepacked import RawMessage, RawSequence  # noqa: E402

TF_DOUBLES = [f"transform.translation.{a}" for a in "xyz"] + [f"transform.rotation.{a}" for a in "xyzw"]
STAMP = ["header.stamp.sec", "header.stamp.nanosec"]


def _tf_message(names: list[str]) -> TFMessage:
    msg = TFMessage(transforms=[TransformStamped(child_frame_id=f"{name}/base_link") for name in names])
    for transform in msg.transforms:
        transform.header.frame_id = "map"
    return msg


def test_tf_templates_build_every_time_for_many_sizes_and_read_back_exactly():
    """Before the layout was computed, a 100-transform template failed in most tries ('cannot locate the
    element fields uniquely'): old probe values in padding bytes were found twice."""
    rng = np.random.default_rng(20)
    for n in (0, 1, 2, 3, 7, 31, 100, 257):
        for _ in range(20 if n <= 100 else 3):
            names = [f"v{'x' * int(k)}" for k in rng.integers(0, 12, n)]  # every alignment after the string
            msg = _tf_message(names)
            raw = RawSequence(msg, "transforms", TF_DOUBLES, STAMP)
            values = rng.normal(size=(n, len(TF_DOUBLES)))
            raw.doubles[raw.double_index] = values
            raw.write_ints((1_234, 999_999_999))
            out = deserialize_message(raw.message(), TFMessage)
            assert [t.child_frame_id for t in out.transforms] == [f"{name}/base_link" for name in names]
            for transform, row in zip(out.transforms, values, strict=True):
                tr, rot = transform.transform.translation, transform.transform.rotation
                assert [tr.x, tr.y, tr.z, rot.x, rot.y, rot.z, rot.w] == row.tolist()
                assert (transform.header.stamp.sec, transform.header.stamp.nanosec) == (1_234, 999_999_999)
                assert transform.header.frame_id == "map"


def test_layout_offsets_match_serializations_of_assorted_messages():
    """Offsets of every scalar field of a few standard messages (strings of several lengths, fixed arrays,
    sequences, nested messages): the bytes at each offset are the value the field was given."""
    from nav_msgs.msg import Odometry
    from sensor_msgs.msg import Imu, NavSatFix

    rng = np.random.default_rng(3)
    for make in (Odometry, Imu, NavSatFix):
        for length in range(9):
            msg = make()
            msg.header.frame_id = "f" * length
            offsets, types, end = cdr_layout.layout(msg)
            doubles = [p for p, t in types.items() if t == "double" and "covariance" not in p]
            RawMessage(msg, doubles + STAMP)  # raises if any field is not at its computed offset
            values = rng.normal(size=len(doubles))
            raw = RawMessage(msg, doubles)
            out = deserialize_message(raw.pack(values.tolist()), make)
            for path, value in zip(doubles, values, strict=True):
                obj = out
                for part in path.split("."):
                    obj = getattr(obj, part)
                assert obj == value, path
            assert end == len(serialize_message(msg))


def test_layout_ends_where_the_serialization_ends_with_empty_and_full_sequences():
    """Fast DDS pads to a sequence's element size after its count even when the sequence is empty (a JointState
    with names and no positions was 4 bytes longer than its layout said)."""
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray

    from lotusim_interfaces.msg import FleetState

    cases = [
        JointState(),
        JointState(name=["x"]),
        JointState(name=["a/b", "cc"], velocity=[1.0, 2.0]),
        JointState(velocity=[1.0]),
        Float64MultiArray(),
        Float64MultiArray(data=[1.0, 2.0]),
        FleetState(),
        FleetState(names=["ab"], position=[0.0, 0.0, 0.0]),
        FleetState(names=["a"], position=[0.0] * 3, orientation=[0.0, 0.0, 0.0, 1.0], status=[0]),
    ]
    for msg in cases:
        assert cdr_layout.layout(msg)[2] == len(serialize_message(msg)), msg


def test_a_layout_mismatch_is_refused_not_patched():
    msg = _tf_message(["a", "bb"])
    with pytest.raises(ValueError, match="not at its computed byte offset"):
        cdr_layout.verify(msg, cdr_layout.layout(msg)[2], [(4, "d", 123.0)])
