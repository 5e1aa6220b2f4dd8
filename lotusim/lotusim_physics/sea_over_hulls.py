"""The sea surface over each surface vessel's hull: what its wave loads are made of (ROS-free, NumPy).

Each vessel carries K sample points over its waterplane (FRD x forward, y starboard, from CO on the still
waterline; e.g. an n_long × n_trans grid over length × beam, `hull_grid_frd`). At sim time t the points are
placed in the world by the vessel's pose, r_k = p + R(q) [x_k, y_k, 0] (NED), the sea of lotusim_env.waves is
evaluated there (the same function every node evaluates: the surface that is drawn and sensed is the one that
pushes), and a plane is fitted to the K elevations of each vessel by least squares, about the points' centre c:

    η_k ≈ η̄ + s_N (N_k − c_N) + s_E (E_k − c_E)          (η up, m; s = ∂η/∂N, ∂η/∂E)

- η̄ is the mean sea over the hull: the heave input of the hydrostatics (immersion z_CO + η̄ instead of z_CO).
  Waves shorter than the hull average out: for a regular wave of amplitude a along K points d apart, η̄ has the
  amplitude a |sin(K k d / 2) / (K sin(k d / 2))| (the Dirichlet kernel; → a for λ ≫ hull, → 0 for λ ≪ hull),
  as facet averaging does in xdyn's hydrostatics [LOTUSimXdyn2025].
- n = (s_N, s_E, 1)/‖(s_N, s_E, 1)‖ (NED) is the local downward normal of the sea: roll and pitch restoring
  align the hull with it (R(q)^T n in place of R(q)^T e_z in lotusim_physics.restoring), so heave, roll and
  pitch follow waves longer than the hull.
- The orbital velocity averaged over the same points (taken at the surface where a point is above it: NED m/s)
  joins the current in the relative velocity of the hull, averaged like η̄ (a short wave's orbits cancel over
  a long hull); an underwater vehicle feels the orbital velocity at its CO (decay e^{kz}, lotusim_env.waves),
  and its surface crossing (restoring.py) is measured from the sea η above its CO.

The Fleet (lotusim_physics.fleet) samples these before every step when it is given a sea and the kernel uses
them (layout.X_WAVE; equations_of_motion, restoring).
Frames: NED/FRD on the physics side, ENU on the environment side, converted by lotusim_core.base.frames only.
"""

from __future__ import annotations

import numpy as np

from lotusim_core.base import frames
from lotusim_env.waves import WaveComponents, wave_sample


def hull_grid_frd(length_m: float, beam_m: float, n_long: int = 3, n_trans: int = 2) -> np.ndarray:
    """(n_long · n_trans, 2) sample points (x forward, y starboard; m, FRD from CO) at the centres of an
    n_long × n_trans grid of equal cells over the waterplane rectangle length × beam (each point stands for one
    cell: A_wp / K of the waterplane)."""
    x = (np.arange(n_long) + 0.5) / n_long * length_m - 0.5 * length_m
    y = (np.arange(n_trans) + 0.5) / n_trans * beam_m - 0.5 * beam_m
    xx, yy = np.meshgrid(x, y, indexing="ij")
    return np.column_stack([xx.ravel(), yy.ravel()])


class SeaOverHulls:
    """The sea at the hulls of N vessels at one instant: elevation_m η̄ (N,, m up, at the hull's centre),
    slope_ne (N, 2) ∂η/∂N, ∂η/∂E, normal_ned (N, 3) the sea's downward unit normal, orbital_velocity_ned (N, 3)
    m/s averaged over the hull's points."""

    def __init__(self, elevation: np.ndarray, slope_ne: np.ndarray, orbital_velocity_ned: np.ndarray) -> None:
        self.elevation_m = elevation
        self.slope_ne = slope_ne
        normal = np.column_stack([slope_ne, np.ones(len(elevation))])
        self.normal_ned = normal / np.linalg.norm(normal, axis=1, keepdims=True)
        self.orbital_velocity_ned = orbital_velocity_ned


def place_points(position_ned: np.ndarray, q_ned_frd_wxyz: np.ndarray, points_frd: np.ndarray) -> np.ndarray:
    """World positions (N, K, 3, NED m) of body points (K, 2) or (N, K, 2) on the waterline plane of each
    vessel's body (z_FRD = 0): r_k = p + R(q) [x_k, y_k, 0]."""
    points = np.asarray(points_frd, dtype=float)
    n = len(position_ned)
    points = np.broadcast_to(points, (n, *points.shape[-2:]))
    body = np.concatenate([points, np.zeros((*points.shape[:-1], 1))], axis=-1)  # (N, K, 3)
    rotation = frames.rotation_matrix(np.asarray(q_ned_frd_wxyz, dtype=float))  # (N, 3, 3)
    return np.asarray(position_ned, dtype=float)[:, None, :] + np.einsum("nij,nkj->nki", rotation, body)


def fit_planes(points_ned: np.ndarray, eta_m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Least-squares planes η ≈ η̄ + s_N ΔN + s_E ΔE of each vessel's K samples (N, K) at (N, K, 3) NED points,
    Δ from the points' centre: (η̄ (N,), s (N, 2)). About the centre the mean decouples (η̄ = mean η) and the
    slopes solve the 2 x 2 normal equations (Σ Δ Δᵀ) s = Σ Δ η, in closed form; collinear points (a hull
    sampled along its centreline) get the minimum-norm slope: none across the line."""
    offsets = points_ned[..., :2] - points_ned[..., :2].mean(axis=1, keepdims=True)
    mean = eta_m.mean(axis=1)
    gram = np.einsum("nki,nkj->nij", offsets, offsets)  # (N, 2, 2)
    rhs = np.einsum("nki,nk->ni", offsets, eta_m - mean[:, None])
    det = gram[:, 0, 0] * gram[:, 1, 1] - gram[:, 0, 1] * gram[:, 1, 0]
    scale = np.maximum(gram[:, 0, 0] + gram[:, 1, 1], np.finfo(float).tiny)
    regular = det > 1e-9 * scale**2
    slope = np.empty_like(rhs)
    g = gram[regular]
    slope[regular, 0] = (g[:, 1, 1] * rhs[regular, 0] - g[:, 0, 1] * rhs[regular, 1]) / det[regular]
    slope[regular, 1] = (g[:, 0, 0] * rhs[regular, 1] - g[:, 1, 0] * rhs[regular, 0]) / det[regular]
    if not regular.all():
        singular = ~regular
        slope[singular] = np.einsum("nij,nj->ni", np.linalg.pinv(gram[singular]), rhs[singular])
    return mean, slope


def sea_over_hulls(
    sea: WaveComponents,
    t_s: float,
    position_ned: np.ndarray,
    q_ned_frd_wxyz: np.ndarray,
    points_frd: np.ndarray,
) -> SeaOverHulls:
    """η̄, slopes and normal of the sea over each hull (sample points `points_frd`, (K, 2) or (N, K, 2)) and the
    orbital velocity averaged over them, at sim time t_s: one batched evaluation of the sea at all N·K points."""
    placed = place_points(position_ned, q_ned_frd_wxyz, points_frd)
    n, k = placed.shape[:2]
    sample = wave_sample(sea, t_s, frames.ned_to_enu(placed.reshape(n * k, 3)), follow_surface=True)
    eta = sample.elevation_m.reshape(n, k).astype(float)
    mean, slope = fit_planes(placed, eta)
    velocity = frames.enu_to_ned(sample.velocity_enu.astype(float)).reshape(n, k, 3).mean(axis=1)
    return SeaOverHulls(mean, slope, velocity)


def sea_at_co(sea: WaveComponents, t_s: float, position_ned: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(η (N,, m up) above each CO, orbital velocity (N, 3, NED m/s) at it); a CO above the local surface (a hull
    in a trough) takes the value at the surface below it, z_up = min(z_CO, η), so a floating hull always moves in
    wet water."""
    co_enu = frames.ned_to_enu(np.asarray(position_ned, dtype=float))
    sample = wave_sample(sea, t_s, co_enu, follow_surface=True)
    return sample.elevation_m.astype(float), frames.enu_to_ned(sample.velocity_enu.astype(float))


def orbital_velocity_at_co(sea: WaveComponents, t_s: float, position_ned: np.ndarray) -> np.ndarray:
    """The orbital velocity of `sea_at_co` (N, 3, NED m/s)."""
    return sea_at_co(sea, t_s, position_ned)[1]
