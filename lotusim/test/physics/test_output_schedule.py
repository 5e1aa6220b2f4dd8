"""Output schedules in sim time (lotusim_physics.output_schedule): exact mean rates, bounded jitter, groups."""

from __future__ import annotations

import math

import pytest

from lotusim_physics.output_schedule import OutputPlan, SimTimeRate

MS = 1_000_000
# (step, period) in ns: whole numbers of steps, the issue-5 case (0.03 s at 10 Hz), periods shorter than a step,
# a step that does not divide anything
CASES = [(20 * MS, 100 * MS), (30 * MS, 100 * MS), (25 * MS, 100 * MS), (7, 3), (13 * MS, 100 * MS), (1, 7)]


@pytest.mark.parametrize(("step_ns", "period_ns"), CASES)
def test_one_output_per_multiple_of_the_period_reached(step_ns, period_ns):
    """After N steps, the output has been due once per multiple of T in (0, N dt] (capped at one per step):
    the mean rate is exact and does not drift, however long the run."""
    s = SimTimeRate(step_ns, period_ns)
    for n_steps in (1, 2, 3, 10, 99, 1000, 3333):
        due = sum(s.due(m) for m in range(1, n_steps + 1))
        reached = (n_steps * step_ns) // period_ns
        assert due == (reached if period_ns >= step_ns else n_steps)


@pytest.mark.parametrize(("step_ns", "period_ns"), CASES)
def test_due_at_the_first_step_at_or_after_each_multiple(step_ns, period_ns):
    """The step of each publication is the first whose sim time is >= k T, so its lag behind k T is < dt and
    intervals are floor or ceil of T / dt steps."""
    s = SimTimeRate(step_ns, period_ns)
    steps = [m for m in range(1, 2000) if s.due(m)]
    if period_ns >= step_ns:
        for k, m in enumerate(steps, start=1):
            assert m * step_ns >= k * period_ns > (m - 1) * step_ns
    intervals = {b - a for a, b in zip(steps, steps[1:], strict=False)}
    assert intervals <= {max(1, math.floor(period_ns / step_ns)), math.ceil(period_ns / step_ns)}
    assert s.groups == math.ceil(period_ns / step_ns)


def test_issue_5_case_intervals_alternate_4_3_3():
    s = SimTimeRate.from_rate_hz(30 * MS, 10.0)
    steps = [m for m in range(1, 31) if s.due(m)]
    assert steps == [4, 7, 10, 14, 17, 20, 24, 27, 30]  # 0.12, 0.21, 0.30 s, ...: 10 per 3 s of sim time


@pytest.mark.parametrize(("step_ns", "period_ns"), CASES)
def test_next_due_and_groups_agree_with_due(step_ns, period_ns):
    """steps_to_next finds the next due step of a group (none skipped); groups_due lists exactly the due
    groups; group g is group 0 delayed by g steps."""
    s = SimTimeRate(step_ns, period_ns)
    for it in [*range(0, 200), 10**9 + 7]:
        assert s.groups_due(it) == [g for g in range(s.groups) if s.due(it, g)]
        for g in range(s.groups):
            assert s.due(it + g, g) == s.due(it)
            k = s.steps_to_next(it, g)
            assert k >= 1 and s.due(it + k, g)
            assert not any(s.due(it + q, g) for q in range(1, k))


@pytest.mark.parametrize(("step_ns", "period_ns"), CASES)
def test_groups_cover_every_step(step_ns, period_ns):
    """With a vessel in every group, some odometry is due after every step (the load is spread evenly)."""
    s = SimTimeRate(step_ns, period_ns)
    assert all(s.groups_due(it) for it in range(1, 500))


def test_bad_periods_rejected():
    with pytest.raises(ValueError, match="positive"):
        SimTimeRate(0, 100)
    with pytest.raises(ValueError, match="positive"):
        SimTimeRate.from_rate_hz(30 * MS, 0.0)


@pytest.mark.parametrize(("step_ns", "period_ns"), CASES)
@pytest.mark.parametrize("vessels", [0, 1, 2, 40])
def test_output_plan_combines_the_schedules(step_ns, period_ns, vessels):
    """OutputPlan (what the dynamics worker asks after each step) agrees with the two schedules it combines,
    over several of its memoised cycles and far from sim time 0: the fleet state is due when its schedule says,
    the odometry groups that have a vessel, and no output falls strictly between a step and the next due one."""
    state = SimTimeRate(step_ns, 3 * period_ns)
    odom = SimTimeRate(step_ns, period_ns)
    plan = OutputPlan(state, odom, vessels, horizon=1000)
    assert plan.cycle > 0
    for it in [*range(0, 4 * plan.cycle + 5), 10**9 + 3]:
        due = plan.at(it)
        if not vessels:
            assert due == (False, (), 1000)
            continue
        assert due.state == state.due(it)
        assert due.odom_groups == tuple(g for g in odom.groups_due(it) if g < vessels)
        k = due.steps_to_next
        assert 1 <= k <= 1000

        def any_output(m):
            return state.due(m) or any(odom.due(m, g) for g in range(min(vessels, odom.groups)))

        assert any_output(it + k) and not any(any_output(it + q) for q in range(1, k))


def test_output_plan_without_odometry_or_with_a_long_cycle():
    """Only the fleet state (odometry off); a rate whose cycle is too long to memoise is computed each time."""
    plan = OutputPlan(SimTimeRate.from_rate_hz(30 * MS, 10.0), None, 5, horizon=1000)
    assert [m for m in range(1, 31) if plan.at(m).state] == [4, 7, 10, 14, 17, 20, 24, 27, 30]
    assert plan.at(4) == (True, (), 3) and plan.at(5).steps_to_next == 2
    odd = SimTimeRate.from_rate_hz(30 * MS, 7.0)  # period 142857143 ns: the schedules repeat after ~1.4e8 steps
    plan = OutputPlan(odd, odd, 3, horizon=1000)
    assert plan.cycle == 0
    assert all(plan.at(m).state == odd.due(m) for m in range(500))
