"""Cost of the collisions (lotusim_physics.collisions) per physics step, for fleets of 10 to 1,000 vessels.

The scene: the real coast off Brest (lotusim/config/world/brest_coast.geojson, OpenStreetMap land, thousands of
edges), 50 objects (buoys, mines, rocks) and a flat seabed at 30 m; the fleet (kayak USVs, WAM-Vs, REMUS 100s at
5 m) spread at random over the water of a 4 km x 4 km square off the Crozon shore, one vessel in ten placed
against another (so that the narrow phase and the response have work). Prints, per fleet size, milliseconds per
step (median and best of the repeats; the machine is shared: the best is its speed, the median what a step may
see) of:
- check: a whole check after a step (every detector, the response and the events: Collider.resolve);
- near: the look-ahead that lets a batch of steps run in one compiled call (Collider.near);
- step: Fleet.step (RK4, 0.03 s) without and with collisions, and the share the collisions add.
Usage: python bench/bench_collisions.py [--vessels 10,100,1000] [--repeat N]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from lotusim_core.base import frames
from lotusim_core.base.catalogue import load_vehicle
from lotusim_env.environment import build_environment
from lotusim_env.world import land_contains
from lotusim_physics.collisions import Collider, obstacles_of
from lotusim_physics.fleet import Fleet

STEP_S = 0.03
WORLD_DIR = Path(__file__).resolve().parents[1] / "lotusim" / "config" / "world"
MODELS = ("kayak_usv", "wamv", "remus100")
AREA = ((-2500.0, 1500.0), (-3500.0, 500.0))  # x east, y north (m ENU) around the Goulet's south shore


def scene(objects: int, rng: np.random.Generator):
    """The environment: Brest's coast, `objects` objects in the water, a flat seabed at 30 m."""
    config = {
        "origin": {"latitude_deg": 48.3, "longitude_deg": -4.6},
        "bathymetry": {"model": "flat", "depth_m": 30.0},
        "world": {"coast": {"file": str(WORLD_DIR / "brest_coast.geojson")}},
    }
    land = build_environment(config).world
    xy = water_points(land, objects, rng)
    kinds = ("buoy", "mine", "rock")
    config["world"]["objects"] = [
        {"name": f"o{i}", "kind": kinds[i % 3], "position": [float(x), float(y), -4.0 if i % 3 == 1 else 0.0]}
        for i, (x, y) in enumerate(xy)
    ]
    return build_environment(config)


def water_points(world, n: int, rng: np.random.Generator) -> np.ndarray:
    """n points (ENU m) in the water of AREA."""
    out = np.zeros((0, 2))
    while len(out) < n:
        xy = np.column_stack([rng.uniform(*AREA[0], 4 * n), rng.uniform(*AREA[1], 4 * n)])
        out = np.vstack([out, xy[~land_contains(world, xy)]])
    return out[:n]


def fleet_of(n: int, environment, rng: np.random.Generator, collisions: bool) -> Fleet:
    """n vessels in the water; every tenth 1 m ahead of the one before it (in contact)."""
    fleet = Fleet(STEP_S)
    if collisions:
        fleet.enable_collisions(obstacles_of(environment))
    xy = water_points(environment.world, n, np.random.default_rng(rng.integers(1 << 31)))
    specs = {m: load_vehicle(m) for m in MODELS}
    for i in range(n):
        model = MODELS[i % 3]
        if i % 10 == 9:
            xy[i] = xy[i - 1] + [0.0, 1.0]
        heading = 0.0 if i % 10 in (8, 9) else float(rng.uniform(0.0, 2.0 * np.pi))
        z = 5.0 if model == "remus100" else 0.0
        position_ned = [xy[i, 1], xy[i, 0], z]
        fleet.add(
            f"v{i}", specs[model], position_ned, frames.quat_from_euler_zyx(0.0, 0.0, heading), [1.0, 0, 0, 0, 0, 0]
        )
    return fleet


def time_ms(call: Callable[[int], object], repeat: int) -> tuple[float, float]:
    """(median, best) ms per call over `repeat` calls (after one warm-up)."""
    call(0)
    times = []
    for k in range(repeat):
        start = time.perf_counter()
        call(k + 1)
        times.append(time.perf_counter() - start)
    return 1e3 * float(np.median(times)), 1e3 * min(times)


def row(n: int, environment, repeat: int) -> str:
    """The table's row of a fleet of n vessels."""
    plain = fleet_of(n, environment, np.random.default_rng(1), collisions=False)
    fleet = fleet_of(n, environment, np.random.default_rng(1), collisions=True)
    fleet.step(0.0)
    collider: Collider = fleet.collider
    state = fleet._contact_state()  # noqa: SLF001 (the arrays a step checks)
    contacts = len(collider.contact_rows)
    check = time_ms(lambda k: collider.resolve(state, fleet.names, k * STEP_S), repeat)
    near = time_ms(lambda k: collider.near(state, 3 * STEP_S), repeat)
    step0 = time_ms(lambda k: plain.step(k * STEP_S), repeat)
    step1 = time_ms(lambda k: fleet.step(k * STEP_S), repeat)
    added = 100.0 * (step1[0] - step0[0]) / step0[0]
    return (
        f"{n:>7} {contacts:>8} {check[0]:>7.2f} /{check[1]:>7.2f} {near[0]:>7.2f} /{near[1]:>7.2f} "
        f"{step0[0]:>8.2f} /{step0[1]:>8.2f} {step1[0]:>7.2f} /{step1[1]:>7.2f} {added:>5.0f}%"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vessels", default="10,100,1000", help="comma-separated fleet sizes")
    parser.add_argument("--objects", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    environment = scene(args.objects, rng)
    edges = len(environment.world.segments)
    print(f"scene: Brest coast ({edges} edges), {args.objects} objects, flat seabed 30 m; step {STEP_S} s, RK4")
    print(f"{'vessels':>7} {'contacts':>8} {'check ms':>16} {'near ms':>16} {'step ms, no coll.':>18} "
          f"{'step ms, coll.':>16} {'added':>6}")  # fmt: skip
    for n in (int(v) for v in args.vessels.split(",")):
        print(row(n, environment, args.repeat))
    print("collision check per step: the columns above (ms, median / best)")


if __name__ == "__main__":
    main()
