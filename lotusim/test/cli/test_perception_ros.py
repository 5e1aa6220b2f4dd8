"""LiDARs from the user's entry point: `lotusim run coast_brest` (every node as a process, the real OpenStreetMap
coast of lotusim/config/world/brest_coast.geojson), the scans recorded and read back with rosbags.

Ground truth is the test's own geometry, from the recorded fleet state at each scan's stamp: the sensor's pose
(vessel pose, mount 1.5 m / 0.5 m above the reference point), every returned beam or point taken to `map`, and
- the coast: the straight stretch of shore the WAM-V lies 40 m off (the edge from CA to CB, ENU m); each return in
  the starboard sector (±30° about the beam square to the shore) lies on that line within 6 σ of the range noise
  (the largest of some 2,000 normal errors passes 4 σ one run in eight; 6 σ, once in 10^5 runs);
- the buoy (a vertical cylinder, r 0.5 m, 15 m ahead): the beam nearest its bearing measures the ray-circle
  distance within 6 σ.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_scenarios_e2e import run_scenario  # noqa: E402  (the `lotusim run` helper)

pytestmark = pytest.mark.ros  # a `lotusim run` of two or three vessels: light enough to share the machine
pytest.importorskip("rosbags")
from recordings import pose_at, read  # noqa: E402

CA, CB = np.array([-894.04657752, -1653.19209184]), np.array([-67.60443659, -1333.0177012])  # the shore edge, m
BUOY, BUOY_R = np.array([-481.29, -1450.39]), 0.5
SIGMA_2D, SIGMA_3D = 0.012, 0.03  # the scenario's LiDARs: LMS511 and VLP-16 defaults (docs/sensors.md)


def distance_to_shore(p_xy: np.ndarray) -> np.ndarray:
    """Distance (m) of points (N, 2) to the line through CA and CB."""
    e = (CB - CA) / np.linalg.norm(CB - CA)
    rel = p_xy - CA
    return np.abs(rel[:, 0] * e[1] - rel[:, 1] * e[0])


def test_lidars_see_the_real_coast_and_a_buoy_at_their_distances(tmp_path, own_domain_env):
    tracks, wall_s = run_scenario("coast_brest", tmp_path, duration_s=4.0, rtf=2.0, env=dict(own_domain_env))
    scans = read(tmp_path / "rec", "/usv_scan/scan")
    clouds = read(tmp_path / "rec", "/usv_cloud/points")
    assert len(scans) >= 20 and len(clouds) >= 20  # 10 Hz over 4 s of sim time
    shore_err, buoy_err = [], []
    for scan in scans:
        pos, rot = pose_at(tracks, "usv_scan", scan.header.stamp)
        origin = pos + rot @ np.array([0.0, 0.0, 1.5])
        ranges = np.asarray(scan.ranges, dtype=float)
        angles = scan.angle_min + scan.angle_increment * np.arange(len(ranges))
        dirs = (rot @ np.column_stack([np.cos(angles), np.sin(angles), np.zeros_like(angles)]).T).T
        starboard = np.abs(angles + np.pi / 2) <= np.radians(30.0)
        assert np.all(np.isfinite(ranges[starboard]))  # no dropout configured: every beam sees the shore
        points = origin + ranges[starboard, None] * dirs[starboard]
        shore_err.append(np.max(distance_to_shore(points[:, :2])))
        # the buoy: the beam nearest its bearing, against the ray-circle distance
        c = BUOY - origin[:2]
        i = int(np.argmin(np.abs(np.angle(np.exp(1j * (np.arctan2(dirs[:, 1], dirs[:, 0]) - np.arctan2(*c[::-1])))))))
        d = dirs[i, :2] / np.linalg.norm(dirs[i, :2])
        b = d @ c
        expect = (b - np.sqrt(b * b - (c @ c - BUOY_R**2))) / np.linalg.norm(dirs[i, :2])
        buoy_err.append(abs(ranges[i] - expect))
    assert max(shore_err) < 6 * SIGMA_2D, f"shore: {max(shore_err):.4f} m"
    assert max(buoy_err) < 6 * SIGMA_2D, f"buoy: {max(buoy_err):.4f} m"
    # the 3-D LiDAR's points on the shore, in its sensor frame (x y z intensity float32)
    cloud_err, counts = [], []
    for cloud in clouds:
        assert [f.name for f in cloud.fields] == ["x", "y", "z", "intensity"] and cloud.point_step == 16
        pts = np.frombuffer(bytes(cloud.data), dtype="<f4").reshape(-1, 4).astype(float)
        pos, rot = pose_at(tracks, "usv_cloud", cloud.header.stamp)
        azimuth = np.arctan2(pts[:, 1], pts[:, 0])
        side = np.abs(azimuth + np.pi / 2) <= np.radians(30.0)
        world = pos + (rot @ (pts[side, :3] + [0.0, 0.0, 0.5]).T).T
        assert np.all(pts[side, 2] > 0.0)  # only the upward channels
        counts.append(int(side.sum()))
        cloud_err.append(np.max(distance_to_shore(world[:, :2])))
    # 0.5 m above the sea, the channels at -1° and below meet the water (at 0.5 m / tan 1° = 28.6 m) before the
    # shore (40 m): no return; the 8 channels from +1° to +15° reach the 20 m cliff (at 15°: 12.8 m up at 46 m):
    # 8 × 61 azimuths in the ±30° sector, give or take the sector's edge beams
    assert min(counts) >= 8 * 58 and max(counts) <= 8 * 62, counts
    assert max(cloud_err) < 6 * SIGMA_3D, f"3-D shore: {max(cloud_err):.4f} m"
    print(
        f"\ncoast_brest ({wall_s:.0f} s wall): {len(scans)} scans, shore within {max(shore_err) * 1e3:.1f} mm, "
        f"buoy within {max(buoy_err) * 1e3:.1f} mm; {len(clouds)} clouds, shore within {max(cloud_err) * 1e3:.1f} mm"
    )
