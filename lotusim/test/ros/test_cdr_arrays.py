"""RawArrays: NumPy views into a serialized FleetState read back as the intended message."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("rclpy")

from rclpy.serialization import deserialize_message  # noqa: E402

from lotusim_core.ros.prepacked import RawArrays  # noqa: E402
from lotusim_interfaces.msg import FleetState  # noqa: E402


@pytest.mark.parametrize("n", [1, 3, 250])
def test_fleet_state_arrays_written_through_views_deserialize_exactly(n):
    names = [f"v{k}" * (k % 3 + 1) for k in range(n)]  # names of different lengths shift the layout
    msg = FleetState(worker="worker_0", names=names)
    msg.header.frame_id = "map"
    widths = {"position": 3, "orientation": 4, "twist": 6, "accel": 6, "environment": 6}
    for name, width in widths.items():
        setattr(msg, name, [0.0] * (n * width))
    msg.status = bytes(n)
    writer = RawArrays(msg, list(widths), ["header.stamp.sec", "header.stamp.nanosec", "iteration"], ["status"])
    rng = np.random.default_rng(4)
    expected = {name: rng.normal(size=n * width) for name, width in widths.items()}
    for name, values in expected.items():
        writer.views[name][:] = values
    status = rng.integers(0, 2, n, dtype=np.uint8)
    writer.views["status"][:] = status
    out = deserialize_message(writer.pack((12, 345_000_000, 2**40 + 7)), FleetState)
    assert out.names == names and out.worker == "worker_0" and out.header.frame_id == "map"
    assert (out.header.stamp.sec, out.header.stamp.nanosec, out.iteration) == (12, 345_000_000, 2**40 + 7)
    for name, values in expected.items():
        np.testing.assert_array_equal(np.asarray(getattr(out, name)), values)
    np.testing.assert_array_equal(np.frombuffer(bytes(out.status), dtype=np.uint8), status)


def test_odometry_batch_rows_deserialize_exactly_for_names_of_every_length():
    """RawBatch: odometry of vessels whose names (child frame ids) shift the layout, written for a subset of
    rows at a time, reads back as the Odometry rclpy would have built; re-layout keeps cached rows right."""
    from nav_msgs.msg import Odometry

    from lotusim_core.ros.prepacked import RawBatch

    doubles = [f"pose.pose.position.{a}" for a in "xyz"] + [f"pose.pose.orientation.{a}" for a in "xyzw"]
    doubles += [f"twist.twist.linear.{a}" for a in "xyz"] + [f"twist.twist.angular.{a}" for a in "xyz"]
    names = [f"v{'x' * k}" for k in range(11)]  # 11 lengths: every alignment of the pose after the string

    def odom(name):
        msg = Odometry()
        msg.header.frame_id, msg.child_frame_id = "map", f"{name}/base_link"
        return msg

    batch = RawBatch(doubles, ["header.stamp.sec", "header.stamp.nanosec"])
    batch.layout(names, odom)
    rng = np.random.default_rng(7)
    values = rng.normal(size=(len(names), 13))
    batch.write(np.arange(0, len(names), 2), values[0::2], (5, 999_999_999))
    batch.write(np.arange(1, len(names), 2), values[1::2], (6, 1))
    for i, name in enumerate(names):
        out = deserialize_message(batch.message(i), Odometry)
        p, q, v, w = out.pose.pose.position, out.pose.pose.orientation, out.twist.twist.linear, out.twist.twist.angular
        got = [p.x, p.y, p.z, q.x, q.y, q.z, q.w, v.x, v.y, v.z, w.x, w.y, w.z]
        assert got == values[i].tolist(), name
        assert (out.header.stamp.sec, out.header.stamp.nanosec) == ((5, 999_999_999) if i % 2 == 0 else (6, 1))
        assert out.child_frame_id == f"{name}/base_link" and out.header.frame_id == "map"
        assert out.pose.covariance.tolist() == [0.0] * 36
    # a changed fleet: rows reordered and one dropped, from the cached serializations
    kept = names[::-1][1:]
    batch.layout(kept, odom)
    batch.write(np.arange(len(kept)), values[: len(kept)], (7, 0))
    for i, name in enumerate(kept):
        out = deserialize_message(batch.message(i), Odometry)
        assert out.child_frame_id == f"{name}/base_link" and out.pose.pose.position.x == values[i, 0]
    empty = RawBatch(doubles, ["header.stamp.sec"])
    empty.write(np.arange(0), np.zeros((0, 13)), (1,))  # no rows: nothing to do, no error
    assert empty.rows == 0


def test_transforms_sequence_rows_deserialize_exactly_for_frames_of_every_length():
    """RawSequence: a tf2_msgs/TFMessage whose child frame ids shift every element's layout (11 lengths: every
    alignment), its numbers written through NumPy, reads back as the message rclpy would have built."""
    from geometry_msgs.msg import TransformStamped
    from tf2_msgs.msg import TFMessage

    from lotusim_core.ros.prepacked import RawSequence

    names = [f"v{'x' * k}/base_link" for k in range(11)]
    msg = TFMessage(transforms=[TransformStamped(child_frame_id=name) for name in names])
    for transform in msg.transforms:
        transform.header.frame_id = "map"
    fields = [f"transform.translation.{a}" for a in "xyz"] + [f"transform.rotation.{a}" for a in "xyzw"]
    seq = RawSequence(msg, "transforms", fields, ["header.stamp.sec", "header.stamp.nanosec"])
    assert seq.rows == len(names) and seq.double_index.shape == (len(names), 7)
    values = np.random.default_rng(3).normal(size=(len(names), 7))
    seq.doubles[seq.double_index] = values
    seq.write_ints((-2, 4_000_000_000))  # int32 and uint32 extremes
    out = deserialize_message(seq.message(), TFMessage)
    for i, t in enumerate(out.transforms):
        tr, ro = t.transform.translation, t.transform.rotation
        assert [tr.x, tr.y, tr.z, ro.x, ro.y, ro.z, ro.w] == values[i].tolist()
        assert (t.header.stamp.sec, t.header.stamp.nanosec) == (-2, 4_000_000_000)
        assert t.header.frame_id == "map" and t.child_frame_id == names[i]
    assert msg.transforms[0].transform.rotation.w == 1.0  # the template message is left as it was
    with pytest.raises(ValueError, match="no field"):
        RawSequence(msg, "transforms", ["transform.nope"])
