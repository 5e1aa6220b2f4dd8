"""Shared test fixtures: ROS isolation (one DDS domain per test process) and an rclpy context per test.

A distinct ROS_DOMAIN_ID per test process is the only isolation that holds across processes (participants of
one domain discover each other whatever their process, node names or namespaces): we take the first free id in
1..100 by holding an exclusive lock file on it for the life of the process, so concurrent pytest runs on one
machine never share a domain.
"""

from __future__ import annotations

import fcntl
import os
import signal
import tempfile
import time
import uuid
import warnings

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
# Every process a test starts inherits this mark (the subprocess environments are copies of os.environ), so
# what a test leaves running can be found and ended after it (kill_what_the_test_left).
_MARK = f"LOTUSIM_TEST_RUN={uuid.uuid4().hex}"
os.environ[_MARK.split("=")[0]] = _MARK.split("=")[1]


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


KEEP = "LOTUSIM_TEST_KEEP"  # in a subprocess environment: a module-scoped fixture ends it, not each test


def _marked_processes() -> list[int]:
    """The live processes other than this one that carry this test run's mark in their environment (and not
    KEEP=1)."""
    found = []
    mark, keep = _MARK.encode(), f"{KEEP}=1".encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as environ:
                variables = environ.read().split(b"\0")
                if mark not in variables or keep in variables:
                    continue
            with open(f"/proc/{entry}/stat") as stat:
                if stat.read().rsplit(")", 1)[1].split()[0] == "Z":
                    continue
        except OSError:  # gone, or not ours to read
            continue
        found.append(int(entry))
    return found


@pytest.fixture(autouse=True)
def kill_what_the_test_left(request):
    """After each test, end the processes it started and left running (a node orphaned by a failed test, a
    ros2 CLI daemon), with a warning naming them: on a 2-core machine one leftover fast-mode worker slows
    every later test, and a suite's failures then cascade into timeouts."""
    yield
    if not os.path.isdir("/proc"):
        return
    names: list[str] = []
    deadline = time.monotonic() + 5.0
    while (left := _marked_processes()) and time.monotonic() < deadline:  # again: one may fork meanwhile
        for pid in left:
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
                    command = cmdline.read().replace(b"\0", b" ").decode(errors="replace")
                os.kill(pid, signal.SIGKILL)
            except OSError:
                continue
            if not any(n.startswith(f"{pid}: ") for n in names):
                names.append(f"{pid}: {command[:120]}")
        time.sleep(0.05)
    if names:  # one killed while creating a shared-memory port would leave every later node waiting for it
        from lotusim_core.ros import shared_memory

        shared_memory.remove_unused(min_age_s=1.0)  # the killed processes' files; not a starting node's
    daemons = [n for n in names if "ros2cli.daemon" in n]
    others = [n for n in names if n not in daemons]
    if others:
        warnings.warn(f"{request.node.nodeid} left {len(others)} process(es) running, killed: {others}", stacklevel=1)
