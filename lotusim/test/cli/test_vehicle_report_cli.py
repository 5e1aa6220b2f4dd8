"""`lotusim vehicle-report` from the console script, as a user runs it: the report, its JSON and one PNG per
manoeuvre are written; the Markdown table carries the numbers a direct call of the manoeuvres gives, beside the
published figures; an unknown model is one error line listing the known models (exit code 2)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lotusim_core.base.catalogue import list_models, load_vehicle
from lotusim_physics import manoeuvres as M
from lotusim_physics import vehicle_validation as V


def lotusim_command() -> list[str]:
    """The installed console script (beside this interpreter), else the module entry point."""
    script = Path(sys.executable).with_name("lotusim")
    if script.is_file():
        return [str(script)]
    found = shutil.which("lotusim")
    return [found] if found else [sys.executable, "-m", "lotusim_core.cli"]


def test_vehicle_report_writes_plots_and_a_table_matching_a_direct_run(tmp_path):
    out = tmp_path / "report"
    proc = subprocess.run(
        [*lotusim_command(), "vehicle-report", "kayak_usv", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert proc.returncode == 0, proc.stderr
    assert "[1/" in proc.stderr and "wrote" in proc.stderr  # progress lines
    plan = V.plan_for(load_vehicle("kayak_usv"))
    for name in ("speed", "turning", "zigzag", "steps"):
        png = out / f"kayak_usv_{name}.png"
        assert png.is_file() and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert png.stat().st_size < 150_000
    report = (out / "report.md").read_text(encoding="utf-8")
    data = json.loads((out / "report.json").read_text(encoding="utf-8"))
    # the same manoeuvre called directly gives the same numbers (the runs are deterministic)
    direct = M.speed_curve(load_vehicle("kayak_usv"), list(plan.speed_levels), plan.speed_s).row("100 %")
    ours = data["manoeuvres"]["speed"]["rows"]["100 %"]["u_mps"]
    assert ours == pytest.approx(direct.values["u_mps"], rel=1e-12)
    published = {(p["row"], p["quantity"]): p for p in data["published"]}
    assert published[("100 %", "u_mps")]["published"] == 1.68
    assert published[("100 %", "u_mps")]["ours"] == pytest.approx(ours, rel=1e-12)
    # the Markdown row: published value, source key, ours (3 digits), error %
    row = next(line for line in report.splitlines() if line.startswith("| speed | u_mps | 100 % |"))
    cells = [c.strip() for c in re.split(r"(?<!\\)\|", row.strip("|"))]  # split at unescaped pipes
    assert cells[3] == "1.68" and "[SaldarriagaMesa2025]" in cells[4]
    assert float(cells[6]) == pytest.approx(ours, rel=5e-3)
    assert float(cells[7]) == pytest.approx(100.0 * (ours - 1.68) / 1.68, abs=0.051)
    assert "![turning](kayak_usv_turning.png)" in report


def test_vehicle_report_unknown_model_lists_the_known_ones(tmp_path):
    proc = subprocess.run(
        [*lotusim_command(), "vehicle-report", "no_such_boat", "--out", str(tmp_path / "x")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "unknown model 'no_such_boat'" in lines[0]
    assert all(name in lines[0] for name in list_models())
    assert not (tmp_path / "x").exists()


def test_vehicle_report_of_an_aerial_model_says_it_runs_marine_manoeuvres(tmp_path):
    proc = subprocess.run(
        [*lotusim_command(), "vehicle-report", "x500", "--out", str(tmp_path / "x")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert "x500 is an aerial vehicle" in proc.stderr and not (tmp_path / "x").exists()
