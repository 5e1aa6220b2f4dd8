"""Byte offsets of the fields of a serialized ROS message, computed from the message's type description and its
values (string and sequence lengths), following the CDR rules ([OMG2019], XCDR version 1, the encoding of the
ROS 2 middlewares): every primitive is aligned to its size (at most 8) counted from the end of the 4-byte
encapsulation header; a string is a uint32 length (bytes + NUL) then its bytes and NUL; a sequence is a uint32
count then its elements; a fixed array is its elements; an empty structure is one byte.

This replaces locating fields by searching serialized bytes for sentinel values: the padding bytes of a
serialization are not initialised by the middleware and may hold the sentinels of an earlier serialization, so
a search can find a value twice (the dynamics worker died building a /tf template). Offsets computed here do not
depend on buffer contents; `verify` checks them once against a real serialization (at the computed positions
only, never by searching).
"""

from __future__ import annotations

import struct
from typing import Any

import numpy as np
from rclpy.serialization import serialize_message
from rosidl_parser.definition import (
    AbstractGenericString,
    AbstractNestedType,
    AbstractSequence,
    AbstractWString,
    Array,
    BasicType,
    NamespacedType,
)

HEADER_BYTES = 4  # the encapsulation header (representation id and options) before the CDR payload
PRIMITIVE_SIZE = {
    "boolean": 1,
    "octet": 1,
    "char": 1,
    "uint8": 1,
    "int8": 1,
    "int16": 2,
    "uint16": 2,
    "int32": 4,
    "uint32": 4,
    "float": 4,
    "int64": 8,
    "uint64": 8,
    "double": 8,
}
STRUCT_FORMAT = {"double": "d", "float": "f", "int32": "i", "uint32": "I", "int64": "q", "uint64": "Q"}
STRUCT_FORMAT.update({"int8": "b", "uint8": "B", "int16": "h", "uint16": "H"})


def _align(position: int, size: int) -> int:
    """`position` (bytes from the payload start) rounded up to a multiple of min(size, 8)."""
    size = min(size, 8)
    return position + (-position % size)


class _FlatType:
    """The serialization plan of a message type without sequences or arrays (e.g. TransformStamped): its leaves
    in order, as (attribute chain, primitive size or 0 for a string, dotted path, type name). Element layouts
    are cached by (start position mod 8, string lengths): a sequence of thousands of such elements costs a
    string read per element, not a walk."""

    def __init__(self, leaves: list[tuple[tuple[str, ...], int, str, str]]) -> None:
        self.leaves = leaves
        self.paths = [path for _, _, path, _ in leaves]
        self.types = {path: kind for _, _, path, kind in leaves}
        self.strings = [chain for chain, size, _, _ in leaves if size == 0]
        self._cache: dict[tuple, tuple[list[int], int]] = {}

    @classmethod
    def of(cls, message_type: type) -> _FlatType | None:
        if message_type not in _FLAT:
            leaves: list = []
            _FLAT[message_type] = cls(leaves) if cls._flatten(message_type, (), leaves) else None
        return _FLAT[message_type]

    @classmethod
    def _flatten(cls, message_type: type, chain: tuple[str, ...], leaves: list) -> bool:
        names = list(message_type.get_fields_and_field_types())
        if not names:
            return False  # the placeholder byte: left to the walker
        for name, kind in zip(names, message_type.SLOT_TYPES, strict=True):
            here = (*chain, name)
            if isinstance(kind, BasicType) and kind.typename in PRIMITIVE_SIZE:
                leaves.append((here, PRIMITIVE_SIZE[kind.typename], ".".join(here), kind.typename))
            elif isinstance(kind, AbstractGenericString) and not isinstance(kind, AbstractWString):
                leaves.append((here, 0, ".".join(here), "string"))
            elif isinstance(kind, NamespacedType):
                if not cls._flatten(_message_class(kind), here, leaves):
                    return False
            else:
                return False
        return True

    def offsets(self, element: Any, position: int) -> tuple[list[int], int]:
        """(payload position of each leaf, position after the element) of `element` starting at `position`."""
        lengths = []
        for chain in self.strings:
            value = element
            for attribute in chain:
                value = getattr(value, attribute)
            lengths.append(len(value.encode("utf-8")))
        key = (position % 8, *lengths)
        if key not in self._cache:
            here, found, strings = position % 8, [], iter(lengths)
            for _, size, _, _ in self.leaves:
                here = _align(here, size or 4)
                found.append(here)
                here += size or 4 + next(strings) + 1
            self._cache[key] = (found, here)
        relative, end = self._cache[key]
        shift = position - position % 8
        return [shift + p for p in relative], shift + end


_FLAT: dict[type, _FlatType | None] = {}


def _message_class(kind: NamespacedType) -> type:
    """The Python class of a nested message type (e.g. geometry_msgs/Transform)."""
    module = __import__(f"{kind.namespaces[0]}.{'.'.join(kind.namespaces[1:])}", fromlist=[kind.name])
    return getattr(module, kind.name)


class _Walker:
    """Walks a message in serialization order, recording the payload position of each field (dotted paths; a
    primitive array or sequence by its name, at its first element). A sequence or array of messages is recorded
    as a whole in `sequences`: its path -> (leaf paths, (elements, leaves) positions), for element types
    without nested sequences; other element types get dotted paths `name[i].leaf`."""

    def __init__(self) -> None:
        self.offsets: dict[str, int] = {}
        self.types: dict[str, str] = {}  # path -> primitive type name ('double', ...) or 'string' / 'message'
        self.sequences: dict[str, tuple[list[str], dict[str, str], list[list[int]]]] = {}

    def message(self, msg: Any, position: int, prefix: str) -> int:
        names = list(msg.get_fields_and_field_types())
        if not names:
            return position + 1  # an empty structure is serialized as one byte (rosidl's placeholder member)
        for name, kind in zip(names, type(msg).SLOT_TYPES, strict=True):
            path = f"{prefix}{name}"
            position = self.field(getattr(msg, name), kind, position, path)
        return position

    def field(self, value: Any, kind: Any, position: int, path: str) -> int:
        if isinstance(kind, BasicType):
            size = self._size(kind.typename, path)
            position = _align(position, size)
            self.offsets[path], self.types[path] = position, kind.typename
            return position + size
        if isinstance(kind, AbstractWString):
            raise ValueError(f"{path}: wide strings are not supported")
        if isinstance(kind, AbstractGenericString):
            position = _align(position, 4)
            self.offsets[path], self.types[path] = position, "string"
            return position + 4 + len(value.encode("utf-8")) + 1
        if isinstance(kind, NamespacedType):
            self.offsets[path], self.types[path] = position, "message"
            return self.message(value, position, f"{path}.")
        if isinstance(kind, AbstractNestedType):
            return self._nested(value, kind, position, path)
        raise ValueError(f"{path}: unsupported field type {kind!r}")

    def _nested(self, value: Any, kind: AbstractNestedType, position: int, path: str) -> int:
        count = len(value)
        if isinstance(kind, AbstractSequence):
            position = _align(position, 4) + 4  # the element count
        elif not isinstance(kind, Array):
            raise ValueError(f"{path}: unsupported field type {kind!r}")
        inner = kind.value_type
        self.offsets[path], self.types[path] = position, "sequence"
        if isinstance(inner, BasicType):
            size = self._size(inner.typename, path)
            # padded to the element size after the count even when empty: what Fast DDS does for an empty sequence at
            # the end of a message or before other empty ones (tested); before a non-empty sequence it may not pad
            # (Fast CDR skips an alignment it believes done: a JointState with 5 names and an empty `position`),
            # which is why every template is checked against a real serialization (`verify`) before it is used
            position = _align(position, size)
            self.offsets[path], self.types[path] = position, inner.typename
            return position + size * count
        if isinstance(inner, AbstractGenericString) and not isinstance(inner, AbstractWString):
            for element in value:
                position = _align(position, 4) + 4 + len(element.encode("utf-8")) + 1
            return position
        flat = _FlatType.of(_message_class(inner)) if isinstance(inner, NamespacedType) else None
        if flat is None:
            for i, element in enumerate(value):
                position = self.field(element, inner, position, f"{path}[{i}]")
            return position
        rows = []
        for element in value:
            row, position = flat.offsets(element, position)
            rows.append(row)
        self.sequences[path] = (flat.paths, flat.types, rows)
        return position

    @staticmethod
    def _size(typename: str, path: str) -> int:
        if typename not in PRIMITIVE_SIZE:
            raise ValueError(f"{path}: unsupported primitive type {typename!r}")
        return PRIMITIVE_SIZE[typename]


def layout(msg: Any) -> tuple[dict[str, int], dict[str, str], int]:
    """(byte offset of every field in serialize_message(msg), its type name, the serialized length without the
    final padding). Offsets count from the start of the serialized bytes (header included). The elements of
    sequences of messages are not listed (sequence_offsets)."""
    walker = _Walker()
    end = walker.message(msg, 0, "")
    offsets = {path: HEADER_BYTES + position for path, position in walker.offsets.items()}
    return offsets, walker.types, HEADER_BYTES + end


def sequence_offsets(msg: Any, sequence: str, fields: list[str]) -> tuple[np.ndarray, int]:
    """((elements, fields) byte offsets of scalar `fields` (dotted paths inside an element) of each element of
    the sequence of messages `sequence`, the serialized length without the final padding)."""
    walker = _Walker()
    end = walker.message(msg, 0, "")
    if sequence not in walker.sequences:
        raise ValueError(f"{sequence!r} is not a sequence of flat messages in {type(msg).__name__}")
    paths, _, rows = walker.sequences[sequence]
    columns = [paths.index(f) for f in fields]
    table = np.array(rows, dtype=np.int64).reshape(len(rows), len(paths))
    return HEADER_BYTES + table[:, columns], HEADER_BYTES + end


def check_length(serialized: bytes, end: int, what: str) -> None:
    """Raise ValueError unless the serialization is `end` bytes long up to its final padding (to 4 bytes)."""
    if not end <= len(serialized) < end + 4 or serialized[1] & 1 == 0:
        raise ValueError(
            f"{what}: serialized length {len(serialized)} (encapsulation {serialized[:2].hex()}) does not match "
            f"the little-endian CDR layout ({end} bytes): unsupported middleware encoding"
        )


def verify(msg: Any, end: int, checks: list[tuple[int, str, Any]]) -> bytes:
    """Serialize `msg` (whose fields were set to distinct probe values) and check that each (offset, struct
    format, value) of `checks` is there, at that offset: a wrong layout raises ValueError instead of patching the
    wrong bytes. Returns the serialization."""
    serialized = serialize_message(msg)
    what = type(msg).__name__
    check_length(serialized, end, what)
    for offset, fmt, value in checks:
        (found,) = struct.unpack_from("<" + fmt, serialized, offset)
        if found != value:
            raise ValueError(f"{what}: a field is not at its computed byte offset {offset} (layout mismatch)")
    return serialized
