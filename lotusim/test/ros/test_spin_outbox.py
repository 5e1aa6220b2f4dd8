"""lotusim_core.ros.node_runner.spin with an outbox (lotusim_autonomy.command_outbox's protocol: pending, quiet_s,
ready(), flush()): while messages are held the executor waits at most quiet_s for the next callback, and they
leave once the outbox is ready (the burst is over); without an outbox the executor waits as before. A stand-in
executor and outbox: no DDS."""

from __future__ import annotations

import time

from lotusim_core.ros.node_runner import spin


class Outbox:
    """Ready when spin says the poll was idle (no hold limit)."""

    quiet_s = 0.001

    def __init__(self) -> None:
        self.held, self.flushes, self.writes = [], [], 0

    @property
    def pending(self) -> bool:
        return bool(self.held)

    def ready(self, idle: bool) -> bool:
        return self.pending and idle

    def write(self, value) -> None:
        self.held.append(value)
        self.writes += 1

    def flush(self) -> None:
        self.flushes.append(self.held)
        self.held = []


class Executor:
    """Runs one queued callback per spin_once (a timeout with nothing queued: recorded, nothing run)."""

    def __init__(self, callbacks: list) -> None:
        self.callbacks, self.waits = list(callbacks), []

    def spin_once(self, timeout_sec: float) -> None:
        self.waits.append(timeout_sec)
        if self.callbacks:
            self.callbacks.pop(0)()
        else:
            time.sleep(timeout_sec)


class Context:
    def __init__(self, executor: Executor, polls: int) -> None:
        self.executor, self.polls = executor, polls

    def ok(self) -> bool:
        return len(self.executor.waits) < self.polls


def test_a_burst_of_writes_leaves_in_one_flush_once_it_is_over():
    """A quick callback that writes nothing (e.g. /clock) does not end the burst; a poll that waits quiet_s does."""
    box = Outbox()
    burst = [lambda k=k: box.write(k) for k in range(5)]
    ex = Executor([*burst[:3], lambda: None, *burst[3:]])
    spin(ex, Context(ex, 10), outbox=box)
    assert box.flushes == [[0, 1, 2, 3, 4]]
    # the executor waits quiet_s while commands are held, its usual 0.05 s otherwise
    assert ex.waits == [0.05] + [0.001] * 6 + [0.05] * 3


def test_without_an_outbox_it_waits_as_before():
    ex = Executor([lambda: None])
    spin(ex, Context(ex, 3))
    assert ex.waits == [0.05, 0.05, 0.05]
