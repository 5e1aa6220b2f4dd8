"""`lotusim bench <target>`: benchmarks (not tests) that print tables, JSON rows and plots.

Targets are registered by module: each module in BENCH_TARGETS exposes `register_bench(targets)` which adds its
sub-subcommand (e.g. `dynamics`) to the `bench` parser. To add a target, append its module path here."""

from __future__ import annotations

import argparse
import importlib

# target name -> module exposing register_bench(subparsers); the module is imported lazily by the parser build
BENCH_TARGETS: dict[str, str] = {
    "dynamics": "lotusim_core.bench.dynamics",
    "fleet": "lotusim_core.bench.fleet",
}


def register(sub: argparse._SubParsersAction) -> None:
    bench = sub.add_parser("bench", help="benchmarks: tables, --json rows and plots")
    targets = bench.add_subparsers(dest="target", metavar="TARGET")
    targets.required = True
    for module_name in BENCH_TARGETS.values():
        importlib.import_module(module_name).register_bench(targets)
