"""The `lotusim` command table: each command's module is the one that registers it, and a command imports only
its own module (the fleet commands start without the physics and SciPy's
linear algebra, signal, interpolation and statistics)."""

from __future__ import annotations

import argparse
import importlib
import subprocess
import sys

from lotusim_core import cli


def _registered_by(module_name: str) -> set[str]:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers()
    importlib.import_module(module_name).register(sub)
    return set(sub.choices)


def test_every_command_maps_to_the_module_that_registers_it():
    registered = {name: module for module in cli.SUBCOMMANDS for name in _registered_by(module)}
    assert registered == cli.COMMANDS


def test_a_fleet_command_imports_neither_the_physics_nor_scipys_heavy_modules():
    probe = (
        "import sys\n"
        "from lotusim_core import cli\n"
        "try:\n"
        "    cli.main(['list', '--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "heavy = ('lotusim_physics', 'scipy.linalg', 'scipy.signal', 'scipy.interpolate', 'scipy.stats')\n"
        "print(sorted(m for m in sys.modules if m.startswith(heavy)))\n"
    )
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "--models" in proc.stdout  # the list command's own help
    assert proc.stdout.strip().splitlines()[-1] == "[]", proc.stdout[-2000:]


def test_help_lists_every_command():
    proc = subprocess.run(
        [sys.executable, "-c", "from lotusim_core import cli; cli.main(['--help'])"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    for name in cli.COMMANDS:
        assert name in proc.stdout, proc.stdout
