"""The environment as the console draws it for Foxglove's 3-D panel (ROS-free): the sea surface (the waves'
elevation, when the scenario has waves) and the seabed (the bathymetry), each a triangle mesh over a square grid
around the fleet, in `map` (ENU, z up). Built from the same environment function the physics uses
(lotusim_env.environment.build_environment of the latched /lotusim/environment), so what is drawn is what the
vessels feel.
"""

from __future__ import annotations

import numpy as np
from foxglove.messages import Color, Point3, Pose, Quaternion, SceneEntity, TriangleListPrimitive, Vector3

GRID_NODES = 40  # per side
MARGIN_M = 60.0  # around the fleet's extent
MAX_HALF_SIZE_M = 1500.0  # the grid covers at most 3 km x 3 km (centred on the fleet)
SEA_COLOR = Color(r=0.15, g=0.45, b=0.85, a=0.55)
SEABED_COLOR = Color(r=0.55, g=0.45, b=0.3, a=0.9)


def grid_around(positions_enu: np.ndarray, nodes: int = GRID_NODES) -> tuple[np.ndarray, np.ndarray]:
    """(x, y) of a nodes x nodes square grid (m, `map`) covering the fleet's horizontal extent plus MARGIN_M."""
    if len(positions_enu) == 0:
        low, high = np.array([-MARGIN_M, -MARGIN_M]), np.array([MARGIN_M, MARGIN_M])
    else:
        low, high = positions_enu[:, :2].min(axis=0) - MARGIN_M, positions_enu[:, :2].max(axis=0) + MARGIN_M
    centre, half = (low + high) / 2.0, min(MAX_HALF_SIZE_M, float(np.max(high - low)) / 2.0)
    axis = np.linspace(-half, half, nodes)
    return np.meshgrid(centre[0] + axis, centre[1] + axis, indexing="ij")


def grid_triangles(nodes: int) -> list[int]:
    """Vertex indices of the two triangles of every cell of a nodes x nodes grid (row-major vertices)."""
    i, j = np.meshgrid(np.arange(nodes - 1), np.arange(nodes - 1), indexing="ij")
    a = (i * nodes + j).ravel()
    b, c, d = a + 1, a + nodes, a + nodes + 1
    return np.column_stack([a, c, b, b, c, d]).ravel().tolist()


def mesh_entity(entity_id: str, x: np.ndarray, y: np.ndarray, z: np.ndarray, color: Color, stamp) -> SceneEntity:
    """A triangle mesh through the grid points (x, y, z) (m, `map`) as one scene entity."""
    points = [
        Point3(x=float(a), y=float(b), z=float(c)) for a, b, c in zip(x.ravel(), y.ravel(), z.ravel(), strict=True)
    ]
    mesh = TriangleListPrimitive(
        pose=Pose(position=Vector3(x=0.0, y=0.0, z=0.0), orientation=Quaternion(x=0.0, y=0.0, z=0.0, w=1.0)),
        points=points,
        color=color,
        indices=grid_triangles(x.shape[0]),
    )
    return SceneEntity(timestamp=stamp, frame_id="map", id=entity_id, triangles=[mesh])


def sea_surface(environment, t_s: float, x: np.ndarray, y: np.ndarray, stamp) -> SceneEntity | None:
    """The waves' surface η(x, y, t) over the grid; None for a calm sea (no waves configured)."""
    if environment.waves.calm:
        return None
    return mesh_entity("sea_surface", x, y, surface_heights(environment, t_s, x, y), SEA_COLOR, stamp)


def surface_heights(environment, t_s: float, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """η (m, up) at the grid's points at sim time t_s."""
    points = np.column_stack([x.ravel(), y.ravel(), np.zeros(x.size)])
    return np.asarray(environment.waves.elevation_m(t_s, points), dtype=float).reshape(x.shape)


def seabed(environment, x: np.ndarray, y: np.ndarray, stamp) -> SceneEntity:
    """The sea floor z = −depth(x, y) over the grid."""
    depth = np.asarray(environment.bathymetry.seabed_depth_m(x, y), dtype=float)
    return mesh_entity("seabed", x, y, -depth, SEABED_COLOR, stamp)
