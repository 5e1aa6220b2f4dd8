"""`lotusim bench fleet` helpers that need no running nodes: the table and the plots (real time: RTF and compute per
step against the step; fast: RTF with the peers' anchors)."""

from __future__ import annotations

import struct

from lotusim_core.bench.fleet import FleetBenchRow, plot, print_table


def _row(vessels: int, mode: str, rtf: float, step_ms: float, tf: bool = True) -> FleetBenchRow:
    return FleetBenchRow(vessels, mode, "lrauv", 0.03, rtf, rtf, step_ms, 2 * step_ms, 50.0, 10.0, 0.1, tf)


def _png_size(path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])  # IHDR width, height


def test_plots_are_written_for_both_modes(tmp_path, capsys):
    realtime = [_row(n, "realtime", 1.0, 0.005 * n + 0.3) for n in (1, 25, 100, 1000)]
    fast = [_row(1, "fast", 1100.0, 0.025), _row(25, "fast", 250.0, 0.12, tf=False)]
    plot(realtime, str(tmp_path / "rt.png"))
    plot(fast, str(tmp_path / "fast.png"))
    rt_w, rt_h = _png_size(tmp_path / "rt.png")
    fast_w, fast_h = _png_size(tmp_path / "fast.png")
    assert rt_w > fast_w and rt_h == fast_h  # real time has the second panel (compute per step)
    print_table(realtime + fast)
    lines = capsys.readouterr().out.splitlines()
    assert lines[-1].split()[-1] == "off" and lines[-2].split()[-1] == "on"
    assert lines[-1].split()[:3] == ["25", "fast", "250.00"]
