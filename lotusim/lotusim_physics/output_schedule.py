"""When a periodic output of a fixed-step simulation is due: integer arithmetic on sim time in nanoseconds.

An output at a rate of sim time (period T) is due after the first step at or after each multiple of T, that is
after step m when (m - 1) * dt < j * T <= m * dt for some whole j: what a ROS timer on sim time does when /clock
advances one step at a time. When T is a whole number of steps the interval is constant; otherwise it alternates
between the two neighbouring whole numbers of steps (0.03 s steps at 10 Hz: 4, 3, 3, 4, 3, 3, ... steps, i.e.
0.12, 0.09, 0.09 s) and the mean rate is exactly 1 / T, with no drift over any run length.

Outputs may be spread over the steps of a period (e.g. one odometry message per vessel, not all at one step):
group g is the same schedule delayed by g steps, for g = 0 .. `groups` - 1 where `groups` = ceil(T / dt) is the
longest interval in steps. Each group keeps the exact mean rate.
"""

from __future__ import annotations

import math
from typing import NamedTuple


class SimTimeRate:
    """The steps after which an output of period `period_ns` is due, for steps of `step_ns` (both > 0).

    Iterations count steps from sim time 0: after step m, sim time is m * step_ns."""

    def __init__(self, step_ns: int, period_ns: int) -> None:
        if step_ns <= 0 or period_ns <= 0:
            raise ValueError(f"step and period must be positive (ns), got {step_ns} and {period_ns}")
        self.step_ns = int(step_ns)
        self.period_ns = int(period_ns)
        self.groups = -(-self.period_ns // self.step_ns)  # ceil(T / dt): the longest interval, in steps

    @classmethod
    def from_rate_hz(cls, step_ns: int, rate_hz: float) -> SimTimeRate:
        """The schedule of `rate_hz` per second of sim time (period rounded to the nanosecond)."""
        if not rate_hz > 0:
            raise ValueError(f"rate must be positive, got {rate_hz} Hz")
        return cls(step_ns, max(1, round(1e9 / rate_hz)))

    def due(self, iteration: int, group: int = 0) -> bool:
        """Whether the output of `group` is due after step `iteration` (a multiple of T was reached)."""
        m = iteration - group
        return (m * self.step_ns) // self.period_ns != ((m - 1) * self.step_ns) // self.period_ns

    def steps_to_next(self, iteration: int, group: int = 0) -> int:
        """k >= 1 such that the output of `group` is next due after step `iteration` + k."""
        m = iteration - group
        j = (m * self.step_ns) // self.period_ns + 1  # the first multiple of T after sim time m * dt
        return -(-(j * self.period_ns) // self.step_ns) - m  # the step that reaches it, minus m

    def groups_due(self, iteration: int) -> list[int]:
        """The groups (0 .. groups - 1) due after step `iteration`, in increasing order (one or two).

        Group g is due when step iteration - g reached a multiple of T: the steps that reached the last
        multiples of T are walked back until they are `groups` steps old."""
        due: list[int] = []
        m = iteration
        while True:
            j = (m * self.step_ns) // self.period_ns  # the last multiple of T reached by step m
            m = -(-(j * self.period_ns) // self.step_ns)  # the step that reached it
            g = iteration - m
            if g >= self.groups:
                return due
            due.append(g)
            m -= 1


class Due(NamedTuple):
    """The outputs due after one step: the fleet state, the odometry groups, and the steps from this one to
    the next step after which some output is due (1 .. horizon)."""

    state: bool
    odom_groups: tuple[int, ...]
    steps_to_next: int


class OutputPlan:
    """The fleet state and per-vessel odometry schedules of a fleet of `vessels`, combined: what is due after a
    step and when the next output comes (the steps in between can be integrated in one call).

    The schedules repeat exactly every `cycle` steps (the smallest whole number of steps that is a whole number
    of each period), so the answer for an iteration is memoised by iteration % cycle when the cycle is short
    (0.03 s steps at 10 Hz: 10 steps); otherwise it is computed at each call."""

    MEMO_CYCLE_MAX = 10_000

    def __init__(self, state: SimTimeRate, odom: SimTimeRate | None, vessels: int, horizon: int) -> None:
        self.state, self.odom, self.vessels, self.horizon = state, odom, int(vessels), int(horizon)
        cycle = _steps_per_cycle(state)
        if odom is not None:
            cycle = math.lcm(cycle, _steps_per_cycle(odom))
        self.cycle = cycle if cycle <= self.MEMO_CYCLE_MAX else 0
        self._memo: dict[int, Due] = {}

    def at(self, iteration: int) -> Due:
        """What is due after step `iteration` (and the steps to the next output after it)."""
        if not self.cycle:
            return self._compute(iteration)
        key = iteration % self.cycle
        due = self._memo.get(key)
        if due is None:
            due = self._memo[key] = self._compute(iteration)
        return due

    def _compute(self, iteration: int) -> Due:
        n, odom = self.vessels, self.odom
        if not n:  # no vessel, no output
            return Due(False, (), self.horizon)
        groups = tuple(g for g in odom.groups_due(iteration) if g < n) if odom is not None else ()
        k = min(self.horizon, self.state.steps_to_next(iteration))
        if odom is not None:  # with a vessel in every group, some odometry is due after every step
            k = 1 if n >= odom.groups else min(k, *(odom.steps_to_next(iteration, g) for g in range(n)))
        return Due(self.state.due(iteration), groups, max(1, k))


def _steps_per_cycle(rate: SimTimeRate) -> int:
    """The smallest number of steps whose duration is a whole number of periods."""
    return rate.period_ns // math.gcd(rate.period_ns, rate.step_ns)
