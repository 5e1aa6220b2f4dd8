"""Every script under bench/ runs (small sizes): a benchmark that nothing runs rots (bench_sensors.py once failed
on a module that had moved). The figures themselves are for docs/performance.md, not asserted here."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

# DDS participants; serial: a large fleet, a long run or the whole machine (run one at a time, Makefile)
pytestmark = [pytest.mark.ros, pytest.mark.serial]
pytest.importorskip("rclpy")

BENCH = Path(__file__).resolve().parents[3] / "bench"
# script -> (small arguments, a line its output must hold); every script of bench/ must be listed
SMOKE = {
    "bench_console.py": (
        ["--scenario", "single_auv", "--clients", "1", "--seconds", "1", "--no-baseline"],
        "console cost per update",
    ),
    "bench_collisions.py": (["--vessels", "10", "--objects", "3", "--repeat", "2"], "collision check per step"),
    "bench_dynamics.py": (["--vessels", "1,10"], "vessels"),
    "bench_environment.py": (["--repeat", "3"], "us"),
    "bench_fleet.py": (["--vessels", "1", "--mode", "fast"], "RTF"),
    "bench_perception.py": (["--auvs", "2", "--ships", "2", "--repeat", "1"], "cores for goal"),
    "bench_lidar.py": (["--vessels", "2", "--vessels-3d", "1", "--repeat", "1", "--node-vessels", "2"], "RTF"),
    "bench_sensors.py": (["--sizes", "2"], "largest measured fleet in real time"),
    "bench_waves.py": (["--points", "10", "--components", "16", "--vessels", "3", "--repeat", "2"], "step ms"),
    "bench_worker.py": (["--vessels", "1", "--repeats", "2"], "vessels"),
}


def test_every_bench_script_has_a_smoke_run():
    assert sorted(p.name for p in BENCH.glob("bench_*.py")) == sorted(SMOKE)


@pytest.mark.parametrize("script", sorted(SMOKE))
def test_bench_script_runs(script, tmp_path, own_domain_env):
    args, expected = SMOKE[script]
    if script == "bench_sensors.py":
        args = [*args, "--out", str(tmp_path)]
    proc = subprocess.run(
        [sys.executable, str(BENCH / script), *args],
        env=dict(own_domain_env, MPLBACKEND="Agg"),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=240,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    assert expected in proc.stdout, proc.stdout[-2000:]
