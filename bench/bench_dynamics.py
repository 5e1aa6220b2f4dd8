"""Fleet dynamics benchmark (same as `lotusim bench dynamics`): per-vessel step cost vs N.

python bench/bench_dynamics.py --vessels 1,10,100,1000,10000 [--json] [--plot bench/dynamics.png]
"""

from __future__ import annotations

import argparse
import sys

from lotusim_core.bench.dynamics import cmd_bench_dynamics, register_bench


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench_dynamics")
    targets = parser.add_subparsers(dest="target")
    register_bench(targets)
    args = parser.parse_args(["dynamics", *(sys.argv[1:] if argv is None else argv)])
    return cmd_bench_dynamics(args)


if __name__ == "__main__":
    sys.exit(main())
