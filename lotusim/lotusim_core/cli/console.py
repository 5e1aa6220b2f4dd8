"""`lotusim console`: the operator console for a simulation that is already running (started by `lotusim run`,
`ros2 launch lotusim sim.launch.py` or anything else on the same ROS domain). `lotusim run --console` and the
`console:=true` launch argument start the same node with the simulation. docs/console.md.
"""

from __future__ import annotations

import argparse
import os


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "console",
        help="serve the operator console of a running simulation (a page and a Foxglove WebSocket server)",
    )
    p.add_argument("--host", default="127.0.0.1", help="address to bind (another than 127.0.0.1 needs --token)")
    p.add_argument("--port", type=int, default=8080, help="the page's port (0: any free port, -1: no page)")
    p.add_argument("--ws-port", type=int, default=8765, help="the Foxglove WebSocket port (0: any free port)")
    p.add_argument(
        "--token",
        default=os.environ.get("LOTUSIM_CONSOLE_TOKEN", ""),
        help="needed to log in as an operator (default: $LOTUSIM_CONSOLE_TOKEN)",
    )
    p.add_argument("--master-node", default="dynamics_0", help="the clock master node (pause, resume, RTF)")
    p.add_argument("--rate", type=float, default=10.0, help="updates per second to every client")
    p.set_defaults(func=cmd_console)


def cmd_console(args: argparse.Namespace) -> int:
    from lotusim_core.console.console_node import main
    from lotusim_core.console.settings import config_problem

    problem = config_problem(args.host, args.token, args.rate)
    if problem:
        raise ValueError(f"lotusim console: {problem}")
    params = {
        "host": args.host,
        "http_port": args.port,
        "port": args.ws_port,
        "token": args.token,
        "master_node": args.master_node,
        "rate_hz": float(args.rate),
    }
    ros_args = ["--ros-args"] + [a for k, v in params.items() for a in ("-p", f"{k}:={_ros_value(v)}")]
    main(ros_args)
    return 0


def _ros_value(value) -> str:
    """A parameter value on the command line (a string stays a string, even '123')."""
    return f"'{value}'" if isinstance(value, str) else str(value)
