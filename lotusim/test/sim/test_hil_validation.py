"""A HIL remapping file is checked by the one validator (lotusim_core.base.validation): every refusal is a
ConfigError(file, key, reason) of the kinds the scenario files give."""

from __future__ import annotations

import pytest

from lotusim_core.base.validation import ConfigError
from lotusim_core.sim import hil

CASES = [
    ("", "<top level>", "expected a mapping"),
    ("- vessel: remus_1\n", "<top level>", "expected a mapping"),
    ("vessel: remus_1\ntopics: {imu/data: {name: /s/imu, rate_hz: fast}}\n", "topics.imu/data.rate_hz",
     "expected a number, got 'fast'"),
    ("vessel: remus_1\ntopics: {imu/data: {name: /s/imu, rate_hz: .nan}}\n", "topics.imu/data.rate_hz",
     "expected a finite number"),
    ("vessel: remus_1\ntopics: {imu/data: {name: /s/imu, rate_hz: 0}}\n", "topics.imu/data.rate_hz",
     "expected a number > 0"),
    ("vessel: remus_1\ntopics: {imu/data: [/s/imu]}\n", "topics.imu/data", "expected a mapping"),
    ("vessels: [a, b]\n", "vessels", "expected a mapping"),
    ("nodes: {dynamics_0: {}}\n", "nodes.dynamics_0", "expected a mapping of from -> to names"),
    ("vessel: remus_1\ntopics: {}\n", "topics", "expected a mapping of topic -> name"),
]  # fmt: skip


@pytest.mark.parametrize(("body", "key", "reason"), CASES, ids=[f"{c[1]}:{c[2]}" for c in CASES])
def test_refusals_are_config_errors_naming_file_key_and_reason(tmp_path, body: str, key: str, reason: str) -> None:
    path = tmp_path / "remap.yaml"
    path.write_text(body)
    with pytest.raises(ConfigError) as info:
        hil.load_remapping(path)
    assert isinstance(info.value, hil.HilError)
    assert (info.value.where, info.value.key) == (str(path), key)
    assert reason in info.value.reason
    assert str(info.value) == f"{path}: {key}: {info.value.reason}"


def test_a_well_formed_file_reads_names_and_rates(tmp_path) -> None:
    path = tmp_path / "remap.yaml"
    path.write_text("vessel: remus_1\nlockstep: true\ntopics: {imu/data: {name: /s/imu, rate_hz: 25}, depth: /s/d}\n")
    remap = hil.load_remapping(path)
    assert remap.lockstep is True and remap.vessel == "remus_1"
    assert remap.topics == (hil.TopicMap("imu/data", "/s/imu", 25.0), hil.TopicMap("depth", "/s/d", None))
