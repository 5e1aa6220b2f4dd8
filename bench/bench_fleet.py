"""Fleet node benchmark (same as `lotusim bench fleet`): RTF of the dynamics worker and MAS server as separate
processes with a subscriber, vs fleet size, in real-time or fast mode.

python bench/bench_fleet.py --vessels 1,25,100,1000 --mode fast [--json] [--plot bench/results/fleet_fast.png]
"""

from __future__ import annotations

import argparse
import sys

from lotusim_core.bench.fleet import cmd_bench_fleet, register_bench


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench_fleet")
    targets = parser.add_subparsers(dest="target")
    register_bench(targets)
    args = parser.parse_args(["fleet", *(sys.argv[1:] if argv is None else argv)])
    return cmd_bench_fleet(args)


if __name__ == "__main__":
    sys.exit(main())
