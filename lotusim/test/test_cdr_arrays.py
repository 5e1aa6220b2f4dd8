"""RawArrays: NumPy views into a serialized FleetState read back as the intended message."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("rclpy")

from rclpy.serialization import deserialize_message  # noqa: E402

from lotusim_core.cdr import RawArrays  # noqa: E402
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
