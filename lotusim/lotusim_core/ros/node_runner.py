"""Run lotusim nodes: one executor for all of them, shut down cleanly on Ctrl-C.

The executor is rclpy's EventsExecutor: the default executors rebuild a wait set over every subscription at
each spin, which costs milliseconds per spin with hundreds of vessels (each with its command subscriptions)
and halves the real-time factor of a 100-vessel fleet; the events executor dispatches as messages arrive
(docs/performance.md). Its spin() never returns on shutdown, so we always spin with a timeout. Distributions
whose rclpy has no events executor (Humble) get the SingleThreadedExecutor instead, here and only here.
"""

from __future__ import annotations

import gc
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import rclpy
from rclpy.exceptions import InvalidParameterTypeException, InvalidParameterValueException
from rclpy.executors import SingleThreadedExecutor
from rclpy.logging import get_logger
from rclpy.node import Node
from rclpy.signals import SignalHandlerOptions

try:
    from rclpy.experimental import EventsExecutor
except ImportError:  # rclpy before Jazzy (Humble): no events executor
    EventsExecutor = None

STOP = threading.Event()
STOP_GRACE_S = 1.0  # wall seconds a node's callback may still run after Ctrl-C before it is interrupted
_FALLBACK_NOTED = threading.Event()


def install_stop_signals(grace_s: float | None = None) -> None:
    """SIGINT / SIGTERM set STOP instead of raising KeyboardInterrupt inside a callback; `spin` then returns
    at the next spin boundary and the caller shuts down cleanly.

    With `grace_s` (node processes): a callback still running grace_s wall seconds after the first signal (the
    physics kernels compiling on a cold start take tens of seconds) is interrupted with KeyboardInterrupt, so
    that a node always ends within ros2 launch's SIGINT timeout (5 s). Later signals change nothing: Ctrl-C in a
    terminal reaches a launched node twice (from the terminal and from launch). The caller cancels the timer
    (`cancel_stop_timer`) before its own clean-up."""

    def handler(_signum, _frame) -> None:
        if STOP.is_set():
            return
        STOP.set()
        if grace_s is not None:
            signal.setitimer(signal.ITIMER_REAL, grace_s)

    def overdue(_signum, _frame) -> None:
        raise KeyboardInterrupt

    if grace_s is not None:
        signal.signal(signal.SIGALRM, overdue)
    signal.signal(signal.SIGINT, handler)
    signal.signal(signal.SIGTERM, handler)


def cancel_stop_timer() -> None:
    """Disarm the grace timer of install_stop_signals (no-op when none is running)."""
    signal.setitimer(signal.ITIMER_REAL, 0.0)


def with_sim_time(parameter_overrides) -> list:
    """The node's parameter overrides with use_sim_time = True unless given (sim time is the only time)."""
    from rclpy.parameter import Parameter

    overrides = list(parameter_overrides or [])
    if not any(p.name == "use_sim_time" for p in overrides):
        overrides.append(Parameter("use_sim_time", value=True))
    return overrides


def make_executor(context=None):
    """The events executor, or the SingleThreadedExecutor where rclpy has none (noted once on stderr)."""
    if EventsExecutor is not None:
        return EventsExecutor(context=context)
    if not _FALLBACK_NOTED.is_set():
        _FALLBACK_NOTED.set()
        get_logger("lotusim").info(
            "rclpy has no EventsExecutor (ROS 2 Humble): using the SingleThreadedExecutor, slower with hundreds "
            "of vessels (docs/install.md)"
        )
    return SingleThreadedExecutor(context=context)


def spin(
    executor,
    context,
    duration_s: float = 0.0,
    on_tick: Callable[[], bool | None] | None = None,
    tick_period_s: float = 0.1,
    outbox: Any = None,
) -> None:
    """Spin until the context shuts down, `duration_s` wall seconds pass (0: forever), or on_tick returns True.

    `outbox` (optional: `pending`, `writes`, `quiet_s`, `ready(idle)`, `flush()`; lotusim_autonomy.command_outbox):
    messages that callbacks wrote, to send together. While some are pending the executor waits at most
    `outbox.quiet_s` for the next callback; a poll that took that long and wrote nothing is idle (the burst of
    callbacks is over), and they are flushed once `ready(idle)`."""
    start = time.monotonic()
    next_tick = start
    while context.ok() and not STOP.is_set() and (duration_s <= 0 or time.monotonic() - start < duration_s):
        if outbox is not None and outbox.pending:
            writes, waited = outbox.writes, time.monotonic()
            executor.spin_once(timeout_sec=outbox.quiet_s)
            idle = outbox.writes == writes and time.monotonic() - waited >= outbox.quiet_s
            if outbox.ready(idle):
                outbox.flush()
        else:
            executor.spin_once(timeout_sec=0.05)
        if on_tick is not None and time.monotonic() >= next_tick:
            next_tick += tick_period_s
            if on_tick():
                return


def run_node_main(
    make_node: Callable[..., Node],
    args: Sequence[str] | None = None,
    executor_factory: Callable = make_executor,
    refused: tuple[type[Exception], ...] = (),
    what: str = "",
) -> None:
    """`main()` of every node executable: init, build the node, spin until Ctrl-C, clean shutdown (a callback that
    does not return within STOP_GRACE_S of the signal, or a second signal, is interrupted: install_stop_signals).

    An exception of a `refused` type raised while building the node (a bad parameter or configuration) ends the
    process with one line `what: error: reason` and exit code 2, no traceback; with `what` given, so does a
    parameter of the wrong type or out of its declared range (rclpy's exceptions)."""
    if what:
        refused = (*refused, InvalidParameterTypeException, InvalidParameterValueException)
    rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    install_stop_signals(STOP_GRACE_S)
    try:
        context = rclpy.get_default_context()
        executor = executor_factory(context=context)
        try:
            node = make_node()
        except refused as exc:
            print(f"{what}: error: {exc}", file=sys.stderr, flush=True)
            raise SystemExit(2) from None
        executor.add_node(node)
        try:
            spin(executor, context, outbox=getattr(node, "outbox", None))
        finally:
            cancel_stop_timer()
            executor.shutdown()
            node.destroy_node()
    except KeyboardInterrupt:  # stopped during start-up, a long callback or the clean-up: nothing to report
        pass
    finally:
        cancel_stop_timer()
        rclpy.try_shutdown()
        # The interpreter's exit would otherwise run a full garbage collection over numba's, scipy's and rclpy's
        # objects: 3-5 s on a busy 2-core machine, which ros2 launch's 5 s SIGINT timeout does not allow for
        # (0.3-0.6 s with this).
        gc.freeze()
