"""Shared test fixtures: ROS isolation (one DDS domain per test process) and an rclpy context per test.

A distinct ROS_DOMAIN_ID per test process is the only isolation that holds across processes
(shared/reference/ros2_pip.md): we take the first free id in 1..100 by holding an exclusive lock file on it
for the life of the process, so concurrent pytest runs on one machine never share a domain.
"""

from __future__ import annotations

import fcntl
import os
import tempfile

import pytest

_DOMAIN_LOCK = None


def _claim_free_domain(after: int = 0) -> tuple[int, object]:
    """The first ROS domain id in 1..100 (from after + 1 on, wrapping) whose lock file nobody holds, and the
    held lock (keep it open)."""
    for k in range(100):
        domain = (after + k) % 100 + 1
        path = os.path.join(tempfile.gettempdir(), f"lotusim-ros-domain-{domain}.lock")
        handle = open(path, "w")  # noqa: SIM115 - held open for the life of the process
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.close()
            continue
        return domain, handle
    raise RuntimeError("no free ROS domain id in 1..100 for the tests")


def _claim_domain_id() -> int:
    global _DOMAIN_LOCK
    domain, _DOMAIN_LOCK = _claim_free_domain()
    return domain


# Set before any rclpy import: the environment is read when a context is initialised, and subprocesses
# inherit it.
os.environ["ROS_DOMAIN_ID"] = str(_claim_domain_id())
os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
os.environ.setdefault("RMW_IMPLEMENTATION", "rmw_fastrtps_cpp")
# UDP only: killed processes would otherwise leave Fast DDS shared-memory files in /dev/shm.
os.environ.setdefault("FASTDDS_BUILTIN_TRANSPORTS", "UDPv4")


_LAST_TEST_DOMAIN = [int(os.environ["ROS_DOMAIN_ID"])]


@pytest.fixture
def ros_context():
    """A fresh rclpy context for one test, on a ROS domain of its own, shut down and destroyed afterwards.

    Its own domain (the next free one, in turn): the DDS participants of earlier tests of this process can
    linger in discovery for a while, and a service or action client that sees a stale server next to the
    live one can wait for it (seen as a fleet_command server never ready in 45 s, 1 test in ~500). Destroyed,
    not only shut down: shutdown leaves the participant alive until the garbage collector finalizes it."""
    import rclpy
    from rclpy.signals import SignalHandlerOptions

    domain, lock = _claim_free_domain(after=_LAST_TEST_DOMAIN[0])
    _LAST_TEST_DOMAIN[0] = domain
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=domain, signal_handler_options=SignalHandlerOptions.NO)
    try:
        yield context
    finally:
        context.try_shutdown()
        context.destroy()
        lock.close()


@pytest.fixture
def own_domain_env():
    """Environment for subprocesses on a ROS domain of their own (not this test process's): participants that
    earlier tests of this process created and destroyed cannot be matched by them."""
    domain, lock = _claim_free_domain()
    yield dict(os.environ, ROS_DOMAIN_ID=str(domain))
    lock.close()
