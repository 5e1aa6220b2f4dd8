"""Station keeping and waypoints at a depth for a thruster-vectored ROV (BlueROV2 Heavy), ROS-free.

Four positioning degrees of freedom: surge, sway, heave and yaw (NED north, east, depth and compass heading),
plus roll and pitch held level. The frame is passively stable in roll and pitch at rest (centre of buoyancy 1 cm
above the centre of gravity: rho g V BG = 1.3 N m/rad of restoring moment), but not while it translates and dives
at once: the added-mass (Munk) moments (Z_wdot - X_udot) u w and (Z_wdot - Y_vdot) v w, 1.8 N m at u = 0.5 m/s,
w = 0.3 m/s, overcome that restoring moment and roll the BlueROV2 past 30 deg in the physics
(test_without_levelling_the_munk_moment_rolls_the_rov_over). So the vertical thrusters also hold roll and pitch at
zero: a PD(+I) on each, plus the feed-forward of the added-mass Coriolis moments C_A(nu) nu (added_mass.c_a, the
physics' own form and mask; with the measured nu, the current unknown). `level_omega_rad_s = 0` turns it off
(zero roll/pitch moment asked, as ArduSub's "manual" mode).

Law (Fossen 2021 sec. 15.3, the MIMO PID of dynamic positioning with reference feed-forward; set-points
smoothed by the reference model of Fossen 2021 sec. 12.1.1, reference.ReferenceModel3):
    eta = [N, E, D, psi],  eta_d, eta_d', eta_d'' from the reference models (north/east together on a straight
          line at most `speed_max_mps`, depth at most `depth_rate_max_mps`, heading at most `yaw_rate_max_rad_s`)
    tau_ned = PID(eta_d - eta),  derivative eta_d' - eta' (eta' = [R(psi) [u, v], w, r]), integral in NED
    tau_body = R(psi)^T tau_ned[N, E] (+ D, psi as is) + M eta_d''(body) + D_lin nu_d + D_quad |nu_d| nu_d
               + (rho V - m) g on Z (net buoyancy, pushed down) + [C_A(nu) nu]_N on yaw
    tau_K, tau_M = PID(-phi, -theta) + [C_A(nu) nu]_K,M
Per axis the gains place the closed-loop poles of m x'' + d x' = tau at omega_n, zeta (heading.heading_pid_gains:
Kp = m omega^2, Kd = 2 zeta omega m - d, Ki = integral_ratio omega Kp), with m the rigid-body plus added mass and
d the linear damping of the vehicle file. Integral anti-windup: pid.Pid clamping, |Ki I| bounded to a fraction of what
the thrusters can give on that axis, the output saturated to it.

Allocation (Fossen 2021 sec. 11.2, eq. 11.37): tau = B T with B the 6 x n matrix of lotusim_physics.thrusters
(from the vehicle file's thruster positions and axes). T = B^+ tau over all six rows when B has rank 6 (roll and
pitch moments as the levelling asks), else over the rows X, Y, Z, N. Saturation with priority: heave, yaw (and zero
roll/pitch) are kept whole (scaled down only if they alone exceed the limits), the horizontal force is scaled to
the largest fraction that still fits, so the vehicle holds its depth and heading first. Thrust -> command through
each thruster's own thrust curve (allocation.ThrustCurve). Dead band: the T200 model gives no thrust up to 1 %
throttle and then 0.72 N at once, so small positive thrusts cannot be made and a vehicle holding station on small
thrusts limit-cycles (5 deg of heading in the physics). The thrusters have a null space (B p = 0: the four
horizontal ones all in reverse cancel, and so do the vertical ones in a +,-,-,+ pattern); the allocation adds
beta p, beta >= `preload_n`, the smallest beta that leaves no thruster inside its dead-band jump (Fossen 2021 sec.
11.2: any null-space term leaves tau unchanged).

Batched where it is cheap: the four axes are one NumPy vector; one controller instance per vessel.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from lotusim_autonomy.allocation import ThrustCurve, _fit_fraction
from lotusim_autonomy.heading import heading_pid_gains
from lotusim_autonomy.odometry import NedState
from lotusim_autonomy.pid import Pid, ssa
from lotusim_autonomy.reference import ReferenceModel3
from lotusim_core.base.geodesy import GeodeticOrigin, geodetic_to_enu
from lotusim_core.base.vehicle_spec import VehicleSpec
from lotusim_physics.added_mass import c_a, c_a_mask
from lotusim_physics.thrusters import allocation_matrix, t200_thrust

AXES = (0, 1, 2, 5)  # surge, sway, heave, yaw rows of tau = [X Y Z K M N]
REFERENCE_STEP_S = 0.1  # longest Euler step of the reference models (their omega <= 0.8 rad/s: omega h <= 0.08)
MAX_DEPTH_M = 11_000.0
MAX_WAYPOINTS = 10_000
# the scenario's `setpoints:` keys of a station keeper, and the keys scenario.py turns `waypoints` into
SETPOINT_KEYS = ("position", "depth_m", "heading_deg", "waypoints", "acceptance_radius_m", "speed_mps", "loop")
SCENARIO_KEYS = ("latitude_deg", "longitude_deg", "waypoints_enu")


@dataclass(frozen=True)
class RovTarget:
    """A pose to hold: NED position (m; depth positive down) and compass heading (rad, clockwise from north)."""

    north_m: float
    east_m: float
    depth_m: float
    heading_rad: float

    def __post_init__(self) -> None:
        values = (self.north_m, self.east_m, self.depth_m, self.heading_rad)
        if not all(math.isfinite(v) for v in values):
            raise ValueError(f"RovTarget: expected finite values, got {values}")
        if self.depth_m < 0.0:
            raise ValueError(f"RovTarget: depth_m must be >= 0 (positive down), got {self.depth_m}")


@dataclass
class RovGains:
    """Tuning of RovController (every field is also a station_keeper parameter). Natural frequencies in rad/s of
    the closed loops (Kp = m omega^2, Kd = 2 zeta omega m - d per axis), speeds in m/s, rates in rad/s, thrust in N.
    The defaults suit a controller stepped at 2.5-10 Hz with less than 0.2 s of delay."""

    horizontal_omega_rad_s: float = 1.0  # closed-loop natural frequency, north/east position
    depth_omega_rad_s: float = 1.0
    heading_omega_rad_s: float = 2.0
    level_omega_rad_s: float = 2.0  # roll and pitch levelling (0: leave them passive)
    zeta: float = 1.0
    integral_ratio: float = 0.2  # Ki = integral_ratio omega Kp (PVS PIDpolePlacement: 1/10; 1/5 here)
    integral_fraction: float = 0.5  # |Ki I| <= this fraction of the axis's thrust capacity
    ref_omega_rad_s: float = 0.5  # reference models (position, depth)
    heading_ref_omega_rad_s: float = 0.8
    speed_max_mps: float = 0.5  # horizontal speed of the reference along a leg
    depth_rate_max_mps: float = 0.3
    yaw_rate_max_rad_s: float = math.radians(20.0)
    preload_n: float = 1.0  # null-space thrust bias (N), raised as needed to keep thrusters off the dead band


class VectoredThrustAllocation:
    """Body wrench [X, Y, Z, K, M, N] (N, N m; FRD at CO) -> thruster commands, heave/yaw before horizontal."""

    def __init__(self, thrusters, water_density_kgm3: float, name: str = "vehicle", preload_n: float = 0.0) -> None:
        b = allocation_matrix(thrusters)
        rows = list(range(6)) if np.linalg.matrix_rank(b) == 6 else list(AXES)
        if np.linalg.matrix_rank(b[AXES, :]) < 4:
            raise ValueError(
                f"{name}: the thrusters cannot produce independent surge, sway, heave and yaw (allocation matrix "
                f"rank {np.linalg.matrix_rank(b[AXES, :])} on those rows, 4 needed): not a thruster-vectored vehicle"
            )
        self.b = b
        self.rows = rows
        self.b_pinv = np.linalg.pinv(b[rows, :])  # (n, len(rows))
        self.curves = [ThrustCurve(t, water_density_kgm3) for t in thrusters]
        self.t_min = np.array([c.t_min for c in self.curves])
        self.t_max = np.array([c.t_max for c in self.curves])
        same = all(_curve_key(t) == _curve_key(thrusters[0]) for t in thrusters)
        self._shared_curve = self.curves[0] if same else None
        self.capacity = np.array([self._capacity(i) for i in range(6)])  # largest |tau_i| alone, both signs
        self.preload_n = float(preload_n)
        self.preload = _null_space_preload(b[rows, :]) if preload_n > 0.0 else np.zeros(len(thrusters))  # B p = 0
        gaps = np.array([_dead_band_gap(t) for t in thrusters]).reshape(-1, 2)
        self.gap_lo, self.gap_hi = gaps[:, 0], gaps[:, 1]  # thrusts strictly inside (lo, hi), != 0, unreachable

    def _capacity(self, dof: int) -> float:
        """Largest magnitude of DOF `dof` alone that fits the thrust limits in both directions (N or N m)."""
        if dof not in self.rows:
            return 0.0
        col = self.b_pinv[:, self.rows.index(dof)]
        zero = np.zeros_like(col)
        big = 1e6
        return big * min(_fit_fraction(zero, col * big, self.t_min, self.t_max),
                         _fit_fraction(zero, -col * big, self.t_min, self.t_max))  # fmt: skip

    def thrusts(self, tau: np.ndarray) -> np.ndarray:
        """Per-thruster thrust (N) for the 6-vector tau; roll and pitch are asked as given (0 for the ROV)."""
        tau = np.asarray(tau, dtype=float)
        first = tau.copy()
        first[:2] = 0.0
        second = np.zeros(6)
        second[:2] = tau[:2]
        t_first = self.b_pinv @ first[self.rows]
        t_second = self.b_pinv @ second[self.rows]
        zero = np.zeros_like(t_first)
        t_first = t_first * _fit_fraction(zero, t_first, self.t_min, self.t_max)
        t = t_first + t_second * _fit_fraction(t_first, t_second, self.t_min, self.t_max)
        return t + self.preload * self._preload_scale(t)

    def _preload_scale(self, t: np.ndarray) -> float:
        """Smallest beta >= preload_n that puts no thruster of t + beta p inside its dead-band gap, within the
        thrust limits (beta only as large as the limits allow when no such beta fits)."""
        p = self.preload
        if not np.any(p):
            return 0.0
        beta_max = 1e6 * _fit_fraction(t, p * 1e6, self.t_min, self.t_max)
        with np.errstate(divide="ignore", invalid="ignore"):
            a, b = (self.gap_lo - t) / p, (self.gap_hi - t) / p
        lo, hi = np.minimum(a, b), np.maximum(a, b)
        live = hi > lo  # thrusters with a gap
        base = min(self.preload_n, beta_max)
        for beta in sorted({base, *hi[live & (hi > base) & (hi <= beta_max)]}):
            if not np.any(live & (beta > lo + 1e-9) & (beta < hi - 1e-9)):
                return float(beta)
        return float(base)

    def commands(self, tau: np.ndarray) -> np.ndarray:
        """Thruster commands (each in its command_unit) for the body wrench tau."""
        t = self.thrusts(tau)
        if self._shared_curve is not None:  # one curve for all (the BlueROV2's eight T200): one vector call
            return np.asarray(self._shared_curve.command(t), dtype=float)
        return np.array([c.command(ti) for c, ti in zip(self.curves, t, strict=True)], dtype=float)


_ALLOCATIONS: dict[tuple, tuple[VehicleSpec, VectoredThrustAllocation]] = {}


def shared_allocation(spec: VehicleSpec, water_density_kgm3: float, preload_n: float) -> VectoredThrustAllocation:
    """One VectoredThrustAllocation per (vehicle spec, density, preload), shared: it holds no state between calls,
    and building it (thrust-curve tables, dead-band gaps, null space) costs ~25 ms, which a host starting 45
    BlueROV2 controllers would otherwise pay 45 times. The catalogue hands out one frozen spec per file."""
    key = (id(spec), float(water_density_kgm3), float(preload_n))
    hit = _ALLOCATIONS.get(key)
    if hit is None or hit[0] is not spec:
        hit = (spec, VectoredThrustAllocation(spec.thrusters, water_density_kgm3, spec.name, preload_n))
        _ALLOCATIONS[key] = hit  # the spec is kept alive with it, so its id cannot be reused
    return hit[1]


def _curve_key(thruster) -> tuple:
    """What a thruster's thrust -> command map depends on (equal keys: one ThrustCurve serves both)."""
    curve = tuple(sorted((thruster.curve or {}).items()))
    return (thruster.model, thruster.command_unit, thruster.command_min, thruster.command_max,
            thruster.diameter_m, thruster.kt, thruster.kt_reverse, curve)  # fmt: skip


def _dead_band_gap(thruster, margin: float = 1.02) -> tuple[float, float]:
    """(lo, hi) thrusts (N) around zero the thruster cannot give (lo <= 0 <= hi): the jump of a curve model at
    the edge of its dead band (T200: 0 N up to 1 % throttle, then 0.72 N), widened by `margin`; (0, 0) for the
    continuous quadratic model."""
    if thruster.model == "quadratic":
        return 0.0, 0.0
    thrust = t200_thrust(np.linspace(thruster.command_min, thruster.command_max, 4001), thruster.curve)
    pos, neg = thrust[thrust > 0.0], thrust[thrust < 0.0]
    hi = float(pos.min()) * margin if pos.size else 0.0
    lo = float(neg.max()) * margin if neg.size else 0.0
    return lo, hi


def _null_space_preload(b: np.ndarray) -> np.ndarray:
    """A thrust vector p with B p = 0 and min_i |p_i| = 1 (or zeros if B has no null space wide enough).

    Thrusters with a dead band (the T200 model gives 0 N up to 1 % throttle, then jumps to 0.7 N) cannot give
    small thrusts of one sign, so a vehicle holding station on small thrusts limit-cycles. Adding p, which
    changes no force or moment, keeps every thruster off zero. p is the projection on the null space of the sign
    pattern (+-1 per thruster) that makes the smallest |p_i| largest (2^n patterns, n <= 12, once)."""
    n = b.shape[1]
    _, sv, vt = np.linalg.svd(b)
    rank = int(np.sum(sv > 1e-9 * sv[0]))
    if rank == n or n > 12:
        return np.zeros(n)
    proj = vt[rank:].T @ vt[rank:]
    signs = np.array(list(itertools.product((-1.0, 1.0), repeat=n)))
    p = signs @ proj  # (2^n, n), proj symmetric
    best = int(np.argmax(np.min(np.abs(p), axis=1)))
    smallest = float(np.min(np.abs(p[best])))
    return p[best] / smallest if smallest > 1e-6 else np.zeros(n)


class RovController:
    """Station keeping / go-to-pose of one thruster-vectored ROV: (NedState, RovTarget, h) -> thruster commands."""

    def __init__(self, spec: VehicleSpec, gains: RovGains | None = None, water_density_kgm3: float | None = None,
                 gravity_mps2: float = 9.81) -> None:  # fmt: skip
        g = gains or RovGains()
        self.gains = g
        rho = float(spec.water_density_kgm3 if water_density_kgm3 is None else water_density_kgm3)
        self.allocation = shared_allocation(spec, rho, g.preload_n)
        mass = spec.mass_kg + np.diag(spec.added_mass)[list(AXES)]
        mass[3] = spec.inertia_cg_kgm2[2, 2] + spec.added_mass[5, 5]
        mass[3] += spec.mass_kg * (spec.cg_frd_m[0] ** 2 + spec.cg_frd_m[1] ** 2)
        self.mass = mass  # surge, sway, heave, yaw: kg, kg, kg, kg m^2
        self.d_lin = np.diag(spec.damping_linear)[list(AXES)].copy()
        self.d_quad = np.diag(spec.damping_quadratic)[list(AXES)].copy()
        self.net_buoyancy_n = (rho * spec.volume_m3 - spec.mass_kg) * gravity_mps2  # > 0: floats
        self.pid = self._make_pid(g)
        self.level = self._make_level_pid(spec, g)
        self.added_mass = np.asarray(spec.added_mass, dtype=float)
        self.c_a_mask = c_a_mask(spec.coriolis_added_mass)
        self.position_ref = ReferenceModel3(g.ref_omega_rad_s, 1.0, np.full(2, g.speed_max_mps))
        self.depth_ref = ReferenceModel3(g.ref_omega_rad_s, 1.0, g.depth_rate_max_mps)
        self.heading_ref = ReferenceModel3(g.heading_ref_omega_rad_s, 1.0, g.yaw_rate_max_rad_s, angle=True)
        self._engaged = False
        self._target: RovTarget | None = None
        self.last: dict[str, np.ndarray | float] = {}

    def _make_pid(self, g: RovGains) -> Pid:
        """One PID over [N, E, D, psi]; N and E share the gains of the lighter of surge and sway."""
        omega = np.array([g.horizontal_omega_rad_s] * 2 + [g.depth_omega_rad_s, g.heading_omega_rad_s])
        m = np.array([min(self.mass[0], self.mass[1])] * 2 + [self.mass[2], self.mass[3]])
        d = np.array([min(self.d_lin[0], self.d_lin[1])] * 2 + [self.d_lin[2], self.d_lin[3]])
        kp, _, kd = heading_pid_gains(m, d, omega, g.zeta)
        ki = g.integral_ratio * omega * kp
        cap = self.allocation.capacity[list(AXES)]
        u_max = np.array([min(cap[0], cap[1])] * 2 + [cap[2], cap[3]])
        return Pid(kp, ki, np.maximum(kd, 0.0), u_max=u_max, integral_limit=g.integral_fraction * u_max)

    def _make_level_pid(self, spec: VehicleSpec, g: RovGains) -> Pid | None:
        """PD (+ small I) holding roll and pitch at zero, or None when the thrusters give no roll/pitch moment."""
        cap = self.allocation.capacity[3:5]
        if g.level_omega_rad_s <= 0.0 or np.any(cap <= 0.0):
            return None
        inertia = np.array([spec.inertia_cg_kgm2[0, 0] + spec.added_mass[3, 3],
                            spec.inertia_cg_kgm2[1, 1] + spec.added_mass[4, 4]])  # fmt: skip
        d = np.array([spec.damping_linear[3, 3], spec.damping_linear[4, 4]])
        kp, _, kd = heading_pid_gains(inertia, d, g.level_omega_rad_s, g.zeta)
        ki = g.integral_ratio * g.level_omega_rad_s * kp
        return Pid(kp, ki, np.maximum(kd, 0.0), u_max=cap, integral_limit=g.integral_fraction * cap)

    def reset(self, state: NedState) -> None:
        """Engage at rest at the current pose (references start where the vehicle is, integrals at zero)."""
        self.position_ref.reset(state.position_ned_m[:2])
        self.depth_ref.reset(state.depth_m)
        self.heading_ref.reset(state.rpy_ned_rad[2])
        self.pid.reset()
        if self.level is not None:
            self.level.reset()
        self._target = None
        self._engaged = True

    def _retarget(self, target: RovTarget) -> None:
        """Aim the horizontal reference on a straight line from where it is to the new target."""
        d = np.array([target.north_m, target.east_m]) - self.position_ref.x
        dist = float(np.hypot(*d))
        share = np.abs(d) / dist if dist > 1e-9 else np.ones(2)
        v_max = self.gains.speed_max_mps
        self.position_ref.v_max = np.maximum(v_max * share, 0.02 * v_max)
        self._target = target

    def step(self, state: NedState, target: RovTarget, h: float) -> np.ndarray:
        """Thruster commands (vehicle-file order, command units) after a step of h s of sim time towards target."""
        if not self._engaged:
            self.reset(state)
        if target != self._target:
            self._retarget(target)
        pos_d, vel_d, acc_d, z_d, w_d, wdot_d, psi_d, r_d, rdot_d = self._references(target, h)
        acc_d = np.where(np.abs(vel_d) >= self.position_ref.v_max - 1e-12, 0.0, acc_d)  # no push at the limit
        wdot_d = 0.0 if abs(float(w_d)) >= self.gains.depth_rate_max_mps - 1e-12 else float(wdot_d)
        psi = float(state.rpy_ned_rad[2])
        c, s = math.cos(psi), math.sin(psi)
        rot_t = np.array([[c, s], [-s, c]])  # R(psi)^T: NED -> body (horizontal)
        nu = state.nu_frd
        eta = np.array([*state.position_ned_m[:2], state.depth_m, psi])
        eta_d = np.array([*pos_d, float(z_d), float(psi_d)])
        eta_dot = np.array([c * nu[0] - s * nu[1], s * nu[0] + c * nu[1], nu[2], nu[5]])
        eta_dot_d = np.array([*vel_d, float(w_d), float(r_d)])
        err = eta_d - eta
        err[3] = ssa(err[3])
        tau_ned = self.pid.step(err, h, derivative=eta_dot_d - eta_dot)
        nu_d = np.array([*(rot_t @ vel_d), float(w_d), float(r_d)])
        nu_dot_d = np.array([*(rot_t @ acc_d), wdot_d, float(rdot_d)])
        ff = self.mass * nu_dot_d + self.d_lin * nu_d + self.d_quad * np.abs(nu_d) * nu_d
        tau = np.zeros(6)
        tau[:2] = rot_t @ tau_ned[:2] + ff[:2]
        tau[2] = tau_ned[2] + ff[2] + self.net_buoyancy_n
        tau[5] = tau_ned[3] + ff[3]
        munk = (c_a(self.added_mass, nu) * self.c_a_mask) @ nu  # added-mass Coriolis, as the physics has it
        tau[5] += munk[5]
        if self.level is not None:
            tau[3:5] = self.level.step(-state.rpy_ned_rad[:2], h, derivative=-nu[3:5]) + munk[3:5]
        self.last = {"eta_d": eta_d, "error": err, "tau": tau}
        return self.allocation.commands(tau)

    def _references(self, target: RovTarget, h: float) -> tuple:
        """Advance the three reference models by h s in sub-steps of at most REFERENCE_STEP_S (forward Euler is
        stable only for omega h small: a controller that missed odometry, e.g. a host stalled for a second, gets
        one long step)."""
        n = max(1, math.ceil(h / REFERENCE_STEP_S - 1e-9))
        for _ in range(n):
            pos = self.position_ref.step([target.north_m, target.east_m], h / n)
            depth = self.depth_ref.step(target.depth_m, h / n)
            heading = self.heading_ref.step(target.heading_rad, h / n)
        return (*pos, *depth, *heading)

    def stop(self) -> np.ndarray:
        """Zero commands; the next step engages again from the vehicle's pose."""
        self._engaged = False
        self.last = {}
        return np.zeros(len(self.allocation.curves))


@dataclass
class RovMission:
    """A list of RovTargets flown in order: the next once within `acceptance_radius_m` horizontally and
    `depth_tolerance_m` in depth; the last is held (station keeping). `reached` lists (index, sim time s)."""

    targets: list[RovTarget]
    acceptance_radius_m: float = 1.0
    depth_tolerance_m: float = 0.5
    loop: bool = False  # after the last, the first again (a patrol; never done)
    index: int = 0
    reached: list[tuple[int, float]] = field(default_factory=list)
    _holding: bool = False  # the last target reached (no loop): held from now on

    @property
    def done(self) -> bool:
        return self._holding

    def current(self, state: NedState) -> RovTarget:
        """The target to steer to now (advancing past those reached, at most once round per call)."""
        for _ in range(len(self.targets)):
            t = self.targets[self.index]
            if self._holding or not self._inside(t, state):
                return t
            self.reached.append((self.index, state.t_s))
            if self.index == len(self.targets) - 1 and not self.loop:
                self._holding = True
                return t
            self.index = (self.index + 1) % len(self.targets)
        return self.targets[self.index]

    def _inside(self, t: RovTarget, state: NedState) -> bool:
        close = math.hypot(t.north_m - state.position_ned_m[0], t.east_m - state.position_ned_m[1])
        return close <= self.acceptance_radius_m and abs(t.depth_m - state.depth_m) <= self.depth_tolerance_m


def cannot_station_keep(spec: VehicleSpec) -> str | None:
    """Why RovController cannot drive a vehicle (not underwater, or no independent surge, sway, heave and yaw
    from its thrusters), or None if it can."""
    if spec.domain != "underwater":
        return f"the station keeper drives underwater vehicles; {spec.name} is a {spec.domain} vessel"
    try:
        shared_allocation(spec, spec.water_density_kgm3, 0.0)
    except ValueError as exc:
        return f"the station keeper needs vectored thrusters; {exc}"
    return None


def parse_setpoints(setpoints: Mapping[str, Any], origin: GeodeticOrigin, where: str) -> dict[str, Any]:
    """The station keeper's set-points, validated: {position_enu: (x, y), depth_m, heading_rad,
    waypoints_enu: [(x, y), ...], acceptance_radius_m, speed_mps, loop}, each only if given (a zero radius or
    speed: the controller's default). ValueError `where.key: reason`.

    Accepted: SETPOINT_KEYS as a user writes them (`waypoints` as [[x, y], ...], a flat [x0, y0, ...] or
    [{latitude_deg, longitude_deg}, ...]) and what scenario.py makes of `waypoints` (latitude_deg and
    longitude_deg lists, waypoints_enu, loop); WGS84 points go to map ENU around `origin`."""
    unknown = sorted(set(setpoints) - set(SETPOINT_KEYS) - set(SCENARIO_KEYS))
    if unknown:
        raise ValueError(f"{where}: unknown key(s) {unknown}; expected some of {list(SETPOINT_KEYS)}")
    out: dict[str, Any] = {}
    for key, low, high in (("depth_m", 0.0, MAX_DEPTH_M), ("heading_deg", -360.0, 360.0),
                           ("acceptance_radius_m", 0.0, 1e4), ("speed_mps", 0.0, 10.0)):  # fmt: skip
        value = setpoints.get(key)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
            raise ValueError(f"{where}.{key}: expected a number in [{low}, {high}], got {value!r}")
        if value > 0.0 or key in ("depth_m", "heading_deg"):
            out[key] = float(value)
    if "heading_deg" in out:
        out["heading_rad"] = math.radians(out.pop("heading_deg"))
    if not isinstance(setpoints.get("loop", False), bool):
        raise ValueError(f"{where}.loop: expected true or false, got {setpoints['loop']!r}")
    out["loop"] = bool(setpoints.get("loop", False))
    if setpoints.get("position") is not None:
        out["position_enu"] = _points([setpoints["position"]], origin, f"{where}.position")[0]
    lat, lon = setpoints.get("latitude_deg") or [], setpoints.get("longitude_deg") or []
    if not (isinstance(lat, list) and isinstance(lon, list) and len(lat) == len(lon)):
        raise ValueError(f"{where}.latitude_deg: expected as many latitudes as longitudes, got {lat!r}, {lon!r}")
    raw = setpoints.get("waypoints") or setpoints.get("waypoints_enu") or []
    if lat:
        raw = [{"latitude_deg": a, "longitude_deg": b} for a, b in zip(lat, lon, strict=True)]
    if isinstance(raw, list) and raw and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in raw):
        if len(raw) % 2:
            raise ValueError(f"{where}.waypoints: a flat list needs x, y pairs, got {len(raw)} numbers")
        raw = [raw[i : i + 2] for i in range(0, len(raw), 2)]
    if not isinstance(raw, list) or len(raw) > MAX_WAYPOINTS:
        raise ValueError(f"{where}.waypoints: expected a list of at most {MAX_WAYPOINTS} points, got {raw!r}")
    if raw:
        out["waypoints_enu"] = _points(raw, origin, f"{where}.waypoints")
    return out


def _points(raw: list, origin: GeodeticOrigin, where: str) -> list[tuple[float, float]]:
    """[x, y] (map ENU, m) or {latitude_deg, longitude_deg} points -> [(x, y), ...]."""
    out = []
    for i, p in enumerate(raw):
        key = f"{where}[{i}]" if where.endswith("waypoints") else where
        if isinstance(p, Mapping):
            if set(p) != {"latitude_deg", "longitude_deg"}:
                raise ValueError(f"{key}: expected {{latitude_deg, longitude_deg}}, got {dict(p)!r}")
            lat, lon = p["latitude_deg"], p["longitude_deg"]
            ok = all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (lat, lon))
            if not ok or not (-90.0 <= lat <= 90.0 and -180.0 <= lon <= 360.0):
                raise ValueError(f"{key}: expected latitude in [-90, 90] and longitude in [-180, 360] deg")
            x, y = geodetic_to_enu(np.array([[lat, lon, 0.0]]), origin)[0, :2]
        else:
            ok = isinstance(p, (list, tuple)) and len(p) == 2
            ok = ok and all(isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in p)
            if not ok:
                raise ValueError(
                    f"{key}: expected [x, y] in map ENU metres or {{latitude_deg, longitude_deg}}, got {p!r}"
                )
            x, y = p
        out.append((float(x), float(y)))
    return out
