"""Reading the environment configuration mapping: typed getters whose errors name the key.

The environment configuration is a plain mapping (YAML, schema in docs/environment.md). Every value is read
through these helpers so that a malformed configuration fails at load time with the dotted key, what was
expected and what was found, e.g. ``current.eddy_viscosity_m2s: expected a number > 0, got -1``.
Unknown keys are errors too (a typo must not silently fall back to a default).
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np


class ConfigError(ValueError):
    """Malformed environment configuration; the message names the key and the reason."""


def section(config: Any, key: str) -> Mapping[str, Any]:
    """Return `config` as a mapping, or raise ConfigError naming `key` (the dotted path of this section)."""
    if config is None:
        return {}
    if not isinstance(config, Mapping):
        raise ConfigError(f"{key}: expected a mapping, got {type(config).__name__} {config!r}")
    return config


def check_keys(config: Mapping[str, Any], allowed: Iterable[str], key: str) -> None:
    """Raise ConfigError if `config` holds a key outside `allowed` (typos must not fall back to defaults)."""
    allowed = set(allowed)
    unknown = sorted(str(k) for k in config if k not in allowed)
    if unknown:
        where = f"{key}." if key else ""
        raise ConfigError(f"{where}{unknown[0]}: unknown key (known keys: {', '.join(sorted(allowed))})")


def _join(key: str, name: str) -> str:
    return f"{key}.{name}" if key else name


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
    path = _join(key, name)
    if name not in config or config[name] is None:
        if default is None:
            raise ConfigError(f"{path}: missing (expected a number)")
        return float(default)
    value = config[name]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(f"{path}: expected a number, got {value!r}")
    value = float(value)
    if not math.isfinite(value):
        raise ConfigError(f"{path}: expected a finite number, got {value!r}")
    if minimum is not None and (value < minimum or (strict_minimum and value == minimum)):
        relation = ">" if strict_minimum else ">="
        raise ConfigError(f"{path}: expected a number {relation} {minimum:g}, got {value:g}")
    if maximum is not None and value > maximum:
        raise ConfigError(f"{path}: expected a number <= {maximum:g}, got {value:g}")
    return value


def get_int(config: Mapping[str, Any], name: str, key: str, default: int | None = None, *, minimum: int = 0) -> int:
    """Read an integer `config[name]` >= minimum (dotted path `key.name`)."""
    path = _join(key, name)
    if name not in config or config[name] is None:
        if default is None:
            raise ConfigError(f"{path}: missing (expected an integer)")
        return int(default)
    value = config[name]
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ConfigError(f"{path}: expected an integer >= {minimum}, got {value!r}")
    return int(value)


def get_choice(config: Mapping[str, Any], name: str, key: str, choices: Iterable[str], default: str) -> str:
    """Read a string among `choices` (dotted path `key.name`)."""
    choices = list(choices)
    value = config.get(name, default)
    if value not in choices:
        raise ConfigError(f"{_join(key, name)}: expected one of {', '.join(choices)}, got {value!r}")
    return str(value)


def get_vector(config: Mapping[str, Any], name: str, key: str, size: int, default: Any = None) -> np.ndarray:
    """Read a list of `size` finite numbers (dotted path `key.name`)."""
    path = _join(key, name)
    value = config.get(name, default)
    if value is None:
        raise ConfigError(f"{path}: missing (expected a list of {size} numbers)")
    try:
        vec = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{path}: expected a list of {size} numbers, got {value!r}") from exc
    if vec.shape != (size,) or not np.all(np.isfinite(vec)):
        raise ConfigError(f"{path}: expected {size} finite numbers, got {value!r}")
    return vec


def get_path(config: Mapping[str, Any], name: str, key: str, base_dir: Path | None) -> Path:
    """Read a file path (relative paths resolve against `base_dir`, the directory of the configuration file)."""
    path_key = _join(key, name)
    value = config.get(name)
    if not isinstance(value, (str, Path)) or not str(value):
        raise ConfigError(f"{path_key}: expected a file path, got {value!r}")
    path = Path(value).expanduser()
    if not path.is_absolute() and base_dir is not None:
        path = base_dir / path
    if not path.is_file():
        raise ConfigError(f"{path_key}: file not found: {path}")
    return path


def derive_seed(seed: int, *names: str) -> np.random.SeedSequence:
    """A SeedSequence for one random process, from the configuration seed and the process's stable name.

    Stable across runs, machines and Python processes (crc32 of the names, not Python's salted hash()), so
    every node that builds the environment from the same configuration draws the same numbers.
    """
    return np.random.SeedSequence(entropy=int(seed), spawn_key=tuple(zlib.crc32(n.encode()) for n in names))
