"""FleetClient without DDS (stand-in node, executor and service client): a listing's answer wait and attempts are
per call (a poll asks once; the default asks again when an answer is lost)."""

from __future__ import annotations

import pytest

pytest.importorskip("rclpy")

from lotusim_core.ros import fleet_client as fc  # noqa: E402
from lotusim_interfaces.msg import VesselInfo  # noqa: E402
from lotusim_interfaces.srv import ListVessels  # noqa: E402


class _Answer:
    """A service future: done once answered."""

    def __init__(self, reply=None) -> None:
        self.reply = reply

    def done(self) -> bool:
        return self.reply is not None

    def result(self):
        return self.reply


class _Service:
    """A ready service client whose first `lost` requests are never answered."""

    srv_name = fc.LIST_VESSELS

    def __init__(self, lost: int) -> None:
        self.lost, self.requests, self.removed = lost, [], 0

    def service_is_ready(self) -> bool:
        return True

    def call_async(self, request) -> _Answer:
        self.requests.append(request)
        if len(self.requests) <= self.lost:
            return _Answer()
        return _Answer(ListVessels.Response(vessels=[VesselInfo(name="a", worker=request.worker)]))

    def remove_pending_request(self, _future) -> None:
        self.removed += 1


class _Node:
    def __init__(self, service: _Service) -> None:
        self.service = service

    def create_client(self, _srv_type, name: str) -> _Service:
        assert name == fc.LIST_VESSELS
        return self.service


class _Executor:
    def spin_once(self, timeout_sec: float) -> None:
        pass


def test_a_listing_asks_again_when_its_answer_is_lost_by_default():
    service = _Service(lost=1)
    vessels = fc.FleetClient(_Node(service), _Executor()).list_vessels("worker_1", answer_s=0.01)
    assert [(v.name, v.worker) for v in vessels] == [("a", "worker_1")]
    assert len(service.requests) == 2 and service.removed == 1


def test_one_attempt_is_one_request_and_its_timeout_says_so():
    service = _Service(lost=1)
    with pytest.raises(TimeoutError, match=r"^/lotusim/list_vessels: no answer in 1 attempts"):
        fc.FleetClient(_Node(service), _Executor()).list_vessels(answer_s=0.01, attempts=1)
    assert len(service.requests) == 1
    service = _Service(lost=3)
    with pytest.raises(TimeoutError, match=r"no answer in 3 attempts"):
        fc.FleetClient(_Node(service), _Executor()).list_vessels(answer_s=0.01, attempts=3)
    assert len(service.requests) == 3 and service.removed == 3
