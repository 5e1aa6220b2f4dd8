"""Run lotusim nodes: one executor for all of them, shut down cleanly on Ctrl-C.

The executor is rclpy's EventsExecutor: the default executors rebuild a wait set over every subscription at
each spin, which costs milliseconds per spin with hundreds of vessels (each with its command subscriptions)
and halves the real-time factor of a 100-vessel fleet; the events executor dispatches as messages arrive
(docs/performance.md). Its spin() never returns on shutdown, so we always spin with a timeout.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Sequence

import rclpy
from rclpy.experimental import EventsExecutor
from rclpy.node import Node
from rclpy.signals import SignalHandlerOptions

STOP = threading.Event()


def install_stop_signals() -> None:
    """SIGINT / SIGTERM set STOP instead of raising KeyboardInterrupt inside a callback; `spin` then returns
    at the next spin boundary and the caller shuts down cleanly."""

    def handler(_signum, _frame) -> None:
        STOP.set()

    signal.signal(signal.SIGINT, handler)
    signal.signal(signal.SIGTERM, handler)


def with_sim_time(parameter_overrides) -> list:
    """The node's parameter overrides with use_sim_time = True unless given (sim time is the only time)."""
    from rclpy.parameter import Parameter

    overrides = list(parameter_overrides or [])
    if not any(p.name == "use_sim_time" for p in overrides):
        overrides.append(Parameter("use_sim_time", value=True))
    return overrides


def make_executor(context=None) -> EventsExecutor:
    return EventsExecutor(context=context)


def spin(
    executor,
    context,
    duration_s: float = 0.0,
    on_tick: Callable[[], bool | None] | None = None,
    tick_period_s: float = 0.1,
) -> None:
    """Spin until the context shuts down, `duration_s` wall seconds pass (0: forever), or on_tick returns True."""
    start = time.monotonic()
    next_tick = start
    while context.ok() and not STOP.is_set() and (duration_s <= 0 or time.monotonic() - start < duration_s):
        executor.spin_once(timeout_sec=0.05)
        if on_tick is not None and time.monotonic() >= next_tick:
            next_tick += tick_period_s
            if on_tick():
                return


def run_node_main(
    make_node: Callable[..., Node], args: Sequence[str] | None = None, executor_factory: Callable = make_executor
) -> None:
    """`main()` of a node executable: init, build the node, spin until Ctrl-C, clean shutdown."""
    rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    install_stop_signals()
    context = rclpy.get_default_context()
    executor = executor_factory(context=context)
    node = make_node()
    executor.add_node(node)
    try:
        spin(executor, context)
    finally:
        executor.shutdown()
        node.destroy_node()
        rclpy.try_shutdown()
