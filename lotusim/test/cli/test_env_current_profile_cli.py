"""`lotusim current-profile`: the printed water column is the Ekman spiral (the textbook case of [Stewart2008],
docs/environment.md), the wind convention is stated, --scenario reads the environment section, --plot writes a
PNG, bad input is one error line (exit code 2)."""

from __future__ import annotations

import io

import numpy as np
import pytest

from lotusim_core.cli import main


def run(argv, capsys):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def parse_csv(text):
    data = [line for line in text.splitlines() if line and not line.startswith("#")]
    assert data[0] == "depth_m,east_mps,north_mps,up_mps"
    return np.loadtxt(io.StringIO("\n".join(data[1:])), delimiter=",", ndmin=2)


def test_ekman_column_csv_matches_textbook_numbers(capsys):
    code, out, _ = run(
        [
            "current-profile",
            "--model",
            "ekman",
            "--lat",
            "47",
            "--wind-speed",
            "10",
            "--wind-dir",
            "0",
            "--depths",
            "0:200:1",
            "--format",
            "csv",
        ],
        capsys,
    )
    assert code == 0
    assert "from 0 deg (meteorological: direction the wind blows FROM, clockwise from true north)" in out
    assert "depth_m,east_mps,north_mps,up_mps" in out
    table = parse_csv(out)
    assert table.shape == (201, 4)
    depth, east, north = table[:, 0], table[:, 1], table[:, 2]
    assert np.hypot(east[0], north[0]) == pytest.approx(0.18381, rel=1e-4)  # V0
    # northerly wind blows towards the south (bearing 180°): surface current towards 225° (45° to the right)
    assert np.degrees(np.arctan2(east[0], north[0])) % 360 == pytest.approx(225.0, abs=1e-4)
    d43 = np.argmin(np.abs(depth - 43.0))
    assert np.hypot(east[d43], north[d43]) / np.hypot(east[0], north[0]) == pytest.approx(
        np.exp(-np.pi * 43.0 / 43.02), rel=1e-4
    )


def test_scenario_file_and_plot(tmp_path, capsys):
    scenario = tmp_path / "s.yaml"
    scenario.write_text(  # scenario format (lotusim_core.sim.scenario): the site lives under world:
        "name: test\nworld:\n  origin: {latitude_deg: -40.0, longitude_deg: 10.0}\n"
        "  bathymetry: {model: flat, depth_m: 60.0}\n"
        "environment:\n  wind: {speed_mps: 8.0, from_deg: 270.0}\n  current: {model: ekman}\n"
        "vessels:\n  - {name: auv_1, model: remus100, pose: {position: [0.0, 0.0, -1.0], yaw_deg: 0.0}}\n"
    )
    png = tmp_path / "profile.png"
    code, out, _ = run(
        ["current-profile", "--scenario", str(scenario), "--depths", "0:80:5", "--plot", str(png)], capsys
    )
    assert code == 0
    assert png.stat().st_size > 10_000 and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    rows = [line.split() for line in out.splitlines() if line and not line.startswith("#")][1:]
    values = np.array(rows, dtype=float)
    assert np.all(values[values[:, 0] >= 60.0, 1:4] == 0.0)  # at and below the 60 m sea floor
    surface = values[0, 1:3]
    bearing = np.degrees(np.arctan2(surface[0], surface[1]))
    # westerly wind (towards 90°), southern hemisphere: surface drift 45° to the left, towards 45°; the sea floor
    # at 1.3 D bends the finite-depth spiral by less than 1°
    assert bearing == pytest.approx(45.0, abs=1.0)


def test_other_models_and_errors(tmp_path, capsys):
    code, out, _ = run(
        [
            "current-profile",
            "--model",
            "constant",
            "--velocity",
            "0.1",
            "-0.2",
            "0",
            "--depths",
            "5",
            "--format",
            "csv",
        ],
        capsys,
    )
    assert code == 0 and np.allclose(parse_csv(out), [[5.0, 0.1, -0.2, 0.0]])
    code, _, err = run(["current-profile", "--model", "ekman", "--depths", "0:10:1"], capsys)
    assert code == 2 and "current.latitude_deg: missing" in err
    code, _, err = run(["current-profile", "--depths", "10:0:1", "--lat", "40"], capsys)
    assert code == 2 and "--depths: expected 0 <= START <= STOP" in err


def test_bare_environment_file(tmp_path, capsys):
    config = tmp_path / "env.yaml"
    config.write_text("current: {model: constant, velocity_enu: [0.3, 0.0, 0.0]}\nbathymetry: {depth_m: 15.0}\n")
    code, out, _ = run(["current-profile", "--scenario", str(config), "--depths", "0:20:10", "--format", "csv"], capsys)
    assert code == 0 and np.allclose(parse_csv(out), [[0, 0.3, 0, 0], [10, 0.3, 0, 0], [20, 0, 0, 0]])
