"""lotusim_core.base.frames: NED/FRD <-> ENU/FLU, checked against geometry (where the body axes point), not against
the module's own formulas. transforms3d (an independent implementation) provides the ENU Euler reference."""

from __future__ import annotations

import math

import numpy as np
import pytest
from physics_reference_vehicles import level_quat
from transforms3d.euler import euler2quat
from transforms3d.quaternions import quat2mat

from lotusim_core.base import frames


def test_position_and_velocity_axes():
    # 10 m north, 20 m east, 5 m deep -> ENU x = east 20, y = north 10, z = up -5
    np.testing.assert_array_equal(frames.ned_to_enu([10.0, 20.0, 5.0]), [20.0, 10.0, -5.0])
    np.testing.assert_array_equal(frames.enu_to_ned([20.0, 10.0, -5.0]), [10.0, 20.0, 5.0])
    # body: 1 m/s forward, 2 m/s to starboard, 3 m/s down -> FLU: forward 1, left -2, up -3
    np.testing.assert_array_equal(frames.frd_to_flu([1.0, 2.0, 3.0]), [1.0, -2.0, -3.0])
    # yaw rate to starboard (r > 0 in FRD) is a clockwise turn seen from above: negative yaw rate in FLU
    np.testing.assert_array_equal(frames.twist_frd_to_flu([1, 2, 3, 0.1, 0.2, 0.3]), [1, -2, -3, 0.1, -0.2, -0.3])


def test_north_east_heading_nose_up_appears_right_in_enu_flu():
    """Issue 3: a vessel heading north-east and pitching nose-up in NED has the right ENU/FLU quaternion.

    Heading 45 deg (NE) and pitch +10 deg (nose up) in NED. In ENU the same vessel has yaw +45 deg (from east,
    counter-clockwise: NE) and pitch -10 deg (a nose-up turn about FLU's left-pointing y axis is negative)."""
    psi, theta = math.radians(45.0), math.radians(10.0)
    q_ned_frd = level_quat(yaw_rad=psi, pitch_rad=theta)
    q_enu_flu = frames.q_ned_frd_to_q_enu_flu(q_ned_frd)
    # independent reference: transforms3d static xyz (= R = Rz(yaw) Ry(pitch) Rx(roll)), returned as w x y z
    w, x, y, z = euler2quat(0.0, -theta, psi, "sxyz")
    expected_xyzw = np.array([x, y, z, w]) * np.sign(w)
    np.testing.assert_allclose(q_enu_flu, expected_xyzw, atol=1e-12)
    # geometry: the body's forward axis points north-east and up, its left axis points north-west and level
    rot = quat2mat(q_enu_flu[[3, 0, 1, 2]])
    forward_enu = rot @ [1.0, 0.0, 0.0]
    np.testing.assert_allclose(
        forward_enu, [math.cos(theta) * math.sqrt(0.5), math.cos(theta) * math.sqrt(0.5), math.sin(theta)], atol=1e-12
    )
    left_enu = rot @ [0.0, 1.0, 0.0]
    np.testing.assert_allclose(left_enu, [-math.sqrt(0.5), math.sqrt(0.5), 0.0], atol=1e-12)
    # the anchor's bug (swapped components) would put w first: make sure the scalar is last
    assert q_enu_flu[3] == pytest.approx(expected_xyzw[3])


def test_quaternion_round_trip_batched_and_body_vectors_consistent():
    rng = np.random.default_rng(3)
    q = rng.normal(size=(50, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    q_enu = frames.q_ned_frd_to_q_enu_flu(q)
    assert q_enu.shape == (50, 4)
    back = frames.q_enu_flu_to_q_ned_frd(q_enu)
    np.testing.assert_allclose(back, q * np.sign(q[:, :1]), atol=1e-12)
    # a body vector mapped to the world either way gives the same world vector
    v_frd = rng.normal(size=(50, 3))
    world_ned = np.einsum("nij,nj->ni", frames.rotation_matrix(q), v_frd)
    world_enu = np.einsum("nij,nj->ni", frames.rotation_matrix(frames.xyzw_to_wxyz(q_enu)), frames.frd_to_flu(v_frd))
    np.testing.assert_allclose(frames.ned_to_enu(world_ned), world_enu, atol=1e-12)


def test_level_north_facing_vessel_has_enu_yaw_90_deg():
    q_enu = frames.q_ned_frd_to_q_enu_flu([1.0, 0.0, 0.0, 0.0])
    np.testing.assert_allclose(q_enu, [0.0, 0.0, math.sin(math.pi / 4), math.cos(math.pi / 4)], atol=1e-15)
    assert frames.yaw_ned_to_enu(0.0) == pytest.approx(math.pi / 2)
    assert frames.yaw_enu_to_ned(math.pi / 2) == pytest.approx(0.0)


def test_euler_helpers_match_independent_formula_and_reject_bad_input():
    q = frames.quat_from_euler_zyx(0.1, -0.2, 2.5)
    np.testing.assert_allclose(q, level_quat(2.5, -0.2, 0.1) * np.sign(level_quat(2.5, -0.2, 0.1)[0]), atol=1e-15)
    np.testing.assert_allclose(frames.euler_zyx_from_quat(q), [0.1, -0.2, 2.5], atol=1e-12)
    with pytest.raises(ValueError, match="expected shape"):
        frames.ned_to_enu([1.0, 2.0])
    with pytest.raises(ValueError, match="non-zero"):
        frames.quat_normalize([0.0, 0.0, 0.0, 0.0])


def test_compiled_fleet_conversion_equals_the_reference_functions():
    rng = np.random.default_rng(11)
    n = 257
    pos = rng.normal(scale=100.0, size=(n, 3))
    q = rng.normal(size=(n, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    nu, nu_dot = rng.normal(size=(n, 6)), rng.normal(size=(n, 6))
    block = np.hstack([pos, q, nu, nu_dot])  # strided views, as the fleet passes them
    out = frames.state_ned_frd_to_enu_flu(block[:, 0:3], block[:, 3:7], block[:, 7:13], block[:, 13:19])
    np.testing.assert_array_equal(out[0], frames.ned_to_enu(pos))
    np.testing.assert_allclose(out[1], frames.q_ned_frd_to_q_enu_flu(q), rtol=0, atol=1e-15)
    np.testing.assert_array_equal(out[2], frames.twist_frd_to_flu(nu))
    np.testing.assert_array_equal(out[3], frames.twist_frd_to_flu(nu_dot))
    empty = frames.state_ned_frd_to_enu_flu(np.zeros((0, 3)), np.zeros((0, 4)), np.zeros((0, 6)), np.zeros((0, 6)))
    assert [a.shape for a in empty] == [(0, 3), (0, 4), (0, 6), (0, 6)]


def test_scatter_writes_the_packed_state_of_the_chosen_rows_where_the_index_says():
    """scatter_state_ned_frd_to_enu_flu (what fills the serialized FleetState / Odometry) writes exactly the
    columns of the packed conversion, for the rows asked only, at the positions of the index."""
    rng = np.random.default_rng(5)
    n = 9
    q = rng.normal(size=(n, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    block = np.hstack([rng.normal(size=(n, 3)), q, rng.normal(size=(n, 6)), rng.normal(size=(n, 6))])
    args = (block[:, 0:3], block[:, 3:7], block[:, 7:13], block[:, 13:19])
    packed = frames.state_ned_frd_to_enu_flu_packed(*args)
    index = rng.permutation(n * 13).reshape(n, 13)  # 13 columns: pose and twist, as in an Odometry
    dst = np.full(n * 13 + 4, np.nan)
    rows = np.array([7, 2, 4], dtype=np.int64)
    frames.scatter_state_ned_frd_to_enu_flu(*args, rows, dst, index)
    for i in range(n):
        expected = packed[i, :13] if i in rows else np.full(13, np.nan)
        np.testing.assert_array_equal(dst[index[i]], expected)
    assert np.isnan(dst[n * 13 :]).all()


def test_heading_and_yaw_give_the_level_quaternion_of_rep_103():
    """Compass heading 90 deg (east) is ENU yaw 0: the identity; heading 0 (north) is yaw +90 deg about z up;
    heading 180 (south) is yaw -90 deg. One conversion for the scenario, the registry and the fleet CLI."""
    s = math.sqrt(0.5)
    np.testing.assert_allclose(frames.heading_to_q_enu_flu(90.0), [0.0, 0.0, 0.0, 1.0], atol=1e-12)
    np.testing.assert_allclose(frames.heading_to_q_enu_flu(0.0), [0.0, 0.0, s, s], atol=1e-12)
    np.testing.assert_allclose(frames.heading_to_q_enu_flu(180.0), [0.0, 0.0, -s, s], atol=1e-12)
    np.testing.assert_allclose(frames.yaw_to_q_enu_flu(math.pi / 2), [0.0, 0.0, s, s], atol=1e-12)


def test_a_commanded_orientation_is_normalised_even_near_the_float_range():
    assert frames.unit_quaternion_of_input((0.0, 0.0, 0.0, 2.0)) == (0.0, 0.0, 0.0, 1.0)
    assert frames.unit_quaternion_of_input((1e308, 0.0, 0.0, 1e308)) == pytest.approx(
        (math.sqrt(0.5), 0, 0, math.sqrt(0.5))
    )
    assert frames.unit_quaternion_of_input((0.0, 0.0, 0.0, 0.0)) is None
