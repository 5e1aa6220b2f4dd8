"""current_server's parameters as data, without ROS: the node's own settings (query limit, markers), the typed
parameter of each configuration leaf with its description and range, the parameters that change together with a
change (so that `environment_yaml` and the typed leaves stay in step), and the checks of the marker settings.

The node (lotusim_env.current_server) turns a `Setting` into an rcl_interfaces ParameterDescriptor (an integer
range for an integer default, a floating-point range for a float one) and declares it. The configuration itself
(default, leaves, ranges, applying changes) is lotusim_env.config.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from lotusim_env.config import (
    DEFAULT_ENVIRONMENT,
    LEAF_RANGES,
    YAML_PARAM,
    ConfigRefused,
    apply_parameters,
    config_leaves,
    dump_config,
    leaf_to_parameter_value,
)

MARKER_VECTORS = {"markers.depths_m": None, "markers.center_enu": 3}  # list settings: size required (None: any)


@dataclass(frozen=True)
class Setting:
    """One ROS parameter as data: name, default (its type is the parameter's), description, and the closed range
    [low, high] a value must lie in (None: no range; only integer and float defaults get one)."""

    name: str
    default: Any
    description: str
    low: float | None = None
    high: float | None = None

    @property
    def is_integer(self) -> bool:
        return isinstance(self.default, int) and not isinstance(self.default, bool)

    @property
    def ranged(self) -> bool:
        """True if the range applies: known, and the default an integer or a float."""
        return self.low is not None and (self.is_integer or isinstance(self.default, float))


# The node's own settings (docs/current_server.md): the query limit and the marker grid.
NODE_SETTINGS = (
    Setting("max_query_points", 100_000, "largest number of points one query may ask for", 1, 10_000_000),
    Setting("markers.rate_hz", 0.5, "marker publication rate (Hz); 0 disables the markers", 0.0, 10.0),
    Setting("markers.spacing_m", 50.0, "distance between grid nodes (m)", 0.01, 1e5),
    Setting("markers.half_count", 5, "grid of (2n+1) x (2n+1) arrows per depth", 0, 30),
    Setting("markers.depths_m", [0.0, 10.0, 50.0], "depths (m, positive down) of the arrow layers"),
    Setting("markers.center_enu", [0.0, 0.0, 0.0], "grid centre in `map` (ENU m)"),
    Setting("markers.arrow_scale_s", 100.0, "arrow length per unit speed (m per m/s)", 1e-3, 1e5),
)
# environment_yaml: the whole configuration as one text (default: lotusim_env.config.DEFAULT_ENVIRONMENT)
YAML_SETTING = Setting(
    YAML_PARAM, dump_config(DEFAULT_ENVIRONMENT), "the whole environment configuration as YAML (docs/environment.md)"
)


def leaf_setting(path: str, value: Any) -> Setting:
    """The typed parameter of a configuration leaf at dotted `path` (its value `value`, already a parameter value:
    lotusim_env.config.leaf_to_parameter_value): the range and meaning of its leaf name in LEAF_RANGES, if any."""
    low, high, meaning = LEAF_RANGES.get(path.rsplit(".", 1)[-1], (None, None, ""))
    text = f"environment configuration key {path}" + (f": {meaning}" if meaning else "") + " (docs/environment.md)"
    return Setting(path, value, text, low, high)


def leaf_values(config: Mapping[str, Any]) -> dict[str, Any]:
    """Dotted path -> parameter value of every typed leaf of `config` (what the node declares)."""
    return {path: leaf_to_parameter_value(path, value) for path, value in config_leaves(config)}


def changes_of(params: Iterable[Any]) -> dict[str, Any]:
    """Parameter changes (objects with `.name` and `.value`, e.g. rclpy Parameters) as name -> value, in the
    order given (what lotusim_env.config.apply_parameters takes)."""
    return {p.name: p.value for p in params}


def is_startup_leaf(name: str) -> bool:
    """True for a start-up parameter override that sets a configuration leaf (a dotted name that is neither a
    marker setting nor a QoS override): it applies on top of environment_yaml."""
    return "." in name and not name.startswith(("markers.", "qos_overrides."))


def touches_config(names: list[str], leaves: set[str]) -> bool:
    """True if a change of the parameters `names` changes the configuration (environment_yaml or a typed leaf)."""
    return any(name == YAML_PARAM or name in leaves for name in names)


def mirrored_changes(
    config: Mapping[str, Any], changes: Mapping[str, Any], leaves: set[str]
) -> list[tuple[str, Any]] | None:
    """The parameters that change together with `changes` (name -> value, in order) so that all stay in step:
    `environment_yaml` as the new configuration's YAML (unless it is among the changes), then every declared
    typed leaf (`leaves`) not among the changes, with its new value (the node keeps those whose value differs
    and whose type stays). None if the change is refused (the validation says why)."""
    try:
        new = apply_parameters(config, changes, leaves)
    except ConfigRefused:
        return None
    extra = [] if YAML_PARAM in changes else [(YAML_PARAM, dump_config(new))]
    extra += [(path, value) for path, value in leaf_values(new).items() if path in leaves and path not in changes]
    return extra


def marker_setting_problem(changes: Mapping[str, Any]) -> str | None:
    """Why a change of the marker settings is refused (a vector setting must hold finite numbers, and the grid
    centre 3 of them), or None if it is not."""
    for name, value in changes.items():
        if name not in MARKER_VECTORS:
            continue
        values, want = list(value), MARKER_VECTORS[name]
        finite = all(isinstance(v, (int, float)) and math.isfinite(v) for v in values)
        if not finite or (want and len(values) != want):
            return f"{name}: expected finite numbers" + (f", {want} of them" if want else "") + f", got {values}"
    return None
