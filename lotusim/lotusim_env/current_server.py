"""current_server node: owns the environment configuration, publishes it latched, answers current queries,
draws the current field for RViz.

The node only wires ROS to lotusim_env.environment (`build_environment(config).current.velocity_enu`), to
lotusim_env.config (the configuration as one YAML text plus typed leaves, its ranges and changes), to
lotusim_env.current_parameters (the parameters as data, what changes together) and lotusim_env.current_queries
(a query's answer, the arrows; drawn by lotusim_env.current_markers); every
other node rebuilds the same field from the latched configuration (our design choice, docs/architecture.md rule 3:
the environment is a pure, seeded function of configuration, seed, sim time and position).

Parameters (docs/current_server.md):
- `environment_yaml` (string): the whole environment configuration as YAML (schema: docs/environment.md).
- one typed parameter per scalar or numeric-list leaf of that configuration, named by its dotted path
  (`current.model`, `current.latitude_deg`, `wind.speed_mps`, `current.seed`, ...), with a descriptor (type,
  range where one is known, description). Setting one edits that key; setting `current.model` resets the
  `current` section to the new model's defaults (plus any `current.*` set in the same call). The typed
  parameters and `environment_yaml` are kept in step atomically (pre-set callback).
- `max_query_points`, and `markers.*` (rate, grid, depths, arrow scale).
Topics and services:
- /lotusim/environment (lotusim_interfaces/EnvironmentConfig, reliable, transient local = latched): the
  configuration as YAML, re-published with revision + 1 whenever it changes.
- /lotusim/query_current (lotusim_interfaces/srv/QueryCurrent): batch point queries, ENU `map`.
- /lotusim/current_markers (visualization_msgs/MarkerArray): current arrows on a horizontal grid, frame `map`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor, SetParametersResult
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.parameter import Parameter
from visualization_msgs.msg import MarkerArray

from lotusim_core.ros.node_runner import run_node_main
from lotusim_core.ros.qos import LATCHED
from lotusim_core.ros.ros_arrays import to_float64_array
from lotusim_env import config
from lotusim_env import current_parameters as settings
from lotusim_env.config import YAML_PARAM, ConfigRefused, apply_parameters, build_checked, dump_config, plain_value
from lotusim_env.current_markers import CurrentArrows
from lotusim_env.current_queries import answer_query, grid_arrows, marker_grid_enu, query_time_s
from lotusim_env.environment import Environment
from lotusim_interfaces.msg import EnvironmentConfig
from lotusim_interfaces.srv import QueryCurrent

CONFIG_TOPIC = "/lotusim/environment"
QUERY_SERVICE = "/lotusim/query_current"
MARKER_TOPIC = "/lotusim/current_markers"
MAX_MARKERS = 5000


def descriptor(setting: settings.Setting) -> ParameterDescriptor:
    """The ParameterDescriptor of a setting (lotusim_env.current_parameters): its range, integer or floating."""
    out = ParameterDescriptor(name=setting.name, description=setting.description)
    if setting.ranged and setting.is_integer:
        out.integer_range = [IntegerRange(from_value=int(setting.low), to_value=int(setting.high), step=1)]
    elif setting.ranged:
        out.floating_point_range = [
            FloatingPointRange(from_value=float(setting.low), to_value=float(setting.high), step=0.0)
        ]
    return out


class CurrentServer(Node):
    """ROS wiring of lotusim_env.environment: parameters in; latched configuration, queries, markers out."""

    def __init__(self, **node_kwargs) -> None:
        super().__init__("current_server", **node_kwargs)
        self._declare_node_settings()
        whole = settings.YAML_SETTING  # environment_yaml
        yaml_text = self.declare_parameter(whole.name, whole.default, descriptor(whole)).value
        # typed leaves given at startup (a params file with `current: {model: ekman, latitude_deg: 47.0}`,
        # or --ros-args -p wind.speed_mps:=10.0) apply on top of environment_yaml
        startup = [p for name, p in self._parameter_overrides.items() if settings.is_startup_leaf(name)]
        self._config = apply_parameters(
            config.parse_environment_yaml(yaml_text), settings.changes_of(startup), {p.name for p in startup}
        )
        for p in startup:  # now part of the configuration; declared from it below with the leaf's own type
            self._parameter_overrides.pop(p.name, None)
        self._env: Environment = build_checked(self._config)  # a bad startup configuration fails loudly here
        self._pending: tuple[dict[str, Any], Environment] | None = None
        self._syncing = False
        self._leaves: set[str] = set()
        self._revision = 0
        self._sync_typed_parameters()
        self._config_pub = self.create_publisher(EnvironmentConfig, CONFIG_TOPIC, LATCHED)
        self._marker_pub = self.create_publisher(MarkerArray, MARKER_TOPIC, 1)
        self.create_service(QueryCurrent, QUERY_SERVICE, self._on_query)
        self._marker_timer = None
        self._arrows = CurrentArrows()
        self._restart_marker_timer()
        self.add_pre_set_parameters_callback(self._pre_set)
        self.add_on_set_parameters_callback(self._on_set)
        self.add_post_set_parameters_callback(self._post_set)
        self._publish_config()

    # -- parameters ------------------------------------------------------------------------------------------
    def _declare_node_settings(self) -> None:
        for setting in settings.NODE_SETTINGS:
            self.declare_parameter(setting.name, setting.default, descriptor(setting))

    def _sync_typed_parameters(self) -> None:
        """Declare / update / undeclare the typed leaf parameters so they mirror self._config."""
        leaves = settings.leaf_values(self._config)
        self._syncing = True
        try:
            for path in self._leaves - leaves.keys():
                self.undeclare_parameter(path)
            for path, value in leaves.items():
                if path in self._leaves and not self._same_type(path, value):
                    self.undeclare_parameter(path)
                    self._leaves.discard(path)
                if path not in self._leaves:
                    self.declare_parameter(path, value, descriptor(settings.leaf_setting(path, value)))
                elif plain_value(self.get_parameter(path).value) != value:
                    self.set_parameters([Parameter(path, value=value)])
            yaml_text = dump_config(self._config)
            if self.get_parameter(YAML_PARAM).value != yaml_text:
                self.set_parameters([Parameter(YAML_PARAM, value=yaml_text)])
        finally:
            self._syncing = False
        self._leaves = set(leaves)

    def _same_type(self, name: str, value: Any) -> bool:
        return self.get_parameter(name).type_ == Parameter.Type.from_parameter_value(value)

    def _pre_set(self, params: list[Parameter]) -> list[Parameter]:
        """Complete a change with the parameters that mirror it, so that they all change atomically."""
        if self._syncing or not settings.touches_config([p.name for p in params], self._leaves):
            return params
        extra = (
            settings.mirrored_changes(self._config, settings.changes_of(params), self._leaves) or []
        )  # None: _on_set refuses it
        return params + [
            Parameter(name, value=value)
            for name, value in extra
            if name == YAML_PARAM
            or (plain_value(self.get_parameter(name).value) != value and self._same_type(name, value))
        ]

    def _on_set(self, params: list[Parameter]) -> SetParametersResult:
        """Validate a change: the new configuration must build, the marker settings be numbers; otherwise refuse
        with the reason."""
        if self._syncing:
            return SetParametersResult(successful=True)
        if settings.touches_config([p.name for p in params], self._leaves):
            try:
                new = apply_parameters(self._config, settings.changes_of(params), self._leaves)
                self._pending = (new, build_checked(new))
            except ConfigRefused as exc:
                self._pending = None
                return SetParametersResult(successful=False, reason=str(exc))
        problem = settings.marker_setting_problem(settings.changes_of(params))
        return SetParametersResult(successful=problem is None, reason=problem or "")

    def _post_set(self, params: list[Parameter]) -> None:
        """Commit a validated change: swap the field, mirror the typed parameters, publish the new revision."""
        if self._syncing:
            return
        if self._pending is not None:
            self._config, self._env = self._pending
            self._pending = None
            self._sync_typed_parameters()
            self._publish_config()
        if any(p.name == "markers.rate_hz" for p in params):
            self._restart_marker_timer()

    # -- outputs ---------------------------------------------------------------------------------------------
    def _publish_config(self) -> None:
        self._revision += 1
        msg = EnvironmentConfig(revision=self._revision, config_yaml=dump_config(self._config))
        msg.header.stamp = self.get_clock().now().to_msg()
        self._config_pub.publish(msg)
        self.get_logger().info(f"environment revision {self._revision}: {msg.config_yaml.strip()}")

    def _sim_time_s(self) -> float:
        return self.get_clock().now().nanoseconds * 1e-9

    def _on_query(self, request: QueryCurrent.Request, response: QueryCurrent.Response) -> QueryCurrent.Response:
        """Evaluate the current at the requested points; refuse bad requests with a message, never raise."""
        t_s = query_time_s(request.time_s, self._sim_time_s())
        response.time_s = float(t_s)
        max_points = self.get_parameter("max_query_points").value
        velocities, response.message = answer_query(self._env.current.velocity_enu, request.points_enu, t_s, max_points)
        if velocities is None:
            self.get_logger().warning(f"query refused: {response.message}")
        else:
            response.velocities_enu, response.success = to_float64_array(velocities), True
        return response

    def _restart_marker_timer(self) -> None:
        if self._marker_timer is not None:
            self.destroy_timer(self._marker_timer)
            self._marker_timer = None
        rate = self.get_parameter("markers.rate_hz").value
        if rate > 0.0:
            self._marker_timer = self.create_timer(1.0 / rate, self.publish_markers)

    def publish_markers(self) -> None:
        """Publish the current arrows on the configured grid at the present sim time."""
        points = marker_grid_enu(
            np.asarray(self.get_parameter("markers.center_enu").value, dtype=float),
            self.get_parameter("markers.spacing_m").value,
            self.get_parameter("markers.half_count").value,
            np.asarray(self.get_parameter("markers.depths_m").value, dtype=float),
        )[:MAX_MARKERS]
        scale_s = self.get_parameter("markers.arrow_scale_s").value
        arrows, problem = grid_arrows(self._env.current.velocity_enu, self._sim_time_s(), points, scale_s)
        if arrows is None:  # the node lives on; the log says why the arrows are missing
            self.get_logger().warning(f"markers skipped: {problem}")
        else:
            self._marker_pub.publish(self._arrows.update(arrows, self.get_clock().now().to_msg()))


def main(args: list[str] | None = None) -> None:
    """Entry point of `ros2 run lotusim current_server`; Ctrl-C and `ros2 launch`'s SIGINT end it cleanly
    (lotusim_core.ros.node_runner)."""
    run_node_main(CurrentServer, args, SingleThreadedExecutor, refused=(ConfigRefused,), what="current_server")
