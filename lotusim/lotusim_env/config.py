"""Reading the environment configuration mapping: typed getters whose errors name the key.

The environment configuration is a plain mapping (YAML, schema in docs/environment.md). Every value is read
through these helpers so that a malformed configuration fails at load time with the dotted key, what was
expected and what was found, e.g. ``current.eddy_viscosity_m2s: expected a number > 0, got -1``.
Unknown keys are errors too (a typo must not silently fall back to a default).
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from lotusim_core.base import validation
from lotusim_core.base.validation import Validator, join_key


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
