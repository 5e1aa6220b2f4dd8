"""A sensor suite is checked by the one validator (lotusim_core.base.validation): a refusal is a SuiteError, a
ConfigError whose key is the sensor's path under the caller's `where`; numbers follow the validator's rule."""

from __future__ import annotations

import pytest

from lotusim_core.base.validation import ConfigError
from lotusim_sensors.suite import SuiteError, parse_suite

CASES = [
    ({"imu": {"rate_hz": 0}}, "vessel a.imu.rate_hz", "expected a positive rate in Hz"),
    ({"imu": {"rate_hz": True}}, "vessel a.imu.rate_hz", "expected a number, got True"),
    ({"imu": {"rate_hz": "10"}}, "vessel a.imu.rate_hz", "expected a number, got '10'"),
    ({"imu": {"rate_hz": float("inf")}}, "vessel a.imu.rate_hz", "expected a finite number"),
    ({"sidescan": {}}, "vessel a.sidescan", "unknown sensor"),
    ({"imu": {"rate": 5}}, "vessel a.imu", "unknown parameter 'rate'"),
    ({"ais": {"mmsi": "x"}}, "vessel a.ais.mmsi", "expected a 9-digit integer"),
]


@pytest.mark.parametrize(("sensors", "key", "reason"), CASES, ids=[c[1] + ":" + c[2] for c in CASES])
def test_refusals_are_config_errors_keyed_under_where(sensors, key: str, reason: str) -> None:
    with pytest.raises(SuiteError) as info:
        parse_suite(sensors, "vessel a")
    assert isinstance(info.value, ConfigError) and isinstance(info.value, ValueError)
    assert info.value.where == "" and info.value.key == key and reason in info.value.reason
    assert str(info.value) == f"{key}: {info.value.reason}"


def test_numbers_of_any_numeric_type_are_taken() -> None:
    import numpy as np

    suite = parse_suite({"imu": {"rate_hz": np.float32(25.0)}, "pressure": {"rate_hz": 5}}, "vessel a")
    assert suite["imu"]["rate_hz"] == 25.0 and suite["pressure"]["rate_hz"] == 5.0
