"""`lotusim run` and `lotusim demo`: start the simulation nodes in one process (the same node classes that
the launch files start), with a status line and a clean shutdown on Ctrl-C."""

from __future__ import annotations

import argparse
import time

import numpy as np


def register(sub: argparse._SubParsersAction) -> None:
    run = sub.add_parser("run", help="start the simulation nodes (Ctrl-C to stop)")
    run.add_argument("--duration", type=float, default=0.0, help="stop after this many wall seconds (0: run until Ctrl-C)")
    run.set_defaults(func=cmd_run)
    demo = sub.add_parser("demo", help="run the demo headless and print a summary")
    demo.add_argument("--duration", type=float, default=2.0, help="wall seconds to run")
    demo.set_defaults(func=cmd_demo)


def _start_nodes():
    import rclpy
    from rclpy.executors import SingleThreadedExecutor

    from lotusim_env.current_server import CurrentServer

    context = rclpy.Context()
    rclpy.init(context=context)
    executor = SingleThreadedExecutor(context=context)
    nodes = [CurrentServer(context=context)]
    for node in nodes:
        executor.add_node(node)
    return context, executor, nodes


def _stop_nodes(context, executor, nodes) -> None:
    executor.shutdown()
    for node in nodes:
        node.destroy_node()
    context.try_shutdown()


def cmd_run(args: argparse.Namespace) -> int:
    context, executor, nodes = _start_nodes()
    print(f"lotusim: simulation running (nodes: {', '.join(n.get_name() for n in nodes)}); Ctrl-C to stop", flush=True)
    start = time.monotonic()
    try:
        while context.ok() and (args.duration <= 0 or time.monotonic() - start < args.duration):
            executor.spin_once(timeout_sec=0.1)
    except KeyboardInterrupt:
        print("\nlotusim: stopping", flush=True)
    finally:
        _stop_nodes(context, executor, nodes)
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    """Start the nodes, query them over DDS as a client would, and print what they answered."""
    import rclpy

    from lotusim_interfaces.srv import QueryCurrent

    context, executor, nodes = _start_nodes()
    client_node = rclpy.create_node("lotusim_demo_client", context=context)
    executor.add_node(client_node)
    try:
        print(f"lotusim: simulation running (nodes: {', '.join(n.get_name() for n in nodes)})", flush=True)
        client = client_node.create_client(QueryCurrent, "/lotusim/query_current")
        deadline = time.monotonic() + 10.0
        while not client.service_is_ready() and time.monotonic() < deadline:
            executor.spin_once(timeout_sec=0.1)
        future = client.call_async(QueryCurrent.Request(time_s=0.0, points_enu=[0.0, 0.0, -10.0]))
        executor.spin_until_future_complete(future, timeout_sec=10.0)
        reply = future.result()
        if reply is None or not reply.success:
            print("lotusim: error: the current service did not answer", flush=True)
            return 1
        velocity = np.frombuffer(reply.velocities_enu, dtype=float)
        print(f"lotusim: current at 10 m depth = {velocity.round(3).tolist()} m/s (ENU)", flush=True)
        end = time.monotonic() + args.duration
        while time.monotonic() < end:
            executor.spin_once(timeout_sec=0.1)
        print("lotusim: demo finished", flush=True)
    finally:
        client_node.destroy_node()
        _stop_nodes(context, executor, nodes)
    return 0
