"""Waypoint guidance for surface vessels, in the `map` frame (ENU, metres; course angles counter-clockwise from
east, rad).

Course: lookahead-based line-of-sight (LOS) steering along the straight segment from the previous waypoint
p_k to the active one p_k+1 (Fossen 2021 sec. 12.4.2, eqs. 12.74-12.80):
    pi_p = atan2(y_k+1 - y_k, x_k+1 - x_k)                          path-tangential angle
    e    = -(x - x_k) sin pi_p + (y - y_k) cos pi_p                 cross-track error (> 0: left of the path)
    s    =  (x - x_k) cos pi_p + (y - y_k) sin pi_p                 along-track distance
    chi_d = pi_p - atan(e / Delta)                                 Delta > 0: lookahead distance
Switching: the circle of acceptance, |p - p_k+1| <= R (Fossen 2021 sec. 12.4.1; LOTUSim range_tolerance). A vessel
that passes a waypoint outside its circle (s beyond the segment) steers straight back at it.

Speed, the two guidance modes of LOTUSim's waypoint follower ([Buche2025] code, systems/waypoint_follower), with
dt the sim time between two odometry messages (the anchor's bug, yaw integrated with milliseconds as seconds, cannot
happen: every rate here is per second of sim time):
  - "pid":       u_d = sat(Kp d + Ki int d + Kd d_dot) max(cos alpha, 0), d the distance to the waypoint and
                 alpha the bearing error ([SaldarriagaMesa2025] sec. 5.2: u = k_p |xi~|, gated by the
                 heading error);
  - "bang_bang": u_d = u_max unless the stopping distance u^2 / (2 a_max) reaches d, then u_min (or 0 before the
                 last waypoint); 0 while |alpha| >= 90 deg.
Both are capped so that the waypoint stays reachable with the turn rate r_max of the heading loop: the circle
tangent to the course through the waypoint has radius d / (2 |sin alpha|) (chord geometry), so
u_d <= r_max d / (2 |sin alpha|) (a vessel faster than that circles the waypoint), and both are slewed by the
acceleration limit a_max (m/s^2). A vessel steered by rudders (the ships) keeps u_d >= u_steer on an active route:
at rest its rudder has no authority (it could not turn towards a waypoint behind it).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from lotusim_autonomy.pid import Pid, ssa

GUIDANCE_MODES = ("pid", "bang_bang")


def los_course(p_xy, p_from_xy, p_to_xy, lookahead_m: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(chi_d, cross_track_e, along_track_s) for positions p (..., 2) and segments from -> to (..., 2), ENU."""
    p, a, b = (np.asarray(v, dtype=float) for v in (p_xy, p_from_xy, p_to_xy))
    seg = b - a
    pi_p = np.arctan2(seg[..., 1], seg[..., 0])
    dx, dy = p[..., 0] - a[..., 0], p[..., 1] - a[..., 1]
    e = -dx * np.sin(pi_p) + dy * np.cos(pi_p)
    s = dx * np.cos(pi_p) + dy * np.sin(pi_p)
    return ssa(pi_p - np.arctan(e / lookahead_m)), e, s


def bang_bang_speed(u, distance_m, alpha_rad, u_max: float, u_min: float, a_max: float, last: bool) -> float:
    """LOTUSim bang-bang linear guidance: full speed unless the stopping distance reaches the waypoint."""
    if u * u / (2.0 * a_max) >= distance_m:
        return 0.0 if last else u_min
    return u_max if abs(alpha_rad) < np.pi / 2 else 0.0


def slew(value: float, target: float, rate: float, h: float) -> float:
    """Move `value` towards `target` by at most rate * h."""
    return float(np.clip(target, value - rate * h, value + rate * h))


@dataclass
class WaypointStatus:
    index: int
    count: int
    distance_m: float
    cross_track_m: float
    done: bool


@dataclass
class WaypointGuidance:
    """Route (ENU waypoints), active index, and the speed/course references of one vessel."""

    mode: str = "pid"
    acceptance_radius_m: float = 3.0
    lookahead_m: float = 10.0
    u_max: float = 1.5
    u_min: float = 0.2
    a_max: float = 0.2
    turn_rate_max_rad_s: float = np.radians(10.0)
    u_steer: float = 0.0  # floor of u_d on an active route: a vessel steered by rudders needs way on to turn
    speed_pid: Pid = field(default_factory=lambda: Pid(0.5, 0.05, 0.1))  # LOTUSim linear_pid defaults
    loop: bool = False
    waypoints: np.ndarray = field(default_factory=lambda: np.zeros((0, 2)))
    start_xy: np.ndarray = field(default_factory=lambda: np.zeros(2))
    index: int = 0
    done: bool = True
    u_ref: float = 0.0
    reached: list = field(default_factory=list)  # (index, sim time s) of each waypoint reached

    def __post_init__(self) -> None:
        if self.mode not in GUIDANCE_MODES:
            raise ValueError(f"guidance mode: expected one of {GUIDANCE_MODES}, got {self.mode!r}")

    def set_route(self, waypoints_xy, start_xy, loop: bool = False) -> None:
        """New route from the vessel's current position: the first leg starts at start_xy."""
        self.waypoints = np.asarray(waypoints_xy, dtype=float).reshape(-1, 2)
        self.start_xy = np.asarray(start_xy, dtype=float).reshape(2)
        self.index, self.loop, self.done = 0, loop, len(self.waypoints) == 0
        self.reached = []
        self.speed_pid.reset()

    def _segment(self) -> tuple[np.ndarray, np.ndarray]:
        to = self.waypoints[self.index]
        if self.index > 0:
            return self.waypoints[self.index - 1], to
        if self.loop and self.reached:
            return self.waypoints[-1], to
        return self.start_xy, to

    def update(self, p_xy, u: float, course_rad: float, t_s: float, h: float) -> tuple[float, float, WaypointStatus]:
        """(u_d m/s, chi_d rad ENU, status) for position p_xy, surge speed u, course/heading (ENU yaw)."""
        if self.done:
            self.u_ref = 0.0
            return 0.0, course_rad, self.status(p_xy)
        p = np.asarray(p_xy, dtype=float)
        for _ in range(len(self.waypoints)):  # bounded: a looping route all inside one circle must not hang
            if np.hypot(*(self.waypoints[self.index] - p)) > self.acceptance_radius_m:
                break
            self.reached.append((self.index, t_s))
            self.speed_pid.reset()
            if self.index + 1 < len(self.waypoints):
                self.index += 1
            elif self.loop:
                self.index = 0
            else:
                self.done, self.u_ref = True, 0.0
                return 0.0, course_rad, self.status(p_xy)
        a, b = self._segment()
        if np.allclose(a, b):
            a = p  # a zero-length leg: steer straight at the waypoint
        chi_d, _, s_along = los_course(p, a, b, self.lookahead_m)
        d = float(np.hypot(*(b - p)))
        if s_along >= np.hypot(*(b - a)):  # past the waypoint outside its circle: turn back towards it
            chi_d = np.arctan2(b[1] - p[1], b[0] - p[0])
        alpha = float(ssa(np.arctan2(b[1] - p[1], b[0] - p[0]) - course_rad))
        last = self.index == len(self.waypoints) - 1 and not self.loop
        if self.mode == "pid":
            target = float(np.clip(self.speed_pid.step(d, h), 0.0, self.u_max)) * max(np.cos(alpha), 0.0)
        else:
            target = bang_bang_speed(u, d, alpha, self.u_max, self.u_min, self.a_max, last)
        sin_a = abs(np.sin(alpha))
        if sin_a > 1e-6:
            target = min(target, self.turn_rate_max_rad_s * d / (2.0 * sin_a))
        target = max(target, self.u_steer)
        self.u_ref = slew(self.u_ref, target, self.a_max, h)
        return self.u_ref, float(chi_d), self.status(p_xy)

    def status(self, p_xy) -> WaypointStatus:
        n = len(self.waypoints)
        if n == 0:
            return WaypointStatus(0, 0, 0.0, 0.0, True)
        i = min(self.index, n - 1)
        a, b = self._segment()
        p = np.asarray(p_xy, dtype=float)
        e = 0.0 if np.allclose(a, b) else float(los_course(p, a, b, self.lookahead_m)[1])
        return WaypointStatus(i, n, float(np.hypot(*(b - p))), e, self.done)
