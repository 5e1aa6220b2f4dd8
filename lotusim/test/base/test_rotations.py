"""lotusim_core.base.rotations (x y z w) against scipy's Rotation (scipy 1.17, pinned: scalar-last order too),
an independent implementation, on random rotations."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from lotusim_core.base import rotations

N = 500


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(7)


def _unit(rng: np.random.Generator, n: int = N) -> np.ndarray:
    q = rng.normal(size=(n, 4))
    return q / np.linalg.norm(q, axis=1, keepdims=True)


def test_rotate_and_its_inverse_match_scipy(rng) -> None:
    q, v = _unit(rng), rng.normal(size=(N, 3)) * 10.0
    r = Rotation.from_quat(q)
    np.testing.assert_allclose(rotations.rotate(q, v), r.apply(v), atol=1e-12)
    np.testing.assert_allclose(rotations.rotate_inverse(q, v), r.inv().apply(v), atol=1e-12)
    one = np.array([0.0, 0.0, 1.0])  # one vector broadcast over the quaternions
    np.testing.assert_allclose(rotations.rotate(q, one), r.apply(np.tile(one, (N, 1))), atol=1e-12)


def test_product_matrix_and_rotation_vector_match_scipy(rng) -> None:
    a, b = _unit(rng), _unit(rng)
    ab = rotations.multiply(a, b)
    np.testing.assert_allclose(rotations.matrix(ab), (Rotation.from_quat(a) * Rotation.from_quat(b)).as_matrix(),
                               atol=1e-12)  # fmt: skip
    np.testing.assert_allclose(rotations.matrix(a), Rotation.from_quat(a).as_matrix(), atol=1e-12)
    phi = rng.normal(size=(N, 3))
    phi[0] = 0.0  # the identity
    np.testing.assert_allclose(rotations.matrix(rotations.from_rotation_vector(phi)),
                               Rotation.from_rotvec(phi).as_matrix(), atol=1e-12)  # fmt: skip


def test_euler_zyx_both_ways_match_scipy(rng) -> None:
    roll, yaw = rng.uniform(-np.pi, np.pi, (2, N))
    pitch = rng.uniform(-1.5, 1.5, N)
    expected = Rotation.from_euler("ZYX", np.column_stack([yaw, pitch, roll]))  # intrinsic z, y', x''
    q = rotations.from_euler_zyx(roll, pitch, yaw)
    np.testing.assert_allclose(rotations.matrix(q), expected.as_matrix(), atol=1e-12)
    scaled = q * rng.uniform(0.5, 2.0, (N, 1))  # euler_zyx normalises
    np.testing.assert_allclose(np.column_stack(rotations.euler_zyx(scaled)), np.column_stack([roll, pitch, yaw]),
                               atol=1e-9)  # fmt: skip
    for k in range(0, N, 50):
        assert rotations.euler_zyx_one(*scaled[k]) == pytest.approx((roll[k], pitch[k], yaw[k]), abs=1e-9)
        assert rotations.yaw_one(*q[k]) == pytest.approx(yaw[k], abs=1e-9)
    np.testing.assert_allclose(rotations.yaw_enu_rad(q), yaw, atol=1e-9)


def test_matrix_of_euler_angles_matches_scipy(rng) -> None:
    rpy = rng.uniform(-np.pi, np.pi, (N, 3))
    expected = Rotation.from_euler("ZYX", rpy[:, ::-1]).as_matrix()
    np.testing.assert_allclose(rotations.euler_zyx_matrix(rpy), expected, atol=1e-12)
    for k in range(0, N, 50):
        np.testing.assert_allclose(rotations.euler_zyx_matrix_one(*rpy[k]), expected[k], atol=1e-12)


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_turn_about_a_coordinate_axis_matches_scipy(axis: int) -> None:
    for angle in (-2.5, 0.0, 0.3, np.pi):
        vector = np.zeros(3)
        vector[axis] = angle
        q = np.array(rotations.about_axis_one(axis, angle))
        np.testing.assert_allclose(rotations.matrix(q), Rotation.from_rotvec(vector).as_matrix(), atol=1e-12)


def test_cross_equals_numpys(rng) -> None:
    a, b = rng.normal(size=(N, 3)), rng.normal(size=(N, 3))
    np.testing.assert_array_equal(rotations.cross(a, b), np.cross(a, b))
    np.testing.assert_array_equal(rotations.cross(a, b[0]), np.cross(a, b[0]))  # one vector broadcast
    np.testing.assert_array_equal(rotations.cross(a.reshape(50, 10, 3), b[:10]), np.cross(a.reshape(50, 10, 3), b[:10]))
