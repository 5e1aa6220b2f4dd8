"""The surface waypoint follower's control law (surface.SurfaceController + guidance.WaypointGuidance, wired as the
waypoint_follower node wires them) drives the ship models through a route, ROS-free on the batched Fleet.

- Gains come from each vessel's own parameters: for the WAM-V and the kayak the actuator bounds of
  surface.bounded_gains lie above the defaults (nothing changes); for the ships the heading loop's natural frequency
  is the one their rudder allows, w_n = sqrt(N_max / (m_r E_SAT)), recomputed here from the vehicle file.
- Each ship (and the commando boat) follows a route in its own lengths: ahead 12 L, a 45 deg leg to starboard,
  then back to the start (a U-turn); every waypoint is reached within 1.6 times the time the path takes at the
  cruise speed plus the time to reach it from rest at the guidance's 0.2 m/s^2 (measured: DTMB 961 s of a 796 s
  path, FREMM 1003 / 796 s, PHA 1642 / 1275 s, commando boat 101 / 62 s); the rudder commands stay within their
  limits.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from lotusim_autonomy.guidance import WaypointGuidance
from lotusim_autonomy.pid import Pid
from lotusim_autonomy.surface import (
    E_SAT_RAD,
    SurfaceController,
    SurfaceGains,
    default_cruise_speed,
    path_scales,
    steerage_speed,
)
from lotusim_core.base import frames
from lotusim_core.base.catalogue import load_vehicle
from lotusim_core.base.frames import euler_zyx_from_quat
from lotusim_physics.fleet import Fleet

RHO = 1025.0
CRUISE = {"dtmb5415": 8.0, "fremm": 8.0, "pha": 7.0, "commando_boat": 6.0}  # m/s (15.5 / 15.5 / 13.6 / 11.7 kn)


@pytest.mark.parametrize("model", ["wamv", "kayak_usv"])
def test_the_usv_gains_are_unchanged(model):
    """The actuator bounds lie above the USV defaults: the follower's gains for the WAM-V and the kayak stay."""
    ctl = SurfaceController(load_vehicle(model), SurfaceGains(), RHO)
    assert ctl.gains == SurfaceGains()
    assert ctl.rudder is None


@pytest.mark.parametrize("model", ["dtmb5415", "fremm", "pha", "wamv", "commando_boat"])
def test_default_cruise_speed_is_half_a_ships_top_speed(model):
    """Rudder-steered: half the speed where the quadratic surge damping takes all the propellers' thrust
    (rho D^4 K_T n_max^2 each, along the shaft); differential thrust: the USVs' 1.5 m/s."""
    spec = load_vehicle(model)
    if not spec.fins:
        assert default_cruise_speed(spec) == 1.5
        return
    thrust = sum(RHO * t.diameter_m**4 * t.kt * (t.command_max / (2 * math.pi)) ** 2 * t.direction_frd[0]
                 for t in spec.thrusters)  # fmt: skip
    assert default_cruise_speed(spec) == pytest.approx(0.5 * math.sqrt(thrust / spec.damping_quadratic[0, 0]))


@pytest.mark.parametrize("model", ["dtmb5415", "fremm", "pha"])
def test_ship_heading_gains_follow_from_the_rudder(model):
    """w_n = sqrt(N_max / (m_r E_SAT)) with N_max = 1/2 rho A C_La |x_R| u^2 delta_max of the file's rudder at the
    cruise speed, m_r = I_z + N_rdot; the reference no faster than the loop, its turn rate <= N_max / (2 N_r)."""
    spec = load_vehicle(model)
    (fin,) = spec.fins
    u = CRUISE[model]
    n_max = 0.5 * RHO * fin.area_m2 * fin.lift_slope_per_rad * abs(fin.position_frd_m[0]) * u**2 * fin.max_angle_rad
    m_r = spec.inertia_cg_kgm2[2, 2] + spec.added_mass[5, 5]
    ctl = SurfaceController(spec, SurfaceGains(), RHO, cruise_speed_mps=u)
    assert ctl.gains.heading_omega_rad_s == pytest.approx(math.sqrt(n_max / (m_r * E_SAT_RAD)), rel=1e-6)
    assert ctl.gains.heading_omega_rad_s < 0.3 * SurfaceGains().heading_omega_rad_s
    assert ctl.gains.ref_omega_rad_s == ctl.gains.heading_omega_rad_s
    assert ctl.gains.yaw_rate_max_rad_s == pytest.approx(n_max / (2.0 * spec.damping_linear[5, 5]), rel=1e-6)


def follow(model: str, route_l: list[tuple[float, float]], duration_s: float, dt_s: float = 0.05):
    """Run the follower's control law on one vessel from rest at the origin heading north; route in ship lengths
    (east, north). Returns the guidance (its `reached` list), the track (K, 2) ENU and the fin commands (K, nF)."""
    spec = load_vehicle(model)
    u = CRUISE[model]
    ctl = SurfaceController(spec, SurfaceGains(), RHO, cruise_speed_mps=u)
    g = ctl.gains
    radius, lookahead = path_scales(spec, u, g.yaw_rate_max_rad_s)
    guid = WaypointGuidance(
        acceptance_radius_m=radius,
        lookahead_m=lookahead,
        u_max=u,
        u_min=0.2,
        a_max=0.2,
        speed_pid=Pid(0.5, 0.05, 0.1, integral_limit=u),
        turn_rate_max_rad_s=0.8 * g.yaw_rate_max_rad_s,
        u_steer=steerage_speed(ctl, u),
    )  # fmt: skip  -- the waypoint_follower node's defaults
    length = spec.wind.length_m
    guid.set_route(np.array(route_l, dtype=float) * length, np.zeros(2))
    fleet = Fleet(dt_s, water_density_kgm3=RHO, capacity=1)
    fleet.add("ship", spec, [0.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0])
    h, steps = 0.1, round(0.1 / dt_s)
    track, fins = [], []
    for k in range(int(duration_s / h)):
        t = k * h
        pos, nu = fleet.position_ned[0], fleet.nu[0]
        psi = float(euler_zyx_from_quat(fleet.q_ned_frd)[0, 2])
        p_enu = np.array([pos[1], pos[0]])
        u_d, chi_d, status = guid.update(p_enu, nu[0], float(frames.yaw_ned_to_enu(psi)), t, h)
        if status.done:
            break
        cmd = ctl.step(nu[0], psi, nu[5], u_d, float(frames.yaw_enu_to_ned(chi_d)), h)
        fleet.set_thruster_commands("ship", cmd)
        if spec.fins:
            fleet.set_fin_commands("ship", ctl.last_fins)
        assert not fleet.step(t, steps=steps)
        track.append(p_enu)
        fins.append(ctl.last_fins.copy())
    return guid, np.array(track), np.array(fins).reshape(len(fins), -1), spec


ROUTE = [(0.0, 12.0), (8.0, 20.0), (0.0, 0.0)]  # ship lengths, ENU (east, north)


@pytest.mark.parametrize("model", ["dtmb5415", "fremm", "pha", "commando_boat"])
def test_ship_follows_a_route_with_a_u_turn(model):
    spec = load_vehicle(model)
    length = spec.wind.length_m
    pts = np.vstack([np.zeros(2), np.array(ROUTE) * length])
    path_m = float(np.sum(np.hypot(*np.diff(pts, axis=0).T)))
    budget = 1.6 * path_m / CRUISE[model] + CRUISE[model] / 0.2  # + the start from rest at the 0.2 m/s^2 slew
    guid, track, fins, spec = follow(model, ROUTE, budget)
    assert [i for i, _ in guid.reached] == [0, 1, 2], f"{model}: reached {guid.reached} in {budget:.0f} s"
    assert guid.done
    if spec.fins:
        limit = np.array([f.max_angle_rad for f in spec.fins])
        assert np.all(np.abs(fins) <= limit + 1e-12)
        assert np.max(np.abs(fins)) > 0.5 * limit.min()  # the U-turn used the rudder
