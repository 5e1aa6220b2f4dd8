"""The equations of motion term by term: the compiled derivative against Fossen's matrix forms written out
independently here (M_RB, C_RB, C_A, D, g(eta) with Euler angles), and the structural properties the physics
relies on (skew-symmetric C, restoring = Fossen eq. 4.6)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from physics_reference_vehicles import level_quat

from lotusim_core.base.catalogue import load_vehicle
from lotusim_core.base.fossen import m_rb
from lotusim_physics import layout as L
from lotusim_physics.added_mass import c_a, c_a_mask
from lotusim_physics.equations_of_motion import vessel_derivative
from lotusim_physics.fleet import Fleet
from lotusim_physics.rigid_body import c_rb


def S(a):  # noqa: N802 - Fossen's symbol
    return np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]], dtype=float)


def fossen_g_euler(weight, buoyancy, rg, rb, phi, theta):
    """Fossen 2021 eq. 4.6 (restoring forces of a submerged body, Euler angles)."""
    sth, cth, sph, cph = math.sin(theta), math.cos(theta), math.sin(phi), math.cos(phi)
    xg, yg, zg = rg
    xb, yb, zb = rb
    return np.array(
        [
            (weight - buoyancy) * sth,
            -(weight - buoyancy) * cth * sph,
            -(weight - buoyancy) * cth * cph,
            -(yg * weight - yb * buoyancy) * cth * cph + (zg * weight - zb * buoyancy) * cth * sph,
            (zg * weight - zb * buoyancy) * sth + (xg * weight - xb * buoyancy) * cth * cph,
            -(xg * weight - xb * buoyancy) * cth * sph - (yg * weight - yb * buoyancy) * sth,
        ]
    )


def fin_wrench_reference(fin, delta, nu_r, rho):
    """One fin's wrench written with vectors: local flow v_r + w x r, angle of attack delta - atan(b / a), lift
    perpendicular to the in-plane flow, drag against it, C_L piecewise linear with the gz LiftDrag sign clamp."""
    r = np.asarray(fin.position_frd_m, dtype=float)
    v = nu_r[:3] + np.cross(nu_r[3:], r)
    x_b = np.array([1.0, 0.0, 0.0])
    n = np.array([0.0, -math.cos(fin.roll_angle_rad), -math.sin(fin.roll_angle_rad)])
    a, b = v @ x_b, v @ n
    speed = math.hypot(a, b)
    alpha = delta - math.atan(b / a)
    mag = abs(alpha)
    if mag <= fin.stall_angle_rad:
        cl = fin.lift_slope_per_rad * mag
    else:
        cl = max(
            0.0,
            fin.lift_slope_per_rad * fin.stall_angle_rad + fin.post_stall_slope_per_rad * (mag - fin.stall_angle_rad),
        )
    cl = math.copysign(cl, alpha)
    cd = fin.cd0 + fin.induced_drag_factor * alpha**2
    q_area = 0.5 * rho * speed**2 * fin.area_m2
    force = q_area * cl * (a * n - b * x_b) / speed - q_area * cd * (a * x_b + b * n) / speed
    return np.concatenate([force, np.cross(r, force)])


def body_lift_reference(spec, nu_r, rho):
    """Prestero's hull lift: F = -1/2 rho d^2 c_yd |u_r| [0, v_r, w_r] at [x_cp, 0, 0]."""
    if spec.body_lift is None:
        return np.zeros(6)
    bl = spec.body_lift
    force = -0.5 * rho * bl.diameter_m**2 * bl.lift_coefficient_per_rad * abs(nu_r[0]) * np.array([0.0, *nu_r[1:3]])
    return np.concatenate([force, np.cross([bl.centre_of_pressure_x_m, 0.0, 0.0], force)])


def _derivative(fleet: Fleet, i: int, x: np.ndarray) -> np.ndarray:
    xdot = np.empty(13)
    f0, nf = fleet._vi[i, 2], fleet._vi[i, 3]
    rho, grav = fleet.water_density_kgm3, fleet.gravity_mps2
    vessel_derivative(x, fleet._xs, i, fleet._vp[i], fleet._fp, f0, nf, np.zeros(6), rho, grav, xdot)
    return xdot


@pytest.mark.parametrize("model", ["remus100", "bluerov2_heavy", "lrauv"])
def test_compiled_derivative_equals_fossen_matrix_form(model):
    """nu_dot of the kernel = M^-1 (tau - C_RB(nu) nu - C_A(nu_r) nu_r - D(nu_r) nu_r - g(eta) + M_A nu_c_dot)
    assembled from explicit matrices, for random states, attitudes, currents and a body wrench; tau includes
    the fins (zero deflection, lift from the local flow's incidence) and the hull lift, written here with
    vectors (fin_wrench_reference, body_lift_reference)."""
    spec = load_vehicle(model)
    rng = np.random.default_rng(7)
    fleet = Fleet(0.02)
    fleet.add("v", spec, [1.0, 2.0, 30.0], [1.0, 0.0, 0.0, 0.0])
    rho, grav = fleet.water_density_kgm3, fleet.gravity_mps2
    mrb = m_rb(spec.mass_kg, spec.inertia_cg_kgm2, spec.cg_frd_m)
    mass = mrb + spec.added_mass
    for _ in range(20):
        phi, theta, psi = rng.uniform(-1.2, 1.2, 3)
        q = level_quat(psi, theta, phi)
        nu = rng.normal(scale=0.5, size=6)
        cur = rng.normal(scale=0.5, size=3)
        wrench = rng.normal(scale=5.0, size=6)
        fleet.set_body_wrench("v", wrench)
        fleet._xs[0, L.X_CUR : L.X_CUR + 3] = cur
        x = np.concatenate([[1.0, 2.0, 30.0], q, nu])
        xdot = _derivative(fleet, 0, x)
        # reference: rotation from Euler angles (Fossen eq. 2.18), independent of the quaternion code
        rz = np.array([[math.cos(psi), -math.sin(psi), 0], [math.sin(psi), math.cos(psi), 0], [0, 0, 1]])
        ry = np.array([[math.cos(theta), 0, math.sin(theta)], [0, 1, 0], [-math.sin(theta), 0, math.cos(theta)]])
        rx = np.array([[1, 0, 0], [0, math.cos(phi), -math.sin(phi)], [0, math.sin(phi), math.cos(phi)]])
        rot = rz @ ry @ rx
        v_c = rot.T @ cur
        nu_r = nu - np.concatenate([v_c, np.zeros(3)])
        nu_c_dot = np.concatenate([-S(nu[3:]) @ v_c, np.zeros(3)])
        damping = spec.damping_linear @ nu_r + spec.damping_quadratic @ (np.abs(nu_r) * nu_r)
        g_eta = fossen_g_euler(
            spec.mass_kg * grav, rho * grav * spec.volume_m3, spec.cg_frd_m, spec.cb_frd_m, phi, theta
        )
        hydro_lift = body_lift_reference(spec, nu_r, rho)
        for fin in spec.fins:
            hydro_lift = hydro_lift + fin_wrench_reference(fin, 0.0, nu_r, rho)
        rhs = (
            wrench
            + hydro_lift
            - c_rb(spec.mass_kg, spec.inertia_cg_kgm2, spec.cg_frd_m, nu) @ nu
            - (c_a(spec.added_mass, nu_r) * c_a_mask(spec.coriolis_added_mass)) @ nu_r
            - damping
            - g_eta
            + spec.added_mass @ nu_c_dot
        )
        # thrusters are off
        np.testing.assert_allclose(xdot[7:], np.linalg.solve(mass, rhs), rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(xdot[:3], rot @ nu[:3], atol=1e-12)


def test_coriolis_matrices_are_skew_symmetric_and_do_no_work():
    """C_RB(nu) (linear-velocity-independent form) and C_A(nu_r) (and its no_munk mask) are skew-symmetric for
    any velocity, so nu' C nu = 0: they transfer energy between degrees of freedom but never create it."""
    spec = load_vehicle("remus100")
    rng = np.random.default_rng(1)
    for _ in range(10):
        nu = rng.normal(size=6)
        crb = c_rb(spec.mass_kg, spec.inertia_cg_kgm2, spec.cg_frd_m, nu)
        np.testing.assert_allclose(crb, -crb.T, atol=1e-12)
        for mode in ("full", "no_munk"):
            ca = c_a(spec.added_mass, nu) * c_a_mask(mode)
            np.testing.assert_allclose(ca, -ca.T, atol=1e-12)
            assert abs(nu @ ca @ nu) < 1e-12
        # C_RB reproduces Newton-Euler about CO: m (v_dot + w x v + ...) - here its velocity terms
        w, v = nu[3:], nu[:3]
        rg = spec.cg_frd_m
        force = spec.mass_kg * (np.cross(w, v) + np.cross(w, np.cross(w, rg)))
        np.testing.assert_allclose((crb @ nu)[:3], force, atol=1e-12)


def test_munk_moment_of_full_c_a_has_the_textbook_sign_and_size():
    """For a slender body moving with u and w only (M_A = diag(X, Y, Z, K, M, N) as positive magnitudes), the
    C_A pitch row on the left-hand side is (X - Z) u w: the moment on the body is the Munk moment (Z - X) u w,
    nose-up for u, w > 0, i.e. it increases the angle of attack (destabilising). no_munk removes it."""
    added = np.diag([5.0, 100.0, 100.0, 0.0, 30.0, 30.0])
    u, w = 1.5, 0.2
    nu = np.array([u, 0.0, w, 0.0, 0.0, 0.0])
    assert -(c_a(added, nu) @ nu)[4] == pytest.approx((100.0 - 5.0) * u * w)
    assert (c_a(added, nu) * c_a_mask("no_munk") @ nu)[4] == 0.0
