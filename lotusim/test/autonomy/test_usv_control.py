"""The USV controllers of [SaldarriagaMesa2025] sec. 5 (lotusim_autonomy/usv_control.py), ROS-free: the 3-DOF
model against the paper's equations and Table 3, and closed loops on the batched physics (Fleet with the catalogue
kayak_usv and wamv, RK4 at 0.02 s, the controller at 10 Hz through the ROS frame conversions, as on odometry).
The tolerances are the figures stated in docs/autonomy.md."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from lotusim_autonomy.odometry import ned_state
from lotusim_autonomy.usv_control import UsvAutopilot, cross_track_m
from lotusim_autonomy.usv_model import Usv3Dof, regressor
from lotusim_core.base.catalogue import load_vehicle
from lotusim_physics.fleet import Fleet

DT_S = 0.02
CONTROL_DT_S = 0.1  # 10 Hz, the dynamics node's default odometry rate
VEHICLES = Path(__file__).resolve().parents[2] / "config" / "vehicles"
# [SaldarriagaMesa2025] Table 3: zeta_1..zeta_9
TABLE_3 = [124.5923, 120.0275, 141.5164, 25.9335, 35.9833, 37.0247, 25.7968, 200.2944, 18.5319]


def fly(model: str, setup, t_end_s: float, current_ned=None) -> np.ndarray:
    """Closed loop; rows [t, x_enu, y_enu, yaw_enu, u, v, r (FRD), distance to goal] at each control step;
    current_ned: a constant water velocity (m/s NED), or None."""
    spec = load_vehicle(model)
    fleet = Fleet(DT_S, "rk4", water_density_kgm3=spec.water_density_kgm3)
    fleet.add("usv", spec, [0.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0])  # at the origin, heading north
    pilot = UsvAutopilot(spec)
    setup(pilot)
    every = int(round(CONTROL_DT_S / DT_S))
    current = (
        None if current_ned is None else (lambda _t, p: np.tile(np.asarray(current_ned, dtype=float), (len(p), 1)))
    )
    rows = []
    for k in range(int(round(t_end_s / CONTROL_DT_S))):
        t = k * CONTROL_DT_S
        pos, q, twist, _ = fleet.state_enu()
        s = ned_state(t, pos[0], q[0], twist[0])
        nu = s.nu_frd[[0, 1, 5]]
        fleet.set_thruster_commands("usv", pilot.step(t, s.position_enu_xy, s.yaw_enu_rad, nu, CONTROL_DT_S))
        rows.append((t, *s.position_enu_xy, s.yaw_enu_rad, *nu, pilot.status.distance_m))
        fleet.step(t, current_ned=current, steps=every)
    return np.array(rows)


def test_the_kayak_files_3dof_model_is_table_3():
    # derived here from the file itself: M = m + added mass (I_z about CO: the CG is on the z axis), D diagonals
    raw = yaml.safe_load((VEHICLES / "kayak_usv.yaml").read_text())
    m, ma, iz = raw["mass_kg"], raw["added_mass"], raw["inertia_cg_kgm2"][2]
    dl, dq = raw["damping_linear"], raw["damping_quadratic"]
    truth = [m + ma[0], m + ma[1], iz + ma[5], dl[0], dq[0], dl[1], dq[1], dl[5], dq[5]]
    assert truth == pytest.approx(TABLE_3, rel=1e-5)
    assert Usv3Dof.from_spec(load_vehicle("kayak_usv")).zeta == pytest.approx(truth, rel=1e-12)


def test_regressor_is_the_papers_matrices():
    # M nu_dot + C(nu) nu + D(nu) nu with the matrices of [SaldarriagaMesa2025] sec. 3.4 written out
    rng = np.random.default_rng(3)
    z = np.array(TABLE_3)
    model = Usv3Dof(z)
    for nu, nud in zip(rng.normal(size=(20, 3)), rng.normal(size=(20, 3)), strict=True):
        u, v, r = nu
        mm = np.diag(z[:3])
        c = np.array([[0, 0, -z[1] * v], [0, 0, z[0] * u], [z[1] * v, -z[0] * u, 0]])
        d = np.diag([z[3] + z[4] * abs(u), z[5] + z[6] * abs(v), z[7] + z[8] * abs(r)])
        tau = mm @ nud + c @ nu + d @ nu
        assert regressor(nu, nud) @ z == pytest.approx(tau, rel=1e-12, abs=1e-12)
        assert model.tau(nu, nud) == pytest.approx(tau, rel=1e-12, abs=1e-12)
        assert model.nu_dot(nu, tau) == pytest.approx(nud, rel=1e-9, abs=1e-12)


def settling_time(t, x, target, band):
    """First time after which |x - target| stays within band."""
    outside = np.nonzero(np.abs(x - target) > band)[0]
    return t[0] if len(outside) == 0 else t[min(outside[-1] + 1, len(t) - 1)]


@pytest.mark.parametrize("model", ["kayak_usv", "wamv"])
def test_velocity_loop_tracks_a_surge_step(model):
    rows = fly(model, lambda p: p.set_velocity(1.0, 0.0), 15.0)
    t, u, r = rows[:, 0], rows[:, 4], rows[:, 6]
    assert settling_time(t, u, 1.0, 0.05) <= 2.0  # measured 1.5 s (kayak), 1.4 s (WAM-V)
    assert np.max(u) <= 1.02  # no overshoot beyond 2 % (measured 0.999, 1.003)
    assert abs(u[-1] - 1.0) < 0.005 and np.max(np.abs(r[-50:])) < 0.005


@pytest.mark.parametrize(("model", "r_ref"), [("kayak_usv", 0.15), ("wamv", 0.2)])
def test_velocity_loop_tracks_a_yaw_rate_step_under_way(model, r_ref):
    rows = fly(model, lambda p: p.set_velocity(0.5, r_ref), 20.0)
    t, u, r = rows[:, 0], rows[:, 4], rows[:, 6]
    assert settling_time(t, r, r_ref, 0.1 * r_ref) <= 3.0
    assert abs(r[-1] - r_ref) < 0.005 and abs(u[-1] - 0.5) < 0.01
    # FRD: r > 0 turns the bow to starboard, i.e. clockwise seen from above: the ENU yaw decreases
    turned = np.unwrap(rows[:, 3])[-1] - rows[0, 3]
    assert turned == pytest.approx(-np.sum(r[:-1]) * CONTROL_DT_S, rel=0.02)


@pytest.mark.parametrize("model", ["kayak_usv", "wamv"])
@pytest.mark.parametrize("goal", [(20.0, 10.0), (-15.0, 12.0)])
def test_position_control_stops_inside_the_radius(model, goal):
    rows = fly(model, lambda p: p.set_goal(goal), 90.0)
    d = np.hypot(rows[:, 1] - goal[0], rows[:, 2] - goal[1])
    assert d[-1] < 0.15  # [SaldarriagaMesa2025] sec. 5.2 stop radius (measured 0.148-0.150)
    # the law stops the vessel as it crosses the radius; one that coasts out is brought back: the last 10 s
    # stay within 1 cm of it (measured <= 0.1501 m)
    assert np.max(d[-100:]) < 0.16
    assert abs(rows[-1, 4]) < 0.01 and abs(rows[-1, 6]) < 0.01


def lawnmower(width_m: float, spacing_m: float, legs: int = 4) -> np.ndarray:
    pts = []
    for j in range(legs):
        y = j * spacing_m
        pts += [[0.0, y], [width_m, y]] if j % 2 == 0 else [[width_m, y], [0.0, y]]
    return np.array(pts) + [5.0, 0.0]


# (model, width, spacing, speed, max cross-track away from the corners, anywhere after 15 s)
LAWNMOWERS = [("kayak_usv", 20.0, 5.0, 0.5, 0.75, 1.0), ("wamv", 40.0, 10.0, 1.0, 0.6, 1.2)]


@pytest.mark.parametrize(("model", "width", "spacing", "speed", "straight_max", "overall_max"), LAWNMOWERS)
def test_path_following_on_a_lawnmower(model, width, spacing, speed, straight_max, overall_max):
    pts = lawnmower(width, spacing)
    length = 3 * width + 3 * spacing
    rows = fly(model, lambda p: p.set_path(pts, speed), length / speed + 100.0)
    t, p = rows[:, 0], rows[:, 1:3]
    e = cross_track_m(pts, p)
    after = t > 15.0  # the approach from the origin to the first point
    corner = np.min(np.hypot(*(p[:, None, :] - pts[None]).transpose(2, 0, 1)), axis=1)
    straight = after & (corner > 2.0 * load_vehicle(model).wind.length_m)
    assert np.max(e[straight]) < straight_max
    assert np.max(e[after]) < overall_max
    assert np.hypot(*(p[-1] - pts[-1])) < 0.16  # and stops at its end (the position law takes over there)


# a 0.2 m/s current towards the north, across the lawnmower's east-west legs: (model, max cross-track away from the
# corners, largest distance from a goal over the last 20 s of a 90 s run); no law here estimates the current
CURRENT_NED = (0.2, 0.0, 0.0)
IN_CURRENT = [("kayak_usv", 1.0, 0.6), ("wamv", 0.6, 0.6)]


@pytest.mark.parametrize(("model", "straight_max", "goal_max"), IN_CURRENT)
def test_path_following_and_a_goal_in_a_cross_current(model, straight_max, goal_max):
    _, width, spacing, speed, _, _ = next(row for row in LAWNMOWERS if row[0] == model)
    pts = lawnmower(width, spacing)
    rows = fly(model, lambda p: p.set_path(pts, speed), (3 * width + 3 * spacing) / speed + 100.0, CURRENT_NED)
    t, p = rows[:, 0], rows[:, 1:3]
    corner = np.min(np.hypot(*(p[:, None, :] - pts[None]).transpose(2, 0, 1)), axis=1)
    straight = (t > 15.0) & (corner > 2.0 * load_vehicle(model).wind.length_m)
    assert np.max(cross_track_m(pts, p)[straight]) < straight_max  # measured 0.89 m (kayak), 0.44 m (WAM-V)
    goal = (20.0, 10.0)
    rows = fly(model, lambda p: p.set_goal(goal), 90.0, CURRENT_NED)
    d = np.hypot(rows[:, 1] - goal[0], rows[:, 2] - goal[1])
    assert np.min(d) < 0.15  # it gets there; then it drifts out and comes back (stop-and-go)
    assert np.max(d[-200:]) < goal_max  # measured 0.53 m (kayak), 0.43 m (WAM-V)


def r_squared(y, y_ref) -> float:
    return float(1.0 - np.sum((y - y_ref) ** 2) / np.sum((y_ref - np.mean(y_ref)) ** 2))


# [SaldarriagaMesa2025] Table 6 reference trajectories, x_d(t), y_d(t) in m (map ENU here)
TABLE_6 = {
    "sinusoidal": (lambda t: 10 * np.sin(0.06 * t), lambda t: 6 * np.sin(0.12 * t)),
    "circular": (lambda t: 10 * np.cos(0.055 * t), lambda t: 10 * np.sin(0.055 * t)),
    "spiral": (lambda t: (10 + 0.1 * t) * np.cos(0.05 * t), lambda t: (10 + 0.1 * t) * np.sin(0.05 * t)),
}
# RMSE bound after the first 30 s (measured: kayak 1.07 / 0.30 / 1.24 m, WAM-V 0.58 / 0.30 / 0.26 m). The kayak is
# at its limits: the sinusoid's tightest turns need a radius under the 4.2 m its yaw-rate limit gives at 0.9 m/s
# (0.51 m with the control instants shifted by float rounding: the recovery from those turns is sensitive), and
# the spiral nears its top speed, 1.35 m/s, by 150 s. The paper's Table 7 without disturbances: 0.48 / 0.40 / 0.52 m
TRACKING = [
    ("kayak_usv", "sinusoidal", 1.3, 0.95),  # R^2 of y measured 0.965 (0.992 with the other rounding)
    ("kayak_usv", "circular", 0.5, 0.99),
    ("kayak_usv", "spiral", 1.6, 0.98),
    ("wamv", "sinusoidal", 0.8, 0.98),
    ("wamv", "circular", 0.5, 0.99),
    ("wamv", "spiral", 0.5, 0.99),
]


@pytest.mark.parametrize(("model", "name", "rmse_max", "r2_min"), TRACKING)
def test_trajectory_tracking_of_the_papers_table_6(model, name, rmse_max, r2_min):
    fx, fy = TABLE_6[name]
    ts = np.arange(0.0, 150.01, 0.5)
    rows = fly(model, lambda p: p.set_trajectory(np.column_stack([fx(ts), fy(ts)]), ts, 0.0), 150.0)
    t = rows[:, 0]
    m = t > 30.0  # after the start from the origin (the circle and the spiral start 10 m from it)
    ref = np.column_stack([fx(t[m]), fy(t[m])])
    err = np.hypot(*(rows[m, 1:3] - ref).T)
    assert np.sqrt(np.mean(err**2)) < rmse_max
    # the paper's Table 7: R^2 0.92-0.94 without disturbances
    assert min(r_squared(rows[m, 1], ref[:, 0]), r_squared(rows[m, 2], ref[:, 1])) > r2_min
