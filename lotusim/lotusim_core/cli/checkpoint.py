"""`lotusim checkpoint save|restore|list [NAME]`: a thin client of the MAS server's /lotusim/checkpoint for a
running simulation. Checkpoints live in the nodes' checkpoint directory (docs/simulation.md) and are addressed by
name only."""

from __future__ import annotations

import argparse
import sys

from lotusim_core.base.checkpoint_store import check_name

OPERATIONS = ("save", "restore", "list")
ANSWER_S = 60.0  # wall seconds for the answer to a save or restore (every worker, one after the other)


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "checkpoint", help="save, restore or list checkpoints of a running simulation (by name, not path)"
    )
    parser.add_argument("operation", choices=OPERATIONS)
    parser.add_argument("name", nargs="?", default="", help="checkpoint name (letters, digits, _ . -; max 64)")
    parser.set_defaults(func=cmd_checkpoint)


def cmd_checkpoint(args: argparse.Namespace) -> int:
    """Exit code 0 on success, 1 if the server refused (its one-line reason on stderr), 2 for a usage error."""
    from lotusim_core.cli.fleet import session
    from lotusim_interfaces.srv import Checkpoint

    if args.operation != "list":
        if not args.name:
            raise ValueError(f"checkpoint {args.operation}: give the checkpoint NAME")
        check_name(args.name)
    operation = {"save": Checkpoint.Request.SAVE, "restore": Checkpoint.Request.RESTORE}.get(
        args.operation, Checkpoint.Request.LIST
    )
    try:
        with session() as client:  # re-sent if its answer is lost (saving or restoring twice is harmless)
            reply = client.checkpoint(operation, args.name, answer_s=ANSWER_S, attempts=2)
    except TimeoutError as exc:
        print(f"lotusim: checkpoint {args.operation} failed: {exc}", file=sys.stderr)
        return 1
    if not reply.success:
        print(f"lotusim: checkpoint {args.operation} failed: {reply.message}", file=sys.stderr)
        return 1
    if args.operation == "list":
        print(reply.message or "no checkpoints")
        return 0
    t = reply.sim_time.sec + reply.sim_time.nanosec * 1e-9
    done = "saved" if args.operation == "save" else "restored"
    print(f"checkpoint {args.name} {done}: sim time {t:.3f} s, {reply.vessel_count} vessels")
    return 0
