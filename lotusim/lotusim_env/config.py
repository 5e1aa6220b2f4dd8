"""Reading the environment configuration mapping: typed getters whose errors name the key.

The environment configuration is a plain mapping (YAML, schema in docs/environment.md). Every value is read
through these helpers so that a malformed configuration fails at load time with the dotted key, what was
expected and what was found, e.g. ``current.eddy_viscosity_m2s: expected a number > 0, got -1``.
Unknown keys are errors too (a typo must not silently fall back to a default). The checks are the shared ones
of lotusim_core.base.validation (ConfigError here is its subclass for a configuration without a file).

The second part is the configuration as current_server holds and changes it, without ROS: the default, the
typed leaves (one ROS parameter each, by dotted path) and their ranges, the YAML text of `environment_yaml`,
applying a set of parameter changes, and building the result with every failure as ConfigRefused.
"""

from __future__ import annotations

import copy
import zlib
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import yaml

from lotusim_core.base import safe_yaml, validation
from lotusim_core.base.validation import Validator, is_number, join_key

if TYPE_CHECKING:
    from lotusim_env.environment import Environment


class ConfigError(validation.ConfigError):
    """Malformed environment configuration. It is a mapping in memory, not a file: `where` is empty and the
    message reads `key: reason`. Raised as ConfigError(where, key, reason) by the shared checks, or as
    ConfigError("key: reason") by the models (the key is the text before the first ": ")."""

    def __init__(self, *args: str) -> None:
        if len(args) == 1:
            key, sep, reason = args[0].partition(": ")
            args = ("", key, reason) if sep else ("", "", args[0])
        super().__init__(*args)


_CHECK = Validator("", ConfigError)  # the shared checks (lotusim_core.base.validation), raising ConfigError


def section(config: Any, key: str) -> Mapping[str, Any]:
    """Return `config` as a mapping ({} for None), or raise ConfigError naming `key` (this section's path)."""
    return _CHECK.mapping(config, key)


def check_keys(config: Mapping[str, Any], allowed: Iterable[str], key: str) -> None:
    """Raise ConfigError if `config` holds a key outside `allowed` (typos must not fall back to defaults)."""
    _CHECK.check_keys(config, key, sorted(set(allowed)))


def get_float(
    config: Mapping[str, Any],
    name: str,
    key: str,
    default: float | None = None,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    strict_minimum: bool = False,
) -> float:
    """Read a finite number `config[name]` (dotted path `key.name`), with optional bounds and default."""
    return _CHECK.get_number(config, name, key, default, low=minimum, high=maximum, strict_low=strict_minimum)


def get_int(config: Mapping[str, Any], name: str, key: str, default: int | None = None, *, minimum: int = 0) -> int:
    """Read an integer `config[name]` >= minimum (dotted path `key.name`)."""
    return _CHECK.get_integer(config, name, key, default, low=minimum)


def get_choice(config: Mapping[str, Any], name: str, key: str, choices: Iterable[str], default: str) -> str:
    """Read a string among `choices` (dotted path `key.name`)."""
    return _CHECK.get_choice(config, name, key, choices, default)


def get_vector(config: Mapping[str, Any], name: str, key: str, size: int, default: Any = None) -> np.ndarray:
    """Read a list of `size` finite numbers (dotted path `key.name`) as a float array."""
    return np.array(_CHECK.vector(config.get(name, default), join_key(key, name), size))


def get_path(config: Mapping[str, Any], name: str, key: str, base_dir: Path | None) -> Path:
    """Read a file path (relative paths resolve against `base_dir`, the directory of the configuration file)."""
    path_key = join_key(key, name)
    value = config.get(name)
    if not isinstance(value, (str, Path)) or not str(value):
        raise _CHECK.fail(path_key, f"expected a file path, got {value!r}")
    path = Path(value).expanduser()
    if not path.is_absolute() and base_dir is not None:
        path = base_dir / path
    if not path.is_file():
        raise _CHECK.fail(path_key, f"file not found: {path}")
    return path


def derive_seed(seed: int, *names: str) -> np.random.SeedSequence:
    """A SeedSequence for one random process, from the configuration seed and the process's stable name.

    Stable across runs, machines and Python processes (crc32 of the names, not Python's salted hash()), so
    every node that builds the environment from the same configuration draws the same numbers.
    """
    return np.random.SeedSequence(entropy=int(seed), spawn_key=tuple(zlib.crc32(n.encode()) for n in names))


# ----------------------------------------------------------------------------------------------------------------
# The configuration as current_server holds it: one YAML text and one typed value per leaf (ROS-free; the node
# declares and reads the ROS parameters, lotusim_env.current_server)
# ----------------------------------------------------------------------------------------------------------------
# Calm water and no wind; seed and wind are present so that they are typed parameters from the start.
DEFAULT_ENVIRONMENT = {
    "seed": 0,
    "wind": {"speed_mps": 0.0, "from_deg": 0.0},
    "current": {"model": "constant", "velocity_enu": [0.0, 0.0, 0.0]},
}
YAML_PARAM = "environment_yaml"
# Ranges of configuration leaves, by leaf name (the last component of the dotted path). A value outside its
# range is refused at `ros2 param set` by ROS itself, and in environment_yaml by the same check.
# Keys as in docs/environment.md (lotusim_env.environment, .ekman, .wind, .bathymetry).
LEAF_RANGES: dict[str, tuple[float, float, str]] = {
    "latitude_deg": (-90.0, 90.0, "WGS84 latitude (deg); the Ekman model's f = 2Ω sin φ"),
    "longitude_deg": (-180.0, 360.0, "WGS84 longitude (deg)"),
    "speed_mps": (0.0, 100.0, "10 m wind speed (m/s)"),
    "wind_speed_mps": (0.0, 100.0, "10 m wind speed driving this Ekman model (m/s)"),
    "from_deg": (-360.0, 360.0, "direction the wind blows (or the waves come) FROM, clockwise from north (deg)"),
    "wind_from_deg": (-360.0, 360.0, "direction the wind blows FROM, clockwise from north (deg)"),
    "eddy_viscosity_m2s": (1e-6, 10.0, "vertical eddy viscosity A_z (m²/s); D = π √(2 A_z/|f|)"),
    "bottom_eddy_viscosity_m2s": (1e-6, 10.0, "bottom-layer eddy viscosity (m²/s)"),
    "surface_layer_depth_m": (0.0, 11000.0, "surface Ekman depth D (m), rule 'fixed'"),
    "bottom_layer_depth_m": (0.0, 11000.0, "bottom Ekman depth D_b (m), rule 'fixed'"),
    "depth_m": (0.0, 11000.0, "sea-floor depth (m, positive down)"),
    "seed": (0, 2**31 - 1, "seed of the random processes (same seed, same field)"),
    "significant_height_m": (0.0, 30.0, "waves: significant wave height Hs = 4√m0 (m)"),
    "peak_period_s": (0.1, 30.0, "waves: peak period Tp = 2π/ωp (s)"),
    "gamma": (1.0, 30.0, "waves: JONSWAP peak enhancement γ (1 = Pierson–Moskowitz)"),
    "spreading_s": (0.0, 100.0, "waves: exponent s of the cos-2s directional spreading"),
    "frequencies": (1, 4096, "waves: number of frequencies n_ω"),
    "directions": (1, 360, "waves: number of directions n_ψ (1 = long-crested)"),
    "height_m": (0.0, 30.0, "regular wave: height H = 2a, crest to trough (m)"),
    "period_s": (0.1, 60.0, "regular wave: period T = 2π/ω (s)"),
    "ramp_time_s": (0.0, 3600.0, "waves: start-up ramp time constant τ, r = 1 − exp(−t/τ) (s)"),
    "w20_mps": (0.0, 100.0, "wind.turbulence: wind speed at 20 ft setting the Dryden intensities (m/s)"),
    "roughness_m": (1e-6, 5.0, "wind.profile: roughness length z0 of the log profile (m)"),
}
INTEGER_LEAVES = {"seed", "frequencies", "directions"}


MODEL_SECTIONS = ("current", "waves")  # sections whose keys depend on their `model`


class ConfigRefused(ConfigError):
    """A configuration change that cannot be applied (current_server refuses it); the message says which key and
    why."""


def config_leaves(config: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    """Yield (dotted path, value) of every leaf that maps to a typed ROS parameter.

    Leaves are strings, booleans, numbers and lists of numbers (as double arrays); other lists (e.g. the
    parts of a composition) stay editable through `environment_yaml` only.
    """
    for key, value in config.items():
        path = f"{prefix}{key}"
        if isinstance(value, Mapping):
            yield from config_leaves(value, f"{path}.")
        elif _is_leaf(value):
            yield path, value


def _is_leaf(value: Any) -> bool:
    if isinstance(value, list):
        return bool(value) and all(is_number(v) for v in value)
    return isinstance(value, (str, bool, int, float))


def leaf_to_parameter_value(path: str, value: Any) -> Any:
    """The ROS parameter value of a leaf: integers only for INTEGER_LEAVES, other numbers as doubles."""
    leaf = path.rsplit(".", 1)[-1]
    if isinstance(value, list):
        return [float(v) for v in value]
    if is_number(value):
        return int(value) if leaf in INTEGER_LEAVES else float(value)
    return value


def check_leaf_ranges(config: Mapping[str, Any]) -> None:
    """Raise ConfigRefused if a leaf with a known range is outside it."""
    for path, value in config_leaves(config):
        low, high, _ = LEAF_RANGES.get(path.rsplit(".", 1)[-1], (None, None, ""))
        if low is not None and is_number(value) and not (low <= value <= high):
            raise ConfigRefused(f"{path}: expected a value in [{low}, {high}], got {value}")


def set_path(config: dict[str, Any], path: str, value: Any) -> None:
    """Set config[a][b][c] = value for path 'a.b.c' (creating sections as needed)."""
    *sections, leaf = path.split(".")
    node = config
    for name in sections:
        node = node.setdefault(name, {})
        if not isinstance(node, dict):
            raise ConfigRefused(f"{path}: {name} is not a section of the configuration")
    node[leaf] = value


def parse_environment_yaml(text: str) -> dict[str, Any]:
    """Parse the environment_yaml parameter; the whole configuration must be a mapping given as a string (a
    parameter of another type, e.g. an integer from `ros2 param set ... environment_yaml 3`, is refused)."""
    if not isinstance(text, str):
        raise ConfigRefused(
            f"{YAML_PARAM}: expected a string of YAML, got {type(text).__name__} {text!r} (from a shell, quote "
            f"a mapping twice: ros2 param set /current_server {YAML_PARAM} '\"{{current: {{model: constant}}}}\"')"
        )
    try:
        config = safe_yaml.load(text)
    except yaml.YAMLError as exc:
        raise ConfigRefused(f"{YAML_PARAM}: not valid YAML ({exc})") from exc
    if config is None:
        return {}
    if not isinstance(config, dict):
        raise ConfigRefused(f"{YAML_PARAM}: expected a mapping (current:, wind:, ...), got {type(config).__name__}")
    return config


def apply_parameters(config: Mapping[str, Any], changes: Mapping[str, Any], leaves: set[str]) -> dict[str, Any]:
    """New configuration after the parameter changes `changes` (name -> value, in the order they were set):
    environment_yaml first, then the typed leaves among `leaves`.

    A change of `current.model` (or `waves.model`) resets that section to {model: new} before its other
    leaves of the same call are applied, so that keys of the old model do not leak into the new one.
    """
    new = parse_environment_yaml(changes[YAML_PARAM]) if YAML_PARAM in changes else copy.deepcopy(dict(config))
    for name in MODEL_SECTIONS:
        model = changes.get(f"{name}.model")
        if model is not None and model != (new.get(name) or {}).get("model"):
            new[name] = {"model": model}
    for name, value in changes.items():
        if name in leaves and name != YAML_PARAM:
            set_path(new, name, plain_value(value))
    return new


def plain_value(value: Any) -> Any:
    """A parameter value as plain Python (array.array / numpy / tuple -> list of floats or ints)."""
    if isinstance(value, (str, bool, int, float)) or value is None:
        return value
    return [v.item() if isinstance(v, np.generic) else v for v in value]


def dump_config(config: Mapping[str, Any]) -> str:
    """The configuration as YAML (block style, key order kept) for the parameter and the latched topic."""
    return yaml.safe_dump(dict(config), sort_keys=False, default_flow_style=None)


def build_checked(config: dict[str, Any]) -> Environment:
    """build_environment(config) with range checks; every failure becomes ConfigRefused with its reason."""
    from lotusim_env.environment import build_environment  # environment.py imports this module

    check_leaf_ranges(config)
    try:
        return build_environment(config)
    except Exception as exc:  # noqa: BLE001 - a bad configuration must be refused, never crash the node
        raise ConfigRefused(str(exc)) from exc
