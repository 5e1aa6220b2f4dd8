"""Benchmark of the fleet dynamics core: wall time per step vs number of vessels (`lotusim bench dynamics`).

For each fleet size N the fleet is built from one catalogue model (thrusters at 70 % of their maximum, fins
deflected), stepped a few times to warm up, then timed over enough steps to last about `seconds` of wall
time. Reported per row: vessels, model, integrator, step_s (wall seconds per fleet step), us_per_vessel_step,
vessel_steps_per_s and rtf (= dt / step_s, the real-time factor of the whole fleet). The cost of the first
call (numba compilation, or loading the on-disk cache) is measured once per process and reported apart.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from lotusim_core.base.catalogue import load_vehicle
from lotusim_physics.fleet import Fleet


def first_call_seconds(model: str = "remus100", integrator: str = "rk4") -> float:
    """Wall time of the first step of a fresh fleet in this process (JIT compile or cache load)."""
    fleet = _build(1, model, 0.02, integrator)
    t0 = time.perf_counter()
    fleet.step(0.0)
    return time.perf_counter() - t0


def _build(n: int, model: str, dt_s: float, integrator: str, substeps: int = 1) -> Fleet:
    spec = load_vehicle(model)
    fleet = Fleet(dt_s, integrator=integrator, substeps=substeps, capacity=n)
    rng = np.random.default_rng(0)
    z = {"surface": 0.0, "aerial": -20.0}.get(spec.domain, 20.0)  # NED: drones 20 m up, AUVs 20 m down
    cmd = [0.7 * t.command_max for t in spec.thrusters]
    fins = [0.05] * len(spec.fins)
    for i in range(n):
        name = f"v{i}"
        pos = [rng.uniform(-1e3, 1e3), rng.uniform(-1e3, 1e3), z]
        yaw = rng.uniform(-np.pi, np.pi)
        fleet.add(name, spec, pos, [np.cos(yaw / 2), 0.0, 0.0, np.sin(yaw / 2)])
        if cmd:
            fleet.set_thruster_commands(name, cmd)
        if fins:
            fleet.set_fin_commands(name, fins)
    return fleet


def bench_row(n: int, model: str = "remus100", dt_s: float = 0.02, integrator: str = "rk4", seconds: float = 1.0):
    """Time one fleet size; returns the row dict described in the module docstring."""
    fleet = _build(n, model, dt_s, integrator)
    for k in range(3):
        fleet.step(k * dt_s)
    steps = 0
    t_sim = 3 * dt_s
    t0 = time.perf_counter()
    elapsed = 0.0
    batch = max(1, int(2000 / n))
    while elapsed < seconds or steps < 5:
        for _ in range(batch):
            fleet.step(t_sim)
            t_sim += dt_s
        steps += batch
        elapsed = time.perf_counter() - t0
    step_s = elapsed / steps
    assert not fleet.frozen.any(), "benchmark fleet diverged"
    return {
        "vessels": n,
        "model": model,
        "integrator": integrator,
        "dt_s": dt_s,
        "step_s": step_s,
        "us_per_vessel_step": step_s / n * 1e6,
        "vessel_steps_per_s": n / step_s,
        "rtf": dt_s / step_s,
    }


def run(vessels: list[int], model: str, dt_s: float, integrator: str, seconds: float) -> tuple[float, list[dict]]:
    first = first_call_seconds(model, integrator)
    return first, [bench_row(n, model, dt_s, integrator, seconds) for n in vessels]


def plot(rows: list[dict], path: str, title: str) -> None:
    """Per-vessel cost vs N (log-log) with the issue's goals."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = [r["vessels"] for r in rows]
    us = [r["us_per_vessel_step"] for r in rows]
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.loglog(n, us, "o-", label=f"lotusim fleet ({rows[0]['integrator']}, dt {rows[0]['dt_s']} s)")
    ax.axhline(8.0, color="C1", ls="--", label="goal: 1 vessel <= 8 us")
    ax.axhline(1.0, color="C2", ls=":", label="goal: 1,000 vessels >= 1e6 vessel-steps/s")
    ax.axhline(85.0, color="C3", ls="-.", label="PVS REMUS 100 (run on this machine): 85 us")
    ax.set_xlabel("vessels in the fleet")
    ax.set_ylabel("wall time per vessel-step (us)")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def register_bench(targets: argparse._SubParsersAction) -> None:
    """Add `dynamics` to the `lotusim bench` targets."""
    p = targets.add_parser("dynamics", help="fleet dynamics step cost vs number of vessels")
    p.add_argument("--vessels", default="1,10,100,1000,10000", help="comma-separated fleet sizes")
    p.add_argument("--model", default="remus100", help="catalogue model (default remus100)")
    p.add_argument("--dt", type=float, default=0.02, help="step, s")
    p.add_argument("--integrator", default="rk4", choices=["rk4", "euler"])
    p.add_argument("--seconds", type=float, default=1.0, help="wall seconds timed per fleet size")
    p.add_argument("--json", action="store_true", help="one JSON object per row")
    p.add_argument("--plot", metavar="FILE.png", help="write a plot of per-vessel cost vs N")
    p.set_defaults(func=cmd_bench_dynamics)


def cmd_bench_dynamics(args: argparse.Namespace) -> int:
    try:
        vessels = [int(v) for v in str(args.vessels).split(",") if v.strip()]
    except ValueError:
        raise ValueError(f"--vessels: expected comma-separated integers, got {args.vessels!r}") from None
    if not vessels or min(vessels) < 1:
        raise ValueError(f"--vessels: expected positive fleet sizes, got {args.vessels!r}")
    first, rows = run(vessels, args.model, args.dt, args.integrator, args.seconds)
    if args.json:
        for row in rows:
            print(json.dumps({**row, "first_call_s": first}))
    else:
        print(
            f"# first call (numba compile or cache load): {first:.3f} s; model {args.model}, {args.integrator}, "
            f"dt {args.dt} s"
        )
        print(
            f"{'vessels':>8} {'model':>14} {'step_s':>12} {'us_per_vessel_step':>19} {'vessel_steps_per_s':>19} "
            f"{'rtf':>10}"
        )
        for r in rows:
            print(
                f"{r['vessels']:>8} {r['model']:>14} {r['step_s']:>12.3e} {r['us_per_vessel_step']:>19.3f} "
                f"{r['vessel_steps_per_s']:>19.4g} {r['rtf']:>10.4g}"
            )
    if args.plot:
        plot(rows, args.plot, f"lotusim bench dynamics ({args.model})")
    return 0
