"""The one validator of every configuration lotusim reads: scenario files (lotusim_core.sim.scenario), vehicle
files and their overrides (lotusim_core.base.catalogue), the environment configuration (lotusim_env.config).

Each problem raises a ConfigError naming where the configuration came from (a file, "overrides of lrauv", or
nothing for a mapping handed over in memory), the key as a path (`vessels[auv_1].pose.heading_deg`,
`thrusters[2].direction_frd`) and what was expected versus what was got:

    scenario.yaml: vessels[auv_1].pose.heading_deg: expected a finite number, got 'abc'

A Validator carries `where` and the error class to raise (ScenarioError, CatalogueError and the environment's
ConfigError are subclasses), and offers typed checks of one value (`number(value, key)`) and getters of one key
of a mapping with a default (`get_number(mapping, name, key, default)`). Numbers are accepted as int or float
(NumPy scalars included, booleans refused) and must be finite; units are those of the key's suffix (docs of each
configuration). Unknown keys are errors: a typo must not fall back to a default silently.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import yaml

from lotusim_core.base import safe_yaml

T = TypeVar("T")
SHOWN_CHARS = 200  # longest repr of a value quoted in an error message (a whole fleet list is not)
NUMBER_TYPES = (int, float, np.integer, np.floating)


class ConfigError(ValueError):
    """A configuration is malformed: `where` (file or source, may be empty), `key` (path of the key, may be
    empty), `reason`; the message is the non-empty ones joined by ": "."""

    def __init__(self, where: str, key: str, reason: str) -> None:
        self.where, self.key, self.reason = where, key, reason
        super().__init__(": ".join(part for part in (where, key, reason) if part))

    def __reduce__(self):  # pickles with its three fields (multiprocessing, not the message alone)
        return type(self), (self.where, self.key, self.reason)


def read_yaml_file(path: str | Path, error: type[ConfigError] = ConfigError) -> Any:
    """The data of a YAML file (lotusim_core.base.safe_yaml), or `error(path, "<file>", reason)` when it cannot be
    read or is not valid YAML."""
    try:
        return safe_yaml.load(Path(path).read_text())
    except yaml.YAMLError as exc:
        raise error(str(path), "<file>", f"not valid YAML: {exc}") from None
    except OSError as exc:
        raise error(str(path), "<file>", f"cannot be read: {exc.strerror or exc}") from None


def join_key(prefix: str, name: str | int) -> str:
    """The path of `name` inside `prefix`: ("vessels", 3) -> "vessels[3]", ("physics", "mode") -> "physics.mode",
    ("", "seed") -> "seed"."""
    if isinstance(name, int):
        return f"{prefix}[{name}]"
    return f"{prefix}.{name}" if prefix else str(name)


def show(value: Any) -> str:
    """repr(value), cut to SHOWN_CHARS characters."""
    text = repr(value)
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 3] + "..."


def is_number(value: Any) -> bool:
    """An int or float (NumPy scalars too), not a bool."""
    kind = type(value)
    if kind is float or kind is int:  # the common case first: vehicle matrices are read on every spawn
        return True
    return isinstance(value, NUMBER_TYPES) and not isinstance(value, (bool, np.bool_))


def _finite_number(value: Any) -> bool:
    return is_number(value) and math.isfinite(value)


class Validator:
    """Typed checks raising `error(where, key, reason)`; `key` is always the full path of the value checked."""

    def __init__(self, where: str, error: type[ConfigError] = ConfigError) -> None:
        self.where = where
        self.error = error

    def fail(self, key: str, reason: str) -> ConfigError:
        """The error to raise for `key` (the caller raises it)."""
        return self.error(self.where, key, reason)

    # --- one value ------------------------------------------------------------------------------------------
    def number(
        self,
        value: Any,
        key: str,
        *,
        low: float | None = None,
        high: float | None = None,
        strict_low: bool = False,
    ) -> float:
        """A finite number within [low, high] (low excluded when strict_low)."""
        if value is None:
            raise self.fail(key, "missing (expected a number)")
        if not is_number(value):
            raise self.fail(key, f"expected a number, got {show(value)}")
        x = float(value)
        if not math.isfinite(x):
            raise self.fail(key, f"expected a finite number, got {x!r}")
        if low is not None and (x < low or (strict_low and x == low)):
            raise self.fail(key, f"expected a number {'>' if strict_low else '>='} {low:g}, got {x:g}")
        if high is not None and x > high:
            raise self.fail(key, f"expected a number <= {high:g}, got {x:g}")
        return x

    def positive(self, value: Any, key: str) -> float:
        """A finite number > 0 ("expected a positive number")."""
        if value is None:
            raise self.fail(key, "missing (expected a positive number)")
        x = self.number(value, key)
        if x <= 0.0:
            raise self.fail(key, f"expected a positive number, got {x:g}")
        return x

    def integer(self, value: Any, key: str, *, low: int | None = None) -> int:
        """An integer (not a bool, not a float) >= low."""
        if value is None:
            raise self.fail(key, "missing (expected an integer)")
        if (
            isinstance(value, (bool, np.bool_))
            or not isinstance(value, (int, np.integer))
            or (low is not None and value < low)
        ):
            bound = f" >= {low}" if low is not None else ""
            raise self.fail(key, f"expected an integer{bound}, got {show(value)}")
        return int(value)

    def boolean(self, value: Any, key: str) -> bool:
        """true or false (YAML booleans; 0, 1, "yes" as a string are refused)."""
        if not isinstance(value, (bool, np.bool_)):
            raise self.fail(key, f"expected true or false, got {show(value)}")
        return bool(value)

    def text(self, value: Any, key: str, *, allow_empty: bool = False) -> str:
        """A string, non-blank unless allow_empty; returned as given (not stripped)."""
        if value is None:
            raise self.fail(key, "missing (expected a string)")
        if not isinstance(value, str):
            raise self.fail(key, f"expected a string, got {type(value).__name__} {show(value)}")
        if not allow_empty and not value.strip():
            raise self.fail(key, f"expected a non-empty string, got {value!r}")
        return value

    def choice(self, value: Any, key: str, allowed: Iterable[str]) -> str:
        """One of `allowed` (listed in the given order in the message)."""
        allowed = tuple(allowed)
        if not isinstance(value, str) or value not in allowed:
            raise self.fail(key, f"expected one of {', '.join(allowed)}, got {show(value)}")
        return value

    def mapping(
        self,
        value: Any,
        key: str,
        allowed: Iterable[str] | None = None,
        *,
        required: Iterable[str] = (),
        none_ok: bool = True,
    ) -> Mapping[str, Any]:
        """A mapping (None is {} when none_ok) holding every `required` key and, when `allowed` is given, no
        key outside required + allowed."""
        if value is None and none_ok:
            value = {}
        if not isinstance(value, Mapping):
            raise self.fail(key or "<top level>", f"expected a mapping, got {type(value).__name__} {show(value)}")
        for name in required:
            if name not in value:
                raise self.fail(join_key(key, name), "missing required key")
        if allowed is not None:
            self.check_keys(value, key, (*required, *allowed))
        return value

    def check_keys(self, value: Mapping[str, Any], key: str, allowed: Iterable[str]) -> None:
        """No key of `value` outside `allowed` (the first unknown one, in sorted order, is reported)."""
        allowed = tuple(allowed)
        known = set(allowed)
        unknown = [str(k) for k in value if k not in known]
        if unknown:
            names = ", ".join(dict.fromkeys(allowed))
            raise self.fail(join_key(key, min(unknown)), f"unknown key (known keys: {names})")

    def sequence(self, value: Any, key: str) -> list[Any]:
        """A list (None is [])."""
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.fail(key, f"expected a list, got {type(value).__name__} {show(value)}")
        return value

    def list_of(self, value: Any, key: str, read: Callable[[Any, str], T]) -> list[T]:
        """A list (None is []) whose items are each read by `read(item, item_key)`, item_key = key[i]."""
        return [read(item, join_key(key, i)) for i, item in enumerate(self.sequence(value, key))]

    def mapping_of(self, value: Any, key: str, read: Callable[[Any, str], T]) -> dict[str, T]:
        """A mapping (None is {}) whose values are each read by `read(value, key.name)`; names as strings."""
        return {str(name): read(item, join_key(key, str(name))) for name, item in self.mapping(value, key).items()}

    def vector(self, value: Any, key: str, size: int) -> tuple[float, ...]:
        """A list of `size` finite numbers, as floats."""
        ok = isinstance(value, (list, tuple, np.ndarray)) and len(value) == size and all(map(_finite_number, value))
        if not ok:
            if value is None:
                raise self.fail(key, f"missing (expected a list of {size} finite numbers)")
            raise self.fail(key, f"expected a list of {size} finite numbers, got {show(value)}")
        return tuple(float(v) for v in value)

    # --- one key of a mapping (`key`: the mapping's path; None or absent -> default) ----------------------------
    def get_number(
        self,
        raw: Mapping[str, Any],
        name: str,
        key: str,
        default: float | None = None,
        *,
        low: float | None = None,
        high: float | None = None,
        strict_low: bool = False,
    ) -> float:
        """raw[name] as number() checks it; absent or None -> default (required when default is None)."""
        value = raw.get(name)
        if value is None and default is not None:
            return float(default)
        return self.number(value, join_key(key, name), low=low, high=high, strict_low=strict_low)

    def get_integer(
        self, raw: Mapping[str, Any], name: str, key: str, default: int | None = None, *, low: int | None = None
    ) -> int:
        """raw[name] as integer() checks it; absent or None -> default (required when default is None)."""
        value = raw.get(name)
        if value is None and default is not None:
            return int(default)
        return self.integer(value, join_key(key, name), low=low)

    def get_text(self, raw: Mapping[str, Any], name: str, key: str, default: str | None = None) -> str:
        """raw[name] as a non-empty string; absent -> default (required when default is None)."""
        return self.text(raw.get(name, default), join_key(key, name))

    def get_choice(
        self, raw: Mapping[str, Any], name: str, key: str, allowed: Iterable[str], default: str | None = None
    ) -> str:
        """raw[name] among `allowed`; absent -> default."""
        return self.choice(raw.get(name, default), join_key(key, name), allowed)

    def get_boolean(self, raw: Mapping[str, Any], name: str, key: str, default: bool) -> bool:
        """raw[name] as true or false; absent -> default."""
        return self.boolean(raw.get(name, default), join_key(key, name))
