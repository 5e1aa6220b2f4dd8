"""Pre-serialized messages (lotusim_core.ros.prepacked): patched bytes deserialize to the intended message."""

from __future__ import annotations

import math

import pytest

pytest.importorskip("rclpy")

from geometry_msgs.msg import TwistWithCovarianceStamped  # noqa: E402
from rclpy.serialization import deserialize_message  # noqa: E402
from sensor_msgs.msg import Imu, NavSatFix, Range  # noqa: E402

from lotusim_core.ros.prepacked import RawMessage  # noqa: E402

IMU_FIELDS = ["header.stamp.sec", "header.stamp.nanosec", "orientation.x", "orientation.y", "orientation.z",
              "orientation.w", "angular_velocity.x", "angular_velocity.y", "angular_velocity.z",
              "linear_acceleration.x", "linear_acceleration.y", "linear_acceleration.z"]  # fmt: skip


def test_patched_imu_equals_the_message_built_field_by_field():
    template = Imu()
    template.header.frame_id = "a_rather_long_vessel_name_7/base_link"
    template.linear_acceleration_covariance = [0.5, 0, 0, 0, 0.5, 0, 0, 0, 0.5]
    raw = RawMessage(template, IMU_FIELDS)
    assert len(raw._runs) == 4  # stamp, orientation, angular velocity, acceleration
    values = [12, 345_000_000, 0.1, -0.2, 0.3, 0.9, 1e-3, -2e-3, 3e-3, 0.01, -0.02, 9.81]
    back = deserialize_message(raw.pack(values), Imu)
    assert back.header.frame_id == template.header.frame_id
    assert (back.header.stamp.sec, back.header.stamp.nanosec) == (12, 345_000_000)
    assert [back.orientation.x, back.orientation.y, back.orientation.z, back.orientation.w] == values[2:6]
    assert [back.angular_velocity.x, back.angular_velocity.y, back.angular_velocity.z] == values[6:9]
    assert [back.linear_acceleration.x, back.linear_acceleration.y, back.linear_acceleration.z] == values[9:12]
    assert list(back.linear_acceleration_covariance) == [0.5, 0, 0, 0, 0.5, 0, 0, 0, 0.5]
    again = deserialize_message(raw.pack([13, 0, *([0.0] * 10)]), Imu)  # the buffer is reused: nothing leaks
    assert again.header.stamp.sec == 13 and again.orientation.w == 0.0


def test_float32_int8_nan_and_whole_covariance_arrays():
    rng = Range()
    rng.header.frame_id = "v/base_link"
    raw = RawMessage(rng, ["header.stamp.sec", "header.stamp.nanosec", "range"])
    assert math.isinf(deserialize_message(raw.pack([1, 2, float("inf")]), Range).range)
    fix = NavSatFix()
    raw = RawMessage(fix, ["status.status", "latitude", "longitude", "altitude"])
    back = deserialize_message(raw.pack([-1, float("nan"), 2.5, 3.5]), NavSatFix)
    assert back.status.status == -1 and math.isnan(back.latitude) and back.altitude == 3.5
    twist = TwistWithCovarianceStamped()
    raw = RawMessage(twist, ["twist.twist.linear.x", "twist.covariance[]"])
    cov = [float(k) for k in range(36)]
    back = deserialize_message(raw.pack([0.7, *cov]), TwistWithCovarianceStamped)
    assert back.twist.twist.linear.x == 0.7 and list(back.twist.covariance) == cov


def test_unknown_field_is_refused_with_its_path():
    with pytest.raises(ValueError, match="no field 'nope'"):
        RawMessage(Imu(), ["orientation.nope"])


def test_single_run_packer_equals_pack_and_refuses_several_runs():
    """RawMessage.packer (the /clock fast path): the same bytes as pack, negative and large stamps included;
    a message whose fields are not one run in memory is refused."""
    from rosgraph_msgs.msg import Clock

    raw = RawMessage(Clock(), ["clock.sec", "clock.nanosec"])
    pack = raw.packer()
    for sec, nanosec in [(0, 0), (12, 345_000_000), (-5, 999_999_999), (2**31 - 1, 2**32 - 1)]:
        assert pack(sec, nanosec) == raw.pack((sec, nanosec))
        back = deserialize_message(pack(sec, nanosec), Clock)
        assert (back.clock.sec, back.clock.nanosec) == (sec, nanosec)
    with pytest.raises(ValueError, match="4 runs"):
        RawMessage(Imu(), IMU_FIELDS).packer()
