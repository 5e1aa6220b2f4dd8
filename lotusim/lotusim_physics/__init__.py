"""lotusim physics: batched Fossen 6-DOF vessel dynamics, actuators, hydrostatics and loads (ROS-free),
and the dynamics (fleet integrator) node."""
