"""Checkpoint files that are data, not code: where they live, how they are named, written and read (ROS-free).

A checkpoint is a directory `<checkpoint dir>/<NAME>/` holding, per dynamics worker, `<worker>.npz` (NumPy arrays,
stored uncompressed, read with `allow_pickle=False`) and `<worker>.json` (its manifest: format and version, the
worker's metadata, each array's shape and dtype, the SHA-256 of the .npz), and `checkpoint.json`, written last by
the MAS server (the commit: format and version, name, sim time, each worker's manifest SHA-256). A checkpoint
without a valid `checkpoint.json` is incomplete and cannot be restored.

Reading validates the container completely before anyone uses a value: sizes, JSON, format and version, member
names, checksums, shapes and dtypes (float64 / int64 / bool only: object arrays cannot be stored or read) and
finite values; every refusal is a CheckpointError `<file>: <key>: <reason>`. What the arrays *mean* is checked
by their owner (lotusim_physics.checkpoint for a worker).

Names, not paths: a checkpoint is addressed by a NAME checked by check_name() (letters, digits, `_ . -`, at
most 64 characters, no separator, no `..`), always under the configured directory (checkpoint_dir()).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import shutil
import tokenize
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

FORMAT = "lotusim-checkpoint"
VERSION = 1
COMMIT_FILE = "checkpoint.json"
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
DTYPES = {"float64": np.float64, "int64": np.int64, "bool": np.bool_}
MAX_MANIFEST_BYTES = 64 << 20  # a manifest lists every vessel with its overrides: 10,000 vessels are ~2 MB
MAX_ARRAY_BYTES = 8 << 30
SAVE, RESTORE, CHECK = 0, 1, 3  # operations of lotusim_interfaces/srv/Checkpoint that a part answers
StateT = TypeVar("StateT")
ZIP_MEMBER_OVERHEAD = 4096  # .npy header + zip headers per array, bytes (generous)


class CheckpointError(ValueError):
    """A checkpoint cannot be written or read: the message names the file, the key and the reason."""

    def __init__(self, where: str | Path, key: str, reason: str) -> None:
        reason = " ".join(str(reason).split())  # one line, whatever a parser's message looked like
        self.where, self.key, self.reason = str(where), key, reason
        super().__init__(f"{where}: {key}: {reason}")


def checkpoint_dir(configured: str = "") -> Path:
    """The checkpoint directory: `configured` (a node parameter / CLI option) if given, else
    $LOTUSIM_CHECKPOINT_DIR, else $XDG_STATE_HOME/lotusim/checkpoints (~/.local/state/lotusim/checkpoints)."""
    chosen = configured or os.environ.get("LOTUSIM_CHECKPOINT_DIR", "")
    if chosen:
        return Path(chosen).expanduser()
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "lotusim" / "checkpoints"


def check_name(name: str, what: str = "checkpoint name") -> str:
    """`name` if it is a valid checkpoint (or worker) name, else CheckpointError saying why."""
    if not isinstance(name, str) or not NAME_RE.match(name) or ".." in name:
        shown = name if isinstance(name, str) and len(name) <= 80 else f"{str(name)[:80]}..."
        raise CheckpointError(
            what,
            repr(shown),
            "expected a name of 1-64 letters, digits, '_', '.' or '-' starting with a letter or digit "
            "(no path: checkpoints live in the checkpoint directory)",
        )
    return name


def location(root: Path, name: str, create: bool = False) -> Path:
    """The directory of checkpoint `name` under `root` (created, owner-only, if `create`); refuses a name that
    resolves outside `root` (a symbolic link planted in the directory)."""
    check_name(name)
    path = root / name
    if create:
        root.mkdir(parents=True, exist_ok=True, mode=0o700)
        path.mkdir(exist_ok=True, mode=0o700)
    if path.exists() and path.resolve().parent != root.resolve():
        raise CheckpointError(path, "location", f"resolves outside the checkpoint directory {root}")
    return path


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _write_atomically(path: Path, write) -> None:
    """write(tmp_path) then rename over `path`: a reader sees the old file or the new one, never half of one."""
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def _json_text(document: dict) -> str:
    return json.dumps(document, indent=1, allow_nan=False, sort_keys=True)


# --- one worker's part ---------------------------------------------------------------------------------------
def write_part(root: Path, name: str, part: str, meta: dict, arrays: dict[str, np.ndarray]) -> str:
    """Write `<root>/<name>/<part>.npz` and `<part>.json` (meta: JSON-able, finite numbers); returns the
    SHA-256 of the manifest (for the commit). Arrays must be float64, int64 or bool and finite."""
    check_name(part, "worker name")
    where = location(root, name, create=True)
    described = {}
    for key, value in arrays.items():
        arr = np.ascontiguousarray(value)
        if arr.dtype.name not in DTYPES:
            raise CheckpointError(where / f"{part}.npz", key, f"dtype {arr.dtype} cannot be stored")
        described[key] = {"shape": list(arr.shape), "dtype": arr.dtype.name}
    npz = where / f"{part}.npz"
    _write_atomically(npz, lambda tmp: _savez(tmp, arrays))
    manifest = {
        "format": FORMAT,
        "version": VERSION,
        "checkpoint": name,
        "part": part,
        "meta": meta,
        "arrays": described,
        "npz_sha256": sha256_of(npz),
    }
    text = _json_text(manifest)
    _write_atomically(where / f"{part}.json", lambda tmp: tmp.write_text(text))
    return hashlib.sha256(text.encode()).hexdigest()


def _savez(path: Path, arrays: dict[str, np.ndarray]) -> None:
    with path.open("wb") as handle:
        np.savez(handle, **{k: np.ascontiguousarray(v) for k, v in arrays.items()})


def read_part(root: Path, name: str, part: str, expected_sha: str | None = None) -> tuple[dict, dict]:
    """(meta, arrays) of one worker's part, validated as described in the module docstring; `expected_sha` is
    the manifest's SHA-256 recorded by the commit (None: not checked)."""
    check_name(part, "worker name")
    where = location(root, name)
    manifest_path = where / f"{part}.json"
    text = _read_text(manifest_path)
    if expected_sha is not None and hashlib.sha256(text.encode()).hexdigest() != expected_sha:
        raise CheckpointError(manifest_path, "sha256", "differs from the one recorded in checkpoint.json")
    manifest = _parse_json(manifest_path, text)
    _check_header(manifest_path, manifest, {"checkpoint": name, "part": part})
    meta = manifest.get("meta")
    if not isinstance(meta, dict):
        raise CheckpointError(manifest_path, "meta", "expected a mapping")
    described = _described_arrays(manifest_path, manifest.get("arrays"))
    npz = where / f"{part}.npz"
    arrays = _read_arrays(npz, described, manifest.get("npz_sha256"))
    return meta, arrays


def _read_text(path: Path) -> str:
    try:
        size = path.stat().st_size
        if size > MAX_MANIFEST_BYTES:
            raise CheckpointError(path, "<file>", f"{size} bytes, more than a manifest can be ({MAX_MANIFEST_BYTES})")
        return path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise CheckpointError(path, "<file>", "not found") from None
    except OSError as exc:
        raise CheckpointError(path, "<file>", f"cannot be read: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise CheckpointError(path, "<file>", "not UTF-8 text (not a checkpoint manifest)") from None


def _parse_json(path: Path, text: str) -> dict:
    try:
        document = json.loads(text, parse_constant=_no_constant)
    except (ValueError, RecursionError) as exc:
        raise CheckpointError(path, "<file>", f"not a JSON checkpoint manifest ({str(exc)[:120]})") from None
    if not isinstance(document, dict):
        raise CheckpointError(path, "<file>", f"expected a JSON object, got {type(document).__name__}")
    return document


def _no_constant(token: str):
    raise ValueError(f"{token} is not a number")


def _check_header(path: Path, document: dict, expected: dict) -> None:
    if document.get("format") != FORMAT:
        raise CheckpointError(path, "format", f"expected {FORMAT!r}, got {str(document.get('format'))[:80]!r}")
    version = document.get("version")
    if version != VERSION or isinstance(version, bool):
        raise CheckpointError(
            path, "version", f"format version {str(version)[:20]} is not supported (this lotusim reads {VERSION})"
        )
    for key, value in expected.items():
        if document.get(key) != value:
            raise CheckpointError(path, key, f"expected {value!r}, got {str(document.get(key))[:80]!r}")


def _described_arrays(path: Path, described) -> dict[str, tuple[tuple[int, ...], str]]:
    if not isinstance(described, dict):
        raise CheckpointError(path, "arrays", "expected a mapping of array name to shape and dtype")
    out = {}
    for key, spec in described.items():
        shape = spec.get("shape") if isinstance(spec, dict) else None
        dtype = spec.get("dtype") if isinstance(spec, dict) else None
        valid_shape = isinstance(shape, list) and all(type(d) is int and 0 <= d < 2**40 for d in shape)
        if not (
            re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,63}", str(key))
            and valid_shape
            and isinstance(dtype, str)
            and dtype in DTYPES
        ):
            expected = "expected {shape: [int, ...], dtype: float64|int64|bool}"
            raise CheckpointError(path, f"arrays.{str(key)[:64]}", expected)
        out[key] = (tuple(shape), dtype)
    return out


def _read_arrays(npz: Path, described: dict, sha: object) -> dict[str, np.ndarray]:
    """The arrays of `npz`, after checking its size, checksum and members against the manifest."""
    expected_bytes = sum(math.prod(s) * np.dtype(DTYPES[d]).itemsize for s, d in described.values())
    if expected_bytes > MAX_ARRAY_BYTES:
        raise CheckpointError(npz, "arrays", f"{expected_bytes} bytes declared, more than {MAX_ARRAY_BYTES}")
    try:
        size = npz.stat().st_size
    except FileNotFoundError:
        raise CheckpointError(npz, "<file>", "not found") from None
    if size > expected_bytes + ZIP_MEMBER_OVERHEAD * (len(described) + 1):
        raise CheckpointError(npz, "<file>", f"{size} bytes, more than its manifest's arrays need")
    if not isinstance(sha, str) or sha256_of(npz) != sha:
        raise CheckpointError(npz, "sha256", "does not match its manifest (changed or truncated)")
    try:
        with zipfile.ZipFile(npz) as archive:
            members = {info.filename: info for info in archive.infolist()}
    except (zipfile.BadZipFile, OSError) as exc:
        raise CheckpointError(npz, "<file>", f"not an .npz archive ({exc})") from None
    if set(members) != {f"{k}.npy" for k in described}:
        raise CheckpointError(npz, "<members>", f"expected {sorted(described)}, found {sorted(members)[:20]}")
    arrays = {}
    try:
        with np.load(npz, allow_pickle=False) as data:
            for key, (shape, dtype) in described.items():
                info = members[f"{key}.npy"]
                if (
                    info.compress_type != zipfile.ZIP_STORED
                    or info.file_size > ZIP_MEMBER_OVERHEAD + math.prod(shape) * np.dtype(DTYPES[dtype]).itemsize
                ):
                    raise CheckpointError(npz, key, "stored compressed or larger than its declared shape")
                arrays[key] = _checked(npz, key, data[key], shape, dtype)
    # a corrupted .npy header makes NumPy's header parser raise SyntaxError or tokenize.TokenError
    except (ValueError, OSError, EOFError, zipfile.BadZipFile, SyntaxError, tokenize.TokenError) as exc:
        if isinstance(exc, CheckpointError):
            raise
        raise CheckpointError(npz, "<file>", f"cannot be read without pickle: {str(exc)[:160]}") from None
    return arrays


def _checked(npz: Path, key: str, arr: np.ndarray, shape: tuple, dtype: str) -> np.ndarray:
    if arr.dtype != DTYPES[dtype] or arr.shape != shape:
        raise CheckpointError(npz, key, f"is {arr.dtype} {arr.shape}, its manifest says {dtype} {shape}")
    if arr.dtype == np.float64 and not np.all(np.isfinite(arr)):
        raise CheckpointError(npz, key, "holds non-finite values")
    return arr


# --- the commit (MAS server) ----------------------------------------------------------------------------------
def uncommit(root: Path, name: str) -> None:
    """Remove the commit of checkpoint `name` (before its parts are written again)."""
    (location(root, name) / COMMIT_FILE).unlink(missing_ok=True)


def commit(root: Path, name: str, sim_time_ns: int, parts: dict[str, dict], sensors: dict | None = None) -> None:
    """Write checkpoint.json: the checkpoint is complete. parts: worker -> {"sha256": ..., "vessels": n};
    sensors: the sensor node's part {"sha256": ..., "t_ns": its sim time} if it was saved."""
    document = {"format": FORMAT, "version": VERSION, "checkpoint": name, "sim_time_ns": int(sim_time_ns)}
    document["parts"] = {w: {"sha256": p["sha256"], "vessels": int(p["vessels"])} for w, p in sorted(parts.items())}
    if sensors is not None:
        document["sensors"] = {"sha256": sensors["sha256"], "t_ns": int(sensors["t_ns"])}
    where = location(root, name, create=True)
    text = _json_text(document)
    _write_atomically(where / COMMIT_FILE, lambda tmp: tmp.write_text(text))


def read_commit(root: Path, name: str) -> dict:
    """checkpoint.json of `name`, validated: {"sim_time_ns": int, "parts": {worker: {"sha256", "vessels"}},
    "sensors": {"sha256", "t_ns"} or None}."""
    path = location(root, name) / COMMIT_FILE
    if not path.parent.is_dir():
        raise CheckpointError(path.parent, "<directory>", f"no checkpoint named {name!r} in {root}")
    if not path.exists():
        raise CheckpointError(path, "<file>", "not found: the checkpoint is incomplete (its save did not finish)")
    document = _parse_json(path, _read_text(path))
    _check_header(path, document, {"checkpoint": name})
    sim_time_ns, parts = document.get("sim_time_ns"), document.get("parts")
    if type(sim_time_ns) is not int or sim_time_ns < 0:
        raise CheckpointError(path, "sim_time_ns", "expected an integer >= 0")
    if not isinstance(parts, dict) or not parts:
        raise CheckpointError(path, "parts", "expected a non-empty mapping of worker to its part")
    for worker, part in parts.items():
        check_name(worker, f"{path}: parts: worker name")
        ok = isinstance(part, dict) and isinstance(part.get("sha256"), str) and type(part.get("vessels")) is int
        if not ok:
            raise CheckpointError(path, f"parts.{worker}", "expected {sha256: str, vessels: int}")
    sensors = document.get("sensors")
    if sensors is not None and not (
        isinstance(sensors, dict) and isinstance(sensors.get("sha256"), str) and type(sensors.get("t_ns")) is int
    ):
        raise CheckpointError(path, "sensors", "expected {sha256: str, t_ns: int}")
    return {"sim_time_ns": sim_time_ns, "parts": parts, "sensors": sensors}


def list_checkpoints(root: Path) -> list[tuple[str, dict | str]]:
    """Every checkpoint directory under `root`, sorted: (name, its commit) or (name, why it cannot be restored)."""
    if not root.is_dir():
        return []
    found: list[tuple[str, dict | str]] = []
    for entry in sorted(root.iterdir()):
        if not entry.is_dir() or not NAME_RE.match(entry.name) or ".." in entry.name:
            continue
        try:
            found.append((entry.name, read_commit(root, entry.name)))
        except CheckpointError as exc:
            found.append((entry.name, str(exc)))
    return found


def remove(root: Path, name: str) -> None:
    """Delete checkpoint `name` (its directory) if it exists."""
    path = location(root, name)
    if path.is_dir():
        shutil.rmtree(path)


def serve_part(
    configured_dir: str,
    operation: int,
    name: str,
    save: Callable[[Path], str],
    load_committed: Callable[[Path, dict], StateT],
    swap_in: Callable[[StateT], None],
) -> str:
    """A part's answer to a checkpoint request for checkpoint `name` under the configured directory (a dynamics
    worker's, the sensors'): SAVE returns save(root), the written manifest's SHA-256; RESTORE and CHECK read the
    commit and validate the part it records completely (load_committed(root, commit), raising if the commit has
    none), then RESTORE calls swap_in with the state. Raises CheckpointError, with nothing changed."""
    root = checkpoint_dir(configured_dir)
    check_name(name)
    if operation == SAVE:
        return save(root)
    if operation in (RESTORE, CHECK):
        state = load_committed(root, read_commit(root, name))
        if operation == RESTORE:
            swap_in(state)
        return ""
    raise CheckpointError("request", "operation", f"{operation} is not SAVE (0), RESTORE (1) or CHECK (3)")


def answered(serve_call: Callable[[], str]) -> tuple[bool, str, str]:
    """A checkpoint request answered without raising (no file or request may take a worker or the sensor node
    down): (success, digest, message); digest: serve_call's result (a SAVE's manifest SHA-256, else ""); message:
    "" on success, else a refusal's `file: key: reason` (the text of any ValueError) or the exception's type and
    text."""
    try:
        return True, serve_call(), ""
    except Exception as exc:  # noqa: BLE001 - reported to the caller, the node runs on
        return False, "", str(exc) if isinstance(exc, ValueError) else f"{type(exc).__name__}: {exc}"


def describe(meta: Any, limit: int = 80) -> str:
    """A short printable form of a value read from a file (for error messages)."""
    text = repr(meta)
    return text if len(text) <= limit else f"{text[:limit]}..."
