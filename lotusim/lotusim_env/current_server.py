"""current_server node: owns the environment configuration, publishes it latched, answers current queries.

Topics and services (see docs/interfaces.md):
- /lotusim/environment (lotusim_interfaces/EnvironmentConfig, transient local): the configuration as YAML,
  re-published whenever a parameter changes.
- /lotusim/query_current (lotusim_interfaces/srv/QueryCurrent): batch point queries, ENU.
Parameters: `environment_yaml` (the whole configuration as YAML), `max_query_points`.
"""

from __future__ import annotations

import numpy as np
import rclpy
import yaml
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rcl_interfaces.msg import SetParametersResult

from lotusim_core.ros_arrays import to_float64_array
from lotusim_env.environment import ConfigError, Environment, build_environment
from lotusim_interfaces.msg import EnvironmentConfig
from lotusim_interfaces.srv import QueryCurrent

LATCHED = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE)


class CurrentServer(Node):
    """ROS wiring of lotusim_env.environment: parameters in, latched configuration and query service out."""

    def __init__(self, **node_kwargs) -> None:
        super().__init__("current_server", **node_kwargs)
        self.declare_parameter("environment_yaml", "current: {model: constant, velocity_enu: [0.0, 0.0, 0.0]}")
        self.declare_parameter("max_query_points", 100_000)
        self._revision = 0
        self._config_yaml = self.get_parameter("environment_yaml").value
        self._env: Environment = build_environment(yaml.safe_load(self._config_yaml))
        self._config_pub = self.create_publisher(EnvironmentConfig, "/lotusim/environment", LATCHED)
        self.create_service(QueryCurrent, "/lotusim/query_current", self._on_query)
        self.add_on_set_parameters_callback(self._on_set_parameters)
        self._publish_config()

    def _on_set_parameters(self, params: list[Parameter]) -> SetParametersResult:
        for param in params:
            if param.name != "environment_yaml":
                continue
            try:
                env = build_environment(yaml.safe_load(param.value))
            except (ConfigError, yaml.YAMLError) as exc:
                return SetParametersResult(successful=False, reason=str(exc))
            self._env, self._config_yaml = env, param.value
            self._publish_config()
        return SetParametersResult(successful=True)

    def _publish_config(self) -> None:
        self._revision += 1
        msg = EnvironmentConfig(revision=self._revision, config_yaml=self._config_yaml)
        msg.header.stamp = self.get_clock().now().to_msg()
        self._config_pub.publish(msg)

    def _on_query(self, request: QueryCurrent.Request, response: QueryCurrent.Response) -> QueryCurrent.Response:
        points = np.asarray(request.points_enu, dtype=float)
        max_points = self.get_parameter("max_query_points").value
        t_s = request.time_s if request.time_s >= 0.0 else self.get_clock().now().nanoseconds * 1e-9
        response.time_s = float(t_s)
        if points.size % 3:
            response.message = f"points_enu has {points.size} values, expected a multiple of 3 (x, y, z per point)"
        elif points.size // 3 > max_points:
            response.message = f"{points.size // 3} points requested, at most {max_points} per query"
        elif not (np.all(np.isfinite(points)) and np.isfinite(t_s)):
            response.message = "points_enu and time_s must be finite"
        else:
            response.velocities_enu = to_float64_array(self._env.current.velocity_enu(t_s, points.reshape(-1, 3)))
            response.success = True
        if not response.success:
            self.get_logger().warning(f"query refused: {response.message}")
        return response


def main(args: list[str] | None = None) -> None:
    """Entry point of `ros2 run lotusim current_server`."""
    rclpy.init(args=args)
    node = CurrentServer()
    try:
        rclpy.spin(node)
    except KeyboardInterrupt:
        pass
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
