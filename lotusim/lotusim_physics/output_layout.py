"""What numbers a dynamics worker writes where in its outputs (ROS-free: field paths as text, rows as NumPy).

The state of a vessel for ROS is the 19 columns of Fleet.scatter_state_enu: ENU position (m) 0:3, ENU <- FLU
quaternion x y z w 3:7, FLU twist (linear m/s, angular rad/s) 6 columns 7:13, FLU acceleration of the last step
13:19. The outputs take a prefix of them, in that order:
- lotusim_interfaces/FleetState: per vessel all 19 (arrays position, orientation, twist, accel: STATE_ENU_ARRAYS)
  plus the held environment at the vessel (current, wind; ENU m/s: 6 columns) and its status byte;
- nav_msgs/Odometry: the first 13 (pose and twist: ODOM_DOUBLES) and the stamp (ODOM_INTS);
- geometry_msgs/TransformStamped in a tf2_msgs/TFMessage: the first 7 (TF_DOUBLES) and the stamp.
The node-side writers (lotusim_physics.dynamics_node_outputs) lay these out in prepacked CDR messages.
"""

from __future__ import annotations

import numpy as np

# FleetState arrays and their columns per vessel
FLEET_STATE_ARRAYS = {"position": 3, "orientation": 4, "twist": 6, "accel": 6, "environment": 6}
STATE_ENU_ARRAYS = ("position", "orientation", "twist", "accel")  # the columns of Fleet.scatter_state_enu
STAMP_INTS = ["header.stamp.sec", "header.stamp.nanosec"]
# the numbers of nav_msgs/Odometry that change from one publication to the next: pose and twist, then the stamp
ODOM_DOUBLES = [
    "pose.pose.position.x", "pose.pose.position.y", "pose.pose.position.z",
    "pose.pose.orientation.x", "pose.pose.orientation.y", "pose.pose.orientation.z", "pose.pose.orientation.w",
    "twist.twist.linear.x", "twist.twist.linear.y", "twist.twist.linear.z",
    "twist.twist.angular.x", "twist.twist.angular.y", "twist.twist.angular.z",
]  # fmt: skip
ODOM_INTS = STAMP_INTS
# the numbers of a geometry_msgs/TransformStamped that change: the first 7 columns of Fleet.scatter_state_enu
TF_DOUBLES = [f"transform.translation.{a}" for a in "xyz"] + [f"transform.rotation.{a}" for a in "xyzw"]


def stamp_of(t_ns: int) -> tuple[int, int]:
    """(sec, nanosec) of sim time `t_ns` (ns >= 0), as in builtin_interfaces/Time."""
    return divmod(t_ns, 1_000_000_000)


def odometry_rows(vessels: int, groups: tuple[int, ...], period_groups: int) -> np.ndarray:
    """The fleet rows (int64) whose odometry is due when odometry groups `groups` are due: row i is in group
    i % period_groups (lotusim_physics.output_schedule spreads the vessels over the steps of a period), listed
    group by group in the order of `groups`, rows increasing within a group."""
    return np.concatenate([np.arange(g, vessels, period_groups) for g in groups])


def state_index(double_index: dict[str, np.ndarray], vessels: int) -> np.ndarray:
    """(vessels, 19) positions of each vessel's state columns (Fleet.scatter_state_enu) in a FleetState's
    doubles, from the positions of the elements of each flat array (`double_index[name]`, in order)."""
    return np.hstack([double_index[f].reshape(vessels, FLEET_STATE_ARRAYS[f]) for f in STATE_ENU_ARRAYS])
