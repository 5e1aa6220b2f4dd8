"""Per-controller progress of a running fleet, from the controllers' standard status topics (ROS-free).

Inputs are the `data` arrays of the Float64MultiArray status messages (docs/autonomy.md):
  waypoint_follower        `<vessel>/waypoints/status`      stamp_s,index,count,distance_m,cross_track_m,done
  depth_heading_autopilot  `<vessel>/autopilot/status`      stamp_s,depth_m,depth_ref_m,pitch_d_deg,heading_deg,
                                                            heading_ref_deg,delta_q_rad,delta_r_rad
  station_keeper           `<vessel>/station_keeper/status` stamp_s,waypoint_index,waypoint_count,
                                                            horizontal_error_m,depth_m,depth_error_m,heading_deg,
                                                            heading_error_deg,done
Errors are to the references the controllers report (the autopilot's filtered depth and heading references, the
station keeper's station); depths in m positive down, headings compass deg, errors as absolute values.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

WAYPOINTS, AUTOPILOT, STATION = "waypoint_follower", "depth_heading_autopilot", "station_keeper"
STATUS_TOPICS = {WAYPOINTS: "waypoints/status", AUTOPILOT: "autopilot/status", STATION: "station_keeper/status"}


def _wrap_deg(a: np.ndarray) -> np.ndarray:
    return (np.asarray(a) + 180.0) % 360.0 - 180.0


def _stats(values: np.ndarray) -> str:
    return f"median {np.median(values):.2f} max {np.max(values):.2f}"


class FleetProgress:
    """The latest status per vessel and controller type, plus the number of waypoints each USV has reached
    (an advance of its active waypoint index, including the wrap of a looping route)."""

    def __init__(self, expected: dict[str, int] | None = None) -> None:
        self.expected = dict(expected or {})  # controller type -> number of vessels under it
        self.latest: dict[str, dict[str, np.ndarray]] = {WAYPOINTS: {}, AUTOPILOT: {}, STATION: {}}
        self.reached: dict[str, int] = {}

    def add(self, kind: str, vessel: str, data: Sequence[float]) -> None:
        """One status message of `vessel`'s controller of type `kind`; a short or unknown one is ignored."""
        row = np.asarray(data, dtype=float)
        if kind not in self.latest or row.size < {WAYPOINTS: 6, AUTOPILOT: 6, STATION: 9}[kind]:
            return
        if kind == WAYPOINTS:
            before = self.latest[WAYPOINTS].get(vessel)
            self.reached.setdefault(vessel, 0)
            if before is not None and (row[1] != before[1] or (row[5] > 0.5 and before[5] < 0.5)):
                self.reached[vessel] += 1
        self.latest[kind][vessel] = row

    def _rows(self, kind: str) -> np.ndarray:
        rows = list(self.latest[kind].values())
        return np.array(rows) if rows else np.zeros((0, 9))

    def usv(self) -> dict | None:
        rows = self._rows(WAYPOINTS)
        if not len(rows):
            return None
        reached = np.array([self.reached[v] for v in self.latest[WAYPOINTS]])
        return {
            "vessels": len(rows),
            "reached_min": int(reached.min()),
            "reached_max": int(reached.max()),
            "reached_total": int(reached.sum()),
            "with_one_reached": int((reached >= 1).sum()),
            "distance_median_m": float(np.median(rows[:, 3])),
            "cross_track_median_m": float(np.median(np.abs(rows[:, 4]))),
            "cross_track_max_m": float(np.max(np.abs(rows[:, 4]))),
        }

    def auv(self) -> dict | None:
        rows = self._rows(AUTOPILOT)
        if not len(rows):
            return None
        depth = np.abs(rows[:, 1] - rows[:, 2])
        heading = np.abs(_wrap_deg(rows[:, 4] - rows[:, 5]))
        return {
            "vessels": len(rows),
            "depth_error_median_m": float(np.median(depth)),
            "depth_error_max_m": float(np.max(depth)),
            "heading_error_median_deg": float(np.median(heading)),
            "heading_error_max_deg": float(np.max(heading)),
        }

    def rov(self) -> dict | None:
        rows = self._rows(STATION)
        if not len(rows):
            return None
        return {
            "vessels": len(rows),
            "horizontal_error_median_m": float(np.median(rows[:, 3])),
            "horizontal_error_max_m": float(np.max(rows[:, 3])),
            "depth_error_max_m": float(np.max(np.abs(rows[:, 5]))),
            "heading_error_max_deg": float(np.max(np.abs(_wrap_deg(rows[:, 7])))),
        }

    def _of(self, kind: str, n: int) -> str:
        total = self.expected.get(kind)
        return f"{n}/{total}" if total else f"{n}"

    def line(self) -> str:
        """One compact progress line."""
        parts = []
        if (u := self.usv()) is not None:
            parts.append(
                f"USVs {self._of(WAYPOINTS, u['vessels'])}: {u['with_one_reached']} reached a waypoint "
                f"({u['reached_total']} in all), cross-track med {u['cross_track_median_m']:.1f} m"
            )
        if (a := self.auv()) is not None:
            parts.append(
                f"AUVs {self._of(AUTOPILOT, a['vessels'])}: depth err med {a['depth_error_median_m']:.2f} "
                f"max {a['depth_error_max_m']:.2f} m, heading err med {a['heading_error_median_deg']:.1f} "
                f"max {a['heading_error_max_deg']:.1f} deg"
            )
        if (r := self.rov()) is not None:
            parts.append(
                f"ROVs {self._of(STATION, r['vessels'])}: off station med {r['horizontal_error_median_m']:.2f} "
                f"max {r['horizontal_error_max_m']:.2f} m"
            )
        return "; ".join(parts) if parts else "no controller status yet"

    def table(self) -> str:
        """The final per-controller table (one row per controller type)."""
        rows = [("controller", "vessels", "result")]
        if (u := self.usv()) is not None:
            rows.append(
                (
                    WAYPOINTS,
                    self._of(WAYPOINTS, u["vessels"]),
                    f"waypoints reached per USV {u['reached_min']}-{u['reached_max']} ({u['reached_total']} in "
                    f"all, {u['with_one_reached']} USVs >= 1); |cross-track| median "
                    f"{u['cross_track_median_m']:.1f} m max {u['cross_track_max_m']:.1f} m",
                )
            )
        if (a := self.auv()) is not None:
            rows.append(
                (
                    AUTOPILOT,
                    self._of(AUTOPILOT, a["vessels"]),
                    f"|depth error| median {a['depth_error_median_m']:.2f} m max {a['depth_error_max_m']:.2f} m; "
                    f"|heading error| median {a['heading_error_median_deg']:.1f} deg max "
                    f"{a['heading_error_max_deg']:.1f} deg",
                )
            )
        if (r := self.rov()) is not None:
            rows.append(
                (
                    STATION,
                    self._of(STATION, r["vessels"]),
                    f"off station median {r['horizontal_error_median_m']:.2f} m max "
                    f"{r['horizontal_error_max_m']:.2f} m; |depth error| max {r['depth_error_max_m']:.2f} m; "
                    f"|heading error| max {r['heading_error_max_deg']:.1f} deg",
                )
            )
        w0 = max(len(r[0]) for r in rows)
        w1 = max(len(r[1]) for r in rows)
        return "\n".join(f"  {a:<{w0}}  {b:>{w1}}  {c}" for a, b, c in rows)
