"""Cost of evaluating the sea (lotusim_env.waves) at hull sample points, per physics step.

Prints one row per (points, components, dtype): milliseconds per call of the elevation alone (η at N points, the
matmul of the hydrostatics) and of the full kinematics (η, orbital velocity, dynamic pressure), median and best of
the repeats (the machine is shared: the best is the machine's speed, the median what a step may see).
The goal of issue 17: 1,000 surface vessels × 5 points × 128 components within one 0.03 s step; the anchor
measured 7.8 ms (float32) / 26.6 ms (float64) for the η matmul on this kind of machine (docs/performance.md).
Then the physics step itself (lotusim_physics.fleet.Fleet, RK4) of --vessels WAM-Vs spread over 4 km, without a sea
and in LOTUSim's 128-component sea (float32, as the dynamics worker evaluates it): the sea over every hull (6 points
each) sampled before the step, ms per 0.03 s step.
Usage: python bench/bench_waves.py [--points 500,5000] [--components 16,128,1536] [--vessels 1000] [--repeat N]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np

from lotusim_core.base import frames
from lotusim_core.base.catalogue import load_vehicle
from lotusim_env.waves import SeaState, elevation_m, irregular_sea, wave_sample
from lotusim_physics.fleet import Fleet

STEP_S = 0.03  # the physics step of the goal (s)
GOAL_POINTS, GOAL_COMPONENTS = 5000, 128  # 1,000 vessels × 5 hull points, LOTUSim's 8 × 16 sea
ANCHOR_MS = {"float32": 7.8, "float64": 26.6}


def sea_with(components: int) -> SeaState:
    """A JONSWAP sea (Hs 1.5 m, Tp 3 s, γ 1.2, as LOTUSim's ships) of about `components` = 16 per direction."""
    directions = max(1, components // 16)
    return SeaState(1.5, 3.0, 1.2, frequencies=max(1, components // directions), directions=directions)


def hull_points(n: int, rng: np.random.Generator) -> np.ndarray:
    """n points (ENU m) of a fleet spread over 10 km × 10 km, at the waterline to 1 m down."""
    return np.column_stack([rng.uniform(-5e3, 5e3, (n, 2)), -rng.uniform(0.0, 1.0, n)])


def time_ms(call: Callable[[float], object], repeat: int) -> tuple[float, float]:
    """(median, best) milliseconds per call over `repeat` calls at successive step times (after one warm-up)."""
    call(0.0)
    times = []
    for k in range(repeat):
        start = time.perf_counter()
        call(STEP_S * (k + 1))
        times.append(time.perf_counter() - start)
    return 1e3 * float(np.median(times)), 1e3 * min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", default="500,5000", help="comma-separated numbers of points")
    parser.add_argument("--components", default="16,128,1536", help="comma-separated numbers of components")
    parser.add_argument("--vessels", type=int, default=1000, help="WAM-Vs of the physics-step table")
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    sizes = [(int(n), int(m)) for n in args.points.split(",") for m in args.components.split(",")]
    print(f"{'points':>7} {'comps':>6} {'dtype':>8} {'eta ms (median/best)':>22} {'sample ms (median/best)':>25}")
    goal = {}
    for n, m in sizes:
        points = hull_points(n, rng)
        sea64 = irregular_sea(sea_with(m), 1)
        for dtype in ("float32", "float64"):
            sea = sea64.astype(dtype)
            eta = time_ms(lambda t, s=sea, p=points: elevation_m(s, t, p), args.repeat)
            full = time_ms(lambda t, s=sea, p=points: wave_sample(s, t, p), args.repeat)
            print(f"{n:>7} {sea.size:>6} {dtype:>8} {eta[0]:>11.2f} /{eta[1]:>8.2f} {full[0]:>13.2f} /{full[1]:>9.2f}")
            if (n, sea.size) == (GOAL_POINTS, GOAL_COMPONENTS):
                goal[dtype] = (eta, full)
    for dtype, (eta, full) in goal.items():
        print(
            f"goal 1000 vessels x 5 points x 128 components, {dtype}: eta {eta[0]:.2f} ms, full kinematics "
            f"{full[0]:.2f} ms (median) per {1e3 * STEP_S:.0f} ms step; anchor {ANCHOR_MS[dtype]} ms (eta)"
        )
    fleet_table(args.vessels, args.repeat, rng)


def fleet_table(vessels: int, repeat: int, rng: np.random.Generator) -> None:
    """ms per physics step of `vessels` WAM-Vs, flat sea and LOTUSim's 8 x 16 sea (float32)."""
    sea = irregular_sea(sea_with(GOAL_COMPONENTS), 1).astype(np.float32)
    fleet = Fleet(STEP_S)
    spec = load_vehicle("wamv")
    for i in range(vessels):
        pose = frames.quat_from_euler_zyx(0.0, 0.0, rng.uniform(0.0, 2.0 * np.pi))
        fleet.add(f"wamv_{i}", spec, [*rng.uniform(-2e3, 2e3, 2), 0.0], pose)
    print(f"{'vessels':>7} {'sea':>22} {'step ms (median/best)':>23}")
    for label, waves in (("flat", None), (f"{sea.size} components f32", sea)):
        step = time_ms(lambda t, w=waves: fleet.step(t, steps=1, waves=w), repeat)
        print(f"{vessels:>7} {label:>22} {step[0]:>12.2f} /{step[1]:>8.2f}")


if __name__ == "__main__":
    main()
