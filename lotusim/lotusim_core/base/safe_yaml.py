"""The one YAML loader for every file and message payload lotusim reads (scenarios, vehicles, overrides_yaml of a
FleetCommand item, the environment configuration on /lotusim/environment, ...): YAML's safe schema (plain data,
no objects), with bounded nesting and size.

Unbounded input is a crash, not an error: libyaml's composer recurses once per nesting level and a scenario
nested a few hundred thousand levels deep overflowed the C stack (segmentation fault); PyYAML's composer and
every consumer that walks the data (catalogue overrides merge, validators) raised RecursionError from a payload
nested a thousand levels deep, which aborted a whole FleetCommand goal and took a worker and the sensor node
down. So the document is first read as a stream of parser events (libyaml's parser keeps its own stack, no
recursion), counting the nesting depth and the number of nodes, aliases expanded (a "billion laughs" document
of nested aliases counts what it expands to); a document over the bounds raises YAMLLimitError (a
yaml.YAMLError) with the line, before anything is built.

Numbers: YAML 1.1 (PyYAML's schema) reads `1e-3` as the *string* "1e-3" (its floats need a dot: `1.0e-3`), so a
user's `step_s: 1e-3` was refused as "expected a number". Plain scalars in exponent notation without a dot are
read as floats here, as YAML 1.2's core schema does; a quoted '1e-3' stays a string.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

MAX_DEPTH = 32  # nesting levels of mappings and sequences (the shipped files use 6 at most)
MAX_NODES = 2_000_000  # scalars, mappings and sequences, aliases expanded
MAX_CHARS = 64_000_000  # characters of a document

_BASE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when available: ~10x faster


class _Loader(_BASE_LOADER):  # type: ignore[misc, valid-type]
    """The safe loader, plus YAML 1.2's floats in exponent notation without a dot (1e-3, -2E+5)."""


_EXPONENT_FLOAT = re.compile(r"^[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9_]+)[eE][-+]?[0-9]+$")
_Loader.add_implicit_resolver("tag:yaml.org,2002:float", _EXPONENT_FLOAT, list("-+0123456789."))
_LOADER = _Loader
_OPEN = (yaml.MappingStartEvent, yaml.SequenceStartEvent)
_CLOSE = (yaml.MappingEndEvent, yaml.SequenceEndEvent)


class YAMLLimitError(yaml.YAMLError):
    """A document nested deeper or larger than the loader accepts."""


def check_bounds(text: str, max_depth: int = MAX_DEPTH, max_nodes: int = MAX_NODES) -> None:
    """Raise YAMLLimitError if `text` nests deeper than `max_depth` or holds more than `max_nodes` nodes (aliases
    counted as the nodes they stand for, and as deep); yaml.YAMLError if it is not YAML."""
    if len(text) > MAX_CHARS:
        raise YAMLLimitError(f"document of {len(text):,} characters: more than the {MAX_CHARS:,} accepted")
    anchored: dict[str, tuple[int, int]] = {}  # anchor -> (height, nodes) of the node it names
    stack: list[list] = []  # open collections: [anchor, height of the deepest child, nodes inside]
    nodes = 0
    for event in yaml.parse(text, Loader=_LOADER):
        if isinstance(event, _OPEN):
            stack.append([event.anchor, 0, 0])
            if len(stack) > max_depth:
                raise _too_deep(event, max_depth)
            continue
        if isinstance(event, _CLOSE):
            anchor, inner, size = stack.pop()
            height, size = inner + 1, size + 1
        elif isinstance(event, yaml.ScalarEvent):
            anchor, height, size = event.anchor, 0, 1
        elif isinstance(event, yaml.AliasEvent):
            anchor = None
            height, size = anchored.get(event.anchor, (0, 1))
            if len(stack) + height > max_depth:
                raise _too_deep(event, max_depth)
        else:
            continue
        if anchor:
            anchored[anchor] = (height, size)
        if stack:  # a finished node counts in its parent
            parent = stack[-1]
            parent[1], parent[2] = max(parent[1], height), parent[2] + size
            if parent[2] > max_nodes:
                raise _too_big(event, max_nodes)
        else:
            nodes += size
            if nodes > max_nodes:
                raise _too_big(event, max_nodes)


def _too_deep(event: yaml.Event, max_depth: int) -> YAMLLimitError:
    return YAMLLimitError(f"nested more than {max_depth} levels deep{_where(event)}")


def _too_big(event: yaml.Event, max_nodes: int) -> YAMLLimitError:
    return YAMLLimitError(f"more than {max_nodes:,} values (aliases expanded){_where(event)}")


def _where(event: yaml.Event) -> str:
    mark = event.start_mark
    return f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""


def load(text: str | bytes, max_depth: int = MAX_DEPTH, max_nodes: int = MAX_NODES) -> Any:
    """The data of a YAML document (safe schema), after check_bounds. Raises yaml.YAMLError (YAMLLimitError for a
    document over the bounds)."""
    if isinstance(text, bytes):
        text = text.decode("utf-8")
    check_bounds(text, max_depth, max_nodes)
    return yaml.load(text, Loader=_LOADER)  # noqa: S506 - a safe loader (CSafeLoader or SafeLoader)
