"""Control surfaces: the N-fin model of [Meyers2025] (HoloOcean 2.0, Eqs. 4-9) with the fin's true
angle of attack from the local flow (gz-sim LiftDrag [GzSim2026]; Fossen 2021 ch. 9 fin lift),
the piecewise-linear stall of LRAUV Sim ([Player2023] Eq. 5) and first-order, rate-limited servos.

A fin sits at r_i (centre of pressure from CO, FRD) at roll angle phi_i around the body x axis
(0 = top vertical fin, pi/2 = starboard horizontal fin). Its span is s_i = [0, sin phi_i, -cos phi_i] and its
normal (the lift direction of a positive deflection in forward flow) n_i = [0, -cos phi_i, -sin phi_i]
([Meyers2025] Eq. 6 with the paper's angle theta_i = phi_i - pi/2, measured from +y).

  local flow    v_i = v_r + w x r_i                      (velocity of the fin through the water, body frame)
  in plane      a = v_i . x_b,  b = v_i . n_i,   V_i^2 = a^2 + b^2        ([Meyers2025] Eq. 4 with the local velocity)
  incidence     alpha_i = delta_i - atan(b / a)           (the fin moving towards +n sees the water from +n)
  lift, drag    L = 1/2 rho V_i^2 A C_L(alpha_i),  D = 1/2 rho V_i^2 A (c_d0 + k alpha_i^2)
                                                          ([Player2023] Eq. 5, [Meyers2025] Eq. 5)
  directions    lift  l = (-b x_b + a n_i) / V_i   (perpendicular to the local flow, in the fin's plane)
                drag -(a x_b + b n_i) / V_i        (against the local flow)
  wrench        F = L l - D (a x_b + b n_i) / V_i,   M = r_i x F          ([Meyers2025] Eqs. 8-9)

atan(b / a) lies within +-pi/2, so a fin in reverse flow (a < 0) is treated as a reversible flat plate, as gz
LiftDrag normalises alpha to +-90 deg: going astern the lift of a deflection changes sign. With b = 0 and r = 0
this is exactly the deflection-only model of [Meyers2025] (plus the drag). C_L(alpha) = a alpha up to the stall angle,
then the post-stall slope, never changing sign (gz LiftDrag: "make sure cl is still greater than 0").

The incidence term gives a fin its weathervane effect: at zero deflection a tail fin in a cross flow produces lift
against the cross flow (sway/heave stiffness Y_uv, Z_uw of Prestero 2001) and, through w x r, damping of the
turn rates (Y_ur, M_uq). Positive deflection of a top rudder behind CO pushes the tail to port and yaws the bow
to starboard (r > 0); positive deflection of a starboard elevator behind CO lifts the tail: nose down.
Servo: delta_{k+1} = clip(delta_c + (delta_k - delta_c) exp(-h/T), delta_k +- rate h), |delta_c| <= delta_max.
"""

from __future__ import annotations

import math

from numba import njit

from lotusim_physics import layout as L


@njit(cache=True, inline="always")
def lift_coefficient(alpha, slope, stall, post_slope):
    """C_L(alpha): linear up to the stall angle, then the post-stall slope, kept from changing sign (odd)."""
    a = abs(alpha)
    cl = slope * a if a <= stall else max(0.0, slope * stall + post_slope * (a - stall))
    return cl if alpha >= 0.0 else -cl


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
def incidence(a, b):
    """Flow incidence atan(b / a) in [-pi/2, pi/2] (rad) of a fin moving with (a, b) along (x_b, n_i)."""
    if a == 0.0:
        return math.copysign(0.5 * math.pi, b)
    return math.atan(b / a)


@njit(cache=True, inline="always")
def fin_wrench(fp, k, rho, u, v, w, p, q, r):
    """Wrench (6-tuple, FRD at CO) of fin row k of the fin pool fp for the body velocity relative to the water
    nu_r = (u, v, w, p, q, r) (m/s, rad/s): lift and drag from the fin's local flow (module docstring)."""
    cphi, sphi = fp[k, L.F_COS], fp[k, L.F_SIN]
    rx, ry, rz = fp[k, L.F_POS], fp[k, L.F_POS + 1], fp[k, L.F_POS + 2]
    # velocity of the fin through the water: v_r + w x r
    lx = u + q * rz - r * ry
    ly = v + r * rx - p * rz
    lz = w + p * ry - q * rx
    nx, ny, nz = 0.0, -cphi, -sphi  # fin normal (lift direction of a positive deflection)
    a = lx
    b = ly * ny + lz * nz
    vi2 = a * a + b * b
    if vi2 <= 0.0:
        return 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
    alpha = fp[k, L.F_STATE] - incidence(a, b)
    q_area = 0.5 * rho * vi2 * fp[k, L.F_AREA]
    lift = q_area * lift_coefficient(alpha, fp[k, L.F_SLOPE], fp[k, L.F_STALL], fp[k, L.F_POST])
    drag = q_area * (fp[k, L.F_CD0] + fp[k, L.F_KIND] * alpha * alpha)
    vn = math.sqrt(vi2)
    fx = (-lift * b - drag * a) / vn  # along x_b
    fn = (lift * a - drag * b) / vn  # along n_i
    fx, fy, fz = fx + fn * nx, fn * ny, fn * nz
    return fx, fy, fz, ry * fz - rz * fy, rz * fx - rx * fz, rx * fy - ry * fx
