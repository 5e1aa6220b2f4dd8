"""lotusim environment: ocean current models, wind, bathymetry (ROS-free), and the current_server node."""
