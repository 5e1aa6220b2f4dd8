"""Options for the per-vessel topics that nodes create and destroy by the thousand (a vessel's command
subscriptions, odometry and sensor publishers).

rclpy gives every publisher and subscription two default event handlers (incompatible QoS, incompatible type:
a warning when a peer mismatches). Destroying one of them took about 10 ms here (rclpy's EventHandler
destruction under the events executor): a vessel has about ten, so deleting 1,000 vessels blocked the worker for
about 100 s, against seconds to create them. Per-vessel endpoints go without them: their QoS and types are
fixed by lotusim (docs/interfaces.md), and `ros2 topic info --verbose` still shows a peer's mismatch.
"""

from __future__ import annotations

from rclpy.event_handler import PublisherEventCallbacks, SubscriptionEventCallbacks

QUIET_PUBLISHER = PublisherEventCallbacks(use_default_callbacks=False)  # event_callbacks: no event handlers
QUIET_SUBSCRIPTION = SubscriptionEventCallbacks(use_default_callbacks=False)
