"""How a dynamics worker paces its steps against the wall clock: the one definition of its modes (ROS-free).

Modes (`mode` parameter): "realtime" (RTF 1), "scaled" (RTF `real_time_factor`), "fast" (as fast as possible)
and "lockstep" (advances only on request: /lotusim/step, /lotusim/step_for). A worker that is not the clock
master is a follower whatever its mode: it steps until its sim time reaches the master's /clock.

- realtime / scaled master: at most one step per tick of a wall timer CATCH_UP times faster than the steps
  (`tick_of`); a tick steps when the sim time is behind the wall time since the run's anchor (`RealtimeSchedule`),
  so a tick that came late is made up by the next ones, one step each, never in a burst;
- fast master: a tick every FAST_PERIOD_S (longer for large fleets: `Pacer.fast_period_ns`) integrates steps
  until FAST_GAP_S before the next tick is due (`Pacer.fast_deadline`), at the measured cost per step;
- lockstep: the steps asked for, in batches;
- follower: the steps up to the master's clock (`follower_steps`).
Within any of them the steps between two outputs go to the physics in one call (`Pacer.run`), at most
MAX_CHUNK_STEPS at a time. Wall times are monotonic seconds; sim times integer nanoseconds.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

MODES = ("realtime", "scaled", "fast", "lockstep")
# "fast" mode: a timer every FAST_PERIOD_S creates pending topics, then integrates until FAST_GAP_S before the
# timer is due again. In that gap the events executor serves what arrived meanwhile (commands, services, the
# DDS side of new topics). The gap must be real idle time before the timer is due: a batch that ends with the
# timer already due (or sleeps instead) let the timer win over the queued events, and a spawn of 1,000
# vessels took 6-14 s instead of 0.5 s.
FAST_PERIOD_S = 0.02
FAST_GAP_S = 0.0005
# A batch ends before the next tick is due by less than one step (plus the gap): with large fleets (ms per step)
# the tick period grows to this many steps, so that idle end stays a few percent of the time.
FAST_STEPS_PER_TICK = 20
FAST_ENDPOINT_SHARE = 0.5  # of a fast-mode tick, at most, for creating new vessels' topics
TAKE_UP_WINDOW_S = 60.0  # a restarted clock master takes up the sim time others saw within this wall time
MAX_CHUNK_STEPS = 1000  # steps integrated in one physics call at most (between two publications)
INITIAL_STEP_COST_S = 20e-6  # wall time per step assumed before the first measurement
NS_PER_S = 1_000_000_000
# realtime / scaled: the timer ticks this much faster than the steps; a tick with the sim time not behind does
# nothing. rcl drops the periods a late timer missed: with one step per tick every late tick lost a step for good
# (Table V: RTF 0.89 with CPU to spare). Bursts of several steps per tick to catch up upset the drones' host.
CATCH_UP = 1.1
MAX_LAG_S = 0.5  # wall time behind the schedule beyond which it starts again from now (a stall is not made up)


def check_mode(mode: str) -> None:
    """Raise ValueError unless `mode` is one of MODES."""
    if mode not in MODES:
        raise ValueError(f"parameter mode: expected one of {MODES}, got {mode!r}")


def target_rtf(mode: str, real_time_factor: float) -> float:
    """The real-time factor a mode aims at: 1 in realtime mode, the parameter otherwise (used by scaled)."""
    return 1.0 if mode == "realtime" else real_time_factor


def tick_of(mode: str, clock_master: bool, step_s: float, rtf: float) -> tuple[str, float] | None:
    """The wall timer that drives a worker: ("realtime", step_s / rtf) for a realtime or scaled master (one step
    per tick), ("fast", FAST_PERIOD_S) for a fast master, None for lockstep and for followers (driven by
    requests or by /clock). Periods in wall seconds."""
    if not clock_master:
        return None
    if mode in ("realtime", "scaled"):
        return "realtime", step_s / rtf / CATCH_UP
    if mode == "fast":
        return "fast", FAST_PERIOD_S
    return None


class RealtimeSchedule:
    """Which realtime ticks step: the steps done since the anchor (a wall time and a step count) must not exceed
    the wall time since it times RTF over the step. A tick steps once when behind; the anchor moves to now when
    the worker was held (a tick that could not step), the RTF changed, or the schedule is more than MAX_LAG_S off
    (a stall or a jump of sim time is not made up)."""

    def __init__(self, step_s: float) -> None:
        self.step_s = step_s
        self._anchor: tuple[float, int, float] | None = None  # (wall s, steps done, RTF)

    def restart(self) -> None:
        """Anchor again at the next tick (the worker was held, or its sim time was set)."""
        self._anchor = None

    def due(self, now_s: float, iteration: int, rtf: float) -> bool:
        """Whether the tick at monotonic wall time `now_s` steps, the worker having done `iteration` steps."""
        anchor = self._anchor
        if anchor is None or anchor[2] != rtf:
            self._anchor = (now_s, iteration, rtf)
            return True
        owed = (now_s - anchor[0]) * rtf / self.step_s - (iteration - anchor[1])
        if abs(owed) * self.step_s / rtf > MAX_LAG_S:
            self._anchor = (now_s, iteration, rtf)
            return True
        return owed > 0.0


CONTROL_LAG_S = 0.05  # default of max_control_lag_s: 2.5 fleet-state periods at 50 Hz
SILENT_HOST_S = 2.0  # wall time a host holding the sim time may stay silent before it is no longer waited for


class ControlLag:
    """How far a realtime or scaled clock master lets its sim time run ahead of the controller hosts that answer
    every fleet state (the flight controllers' hosts: lotusim_autonomy.multirotor_controller.FlightFleetIntake).
    Each answer names its host and carries the stamp of the fleet state it answers; the sim time steps only while
    it is within `max_lag_ns` of every host's latest answer. A host starved of CPU then slows the sim down instead
    of flying its drones on stale states (an X500 whose commands are 0.08 s late all the time flips; a loaded
    machine flipped Table V's drones). A host that holds the sim and has not answered for `silent_s` wall seconds
    (killed, stopped) is not waited for until its next answer; an answer with no commands (the host has nothing
    left to fly) ends the wait for it. `max_lag_ns` <= 0 waits for none. Times: sim ns, monotonic wall s."""

    def __init__(self, max_lag_ns: int, silent_s: float = SILENT_HOST_S) -> None:
        self.max_lag_ns, self.silent_s = max_lag_ns, silent_s
        self._hosts: dict[str, list] = {}  # host -> [stamp ns of its latest answer, wall s it arrived]
        self.given_up: list[str] = []  # hosts no longer waited for since the last look (for a warning)
        self.held_s = 0.0  # wall s the sim time waited in all (step_allowed)
        self.last_wait_s = 0.0  # the wall s of the wait that the last step_allowed ended (0: none)
        self._held_since: float | None = None

    def heard(self, host: str, stamp_ns: int, commands: int, now_s: float) -> None:
        """Host `host` answered the fleet state stamped `stamp_ns` with `commands` commands at wall time now_s."""
        if not commands:
            self._hosts.pop(host, None)
            return
        entry = self._hosts.get(host)
        if entry is None:
            self._hosts[host] = [stamp_ns, now_s]
        else:
            entry[0], entry[1] = max(entry[0], stamp_ns), now_s

    def allowed(self, sim_ns: int, step_ns: int, steps: int, now_s: float) -> int:
        """How many of `steps` steps may be integrated from sim time `sim_ns`: all, or those that keep the sim
        time within max_lag_ns of the slowest host's latest answer (0: wait for it)."""
        if self.max_lag_ns <= 0 or not self._hosts:
            return steps
        limit_ns = None
        for host, (stamp_ns, heard_s) in list(self._hosts.items()):
            if sim_ns - stamp_ns >= self.max_lag_ns and now_s - heard_s > self.silent_s:
                del self._hosts[host]
                self.given_up.append(host)
            elif limit_ns is None or stamp_ns < limit_ns:
                limit_ns = stamp_ns
        if limit_ns is None:
            return steps
        return max(0, min(steps, (limit_ns + self.max_lag_ns - sim_ns) // step_ns))

    def step_allowed(self, sim_ns: int, step_ns: int, now_s: float) -> bool:
        """Whether one step may be integrated now (allowed); a wait that this ends is added to held_s and kept in
        last_wait_s."""
        ok = self.allowed(sim_ns, step_ns, 1, now_s) > 0
        self.last_wait_s = 0.0
        if ok and self._held_since is not None:
            self.last_wait_s = now_s - self._held_since
            self.held_s += self.last_wait_s
        self._held_since = None if ok else (self._held_since if self._held_since is not None else now_s)
        return ok

    def forget(self) -> None:
        """The sim time jumped (a checkpoint restored, a restarted master's time taken up): the answers so far are
        of another time; wait again from the hosts' next answers."""
        self._hosts.clear()


def follower_steps(target_ns: int, sim_time_ns: int, step_ns: int, has_vessels: bool) -> tuple[int, int]:
    """(skipped, integrated) steps that bring a follower at `sim_time_ns` to the master's clock `target_ns`:
    the whole steps up to it, all integrated, except that a follower without vessels (started late, or
    restarted) skips all but the last (nothing to integrate)."""
    steps = (target_ns - sim_time_ns) // step_ns
    if steps > 1 and not has_vessels:
        return int(steps) - 1, 1
    return 0, max(0, int(steps))


@dataclass
class WindowStats:
    """The pacing figures of one statistics window (wall seconds)."""

    wall_time_s: float  # since the worker started
    real_time_factor: float  # sim time over wall time in the window (0 for an empty window)
    step_compute_time_s: float  # mean wall time per integrated step, with its outputs
    step_compute_time_max_s: float  # the largest per-step share of one batch


class Pacer:
    """Wall-clock accounting of one worker: the measured cost per step (a moving average), how many steps fit
    before a deadline, the fast-mode tick period, the take-up of a restarted master's time, and the figures of
    the statistics window. `clock`: monotonic wall time (s); `timer`: high-resolution wall time (s)."""

    def __init__(
        self,
        step_s: float,
        stats_rate_hz: float,
        clock: Callable[[], float] = time.monotonic,
        timer: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.step_s, self.stats_period_s = step_s, 1.0 / stats_rate_hz
        self.clock, self.timer = clock, timer
        self.started = clock()
        self.step_cost_s = INITIAL_STEP_COST_S  # wall time per integrated step with its outputs
        self.next_stats = self.started
        self._window_start, self._window_iteration = self.started, 0
        self._compute_s, self._compute_max_s, self._window_steps = 0.0, 0.0, 0

    # --- batches of steps ---------------------------------------------------------------------------------
    def run(
        self,
        steps: int,
        next_chunk: Callable[[], int],
        integrate: Callable[[int], None],
        wall_deadline: float | None = None,
    ) -> int:
        """Integrate `steps` steps in batches of at most next_chunk() (the steps to the next output) and
        MAX_CHUNK_STEPS, fewer if the clock passes `wall_deadline` (at least one step per call then); each batch
        is timed into the cost per step. Returns the steps done."""
        done = 0
        while done < steps:
            k = min(steps - done, next_chunk(), MAX_CHUNK_STEPS)
            if wall_deadline is not None:
                k = min(k, self.steps_before(wall_deadline, at_least=0 if done else 1))
                if k == 0:
                    break
            start = self.timer()
            integrate(k)
            self.record(self.timer() - start, k)
            done += k
        return done

    def steps_before(self, wall_deadline: float, at_least: int) -> int:
        """How many steps fit before `wall_deadline` (monotonic s) at the measured cost per step (at least
        `at_least`). A batch must not run past the deadline: with one vessel or none, a thousand steps are a
        thousand /clock messages, and a fast-mode tick that overran its period delayed the worker's incoming
        commands by seconds (docs/performance.md)."""
        return max(at_least, int((wall_deadline - self.clock()) / self.step_cost_s))

    def record(self, elapsed_s: float, k: int) -> None:
        """Account a batch of k steps that took `elapsed_s` wall seconds. The cost per step is a moving average
        in which one slow batch (the process descheduled) counts as twice the average at most, or the next
        ticks would plan too few steps and leave the CPU idle."""
        per_step = elapsed_s / k
        self.step_cost_s += 0.1 * (min(per_step, 2.0 * self.step_cost_s) - self.step_cost_s)
        self._compute_s += elapsed_s
        if per_step > self._compute_max_s:
            self._compute_max_s = per_step
        self._window_steps += k

    # --- fast mode ------------------------------------------------------------------------------------------
    def fast_deadline(self, until_due_s: float) -> float:
        """The wall deadline (monotonic s) of a fast tick's batch: FAST_GAP_S before the next tick is due."""
        return self.clock() + max(0.0, until_due_s - FAST_GAP_S)

    def fast_period_ns(self, current_ns: int) -> int | None:
        """The fast tick period to switch to (ns), or None to keep `current_ns`: FAST_PERIOD_S, or
        FAST_STEPS_PER_TICK steps at the measured cost per step if longer; changed only when off by more than a
        quarter. Commands wait at most one period."""
        period_ns = int(1e9 * max(FAST_PERIOD_S, FAST_STEPS_PER_TICK * self.step_cost_s))
        return period_ns if abs(period_ns - current_ns) > current_ns // 4 else None

    # --- a restarted clock master ---------------------------------------------------------------------------
    def take_up_steps(self, t_ns: int, sim_time_ns: int, step_ns: int) -> int:
        """The steps to jump (not integrated) to take up sim time `t_ns` seen by others: those to it if it is more
        than 1 s ahead in the first TAKE_UP_WINDOW_S of wall time since the start (a restarted master), else 0
        (later, a checkpoint restore may set the clock back while a follower's older stats are on their way,
        and must not be undone)."""
        ahead_ns = t_ns - sim_time_ns
        if ahead_ns > NS_PER_S and self.clock() - self.started < TAKE_UP_WINDOW_S:
            return ahead_ns // step_ns
        return 0

    # --- statistics -----------------------------------------------------------------------------------------
    def stats_due(self) -> float | None:
        """The wall time now if the statistics are due (the next are then one period later, or now if late),
        else None."""
        now = self.clock()
        if now < self.next_stats:
            return None
        self.next_stats = max(self.next_stats + self.stats_period_s, now)
        return now

    def close_window(self, now: float, iteration: int) -> WindowStats:
        """The figures of the window ending at wall time `now` with the step counter at `iteration`; a new
        window starts."""
        wall = now - self._window_start
        steps = self._window_steps
        stats = WindowStats(
            wall_time_s=now - self.started,
            real_time_factor=(iteration - self._window_iteration) * self.step_s / wall if wall > 0 else 0.0,
            step_compute_time_s=self._compute_s / steps if steps else 0.0,
            step_compute_time_max_s=self._compute_max_s,
        )
        self._window_start, self._window_iteration = now, iteration
        self._compute_s, self._compute_max_s, self._window_steps = 0.0, 0.0, 0
        return stats


def step_in_chunks(
    total: int,
    advance: Callable[[int], int],
    cancelled: Callable[[], bool],
    progress: Callable[[int], None],
    chunk: int = 100,
) -> tuple[int, str]:
    """A long lockstep request (the /lotusim/step_for action): `total` steps by advance(n) -> steps done, in
    chunks of `chunk` with progress(steps done so far) after each, checking cancelled() before each. Returns
    (steps done, outcome): "done", "canceled", or "held" when advance did fewer than asked (run_until_s)."""
    done = 0
    while done < total:
        if cancelled():
            return done, "canceled"
        n = min(total - done, chunk)
        got = advance(n)
        done += got
        if got < n:
            return done, "held"
        progress(done)
    return done, "done"
