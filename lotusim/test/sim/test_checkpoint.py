"""Checkpoints that are data, not code (ROS-free): a saved worker continues bit for bit; names are names, not
paths; every malformed or hostile file is refused with `file: key: reason` before anything changes, and no
file can run code (a pickle payload's sentinel never appears)."""

from __future__ import annotations

import hashlib
import json
import math
import os
import pickle
import zipfile
from pathlib import Path

import numpy as np
import pytest

from lotusim_core.base import checkpoint_store as store
from lotusim_core.base.catalogue import load_vehicle
from lotusim_physics import checkpoint as ckpt
from lotusim_physics import layout as L
from lotusim_physics.fleet import Fleet

STEP_NS = 20_000_000
ENV_YAML = "seed: 7\ncurrent: {model: gauss_markov, east: {mean: 0.2, mu: 0.01, stationary_std: 0.05}}\n"
SAVE, RESTORE, CHECK = 0, 1, 3


class Payload:
    """A pickle that creates a sentinel file when unpickled (what a crafted checkpoint did before)."""

    def __init__(self, sentinel: Path) -> None:
        self.sentinel = sentinel

    def __reduce__(self):
        return (os.system, (f"touch {self.sentinel}",))


def _fleet() -> tuple[Fleet, dict]:
    """Three vessels of three models with thrust, fin and wrench commands, stepped 50 times."""
    fleet = Fleet(STEP_NS * 1e-9)
    vessels = {}
    placed = (("auv", "lrauv", (0, 0, 10)), ("rov", "bluerov2_heavy", (5, 0, 3)), ("usv", "wamv", (0, 9, 0)))
    for name, model, pos in placed:
        fleet.add(name, load_vehicle(model), pos, (1.0, 0.0, 0.0, 0.0))
        vessels[name] = (model, load_vehicle(model).domain, "")
    fleet.set_thruster_commands("auv", [31.4])
    fleet.set_fin_commands("auv", [0.1, -0.05])
    fleet.set_thruster_commands("rov", [0.5, -0.5, 0.5, -0.5, 0.1, 0.1, -0.1, -0.1])
    fleet.set_body_wrench("usv", [10.0, 0, 0, 0, 0, 1.0])
    fleet.step(0.0, steps=50)
    return fleet, vessels


def _saved(root: Path, name: str = "cp") -> tuple[Fleet, str]:
    """A fleet saved as checkpoint `name` of worker_0 (committed), and the manifest's SHA-256."""
    fleet, vessels = _fleet()
    cache = {"current": np.full((3, 3), 0.25), "wind": np.zeros((3, 3))}
    meta, arrays = ckpt.capture(STEP_NS, 50, fleet, vessels, ENV_YAML, cache, 1_100_000_000)
    sha = ckpt.save(root, name, "worker_0", STEP_NS, meta, arrays)
    store.commit(root, name, 50 * STEP_NS, {"worker_0": {"sha256": sha, "vessels": 3}})
    return fleet, sha


def _restore(root: Path, name: str = "cp", step_ns: int = STEP_NS) -> list:
    """serve(RESTORE) with a swap_in that records what it is given; returns those states."""
    swapped: list = []
    ckpt.serve(str(root), RESTORE, name, "worker_0", step_ns, _never, swapped.append)
    return swapped


def _never():
    raise AssertionError("a restore must not capture")


def test_a_restored_worker_continues_bit_for_bit(tmp_path):
    fleet, _ = _saved(tmp_path)
    fleet.step(1.0, steps=200)
    [state] = _restore(tmp_path)
    assert state.iteration == 50 and state.env_next_ns == 1_100_000_000
    assert state.environment_yaml == ENV_YAML and np.all(state.env_cache["current"] == 0.25)
    assert state.fleet.names == ["auv", "rov", "usv"]
    assert [list(v.thruster_cmd) for v in state.vessels][0] == [31.4]
    state.fleet.step(1.0, steps=200)
    for key, value in fleet.state_arrays().items():
        assert np.array_equal(state.fleet.state_arrays()[key], value), key


def test_a_fleet_with_removed_vessels_restores_compacted_and_identical(tmp_path):
    fleet, vessels = _fleet()
    fleet.remove("auv")  # its actuator rows stay dead in the pools
    del vessels["auv"]
    meta, arrays = ckpt.capture(STEP_NS, 9, fleet, vessels, "", {}, 0)
    sha = ckpt.save(tmp_path, "gone", "worker_0", STEP_NS, meta, arrays)
    store.commit(tmp_path, "gone", 9 * STEP_NS, {"worker_0": {"sha256": sha, "vessels": 2}})
    [state] = _restore(tmp_path, "gone")
    fleet.step(0.0, steps=100)
    state.fleet.step(0.0, steps=100)
    assert state.fleet.names == ["usv", "rov"]
    for key, value in fleet.state_arrays().items():
        assert np.array_equal(state.fleet.state_arrays()[key], value), key


@pytest.mark.parametrize(
    "name",
    ["../escape", "..", "/tmp/abs", "a/b", "a\\b", "", ".hidden", "x" * 65, "a..b", "nul\x00", "sp ace", "é"],
)
def test_a_checkpoint_name_is_never_a_path(tmp_path, name):
    root = tmp_path / "ck"
    with pytest.raises(store.CheckpointError, match="expected a name"):
        ckpt.serve(str(root), SAVE, name, "worker_0", STEP_NS, lambda: _fleet_capture(), lambda s: None)
    with pytest.raises(store.CheckpointError, match="expected a name"):
        _restore(root, name)
    assert sorted(p.name for p in tmp_path.rglob("*")) == [], "nothing written anywhere"


def _fleet_capture():
    fleet, vessels = _fleet()
    return ckpt.capture(STEP_NS, 50, fleet, vessels, "", {}, 0)


def test_a_planted_symlink_does_not_lead_out_of_the_directory(tmp_path):
    root, outside = tmp_path / "ck", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (root / "link").symlink_to(outside)
    with pytest.raises(store.CheckpointError, match="outside the checkpoint directory"):
        ckpt.serve(str(root), SAVE, "link", "worker_0", STEP_NS, _fleet_capture, lambda s: None)
    assert list(outside.iterdir()) == []


# --- malformed and hostile files ---------------------------------------------------------------------------
def _resign(root: Path, name: str = "cp") -> None:
    """Recompute the checksums after a corruption, as an attacker who can write the directory would: the
    checkpoint then passes the integrity checks and must be refused by its content."""
    where = root / name
    manifest_path = where / "worker_0.json"
    try:
        manifest = json.loads(manifest_path.read_text())
        manifest["npz_sha256"] = store.sha256_of(where / "worker_0.npz")
        manifest_path.write_text(json.dumps(manifest))
    except (ValueError, TypeError, AttributeError, RecursionError):
        pass  # the manifest itself is the corruption
    commit_path = where / "checkpoint.json"
    commit = json.loads(commit_path.read_text())
    commit["parts"]["worker_0"]["sha256"] = hashlib.sha256(manifest_path.read_bytes()).hexdigest()
    commit_path.write_text(json.dumps(commit))


def _edit_manifest(change):
    def corrupt(where: Path) -> None:
        manifest = json.loads((where / "worker_0.json").read_text())
        change(manifest)
        (where / "worker_0.json").write_text(json.dumps(manifest))

    return corrupt


def _edit_meta(change):
    return _edit_manifest(lambda m: change(m["meta"]))


def _edit_arrays(change):
    """Rewrite the .npz with change(arrays) applied and its manifest describing the new arrays."""

    def corrupt(where: Path) -> None:
        with np.load(where / "worker_0.npz") as data:
            arrays = {k: data[k] for k in data.files}
        change(arrays)
        with (where / "worker_0.npz").open("wb") as handle:
            np.savez(handle, **arrays)
        manifest = json.loads((where / "worker_0.json").read_text())
        manifest["arrays"] = {k: {"shape": list(v.shape), "dtype": v.dtype.name} for k, v in arrays.items()}
        (where / "worker_0.json").write_text(json.dumps(manifest))

    return corrupt


def _write(file: str, data: bytes):
    return lambda where: (where / file).write_bytes(data)


def _truncate(file: str, keep: float):
    def corrupt(where: Path) -> None:
        data = (where / file).read_bytes()
        (where / file).write_bytes(data[: int(len(data) * keep)])

    return corrupt


def _object_array_npz(sentinel: Path):
    def corrupt(where: Path) -> None:
        with np.load(where / "worker_0.npz") as data:
            arrays = {k: data[k] for k in data.files}
        arrays["xs"] = np.array([Payload(sentinel)], dtype=object)
        with (where / "worker_0.npz").open("wb") as handle:
            np.savez(handle, **arrays)

    return corrupt


def _set(mapping_path: list, value):
    def change(doc):
        for key in mapping_path[:-1]:
            doc = doc[key]
        doc[mapping_path[-1]] = value

    return change


def _delete(key: str):
    return lambda doc: doc.pop(key)


def _malformations(sentinel: Path) -> dict:
    """name -> (corrupt(checkpoint directory), re-sign the checksums afterwards)."""
    evil = pickle.dumps(Payload(sentinel))
    nan_xs = _edit_arrays(lambda a: a["xs"].__setitem__((0, 0), math.nan))
    cases = {
        "manifest empty": (_write("worker_0.json", b""), True),
        "manifest truncated": (_truncate("worker_0.json", 0.5), True),
        "manifest not json": (_write("worker_0.json", b"\x80\x04K\x01."), True),
        "manifest a pickle": (_write("worker_0.json", evil), True),
        "manifest wrong type (list)": (_write("worker_0.json", b"[1, 2, 3]"), True),
        "manifest deeply nested": (_write("worker_0.json", b"[" * 100_000 + b"]" * 100_000), True),
        "manifest NaN constant": (_write("worker_0.json", b'{"format": NaN}'), True),
        "iteration a string": (_edit_meta(_set(["iteration"], "12")), True),
        "format wrong": (_edit_manifest(_set(["format"], "other")), True),
        "version mismatch": (_edit_manifest(_set(["version"], 2)), True),
        "version a bool": (_edit_manifest(_set(["version"], True)), True),
        "meta missing": (_edit_manifest(_delete("meta")), True),
        "meta wrong type": (_edit_manifest(_set(["meta"], [1])), True),
        "iteration missing": (_edit_meta(_delete("iteration")), True),
        "iteration negative": (_edit_meta(_set(["iteration"], -5)), True),
        "iteration a float": (_edit_meta(_set(["iteration"], 5.5)), True),
        "step_ns differs": (_edit_meta(_set(["step_ns"], STEP_NS + 1)), True),
        "vessels missing": (_edit_meta(_delete("vessels")), True),
        "vessels wrong type": (_edit_meta(_set(["vessels"], {"a": 1})), True),
        "vessel name a path": (_edit_meta(_set(["vessels", 0, "name"], "../../etc")), True),
        "vessel name duplicated": (_edit_meta(_set(["vessels", 1, "name"], "auv")), True),
        "vessel model unknown": (_edit_meta(_set(["vessels", 0, "model"], "no_such_model")), True),
        "vessel model another": (_edit_meta(_set(["vessels", 0, "model"], "remus100")), True),
        "vessel overrides change the model": (_edit_meta(_set(["vessels", 0, "overrides_yaml"], "mass_kg: 200")), True),
        "vessel overrides not yaml": (_edit_meta(_set(["vessels", 0, "overrides_yaml"], "{[")), True),
        "vessel thrusters count": (_edit_meta(_set(["vessels", 0, "thrusters"], 2)), True),
        "vessel missing a key": (_edit_meta(lambda m: m["vessels"][0].pop("domain")), True),
        "fleet_settings missing a key": (_edit_meta(lambda m: m["fleet_settings"].pop("integrator")), True),
        "fleet_settings bad integrator": (_edit_meta(_set(["fleet_settings", "integrator"], "magic")), True),
        "environment not yaml": (_edit_meta(_set(["environment_yaml"], "current: {model: [")), True),
        "environment invalid": (_edit_meta(_set(["environment_yaml"], "current: {model: warp}")), True),
        "arrays descriptor wrong type": (_edit_manifest(_set(["arrays"], [1])), True),
        "array dtype object": (_edit_manifest(_set(["arrays", "xs", "dtype"], "object")), True),
        "array shape huge": (_edit_manifest(_set(["arrays", "xs", "shape"], [2**39, 31])), True),
        "npz empty": (_write("worker_0.npz", b""), True),
        "npz truncated": (_truncate("worker_0.npz", 0.7), True),
        "npz a pickle payload": (_write("worker_0.npz", evil), True),
        "npz object array payload": (_object_array_npz(sentinel), True),
        "npz bytes changed (not re-signed)": (_truncate("worker_0.npz", 0.99), False),
        "npz bad shape xs": (_edit_arrays(lambda a: a.__setitem__("xs", a["xs"][:2])), True),
        "npz bad shape thrusters": (_edit_arrays(lambda a: a.__setitem__("thrusters", a["thrusters"][:, :5])), True),
        "npz wrong dtype frozen": (_edit_arrays(lambda a: a.__setitem__("frozen", a["frozen"].astype(np.int64))), True),
        "npz missing array": (_edit_arrays(lambda a: a.pop("vp")), True),
        "npz extra array": (_edit_arrays(lambda a: a.__setitem__("extra", np.zeros(3))), True),
        "npz NaN state": (nan_xs, True),
        "npz quaternion not unit": (_edit_arrays(lambda a: a["xs"].__setitem__((1, L.X_Q), 3.0)), True),
        "npz parameters changed": (_edit_arrays(lambda a: a["vp"].__setitem__((0, 0), 1.0)), True),
        "npz actuator parameters changed": (_edit_arrays(lambda a: a["thrusters"].__setitem__((0, 0), 9.0)), True),
        "manifest changed (not re-signed)": (_edit_meta(_set(["iteration"], 7)), False),
        "commit missing": (lambda w: (w / "checkpoint.json").unlink(), False),
        "commit empty": (_write("checkpoint.json", b""), False),
        "commit version mismatch": (
            lambda w: (w / "checkpoint.json").write_text(
                (w / "checkpoint.json").read_text().replace('"version": 1', '"version": 99')
            ),
            False,
        ),
        "commit without this worker": (
            lambda w: (w / "checkpoint.json").write_text(
                (w / "checkpoint.json").read_text().replace("worker_0", "worker_9")
            ),
            False,
        ),
        "part files missing": (lambda w: [(w / f).unlink() for f in ("worker_0.json", "worker_0.npz")], False),
    }
    return cases


def test_every_malformed_checkpoint_is_refused_in_one_line_and_runs_no_code(tmp_path):
    """Each case is a fresh valid checkpoint corrupted one way (and re-signed where the corruption is the content):
    serve(RESTORE) raises CheckpointError `file: key: reason`, never another exception, never calls swap_in, and
    a pickle payload never runs."""
    sentinel = tmp_path / "SENTINEL"
    tried, refused = 0, []
    for case, (corrupt, resign) in _malformations(sentinel).items():
        root = tmp_path / case.replace(" ", "_").replace("(", "").replace(")", "")
        _saved(root)
        corrupt(root / "cp")
        if resign:
            _resign(root)
        tried += 1
        with pytest.raises(store.CheckpointError) as info:
            _restore(root)
        message = str(info.value)
        assert message.count(": ") >= 2 and "\n" not in message, (case, message)
        refused.append((case, message))
    assert not sentinel.exists(), "a checkpoint file ran code"
    print(f"\nmalformed checkpoints tried: {tried}, refused: {len(refused)}, code run: 0")
    for case, message in refused:
        print(f"  {case}: {message[-110:]}")
    assert tried == len(refused) >= 50


def test_only_whole_arrays_of_plain_dtypes_are_written(tmp_path):
    with pytest.raises(store.CheckpointError, match="cannot be stored"):
        store.write_part(tmp_path, "cp", "worker_0", {}, {"x": np.array([object()], dtype=object)})


def test_listing_tells_complete_from_incomplete(tmp_path):
    _saved(tmp_path, "good")
    _saved(tmp_path, "half")
    store.uncommit(tmp_path, "half")
    (tmp_path / "not a name").mkdir()
    listed = dict(store.list_checkpoints(tmp_path))
    assert set(listed) == {"good", "half"}
    assert listed["good"]["sim_time_ns"] == 50 * STEP_NS and listed["good"]["parts"]["worker_0"]["vessels"] == 3
    assert "incomplete" in listed["half"]


def test_default_directory_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.delenv("LOTUSIM_CHECKPOINT_DIR", raising=False)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    assert store.checkpoint_dir() == tmp_path / "state" / "lotusim" / "checkpoints"
    monkeypatch.setenv("LOTUSIM_CHECKPOINT_DIR", str(tmp_path / "ck"))
    assert store.checkpoint_dir() == tmp_path / "ck"
    assert store.checkpoint_dir(str(tmp_path / "param")) == tmp_path / "param"


def test_saved_npz_is_plain_uncompressed_arrays(tmp_path):
    _saved(tmp_path)
    with zipfile.ZipFile(tmp_path / "cp" / "worker_0.npz") as archive:
        assert {i.compress_type for i in archive.infolist()} == {zipfile.ZIP_STORED}
    manifest = json.loads((tmp_path / "cp" / "worker_0.json").read_text())
    assert manifest["format"] == "lotusim-checkpoint" and manifest["version"] == 1
    assert manifest["arrays"]["xs"] == {"shape": [3, L.X_WIDTH], "dtype": "float64"}


def _leaf_paths(doc, prefix=()):
    """Every path to a value in a JSON document (mappings and lists), the containers included."""
    yield prefix
    items = doc.items() if isinstance(doc, dict) else enumerate(doc) if isinstance(doc, list) else ()
    for key, value in items:
        yield from _leaf_paths(value, (*prefix, key))


def test_fuzzed_manifests_are_refused_with_a_checkpoint_error_only(tmp_path):
    """Every value of a valid manifest (seeded sample) replaced by values of other types and ranges, re-signed:
    the load either succeeds with a consistent state or raises CheckpointError; never another exception."""
    rng = np.random.default_rng(20)
    _saved(tmp_path, "base")
    base = json.loads((tmp_path / "base" / "worker_0.json").read_text())
    paths = [p for p in _leaf_paths(base) if p and p[0] != "npz_sha256"]
    values = [None, -1, 0, 2**63, 1e308, -0.5, True, "", "x" * 300, "../../x", [], {}, [1, 2], {"a": 1}]
    tried = refused = accepted = 0
    for k in range(300):
        path = paths[rng.integers(len(paths))]
        value = values[rng.integers(len(values))]
        manifest = json.loads(json.dumps(base))
        target = manifest
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
        name = f"f{k}"
        shutil_copy = tmp_path / name
        shutil_copy.mkdir()
        manifest["checkpoint"] = name if path != ("checkpoint",) else value
        (shutil_copy / "worker_0.npz").write_bytes((tmp_path / "base" / "worker_0.npz").read_bytes())
        (shutil_copy / "worker_0.json").write_text(json.dumps(manifest))
        store.commit(tmp_path, name, 0, {"worker_0": {"sha256": "0", "vessels": 3}})
        _resign(tmp_path, name)
        tried += 1
        try:
            [state] = _restore(tmp_path, name)
        except store.CheckpointError:
            refused += 1
            continue
        accepted += 1  # a change that does not matter (e.g. an unused value): the result must still be sound
        assert state.fleet.names == ["auv", "rov", "usv"]
    print(f"\nfuzzed manifests: {tried} tried, {refused} refused, {accepted} harmless and accepted")
    assert tried == refused + accepted and refused > 250


def test_fuzzed_array_files_are_refused_with_a_checkpoint_error_only(tmp_path):
    """Random bytes of a valid .npz overwritten (seeded), re-signed: CheckpointError, or a load whose every array
    still has the declared shape, dtype and finite values (a flipped mantissa bit is a valid number)."""
    rng = np.random.default_rng(21)
    _saved(tmp_path, "base")
    data = (tmp_path / "base" / "worker_0.npz").read_bytes()
    tried = refused = 0
    for k in range(200):
        name = f"z{k}"
        (tmp_path / name).mkdir()
        for file in ("worker_0.json", "checkpoint.json"):
            text = (tmp_path / "base" / file).read_text().replace('"checkpoint": "base"', f'"checkpoint": "{name}"')
            (tmp_path / name / file).write_text(text)
        corrupted = bytearray(data)
        for at in rng.integers(0, len(data), size=int(rng.integers(1, 8))):
            corrupted[at] = int(rng.integers(256))
        (tmp_path / name / "worker_0.npz").write_bytes(bytes(corrupted))
        _resign(tmp_path, name)
        tried += 1
        try:
            _restore(tmp_path, name)
        except store.CheckpointError:
            refused += 1
    print(f"\nfuzzed array files: {tried} tried, {refused} refused, {tried - refused} loaded (valid numbers)")
    assert refused > 0


def _sensor_part(root: Path) -> tuple[dict, dict]:
    from lotusim_sensors import checkpoint as sck

    rows = {
        "imu": sck.SensorRows(
            ["a", "b"], np.array([5, 6]), np.array([1, -1]), np.array([2**63 + 5, 7], dtype=np.uint64),
            {"accel_bias": np.ones((2, 3)), "gyro_bias": np.zeros((2, 3))},
        ),
        "gps": sck.SensorRows(["b"], np.array([9]), np.array([3]), np.array([4], dtype=np.uint64),
                              {"had_fix": np.array([True])}),
    }  # fmt: skip
    modem = [sck.ModemInFlight(50, 3, "a", "b", "", b"\x00\xffhi", 120.5, 0.08)]
    meta, arrays = sck.capture(40, 4, rows, modem)
    sha = sck.save(root, "cp", meta, arrays)
    store.commit(root, "cp", 40, {"worker_0": {"sha256": "-", "vessels": 2}}, {"sha256": sha, "t_ns": 40})
    return meta, arrays


def test_sensor_state_round_trips_and_malformed_sensor_parts_are_refused(tmp_path):
    from lotusim_sensors import checkpoint as sck

    _sensor_part(tmp_path)
    got: list = []
    sck.serve(str(tmp_path), RESTORE, "cp", {"imu", "gps"}, _never, got.append)
    [state] = got
    assert state.t_ns == 40 and state.modem_seq == 4
    assert state.kinds["imu"].counter[0] == 2**63 + 5  # uint64 noise counters kept bit for bit
    assert state.modem[0].data == b"\x00\xffhi" and state.modem[0].range_m == 120.5
    assert state.per_vessel()["b"]["gps"]["state"]["had_fix"]
    cases = {
        "unknown kind": lambda m, a: m["kinds"].__setitem__("sidescan", m["kinds"].pop("gps")),
        "name a path": lambda m, a: m["kinds"]["imu"].__setitem__(0, "../x"),
        "names twice": lambda m, a: m["kinds"]["imu"].__setitem__(1, "a"),
        "counter shape": lambda m, a: a.__setitem__("imu__counter", np.zeros(3, dtype=np.int64)),
        "bias missing": lambda m, a: a.pop("imu__state__gyro_bias"),
        "bias NaN": lambda m, a: a["imu__state__accel_bias"].__setitem__((0, 0), np.nan),
        "modem byte out of range": lambda m, a: a["modem_data"].__setitem__(0, 300),
        "modem bytes negative": lambda m, a: m["modem"][0].__setitem__("bytes", -1),
        "modem receiver a path": lambda m, a: m["modem"][0].__setitem__("receiver", "/etc"),
        "t_ns a string": lambda m, a: m.__setitem__("t_ns", "40"),
    }
    for case, corrupt in cases.items():
        meta, arrays = _sensor_part(tmp_path / case.replace(" ", "_"))
        meta, arrays = json.loads(json.dumps(meta)), {k: v.copy() for k, v in arrays.items()}
        corrupt(meta, arrays)
        with pytest.raises(store.CheckpointError):
            sck.build(case, meta, arrays, {"imu", "gps"})
