"""The four USV controllers of [SaldarriagaMesa2025] sec. 5, as ROS-free laws for a differential-thrust surface
vessel (kayak USV, WAM-V); their ROS wiring is usv_controller.py.

Velocity (sec. 5.1), body FRD, on the 3-DOF model of usv_model.py:
    nu_ref_dot = (nu_ref[k] - nu_ref[k-1]) / h,   gamma = nu_ref_dot + K (nu_ref - nu),
    tau = M gamma + C(nu) nu + D(nu) nu,          then (tau_X, tau_N) -> thrusts -> commands
by allocation.DifferentialThrustAllocation (least-norm T = B_2^+ tau: for two thrusters T_L,R = (tau_u -+
tau_r / (d/2)) / 2 of the paper; yaw priority under the limits; the inverse thrust curve). A sway force cannot
be made by the two fore-aft thrust lines: K_v and tau_Y play no part (the paper's K = diag(10, 0, 15)).

The guidance laws work in the `map` frame (ENU, m) with the yaw psi counter-clockwise from east, as the paper's
planar frame, and give (u_ref m/s, omega_ref rad/s counter-clockwise = FLU yaw rate); r_ref (FRD) = -omega_ref.
  - position (sec. 5.2): e = xi_d - xi, psi_d = atan2(e_y, e_x), psi~ = ssa(psi_d - psi),
    u = k_p |e| (here times max(cos psi~, 0), so that it turns towards a goal behind it before moving, and
    at most r_max |e| / (2 |sin psi~|), the speed whose turning circle at r_max still passes through the goal:
    without it the vessel orbits the goal),
    omega = k_psi psi~, each saturated; zero inside the stop radius (0.15 m in the paper);
  - trajectory tracking (sec. 5.3) of the control point h = xi + a [cos psi, sin psi] (a: the look-ahead,
    "look-side" distance): eta_dot_c = eta_dot_ref + K (eta_ref - h),
        [u, omega] = [[cos psi, sin psi], [-sin psi / a, cos psi / a]] eta_dot_c
    (the exact inverse of h_dot = [[cos psi, -a sin psi], [sin psi, a cos psi]] [u, omega]); the reference of h
    is eta_ref + a eta_dot_ref / |eta_dot_ref| (a ahead of the reference along its velocity), so that the vessel
    itself, not a point a ahead of it, is on the trajectory;
  - path following (sec. 5.4): the same law with eta_ref = eta_p(s*), s* = argmin_s |eta_p(s) - h| (the
    closest point of the path, searched from the last one forward), eta_dot_ref = U t(s*) (t the unit tangent).
At the end of a trajectory or path the position law takes the vessel to its last point and stops it there.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from lotusim_autonomy.allocation import DifferentialThrustAllocation
from lotusim_autonomy.pid import ssa
from lotusim_autonomy.usv_model import Usv3Dof
from lotusim_core.base.vehicle_spec import VehicleSpec


@dataclass(frozen=True)
class UsvGains:
    """Gains and limits of the USV laws (defaults: the paper's where it gives them)."""

    k_u: float = 2.0  # velocity loop, 1/s (the paper's 10 at 50 Hz; 2 keeps a 10 Hz loop with 0.1 s thrust lag calm)
    k_r: float = 3.0  # velocity loop, 1/s (the paper's 15 at 50 Hz)
    k_p: float = 0.8  # position law, 1/s (iacquabotsim position controller, [SaldarriagaMesa2025] sec. 5.2)
    k_psi: float = 1.5  # position law, 1/s
    stop_radius_m: float = 0.15  # [SaldarriagaMesa2025] sec. 5.2
    k_track: float = 0.5  # trajectory / path feedback K, 1/s
    lookahead_m: float = 0.0  # a; 0: half the hull length of the vehicle file
    speed_fraction: float = 0.8  # u_max = this x the steady speed at full forward thrust (vehicle file)
    yaw_rate_fraction: float = 0.6  # r_max = this x the steady yaw rate at full differential thrust


class UsvVelocityLaw:
    """nu_ref = [u, v, r] (FRD) -> thruster commands of one vessel, the PD-feed-forward law of sec. 5.1."""

    def __init__(self, model: Usv3Dof, allocation: DifferentialThrustAllocation, k_u: float, k_r: float) -> None:
        self.model = model
        self.allocation = allocation
        self.k = np.array([k_u, 0.0, k_r])
        self._nu_ref_prev: np.ndarray | None = None
        self.last_tau = np.zeros(3)

    def reset(self) -> None:
        self._nu_ref_prev = None

    def wrench(self, nu, nu_ref, nu_ref_dot) -> np.ndarray:
        """tau = M (nu_ref_dot + K (nu_ref - nu)) + C(nu) nu + D(nu) nu, (..., 3) FRD."""
        nu = np.asarray(nu, dtype=float)
        gamma = np.asarray(nu_ref_dot, dtype=float) + self.k * (np.asarray(nu_ref, dtype=float) - nu)
        return self.model.tau(nu, gamma)

    def step(self, nu, nu_ref, h: float) -> np.ndarray:
        """Thruster commands for body velocity nu and reference nu_ref ([u, v, r] FRD), control step h (s)."""
        ref = np.asarray(nu_ref, dtype=float)
        prev = ref if self._nu_ref_prev is None or h <= 0.0 else self._nu_ref_prev
        ref_dot = (ref - prev) / h if h > 0.0 else np.zeros(3)
        self._nu_ref_prev = ref.copy()
        tau = self.wrench(nu, ref, ref_dot)
        self.last_tau = tau
        return self.allocation.commands(float(tau[0]), float(tau[2]))

    def stop(self) -> np.ndarray:
        self.reset()
        return np.zeros(len(self.allocation.curves))


@dataclass(frozen=True)
class UsvLimits:
    u_max_mps: float
    r_max_rad_s: float
    lookahead_m: float


def usv_limits(spec: VehicleSpec, model: Usv3Dof, allocation: DifferentialThrustAllocation, g: UsvGains) -> UsvLimits:
    """Speed and yaw-rate limits from the vehicle file: fractions of the steady surge speed at full forward thrust
    and of the steady yaw rate at full differential thrust (model damping, thruster limits and geometry); the
    look-ahead a from the hull length (waterline length of the wind block, else sqrt of the waterplane)."""
    x_max = float(np.sum(allocation.t_max))
    n_max = float(np.sum(np.abs(allocation.b[1]) * np.minimum(allocation.t_max, -allocation.t_min)))
    a = g.lookahead_m
    if a <= 0.0:
        length = spec.wind.length_m if spec.wind is not None else math.sqrt(spec.surface.waterplane_area_m2)
        a = 0.5 * length
    return UsvLimits(
        g.speed_fraction * model.steady_speed(x_max, 0),
        g.yaw_rate_fraction * model.steady_speed(n_max, 2),
        a,
    )


def position_law(p_xy, yaw: float, goal_xy, g: UsvGains, lim: UsvLimits) -> tuple[float, float, float, bool]:
    """(u_ref m/s, omega_ref rad/s CCW, distance m, inside) towards goal_xy (map ENU), sec. 5.2."""
    e = np.asarray(goal_xy, dtype=float) - np.asarray(p_xy, dtype=float)
    d = float(math.hypot(e[0], e[1]))
    if d <= g.stop_radius_m:
        return 0.0, 0.0, d, True
    psi_err = float(ssa(math.atan2(e[1], e[0]) - yaw))
    u = min(g.k_p * d, lim.u_max_mps) * max(math.cos(psi_err), 0.0)
    sin_e = abs(math.sin(psi_err))
    if sin_e > 1e-6:  # the turning circle through the goal, radius d / (2 |sin psi~|), must be within reach
        u = min(u, TURN_MARGIN * lim.r_max_rad_s * d / (2.0 * sin_e))
    w = float(np.clip(g.k_psi * psi_err, -lim.r_max_rad_s, lim.r_max_rad_s))
    return u, w, d, False


def lookahead_law(p_xy, yaw: float, eta_ref, eta_ref_dot, g: UsvGains, lim: UsvLimits) -> tuple[float, float]:
    """(u_ref, omega_ref) that move the control point h = p + a [cos yaw, sin yaw] along eta_ref (sec. 5.3)."""
    c, s = math.cos(yaw), math.sin(yaw)
    a = lim.lookahead_m
    h = np.asarray(p_xy, dtype=float) + a * np.array([c, s])
    v = np.asarray(eta_ref_dot, dtype=float) + g.k_track * (np.asarray(eta_ref, dtype=float) - h)
    u = c * v[0] + s * v[1]
    w = (-s * v[0] + c * v[1]) / a
    return float(np.clip(u, -0.5 * lim.u_max_mps, lim.u_max_mps)), float(np.clip(w, -lim.r_max_rad_s, lim.r_max_rad_s))


def control_point(p_xy, yaw: float, lim: UsvLimits) -> np.ndarray:
    """h = p + a [cos yaw, sin yaw], map ENU."""
    return np.asarray(p_xy, dtype=float) + lim.lookahead_m * np.array([math.cos(yaw), math.sin(yaw)])


class PolylineReference:
    """A path (points, map ENU) or a trajectory (points with times): the reference eta_ref, eta_dot_ref of the
    tracking and path-following laws at a time or for a control point."""

    def __init__(self, points_xy, times_s=None, speed_mps: float = 0.5) -> None:
        pts = np.asarray(points_xy, dtype=float).reshape(-1, 2)
        if len(pts) < 1 or not np.all(np.isfinite(pts)):
            raise ValueError(f"path: expected at least one finite point [x, y], got {len(pts)}")
        self.points = pts
        seg = np.diff(pts, axis=0)
        self.seg_len = np.hypot(seg[:, 0], seg[:, 1])
        keep = self.seg_len > 1e-9
        self.seg_from, self.seg = pts[:-1][keep], seg[keep]
        self.seg_len = self.seg_len[keep]
        self.s0 = np.concatenate([[0.0], np.cumsum(self.seg_len)])  # arc length at each segment's start
        self.length_m = float(self.s0[-1])
        self.times = None if times_s is None else np.asarray(times_s, dtype=float).reshape(-1)
        if self.times is not None and (len(self.times) != len(pts) or np.any(np.diff(self.times) <= 0.0)):
            raise ValueError("trajectory: expected one increasing time per point")
        self.speed_mps = float(speed_mps)
        self.s = 0.0  # progress along the path (path following)

    @property
    def end(self) -> np.ndarray:
        return self.points[-1]

    def at_time(self, t_s: float) -> tuple[np.ndarray, np.ndarray, bool]:
        """Trajectory: (eta_ref, eta_dot_ref, finished) at time t_s, linear between the samples."""
        t = self.times
        if t_s >= t[-1]:
            return self.points[-1], np.zeros(2), True
        if t_s <= t[0]:
            return self.points[0], np.zeros(2), False
        k = int(np.searchsorted(t, t_s, side="right")) - 1
        rate = (self.points[k + 1] - self.points[k]) / (t[k + 1] - t[k])
        return self.points[k] + rate * (t_s - t[k]), rate, False

    def project(self, h_xy, window_m: float) -> tuple[np.ndarray, np.ndarray, float]:
        """Path following: (eta_ref = the closest point of the path to h with arc length in [s - 1 m, s + window],
        the unit tangent there, the distance |eta_ref - h|); advances the progress s."""
        if len(self.seg) == 0:
            return self.points[-1], np.zeros(2), float(np.hypot(*(self.points[-1] - h_xy)))
        h = np.asarray(h_xy, dtype=float)
        lam = np.clip(np.einsum("ij,ij->i", h - self.seg_from, self.seg) / self.seg_len**2, 0.0, 1.0)
        foot = self.seg_from + lam[:, None] * self.seg
        s = self.s0[:-1] + lam * self.seg_len
        dist = np.hypot(*(foot - h).T)
        dist = np.where((s >= self.s - 1.0) & (s <= self.s + window_m), dist, np.inf)
        i = len(dist) - 1 - int(np.argmin(dist[::-1]))  # a corner is the foot on both its legs: take the next leg
        if not np.isfinite(dist[i]):  # nothing in the window (jumped far away): the closest point overall
            i = int(np.argmin(np.hypot(*(foot - h).T)))
        self.s = max(self.s, float(s[i]))
        return foot[i], self.seg[i] / self.seg_len[i], float(np.hypot(*(foot[i] - h)))


def cross_track_m(points_xy, p_xy) -> np.ndarray:
    """Distance (m) of positions p (N, 2) to a polyline (K, 2): the path-following error."""
    pts = np.asarray(points_xy, dtype=float)
    p = np.asarray(p_xy, dtype=float).reshape(-1, 2)
    a, seg = pts[:-1], np.diff(pts, axis=0)
    l2 = np.maximum(np.einsum("ij,ij->i", seg, seg), 1e-18)
    lam = np.clip(np.einsum("nkj,kj->nk", p[:, None, :] - a[None], seg) / l2, 0.0, 1.0)
    foot = a[None] + lam[..., None] * seg[None]
    return np.min(np.hypot(*(foot - p[:, None, :]).transpose(2, 0, 1)), axis=1)


COURSE_MIN_SPEED_MPS = 0.3  # below it the sideslip angle fades out (an ill-defined course at rest)
TURN_MARGIN = 0.5  # of the turning-circle speed cap of the position law (the yaw loop lags)
MODES = ("idle", "velocity", "position", "trajectory", "path")


@dataclass
class UsvStatus:
    mode: str
    u_ref: float  # m/s
    r_ref: float  # rad/s FRD
    distance_m: float  # to the goal / end of the path or trajectory (0 in velocity mode)
    path_error_m: float  # |eta_ref - h| of the tracking laws (0 otherwise)
    done: bool


class UsvAutopilot:
    """One vessel's USV controller: the set-point of the last command (velocity, goal, trajectory or path) and
    the laws above, stepped with the vessel's state. Guidance in map ENU, velocity law in body FRD."""

    def __init__(self, spec: VehicleSpec, gains: UsvGains | None = None, model: Usv3Dof | None = None) -> None:
        self.gains = g = gains or UsvGains()
        self.model = model or Usv3Dof.from_spec(spec)
        allocation = DifferentialThrustAllocation(spec.thrusters, spec.water_density_kgm3)
        self.velocity = UsvVelocityLaw(self.model, allocation, g.k_u, g.k_r)
        self.limits = usv_limits(spec, self.model, allocation, g)
        self.mode = "idle"
        self.nu_ref = np.zeros(3)
        self.goal: np.ndarray | None = None
        self.reference: PolylineReference | None = None
        self.t0_s = 0.0
        self.status = UsvStatus("idle", 0.0, 0.0, 0.0, 0.0, True)
        self.course_feedback = True

    # --- set-points ------------------------------------------------------------------------------------------
    def set_velocity(self, u_mps: float, r_frd_rad_s: float) -> None:
        """Hold body surge speed u and yaw rate r (FRD: > 0 turns to starboard)."""
        self.mode, self.nu_ref = "velocity", np.array([float(u_mps), 0.0, float(r_frd_rad_s)])

    def set_goal(self, goal_xy) -> None:
        """Go to a point of map ENU and stop inside the stop radius."""
        self.mode, self.goal = "position", np.asarray(goal_xy, dtype=float).reshape(2)
        self.status.done = False

    def set_trajectory(self, points_xy, times_s, t_now_s: float) -> None:
        """Track points (map ENU) at times (s, relative to now)."""
        self.mode, self.reference, self.t0_s = "trajectory", PolylineReference(points_xy, times_s), t_now_s
        self.goal, self.status.done = self.reference.end, False

    def set_path(self, points_xy, speed_mps: float) -> None:
        """Follow a path (map ENU) at a speed along it."""
        self.mode, self.reference = "path", PolylineReference(points_xy, speed_mps=speed_mps)
        self.goal, self.status.done = self.reference.end, False

    def stop(self) -> None:
        self.mode = "idle"

    # --- one control step --------------------------------------------------------------------------------------
    def step(self, t_s: float, p_xy, yaw_enu: float, nu_frd, h: float) -> np.ndarray:
        """Thruster commands for position p (map ENU), yaw (ENU), body velocity nu = [u, v, r] FRD."""
        if self.mode == "idle":
            self.status = UsvStatus("idle", 0.0, 0.0, 0.0, 0.0, True)
            return self.velocity.stop()
        if self.mode == "velocity":
            self.status = UsvStatus("velocity", float(self.nu_ref[0]), float(self.nu_ref[2]), 0.0, 0.0, False)
        else:
            self.nu_ref = self._guidance(t_s, p_xy, yaw_enu, nu_frd)
        return self.velocity.step(nu_frd, self.nu_ref, h)

    def _guidance(self, t_s: float, p_xy, yaw: float, nu_frd) -> np.ndarray:
        g, lim, ref = self.gains, self.limits, self.reference
        # steer the course, not the heading: with the sway the turns make (WAM-V: v = -4.5 u r), a vessel that
        # points at the goal passes it (orbits). beta = atan2(v, u) FLU, u floored so that it fades out at rest.
        if self.course_feedback:
            yaw = yaw + math.atan2(-float(nu_frd[1]), max(float(nu_frd[0]), COURSE_MIN_SPEED_MPS))
        tracking = self.mode in ("trajectory", "path") and not self.status_done_tracking(t_s, p_xy)
        err = 0.0
        if tracking and self.mode == "trajectory":
            eta_ref, eta_dot, _ = ref.at_time(t_s - self.t0_s)
            speed = float(np.hypot(*eta_dot))
            h_ref = eta_ref + (lim.lookahead_m / speed) * eta_dot if speed > 1e-6 else eta_ref
            u, w = lookahead_law(p_xy, yaw, h_ref, eta_dot, g, lim)
            err = float(np.hypot(*(eta_ref - np.asarray(p_xy, dtype=float))))
        elif tracking:
            window = max(10.0, 4.0 * lim.lookahead_m)
            foot, tangent, err = ref.project(control_point(p_xy, yaw, lim), window)
            u, w = lookahead_law(p_xy, yaw, foot, ref.speed_mps * tangent, g, lim)
        else:
            u, w, _, _ = position_law(p_xy, yaw, self.goal, g, lim)
        d = float(np.hypot(*(self.goal - np.asarray(p_xy, dtype=float))))
        # inside the stop radius: zero velocity (the velocity law brakes); pushed out of it, the law sets off again
        done = not tracking and d <= g.stop_radius_m
        if done:
            u = w = 0.0
        self.status = UsvStatus(self.mode, u, -w, d, err, done)
        return np.array([u, 0.0, -w])

    def status_done_tracking(self, t_s: float, p_xy) -> bool:
        """True once a trajectory's time is over, or a path's progress is within the look-ahead of its end."""
        ref = self.reference
        if self.mode == "trajectory":
            return t_s - self.t0_s >= ref.times[-1]
        return ref.s >= ref.length_m - self.limits.lookahead_m
