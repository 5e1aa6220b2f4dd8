"""Cost of evaluating the environment models (lotusim_env) per call, for the node hot paths.

Prints one row per model and batch size: microseconds per `velocity_enu(t, points)` call and per point.
Usage: python bench/bench_environment.py [--repeat N]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from lotusim_env.environment import build_environment

SITE = {"origin": {"latitude_deg": 47.0, "longitude_deg": -6.1}, "wind": {"speed_mps": 10.0, "from_deg": 250.0}}


def grid_csv(folder: Path) -> Path:
    """A Copernicus-sized current grid (9 times x 35 depths x 5 lat x 4 lon) in x/y metres."""
    t, d = np.arange(9) * 21600.0, np.geomspace(0.5, 900.0, 35)
    y, x = np.linspace(-20e3, 20e3, 5), np.linspace(-15e3, 15e3, 4)
    tt, dd, yy, xx = (a.ravel() for a in np.meshgrid(t, d, y, x, indexing="ij"))
    rows = np.column_stack([tt, dd, yy, xx, 0.1 + 0 * tt, -0.05 + 1e-4 * dd])
    path = folder / "grid.csv"
    np.savetxt(path, rows, delimiter=",", header="time_s,depth_m,y_m,x_m,uo_mps,vo_mps", comments="")
    return path


def models(folder: Path) -> dict[str, dict]:
    gm = {
        "model": "gauss_markov",
        "east": {"mean": 0.1, "mu": 0.01, "stationary_std": 0.05},
        "north": {"mean": 0.0, "mu": 0.01, "stationary_std": 0.05},
    }
    return {
        "constant": {"current": {"model": "constant", "velocity_enu": [0.1, 0.0, 0.0]}},
        "ekman": {**SITE, "current": {"model": "ekman", "geostrophic_enu": [0.05, 0.0]}},
        "gauss_markov": {**SITE, "current": gm},
        "ekman+gauss_markov": {**SITE, "current": {"model": "sum", "terms": [{"model": "ekman"}, gm]}},
        "gridded (x/y)": {"current": {"model": "gridded", "file": str(grid_csv(folder))}},
        "wind (gusts)": {"wind": {"speed_mps": 10.0, "gust_std_mps": 2.0}},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as tmp:
        print(f"{'model':<20} {'points':>7} {'us/call':>10} {'ns/point':>10}")
        for name, config in models(Path(tmp)).items():
            env = build_environment(config)
            field = env.wind if name.startswith("wind") else env.current
            for n in (1, 100, 10_000):
                pts = np.column_stack([rng.uniform(-1e4, 1e4, (n, 2)), -rng.uniform(0, 500, n)])
                field.velocity_enu(0.0, pts)  # warm caches (first Gauss-Markov block)
                start = time.perf_counter()
                for k in range(args.repeat):
                    field.velocity_enu(0.05 * k, pts)
                per_call = (time.perf_counter() - start) / args.repeat
                print(f"{name:<20} {n:>7} {per_call * 1e6:>10.1f} {per_call / n * 1e9:>10.1f}")


if __name__ == "__main__":
    main()
