"""The sensor_publisher's part of a checkpoint (ROS-free; files by lotusim_core.base.checkpoint_store).

Kept per vessel and sensor: the schedule (next due time, last sample time, ns), the noise counter (the sample
number of its counter-based stream: the noise generator's whole state, lotusim_sensors.noise) and the
sensor's state (IMU accelerometer and gyro biases, the GPS fix flag); for the node: its sim time, the acoustic
modem messages in flight (arrival time, receiver, source, destination, payload, range, travel time) and the
modem sequence counter. Not kept: parameters and noise keys (functions of the suite and the seed, made again when
a vessel is configured), publishers.

A restore is validated completely (lotusim_core.base.checkpoint_store, then names, kinds, shapes) before the node
changes anything; per-vessel states are then applied to the vessels configured now and, for the others, when
they are configured (a restored vessel the node had deleted comes back with the next fleet state).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from lotusim_core.base.checkpoint_store import (
    CheckpointError,
    describe,
    read_part,
    serve_part,
    write_part,
)
from lotusim_core.base.names import name_problem

PART = "sensors"  # the part's file name (<checkpoint>/sensors.npz, .json)
STATE_KEYS = {"imu": {"accel_bias": 3, "gyro_bias": 3}, "gps": {"had_fix": 0}}  # width (0: one value per row)
INTS = ("t_rx_ns", "seq", "bytes")  # the integers of an in-flight modem message's entry


@dataclass
class SensorRows:
    """One sensor kind of some vessels: schedule, counters and state rows, in the order of `names`."""

    names: list[str]
    next_due_ns: np.ndarray
    last_ns: np.ndarray
    counter: np.ndarray  # uint64
    state: dict[str, np.ndarray] = field(default_factory=dict)


@dataclass
class ModemInFlight:
    """An acoustic modem message on its way: arrival time (sim ns), its queue sequence number, receiver."""

    t_rx_ns: int
    seq: int
    receiver: str
    source: str
    destination: str
    data: bytes
    range_m: float
    travel_time_s: float


@dataclass
class SensorState:
    """A validated sensor checkpoint."""

    t_ns: int
    modem_seq: int
    kinds: dict[str, SensorRows]
    modem: list[ModemInFlight]

    def per_vessel(self) -> dict[str, dict[str, dict]]:
        """vessel -> kind -> {"next_due_ns", "last_ns", "counter", "state": {key: row}}."""
        out: dict[str, dict[str, dict]] = {}
        for kind, rows in self.kinds.items():
            for i, name in enumerate(rows.names):
                out.setdefault(name, {})[kind] = {
                    "next_due_ns": int(rows.next_due_ns[i]),
                    "last_ns": int(rows.last_ns[i]),
                    "counter": rows.counter[i],
                    "state": {k: v[i] for k, v in rows.state.items()},
                }
        return out


def capture(t_ns: int, modem_seq: int, kinds: dict[str, SensorRows], modem: list[ModemInFlight]):
    """(meta, arrays) of the node's sensor state (uint64 counters stored bit for bit as int64)."""
    arrays: dict[str, np.ndarray] = {}
    meta_kinds = {}
    for kind, rows in kinds.items():
        meta_kinds[kind] = list(rows.names)
        arrays[f"{kind}__next_due_ns"] = np.asarray(rows.next_due_ns, dtype=np.int64)
        arrays[f"{kind}__last_ns"] = np.asarray(rows.last_ns, dtype=np.int64)
        arrays[f"{kind}__counter"] = np.asarray(rows.counter, dtype=np.uint64).view(np.int64)
        for key, value in rows.state.items():
            arrays[f"{kind}__state__{key}"] = np.asarray(value, dtype=bool if key == "had_fix" else np.float64)
    arrays["modem_data"] = np.frombuffer(b"".join(m.data for m in modem), dtype=np.uint8).astype(np.int64)
    arrays["modem_numbers"] = np.array([[m.range_m, m.travel_time_s] for m in modem], dtype=np.float64).reshape(-1, 2)
    meta = {
        "t_ns": int(t_ns),
        "modem_seq": int(modem_seq),
        "kinds": meta_kinds,
        "modem": [
            {"t_rx_ns": m.t_rx_ns, "seq": m.seq, "receiver": m.receiver, "source": m.source,
             "destination": m.destination, "bytes": len(m.data)}
            for m in modem
        ],
    }  # fmt: skip
    return meta, arrays


def save(root: Path, name: str, meta: dict, arrays: dict[str, np.ndarray]) -> str:
    """Validate (a save never writes what a restore would refuse), then write; the manifest's SHA-256."""
    build(f"{PART} (save)", meta, arrays, set())
    return write_part(root, name, PART, meta, arrays)


def load(root: Path, name: str, expected_sha: str | None, known_kinds: set[str]) -> SensorState:
    meta, arrays = read_part(root, name, PART, expected_sha)
    return build(str(root / name / f"{PART}.json"), meta, arrays, known_kinds)


def serve(
    configured_dir: str,
    operation: int,
    name: str,
    known_kinds: set[str],
    capture_now: Callable[[], tuple[dict, dict]],
    swap_in: Callable[[SensorState], None],
) -> str:
    """The sensor node's answer to a checkpoint request (0 SAVE, 1 RESTORE, 3 CHECK: Checkpoint.srv), as
    lotusim_physics.checkpoint.serve: SAVE returns the manifest's SHA-256; RESTORE and CHECK validate the part the
    commit records, then RESTORE calls swap_in. Raises CheckpointError with nothing changed."""

    def load_committed(root: Path, commit: dict) -> SensorState:
        part = commit.get("sensors")
        if part is None:
            raise CheckpointError(root / name / "checkpoint.json", "sensors", "no sensor state was saved")
        return load(root, name, part["sha256"], known_kinds)

    return serve_part(configured_dir, operation, name, lambda root: save(root, name, *capture_now()), load_committed,
                      swap_in)  # fmt: skip


def build(where: str, meta: dict, arrays: dict[str, np.ndarray], known_kinds: set[str]) -> SensorState:
    """The SensorState of (meta, arrays), or CheckpointError `<where>: <key>: <reason>` (known_kinds: the node's
    sensor kinds; empty: not checked)."""
    t_ns, seq = meta.get("t_ns"), meta.get("modem_seq")
    for key, value in (("t_ns", t_ns), ("modem_seq", seq)):
        if type(value) is not int or not 0 <= value < 2**62:
            raise CheckpointError(where, key, f"expected an integer >= 0, got {describe(value)}")
    kinds_meta = meta.get("kinds")
    if not isinstance(kinds_meta, dict):
        raise CheckpointError(where, "kinds", "expected a mapping of sensor kind to vessel names")
    expected_keys = {"modem_data", "modem_numbers"}
    kinds = {}
    for kind, names in kinds_meta.items():
        if known_kinds and kind not in known_kinds:
            raise CheckpointError(where, f"kinds.{describe(kind)}", "unknown sensor kind")
        _check_names(where, f"kinds.{kind}", names)
        n = len(names)
        columns = {c: arrays.get(f"{kind}__{c}") for c in ("next_due_ns", "last_ns", "counter")}
        for column, arr in columns.items():
            _check(where, f"{kind}__{column}", arr, (n,), np.int64)
        state = {}
        for key, width in STATE_KEYS.get(kind, {}).items():
            shape, dtype = ((n, width), np.float64) if width else ((n,), np.bool_)
            state[key] = _check(where, f"{kind}__state__{key}", arrays.get(f"{kind}__state__{key}"), shape, dtype)
        expected_keys |= {f"{kind}__{c}" for c in columns} | {f"{kind}__state__{k}" for k in state}
        counter = columns["counter"].view(np.uint64)
        kinds[kind] = SensorRows(list(names), columns["next_due_ns"], columns["last_ns"], counter, state)
    if set(arrays) != expected_keys:
        raise CheckpointError(where, "arrays", f"expected {sorted(expected_keys)}, got {sorted(arrays)[:40]}")
    modem = _modem(where, meta.get("modem"), arrays)
    return SensorState(t_ns, seq, kinds, modem)


def _check_names(where: str, key: str, names) -> None:
    if not isinstance(names, list):
        raise CheckpointError(where, key, "expected a list of vessel names")
    for name in names:
        if problem := name_problem(name):
            raise CheckpointError(where, key, problem)
    if len(set(names)) != len(names):
        raise CheckpointError(where, key, "a vessel appears twice")


def _check(where: str, key: str, arr, shape: tuple, dtype) -> np.ndarray:
    if not isinstance(arr, np.ndarray) or arr.shape != shape or arr.dtype != dtype:
        got = "missing" if arr is None else f"{arr.dtype} {arr.shape}"
        raise CheckpointError(where, key, f"expected {np.dtype(dtype)} {shape}, got {got}")
    if arr.dtype == np.float64 and not np.all(np.isfinite(arr)):
        raise CheckpointError(where, key, "holds non-finite values")
    return arr


def _modem(where: str, entries, arrays: dict[str, np.ndarray]) -> list[ModemInFlight]:
    if not isinstance(entries, list):
        raise CheckpointError(where, "modem", "expected a list")
    numbers = _check(where, "modem_numbers", arrays.get("modem_numbers"), (len(entries), 2), np.float64)
    for k, entry in enumerate(entries):
        ok = isinstance(entry, dict) and all(type(entry.get(c)) is int and 0 <= entry[c] < 2**62 for c in INTS)
        if not ok:
            raise CheckpointError(where, f"modem[{k}]", f"expected a mapping with integers >= 0 {', '.join(INTS)}")
    data = _check(where, "modem_data", arrays.get("modem_data"), (sum(e["bytes"] for e in entries),), np.int64)
    if np.any((data < 0) | (data > 255)):
        raise CheckpointError(where, "modem_data", "expected byte values 0-255")
    out, offset = [], 0
    for k, entry in enumerate(entries):
        for field_name in ("receiver", "source"):
            _check_names(where, f"modem[{k}].{field_name}", [entry.get(field_name)])
        destination = entry.get("destination")
        if not isinstance(destination, str) or (destination and name_problem(destination)):
            raise CheckpointError(where, f"modem[{k}].destination", "expected a vessel name or ''")
        size = entry["bytes"]
        payload = data[offset : offset + size].astype(np.uint8).tobytes()
        offset += size
        out.append(
            ModemInFlight(
                entry["t_rx_ns"],
                entry["seq"],
                entry["receiver"],
                entry["source"],
                destination,
                payload,
                *map(float, numbers[k]),
            )  # fmt: skip
        )
    return out
