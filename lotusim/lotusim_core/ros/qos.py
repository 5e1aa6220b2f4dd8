"""The QoS profiles lotusim's nodes share (one definition each; docs/architecture.md).

LATCHED: the last message kept for late subscribers (transient local, reliable, depth 1), as ROS 2's
`/tf_static` and `/robot_description`: the environment, the fleet roster, scenario descriptions, static frames.
A subscriber must ask for the same durability to receive what was published before it joined.
"""

from __future__ import annotations

from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

LATCHED = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE)
