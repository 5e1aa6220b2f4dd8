"""Names of lotusim's ROS endpoints and frames, in one place (docs/interfaces.md, "Names and namespaces").

Per-vessel topics and services are **relative** (`<vessel>/odom`, `<vessel>/imu/data`,
`<vessel>/thrusters/<thruster>/cmd`, ...): they resolve in the node's namespace, so a launch `namespace=`,
`PushRosNamespace` or `--ros-args -r __ns:=/sim` moves them to `/sim/<vessel>/...`, and a remapping rule
`-r <vessel>/odom:=/my/odom` (or its absolute form) renames one of them. Fleet-wide names stay **absolute**,
because every node of one simulation must meet on them wherever its own namespace is: `/clock` and `/tf`,
`/tf_static` (ROS conventions) and everything under `/lotusim/` (fleet state, stats, environment, the MAS
server's action and services, lockstep stepping, the workers' internal services). Remap those by their
absolute names when two simulations must share one ROS domain.

Frames (REP 105) are not namespaced (ROS 2 does not resolve frame ids): `map` (ENU world, the scenario origin),
`odom` (the ground-truth odometry frame; the simulator publishes `map` -> `odom` as a static identity because
its odometry does not drift), `<vessel>/base_link` (FLU body, parent `odom`) and `<vessel>/<sensor>_link` (a
sensor's mount, parent `<vessel>/base_link`, static, from the vehicle file's `position_frd_m`).
"""

from __future__ import annotations

MAP_FRAME = "map"
ODOM_FRAME = "odom"


def vessel_name(vessel: str, name: str) -> str:
    """The relative name of a vessel's topic or service: vessel_name("auv", "imu/data") -> "auv/imu/data"."""
    return f"{vessel}/{name}"


def base_link(vessel: str) -> str:
    """The body frame (FLU, REP 103) of a vessel."""
    return f"{vessel}/base_link"


def sensor_frame(vessel: str, kind: str) -> str:
    """The mount frame of a vessel's sensor of kind `kind` (imu, dvl, gps, ...): `<vessel>/<kind>_link`."""
    return f"{vessel}/{kind}_link"


def optical_frame(vessel: str, kind: str) -> str:
    """The optical frame (REP 103: z forward, x right, y down) of a vessel's camera: `<vessel>/<kind>_optical_link`."""
    return f"{vessel}/{kind}_optical_link"
