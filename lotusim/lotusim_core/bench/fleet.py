"""`lotusim bench fleet`: the simulation nodes as a user runs them, measured.

For each fleet size the benchmark starts a dynamics worker and a mas_server as separate processes (the console
scripts), spawns N vessels through the FleetCommand action, subscribes to /lotusim/fleet_state and
/lotusim/stats from this process like any user node, and measures over a window of wall time:
- the achieved real-time factor (sim time advanced / wall time, from the worker's stats and from the stamps of
  the fleet states received here),
- the worker's mean and max step compute time (physics + publishing),
- the worker process's CPU use (from /proc, user + system),
- the fleet states received per second by this subscriber.
Settings of the project's speed goals (docs/performance.md): 0.03 s step, /clock every step; realtime mode:
fleet_state every step, odometry at 10 Hz per vessel; fast mode: fleet_state and odometry at 10 Hz of sim time;
/tf with the odometry (the worker's default) unless --no-tf.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from lotusim_core.base.catalogue import load_vehicle
from lotusim_core.sim.process_launcher import die_with_parent

# Anchors ([Buche2025] Table V and the LOTUSim multi-agent benchmark data [LOTUSimBenchmark2026]):
# accelerated-time RTF vs agents, and the real-time fleet sizes that keep a 30 ms physics step.
ANCHORS_FAST_RTF = {
    "LOTUSim LRAUV": {1: 26.84, 5: 10.72, 10: 5.59, 25: 2.52},
    "LRAUV Sim (gz)": {1: 47, 2: 34, 5: 16, 10: 9.09, 20: 4.5, 25: 3.6},
    "UUV Simulator BlueROV2": {1: 143.53, 2: 86.11, 5: 37.97, 10: 20.49, 20: 9.6, 25: 8.02},
}
GOALS_FAST_RTF = {1: 1000.0, 25: 100.0}  # speed goals (docs/performance.md): one LRAUV, 25 LRAUVs, fast mode
ANCHORS_REALTIME = (
    "LOTUSim keeps a 30 ms step for ~55 LRAUVs (no GUI/sensors) and 200 ms for ~750 [LOTUSimBenchmark2026]"
)
ANCHORS_REALTIME_STEP_MS = {55: 30.0, 750: 200.0}  # the same: LOTUSim's physics step (ms) at N LRAUVs


@dataclass
class FleetBenchRow:
    vessels: int
    mode: str
    model: str
    step_s: float
    rtf: float
    rtf_subscriber: float
    step_compute_ms: float
    step_compute_max_ms: float
    worker_cpu_percent: float
    fleet_states_per_s: float
    spawn_s: float
    tf: bool = True


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _start(args: list[str], env: dict, log: Path) -> subprocess.Popen:
    """Start `python -m args...` with its output in `log` (a pipe nobody reads would block a chatty node)."""
    with log.open("w") as out:
        return subprocess.Popen(
            [sys.executable, "-m", *args],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=die_with_parent(),
        )


def _tail(log: Path, lines: int = 15) -> str:
    text = log.read_text(errors="replace").splitlines()[-lines:] if log.exists() else []
    return "\n".join(f"  {log.stem}: {line}" for line in text)


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def measure(
    vessels: int, mode: str, model: str = "lrauv", step_s: float = 0.03, window_s: float = 5.0, tf: bool = True
) -> FleetBenchRow:
    """Run one fleet size and return its measured row (`tf`: the worker publishes /tf, its default)."""
    import rclpy

    from lotusim_core.ros import spin
    from lotusim_core.ros.fleet_client import FleetClient
    from lotusim_core.ros.node_runner import make_executor
    from lotusim_interfaces.msg import FleetState, SimStats, VesselDescription

    # realtime: the fleet state after every step; fast: at 10 Hz of sim time (both: odometry at 10 Hz)
    state_rate_hz = 0.0 if mode in ("realtime", "scaled") else 10.0
    env = dict(os.environ, ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST")
    logs = Path(tempfile.mkdtemp(prefix="lotusim-bench-fleet-"))
    worker_log, mas_log = logs / "dynamics.log", logs / "mas_server.log"
    worker = _start(
        [
            "lotusim_physics.dynamics_node",
            "--ros-args",
            "-p",
            f"mode:={mode}",
            "-p",
            f"step_s:={step_s}",
            "-p",
            "fleet_state_every:=1",
            "-p",
            f"fleet_state_rate_hz:={state_rate_hz}",
            "-p",
            "odom_rate_hz:=10.0",
            "-p",
            "stats_rate_hz:=2.0",
            "-p",
            f"publish_tf:={str(tf).lower()}",
        ],
        env,
        worker_log,
    )
    mas = _start(["lotusim_core.sim.mas_server"], env, mas_log)
    context = rclpy.Context()
    rclpy.init(context=context)
    node = rclpy.create_node("lotusim_bench_fleet", context=context)
    executor = make_executor(context)
    executor.add_node(node)
    stats: list[tuple[float, SimStats]] = []
    states: list[tuple[float, float]] = []
    node.create_subscription(SimStats, "/lotusim/stats", lambda m: stats.append((time.monotonic(), m)), 10)
    node.create_subscription(
        FleetState,
        "/lotusim/fleet_state",
        lambda m: states.append((time.monotonic(), m.header.stamp.sec + m.header.stamp.nanosec * 1e-9)),
        10,
    )

    def failure(what: str) -> RuntimeError:
        """The error of a failed run, with the nodes' state and last output (their logs are kept)."""
        return RuntimeError(
            f"bench fleet: {what} (worker/mas_server running: {worker.poll() is None}/{mas.poll() is None}); "
            f"their last output ({logs}):\n{_tail(worker_log)}\n{_tail(mas_log)}"
        )

    def check() -> None:
        if worker.poll() is not None or mas.poll() is not None:
            raise failure("a node exited")

    def spin_until(predicate, timeout_s: float, what: str) -> None:
        try:
            spin.spin_until(executor, predicate, timeout_s, what, check=check)
        except TimeoutError:
            raise failure(f"{what} did not happen") from None

    fleet = FleetClient(node, executor, check=check)
    try:
        spin_until(fleet.server_is_ready, 60.0, "the fleet_command action server appearing")
        fleet.spin_for(1.0)  # let the server match our response readers (DDS discovery race)
        spin_until(lambda: bool(stats), 30.0, "the worker's first stats")
        fleet_vessels = []
        up_m = 20.0 if load_vehicle(model).domain == "aerial" else -20.0  # drones in the air, the others in the sea
        for k in range(vessels):
            vessel = VesselDescription(name=f"{model}_{k:05d}", model=model, pose_frame=VesselDescription.POSE_ENU)
            vessel.pose.position.x, vessel.pose.position.y, vessel.pose.position.z = (
                float(5 * (k % 100)),
                float(5 * (k // 100)),
                up_m,
            )
            fleet_vessels.append(vessel)
        for _attempt in range(20):  # the mas_server finds the worker from its stats (about 1 s after start)
            start = time.monotonic()
            outcome = fleet.create(fleet_vessels, timeout_s=300.0)
            spawn_s = time.monotonic() - start
            if outcome.succeeded == vessels or outcome.results[0].code != outcome.results[0].NO_WORKER:
                break
            fleet.spin_for(0.5)  # waiting for the worker
        if outcome.succeeded != vessels:
            reasons = sorted({r.reason for r in outcome.results if not r.ok})
            raise RuntimeError(f"bench fleet: only {outcome.succeeded} of {vessels} vessels spawned: {reasons}")
        # the vessels' topics are created in the background, in creation order: the last vessel's odometry
        # publisher means all are there (the window must not measure their creation)
        last_odom = f"/{fleet_vessels[-1].name}/odom"
        spin_until(lambda: node.count_publishers(last_odom) > 0, 120.0, f"{last_odom} appearing")
        fleet.spin_for(2.0)  # settle
        stats.clear()
        states.clear()
        cpu0, wall0 = _cpu_seconds(worker.pid), time.monotonic()
        fleet.spin_for(window_s)  # the measurement window
        cpu = (_cpu_seconds(worker.pid) - cpu0) / (time.monotonic() - wall0)
    finally:
        executor.shutdown()
        node.destroy_node()
        context.try_shutdown()
        _stop(mas)
        _stop(worker)
    shutil.rmtree(logs, ignore_errors=True)  # kept when the run failed: the error names the directory
    full = [m for _, m in stats if m.vessel_count == vessels] or [m for _, m in stats]
    first, last = full[0], full[-1]
    rtf = (last.sim_time_s - first.sim_time_s) / max(1e-9, last.wall_time_s - first.wall_time_s)
    rtf_sub = (states[-1][1] - states[0][1]) / max(1e-9, states[-1][0] - states[0][0]) if len(states) > 1 else 0.0
    return FleetBenchRow(
        vessels=vessels,
        mode=mode,
        model=model,
        step_s=step_s,
        rtf=round(rtf, 3),
        rtf_subscriber=round(rtf_sub, 3),
        step_compute_ms=round(1e3 * sum(m.step_compute_time_s for m in full) / len(full), 3),
        step_compute_max_ms=round(1e3 * max(m.step_compute_time_max_s for m in full), 3),
        worker_cpu_percent=round(100 * cpu, 1),
        fleet_states_per_s=round(len(states) / window_s, 1),
        spawn_s=round(spawn_s, 3),
        tf=tf,
    )


def print_table(rows: list[FleetBenchRow]) -> None:
    header = (
        f"{'vessels':>8} {'mode':>9} {'RTF':>9} {'RTF(sub)':>9} {'step ms':>8} {'max ms':>8} {'CPU %':>6} "
        f"{'states/s':>9} {'spawn s':>8} {'tf':>3}"
    )
    print(header)
    for r in rows:
        print(
            f"{r.vessels:>8} {r.mode:>9} {r.rtf:>9.2f} {r.rtf_subscriber:>9.2f} {r.step_compute_ms:>8.3f} "
            f"{r.step_compute_max_ms:>8.2f} {r.worker_cpu_percent:>6.1f} {r.fleet_states_per_s:>9.1f} "
            f"{r.spawn_s:>8.3f} {'on' if r.tf else 'off':>3}"
        )


def plot(rows: list[FleetBenchRow], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if all(r.mode == "realtime" for r in rows):
        fig, (ax, ax_step) = plt.subplots(1, 2, figsize=(10, 4.5))
        _plot_step_budget(ax_step, rows)
    else:
        fig, ax = plt.subplots(figsize=(7, 4.5))
    for mode in sorted({r.mode for r in rows}):
        sel = [r for r in rows if r.mode == mode]
        ax.plot([r.vessels for r in sel], [r.rtf for r in sel], "o-", label=f"lotusim ({mode})")
    if any(r.mode == "fast" for r in rows):
        for name, points in ANCHORS_FAST_RTF.items():
            ax.plot(list(points), list(points.values()), "x--", alpha=0.7, label=name)
        goals = GOALS_FAST_RTF
        ax.plot(list(goals), list(goals.values()), "k_", markersize=18, mew=2, label="goal: RTF at least")
        ax.set_yscale("log")
    else:
        ax.axhline(0.99, color="grey", linestyle=":", label="goal: RTF >= 0.99")
        ax.set_ylim(0.9, 1.02)
    ax.set_xscale("log")
    ax.set_xlabel("vessels")
    ax.set_ylabel("real-time factor")
    ax.set_title("Fleet RTF, 0.03 s step, /clock every step\n(lotusim: separate processes + subscriber)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"plot written to {path}")


def _plot_step_budget(ax, rows: list[FleetBenchRow]) -> None:
    """Real time: the worker's compute per 30 ms step (mean and max) against the step, and LOTUSim's step."""
    n = [r.vessels for r in rows]
    ax.plot(n, [r.step_compute_ms for r in rows], "o-", label="lotusim: compute per step (mean)")
    ax.plot(n, [r.step_compute_max_ms for r in rows], "v:", label="lotusim: longest step in the window")
    ax.axhline(1e3 * rows[0].step_s, color="grey", linestyle="--", label=f"the {1e3 * rows[0].step_s:g} ms step")
    anchors = ANCHORS_REALTIME_STEP_MS
    ax.plot(
        list(anchors), list(anchors.values()), "x", markersize=9, label="LOTUSim physics step [LOTUSimBenchmark2026]"
    )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("vessels")
    ax.set_ylabel("ms")
    ax.set_title("Real time: compute per step vs the step")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)


def register_bench(targets: argparse._SubParsersAction) -> None:
    p = targets.add_parser("fleet", help="RTF of the nodes as separate processes, vs fleet size")
    p.add_argument("--vessels", default="1,25,100,1000", help="comma-separated fleet sizes")
    p.add_argument("--mode", default="fast", choices=["realtime", "fast"], help="dynamics mode")
    p.add_argument("--model", default="lrauv", help="catalogue model to spawn")
    p.add_argument("--window", type=float, default=5.0, help="measurement window, wall seconds")
    p.add_argument("--json", action="store_true", help="one JSON object per row instead of a table")
    p.add_argument(
        "--no-tf",
        action="store_true",
        help="worker without /tf (publish_tf false): the outputs of docs/performance.md's speed goals",
    )
    p.add_argument("--plot", default="", help="write an RTF vs vessels plot (PNG) with the anchors")
    p.set_defaults(func=cmd_bench_fleet)


def cmd_bench_fleet(args: argparse.Namespace) -> int:
    sizes = [int(v) for v in args.vessels.split(",") if v.strip()]
    if not sizes or min(sizes) < 1:
        raise ValueError(f"--vessels: expected positive integers, got {args.vessels!r}")
    rows = []
    for n in sizes:
        if not args.json:
            print(f"bench fleet: {n} x {args.model}, mode {args.mode} ...", flush=True)
        row = measure(n, args.mode, args.model, window_s=args.window, tf=not args.no_tf)
        rows.append(row)
        if args.json:
            print(json.dumps(asdict(row)), flush=True)
    if not args.json:
        print_table(rows)
        print(f"anchors: {ANCHORS_REALTIME}; fast-mode RTF anchors in the plot")
    if args.plot:
        plot(rows, args.plot)
    return 0
