"""End to end from the entry point (issue 19): `lotusim run` of a scenario in which a WAM-V, sent by its waypoint
follower to a waypoint on an island of the scenario's world, is stopped at the island's shore by the collisions
(lotusim_physics.collisions), reports it once on /lotusim/collisions (lotusim_interfaces/Collision) and stays
listed in contact in the fleet state's status. Read back from the run's recording; expected values from the
scenario's geometry (the shore at x_east 12 m, the WAM-V's 4.9 m hull: its CO stops 2.45 m short of it)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.ros  # a `lotusim run` of two or three vessels: light enough to share the machine
pytest.importorskip("rosbags")
from rosbags.highlevel import AnyReader  # noqa: E402
from test_scenarios_e2e import run_scenario  # noqa: E402

SHORE_X_M = 12.0  # the island's west shore, x east (m, map)
HALF_LENGTH_M = 4.9 / 2  # the WAM-V's hull box (vehicle file: wind.length_m 4.9 m)
STATUS_CONTACT = 4  # lotusim_interfaces/VesselInfo.STATUS_CONTACT

SCENARIO = f"""
name: collision_shore
description: A WAM-V sent to a waypoint on an island stops at its shore.
seed: 1
world:
  origin: {{latitude_deg: 48.3, longitude_deg: -4.6}}
  bathymetry: {{model: flat, depth_m: 30.0}}
physics: {{step_s: 0.02, mode: realtime, odom_rate_hz: 10.0}}
environment:
  world:
    coast:
      polygons: [[[{SHORE_X_M}, -20.0], [40.0, -20.0], [40.0, 20.0], [{SHORE_X_M}, 20.0]]]
vessels:
  - {{name: usv, model: wamv, pose: {{position: [0.0, 0.0, 0.0], yaw_deg: 0.0}}}}
controllers:
  - {{type: waypoint_follower, vessel: usv, setpoints: {{waypoints: [[30.0, 0.0]]}}}}
recording:
  topics: [/lotusim/fleet_state, /lotusim/collisions]
"""


def _read(record: Path) -> tuple[list, list]:
    """(fleet state rows (t, x, y, status) of the usv, Collision messages) of the run's recording."""
    bags = sorted(record.rglob("*.mcap"))
    states, collisions = [], []
    with AnyReader([bags[0].parent]) as reader:
        for connection, _, raw in reader.messages():
            m = reader.deserialize(raw, connection.msgtype)
            t = m.header.stamp.sec + m.header.stamp.nanosec * 1e-9
            if connection.topic == "/lotusim/collisions":
                collisions.append((t, m))
            elif "usv" in m.names:
                i = list(m.names).index("usv")
                x, y, _ = np.asarray(m.position, dtype=float).reshape(-1, 3)[i]
                states.append((t, x, y, int(np.asarray(m.status)[i])))
    return sorted(states), collisions


def test_a_vessel_driven_at_the_coast_stops_there_and_reports_the_collision(tmp_path, own_domain_env):
    scenario = tmp_path / "collision_shore.yaml"
    scenario.write_text(SCENARIO)
    _, wall_s = run_scenario(str(scenario), tmp_path, duration_s=16.0, rtf=4.0, env=dict(own_domain_env))
    states, collisions = _read(tmp_path / "rec")
    t, x, y, status = (np.array(c) for c in zip(*states, strict=True))
    bow = x + HALF_LENGTH_M
    figures = f"bow at most {bow.max():.3f} m, last {bow[-1]:.3f} m (shore {SHORE_X_M} m); collisions {len(collisions)}"
    assert x[0] < 1.0, figures  # it started at the origin, 9.55 m from the shore
    assert bow.max() < SHORE_X_M + 0.02, figures  # never through the shore (pitch moves the box by millimetres)
    assert bow[-1] > SHORE_X_M - 0.1 and np.abs(y[-1]) < 1.0, figures  # stopped on it, pushing
    assert len(collisions) == 1, figures  # one contact, reported when it began
    t_hit, hit = collisions[0]
    assert (hit.vessel, hit.other, hit.kind) == ("usv", "coast", 1)  # Collision.KIND_COAST
    assert hit.position.x == pytest.approx(SHORE_X_M, abs=0.05)
    assert (hit.normal.x, hit.normal.y, hit.normal.z) == pytest.approx((-1.0, 0.0, 0.0), abs=1e-6)
    assert hit.relative_speed > 0.3
    after = t > t_hit + 0.2
    assert after.any() and np.all(status[after] == STATUS_CONTACT), figures  # listed in contact from then on
    assert np.all(status[t < t_hit - 0.2] == 0), figures
    print(f"{figures}; hit at t={t_hit:.2f} s at {hit.relative_speed:.2f} m/s; run {wall_s:.1f} s wall")
