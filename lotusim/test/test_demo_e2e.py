"""`lotusim demo` from the entry point (a subprocess, as `make demo` runs it, shortened): the controllers'
progress lines, the final per-controller table with sane figures, the achieved RTF and the plot."""

from __future__ import annotations

import re
import subprocess

import pytest


@pytest.fixture
def run_env(own_domain_env) -> dict:
    return dict(own_domain_env)


def test_demo_prints_controller_progress_summary_and_writes_the_plot(tmp_path, run_env):
    out = tmp_path / "demo"
    command = ["lotusim", "demo", "--duration", "25", "--out", str(out)]
    run = subprocess.run(command, env=run_env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=240)
    text = run.stdout
    assert run.returncode == 0, text[-3000:]
    progress = re.findall(r"lotusim: progress at sim +([\d.]+) s \| (.*)", text)
    assert progress, text[-3000:]
    assert any("USVs 7/7" in p and "AUVs 47/47" in p and "ROVs 45/45" in p for _, p in progress), progress
    # the final table: every controller type with every vessel reporting
    usv = re.search(
        r"waypoint_follower +7/7 +waypoints reached per USV (\d+)-(\d+) .*cross-track\| median ([\d.]+) m", text
    )
    auv = re.search(
        r"depth_heading_autopilot +47/47 +\|depth error\| median ([\d.]+) m max ([\d.]+) m; "
        r"\|heading error\| median ([\d.]+) deg max ([\d.]+) deg",
        text,
    )
    rov = re.search(r"station_keeper +45/45 +off station median ([\d.]+) m max ([\d.]+) m", text)
    assert usv and auv and rov, text[-3000:]
    assert int(usv[2]) <= 3  # 25 s at 1-2 m/s from 40-50 m before the first waypoint: few reached yet
    assert float(usv[3]) < 60.0
    assert float(auv[1]) < 1.0 and float(auv[2]) < 5.0  # LRAUVs start at their 20 m; REMUS diving 5 -> 10 m
    assert float(auv[3]) < 10.0 and float(auv[4]) <= 180.0
    assert float(rov[1]) < 1.0 and float(rov[2]) < 3.0
    rtf = re.search(r"achieved RTF ([\d.]+) over the run .* target 1: (held|FELL SHORT)", text)
    assert rtf and 0.2 < float(rtf[1]) < 4.0, text[-2000:]
    assert (out / "trajectories.png").stat().st_size > 20_000
