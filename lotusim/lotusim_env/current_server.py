"""current_server node: owns the environment configuration, publishes it latched, answers current queries,
draws the current field for RViz.

The node only wires ROS to lotusim_env.environment (`build_environment(config).current.velocity_enu`) and to
lotusim_env.config (the configuration as one YAML text plus typed leaves, its ranges and changes); every
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

import math
from typing import Any

import numpy as np
from geometry_msgs.msg import Point
from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor, SetParametersResult
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.parameter import Parameter
from visualization_msgs.msg import Marker, MarkerArray

from lotusim_core.ros.node_runner import run_node_main
from lotusim_core.ros.qos import LATCHED
from lotusim_core.ros.ros_arrays import to_float64_array
from lotusim_env.config import (
    DEFAULT_ENVIRONMENT,
    LEAF_RANGES,
    YAML_PARAM,
    ConfigRefused,
    apply_parameters,
    build_checked,
    config_leaves,
    dump_config,
    leaf_to_parameter_value,
    parse_environment_yaml,
    plain_value,
)
from lotusim_env.environment import Environment
from lotusim_interfaces.msg import EnvironmentConfig
from lotusim_interfaces.srv import QueryCurrent

CONFIG_TOPIC = "/lotusim/environment"
QUERY_SERVICE = "/lotusim/query_current"
MARKER_TOPIC = "/lotusim/current_markers"
MAX_MARKERS = 5000


# ----------------------------------------------------------------------------------------------------------------
# The configuration as ROS parameters (the configuration itself: lotusim_env.config)
# ----------------------------------------------------------------------------------------------------------------
def leaf_descriptor(path: str, value: Any) -> ParameterDescriptor:
    """Descriptor of the typed parameter of a configuration leaf (type fixed, range when known)."""
    leaf = path.rsplit(".", 1)[-1]
    low, high, meaning = LEAF_RANGES.get(leaf, (None, None, ""))
    text = f"environment configuration key {path}" + (f": {meaning}" if meaning else "") + " (docs/environment.md)"
    descriptor = ParameterDescriptor(name=path, description=text)
    if low is not None and isinstance(value, int) and not isinstance(value, bool):
        descriptor.integer_range = [IntegerRange(from_value=int(low), to_value=int(high), step=1)]
    elif low is not None and isinstance(value, float):
        descriptor.floating_point_range = [FloatingPointRange(from_value=float(low), to_value=float(high), step=0.0)]
    return descriptor


# ----------------------------------------------------------------------------------------------------------------
# Markers
# ----------------------------------------------------------------------------------------------------------------
def marker_grid_enu(center_enu: np.ndarray, spacing_m: float, half_count: int, depths_m: np.ndarray) -> np.ndarray:
    """Points (N x 3, ENU m) of a square horizontal grid of (2n+1)² nodes around the centre, at each depth."""
    offsets = spacing_m * np.arange(-half_count, half_count + 1)
    ex, ny, dz = np.meshgrid(offsets, offsets, depths_m, indexing="ij")
    return np.column_stack([center_enu[0] + ex.ravel(), center_enu[1] + ny.ravel(), center_enu[2] - dz.ravel()])


class CurrentArrows:
    """The MarkerArray of current arrows, with its Marker objects kept between publications.

    Building a rosidl Marker costs ~0.4 ms in Python (constructor validation of every sub-message); the grid
    rarely changes, so the markers are built once per grid size and only their points, sizes, colours and
    stamps are rewritten (363 arrows: 3.7 ms instead of 62 ms).
    """

    def __init__(self) -> None:
        self._markers: list[Marker] = []

    def _resize(self, count: int) -> None:
        while len(self._markers) < count:
            marker = Marker(ns="current", id=len(self._markers), type=Marker.ARROW, action=Marker.ADD)
            marker.header.frame_id = "map"
            marker.pose.orientation.w = 1.0
            marker.points = [Point(), Point()]
            marker.color.g, marker.color.a = 0.3, 1.0
            self._markers.append(marker)
        del self._markers[count:]

    def update(self, points_enu: np.ndarray, velocities_enu: np.ndarray, scale_s: float, stamp) -> MarkerArray:
        """Arrows from each point to point + scale_s * v (frame `map`), coloured blue (slow) to red (fastest)."""
        self._resize(len(points_enu))
        speed = np.linalg.norm(velocities_enu, axis=1)
        top = max(float(speed.max(initial=0.0)), 1e-9)
        tips = points_enu + scale_s * velocities_enu
        shaft, head = 0.1 * scale_s * top, 0.2 * scale_s * top
        rows = zip(self._markers, points_enu.tolist(), tips.tolist(), (speed / top).tolist(), strict=True)
        for marker, start, tip, level in rows:
            marker.header.stamp = stamp
            (marker.points[0].x, marker.points[0].y, marker.points[0].z) = start
            (marker.points[1].x, marker.points[1].y, marker.points[1].z) = tip
            marker.scale.x, marker.scale.y = shaft, head
            marker.color.r, marker.color.b = level, 1.0 - level
        return MarkerArray(markers=[Marker(action=Marker.DELETEALL), *self._markers])


# ----------------------------------------------------------------------------------------------------------------
# The node
# ----------------------------------------------------------------------------------------------------------------
class CurrentServer(Node):
    """ROS wiring of lotusim_env.environment: parameters in; latched configuration, queries, markers out."""

    def __init__(self, **node_kwargs) -> None:
        super().__init__("current_server", **node_kwargs)
        self._declare_node_settings()
        yaml_text = self.declare_parameter(
            YAML_PARAM,
            dump_config(DEFAULT_ENVIRONMENT),
            ParameterDescriptor(description="the whole environment configuration as YAML (docs/environment.md)"),
        ).value
        # typed leaves given at startup (a params file with `current: {model: ekman, latitude_deg: 47.0}`,
        # or --ros-args -p wind.speed_mps:=10.0) apply on top of environment_yaml
        startup = [
            p
            for name, p in self._parameter_overrides.items()
            if "." in name and not name.startswith(("markers.", "qos_overrides."))
        ]
        self._config = apply_parameters(parse_environment_yaml(yaml_text), _values(startup), {p.name for p in startup})
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
        def floats(low: float, high: float) -> list[FloatingPointRange]:
            return [FloatingPointRange(from_value=low, to_value=high, step=0.0)]

        settings = [
            ("max_query_points", 100_000, "largest number of points one query may ask for",
             {"integer_range": [IntegerRange(from_value=1, to_value=10_000_000, step=1)]}),
            ("markers.rate_hz", 0.5, "marker publication rate (Hz); 0 disables the markers",
             {"floating_point_range": floats(0.0, 10.0)}),
            ("markers.spacing_m", 50.0, "distance between grid nodes (m)", {"floating_point_range": floats(0.01, 1e5)}),
            ("markers.half_count", 5, "grid of (2n+1) x (2n+1) arrows per depth",
             {"integer_range": [IntegerRange(from_value=0, to_value=30, step=1)]}),
            ("markers.depths_m", [0.0, 10.0, 50.0], "depths (m, positive down) of the arrow layers", {}),
            ("markers.center_enu", [0.0, 0.0, 0.0], "grid centre in `map` (ENU m)", {}),
            ("markers.arrow_scale_s", 100.0, "arrow length per unit speed (m per m/s)",
             {"floating_point_range": floats(1e-3, 1e5)}),
        ]  # fmt: skip
        for name, default, text, extra in settings:
            self.declare_parameter(name, default, ParameterDescriptor(description=text, **extra))

    def _sync_typed_parameters(self) -> None:
        """Declare / update / undeclare the typed leaf parameters so they mirror self._config."""
        leaves = {path: leaf_to_parameter_value(path, v) for path, v in config_leaves(self._config)}
        self._syncing = True
        try:
            for path in self._leaves - leaves.keys():
                self.undeclare_parameter(path)
            for path, value in leaves.items():
                if path in self._leaves and self.get_parameter(path).type_ != Parameter.Type.from_parameter_value(
                    value
                ):
                    self.undeclare_parameter(path)
                    self._leaves.discard(path)
                if path not in self._leaves:
                    self.declare_parameter(path, value, leaf_descriptor(path, value))
                elif plain_value(self.get_parameter(path).value) != value:
                    self.set_parameters([Parameter(path, value=value)])
            yaml_text = dump_config(self._config)
            if self.get_parameter(YAML_PARAM).value != yaml_text:
                self.set_parameters([Parameter(YAML_PARAM, value=yaml_text)])
        finally:
            self._syncing = False
        self._leaves = set(leaves)

    def _pre_set(self, params: list[Parameter]) -> list[Parameter]:
        """Complete a change with the parameters that mirror it, so that they all change atomically."""
        if self._syncing or not any(p.name == YAML_PARAM or p.name in self._leaves for p in params):
            return params
        try:
            new = apply_parameters(self._config, _values(params), self._leaves)
        except ConfigRefused:
            return params  # _on_set refuses it with the reason
        names = {p.name for p in params}
        extra = [Parameter(YAML_PARAM, value=dump_config(new))] if YAML_PARAM not in names else []
        for path, value in config_leaves(new):
            value = leaf_to_parameter_value(path, value)
            if path not in self._leaves or path in names:
                continue
            current = self.get_parameter(path)
            if plain_value(current.value) != value and current.type_ == Parameter.Type.from_parameter_value(value):
                extra.append(Parameter(path, value=value))
        return params + extra

    def _on_set(self, params: list[Parameter]) -> SetParametersResult:
        """Validate a change: the new configuration must build; otherwise refuse with the reason."""
        if self._syncing:
            return SetParametersResult(successful=True)
        if not any(p.name == YAML_PARAM or p.name in self._leaves for p in params):
            return self._check_marker_settings(params)
        try:
            new = apply_parameters(self._config, _values(params), self._leaves)
            self._pending = (new, build_checked(new))
        except ConfigRefused as exc:
            self._pending = None
            return SetParametersResult(successful=False, reason=str(exc))
        return self._check_marker_settings(params)

    def _check_marker_settings(self, params: list[Parameter]) -> SetParametersResult:
        for p in params:
            if p.name in ("markers.depths_m", "markers.center_enu"):
                values = np.asarray(p.value, dtype=float)
                want = 3 if p.name == "markers.center_enu" else None
                if not np.all(np.isfinite(values)) or (want and values.shape != (want,)):
                    return SetParametersResult(
                        successful=False,
                        reason=f"{p.name}: expected finite numbers"
                        + (f", {want} of them" if want else "")
                        + f", got {list(p.value)}",
                    )
        return SetParametersResult(successful=True)

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
        points = np.asarray(request.points_enu, dtype=float)
        max_points = self.get_parameter("max_query_points").value
        # negative: "now"; NaN and ±inf are kept so that they are refused below
        t_s = self._sim_time_s() if math.isfinite(request.time_s) and request.time_s < 0.0 else request.time_s
        response.time_s = float(t_s)
        if points.size % 3:
            response.message = f"points_enu has {points.size} values, expected a multiple of 3 (x, y, z per point)"
        elif points.size // 3 > max_points:
            response.message = (
                f"{points.size // 3} points requested, at most {max_points} per query (parameter max_query_points)"
            )
        elif not (np.all(np.isfinite(points)) and math.isfinite(t_s)):
            bad = int(np.count_nonzero(~np.isfinite(points)))
            response.message = f"points_enu and time_s must be finite: {bad} non-finite coordinate(s), time_s={t_s}"
        else:
            try:
                velocities = np.asarray(self._env.current.velocity_enu(t_s, points.reshape(-1, 3)), dtype=float)
            except Exception as exc:  # noqa: BLE001 - a model failure is reported to the client, not raised
                response.message = f"current model failed at t={t_s} s: {exc}"
            else:
                response.velocities_enu = to_float64_array(velocities)
                response.success = True
        if not response.success:
            self.get_logger().warning(f"query refused: {response.message}")
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
        try:
            velocities = np.asarray(self._env.current.velocity_enu(self._sim_time_s(), points), dtype=float)
        except Exception as exc:  # noqa: BLE001 - keep the node alive; the log says why the arrows are missing
            self.get_logger().warning(f"markers skipped: current model failed ({exc})")
            return
        finite = np.all(np.isfinite(velocities), axis=1)
        scale = self.get_parameter("markers.arrow_scale_s").value
        self._marker_pub.publish(
            self._arrows.update(points[finite], velocities[finite], scale, self.get_clock().now().to_msg())
        )


def _values(params: list[Parameter]) -> dict[str, Any]:
    """Parameter changes as name -> value, in the order given (lotusim_env.config.apply_parameters)."""
    return {p.name: p.value for p in params}


def main(args: list[str] | None = None) -> None:
    """Entry point of `ros2 run lotusim current_server`; Ctrl-C and `ros2 launch`'s SIGINT end it cleanly
    (lotusim_core.ros.node_runner)."""
    run_node_main(CurrentServer, args, SingleThreadedExecutor, refused=(ConfigRefused,), what="current_server")
