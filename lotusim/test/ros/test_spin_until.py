"""lotusim_core.ros.spin: the one "spin until a condition or a deadline" loop, with a stand-in executor (no ROS)."""

from __future__ import annotations

import time

import pytest

from lotusim_core.ros.spin import spin_until, wait_for


class FakeExecutor:
    """Records the timeouts it is spun with; sleeps them when idle, as an executor with no work does."""

    def __init__(self, idle: bool = False) -> None:
        self.timeouts: list[float] = []
        self.idle = idle

    def spin_once(self, timeout_sec: float) -> None:
        self.timeouts.append(timeout_sec)
        if self.idle:
            time.sleep(timeout_sec)


def test_returns_as_soon_as_the_condition_holds():
    executor = FakeExecutor()
    spin_until(executor, lambda: len(executor.timeouts) == 3, 10.0, "three spins")
    assert len(executor.timeouts) == 3
    assert all(0.0 < t <= 0.05 for t in executor.timeouts)


def test_a_condition_already_true_spins_and_checks_nothing():
    executor, checks = FakeExecutor(), []
    spin_until(executor, lambda: True, 0.0, "nothing", check=lambda: checks.append(1))
    assert executor.timeouts == [] and checks == []


def test_timeout_says_what_did_not_happen_and_the_hint():
    executor = FakeExecutor(idle=True)
    start = time.monotonic()
    with pytest.raises(TimeoutError) as raised:
        spin_until(executor, lambda: False, 0.3, "the MAS server did not come up", hint="is it running?")
    waited = time.monotonic() - start
    assert str(raised.value) == "the MAS server did not come up within 0.3 s (is it running?)"
    assert 0.3 <= waited < 1.0
    assert max(executor.timeouts) <= 0.05 + 1e-12  # idle spins of at most one step
    assert sum(executor.timeouts) == pytest.approx(0.3, abs=0.06)  # the last one cut to the time left


def test_a_callable_what_is_asked_when_the_time_is_up():
    missing = ["worker_0", "worker_1"]

    def still_missing() -> str:
        return f"{', '.join(missing)} did not report"

    def worker_0_reports() -> bool:  # worker_0 reports during the wait, worker_1 never
        if "worker_0" in missing:
            missing.remove("worker_0")
        return False

    with pytest.raises(TimeoutError, match=r"^worker_1 did not report within 0.1 s$"):
        spin_until(FakeExecutor(idle=True), worker_0_reports, 0.1, still_missing)


def test_check_runs_before_each_spin_and_its_error_ends_the_wait():
    executor, checks = FakeExecutor(), []

    def check() -> None:
        checks.append(len(executor.timeouts))
        if len(checks) == 4:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        spin_until(executor, lambda: False, 10.0, "never", check=check)
    assert checks == [0, 1, 2, 3] and len(executor.timeouts) == 3


def test_wait_for_says_whether_the_condition_came_in_time():
    spun: list[float] = []
    assert wait_for(spun.append, lambda: len(spun) >= 2, 10.0)
    assert not wait_for(lambda t: time.sleep(t), lambda: False, 0.05, step_s=0.01)
    assert wait_for(lambda t: None, lambda: True, 0.0)  # a zero timeout still reads the condition
