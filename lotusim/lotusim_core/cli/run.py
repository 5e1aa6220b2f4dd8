"""`lotusim run SCENARIO` and `lotusim demo`: a scenario's simulation without `ros2 launch`.

scenario -> plan (lotusim_core.sim.scenario) -> node specs (lotusim_core.sim.launch_plan, the same list sim.launch.py
uses) -> one process per node (lotusim_core.sim.process_launcher) -> vessels spawned through the MAS action, a live
status line (sim time, RTF, vessels), optional recording (rosbag2 / MCAP) and trajectory plot, and a clean stop
on Ctrl-C or after `--duration` seconds of sim time.
"""

from __future__ import annotations

import argparse
import faulthandler
import math
import struct
import sys
import time
from collections import Counter
from pathlib import Path

DEMO_SCENARIO = "mixed_fleet_brest"
DEMO_RTF, DEMO_DURATION_S = 1.0, 90.0  # what 99 vessels and their controllers get on 2 shared cores (quickstart)


TOPICS_WAIT_S = 120.0  # wall s the sim time waits at 0 for the nodes to make the spawned vessels' topics
SHUTDOWN_REPORT_S = 60.0  # wall s: the run's clean-up still going after this prints every thread's stack


def register(sub: argparse._SubParsersAction) -> None:
    run = sub.add_parser("run", help="run a scenario (config/scenarios/<name>.yaml or a path); Ctrl-C stops it")
    run.add_argument("scenario", nargs="?", default="single_auv", help="scenario name or YAML file")
    _run_arguments(run)
    run.set_defaults(func=cmd_run)
    demo = sub.add_parser(
        "demo",
        help=f"run the {DEMO_SCENARIO} fleet headless, print a summary, write a trajectory plot and an MCAP recording",
    )
    demo.add_argument("--out", default="out/demo", help="output directory (plot, recording, node logs)")
    demo.add_argument("--duration", type=sim_seconds, default=DEMO_DURATION_S, help="sim seconds to run")
    demo.add_argument("--rtf", type=float, default=DEMO_RTF, help="real-time factor (mode scaled)")
    demo.set_defaults(func=cmd_demo)


def sim_seconds(text: str) -> float:
    """A --duration: a finite number of sim seconds >= 0 (argparse prints the error on one line)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected sim seconds, got {text!r}") from None
    if not (math.isfinite(value) and value >= 0.0):
        raise argparse.ArgumentTypeError(f"expected a finite number of sim seconds >= 0, got {text!r}")
    return value


def _run_arguments(run: argparse.ArgumentParser) -> None:
    run.add_argument(
        "--duration",
        type=sim_seconds,
        default=0.0,
        help="stop after this many sim seconds (0: the scenario's duration, or run until Ctrl-C)",
    )
    run.add_argument("--mode", default="", choices=["", "realtime", "scaled", "fast", "lockstep"])
    run.add_argument("--rtf", default="", help="real-time factor (!= 1 selects mode scaled)")
    run.add_argument("--workers", default="", help="number of dynamics workers")
    run.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="scenario override, e.g. --set physics.step_s=0.01 (repeatable)",
    )
    run.add_argument("--headless", action="store_true", help="no RViz markers")
    run.add_argument(
        "--console",
        action="store_true",
        help="start the operator console: a page on http://127.0.0.1:8080/ and a Foxglove WebSocket server on "
        "ws://127.0.0.1:8765 (docs/console.md)",
    )
    run.add_argument("--console-port", type=int, default=8080, help="the console page's port (0: any free port)")
    run.add_argument("--console-ws-port", type=int, default=8765, help="the console's Foxglove port (0: any free)")
    run.add_argument(
        "--record", default="", help="record fleet state, stats, clock and odometry to this rosbag2/MCAP directory"
    )
    run.add_argument("--plot", default="", help="write the vessels' trajectories to this PNG at the end")
    run.add_argument("--log-dir", default="", help="keep the nodes' logs here (default: a temporary directory)")
    run.add_argument(
        "--remap",
        default="",
        metavar="FILE",
        help="remapping file (YAML: vessels' topics -> a vehicle stack's names and rates, rules per node, lockstep; "
        "docs/hil.md)",
    )


def cmd_run(args: argparse.Namespace) -> int:
    from lotusim_core.sim import launch_plan

    scenario, overrides = launch_plan.scenario_from_cli(args)
    hil_plan = None
    if getattr(args, "remap", ""):
        from lotusim_core.sim import hil

        hil_plan = hil.apply_hil(scenario, hil.load_remapping(args.remap))
        scenario = hil_plan.scenario
    console = None
    if getattr(args, "console", False):
        console = {"http_port": args.console_port, "port": args.console_ws_port}
    summary = run_scenario(
        scenario, args.duration, args.headless, args.record, args.plot, args.log_dir, hil_plan=hil_plan,
        watch_rtf=getattr(args, "watch_rtf", 0.0), console=console,
    )  # fmt: skip
    return 0 if summary["ok"] else 1


def cmd_demo(args: argparse.Namespace) -> int:
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    record = out / time.strftime("recording_%Y%m%d_%H%M%S")
    plot = out / "trajectories.png"
    ns = argparse.Namespace(
        scenario=DEMO_SCENARIO,
        duration=args.duration,
        mode="scaled",
        rtf=str(args.rtf),
        workers="",
        set=[],
        headless=True,
        record=str(record),
        plot=str(plot),
        log_dir=str(out / "logs"),
        watch_rtf=args.rtf,  # the controllers' progress and the achieved RTF against this target (cli_demo)
    )
    return cmd_run(ns)


def _status_printer():
    interactive = sys.stdout.isatty()
    last = [0.0]

    def show(text: str, force: bool = False) -> None:
        now = time.monotonic()
        if interactive:
            print(f"\r{text}\033[K", end="", flush=True)
        elif force or now - last[0] >= 5.0:  # logs: one line every 5 s
            print(text, flush=True)
            last[0] = now

    return show


def run_scenario(
    scenario, duration_s: float, headless: bool, record: str, plot: str, log_dir: str, hil_plan=None,
    watch_rtf: float = 0.0, console: dict | None = None,
) -> dict:  # fmt: skip
    """Start the scenario's nodes, spawn its vessels, run, stop; return the summary (also printed). hil_plan
    (lotusim_core.sim.hil.HilPlan): its plan and remapping rules instead of the scenario's plan. watch_rtf > 0: watch
    the controllers' status and report against this target RTF (lotusim_core.cli.demo). console: the operator
    console's options (launch_plan.console_spec), None for none."""
    import rclpy
    from rclpy.serialization import deserialize_message

    from lotusim_core.ros import shared_memory, spin
    from lotusim_core.ros.fleet_client import FleetClient
    from lotusim_core.ros.node_runner import STOP, install_stop_signals, make_executor
    from lotusim_core.sim import launch_plan, run_clock
    from lotusim_core.sim.process_launcher import ProcessLauncher
    from lotusim_core.sim.trajectories import TrajectoryLog
    from lotusim_interfaces.msg import FleetState, SimStats

    plan = scenario.plan() if hil_plan is None else hil_plan.plan
    duration_s = duration_s or (plan.duration_s or 0.0)
    if record and Path(record).exists():
        raise ValueError(f"--record {record}: exists already (choose another path or delete it)")
    specs = launch_plan.node_specs(plan, headless, None if hil_plan is None else hil_plan.remappings)
    specs = run_clock.held(specs, plan.dynamics_nodes[0])  # sim time held at 0 until released (run_clock)
    if console is not None:
        specs.append(launch_plan.console_spec(plan, **console))
        where = "a free port" if not console["http_port"] else f"http://127.0.0.1:{console['http_port']}/"
        print(f"lotusim: operator console on {where} (Foxglove: ws://127.0.0.1:{console['port']})", flush=True)
    if hil_plan is not None:
        _print_remappings(hil_plan)
    print(
        f"lotusim: scenario {plan.name}: {len(plan.vessels)} vessels, {len(plan.dynamics_nodes)} worker(s), "
        f"{len(plan.controllers)} controller(s); starting {len(specs)} nodes",
        flush=True,
    )
    install_stop_signals()
    shared_memory.main()  # a node killed while creating a shared-memory port would stall every new node
    context = rclpy.Context()
    rclpy.init(context=context)
    node = rclpy.create_node("lotusim_run", context=context)  # wall time: no /clock subscription (run_clock)
    executor = make_executor(context)
    executor.add_node(node)
    stats: dict[str, SimStats] = {}
    node.create_subscription(SimStats, "/lotusim/stats", lambda m: stats.__setitem__(m.worker, m), 10)
    trajectories = TrajectoryLog(period_s=1.0)
    watch = None
    if watch_rtf > 0:
        from lotusim_core.cli.demo import DemoWatch

        watch = DemoWatch(node, plan, watch_rtf)
    dyn = plan.node_parameters[plan.dynamics_nodes[0]]
    workers = [plan.node_parameters[n]["worker"] for n in plan.dynamics_nodes]
    clock = run_clock.RunClock(
        node, lambda t: executor.spin_once(timeout_sec=t), plan.dynamics_nodes[0], workers, dyn["step_s"],
        dyn["fleet_state_every"],
    )  # fmt: skip
    keep_every = max(1, round(0.5 / (dyn["step_s"] * dyn["fleet_state_every"])))  # ~2 Hz of sim time per worker
    seen = [0]

    sim_ns = [0]

    def on_fleet_state(raw: bytes) -> None:  # deserialise only the states the trajectory log keeps
        sec, nanosec = struct.unpack_from("<iI", raw, 4)  # CDR header, then header.stamp (sec, nanosec)
        sim_ns[0] = max(sim_ns[0], sec * 1_000_000_000 + nanosec)
        seen[0] += 1
        clock.on_fleet_state(raw)
        if seen[0] % keep_every == 0:
            trajectories.add(deserialize_message(raw, FleetState))

    node.create_subscription(FleetState, "/lotusim/fleet_state", on_fleet_state, 100, raw=True)
    show = _status_printer()
    summary = {"ok": False, "scenario": plan.name}
    recorder = None
    wall_start = time.monotonic()
    with ProcessLauncher(specs, log_dir or None) as launcher:

        def alive() -> None:  # a node that died is restarted (process_launcher.supervise); NodeGaveUp ends the run
            for restart in launcher.supervise():
                if restart.name == plan.dynamics_nodes[0]:
                    clock.master_restarted()
                print(
                    f"\nlotusim: node {restart.name} died (exit code {restart.returncode}); restarted after "
                    f"{restart.down_s:.1f} s (its log: {launcher.log_dir / restart.name}.log)",
                    flush=True,
                )

        def check() -> None:
            alive()
            if STOP.is_set():
                raise KeyboardInterrupt

        def spin_until(predicate, timeout_s: float, what: str) -> None:  # `what`: what did not happen
            spin.spin_until(executor, predicate, timeout_s, f"lotusim run: {what}", check=check)

        fleet = FleetClient(node, executor, check=check)
        try:
            fleet.wait_for_server(60.0, what="lotusim run: the MAS server did not come up")
            spin_until(lambda: len(stats) >= len(workers), 60.0, "the dynamics workers did not report")
            clock.wait_ready(60.0, spin_until, stats)
            result = _spawn(fleet, plan.spawn_items())
            summary["spawned"], summary["spawn_failed"] = result.succeeded, result.failed
            for r in result.results:
                if not r.ok:
                    print(f"lotusim: vessel {r.name}: {r.reason}", flush=True)
            _wait_for_vessel_topics(node, plan, stats, result, spin_until)
            summary["sim_start_s"] = 0.0  # held at 0 until now (run_clock)
            if record:
                extra = ["/lotusim/console/audit"] if console is not None else []  # who commanded what
                recorder = _start_recorder(node, executor, record, plan, lambda: sim_ns[0], extra)
                spin_until(lambda: recorder.matched(node), 30.0, "the recorder did not match its publishers")
                clock.recorder = recorder
            until = f"running for {duration_s:g} s of sim time" if duration_s else "Ctrl-C to stop"
            print(f"lotusim: {result.succeeded} vessels spawned ({result.failed} failed); {until}", flush=True)
            if dyn["mode"] == "lockstep":
                print(run_clock.LOCKSTEP_NOTE, flush=True)
            paced = record and dyn["mode"] == "fast"  # a recorded fast run: in chunks the recorder can take
            with_vessels = {r.worker for r in result.results if r.ok}
            clock.start(duration_s, run_clock.PACED_CHUNK_S if paced else None, with_vessels)
            wall_run = time.monotonic()
            while not STOP.is_set():
                check()
                executor.spin_once(timeout_sec=0.02)
                if clock.poll():
                    break
                if watch is not None:
                    watch.tick(clock.sim_time_s)
                    summary["run_wall_s"] = time.monotonic() - wall_run
                if stats:
                    rtf = clock.sim_time_s / max(1e-9, time.monotonic() - wall_run)
                    vessels = sum(s.vessel_count for s in stats.values())
                    show(
                        f"lotusim: sim {clock.sim_time_s:8.2f} s | RTF {rtf:7.2f} | {vessels} vessels | "
                        f"{len(stats)} worker(s)"
                    )
            if recorder is not None:  # the last outputs (and the sensors derived from them) still on their way
                spin.wait_for(
                    fleet.spin_once,
                    lambda: clock.caught_up() and time.monotonic() > recorder.last_message_wall + 0.3,
                    run_clock.PACED_WAIT_S,
                )
            summary["ok"] = True
        except KeyboardInterrupt:
            summary["ok"] = True
        except (RuntimeError, TimeoutError) as exc:
            print(f"\nlotusim: error: {exc}", file=sys.stderr, flush=True)
        finally:
            print("", flush=True)
            # a clean-up that does not end says where it waits (a CI run once sat here for minutes, silent)
            faulthandler.dump_traceback_later(SHUTDOWN_REPORT_S)
            if recorder is not None:
                recorder.close()
            executor.shutdown()
            node.destroy_node()
            context.try_shutdown()
    wall_s = time.monotonic() - wall_start
    sim_s = clock.sim_time_s
    summary["restarts"] = len(launcher.restarts)
    summary.update(
        vessels=sum(s.vessel_count for s in stats.values()), sim_time_s=round(sim_s, 3), wall_time_s=round(wall_s, 3)
    )
    summary["mean_rtf"] = round(sim_s / wall_s, 3) if wall_s else 0.0
    print(
        f"lotusim: {plan.name}: {summary['vessels']} vessels, {sim_s:.1f} s of sim time in {wall_s:.1f} s of wall "
        f"time (mean RTF {summary['mean_rtf']:.2f} including start-up)",
        flush=True,
    )
    if recorder is not None:
        total = sum(recorder.counts.values())
        print(
            f"lotusim: recording {recorder.path} ({total} messages; open it with `ros2 bag info`, Foxglove or "
            "PlotJuggler)",
            flush=True,
        )
        summary["recording"] = str(recorder.path)
    if watch is not None:
        summary.update(watch.finish(sim_s, summary.get("run_wall_s", 0.0)))
    if plot and trajectories.names():
        extras = watch.plot_extras() if watch is not None else {}
        trajectories.plot(plot, title=f"{plan.name}: {sim_s:.0f} s of sim time", **extras)
        print(f"lotusim: trajectory plot {plot}", flush=True)
        summary["plot"] = plot
    faulthandler.cancel_dump_traceback_later()
    return summary


def _print_remappings(hil_plan) -> None:
    for node, rules in hil_plan.remappings.items():
        print(f"lotusim: {node}: " + ", ".join(f"{a} -> {b}" for a, b in rules), flush=True)
    if hil_plan.dropped_controllers:
        print(f"lotusim: not started (the stack drives): {', '.join(hil_plan.dropped_controllers)}", flush=True)


def _wait_for_vessel_topics(node, plan, stats: dict, result, spin_until) -> None:
    """Hold the sim time at 0 until every worker that got vessels reports them all with their topics made
    (SimStats.vessel_count, endpoints_pending 0; a worker sends its statistics as soon as none is left), then until
    the sensor node has made the sensor topics of the spawned vessels that carry sensors (it makes them when the
    worker's latched roster or a fleet state first lists the vessel). Each topic costs its process about a
    millisecond, and DDS announces every one to every process: with the sim time running meanwhile, the first 10 s
    of wall time of Table V's 187 vessels (1,500 topics at the worker, 1,100 at the sensor node) ran 6.2-6.6 s of sim
    time, the drones' host answered late, and subscribers missed the first messages of topics they had not matched
    yet. After TOPICS_WAIT_S the run starts anyway, with a note."""
    from lotusim_core.sim.run_clock import sensors_missing, sensors_set_up, vessels_with_sensors

    expected = Counter(r.worker for r in result.results if r.ok)
    sensing = vessels_with_sensors(plan) & {r.name for r in result.results if r.ok}
    sensor_node = "sensor_publisher" in plan.node_parameters

    def left() -> int:
        return sum(
            stats[w].endpoints_pending if w in stats and stats[w].vessel_count >= n else n for w, n in expected.items()
        )

    def ready() -> bool:
        return not left() and (not sensing or sensors_set_up(node, sensing, expected=sensor_node))

    if ready():
        return
    start = time.monotonic()
    print("lotusim: waiting for the nodes to make the vessels' topics", flush=True)
    try:
        spin_until(ready, TOPICS_WAIT_S, "")
    except TimeoutError:
        if left():
            what = f"{left()} vessels' topics"
        else:
            missing = sorted(sensors_missing(node, sensing, expected=sensor_node))
            shown = ", ".join(missing[:5]) + (" ..." if len(missing) > 5 else "")
            what = f"the sensor topics of {len(missing)} vessels ({shown})"
        print(f"lotusim: {what} still to make after {TOPICS_WAIT_S:g} s; starting", flush=True)
        return
    print(f"lotusim: the vessels' topics made in {time.monotonic() - start:.1f} s", flush=True)


def _spawn(fleet, items):
    """Create the scenario's vessels in one goal, printing the progress; returns the FleetCommand.Result."""

    def progress(fb) -> None:
        f = fb.feedback
        print(f"\rlotusim: spawning {f.done}/{f.total}", end="", flush=True)

    result = fleet.command(items, timeout_s=600.0, feedback=progress)
    print("", flush=True)
    return result


def _start_recorder(node, executor, path: str, plan, now_ns, extra: list[str] = ()):
    """Record the scenario's `recording.topics` (or the fleet state and stats, plus the odometry of fleets of up
    to 10 vessels), and the `extra` topics; the fleet state is kept at 10 Hz of sim time (one message holds the
    whole fleet)."""
    from lotusim_core.sim.recorder import BagRecorder, resolve_topic_types

    if plan.record is not None:
        topics = list(plan.record.topics)
    else:
        topics = ["/lotusim/fleet_state", "/lotusim/stats"]
        if len(plan.vessels) <= 10:
            topics += [f"/{v.name}/odom" for v in plan.vessels]
    topics += [t for t in extra if t not in topics]
    # sim time is held, the vessels' and sensors' topics made (_wait_for_vessel_topics): wait for the topics until
    # none is new for 5 s (2 s was outlasted under load in CI: a sensor topic reported as not recorded): the
    # others are published by no node
    sure = [t for t in topics if t.endswith("/odom") or t in ("/lotusim/fleet_state", "/lotusim/stats")]  # workers
    found, missing = resolve_topic_types(node, executor, topics, timeout_s=120.0, quiet_s=5.0, required=sure)
    if missing:
        print(f"lotusim: not recorded (no publisher yet): {', '.join(missing)}", flush=True)
    dyn = plan.node_parameters[plan.dynamics_nodes[0]]
    steps = dyn["fleet_state_every"] * max(1, round(0.1 / (dyn["step_s"] * dyn["fleet_state_every"])))
    every_ns = {"/lotusim/fleet_state": steps * round(dyn["step_s"] * 1e9)}  # by sim time: the same in every run
    return BagRecorder(node, path, found, every_ns=every_ns, now_ns=now_ns)
