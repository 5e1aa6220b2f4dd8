"""Unit tests of the autonomy control laws (ROS-free): analytic closed loops, anti-windup, reference model,
LOS geometry and convergence, and the allocations checked against the physics' own actuator models."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from lotusim_autonomy.allocation import DifferentialThrustAllocation, FinAllocation, ThrustCurve
from lotusim_autonomy.guidance import WaypointGuidance, bang_bang_speed, los_course
from lotusim_autonomy.heading import heading_pid_gains
from lotusim_autonomy.pid import Pid, ssa
from lotusim_autonomy.reference import ReferenceModel3
from lotusim_core.base.catalogue import apply_overrides, load_vehicle
from lotusim_physics.fleet import Fleet
from lotusim_physics.thrusters import t200_thrust


def simulate_first_order(pid: Pid, a: float, b: float, r: float, t_end: float, h: float, u_max=np.inf):
    """x_dot = -a x + b sat(u), u = PID(r - x); forward Euler at h. Returns times, x, u."""
    n = int(round(t_end / h))
    x = 0.0
    xs, us = np.empty(n + 1), np.empty(n)
    xs[0] = x
    for k in range(n):
        u = float(pid.step(r - x, h))
        u = min(max(u, -u_max), u_max)
        x += h * (-a * x + b * u)
        xs[k + 1], us[k] = x, u
    return np.arange(n + 1) * h, xs, us


def test_ssa_wraps_to_minus_pi_pi():
    angles = np.array([0.0, math.pi / 2, 3 * math.pi / 2, -3 * math.pi / 2, 2 * math.pi + 0.1, -math.pi + 1e-9])
    expected = np.array([0.0, math.pi / 2, -math.pi / 2, math.pi / 2, 0.1, -math.pi + 1e-9])
    assert np.allclose(ssa(angles), expected, atol=1e-12)


def test_p_control_of_first_order_plant_matches_analytic_closed_loop():
    # x_dot = -a x + b Kp (r - x): x(t) = r b Kp / (a + b Kp) (1 - exp(-(a + b Kp) t))
    a, b, kp, r = 0.5, 2.0, 1.5, 1.0
    t, x, _ = simulate_first_order(Pid(kp), a, b, r, 5.0, 1e-3)
    lam = a + b * kp
    analytic = r * b * kp / lam * (1.0 - np.exp(-lam * t))
    assert np.max(np.abs(x - analytic)) < 2e-3  # forward Euler, O(h lambda)
    assert x[-1] == pytest.approx(r * b * kp / lam, rel=1e-3)  # the P-only steady-state error a / (a + b Kp)


def test_pi_control_of_first_order_plant_matches_analytic_closed_loop():
    # x_dot = -x + u, u = 3 e + 3 int e: s^2 + 4 s + 3 = (s + 1)(s + 3); the PI zero at -1 cancels the pole at -1
    # and with x(0) = 0, x_dot(0) = Kp r the step response is exactly x(t) = r (1 - exp(-3 t)).
    t, x, _ = simulate_first_order(Pid(3.0, 3.0), 1.0, 1.0, 2.0, 4.0, 1e-3)
    analytic = 2.0 * (1.0 - np.exp(-3.0 * t))
    assert np.max(np.abs(x - analytic)) < 5e-3
    assert x[-1] == pytest.approx(2.0, abs=2e-3)  # integral action: no steady-state error


def test_anti_windup_bounds_the_integral_and_the_overshoot():
    # plant x_dot = -0.1 x + u with |u| <= 1, big step r = 8 (needs u = 0.8 at rest, saturates on the way)
    h, n, x, integral = 0.01, 6000, 0.0, 0.0
    overshoot_naive = 0.0
    for _ in range(n):  # textbook PI without anti-windup, for comparison
        integral += (8.0 - x) * h
        u = min(max(2.0 * (8.0 - x) + 0.5 * integral, -1.0), 1.0)
        x += h * (-0.1 * x + u)
        overshoot_naive = max(overshoot_naive, x - 8.0)
    pid = Pid(2.0, 0.5, u_max=1.0, integral_limit=1.0)
    t, xs, us = simulate_first_order(pid, 0.1, 1.0, 8.0, n * h, h, u_max=1.0)
    overshoot = np.max(xs) - 8.0
    assert abs(0.5 * pid.integral) <= 1.0 + 1e-12
    assert overshoot_naive > 1.0  # the wound-up integral overshoots by metres
    assert overshoot < 0.1 * overshoot_naive
    assert xs[-1] == pytest.approx(8.0, abs=0.05)


def test_reference_model_matches_the_critically_damped_third_order_step_response():
    # zeta = 1: w^3 / (s + w)^3, step response 1 - exp(-w t) (1 + w t + (w t)^2 / 2)
    w, h = 0.5, 2e-3
    ref = ReferenceModel3(w, 1.0)
    ref.reset(0.0)
    t = np.arange(1, 10001) * h
    x = np.array([ref.step(1.0, h)[0] for _ in t])
    analytic = 1.0 - np.exp(-w * t) * (1.0 + w * t + (w * t) ** 2 / 2.0)
    assert np.max(np.abs(x - analytic)) < 2e-3


def test_reference_model_respects_the_rate_limit_and_takes_the_short_way_round():
    ref = ReferenceModel3(0.5, 1.0, v_max=math.radians(5.0), angle=True)
    ref.reset(math.radians(350.0) - 2 * math.pi)  # -10 deg
    rates, xs = [], []
    for _ in range(6000):
        x, v, _ = ref.step(math.radians(20.0), 0.01)
        rates.append(v)
        xs.append(x)
    assert max(np.abs(rates)) <= math.radians(5.0) + 1e-12
    assert min(rates) >= -1e-9  # -10 -> 20 deg goes up through 0, not down through 180
    assert xs[-1] == pytest.approx(math.radians(20.0), abs=1e-3)


def test_heading_pid_gains_place_the_closed_loop_poles():
    # m r_dot + d r = tau, tau = -Kp psi - Kd r - Ki int psi: m s^3 + (d + Kd) s^2 + Kp s + Ki = 0. With PVS's
    # Kd = 2 m wn - d, Kp = m wn^2, Ki = wn Kp / 10 this is s (s + wn)^2 + wn^3 / 10: a stable triple whose
    # integral pole sits near -wn/10 (s = -x wn: x (1 - x)^2 = 0.1 -> x = 0.1330, 0.5874, 1.2796).
    m, d, wn = 446.0, 400.0, 0.5
    kp, ki, kd = heading_pid_gains(m, d, wn, 1.0)
    poles = np.sort(np.roots([m, d + kd, kp, ki]).real)
    assert np.allclose(poles, -wn * np.array([1.2796, 0.5874, 0.1330]), rtol=1e-3)


def test_los_geometry_textbook_values():
    # path along +x (east); vessel 5 m left (north) of it, lookahead 5 m: chi_d = 0 - atan(5 / 5) = -45 deg
    chi, e, s = los_course([20.0, 5.0], [0.0, 0.0], [100.0, 0.0], 5.0)
    assert e == pytest.approx(5.0) and s == pytest.approx(20.0) and chi == pytest.approx(-math.pi / 4)
    # path towards north-west; a point on the path steers along it
    chi, e, _ = los_course([-10.0, 10.0], [0.0, 0.0], [-50.0, 50.0], 8.0)
    assert e == pytest.approx(0.0, abs=1e-12) and chi == pytest.approx(3 * math.pi / 4)


def test_los_cross_track_error_converges_as_the_kinematic_ode():
    # a vessel that holds chi = chi_d at speed U obeys e_dot = U sin(chi_d - pi_p) = -U e / sqrt(e^2 + Delta^2)
    # (Fossen 2021 eq. 12.79): integrate the vessel, compare with the scalar ODE solved by scipy.
    speed, delta, e0, h = 2.0, 10.0, 30.0, 1e-3
    p = np.array([0.0, e0])
    t_end = 40.0
    for _ in range(int(t_end / h)):
        chi, _, _ = los_course(p, [0.0, 0.0], [1000.0, 0.0], delta)
        p = p + h * speed * np.array([math.cos(chi), math.sin(chi)])
    sol = solve_ivp(lambda _t, e: -speed * e / np.sqrt(e**2 + delta**2), (0, t_end), [e0], rtol=1e-10, atol=1e-12)
    assert p[1] == pytest.approx(sol.y[0, -1], abs=1e-2)
    assert p[1] < 0.05 * e0


def test_bang_bang_speed_is_lotusims_rule():
    # stopping distance u^2 / (2 a) >= d: stop before the last waypoint, slow (u_min) before the others
    assert bang_bang_speed(2.0, 3.9, 0.0, 3.0, 0.5, 0.5, last=True) == 0.0
    assert bang_bang_speed(2.0, 3.9, 0.0, 3.0, 0.5, 0.5, last=False) == 0.5
    assert bang_bang_speed(2.0, 4.1, 0.0, 3.0, 0.5, 0.5, last=True) == 3.0
    assert bang_bang_speed(0.0, 50.0, math.radians(100.0), 3.0, 0.5, 0.5, last=False) == 0.0


def test_waypoint_guidance_switches_in_the_circle_of_acceptance_and_finishes():
    g = WaypointGuidance(acceptance_radius_m=2.0)
    g.set_route([[10.0, 0.0], [10.0, 10.0]], [0.0, 0.0])
    g.update([8.5, 0.0], 1.0, 0.0, 1.0, 0.1)  # 1.5 m from the first: switch to the second
    assert g.index == 1 and g.reached == [(0, 1.0)]
    u_d, _, status = g.update([10.0, 8.2], 1.0, math.pi / 2, 2.0, 0.1)
    assert status.done and u_d == 0.0 and g.reached[-1] == (1, 2.0)


def test_looping_route_inside_one_circle_does_not_hang():
    g = WaypointGuidance(acceptance_radius_m=5.0)
    g.set_route([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]], [0.0, 0.0], loop=True)
    g.update([0.0, 0.0], 0.0, 0.0, 1.0, 0.1)
    assert [i for i, _ in g.reached] == [0, 1, 2] and not g.done


@pytest.mark.parametrize("model", ["remus100", "lrauv"])
def test_fin_allocation_turns_the_vehicle_as_commanded_in_the_physics(model):
    """The virtual pitch (nose-up) and yaw (bow to starboard) deflections, applied to the vehicle in the physics
    (lotusim_physics Fleet, its own fin model), pitch or yaw it the right way without rolling it."""
    spec = apply_overrides(load_vehicle(model), {"coriolis_added_mass": "no_munk", "coriolis_note": "fin sign test"})
    alloc = FinAllocation(spec.fins)
    rates = {}
    for name, (dq, dr) in {"pitch": (0.15, 0.0), "yaw": (0.0, 0.15)}.items():
        fleet = Fleet(0.01, water_density_kgm3=spec.water_density_kgm3)
        fleet.add("a", spec, [0.0, 0.0, 20.0], [1.0, 0.0, 0.0, 0.0], [2.0, 0.0, 0.0, 0.0, 0.0, 0.0])
        fleet.set_fin_commands("a", alloc(dq, dr))
        for k in range(100):  # 1 s
            fleet.step(k * 0.01)
        rates[name] = fleet.nu[0, 3:].copy()  # p, q, r (FRD)
    p, q, r = rates["pitch"]
    assert q > 0.02 and abs(r) < 1e-6 and abs(p) < 0.05 * q  # nose up
    p, q, r = rates["yaw"]
    # bow to starboard (compass heading increases); the roll is the turn's own heel (sway force below the CB),
    # a single rudder fin would roll the REMUS faster than it yaws
    assert r > 0.02 and abs(p) < 0.2 * r


def test_quadratic_thrust_curve_inverse():
    spec = load_vehicle("remus100")
    curve = ThrustCurve(spec.thrusters[0], 1030.0)
    t = spec.thrusters[0]
    for thrust in (0.5, 3.0, 6.0):
        rpm = float(curve.command(thrust))
        n = rpm / 60.0
        assert 1030.0 * t.diameter_m**4 * t.kt * n * abs(n) == pytest.approx(thrust, rel=1e-12)
    assert curve.command(1e6) == pytest.approx(t.command_max)  # clipped to what the propeller gives


def test_t200_curve_inverse_reproduces_the_thrust():
    spec = load_vehicle("kayak_usv")
    curve = ThrustCurve(spec.thrusters[0], 1025.0)
    for thrust in (-20.0, -5.0, 2.0, 10.0, 30.0):
        cmd = float(curve.command(thrust))
        assert float(t200_thrust(cmd, spec.thrusters[0].curve)) == pytest.approx(thrust, abs=0.1)


def test_differential_allocation_two_thrusters_and_yaw_priority():
    spec = load_vehicle("wamv")
    alloc = DifferentialThrustAllocation(spec.thrusters, 997.8)
    half_beam = abs(spec.thrusters[0].position_frd_m[1])  # 1.027135 m
    # unsaturated: T_L + T_R = X, half_beam (T_L - T_R) = N (left thruster at y < 0: N = -y T)
    t_left, t_right = alloc.thrusts(100.0, 50.0)
    assert t_left + t_right == pytest.approx(100.0) and half_beam * (t_left - t_right) == pytest.approx(50.0)
    # saturated: the yaw moment is kept, the surge force shrinks, the thrusts stay within 250 N / -100 N
    t_left, t_right = alloc.thrusts(600.0, 150.0)
    assert half_beam * (t_left - t_right) == pytest.approx(150.0)
    assert t_left <= 250.0 + 1e-9 and t_right >= -100.0 - 1e-9 and t_left + t_right < 600.0
    assert max(t_left, t_right) == pytest.approx(float(t200_thrust(1.0, spec.thrusters[0].curve)))  # full throttle


def test_kayak_allocation_uses_all_four_thrusters_evenly():
    spec = load_vehicle("kayak_usv")
    alloc = DifferentialThrustAllocation(spec.thrusters, 1025.0)
    t = alloc.thrusts(40.0, 0.0)
    assert np.allclose(t, 10.0)
    t = alloc.thrusts(0.0, 14.0)  # lever 0.7 m: four thrusters of 5 N, port side forward
    assert np.allclose(t, [5.0, -5.0, 5.0, -5.0])


def test_scalar_fast_paths_match_the_batched_laws():
    """One vessel's PID (plain floats) and odometry conversion (math, no frames arrays) give what the batched
    NumPy PID and lotusim_core.base.frames give, saturation, anti-windup and angle wrap included."""
    from nav_msgs.msg import Odometry

    from lotusim_autonomy.odometry import from_odometry, ned_state

    rng = np.random.default_rng(3)
    scalar = Pid(2.0, 0.5, 0.3, u_max=1.5, integral_limit=0.4)
    batched = Pid(np.array([2.0]), np.array([0.5]), np.array([0.3]), u_max=np.array([1.5]), integral_limit=0.4)
    for _ in range(300):
        e, h = rng.normal(0.0, 2.0), rng.uniform(0.0, 0.2)
        d = None if rng.random() < 0.5 else rng.normal()
        u = scalar.step(e, h, d)
        v = batched.step(np.array([e]), h, None if d is None else np.array([d]))
        assert u == pytest.approx(float(v[0]), abs=1e-12)
    for _ in range(500):
        q = rng.normal(size=4)
        q /= np.linalg.norm(q)
        m = Odometry()
        o = m.pose.pose.orientation
        o.x, o.y, o.z, o.w = (float(c) for c in q)
        p, lin, ang = rng.normal(size=3), rng.normal(size=3), rng.normal(size=3)
        m.pose.pose.position.x, m.pose.pose.position.y, m.pose.pose.position.z = (float(c) for c in p)
        m.twist.twist.linear.x, m.twist.twist.linear.y, m.twist.twist.linear.z = (float(c) for c in lin)
        m.twist.twist.angular.x, m.twist.twist.angular.y, m.twist.twist.angular.z = (float(c) for c in ang)
        fast, ref = from_odometry(m), ned_state(0.0, p, q, np.r_[lin, ang])
        assert np.allclose(fast.position_ned_m, ref.position_ned_m) and np.allclose(fast.nu_frd, ref.nu_frd)
        assert np.allclose(np.angle(np.exp(1j * (fast.rpy_ned_rad - ref.rpy_ned_rad))), 0.0, atol=1e-9)
