"""lotusim sensors: batched sensor models (ROS-free) and the sensor_publisher node."""
