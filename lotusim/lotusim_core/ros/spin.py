"""Spin an executor until a condition holds or a deadline passes: the one loop every lotusim client waits with.

`wait_for` is the loop (it says whether the condition came in time); `spin_until` raises a TimeoutError that
says what did not happen. Both take wall time (time.monotonic), never sim time: a client waiting for a
simulation whose clock is held must still give up. ROS-free: anything with `spin_once(timeout_sec=...)` serves.
"""

from __future__ import annotations

import time
from collections.abc import Callable

SpinOnce = Callable[[float], None]  # spins for at most the given wall seconds
STEP_S = 0.05  # wall seconds of one idle spin: how late a time-based condition may be noticed


def wait_for(
    spin_once: SpinOnce,
    predicate: Callable[[], bool],
    timeout_s: float,
    *,
    check: Callable[[], None] | None = None,
    step_s: float = STEP_S,
) -> bool:
    """Call `spin_once` until `predicate()` is true or `timeout_s` wall seconds have passed; return predicate().

    `check` is called before each spin (and may raise: Ctrl-C, a supervised process that died, a progress line)."""
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if check is not None:
            check()
        remaining = deadline - time.monotonic()
        if remaining <= 0.0:
            return predicate()
        spin_once(min(step_s, remaining))
    return True


def spin_until(
    executor,
    predicate: Callable[[], bool],
    timeout_s: float,
    what: str | Callable[[], str],
    *,
    hint: str = "",
    check: Callable[[], None] | None = None,
    step_s: float = STEP_S,
) -> None:
    """Spin `executor` (an rclpy executor) until `predicate()` is true; after `timeout_s` wall seconds raise
    TimeoutError("<what> within <timeout_s> s (<hint>)").

    `what` says what did not happen ("the MAS server did not come up", "/lotusim/list_vessels: no answer"); a
    callable is asked when the time is up (to name what is still missing). `check` as in `wait_for`."""

    def spin_once(timeout: float) -> None:
        executor.spin_once(timeout_sec=timeout)

    if wait_for(spin_once, predicate, timeout_s, check=check, step_s=step_s):
        return
    text = what() if callable(what) else what
    raise TimeoutError(f"{text} within {timeout_s:g} s" + (f" ({hint})" if hint else ""))
