"""`lotusim spawn`, `lotusim delete`, `lotusim move`, `lotusim list`: thin clients of the MAS server
(the FleetCommand action, /lotusim/list_vessels and /lotusim/list_models) for a running simulation, through
lotusim_core.ros.fleet_client."""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from lotusim_core.base import rotations
from lotusim_core.base.frames import yaw_to_q_enu_flu
from lotusim_core.sim.worker_health import WORKER_WAIT_S

if TYPE_CHECKING:
    from lotusim_core.ros.fleet_client import FleetClient

PROGRESS_EVERY_S = 5.0  # wall seconds between two "still waiting" lines


def register(sub: argparse._SubParsersAction) -> None:
    spawn = sub.add_parser("spawn", help="create vessels in a running simulation (FleetCommand action)")
    spawn.add_argument("name", nargs="?", default="", help="vessel name (empty: the server picks <model>_<k>)")
    spawn.add_argument("model", nargs="?", default="", help="catalogue model (see `lotusim list --models`)")
    _pose_arguments(spawn)
    spawn.add_argument("--overrides", default="", help="YAML mapping merged over the vehicle file")
    spawn.add_argument("--worker", default="", help="dynamics worker to use (default: least loaded)")
    spawn.add_argument("--scenario", default="", help="spawn every vessel of this scenario instead")
    spawn.add_argument(
        "--worker-wait-s",
        type=float,
        default=WORKER_WAIT_S,
        metavar="S",
        help=f"with --scenario: wall seconds to wait for the scenario's dynamics workers and the MAS server "
        f"(default {WORKER_WAIT_S:.0f}; a cold start compiles the physics kernels, about 20 s)",
    )
    spawn.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="scenario override (with --scenario), e.g. --set physics.workers=2 (repeatable)",
    )
    spawn.set_defaults(func=cmd_spawn)

    move = sub.add_parser("move", help="teleport a vessel (FleetCommand action)")
    move.add_argument("name")
    _pose_arguments(move)
    move.set_defaults(func=cmd_move)

    delete = sub.add_parser("delete", help="delete vessels (FleetCommand action)")
    delete.add_argument("names", nargs="+")
    delete.set_defaults(func=cmd_delete)

    listing = sub.add_parser("list", help="list the vessels (or the models) of a running simulation")
    listing.add_argument("--models", action="store_true", help="list the catalogue models instead")
    listing.add_argument("--worker", default="", help="only vessels of this worker")
    listing.set_defaults(func=cmd_list)


def _pose_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--enu", nargs=3, type=float, metavar=("X", "Y", "Z"), help="position in map ENU, m")
    parser.add_argument("--yaw-deg", type=float, default=0.0, help="ENU yaw (deg, 0 = east, counter-clockwise)")
    parser.add_argument("--lat", type=float, help="WGS84 latitude, deg (with --lon)")
    parser.add_argument("--lon", type=float, help="WGS84 longitude, deg")
    parser.add_argument("--depth", type=float, default=0.0, help="depth below the surface, m (with --lat/--lon)")
    parser.add_argument("--heading", type=float, default=0.0, help="compass heading, deg (with --lat/--lon)")


def _description(args: argparse.Namespace, name: str, model: str = ""):
    from lotusim_interfaces.msg import VesselDescription

    vessel = VesselDescription(name=name, model=model)
    if args.lat is not None or args.lon is not None:
        if args.lat is None or args.lon is None:
            raise ValueError("--lat and --lon go together")
        vessel.pose_frame = VesselDescription.POSE_GEODETIC
        vessel.latitude_deg, vessel.longitude_deg = float(args.lat), float(args.lon)
        vessel.depth_m, vessel.heading_deg = float(args.depth), float(args.heading)
    else:
        vessel.pose_frame = VesselDescription.POSE_ENU
        x, y, z = (float(v) for v in (args.enu or (0.0, 0.0, 0.0)))
        vessel.pose.position.x, vessel.pose.position.y, vessel.pose.position.z = x, y, z
        # ENU yaw psi_enu = 90 deg - compass heading
        q = yaw_to_q_enu_flu(math.radians(args.yaw_deg))
        o = vessel.pose.orientation
        o.x, o.y, o.z, o.w = (float(v) for v in q)
    return vessel


NO_ANSWER_HINT = "is `lotusim run` running, same ROS_DOMAIN_ID?"


@contextmanager
def session() -> Iterator[FleetClient]:
    """A short-lived node with a FleetClient of the MAS server (lotusim_core.ros.fleet_client), shut down after."""
    import rclpy

    from lotusim_core.ros.fleet_client import FleetClient
    from lotusim_core.ros.node_runner import make_executor

    context = rclpy.Context()
    rclpy.init(context=context)
    node = rclpy.create_node("lotusim_cli", context=context)
    executor = make_executor(context)
    executor.add_node(node)
    try:
        yield FleetClient(node, executor, hint=NO_ANSWER_HINT)
    finally:
        executor.shutdown()
        node.destroy_node()
        context.try_shutdown()


def wait_for_workers(client: FleetClient, workers: list[str], limit_s: float) -> None:
    """Wait until every worker in `workers` has reported on /lotusim/stats and the MAS server's action is up,
    printing progress every PROGRESS_EVERY_S; TimeoutError naming the missing ones after limit_s (wall)."""
    from lotusim_core.ros.spin import spin_until
    from lotusim_interfaces.msg import SimStats

    seen: set[str] = set()
    client.node.create_subscription(SimStats, "/lotusim/stats", lambda m: seen.add(m.worker), 10)
    start = time.monotonic()
    next_note = [start + PROGRESS_EVERY_S]

    def missing() -> list[str]:
        return [w for w in workers if w not in seen] or ["the MAS server (/lotusim/fleet_command)"]

    def progress() -> None:
        if time.monotonic() >= next_note[0]:
            next_note[0] += PROGRESS_EVERY_S
            print(
                f"lotusim spawn: waiting for {', '.join(missing())}: {len(seen & set(workers))} of {len(workers)} "
                f"worker(s) up after {time.monotonic() - start:.0f} s (at most {limit_s:.0f} s; a cold start "
                "compiles the physics kernels)",
                file=sys.stderr,
                flush=True,
            )

    spin_until(
        client.executor,
        lambda: seen.issuperset(workers) and client.server_is_ready(),
        limit_s,
        lambda: f"spawn: {', '.join(missing())} did not report",
        hint="--worker-wait-s; are the simulation's nodes running, with the same ROS_DOMAIN_ID?",
        check=progress,
    )
    print(f"lotusim spawn: {len(workers)} worker(s) up after {time.monotonic() - start:.1f} s", file=sys.stderr)


def _command(client: FleetClient, items) -> int:
    """Send the items as one goal, print the progress on stderr and the results; exit code 0 if none failed."""

    def progress(fb) -> None:
        f = fb.feedback
        print(f"\r{f.done}/{f.total} items, {f.failed} failed", end="", file=sys.stderr, flush=True)

    client.wait_for_server(30.0)
    result = client.command(items, timeout_s=120.0, feedback=progress)
    print("", file=sys.stderr)
    return _print_results(result)


def _print_results(result) -> int:
    for r in result.results:
        where = f" on {r.worker}" if r.worker else ""
        print(f"{r.name or '?':<24} {'ok' if r.ok else 'FAILED'}{where}{'' if r.ok else ': ' + r.reason}")
    print(f"{result.succeeded} succeeded, {result.failed} failed")
    return 0 if result.failed == 0 else 1


def cmd_spawn(args: argparse.Namespace) -> int:
    from lotusim_core.ros.fleet_client import fleet_items
    from lotusim_interfaces.msg import FleetCommandItem

    if args.scenario:
        from lotusim_core.sim import launch_plan

        scenario, _ = launch_plan.scenario_from_cli(args)
        plan = scenario.plan()
        items = plan.spawn_items()
        workers = [plan.node_parameters[name]["worker"] for name in plan.dynamics_nodes]
    else:
        if not args.model:
            raise ValueError("spawn: give NAME MODEL (or --scenario FILE); `lotusim list --models` lists models")
        vessel = _description(args, args.name, args.model)
        vessel.overrides_yaml, vessel.worker = args.overrides, args.worker
        items = fleet_items(FleetCommandItem.CREATE, [vessel])
        workers = []
    with session() as client:
        if workers:
            wait_for_workers(client, workers, args.worker_wait_s)
        return _command(client, items)


def cmd_move(args: argparse.Namespace) -> int:
    from lotusim_core.ros.fleet_client import fleet_items
    from lotusim_interfaces.msg import FleetCommandItem

    with session() as client:
        return _command(client, fleet_items(FleetCommandItem.MOVE, [_description(args, args.name)]))


def cmd_delete(args: argparse.Namespace) -> int:
    from lotusim_core.ros.fleet_client import fleet_items
    from lotusim_interfaces.msg import FleetCommandItem, VesselDescription

    with session() as client:
        return _command(client, fleet_items(FleetCommandItem.DELETE, [VesselDescription(name=n) for n in args.names]))


STATUS_NAMES = {0: "ok", 1: "frozen", 2: "worker_down", 3: "lost", 4: "contact"}  # VesselInfo.STATUS_*


def cmd_list(args: argparse.Namespace) -> int:
    with session() as client:
        if args.models:
            for name, domain, description in client.list_models():
                print(f"{name:<16} {domain:<11} {description}")
            return 0
        vessels = client.list_vessels(args.worker)
        print(f"{'name':<24} {'model':<16} {'worker':<10} {'x':>10} {'y':>10} {'z':>8} {'yaw':>7}  status")
        for v in vessels:
            p, o = v.pose.position, v.pose.orientation
            yaw = math.degrees(rotations.yaw_one(o.x, o.y, o.z, o.w))
            status = STATUS_NAMES.get(v.status, str(v.status)) + (f" ({v.status_reason})" if v.status_reason else "")
            print(
                f"{v.name:<24} {v.model:<16} {v.worker:<10} {p.x:>10.2f} {p.y:>10.2f} {p.z:>8.2f} {yaw:>7.1f}  {status}"
            )
        print(f"{len(vessels)} vessels")
        return 0
