"""The static transforms of lotusim's frames on `/tf_static` (REP 105; names in lotusim_core.ros.ros_names).

`map` -> `odom` (identity: ground-truth odometry does not drift) from the dynamics worker that publishes the
clock; `<vessel>/base_link` -> `<vessel>/<sensor>_link` (the sensor's mount point in base_link FLU, metres,
axes parallel to base_link: sensors measure in body axes; a sensor with a `tilt_deg`, the sonar and the camera,
pitched down by it) and a camera's `<vessel>/camera_link` -> `<vessel>/camera_optical_link` (REP 103 optical
axes) from the sensor publisher. Published as tf2's static
broadcaster does: reliable, transient local (latched), depth 1, each message holding every transform of the
publisher, so a listener that starts later gets them all.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from typing import Any

from geometry_msgs.msg import TransformStamped
from rclpy.node import Node
from tf2_msgs.msg import TFMessage

from lotusim_core.base import rotations
from lotusim_core.ros.qos import LATCHED
from lotusim_core.ros.ros_names import MAP_FRAME, ODOM_FRAME, base_link, optical_frame, sensor_frame

FLUSH_PERIOD_S = 0.1  # wall time: many vessels configured in one burst make one message
# a flush of F s is followed by at least FLUSH_BACKOFF x F s without one, so that re-sending every transform
# while a big fleet is spawned stays a small share of the node's time (2,000 vessels x 6 sensors: 0.16 s each)
FLUSH_BACKOFF = 10.0
# x y z w of the optical axes (z forward, x right, y down) in a camera's FLU link: z_opt = x, x_opt = -y, y_opt = -z
OPTICAL_IN_LINK = (-0.5, 0.5, -0.5, 0.5)


def transform(
    parent: str,
    child: str,
    xyz: tuple[float, float, float] = (0.0, 0.0, 0.0),
    q_xyzw: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 1.0),
) -> TransformStamped:
    """A transform parent -> child: translation `xyz` (m, in the parent frame), rotation `q_xyzw` (child axes in the
    parent; none by default)."""
    t = TransformStamped()
    t.header.frame_id, t.child_frame_id = parent, child
    t.transform.translation.x, t.transform.translation.y, t.transform.translation.z = (float(c) for c in xyz)
    r = t.transform.rotation
    r.x, r.y, r.z, r.w = (float(c) for c in q_xyzw)
    return t


def map_to_odom() -> TransformStamped:
    """`map` -> `odom`, identity."""
    return transform(MAP_FRAME, ODOM_FRAME)


def sensor_transforms(vessel: str, suite: Mapping[str, Mapping[str, Any]]) -> list[TransformStamped]:
    """`<vessel>/base_link` -> `<vessel>/<kind>_link` of each sensor of a parsed suite (lotusim_sensors.suite:
    mount point x_m, y_m, z_m in base_link FLU; `tilt_deg`: pitched down by it, a rotation about base_link y), and
    a camera's optical frame under its link."""
    out = []
    for kind, p in suite.items():
        pitch = rotations.about_axis_one(1, math.radians(float(p.get("tilt_deg", 0.0))))
        out.append(transform(base_link(vessel), sensor_frame(vessel, kind), (p["x_m"], p["y_m"], p["z_m"]), pitch))
        if kind == "camera":
            out.append(transform(sensor_frame(vessel, kind), optical_frame(vessel, kind), q_xyzw=OPTICAL_IN_LINK))
    return out


class StaticFrames:
    """A node's static transforms, keyed (one key per vessel, or any group), sent together on /tf_static."""

    def __init__(self, node: Node) -> None:
        self._node = node
        self._pub = node.create_publisher(TFMessage, "/tf_static", LATCHED)
        self._groups: dict[Any, list[TransformStamped]] = {}
        self._dirty = False
        self._quiet_until = 0.0  # monotonic s: no flush before (FLUSH_BACKOFF)
        self._timer = node.create_timer(FLUSH_PERIOD_S, self.flush)

    def set(self, key: Any, transforms: list[TransformStamped]) -> None:
        """Replace the transforms of `key` (sent at the next flush)."""
        self._groups[key] = transforms
        self._dirty = True

    def discard(self, key: Any) -> None:
        """Drop the transforms of `key` (a listener keeps the frames it has; new listeners do not get them)."""
        if self._groups.pop(key, None) is not None:
            self._dirty = True

    def flush(self) -> None:
        """Publish every transform if something changed since the last message."""
        if not self._dirty or time.monotonic() < self._quiet_until:
            return
        start = time.monotonic()
        self._dirty = False
        stamp = self._node.get_clock().now().to_msg()
        transforms = [t for group in self._groups.values() for t in group]
        for t in transforms:
            t.header.stamp = stamp
        self._pub.publish(TFMessage(transforms=transforms))
        end = time.monotonic()
        self._quiet_until = end + FLUSH_BACKOFF * (end - start)


def publish_once(node: Node, transforms: list[TransformStamped]):
    """Publish fixed transforms once on /tf_static (latched); returns the publisher, to keep alive."""
    pub = node.create_publisher(TFMessage, "/tf_static", LATCHED)
    stamp = node.get_clock().now().to_msg()
    for t in transforms:
        t.header.stamp = stamp
    pub.publish(TFMessage(transforms=transforms))
    return pub
