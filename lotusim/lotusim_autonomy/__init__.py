"""Autonomy examples written against the standard per-vessel topics (docs/autonomy.md): ROS-free control laws
(pid, reference, heading, depth, guidance, allocation) and two nodes, waypoint_follower (surface vessels) and
depth_heading_autopilot (torpedo AUVs)."""
