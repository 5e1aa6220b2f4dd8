"""The console's ROS-free parts: a command's checks, operators and their roles, the audit log, the fleet merged
from workers (compass heading, WGS84, depth, speed), the page server's file list, and the console's start checks."""

from __future__ import annotations

import base64
import json
import math
import urllib.error
import urllib.request

import numpy as np
import pytest

pytest.importorskip("foxglove")

from lotusim_core.base.geodesy import GeodeticOrigin  # noqa: E402
from lotusim_core.console import commands as cmd  # noqa: E402
from lotusim_core.console.fleet_view import FleetView, WorkerState, compass_heading_deg  # noqa: E402
from lotusim_core.console.operators import AuditLog, LoginError, Operators  # noqa: E402
from lotusim_core.console.web_server import PageServer  # noqa: E402


def test_a_spawn_command_is_read_with_its_placement():
    c = cmd.parse_command(b'{"op": "spawn", "name": "usv_9", "model": "wamv", "lat": 48.3, "lon": -4.6, "heading": 90}')
    assert c == cmd.Spawn("usv_9", "wamv", cmd.Placement(48.3, -4.6, 0.0, 90.0))
    assert cmd.describe(c).startswith("spawn usv_9 (wamv) at 48.300000, -4.600000")
    route = cmd.parse_command(
        '{"op": "waypoints", "name": "a", "points": [[48.3, -4.6], [48.31, -4.61]], "loop": true}'
    )
    assert route.points == ((48.3, -4.6), (48.31, -4.61)) and route.loop and route.speed_mps == 0.0
    assert cmd.parse_command('{"op": "pause"}') == cmd.Pause(True)
    assert cmd.parse_command('{"op": "resume"}') == cmd.Pause(False)
    assert cmd.parse_command('{"op": "rtf", "value": 4}') == cmd.SetRtf(4.0)


@pytest.mark.parametrize(
    ("payload", "reason"),
    [
        (b"not json", "not JSON"),
        (b"[1, 2]", "expected a JSON object"),
        (b'{"op": "explode"}', "op: expected one of"),
        (b'{"op": "delete"}', "delete: name: expected a non-empty string"),
        (b'{"op": "delete", "name": "a", "force": true}', "unknown keys ['force']"),
        (b'{"op": "spawn", "name": "a", "model": "wamv", "lat": 91, "lon": 0}', "lat: expected a number in [-90, 90]"),
        (b'{"op": "spawn", "name": "a", "model": "wamv", "lat": 0}', "lon: a number is needed"),
        (b'{"op": "move", "name": "a", "lat": "north", "lon": 0}', "lat: expected a number, got 'north'"),
        (b'{"op": "rtf", "value": 0}', "value: expected a number in (0, 1000]"),
        (b'{"op": "rtf", "value": null}', "value: a number is needed"),
        (b'{"op": "rtf", "value": true}', "value: expected a number, got True"),
        (b'{"op": "waypoints", "name": "a", "points": []}', "points: expected a non-empty list"),
        (b'{"op": "waypoints", "name": "a", "points": [[1]]}', "points[0]: expected [lat, lon]"),
        (b'{"op": "waypoints", "name": "a", "points": [[1, 2]], "loop": "yes"}', "loop: expected true or false"),
        (b'{"op": "delete", "name": "' + b"x" * 200 + b'"}', "longer than 128"),
        (b" " * (cmd.MAX_PAYLOAD_BYTES + 1), "larger than"),
    ],
)
def test_a_bad_command_is_refused_with_its_reason(payload, reason):
    with pytest.raises(cmd.CommandError) as err:
        cmd.parse_command(payload)
    assert reason in str(err.value)


def test_spectators_watch_operators_command_and_a_remote_console_needs_its_token():
    ops = Operators()
    assert ops.seen(1).role == "spectator" and ops.seen(1).name == "guest-1"
    with pytest.raises(LoginError, match="is a spectator"):
        ops.commander(1)
    ops.login(1, "alice", "operator")
    assert ops.commander(1).name == "alice"
    with pytest.raises(LoginError, match="role"):
        ops.login(2, "bob", "admiral")
    with pytest.raises(LoginError, match="name"):
        ops.login(2, "<script>", "operator")
    ops.login(2, "bob", "spectator")
    assert [(o["name"], o["role"]) for o in ops.listing()] == [("alice", "operator"), ("bob", "spectator")]
    ops.left(1)
    assert [o["name"] for o in ops.listing()] == ["bob"]

    guarded = Operators(token="s3cret")
    for wrong in (None, "", "s3cre", 42):
        with pytest.raises(LoginError, match="token"):
            guarded.login(1, "alice", "operator", wrong)
    assert guarded.login(1, "alice", "operator", "s3cret").role == "operator"
    assert guarded.login(2, "bob", "spectator").role == "spectator"  # watching needs no token


def test_the_audit_log_keeps_the_last_entries_in_order():
    log = AuditLog()
    for k in range(250):
        log.add("alice", f"delete v{k}", k % 2 == 0, "done", sim_time_s=k * 0.5)
    recent = log.recent(3)
    assert [e["command"] for e in recent] == ["delete v247", "delete v248", "delete v249"]
    assert recent[-1]["seq"] == 250 and recent[-1]["sim_time_s"] == 124.5 and recent[0]["ok"] is False
    assert len(log.recent(1000)) == 200


def _state(names, xyz, yaw_enu_deg, twist=None, stamp_ns=5_000_000_000) -> WorkerState:
    n = len(names)
    half = np.radians(np.asarray(yaw_enu_deg, dtype=float)) / 2.0
    orientation = np.column_stack([np.zeros(n), np.zeros(n), np.sin(half), np.cos(half)])  # x y z w about up
    return WorkerState(
        names=list(names),
        position=np.asarray(xyz, dtype=float).reshape(n, 3),
        orientation=orientation,
        twist=np.zeros((n, 6)) if twist is None else np.asarray(twist, dtype=float),
        environment=np.tile([0.1, -0.2, 0.0, 3.0, 4.0, 0.0], (n, 1)),
        status=np.zeros(n, dtype=np.uint8),
        stamp_ns=stamp_ns,
    )


def test_compass_heading_of_enu_yaw():
    # REP 103: ENU yaw 0 faces east (compass 90), yaw 90 faces north (compass 0), yaw -90 faces south (180)
    q = _state(["a", "b", "c", "d"], np.zeros((4, 3)), [0.0, 90.0, -90.0, 180.0]).orientation
    np.testing.assert_allclose(compass_heading_deg(q), [90.0, 0.0, 180.0, 270.0], atol=1e-9)


def test_the_fleet_of_two_workers_is_one_set_of_columns_with_models_and_wgs84():
    view = FleetView(GeodeticOrigin(48.3, -4.6))
    view.on_state("worker_1", _state(["auv"], [[0.0, 0.0, -20.0]], [90.0], twist=[[1.5, 0.0, 0.0, 0, 0, 0]]))
    view.on_state("worker_0", _state(["usv"], [[0.0, 1000.0, 0.0]], [0.0], stamp_ns=4_000_000_000))
    view.on_roster("worker_0", [("usv", "wamv", "surface")])
    snap = view.snapshot()
    assert snap.names == ["usv", "auv"] and snap.workers == ["worker_0", "worker_1"]
    assert snap.models == ["wamv", ""] and snap.domains == ["surface", ""]  # auv's roster not heard yet
    assert snap.sim_time_s == 5.0
    # 1,000 m north of 48.3 N: 1000 m over the WGS84 meridian radius M = a (1 - e^2) / (1 - e^2 sin^2 phi)^1.5
    a, e2, s2 = 6378137.0, 0.00669437999014, math.sin(math.radians(48.3)) ** 2
    meridian_m = a * (1.0 - e2) / (1.0 - e2 * s2) ** 1.5
    assert snap.latitude_deg[0] == pytest.approx(48.3 + math.degrees(1000.0 / meridian_m), abs=2e-7)
    assert snap.latitude_deg[1] == pytest.approx(48.3) and snap.longitude_deg[1] == pytest.approx(-4.6)
    np.testing.assert_allclose(snap.depth_m, [0.0, 20.0])
    np.testing.assert_allclose(snap.speed_mps, [0.0, 1.5])
    np.testing.assert_allclose(snap.heading_deg, [90.0, 0.0], atol=1e-9)
    columns = json.loads(json.dumps(snap.to_json_columns(rtf=0.98, paused=True)))  # plain JSON
    assert columns["paused"] is True and columns["name"] == ["usv", "auv"]
    decoded = lambda key, dtype: np.frombuffer(base64.b64decode(columns[key]), dtype=dtype)  # noqa: E731
    np.testing.assert_array_equal(decoded("lat", "<f8"), snap.latitude_deg)  # float64: no loss
    np.testing.assert_allclose(decoded("current", "<f4").reshape(-1, 2), [[0.1, -0.2]] * 2, rtol=1e-6)
    np.testing.assert_allclose(decoded("wind", "<f4").reshape(-1, 2), [[3.0, 4.0]] * 2)
    np.testing.assert_allclose(decoded("depth", "<f4"), [0.0, 20.0])
    assert decoded("status", np.uint8).tolist() == [0, 0]
    rows = snap.to_json_rows()
    assert rows["vessels"][1] == {
        "name": "auv", "model": "", "latitude_deg": pytest.approx(48.3), "longitude_deg": pytest.approx(-4.6),
        "depth_m": 20.0, "speed_mps": 1.5, "heading_deg": pytest.approx(0.0, abs=1e-9),
    }  # fmt: skip
    view.forget("worker_1")
    assert view.snapshot().names == ["usv"]
    assert FleetView(GeodeticOrigin()).snapshot().names == []


def test_the_page_server_serves_the_page_and_nothing_else():
    server = PageServer("127.0.0.1", 0, {"ws_port": 1234, "name": "t", "token_required": False})
    base = f"http://127.0.0.1:{server.port}"
    try:
        page = urllib.request.urlopen(f"{base}/").read().decode()
        assert "<title>lotusim console</title>" in page and "leaflet.js" in page
        assert json.loads(urllib.request.urlopen(f"{base}/console.json").read())["ws_port"] == 1234
        assert urllib.request.urlopen(f"{base}/vendor/leaflet-1.9.4/leaflet.js").status == 200
        for bad in ("/../console_node.py", "/%2e%2e/console_node.py", "/console_node.py", "/vendor/", "/etc/passwd"):
            with pytest.raises(urllib.error.HTTPError) as err:
                urllib.request.urlopen(base + bad)
            assert err.value.code == 404
        request = urllib.request.Request(f"{base}/", data=b"x", method="POST")
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(request)
        assert err.value.code == 501
    finally:
        server.close()


def test_the_console_refuses_a_remote_address_without_a_token():
    from lotusim_core.console.settings import config_problem

    assert config_problem("127.0.0.1", "", 10.0) == "" and config_problem("localhost", "", 10.0) == ""
    assert "needs a token" in config_problem("0.0.0.0", "", 10.0)
    assert config_problem("0.0.0.0", "t0ken", 10.0) == ""
    assert "expected an IP address" in config_problem("example.org", "", 10.0)
    assert "rate_hz" in config_problem("127.0.0.1", "", 0.0)


def test_lotusim_console_refuses_a_remote_bind_without_a_token_in_one_line():
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-m", "lotusim_core.cli", "console", "--host", "0.0.0.0"],
        capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "binding beyond the loopback needs a token" in proc.stderr.strip().splitlines()[-1]


def test_foxglove_scene_has_each_vessel_its_frame_and_a_current_arrow_where_the_water_moves():
    from lotusim_core.console import scene

    view = FleetView(GeodeticOrigin(48.3, -4.6))
    state = _state(["usv", "auv"], [[0.0, 0.0, 0.0], [10.0, 0.0, -5.0]], [0.0, 0.0])
    state.environment[1, :3] = 0.0  # still water at the AUV
    view.on_state("w", state)
    snap = view.snapshot()
    assert len(scene._current_arrow(snap, 0)) == 1 and scene._current_arrow(snap, 1) == []
    update = scene.scene_update(snap, gone=["old"]).encode()  # protobuf: strings as UTF-8
    assert all(token in update for token in (b"usv", b"auv", b"map", b"old"))
    tf = scene.frame_transforms(snap).encode()
    assert b"usv/base_link" in tf and b"auv/base_link" in tf
    assert b"usv" in scene.location_fixes(snap).encode()


def test_a_controller_status_is_read_by_the_names_of_its_layout_label():
    from std_msgs.msg import Float64MultiArray, MultiArrayDimension

    from lotusim_core.console.controller_watch import labelled

    msg = Float64MultiArray(data=[12.5, 2.0, 4.0, 31.25, 0.5, 0.0])
    msg.layout.dim = [MultiArrayDimension(label="stamp_s,index,count,distance_m,cross_track_m,done", size=6)]
    assert labelled(msg) == {"stamp_s": 12.5, "index": 2.0, "count": 4.0, "distance_m": 31.25, "cross_track_m": 0.5,
                             "done": 0.0}  # fmt: skip
    assert labelled(Float64MultiArray(data=[1.0, 2.0])) == {"v0": 1.0, "v1": 2.0}


def test_the_sea_surface_drawn_is_the_waves_elevation_and_the_seabed_the_bathymetry():
    from lotusim_core.console import environment_view as ev
    from lotusim_core.console.scene import stamp as scene_stamp
    from lotusim_env.environment import build_environment

    fleet = np.array([[0.0, 0.0, 0.0], [300.0, 100.0, -10.0]])
    x, y = ev.grid_around(fleet, nodes=41)
    assert (x.min(), x.max()) == (pytest.approx(-60.0), pytest.approx(360.0))  # the wider side plus the margins
    assert y.min() == pytest.approx(50.0 - 210.0) and x.shape == (41, 41)
    triangles = ev.grid_triangles(3)
    assert len(triangles) == 2 * 2 * 2 * 3 and triangles[:6] == [0, 3, 1, 1, 3, 4]
    # a regular wave from the west (travelling east): eta = a cos(k x - w t), deep water k = w^2 / g (Airy)
    env = build_environment({
        "waves": {"model": "regular", "height_m": 2.0, "period_s": 8.0, "from_deg": 270.0, "ramp_time_s": 0.0},
        "bathymetry": {"model": "flat", "depth_m": 1000.0},  # deep water for a 100 m wave (kh = 63)
    })  # fmt: skip
    w = 2.0 * math.pi / 8.0
    k = w * w / 9.81  # the physics' g (lotusim_env.waves.GRAVITY_MPS2)
    eta = ev.surface_heights(env, 3.0, x, y)
    np.testing.assert_allclose(eta, 1.0 * np.cos(k * x - w * 3.0), atol=1e-6)
    stamp = scene_stamp(3.0)
    assert ev.sea_surface(env, 3.0, x, y, stamp) is not None
    assert b"seabed" in ev.seabed(env, x, y, stamp).encode()
    assert ev.sea_surface(build_environment({}), 3.0, x, y, stamp) is None  # calm: nothing to draw


def test_a_watch_subscribes_once_and_ends_with_its_last_renewal(monkeypatch):
    from lotusim_core.console import controller_watch as cw

    class Recorder:  # the three node calls the watch makes, recorded; the graph has what `published` says
        def __init__(self) -> None:
            self.made, self.destroyed = [], []
            self.published = ["/wamv_1/waypoints/status", "/wamv_1/odom", "/other/autopilot/status"]

        def get_topic_names_and_types(self):
            return [(topic, ["std_msgs/msg/Float64MultiArray"]) for topic in self.published]

        def create_subscription(self, _type, topic, callback, _depth):
            self.made.append((topic, callback))
            return topic

        def destroy_subscription(self, subscription) -> None:
            self.destroyed.append(subscription)

    clock = [100.0]
    monkeypatch.setattr(cw.time, "monotonic", lambda: clock[0])
    node = Recorder()
    watch = cw.ControllerWatch(node)
    watch.watch("wamv_1")
    assert watch.refresh() == {} and [t for t, _ in node.made] == ["/wamv_1/waypoints/status"]  # the graph's only
    from std_msgs.msg import Float64MultiArray, MultiArrayDimension

    status = Float64MultiArray(data=[1.0, 2.0])
    status.layout.dim = [MultiArrayDimension(label="stamp_s,index", size=2)]
    node.made[0][1](status)
    clock[0] += cw.WATCH_S - 1.0
    watch.watch("wamv_1")  # renewed before it ends
    assert watch.refresh() == {"wamv_1": {"waypoints": {"stamp_s": 1.0, "index": 2.0}}} and len(node.made) == 1
    node.published.append("/wamv_1/usv_controller/status")  # a controller started later
    watch.refresh()
    assert [t for t, _ in node.made] == ["/wamv_1/waypoints/status", "/wamv_1/usv_controller/status"]
    clock[0] += cw.WATCH_S + 0.1
    assert watch.refresh() == {} and sorted(node.destroyed) == sorted(t for t, _ in node.made)
    for k in range(cw.MAX_WATCHED + 5):
        watch.watch(f"v{k}")
    assert len(watch.until) == cw.MAX_WATCHED


def _island_world():
    """A 100 m square island (20 m high) with a buoy, a rock and a yawed pier, around 48.3 N, 4.6 W."""
    from lotusim_env.world import build_world

    origin = GeodeticOrigin(48.3, -4.6)
    config = {
        "coast": {"polygons": [[[100.0, 100.0], [200.0, 100.0], [200.0, 200.0], [100.0, 200.0]]], "elevation_m": 20.0},
        "objects": [
            {"name": "buoy_1", "kind": "buoy", "position": [-50.0, 30.0, 0.0], "radius_m": 0.5, "height_m": 4.0},
            {"name": "rock_1", "kind": "rock", "position": [10.0, -20.0, -1.0], "radius_m": 3.0},
            {"name": "pier", "kind": "pier", "position": [0.0, 0.0, 1.0], "size_m": [60.0, 6.0, 3.0], "yaw_deg": 30.0},
        ],
    }
    return build_world(config, "world", None, origin), origin


def test_a_square_island_is_two_top_triangles_eight_wall_triangles_and_its_outline():
    from foxglove.messages import Timestamp

    from lotusim_core.console import world_view as wv

    world, _ = _island_world()
    top = wv.land_top_triangles(world)
    assert top.shape == (2, 3, 2)
    # the two triangles tile the square: areas 5000 m2 each, every vertex a corner of the island
    u, v = top[:, 1] - top[:, 0], top[:, 2] - top[:, 0]
    areas = 0.5 * np.abs(u[:, 0] * v[:, 1] - u[:, 1] * v[:, 0])
    np.testing.assert_allclose(areas, [5000.0, 5000.0])
    corners = {(100.0, 100.0), (200.0, 100.0), (200.0, 200.0), (100.0, 200.0)}
    assert {tuple(p) for p in top.reshape(-1, 2).tolist()} == corners
    walls = wv.wall_triangles(world)
    assert walls.shape == (8, 3, 3)  # 4 edges, 2 triangles each
    assert set(np.unique(walls[:, :, 2])) == {0.0, 20.0}  # from the sea surface up to elevation_m
    # each wall quad is 100 m x 20 m: the 8 triangles' areas sum to 4 x 2000 m2
    wall_area = 0.5 * np.linalg.norm(np.cross(walls[:, 1] - walls[:, 0], walls[:, 2] - walls[:, 0]), axis=1)
    assert wall_area.sum() == pytest.approx(4 * 100.0 * 20.0)
    encoded = wv.world_scene(world, Timestamp(0, 0)).encode()  # protobuf: ids and frame as UTF-8
    assert wv.LAND_ID.encode() in encoded and b"map" in encoded


def test_each_object_is_its_primitive_at_its_pose_and_size_labelled_with_its_kind():
    from foxglove.messages import Timestamp

    from lotusim_core.console import world_view as wv

    world, _ = _island_world()
    buoy, rock, pier = wv.object_looks(world)
    assert [buoy["id"], rock["id"], pier["id"]] == ["world/buoy_1", "world/rock_1", "world/pier"]
    # a buoy: vertical cylinder, 1 m across, 4 m tall, centred at its position, the buoy kind's red
    assert (buoy["shape"], buoy["position"], buoy["size"]) == ("cylinder", (-50.0, 30.0, 0.0), (1.0, 1.0, 4.0))
    assert buoy["rgb"] == pytest.approx((0.8, 0.1, 0.1)) and buoy["orientation"] == (0.0, 0.0, 0.0, 1.0)
    assert buoy["label"] == "buoy_1 (buoy)" and buoy["label_position"] == (-50.0, 30.0, 3.0)  # 1 m above its top
    assert (rock["shape"], rock["size"], rock["position"][2]) == ("sphere", (6.0, 6.0, 6.0), -1.0)
    assert (pier["shape"], pier["size"]) == ("box", (60.0, 6.0, 3.0))
    s, c = math.sin(math.radians(15.0)), math.cos(math.radians(15.0))  # yaw 30 deg about z
    assert pier["orientation"] == pytest.approx((0.0, 0.0, s, c))
    encoded = wv.world_scene(world, Timestamp(0, 0)).encode()
    assert all(token in encoded for token in (b"world/land", b"world/buoy_1", b"rock_1 (rock)", b"world/pier"))
    empty = wv.world_scene(type(world)(), Timestamp(0, 0)).encode()  # an empty world draws nothing
    assert b"world/" not in empty and b"map" not in empty


def test_the_page_gets_the_island_and_objects_in_wgs84():
    from lotusim_core.console import world_view as wv

    world, origin = _island_world()
    page = wv.world_wgs84(world, origin)
    json.dumps(page)  # JSON-ready
    (island,) = page["land"]
    (ring,) = island  # an exterior ring, no hole, open (4 corners)
    assert len(ring) == 4
    # local spherical approximation (WGS84 radii at 48.3 N: M = 6.3664e6 m, N = 6.3889e6 m; < 1e-7 deg at 300 m)
    lat0, lon0 = math.radians(48.3), 48.3
    m_r = 6378137.0 * (1 - 0.00669438) / (1 - 0.00669438 * math.sin(lat0) ** 2) ** 1.5
    n_r = 6378137.0 / math.sqrt(1 - 0.00669438 * math.sin(lat0) ** 2)
    for lat, lon in ring:
        east = math.radians(lon + 4.6) * n_r * math.cos(lat0)
        north = math.radians(lat - lon0) * m_r
        assert min(abs(east - 100.0), abs(east - 200.0)) < 0.05 and min(abs(north - 100.0), abs(north - 200.0)) < 0.05
    buoy = page["objects"][0]
    assert (buoy["name"], buoy["kind"], buoy["shape"], buoy["radius_m"]) == ("buoy_1", "buoy", "cylinder", 0.5)
    assert math.radians(buoy["lon"] + 4.6) * n_r * math.cos(lat0) == pytest.approx(-50.0, abs=0.05)
    assert math.radians(buoy["lat"] - 48.3) * m_r == pytest.approx(30.0, abs=0.05)
    assert buoy["color"] == "#cc1a1a" and page["objects"][2]["radius_m"] == 30.0  # pier: half of its 60 m length
