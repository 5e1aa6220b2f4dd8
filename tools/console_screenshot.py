"""A screenshot of the console page of a scenario: `lotusim run SCENARIO --console --headless` on a ROS domain of
its own, the page in headless Chromium (Debian's chromium, driven by Playwright, as lotusim/test/console does),
once it shows the fleet and the world, saved as PNG.

    python tools/console_screenshot.py coast_brest docs/img/console_coast_brest.png [--zoom 15] [--hover buoy_1]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def free_port() -> int:
    """A TCP port no one listens on now (127.0.0.1)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_text(path: Path, text: str, proc: subprocess.Popen, timeout_s: float) -> None:
    """Until `text` appears in the file `path` (RuntimeError if `proc` ends or `timeout_s` wall seconds pass)."""
    deadline = time.monotonic() + timeout_s
    while text not in path.read_text(errors="replace"):
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"no {text!r} in the run's output:\n{path.read_text(errors='replace')[-3000:]}")
        time.sleep(0.2)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scenario")
    parser.add_argument("output", type=Path)
    parser.add_argument("--zoom", type=float, default=None, help="the map's zoom (default: fitted to the fleet)")
    parser.add_argument("--hover", default=None, help="an object's name: its tooltip shown (the mouse over it)")
    parser.add_argument("--settle", type=float, default=3.0, help="wall seconds to wait once the world is shown")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium")
    if chromium is None:
        print("no chromium (Debian: apt-get install chromium)", file=sys.stderr)
        return 1
    env = dict(os.environ, ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST")
    env.setdefault("ROS_DOMAIN_ID", str(random.randint(150, 199)))  # away from the tests' domains
    page_port, ws_port = free_port(), free_port()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run.log"
        with open(out, "w") as sink:
            run = subprocess.Popen(
                [sys.executable, "-m", "lotusim_core.cli", "run", args.scenario, "--headless", "--console",
                 "--console-port", str(page_port), "--console-ws-port", str(ws_port)],
                stdout=sink, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True, env=env,
            )  # fmt: skip
        try:
            wait_for_text(out, "vessels spawned", run, 180.0)
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
                page = browser.new_page(viewport={"width": 1280, "height": 800})
                page.goto(f"http://127.0.0.1:{page_port}/")
                page.wait_for_function("() => window.lotusim.fleet && window.lotusim.fleet.name.length > 0",
                                       timeout=60_000)  # fmt: skip
                page.wait_for_function("() => window.lotusim.world.polygons + window.lotusim.world.objects > 0",
                                       timeout=30_000)  # fmt: skip
                if args.zoom is not None:
                    page.evaluate(f"() => map.setZoom({args.zoom}, {{animate: false}})")
                time.sleep(args.settle)
                if args.hover:
                    point = page.evaluate(
                        """(name) => { let p = null; worldLayer.eachLayer((l) => { if (l.getTooltip &&
                        l.getTooltip() && l.getTooltip().getContent().startsWith(name + " ")) p = l.getLatLng(); });
                        return p && map.latLngToContainerPoint(p); }""",
                        args.hover,
                    )
                    if point is None:
                        raise RuntimeError(f"no object {args.hover!r} on the map")
                    page.mouse.move(point["x"], point["y"])
                    time.sleep(0.5)
                args.output.parent.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(args.output))
                shown = page.evaluate(
                    "() => ({world: window.lotusim.world, fleet: window.lotusim.fleet.name.map((n, i) =>"
                    " `${n}: status ${window.lotusim.fleet.status[i]}`)})"
                )
                print(f"{args.output}: {shown}")
                browser.close()
        finally:
            if run.poll() is None:
                os.killpg(run.pid, signal.SIGINT)
                try:
                    run.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    os.killpg(run.pid, signal.SIGKILL)
    return 0


if __name__ == "__main__":
    sys.exit(main())
