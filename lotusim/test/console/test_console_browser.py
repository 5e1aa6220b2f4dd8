"""The console as operators use it: `lotusim run --console` on a small fleet, the page in two headless Chromium
sessions (Debian's chromium, driven by Playwright), an operator's clicks carried out by the simulation and seen
by the other session: a spawn, a route the USV then follows, pause and resume, bad input refused with its reason,
a spectator refused, a delete; the scenario's world (an island, a buoy) on the page's map and on the Foxglove
channel /lotusim/console/world. Screenshots go to the test's directory."""

from __future__ import annotations

import base64
import json
import math
import textwrap
import time

import pytest
from browser_probe import RAW_FOXGLOVE_CLIENT, chromium_or_skip, free_port, wait_for_fleet

# DDS participants; serial: a large fleet, a long run or the whole machine (run one at a time, Makefile)
pytestmark = [pytest.mark.ros, pytest.mark.serial]
pytest.importorskip("rclpy")
pytest.importorskip("foxglove")
sync_api, CHROMIUM = chromium_or_skip()

from cli_probe import start_run, stop_run, wait_for_text  # noqa: E402

ORIGIN = (48.3, -4.6)
SCENARIO = """\
    name: console_test
    seed: 7
    world:
      origin: {latitude_deg: 48.3, longitude_deg: -4.6}
      bathymetry: {model: flat, depth_m: 50.0}
    physics: {step_s: 0.02, mode: scaled, real_time_factor: 3.0}
    environment:
      world:   # away from every vessel and route below
        coast: {polygons: [[[150.0, 80.0], [250.0, 80.0], [250.0, 180.0], [150.0, 180.0]]], elevation_m: 10.0}
        objects:
          - {name: buoy_1, kind: buoy, position: [-100.0, 50.0, 0.0]}
    vessels:
      - {name: wamv_1, model: wamv, pose: {position: [0.0, 0.0, 0.0], yaw_deg: 0.0}}
      - {name: auv_1, model: lrauv, pose: {position: [-60.0, -40.0, -5.0], yaw_deg: 0.0}}
    controllers:
      - type: waypoint_follower
        vessel: wamv_1
        setpoints:
          waypoints: [{latitude_deg: 48.3, longitude_deg: -4.6}]
          acceptance_radius_m: 5.0
          speed_mps: 1.5
    """


def _east_north_to_latlon(east_m: float, north_m: float) -> tuple[float, float]:
    """A point near the origin (spherical approximation, < 1 mm error at 100 m)."""
    r = 6_371_000.0
    return ORIGIN[0] + math.degrees(north_m / r), ORIGIN[1] + math.degrees(east_m / (r * math.cos(math.radians(48.3))))


def _wgs84(east_m: float, north_m: float) -> tuple[float, float]:
    """A point near the origin with the WGS84 ellipsoid's radii of curvature there (meridian M, prime vertical N;
    error < 1 cm at 300 m): lat = lat0 + north / M, lon = lon0 + east / (N cos lat0)."""
    a, e2, lat0 = 6_378_137.0, 0.00669437999014, math.radians(ORIGIN[0])
    w = 1.0 - e2 * math.sin(lat0) ** 2
    m_r, n_r = a * (1.0 - e2) / w**1.5, a / math.sqrt(w)
    return ORIGIN[0] + math.degrees(north_m / m_r), ORIGIN[1] + math.degrees(east_m / (n_r * math.cos(lat0)))


def _click_at(page, lat: float, lon: float) -> None:
    p = page.evaluate(f"() => map.latLngToContainerPoint([{lat}, {lon}])")
    page.mouse.click(p["x"], p["y"])


def _vessel(page, name: str) -> dict | None:
    return page.evaluate(
        """(name) => { const f = window.lotusim.fleet, i = window.lotusim.index.get(name);
        return (f && i !== undefined) ? {lat: f.lat[i], lon: f.lon[i], t: f.t, speed: f.speed[i]} : null; }""",
        name,
    )


def _message(page) -> tuple[str, str]:
    return page.text_content("#message"), page.get_attribute("#message", "class")


def _wait_message(page, previous: str, timeout_s: float = 30.0) -> tuple[str, str]:
    page.wait_for_function(f"() => document.getElementById('message').textContent !== {previous!r}",
                           timeout=timeout_s * 1000)  # fmt: skip
    return _message(page)


def _check_world(page, ws_port: int) -> None:
    """The scenario's island is one filled polygon at its corners (WGS84) on the page's map, the buoy a circle with
    its name and kind; a Foxglove client of /lotusim/console/world receives the land and the buoy."""
    page.wait_for_function("() => window.lotusim.world.polygons === 1 && window.lotusim.world.objects === 1",
                           timeout=30_000)  # fmt: skip
    drawn = page.evaluate("""() => worldLayer.getLayers().map((l) => l instanceof L.Polygon
        ? {polygon: l.getLatLngs()[0].map((p) => [p.lat, p.lng]), filled: l.options.fill}
        : {circle: [l.getLatLng().lat, l.getLatLng().lng], tip: l.getTooltip().getContent()})""")
    (island,) = [d for d in drawn if "polygon" in d]
    (buoy,) = [d for d in drawn if "circle" in d]
    corners = [_wgs84(e, n) for e, n in ((150.0, 80.0), (250.0, 80.0), (250.0, 180.0), (150.0, 180.0))]
    assert island["filled"] and len(island["polygon"]) == 4
    for lat, lon in corners:  # 5e-7 deg: < 6 cm
        assert min(math.hypot(lat - a, lon - b) for a, b in island["polygon"]) < 5e-7, (lat, lon, island)
    assert buoy["circle"] == pytest.approx(_wgs84(-100.0, 50.0), abs=5e-7)
    assert buoy["tip"] == "buoy_1 (buoy, cylinder)"
    got = page.evaluate(RAW_FOXGLOVE_CLIENT, [f"ws://127.0.0.1:{ws_port}", ["/lotusim/console/world"]])
    assert ("/lotusim/console/world", "foxglove.SceneUpdate") in {
        (c["topic"], c["schemaName"]) for c in got["channels"]
    }
    payload = base64.b64decode(got["first"]["/lotusim/console/world"])
    assert b"world/land" in payload and b"world/buoy_1" in payload and b"buoy_1 (buoy)" in payload


def test_two_operators_spawn_route_pause_and_delete_from_the_page(tmp_path, own_domain_env):
    scenario = tmp_path / "console_test.yaml"
    scenario.write_text(textwrap.dedent(SCENARIO))
    page_port, ws_port = free_port(), free_port()
    out, record = tmp_path / "run.log", tmp_path / "recording"
    run = start_run(
        [str(scenario), "--headless", "--console", "--console-port", str(page_port), "--console-ws-port", str(ws_port),
         "--record", str(record)],
        out,
        own_domain_env,
    )  # fmt: skip
    try:
        wait_for_text(out, "2 vessels spawned", run, 180.0)  # printed once the recorder listens
        with sync_api.sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            alice = browser.new_page(viewport={"width": 1280, "height": 800})
            bob = browser.new_page(viewport={"width": 1280, "height": 800})
            errors: list[str] = []
            for page in (alice, bob):
                page.on("pageerror", lambda e: errors.append(str(e)))
                page.goto(f"http://127.0.0.1:{page_port}/")
                wait_for_fleet(page, 2)
            assert sorted(bob.evaluate("() => window.lotusim.fleet.name")) == ["auv_1", "wamv_1"]
            _check_world(bob, ws_port)
            assert bob.evaluate("() => window.lotusim.fleet.model") is not None
            bob.wait_for_function("() => document.getElementById('model').options.length > 0", timeout=30_000)

            # log in: alice operates, bob watches (both listed to everyone)
            alice.fill("#opname", "alice")
            alice.click("#loginbtn")
            assert _wait_message(alice, "")[0] == "logged in as operator"
            bob.fill("#opname", "bob")
            bob.select_option("#oprole", "spectator")
            bob.click("#loginbtn")
            _wait_message(bob, "")
            bob.wait_for_function("() => document.getElementById('operators').textContent.includes('alice')")
            alice.wait_for_function("() => document.getElementById('operators').textContent.includes('bob')")

            # a spawn clicked by alice appears in bob's session
            alice.select_option("#model", "kayak_usv")
            alice.fill("#spawnname", "kayak_9")
            alice.click("#spawnbtn")
            spawn_at = _east_north_to_latlon(40.0, -30.0)
            before = _message(alice)[0]
            _click_at(alice, *spawn_at)
            text, kind = _wait_message(alice, before, timeout_s=60.0)  # the MAS server's answer
            answered = time.monotonic()
            assert kind == "ok", text
            bob.wait_for_function("() => window.lotusim.index.has('kayak_9')", timeout=30_000)
            assert time.monotonic() - answered < 3.0  # the next update or two (10 Hz); bench_console.py measures it
            kayak = _vessel(bob, "kayak_9")
            assert kayak["lat"] == pytest.approx(spawn_at[0], abs=2e-5) and kayak["lon"] == pytest.approx(
                spawn_at[1], abs=3e-5
            )

            # alice selects wamv_1 on the map, draws a route 60 m east and sends it: the USV gets there
            wamv = _vessel(alice, "wamv_1")
            _click_at(alice, wamv["lat"], wamv["lon"])
            alice.wait_for_function("() => window.lotusim.selected === 'wamv_1'")
            # its waypoint follower's status, while selected (controller_watch)
            shows_status = "() => document.getElementById('selected').textContent.includes('waypoints: index')"
            alice.wait_for_function(shows_status, timeout=15_000)
            alice.click("#routebtn")
            goal = _east_north_to_latlon(60.0, 10.0)
            _click_at(alice, *goal)
            before = _message(alice)[0]
            alice.click("#sendroutebtn")
            text, kind = _wait_message(alice, before)
            assert kind == "ok", text

            def distance_to_goal() -> float:
                v = _vessel(bob, "wamv_1")
                north = math.radians(v["lat"] - goal[0]) * 6_371_000.0
                east = math.radians(v["lon"] - goal[1]) * 6_371_000.0 * math.cos(math.radians(48.3))
                return math.hypot(east, north)

            deadline = time.monotonic() + 90.0
            while distance_to_goal() > 5.0 and time.monotonic() < deadline:
                time.sleep(0.5)
            assert distance_to_goal() <= 5.0 + 1.0  # the follower's acceptance radius (+ one update of motion)
            alice.screenshot(path=str(tmp_path / "console_operator.png"))

            # pause: everyone sees it and sim time stops; resume: it runs on
            before = _message(alice)[0]
            alice.click("#pausebtn")
            assert _wait_message(alice, before)[1] == "ok"
            bob.wait_for_function("() => window.lotusim.fleet.paused === true", timeout=5_000)
            time.sleep(0.5)
            t_paused = bob.evaluate("() => window.lotusim.fleet.t")
            time.sleep(1.5)
            assert bob.evaluate("() => window.lotusim.fleet.t") == t_paused
            before = _message(alice)[0]
            alice.click("#resumebtn")
            assert _wait_message(alice, before)[1] == "ok"
            bob.wait_for_function(f"() => window.lotusim.fleet.t > {t_paused} + 1.0", timeout=10_000)

            # bad input is refused with its reason and changes nothing; a spectator cannot command
            alice.fill("#rtfinput", "fast please")
            before = _message(alice)[0]
            alice.click("#rtfbtn")
            text, kind = _wait_message(alice, before)
            assert kind == "error" and "rtf: value: a number is needed" in text
            alice.fill("#rtfinput", "5")
            alice.click("#rtfbtn")
            assert _wait_message(alice, text)[1] == "ok"
            bob.wait_for_function("() => window.lotusim.fleet.rtf > 4.0", timeout=15_000)  # was 3: now scaled at 5
            _click_at(bob, kayak["lat"], kayak["lon"])
            bob.wait_for_function("() => window.lotusim.selected === 'kayak_9'")
            before = _message(bob)[0]
            bob.click("#deletebtn")
            text, kind = _wait_message(bob, before)
            assert kind == "error" and "bob is a spectator" in text
            assert bob.evaluate("() => window.lotusim.index.has('kayak_9')")

            # alice deletes the kayak: gone for bob; the audit log shows who did what to everyone
            _click_at(alice, kayak["lat"], kayak["lon"])
            alice.wait_for_function("() => window.lotusim.selected === 'kayak_9'")
            before = _message(alice)[0]
            alice.click("#deletebtn")
            assert _wait_message(alice, before)[1] == "ok"
            bob.wait_for_function("() => !window.lotusim.index.has('kayak_9')", timeout=10_000)
            bob.wait_for_function(
                "() => document.getElementById('audit').textContent.includes('alice: delete kayak_9')"
            )
            audit = bob.text_content("#audit")
            for line in ("alice: spawn kayak_9 (kayak_usv)", "alice: waypoints for wamv_1", "alice: pause",
                         "alice: resume",
                         "bob: delete kayak_9 — bob is a spectator", "alice: delete kayak_9 — done",
                         "alice: real-time factor 5 — done"):  # fmt: skip
                assert line in audit, (line, audit)
            assert 'alice: {"op":"rtf","value":null} — rtf: value: a number is needed' in audit
            bob.screenshot(path=str(tmp_path / "console_spectator.png"))
            assert errors == []
            browser.close()
    finally:
        stop_run(run)
    # the recording holds the audit log, one JSON entry per command, in order
    from rosbags.highlevel import AnyReader

    from lotusim_core.sim.recorder import make_typestore

    with AnyReader([record], default_typestore=make_typestore()) as reader:
        audit = [c for c in reader.connections if c.topic == "/lotusim/console/audit"]
        entries = [json.loads(reader.deserialize(raw, c.msgtype).data) for c, _, raw in reader.messages(audit)]
    assert [(e["operator"], e["ok"]) for e in entries if e["command"] == "delete kayak_9"] == [
        ("bob", False), ("alice", True)
    ]  # fmt: skip
    assert [e["seq"] for e in entries] == sorted(e["seq"] for e in entries) and len(entries) >= 8
