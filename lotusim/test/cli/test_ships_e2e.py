"""End to end from the entry point: `lotusim run ships_brest` as a user runs it (a subprocess: every node, the
controller host, the spawn, the recording). The DTMB 5415, the FREMM, the PHA and the commando boat each follow
their two-leg route under the surface waypoint follower (the ships steered by their rudders): every vessel comes
within the acceptance radius of its first waypoint and then of its second, 45 deg to starboard, within 360 s of sim
time (first run: DTMB 96 / 192 s, FREMM 115 / 219 s, PHA 159 / 285 s, commando boat 40 / 106 s; the ROS-free run
of the same control law in test_ship_waypoints.py gives the same times). Ground truth from the recorded
/lotusim/fleet_state, waypoints converted with pymap3d (not the controllers' helpers).
"""

from __future__ import annotations

import numpy as np
import pymap3d
import pytest

# DDS participants; serial: a large fleet, a long run or the whole machine (run one at a time, Makefile)
pytestmark = [pytest.mark.ros, pytest.mark.serial]
pytest.importorskip("rosbags")
from test_scenarios_e2e import run_scenario  # noqa: E402  (the same runner and recording reader)

from lotusim_core.sim.scenario import load_scenario  # noqa: E402


@pytest.fixture
def run_env(own_domain_env) -> dict:
    return dict(own_domain_env)


def reached(track, lat_deg: float, lon_deg: float, radius_m: float, origin) -> tuple[float, float]:
    """(closest distance m, sim time s of the first sample within radius_m, NaN if never) to a WGS84 waypoint."""
    t, xyz, _ = track
    e, n, _ = pymap3d.geodetic2enu(lat_deg, lon_deg, 0.0, origin.latitude_deg, origin.longitude_deg, 0.0)
    d = np.hypot(xyz[:, 0] - e, xyz[:, 1] - n)
    hits = np.flatnonzero(d <= radius_m)
    return float(d.min()), float(t[hits[0]] - t[0]) if len(hits) else float("nan")


def test_every_ship_reaches_both_waypoints_of_its_route(tmp_path, run_env):
    scenario = load_scenario("ships_brest")
    tracks, wall_s = run_scenario("ships_brest", tmp_path, duration_s=360.0, rtf=20.0, env=run_env)
    lines, failed = [], []
    for c in scenario.controllers:
        sp = c.setpoints
        radius = sp["acceptance_radius_m"]
        times = []
        for k in range(2):
            closest, when = reached(tracks[c.vessel], sp["latitude_deg"][k], sp["longitude_deg"][k], radius,
                                    scenario.world.origin)  # fmt: skip
            times.append(when)
            line = (
                f"{c.vessel}: waypoint {k + 1} closest {closest:.1f} m (radius {radius:g} m), reached at {when:.0f} s"
            )
            (failed if np.isnan(when) else lines).append(line)
        if not np.isnan(times).any() and not times[0] < times[1]:
            failed.append(f"{c.vessel}: waypoint 2 reached before waypoint 1 ({times})")
    print(f"\nships_brest ({wall_s:.0f} s wall):\n" + "\n".join(lines + failed))
    assert not failed, "\n".join(failed)
    assert {scenario.vessel(c.vessel).model for c in scenario.controllers} == {
        "dtmb5415",
        "fremm",
        "pha",
        "commando_boat",
    }
