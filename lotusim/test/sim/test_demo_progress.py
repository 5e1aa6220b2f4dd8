"""lotusim_core.sim.demo_progress: the demo's per-controller aggregation of status arrays (ROS-free)."""

import pytest

from lotusim_core.sim.demo_progress import AUTOPILOT, STATION, WAYPOINTS, FleetProgress


def test_waypoints_reached_count_index_advances_and_loop_wrap():
    p = FleetProgress({WAYPOINTS: 3})
    # stamp_s, index, count, distance_m, cross_track_m, done
    for row in ([0.0, 0, 4, 40.0, 1.0, 0], [1.0, 0, 4, 30.0, -2.0, 0], [2.0, 1, 4, 150.0, 0.5, 0],
                [3.0, 2, 4, 100.0, 3.0, 0], [4.0, 3, 4, 90.0, -4.0, 0], [5.0, 0, 4, 80.0, 0.2, 0]):  # fmt: skip
        p.add(WAYPOINTS, "wamv_1", row)
    p.add(WAYPOINTS, "kayak_1", [0.0, 0, 4, 20.0, -6.0, 0])
    u = p.usv()
    assert u["vessels"] == 2
    assert (u["reached_min"], u["reached_max"], u["reached_total"], u["with_one_reached"]) == (0, 4, 4, 1)
    assert u["cross_track_median_m"] == pytest.approx(3.1)  # |0.2| and |-6.0|
    assert u["cross_track_max_m"] == pytest.approx(6.0)
    assert "USVs 2/3: 1 reached a waypoint (4 in all)" in p.line()


def test_last_waypoint_done_counts_once():
    p = FleetProgress()
    p.add(WAYPOINTS, "usv", [0.0, 1, 2, 5.0, 0.0, 0])
    p.add(WAYPOINTS, "usv", [1.0, 1, 2, 2.0, 0.0, 1])
    p.add(WAYPOINTS, "usv", [2.0, 1, 2, 2.0, 0.0, 1])
    assert p.usv()["reached_total"] == 1


def test_autopilot_errors_wrap_heading():
    p = FleetProgress({AUTOPILOT: 2})
    # stamp_s, depth_m, depth_ref_m, pitch_d_deg, heading_deg, heading_ref_deg, delta_q_rad, delta_r_rad
    p.add(AUTOPILOT, "lrauv_0", [9.0, 20.3, 20.0, 0.0, 268.0, 270.0, 0.0, 0.0])
    p.add(AUTOPILOT, "remus_1", [9.0, 9.1, 10.0, 0.0, 359.0, 3.0, 0.0, 0.0])  # 4 deg across north
    a = p.auv()
    assert a["depth_error_median_m"] == pytest.approx(0.6)
    assert a["depth_error_max_m"] == pytest.approx(0.9)
    assert a["heading_error_median_deg"] == pytest.approx(3.0)
    assert a["heading_error_max_deg"] == pytest.approx(4.0)


def test_station_keepers_and_table():
    p = FleetProgress({STATION: 2, AUTOPILOT: 1})
    # stamp_s, waypoint_index, waypoint_count, horizontal_error_m, depth_m, depth_error_m, heading_deg,
    # heading_error_deg, done
    p.add(STATION, "bluerov_0", [3.0, 0, 0, 0.10, 10.05, 0.05, 1.0, 1.0, 0])
    p.add(STATION, "bluerov_1", [3.0, 0, 0, 0.30, 9.8, -0.2, 358.0, -2.5, 0])
    p.add(STATION, "bluerov_1", [3.0, 0])  # too short: ignored
    r = p.rov()
    assert r["vessels"] == 2
    assert r["horizontal_error_median_m"] == pytest.approx(0.2)
    assert r["horizontal_error_max_m"] == pytest.approx(0.3)
    assert r["depth_error_max_m"] == pytest.approx(0.2)
    assert r["heading_error_max_deg"] == pytest.approx(2.5)
    assert p.auv() is None and p.usv() is None
    table = p.table()
    assert "station_keeper" in table and "2/2" in table and "off station median 0.20 m max 0.30 m" in table
    assert "ROVs 2/2: off station med 0.20 max 0.30 m" in p.line()
