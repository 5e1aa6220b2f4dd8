"""The pacing of a dynamics worker (lotusim_physics.pacing) with a fake clock: which timer drives each mode, how
a follower catches up, how batches are cut at the next output and at a wall deadline, the cost-per-step average,
the fast-mode tick period, the take-up of a restarted master's time, the statistics window, and the chunks of a
long lockstep request. ROS-free."""

from __future__ import annotations

import pytest

from lotusim_physics import pacing
from lotusim_physics.endpoint_queue import EndpointQueue


class FakeClock:
    """Wall time that moves only when told (s)."""

    def __init__(self, t: float = 100.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


def test_each_mode_has_its_timer_and_followers_have_none():
    # realtime and scaled tick CATCH_UP times faster than the steps (pacing.RealtimeSchedule: late ticks made up)
    assert pacing.tick_of("realtime", True, 0.02, 1.0) == ("realtime", pytest.approx(0.02 / pacing.CATCH_UP))
    assert pacing.tick_of("scaled", True, 0.03, 3.0) == ("realtime", pytest.approx(0.01 / pacing.CATCH_UP))
    assert pacing.tick_of("fast", True, 0.03, 1.0) == ("fast", 0.02)
    assert pacing.tick_of("lockstep", True, 0.03, 1.0) is None
    for mode in pacing.MODES:
        assert pacing.tick_of(mode, False, 0.03, 1.0) is None
    assert pacing.target_rtf("realtime", 5.0) == 1.0 and pacing.target_rtf("scaled", 5.0) == 5.0
    pacing.check_mode("lockstep")
    with pytest.raises(ValueError, match="expected one of"):
        pacing.check_mode("turbo")


def test_a_follower_steps_to_the_master_clock_and_an_empty_one_skips():
    step = 30_000_000
    assert pacing.follower_steps(10 * step, 4 * step, step, True) == (0, 6)
    assert pacing.follower_steps(10 * step + step // 2, 4 * step, step, True) == (0, 6)  # whole steps only
    assert pacing.follower_steps(10 * step, 4 * step, step, False) == (5, 1)  # nothing to integrate
    assert pacing.follower_steps(5 * step, 4 * step, step, False) == (0, 1)
    assert pacing.follower_steps(3 * step, 4 * step, step, True) == (0, 0)  # behind: nothing


def test_batches_stop_at_each_output_and_at_the_chunk_limit():
    pacer = pacing.Pacer(0.01, 1.0, clock=FakeClock(), timer=FakeClock())
    batches: list[int] = []
    assert pacer.run(10, lambda: 4, batches.append) == 10
    assert batches == [4, 4, 2]
    batches.clear()
    assert pacer.run(2500, lambda: 1 << 30, batches.append) == 2500
    assert batches == [1000, 1000, 500]
    assert pacer.run(0, lambda: 1, batches.append) == 0


def test_a_batch_ends_before_the_wall_deadline_with_at_least_one_step():
    clock = FakeClock(100.0)
    pacer = pacing.Pacer(0.01, 1.0, clock=clock, timer=clock)
    pacer.step_cost_s = 1e-3
    assert pacer.steps_before(100.0105, at_least=0) == 10
    assert pacer.steps_before(99.0, at_least=0) == 0 and pacer.steps_before(99.0, at_least=1) == 1
    cost = 2.0**-10  # about 1 ms, exact in binary (the fake clock adds it without rounding)
    pacer.step_cost_s = cost

    def integrate(k: int) -> None:  # each step costs exactly `cost` of the fake wall clock
        clock.t += cost * k

    # 5 steps of budget: 5 steps in one batch, then none fits
    assert pacer.run(1 << 62, lambda: 1 << 30, integrate, wall_deadline=100.0 + 5 * cost) == 5
    assert clock.t == 100.0 + 5 * cost and pacer.step_cost_s == cost
    # the deadline has passed: still one step of progress, then nothing more
    assert pacer.run(1 << 62, lambda: 1 << 30, integrate, wall_deadline=99.0) == 1
    assert clock.t == 100.0 + 6 * cost


def test_the_cost_per_step_is_a_moving_average_that_caps_outliers():
    pacer = pacing.Pacer(0.01, 1.0, clock=FakeClock(), timer=FakeClock())
    assert pacer.step_cost_s == 20e-6
    pacer.record(10 * 40e-6, 10)  # 40 us per step: 20 + 0.1 * (40 - 20) = 22 us
    assert pacer.step_cost_s == pytest.approx(22e-6)
    pacer.record(1.0, 1)  # a descheduled batch counts as twice the average: 22 + 0.1 * 22 = 24.2 us
    assert pacer.step_cost_s == pytest.approx(24.2e-6)


def test_the_fast_tick_period_follows_large_fleets_with_hysteresis():
    clock = FakeClock(50.0)
    pacer = pacing.Pacer(0.03, 1.0, clock=clock, timer=clock)
    assert pacer.fast_deadline(0.02) == pytest.approx(50.0195)  # 0.5 ms of idle gap before the next tick
    assert pacer.fast_deadline(0.0001) == 50.0  # never in the past
    pacer.step_cost_s = 5e-3  # 20 steps of 5 ms: 100 ms
    assert pacer.fast_period_ns(20_000_000) == 100_000_000
    assert pacer.fast_period_ns(100_000_000) is None
    pacer.step_cost_s = 1.1e-3  # 22 ms: within a quarter of 20 ms, kept
    assert pacer.fast_period_ns(20_000_000) is None
    pacer.step_cost_s = 1e-5  # cheap steps: back to 20 ms
    assert pacer.fast_period_ns(100_000_000) == 20_000_000


def test_a_restarted_master_takes_up_time_only_when_far_ahead_and_early():
    clock = FakeClock(10.0)
    pacer = pacing.Pacer(0.02, 1.0, clock=clock, timer=clock)
    step = 20_000_000
    assert pacer.take_up_steps(5_000_000_000, 1_000_000_000, step) == 200  # 4 s ahead: 200 steps
    assert pacer.take_up_steps(1_900_000_000, 1_000_000_000, step) == 0  # less than 1 s ahead
    clock.t = 10.0 + pacing.TAKE_UP_WINDOW_S + 1.0
    assert pacer.take_up_steps(5_000_000_000, 1_000_000_000, step) == 0  # too late: a restore's older news


def test_the_statistics_window_reports_rtf_and_compute_time():
    clock = FakeClock(0.0)
    pacer = pacing.Pacer(0.02, 2.0, clock=clock, timer=clock)
    assert pacer.stats_due() == 0.0  # the first at once
    assert pacer.stats_due() is None
    pacer.close_window(0.0, 0)
    pacer.record(0.004, 4)  # 1 ms per step
    pacer.record(0.006, 2)  # 3 ms per step
    clock.t = 0.5
    assert pacer.stats_due() == 0.5
    stats = pacer.close_window(0.5, 50)  # 50 steps of 20 ms in 0.5 s of wall time: RTF 2
    assert stats.real_time_factor == pytest.approx(2.0)
    assert stats.step_compute_time_s == pytest.approx(0.010 / 6)
    assert stats.step_compute_time_max_s == pytest.approx(0.003)
    assert stats.wall_time_s == 0.5
    empty = pacer.close_window(0.5, 50)
    assert (empty.real_time_factor, empty.step_compute_time_s, empty.step_compute_time_max_s) == (0.0, 0.0, 0.0)
    clock.t = 3.0  # late: the next is due now, then every period again (not a burst of the missed ones)
    assert pacer.stats_due() == 3.0 and pacer.next_stats == 3.0
    assert pacer.stats_due() == 3.0 and pacer.next_stats == 3.5


def test_a_long_lockstep_request_goes_in_chunks_and_stops_when_held_or_cancelled():
    asked, progress = [], []

    def advance(n: int) -> int:
        asked.append(n)
        return n

    assert pacing.step_in_chunks(250, advance, lambda: False, progress.append) == (250, "done")
    assert asked == [100, 100, 50] and progress == [100, 200, 250]
    held = lambda n: min(n, 30)  # noqa: E731 - a run limit 30 steps ahead
    assert pacing.step_in_chunks(250, held, lambda: False, lambda d: None) == (30, "held")
    calls = iter([False, True])
    assert pacing.step_in_chunks(250, advance, lambda: next(calls), lambda d: None) == (100, "canceled")


def test_endpoints_are_made_in_creation_order_within_the_budget_and_doomed_ones_first():
    clock = FakeClock(0.0)
    queue = EndpointQueue(clock=clock)
    made, destroyed = [], []

    def create(name: str) -> None:
        made.append(name)
        clock.t += 0.002  # 2 ms per vessel

    def destroy(endpoint) -> None:
        destroyed.append(endpoint)
        clock.t += 0.001

    for name in ("a", "b", "c", "d"):
        queue.add(name)
    queue.retire("c", ["c_sub", "c_odom"])  # deleted before its topics were made: none will be
    queue.work(0.005, create, destroy)  # 2 ms of destroying, then a (4 ms), b (6 ms): over budget
    assert destroyed == ["c_odom", "c_sub"] and made == ["a", "b"]
    queue.work(0.005, create, destroy)
    assert made == ["a", "b", "d"] and not queue.pending and not queue.doomed


def _tick_times(period_s: float, duration_s: float, late: dict[int, float]) -> list[float]:
    """Wall times of a timer's ticks as rcl fires them: on its period grid; a tick held up by `late[k]` seconds
    runs then, and the periods it overran are dropped (the next tick is the next grid point after it)."""
    times, k = [], 0
    while k * period_s < duration_s:
        t = k * period_s + late.get(k, 0.0)
        times.append(t)
        k = max(k + 1, int(t / period_s) + 1)
    return times


def test_realtime_ticks_make_up_late_ones_one_step_at_a_time():
    """Over 60 s at a 0.02 s step with a tick 25 ms late every 0.5 s (each drops a period): one step per tick at
    most, sim time within two steps of the wall time at the end; a timer of the step's period with one step per
    tick (as before) loses a step for good at every late tick."""
    step, rtf = 0.02, 1.0
    kind, period = pacing.tick_of("realtime", True, step, rtf)
    assert kind == "realtime" and period == step / rtf / pacing.CATCH_UP
    late = {k: 0.025 for k in range(0, 3300, 27)}
    schedule, steps = pacing.RealtimeSchedule(step), 0
    for t in _tick_times(period, 60.0, late):
        steps += schedule.due(t, steps, rtf)  # one step at most per tick
    naive = len(_tick_times(step, 60.0, {k: 0.025 for k in range(0, 3000, 25)}))  # a timer of the step's period
    assert abs(steps * step - 60.0) <= 2 * step and naive <= 3000 - 100


def test_a_held_worker_or_a_stall_is_not_made_up_and_an_rtf_change_starts_again():
    step = 0.02
    schedule = pacing.RealtimeSchedule(step)
    assert schedule.due(0.0, 0, 1.0)
    assert schedule.due(0.025, 1, 1.0) and not schedule.due(0.03, 2, 1.0)  # one step ahead of 0.03 s: wait
    schedule.restart()  # held from 0.03 s to 5 s
    assert schedule.due(5.0, 2, 1.0) and not schedule.due(5.01, 3, 1.0) and schedule.due(5.021, 3, 1.0)
    assert schedule.due(6.0, 4, 1.0)  # 1 s stalled (> MAX_LAG_S): starts again from now, one step
    assert not schedule.due(6.005, 5, 1.0)
    assert schedule.due(6.006, 5, 2.0)  # RTF 2: anchored again
    assert not schedule.due(6.01, 6, 2.0) and schedule.due(6.0161, 6, 2.0)  # 0.01 s of wall per step at RTF 2


def test_an_abandoned_endpoint_queue_makes_and_destroys_nothing():
    """A destroyed worker's queue: a timer event queued before the destruction finds nothing to do."""
    queue = EndpointQueue()
    queue.add("a")
    queue.retire("b", ["b_odom"])
    queue.abandon()
    made, destroyed = [], []
    queue.work(1.0, made.append, destroyed.append)
    assert made == [] and destroyed == []


def test_the_sim_time_runs_at_most_the_control_lag_ahead_of_the_slowest_host():
    ms = 1_000_000
    lag = pacing.ControlLag(50 * ms, silent_s=2.0)
    assert lag.allowed(0, 20 * ms, 5, now_s=0.0) == 5  # no host answers fleet states: no wait
    lag.heard("/drones_a", 100 * ms, commands=8, now_s=1.0)
    lag.heard("/drones_b", 140 * ms, commands=4, now_s=1.0)
    # the slowest host answered the state of 100 ms: the sim time may reach 150 ms, from 100 ms 2 steps of 20 ms
    assert lag.allowed(100 * ms, 20 * ms, 5, now_s=1.1) == 2
    assert lag.allowed(140 * ms, 20 * ms, 5, now_s=1.1) == 0
    lag.heard("/drones_a", 80 * ms, commands=8, now_s=1.2)  # an older answer arriving late does not go back
    lag.heard("/drones_a", 160 * ms, commands=8, now_s=1.2)
    assert lag.allowed(140 * ms, 20 * ms, 5, now_s=1.2) == 2  # now drones_b (140 ms) is the slowest: to 190 ms
    assert lag.given_up == []


def test_a_silent_host_is_given_up_only_while_it_holds_the_sim_and_one_with_nothing_to_fly_ends_its_wait():
    ms = 1_000_000
    lag = pacing.ControlLag(50 * ms, silent_s=2.0)
    lag.heard("/drones", 100 * ms, commands=8, now_s=10.0)
    # silent for 5 s of wall time but not behind (a slow RTF): still waited for, not given up
    assert lag.allowed(120 * ms, 20 * ms, 1, now_s=15.0) == 1 and lag.given_up == []
    # behind and silent for 1.9 s: waited for; for 2.1 s: given up (killed or stopped), the sim time goes on
    assert lag.allowed(150 * ms, 20 * ms, 1, now_s=11.9) == 0
    assert lag.allowed(150 * ms, 20 * ms, 1, now_s=12.1 + 5.0) == 1 and lag.given_up == ["/drones"]
    lag.heard("/drones", 150 * ms, commands=8, now_s=20.0)  # it answers again: waited for again
    assert lag.allowed(200 * ms, 20 * ms, 1, now_s=20.1) == 0
    lag.heard("/drones", 200 * ms, commands=0, now_s=20.2)  # its last drone is gone
    assert lag.allowed(200 * ms, 20 * ms, 3, now_s=20.3) == 3
    off = pacing.ControlLag(0)  # max_control_lag_s 0: never waits, however far behind a host is
    off.heard("/drones", 100 * ms, commands=8, now_s=30.0)
    assert off.allowed(10_000 * ms, 20 * ms, 4, now_s=30.1) == 4


def test_the_wall_time_waited_for_hosts_is_summed_and_each_wait_reported_when_it_ends():
    ms = 1_000_000
    lag = pacing.ControlLag(50 * ms)
    lag.heard("/drones", 100 * ms, commands=8, now_s=1.0)
    assert lag.step_allowed(120 * ms, 20 * ms, now_s=1.0) and lag.last_wait_s == 0.0
    assert not lag.step_allowed(140 * ms, 20 * ms, now_s=1.1)  # a wait begins
    assert not lag.step_allowed(140 * ms, 20 * ms, now_s=1.3)
    lag.heard("/drones", 140 * ms, commands=8, now_s=1.35)
    assert lag.step_allowed(140 * ms, 20 * ms, now_s=1.4)  # it ends: 0.3 s
    assert lag.last_wait_s == pytest.approx(0.3) and lag.held_s == pytest.approx(0.3)
    assert not lag.step_allowed(190 * ms, 20 * ms, now_s=2.0) and lag.last_wait_s == 0.0
    lag.heard("/drones", 180 * ms, commands=8, now_s=2.15)
    assert lag.step_allowed(190 * ms, 20 * ms, now_s=2.2)
    assert lag.last_wait_s == pytest.approx(0.2) and lag.held_s == pytest.approx(0.5)
