"""`lotusim spawn`, `lotusim delete`, `lotusim move`, `lotusim list`: thin clients of the MAS server
(the FleetCommand action, /lotusim/list_vessels and /lotusim/list_models) for a running simulation."""

from __future__ import annotations

import argparse
import math
import sys
import time

from lotusim_core.sim.fleet_registry import heading_to_q_enu_flu

WORKER_WAIT_S = 300.0  # default wall-time limit for the workers of a scenario to report (cold start: 20 s to minutes)
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
        q = heading_to_q_enu_flu(90.0 - args.yaw_deg)
        o = vessel.pose.orientation
        o.x, o.y, o.z, o.w = (float(v) for v in q)
    return vessel


class _Client:
    """A short-lived node that talks to the MAS server."""

    def __init__(self) -> None:
        import rclpy

        from lotusim_core.ros.node_runner import make_executor

        self.context = rclpy.Context()
        rclpy.init(context=self.context)
        self.node = rclpy.create_node("lotusim_cli", context=self.context)
        self.executor = make_executor(self.context)
        self.executor.add_node(self.node)

    def wait(self, future_or_predicate, timeout_s: float, what: str):
        done = future_or_predicate if callable(future_or_predicate) else future_or_predicate.done
        deadline = time.monotonic() + timeout_s
        while not done():
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"{what}: no answer within {timeout_s:.0f} s (is `lotusim run` running, same ROS_DOMAIN_ID?)"
                )
            self.executor.spin_once(timeout_sec=0.05)
        return None if callable(future_or_predicate) else future_or_predicate.result()

    def wait_for_workers(self, workers: list[str], limit_s: float) -> None:
        """Wait until every worker in `workers` has reported on /lotusim/stats and the MAS server's action is up,
        printing progress every PROGRESS_EVERY_S; TimeoutError naming the missing ones after limit_s (wall)."""
        from rclpy.action import ActionClient

        from lotusim_interfaces.action import FleetCommand
        from lotusim_interfaces.msg import SimStats

        seen: set[str] = set()
        self.node.create_subscription(SimStats, "/lotusim/stats", lambda m: seen.add(m.worker), 10)
        server = ActionClient(self.node, FleetCommand, "/lotusim/fleet_command")
        start = time.monotonic()
        next_note = start + PROGRESS_EVERY_S
        while not (seen.issuperset(workers) and server.server_is_ready()):
            waited = time.monotonic() - start
            missing = [w for w in workers if w not in seen] or ["the MAS server (/lotusim/fleet_command)"]
            if waited > limit_s:
                raise TimeoutError(
                    f"spawn: {', '.join(missing)} did not report within {limit_s:.0f} s (--worker-wait-s; are the "
                    "simulation's nodes running, with the same ROS_DOMAIN_ID?)"
                )
            if time.monotonic() >= next_note:
                next_note += PROGRESS_EVERY_S
                print(
                    f"lotusim spawn: waiting for {', '.join(missing)}: {len(seen & set(workers))} of {len(workers)} "
                    f"worker(s) up after {waited:.0f} s (at most {limit_s:.0f} s; a cold start compiles the "
                    "physics kernels)",
                    file=sys.stderr,
                    flush=True,
                )
            self.executor.spin_once(timeout_sec=0.05)
        server.destroy()
        print(f"lotusim spawn: {len(workers)} worker(s) up after {time.monotonic() - start:.1f} s", file=sys.stderr)

    def spin_once(self, timeout_s: float) -> None:
        self.executor.spin_once(timeout_sec=timeout_s)

    def command(self, items, timeout_s: float = 120.0):
        from rclpy.action import ActionClient

        from lotusim_core.ros import reliable_calls
        from lotusim_interfaces.action import FleetCommand

        client = ActionClient(self.node, FleetCommand, "/lotusim/fleet_command")
        self.wait(client.server_is_ready, 30.0, "the MAS server (/lotusim/fleet_command)")
        # the client sees the server before the server has matched our response readers (a DDS discovery race):
        # a goal sent at once is likely to have its answer lost (and asked for again 5 s later)
        settle = time.monotonic() + 1.0
        self.wait(lambda: time.monotonic() > settle, 5.0, "discovery")

        def progress(fb) -> None:
            f = fb.feedback
            print(f"\r{f.done}/{f.total} items, {f.failed} failed", end="", file=sys.stderr, flush=True)

        # an answer lost to discovery is asked for again (reliable_calls: the goal still runs once)
        handle = reliable_calls.send_goal(
            client, FleetCommand.Goal(items=items), self.spin_once, feedback_callback=progress
        )
        result = reliable_calls.goal_result(handle, self.spin_once, timeout_s).result
        print("", file=sys.stderr)
        return result

    def call(self, srv_type, name: str, request, timeout_s: float = 30.0):
        """A read-only service call (listings), re-sent if its answer is lost."""
        from lotusim_core.ros import reliable_calls

        client = self.node.create_client(srv_type, name)
        self.wait(client.service_is_ready, timeout_s, name)
        return reliable_calls.call_read_only(client, request, self.spin_once)

    def close(self) -> None:
        self.executor.shutdown()
        self.node.destroy_node()
        self.context.try_shutdown()


def _print_results(result) -> int:
    for r in result.results:
        where = f" on {r.worker}" if r.worker else ""
        print(f"{r.name or '?':<24} {'ok' if r.ok else 'FAILED'}{where}{'' if r.ok else ': ' + r.reason}")
    print(f"{result.succeeded} succeeded, {result.failed} failed")
    return 0 if result.failed == 0 else 1


def _items_of(command: int, vessels):
    from lotusim_interfaces.msg import FleetCommandItem

    return [FleetCommandItem(command=command, vessel=v) for v in vessels]


def cmd_spawn(args: argparse.Namespace) -> int:
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
        items = _items_of(FleetCommandItem.CREATE, [vessel])
        workers = []
    client = _Client()
    try:
        if workers:
            client.wait_for_workers(workers, args.worker_wait_s)
        return _print_results(client.command(items))
    finally:
        client.close()


def cmd_move(args: argparse.Namespace) -> int:
    from lotusim_interfaces.msg import FleetCommandItem

    client = _Client()
    try:
        return _print_results(client.command(_items_of(FleetCommandItem.MOVE, [_description(args, args.name)])))
    finally:
        client.close()


def cmd_delete(args: argparse.Namespace) -> int:
    from lotusim_interfaces.msg import FleetCommandItem, VesselDescription

    client = _Client()
    try:
        vessels = [VesselDescription(name=n) for n in args.names]
        return _print_results(client.command(_items_of(FleetCommandItem.DELETE, vessels)))
    finally:
        client.close()


STATUS_NAMES = {0: "ok", 1: "frozen", 2: "worker_down", 3: "lost"}  # VesselInfo.STATUS_*


def cmd_list(args: argparse.Namespace) -> int:
    from lotusim_interfaces.srv import ListModels, ListVessels

    client = _Client()
    try:
        if args.models:
            reply = client.call(ListModels, "/lotusim/list_models", ListModels.Request())
            for name, domain, description in zip(reply.models, reply.domains, reply.descriptions, strict=True):
                print(f"{name:<16} {domain:<11} {description}")
            return 0
        reply = client.call(ListVessels, "/lotusim/list_vessels", ListVessels.Request(worker=args.worker))
        print(f"{'name':<24} {'model':<16} {'worker':<10} {'x':>10} {'y':>10} {'z':>8} {'yaw':>7}  status")
        for v in reply.vessels:
            p, o = v.pose.position, v.pose.orientation
            yaw = math.degrees(math.atan2(2 * (o.w * o.z + o.x * o.y), 1 - 2 * (o.y**2 + o.z**2)))
            status = STATUS_NAMES.get(v.status, str(v.status)) + (f" ({v.status_reason})" if v.status_reason else "")
            print(
                f"{v.name:<24} {v.model:<16} {v.worker:<10} {p.x:>10.2f} {p.y:>10.2f} {p.z:>8.2f} {yaw:>7.1f}  {status}"
            )
        print(f"{len(reply.vessels)} vessels")
        return 0
    finally:
        client.close()
