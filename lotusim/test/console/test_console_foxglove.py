"""`lotusim console` beside a simulation that runs already (`lotusim run single_auv`): the page shows its vessel,
and a Foxglove client gets Foxglove's own schemas (SceneUpdate, FrameTransforms, LocationFixes) for it and the
console's services; Ctrl-C ends it cleanly."""

from __future__ import annotations

import base64
import os
import signal
import subprocess
import sys

import pytest
from browser_probe import RAW_FOXGLOVE_CLIENT, chromium_or_skip, free_port, wait_for_fleet

pytestmark = pytest.mark.ros  # starts lotusim run (DDS participants)
pytest.importorskip("rclpy")
pytest.importorskip("foxglove")
sync_api, CHROMIUM = chromium_or_skip()

from cli_probe import start_run, stop_run, wait_for_text  # noqa: E402

FOXGLOVE_SCHEMAS = {
    "/lotusim/console/scene": "foxglove.SceneUpdate",
    "/lotusim/console/tf": "foxglove.FrameTransforms",
    "/lotusim/console/locations": "foxglove.LocationFixes",
    "/lotusim/console/environment": "foxglove.SceneUpdate",
}


def test_lotusim_console_serves_a_running_simulation_to_the_page_and_to_foxglove(tmp_path, own_domain_env):
    run_out, console_out = tmp_path / "run.log", tmp_path / "console.log"
    run = start_run(["single_auv", "--headless"], run_out, own_domain_env)
    console = None
    try:
        wait_for_text(run_out, "1 vessels spawned", run, 180.0)
        page_port, ws_port = free_port(), free_port()
        with open(console_out, "w") as out:
            console = subprocess.Popen(
                [sys.executable, "-m", "lotusim_core.cli", "console", "--port", str(page_port), "--ws-port",
                 str(ws_port)],
                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=own_domain_env,
                start_new_session=True,
            )  # fmt: skip
        wait_for_text(console_out, "console: page http://127.0.0.1:", console, 60.0)
        with sync_api.sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            page = browser.new_page()
            page.goto(f"http://127.0.0.1:{page_port}/")
            wait_for_fleet(page, 1)
            (name,) = page.evaluate("() => window.lotusim.fleet.name")
            # the map's origin came from /lotusim/environment (the scenario's world.origin), not a default
            lat = page.evaluate("() => window.lotusim.fleet.lat[0]")
            got = page.evaluate(RAW_FOXGLOVE_CLIENT, [f"ws://127.0.0.1:{ws_port}", list(FOXGLOVE_SCHEMAS)])
            browser.close()
        advertised = {c["topic"]: (c["schemaName"], c["encoding"]) for c in got["channels"]}
        for topic, schema in FOXGLOVE_SCHEMAS.items():
            assert advertised[topic] == (schema, "protobuf")
            payload = base64.b64decode(got["first"][topic])
            expected = b"seabed" if topic.endswith("environment") else name.encode()  # single_auv: no waves
            assert expected in payload  # protobuf keeps strings as UTF-8: the entity id / frame / fix name
        assert f"{name}/base_link".encode() in base64.b64decode(got["first"]["/lotusim/console/tf"])
        assert advertised["/lotusim/console/fleet"][1] == "json" and {"login", "command"} <= set(got["services"])
        assert lat == pytest.approx(48.3, abs=0.01), "the map origin is the scenario's world.origin, not 0, 0"
        os.killpg(console.pid, signal.SIGINT)
        assert console.wait(timeout=20) == 0, console_out.read_text()[-2000:]
    finally:
        if console is not None and console.poll() is None:
            os.killpg(console.pid, signal.SIGKILL)
        stop_run(run)
