"""The `lotusim` command line: run simulations and the tools around them without `ros2 launch`.

Each subcommand lives in its own module exposing `register(subparsers)`; add new ones to SUBCOMMANDS and their
command names to COMMANDS. `lotusim <command>` imports only the module of that command (some import the physics,
NumPy, SciPy: seconds of start-up that `lotusim list` must not pay); help and unknown commands import them all.
"""

from __future__ import annotations

import argparse
import importlib
import sys

# module path of each subcommand group, in help order
SUBCOMMANDS = [
    "lotusim_core.cli.run",
    "lotusim_core.cli.console",
    "lotusim_core.cli.fleet",
    "lotusim_core.cli.checkpoint",
    "lotusim_core.cli.current_eval",
    "lotusim_core.cli.current_profile",
    "lotusim_core.cli.bench",
    "lotusim_core.cli.vehicle_report",
    "lotusim_core.cli.sysid",
]
# the commands each module registers (checked against what they register by test_cli_commands)
COMMANDS = {
    "run": "lotusim_core.cli.run",
    "demo": "lotusim_core.cli.run",
    "console": "lotusim_core.cli.console",
    "spawn": "lotusim_core.cli.fleet",
    "move": "lotusim_core.cli.fleet",
    "delete": "lotusim_core.cli.fleet",
    "list": "lotusim_core.cli.fleet",
    "checkpoint": "lotusim_core.cli.checkpoint",
    "current-eval": "lotusim_core.cli.current_eval",
    "current-profile": "lotusim_core.cli.current_profile",
    "bench": "lotusim_core.cli.bench",
    "vehicle-report": "lotusim_core.cli.vehicle_report",
    "sysid": "lotusim_core.cli.sysid",
}


# What a user's input or setup can raise (ScenarioError, CatalogueError and the other validation errors are
# ValueErrors; OSError covers missing or unwritable files;
# RuntimeError: a goal rejected, rclpy unable to start). Anything else is a bug and keeps its traceback.
USER_ERRORS = (ValueError, OSError, RuntimeError)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of `command` alone when it is a known command, else of every command (help, a typo)."""
    parser = argparse.ArgumentParser(prog="lotusim", description="lotusim marine fleet simulator for ROS 2")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for module_name in [COMMANDS[command]] if command in COMMANDS else SUBCOMMANDS:
        importlib.import_module(module_name).register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `lotusim` console script; returns the process exit code."""
    argv = sys.argv[1:] if argv is None else argv
    args = build_parser(argv[0] if argv else None).parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        return 130
    except TimeoutError as exc:  # no simulation answers (or not in time): one clear line, no traceback, exit 1
        print(f"lotusim: error: {exc}", file=sys.stderr)
        return 1
    except USER_ERRORS as exc:  # configuration errors, files: one line, no traceback, exit 2
        print(f"lotusim: error: {exc}", file=sys.stderr)
        return 2
