"""Radar, sonar and camera from the user's entry point: `lotusim run mine_hunt` (every node as a process), the images
recorded and read back with rosbags, checked against the test's own geometry at each image's recorded pose.

- radar (ship, antenna 3 m up): the buoy (cylinder r 0.5 m, 200 m, 30° to starboard) is the brightest B-scan cell,
  at the row of its bearing (1° bins, clockwise from the bow) and the range bin of its near side (926 / 256 m
  bins); nothing else is lit (calm sea: no clutter) but the PSF's 4 σ around it; the PPI's brightest pixel is
  where the head-up geometry puts the buoy;
- sonar (ROV, speckle and normalisation off): the nearest return is the mine's near face |c − p| − r, in the beam
  of its azimuth in the sonar frame (tilted 15° down); the seabed appears beyond 10 m / sin 25°;
- camera: the pixel onto which the pinhole projects the mine's centre has the colour of Eq. 1 [Song2025] for the
  mine's albedo 0.15 at d = |c − p| − r, with OceanSim's default water.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from test_scenarios_e2e import run_scenario  # noqa: E402  (the `lotusim run` helper)

pytestmark = pytest.mark.ros  # a `lotusim run` of two or three vessels: light enough to share the machine
pytest.importorskip("rosbags")
from recordings import pose_at, read  # noqa: E402

BUOY, BUOY_R = np.array([100.0, 173.205]), 0.5
MINE, MINE_R = np.array([15.0, -100.0, -13.882]), 0.5
MOUNT_RADAR, MOUNT_ROV = np.array([0.0, 0.0, 3.0]), np.array([0.5, 0.0, 0.0])  # base_link FLU (the scenario's FRD)
TILT = math.radians(15.0)


def pixels(msg) -> np.ndarray:
    dtype, channels = {"32FC1": ("<f4", 1), "mono8": ("u1", 1), "rgb8": ("u1", 3)}[msg.encoding]
    a = np.frombuffer(bytes(msg.data), dtype=dtype).reshape(msg.height, msg.width, channels)
    return a[..., 0] if channels == 1 else a


def check_radar(tracks, b_scans, ppis) -> str:
    dr = 926.0 / 256
    for b_msg, p_msg in zip(b_scans, ppis, strict=True):
        b, ppi = pixels(b_msg), pixels(p_msg)
        pos, rot = pose_at(tracks, "ship", b_msg.header.stamp)
        antenna = pos + rot @ MOUNT_RADAR
        yaw = math.atan2(rot[1, 0], rot[0, 0])
        rel = BUOY - antenna[:2]
        bearing = math.degrees(yaw - math.atan2(rel[1], rel[0])) % 360.0  # clockwise from the bow
        rng = float(np.hypot(*rel)) - BUOY_R
        row, col = np.unravel_index(np.argmax(b), b.shape)
        assert b.shape == (360, 256) and abs(row - round(bearing) % 360) <= 1 and abs(col - rng / dr) <= 1.5
        lit = np.flatnonzero(b.any(axis=1))
        assert lit.min() >= row - 4 and lit.max() <= row + 4, lit  # nothing else: no clutter, no coast
        s = 2 * 926.0 / 256
        fwd, stb = rng * math.cos(math.radians(bearing)), rng * math.sin(math.radians(bearing))
        r, c = np.unravel_index(np.argmax(ppi), ppi.shape)
        assert abs((128 - r - 0.5) * s - fwd) <= 2 * s and abs((c + 0.5 - 128) * s - stb) <= 2 * s
    return f"radar: buoy at bearing {bearing:.1f} deg, {rng:.1f} m, B-scan ({row}, {col})"


def sonar_frame(tracks, stamp) -> np.ndarray:
    """The mine's centre in the sonar frame (body FLU at the mount, pitched down by the tilt)."""
    pos, rot = pose_at(tracks, "rov", stamp)
    v = rot.T @ (MINE - (pos + rot @ MOUNT_ROV))
    c, s = math.cos(TILT), math.sin(TILT)
    return np.array([c * v[0] - s * v[2], v[1], s * v[0] + c * v[2]])


def check_sonar(tracks, images) -> str:
    dr, dphi = 29.0 / 256, math.radians(130.0) / 128
    for msg in images:
        image = pixels(msg)
        v = sonar_frame(tracks, msg.header.stamp)
        rng = float(np.linalg.norm(v)) - MINE_R
        beam = (math.radians(65.0) - math.atan2(v[1], v[0])) / dphi
        rows = np.flatnonzero(image.any(axis=1))
        assert abs(rows[0] - (rng - 1.0) / dr) <= 1.5, (rows[0], rng)
        beams = np.flatnonzero(image[rows[0]])
        assert np.all(np.abs(beams + 0.5 - beam) <= 1.5), (beams, beam)
        seabed_row = (10.0 / math.sin(math.radians(25.0)) - 1.0) / dr
        assert image[int(seabed_row) + 2 :].sum() > 0 and not image[rows[0] + 12 : int(seabed_row) - 2].any()
    return f"sonar: mine at {rng:.2f} m (bin {rows[0]}), beam {beam:.1f}"


def check_camera(tracks, images, info) -> str:
    f = 40.0 / math.tan(math.radians(45.0))
    assert list(info.k) == pytest.approx([f, 0, 39.5, 0, f, 29.5, 0, 0, 1])
    for msg in images:
        image = pixels(msg) / 255.0
        pos, rot = pose_at(tracks, "rov", msg.header.stamp)
        v = rot.T @ (MINE - (pos + rot @ MOUNT_ROV))
        u, w = f * -v[1] / v[0] + 39.5, f * -v[2] / v[0] + 29.5
        d = float(np.linalg.norm(v)) - MINE_R
        a, b = math.exp(-0.05 * d), math.exp(-0.2 * d)
        expected = [0.15 * a, 0.15 * a + 0.31 * (1 - a), 0.15 * a + 0.24 * (1 - b)]
        assert image[round(w), round(u)] == pytest.approx(expected, abs=2.0 / 255)
    return f"camera: mine at pixel ({w:.1f}, {u:.1f}), d {d:.2f} m, colour {np.round(expected, 3).tolist()}"


def test_radar_sonar_camera_see_the_buoy_and_the_mine_where_geometry_puts_them(tmp_path, own_domain_env):
    tracks, wall_s = run_scenario("mine_hunt", tmp_path, duration_s=2.5, rtf=1.0, env=dict(own_domain_env))
    rec = tmp_path / "rec"
    b_scans, ppis = read(rec, "/ship/radar/b_scan"), read(rec, "/ship/radar/ppi")
    sonar, fans = read(rec, "/rov/sonar/image"), read(rec, "/rov/sonar/fan")
    camera, infos = read(rec, "/rov/camera/image_raw"), read(rec, "/rov/camera/camera_info")
    # 1 Hz radar, 2 Hz sonar and camera over 2.5 s of sim time, the first at the first fleet state
    assert len(b_scans) >= 2 and len(sonar) >= 4 and len(camera) >= 4 and len(fans) == len(sonar)
    encodings = {m.encoding for m in (b_scans[0], ppis[0], sonar[0], fans[0], camera[0])}
    assert encodings == {"32FC1", "mono8", "rgb8"} and camera[0].header.frame_id.endswith("rov/camera_optical_link")
    assert sonar[0].header.frame_id.endswith("rov/sonar_link") and b_scans[0].header.frame_id.endswith(
        "ship/radar_link"
    )
    lines = [check_radar(tracks, b_scans, ppis), check_sonar(tracks, sonar), check_camera(tracks, camera, infos[0])]
    print(f"\nmine_hunt ({wall_s:.0f} s wall): " + "; ".join(lines))
