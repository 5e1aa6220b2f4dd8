"""raw_publish: a write DDS refuses drops that message and the publisher goes on (a worker died of one)."""

from __future__ import annotations

import pytest

pytest.importorskip("rclpy")

from rclpy._rclpy_pybind11 import RCLError  # noqa: E402

from lotusim_core.ros.prepacked import raw_publish  # noqa: E402


class _Inner:
    """rclpy's C++ publisher as raw_publish sees it: refuses the writes listed in `refuse`."""

    def __init__(self, refuse: set[int]) -> None:
        self.refuse, self.sent, self.calls = refuse, [], 0

    def publish_raw(self, data: bytes) -> None:
        self.calls += 1
        if self.calls in self.refuse:
            raise RCLError("Failed to publish: cannot publish data")
        self.sent.append(data)


class _Publisher:
    topic_name = "/lotusim/fleet_state"

    def __init__(self, inner: _Inner) -> None:
        self._Publisher__publisher = inner


def test_a_refused_write_drops_one_message_and_the_next_ones_go():
    inner = _Inner(refuse={2, 3, 150})
    send = raw_publish(_Publisher(inner))
    for k in range(200):
        send(bytes([k % 256]))
    assert len(inner.sent) == 197 and bytes([1]) not in inner.sent and bytes([4]) in inner.sent
    assert inner.sent[-1] == bytes([199])


def test_other_errors_still_raise():
    class Broken(_Inner):
        def publish_raw(self, data: bytes) -> None:
            raise TypeError("not bytes")

    with pytest.raises(TypeError):
        raw_publish(_Publisher(Broken(set())))(b"x")
