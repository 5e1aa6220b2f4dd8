"""The operator console under load: `lotusim run SCENARIO --console` (default: 1,000 LRAUVs, realtime) with N
clients connected, measured over a window of wall time: the simulation's RTF (from /lotusim/stats) against the
same run without the console, the console process's CPU share, its cost per update (building the views and
handing them to the Foxglove server, which sends them to every client from its own threads), the updates each
client received per second, the frame rate and draw time of one page that redraws every frame (the page's
?benchmark mode: the worst case), and how long a pause answered to one client takes to show in another. The
other clients are pages that receive every update and draw nothing (?receive_only): operators' browsers run on
their own machines, not on the simulation's two cores.

    python bench/bench_console.py --clients 5 --seconds 20
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

CLK_TCK = os.sysconf("SC_CLK_TCK")


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


class StatsListener:
    """The workers' windowed RTF from /lotusim/stats, on a node of its own (a thread spins it)."""

    def __init__(self) -> None:
        import rclpy
        from rclpy.executors import SingleThreadedExecutor

        from lotusim_interfaces.msg import SimStats

        self.context = rclpy.Context()
        rclpy.init(context=self.context)
        self.node = rclpy.create_node("bench_console_stats", context=self.context)
        self.rtf: list[float] = []
        self.recording = False
        self.node.create_subscription(SimStats, "/lotusim/stats", self._on_stats, 10)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.thread = threading.Thread(target=self._spin, daemon=True)
        self.thread.start()

    def _on_stats(self, msg) -> None:
        if self.recording:
            self.rtf.append(msg.real_time_factor)

    def _spin(self) -> None:
        from rclpy.executors import ExternalShutdownException

        with contextlib.suppress(ExternalShutdownException):
            while self.context.ok():
                self.executor.spin_once(timeout_sec=0.1)

    def close(self) -> None:
        self.context.try_shutdown()
        self.thread.join(timeout=2.0)


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK  # utime + stime


def console_pid(run: subprocess.Popen) -> int | None:
    found = subprocess.run(["pgrep", "-f", "__node:=console"], capture_output=True, text=True).stdout.split()
    return int(found[0]) if found else None


class Run:
    """`lotusim run` in a process group of its own, with or without the console."""

    def __init__(self, scenario: str, mode: str, console: bool) -> None:
        self.page_port, self.ws_port = free_port(), free_port()
        self.log = Path(tempfile.mkdtemp(prefix="bench_console_")) / "run.log"
        cmd = [sys.executable, "-m", "lotusim_core.cli", "run", scenario, "--headless", "--mode", mode,
               "--duration", "86400"]  # not the scenario's: the run lasts as long as the measurement  # fmt: skip
        if console:
            cmd += ["--console", "--console-port", str(self.page_port), "--console-ws-port", str(self.ws_port)]
        with open(self.log, "w") as out:
            self.proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                         start_new_session=True)  # fmt: skip
        print(f"bench_console: {scenario} ({mode}, console {console}) starting; log {self.log}", flush=True)
        wait_for(self.log, "vessels spawned", self.proc, 600.0)

    def stop(self) -> None:
        os.killpg(self.proc.pid, signal.SIGINT)
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)


def measure_without_console(args, stats: StatsListener) -> list[float]:
    run = Run(args.scenario, args.mode, console=False)
    try:
        time.sleep(3.0)
        stats.rtf.clear()
        stats.recording = True
        time.sleep(args.seconds)
        stats.recording = False
        return list(stats.rtf)
    finally:
        run.stop()


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


def measure_with_console(args, stats: StatsListener, chromium: str) -> dict:
    from playwright.sync_api import sync_playwright

    run = Run(args.scenario, args.mode, console=True)
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
            pages = [browser.new_page(viewport={"width": 1280, "height": 800}) for _ in range(args.clients)]
            for k, page in enumerate(pages):
                page.goto(f"http://127.0.0.1:{run.page_port}/?{'benchmark' if k == 0 else 'receive_only'}")
                page.wait_for_function("() => window.lotusim.fleet && window.lotusim.fleet.name.length > 0",
                                       timeout=120_000)  # fmt: skip
            time.sleep(3.0)  # warm up
            pid = console_pid(run.proc)
            cpu0, wall0 = (cpu_seconds(pid) if pid else 0.0), time.monotonic()
            before = [p.evaluate("() => ({u: window.lotusim.updates, t: performance.now()})") for p in pages]
            stats.rtf.clear()
            stats.recording = True
            costs = []
            end = time.monotonic() + args.seconds
            while time.monotonic() < end:
                time.sleep(1.0)
                costs.append(pages[0].evaluate("() => window.lotusim.fleet.server_us"))
            stats.recording = False
            cpu = (cpu_seconds(pid) - cpu0) / (time.monotonic() - wall0) if pid else float("nan")
            rows = [client_row(page, b) for page, b in zip(pages, before, strict=True)]
            latencies = command_latencies(pages) if len(pages) > 1 else []
            browser.close()
    finally:
        run.stop()
    return {"rtf": list(stats.rtf), "rows": rows, "cost_us": costs, "cpu": cpu, "latencies": latencies}


def client_row(page, before: dict) -> tuple:
    r = page.evaluate(
        "() => ({u: window.lotusim.updates, t: performance.now(), fps: window.lotusim.frames.length, "
        "draw: window.lotusim.drawMs.slice(), n: window.lotusim.fleet.name.length})"
    )
    draw = sorted(r["draw"])
    stats = (statistics.mean(draw), draw[int(0.95 * (len(draw) - 1))]) if draw else (0.0, 0.0)
    return (r["n"], r["fps"], *stats, (r["u"] - before["u"]) / ((r["t"] - before["t"]) / 1000.0))


def report(args, base: list[float], got: dict) -> None:
    print(f"\n{args.scenario}, mode {args.mode}, {args.clients} client(s), {args.seconds:g} s measured")
    print("| client | draws | vessels | page FPS | draw ms (mean / p95) | updates/s received |")
    print("|---:|---|---:|---:|---:|---:|")
    for k, (n, fps, mean, p95, ups) in enumerate(got["rows"]):
        drawn = f"{fps} | {mean:.2f} / {p95:.2f}" if k == 0 else "– | –"
        print(f"| {k + 1} | {'every frame' if k == 0 else 'nothing'} | {n} | {drawn} | {ups:.1f} |")
    rtf = got["rtf"] or [float("nan")]
    print(f"\nsim RTF (the workers' 1-s windows) with the console: min {min(rtf):.3f}, mean {statistics.mean(rtf):.3f}")
    if base:
        print(f"sim RTF without the console:                       min {min(base):.3f}, "
              f"mean {statistics.mean(base):.3f}")  # fmt: skip
    cost = statistics.mean(got["cost_us"])
    print(f"console cost per update: {cost:.0f} us ({cost / max(1, args.clients):.0f} us per client); "
          f"console process CPU: {100 * got['cpu']:.0f} % of one core")  # fmt: skip
    if got["latencies"]:
        lat = got["latencies"]
        print(f"pause/resume seen by another client after the answer: median {statistics.median(lat):.0f} ms, "
              f"max {max(lat):.0f} ms ({len(lat)} commands)")  # fmt: skip


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scenario", default="stress_1000")
    ap.add_argument("--mode", default="realtime")
    ap.add_argument("--clients", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=20.0, help="wall seconds measured")
    ap.add_argument("--no-baseline", action="store_true", help="skip the run without the console")
    args = ap.parse_args()
    chromium = shutil.which("chromium")
    if chromium is None:
        print("bench_console: no chromium (apt-get install chromium)", file=sys.stderr)
        return 2
    stats = StatsListener()
    try:
        base = [] if args.no_baseline else measure_without_console(args, stats)
        got = measure_with_console(args, stats, chromium)
    finally:
        stats.close()
    report(args, base, got)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
