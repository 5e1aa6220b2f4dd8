"""AIS position reports (ITU-R M.1371-5), batched over vessels.

Report content: WGS84 position (lotusim_core.base.geodesy), speed over ground SOG = |v_horizontal| (m/s), course
over ground COG = atan2(v_east, v_north) (deg clockwise from north), true heading from the attitude
(compass = 90 deg - ENU yaw), rate of turn positive clockwise (= -yaw rate), MMSI and name.
Reporting intervals (ITU-R M.1371-5 Annex 1, Table 1 for class A, Table 2 for class B "CS"):
  class A: at anchor / moored and SOG <= 3 kn: 180 s; 0-14 kn: 10 s (3 1/3 s when changing course);
           14-23 kn: 6 s (2 s when changing course); > 23 kn: 2 s.
  class B (CS): SOG <= 2 kn: 180 s; > 2 kn: 30 s.
"Changing course" is taken as |rate of turn| >= course_change_threshold_dps (a project choice; M.1371 leaves
the detection to the equipment).
"""

from __future__ import annotations

import hashlib

import numpy as np

KNOT_MPS = 1852.0 / 3600.0  # international knot
CLASS_A, CLASS_B = 0, 1
STATUS_AT_ANCHOR, STATUS_MOORED = 1, 5


def report_interval_s(
    ais_class: np.ndarray, sog_mps: np.ndarray, changing_course: np.ndarray, nav_status: np.ndarray
) -> np.ndarray:
    """Seconds until the next position report, per vessel (ITU-R M.1371-5 Tables 1 and 2)."""
    kn = sog_mps / KNOT_MPS
    anchored = (nav_status == STATUS_AT_ANCHOR) | (nav_status == STATUS_MOORED)
    class_a = np.select(
        [anchored & (kn <= 3.0), kn <= 14.0, kn <= 23.0],
        [180.0, np.where(changing_course, 10.0 / 3.0, 10.0), np.where(changing_course, 2.0, 6.0)],
        default=2.0,
    )
    class_b = np.where(kn <= 2.0, 180.0, 30.0)
    return np.where(ais_class == CLASS_A, class_a, class_b)


def course_and_speed(velocity_enu_mps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(SOG m/s, COG deg in [0, 360) clockwise from north) from ENU velocities (N x 3)."""
    sog = np.hypot(velocity_enu_mps[:, 0], velocity_enu_mps[:, 1])
    cog = np.degrees(np.arctan2(velocity_enu_mps[:, 0], velocity_enu_mps[:, 1])) % 360.0
    return sog, cog


def compass_heading_deg(yaw_enu_rad: np.ndarray) -> np.ndarray:
    """True heading (deg, [0, 360), clockwise from north) of an ENU yaw (rad, counter-clockwise from east)."""
    return (90.0 - np.degrees(yaw_enu_rad)) % 360.0


def default_mmsi(name: str) -> int:
    """A deterministic 9-digit MMSI for a simulated vessel without a configured one (not a registered number)."""
    h = int.from_bytes(hashlib.blake2b(name.encode(), digest_size=4).digest(), "little")
    return 200_000_000 + h % 575_000_000  # MID range 2xx-7xx of ITU-R M.585 (ship stations)
