"""The operator console under load: `lotusim run SCENARIO --console` (default: 1,000 LRAUVs, realtime) with N
clients connected, measured over a window of wall time: the simulation's RTF, the updates each client received per
second, the console's cost per update (building the views and handing them to the Foxglove server, which sends them
to every client from its own threads), and the frame rate and draw time of one page that redraws every frame (the
page's ?benchmark mode: the worst case). The other clients are pages that receive and draw nothing (?receive_only):
operators' browsers run on their own machines, not on the simulation's two cores.

    python bench/bench_console.py --clients 5 --seconds 20
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(path: Path, text: str, proc: subprocess.Popen, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if text in path.read_text(errors="replace"):
            return
        if proc.poll() is not None:
            raise RuntimeError(f"lotusim run exited:\n{path.read_text()[-2000:]}")
        time.sleep(0.5)
    raise TimeoutError(f"no {text!r} within {timeout_s} s:\n{path.read_text()[-2000:]}")


def command_latencies(pages, repeats: int = 6) -> list[float]:
    """Wall ms from the answer to an operator's pause/resume (client 1) to the change seen by client 2."""
    pages[0].evaluate("() => client.call('login', {name: 'bench', role: 'operator'})")
    out = []
    for k in range(repeats):
        paused = k % 2 == 0
        pages[0].evaluate(f"() => client.call('command', {{op: '{'pause' if paused else 'resume'}'}})")
        answered = time.perf_counter()
        pages[1].wait_for_function(f"() => window.lotusim.fleet.paused === {'true' if paused else 'false'}",
                                   polling=5, timeout=10_000)  # fmt: skip
        out.append((time.perf_counter() - answered) * 1000.0)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scenario", default="stress_1000")
    ap.add_argument("--mode", default="realtime")
    ap.add_argument("--clients", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=20.0, help="wall seconds measured")
    args = ap.parse_args()
    chromium = shutil.which("chromium")
    if chromium is None:
        print("bench_console: no chromium (apt-get install chromium)", file=sys.stderr)
        return 2
    from playwright.sync_api import sync_playwright

    page_port, ws_port = free_port(), free_port()
    log = Path(tempfile.mkdtemp(prefix="bench_console_")) / "run.log"
    cmd = [sys.executable, "-m", "lotusim_core.cli", "run", args.scenario, "--headless", "--mode", args.mode,
           "--console", "--console-port", str(page_port), "--console-ws-port", str(ws_port)]  # fmt: skip
    with open(log, "w") as out:
        run = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                               start_new_session=True)  # fmt: skip
    try:
        print(f"bench_console: {args.scenario} ({args.mode}) starting; log {log}", flush=True)
        wait_for(log, "vessels spawned", run, 600.0)
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
            pages = [browser.new_page(viewport={"width": 1280, "height": 800}) for _ in range(args.clients)]
            for k, page in enumerate(pages):
                page.goto(f"http://127.0.0.1:{page_port}/?{'benchmark' if k == 0 else 'receive_only'}")
                page.wait_for_function("() => window.lotusim.fleet && window.lotusim.fleet.name.length > 0",
                                       timeout=120_000)  # fmt: skip
            time.sleep(3.0)  # warm up
            before = [p.evaluate("() => ({u: window.lotusim.updates, t: performance.now()})") for p in pages]
            rtfs, costs = [], []
            end = time.monotonic() + args.seconds
            while time.monotonic() < end:
                time.sleep(1.0)
                f = pages[0].evaluate("() => ({rtf: window.lotusim.fleet.rtf, us: window.lotusim.fleet.server_us})")
                rtfs.append(f["rtf"])
                costs.append(f["us"])
            rows = []
            for page, b in zip(pages, before, strict=True):
                r = page.evaluate(
                    "() => ({u: window.lotusim.updates, t: performance.now(), fps: window.lotusim.frames.length, "
                    "draw: window.lotusim.drawMs.slice(), n: window.lotusim.fleet.name.length})"
                )
                draw = sorted(r["draw"])
                stats = (statistics.mean(draw), draw[int(0.95 * (len(draw) - 1))]) if draw else (0.0, 0.0)
                rows.append((r["n"], r["fps"], *stats, (r["u"] - b["u"]) / ((r["t"] - b["t"]) / 1000.0)))
            latencies = command_latencies(pages) if len(pages) > 1 else []
            browser.close()
    finally:
        os.killpg(run.pid, signal.SIGINT)
        try:
            run.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(run.pid, signal.SIGKILL)
    print(f"\n{args.scenario}, mode {args.mode}, {args.clients} client(s), {args.seconds:g} s measured")
    print("| client | draws | vessels | page FPS | draw ms (mean / p95) | updates/s received |")
    print("|---:|---|---:|---:|---:|---:|")
    for k, (n, fps, mean, p95, ups) in enumerate(rows):
        drawn = f"{fps} | {mean:.2f} / {p95:.2f}" if k == 0 else "– | –"
        print(f"| {k + 1} | {'every frame' if k == 0 else 'nothing'} | {n} | {drawn} | {ups:.1f} |")
    cost = statistics.mean(costs)
    print(f"\nsim RTF over the window: min {min(rtfs):.3f}, mean {statistics.mean(rtfs):.3f}")
    print(f"console cost per update: {cost:.0f} us ({cost / max(1, args.clients):.0f} us per client)")
    if latencies:
        print(f"pause/resume seen by another client after the answer: median {statistics.median(latencies):.0f} ms, "
              f"max {max(latencies):.0f} ms ({len(latencies)} commands)")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
