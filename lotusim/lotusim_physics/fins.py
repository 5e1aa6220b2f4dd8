"""Control surfaces: the N-fin model of 004_786a75be5c5bda5f.txt (HoloOcean 2.0, Eqs. 4-9) with the piecewise-
linear stall of LRAUV Sim (002_1bc233a69a6533ee.txt eq. 5) and first-order, rate-limited fin servos.

A fin sits at r_i (centre of pressure from CO, FRD) at roll angle phi_i around the body x axis
(0 = top vertical fin, pi/2 = starboard horizontal fin). Its span direction is s_i = [0, sin phi_i, -cos phi_i].
  Eq. 4  in-plane relative speed      v_i^2 = |v_r|^2 - (v_r . s_i)^2      (v_r: linear part of nu_r)
  Eq. 5  lift                          f_i = 1/2 rho v_i^2 A_i C_L(delta_i)
  Eq. 6  lift direction (body)         F_i = f_i n_i,  n_i = [0, -cos phi_i, -sin phi_i]
         (Eq. 6 with the paper's angle theta_i = phi_i - pi/2, measured from +y)
  Eq. 8  moment                        M_i = r_i x F_i
C_L(delta) = a delta for |delta| <= delta_stall, sign(delta) (a delta_stall + a_post (|delta| - delta_stall))
beyond (LRAUV Sim: cla 4.13, cla_stall -1.1, alpha_stall 0.17 rad). As in the paper, the deflection is the
angle of attack. Two additions, both documented in docs/physics.md: the lift changes sign when the vehicle
moves astern (u < 0), and a drag 1/2 rho v_i^2 A_i (c_d0 + k delta^2) acts against the in-plane flow.

Positive deflection of a top rudder behind CO pushes the tail to port and yaws the bow to starboard (r > 0);
positive deflection of a starboard elevator behind CO lifts the tail and pitches the nose down.
Servo: delta_{k+1} = clip(delta_c + (delta_k - delta_c) exp(-h/T), delta_k +- rate h), |delta_c| <= delta_max.
"""

from __future__ import annotations

import math

from numba import njit

from lotusim_physics import layout as L


@njit(cache=True, inline="always")
def lift_coefficient(delta, slope, stall, post_slope):
    """C_L(delta): linear up to the stall angle, then the post-stall slope (odd function)."""
    a = abs(delta)
    cl = slope * a if a <= stall else slope * stall + post_slope * (a - stall)
    return cl if delta >= 0.0 else -cl


@njit(cache=True, inline="always")
def fin_servo(delta, command, max_angle, decay, rate_limit, h):
    """Deflection after h: first-order lag towards the clipped command (decay = exp(-h / T), precomputed),
    then the rate limit (rad)."""
    c = min(max(command, -max_angle), max_angle)
    target = c + (delta - c) * decay
    if rate_limit > 0.0:
        step = rate_limit * h
        target = min(max(target, delta - step), delta + step)
    return target


@njit(cache=True, inline="always")
def fin_wrench(fp, k, rho, u, v, w):
    """Wrench (6-tuple, FRD at CO) of fin row k of the fin pool fp (Eqs. 4-9) for the body relative velocity."""
    cphi, sphi = fp[k, L.F_COS], fp[k, L.F_SIN]
    delta = fp[k, L.F_STATE]
    sy, sz = sphi, -cphi  # span direction (s_x = 0)
    along = v * sy + w * sz
    vpx, vpy, vpz = u, v - along * sy, w - along * sz  # in-plane relative velocity
    vi2 = vpx * vpx + vpy * vpy + vpz * vpz
    if vi2 <= 0.0:
        return 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
    q_area = 0.5 * rho * vi2 * fp[k, L.F_AREA]
    lift = q_area * lift_coefficient(delta, fp[k, L.F_SLOPE], fp[k, L.F_STALL], fp[k, L.F_POST])
    if u < 0.0:
        lift = -lift
    fx, fy, fz = 0.0, -lift * cphi, -lift * sphi
    drag = q_area * (fp[k, L.F_CD0] + fp[k, L.F_KIND] * delta * delta)
    if drag != 0.0:
        vn = math.sqrt(vi2)
        fx -= drag * vpx / vn
        fy -= drag * vpy / vn
        fz -= drag * vpz / vn
    rx, ry, rz = fp[k, L.F_POS], fp[k, L.F_POS + 1], fp[k, L.F_POS + 2]
    return fx, fy, fz, ry * fz - rz * fy, rz * fx - rx * fz, rx * fy - ry * fx
