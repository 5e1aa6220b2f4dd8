"""Seeded noise streams (independent per vessel and sensor, reproducible) and the `sensors:` schema."""

from __future__ import annotations

import numpy as np
import pytest

from lotusim_sensors import noise
from lotusim_sensors.suite import merge_sensors, parse_suite


def test_streams_are_standard_normal_and_uncorrelated():
    keys = np.array([noise.stream_key(11, f"v{i}", "imu") for i in range(200)], dtype=np.uint64)
    samples = np.stack([noise.normal(keys, np.full(200, k), 3) for k in range(250)])  # steps x vessels x 3
    flat = samples.reshape(-1)
    assert abs(flat.mean()) < 4 / np.sqrt(flat.size)
    assert flat.std() == pytest.approx(1.0, abs=4 / np.sqrt(2 * flat.size))
    assert np.mean(np.abs(flat) > 1.96) == pytest.approx(0.05, abs=0.004)  # normal tail, not just moments
    corr = np.corrcoef(samples[:, :, 0].T)  # between vessels over time
    off = corr[~np.eye(200, dtype=bool)]
    assert np.max(np.abs(off)) < 5 / np.sqrt(250)
    lag1 = np.corrcoef(samples[:-1, 0, 0], samples[1:, 0, 0])[0, 1]
    assert abs(lag1) < 4 / np.sqrt(250)


def test_a_vessels_noise_does_not_depend_on_the_rest_of_the_fleet():
    alone = noise.normal(np.array([noise.stream_key(1, "auv_2", "dvl")]), [17], 4)
    fleet = [noise.stream_key(1, name, "dvl") for name in ("usv", "auv_1", "auv_2", "auv_3")]
    np.testing.assert_array_equal(noise.normal(np.array(fleet, dtype=np.uint64), np.full(4, 17), 4)[2], alone[0])
    assert noise.stream_key(1, "auv_2", "dvl") != noise.stream_key(2, "auv_2", "dvl")
    assert noise.stream_key(1, "auv_2", "dvl") != noise.stream_key(1, "auv_2", "imu")


def test_suite_defaults_overrides_and_disable():
    base = {"imu": {"rate_hz": 100}, "pressure": None, "gps": {"position_frd_m": [0.0, 0.0, -0.4]}}
    merged = merge_sensors(base, {"imu": {"gyro_noise_density": 0.0}, "gps": {"enabled": False}})
    suite = parse_suite(merged, "vessel auv_1 sensors")
    assert set(suite) == {"imu", "pressure"}
    assert suite["imu"]["rate_hz"] == 100.0 and suite["imu"]["gyro_noise_density"] == 0.0
    assert suite["imu"]["accel_noise_density"] == 0.004  # default kept
    assert suite["pressure"]["depth_noise_std_m"] == 0.01


@pytest.mark.parametrize(
    ("sensors", "message"),
    [
        ({"sidescan": {}}, "vehicles/x.yaml sensors.sidescan: unknown sensor"),
        ({"imu": {"rate": 5}}, "sensors.imu: unknown parameter 'rate'"),
        ({"imu": {"rate_hz": 0}}, "sensors.imu.rate_hz: expected a positive rate"),
        ({"gps": {"position_frd_m": [1, 2]}}, "sensors.gps.position_frd_m: expected [x, y, z]"),
        ({"dvl": {"max_range_m": "far"}}, "sensors.dvl.max_range_m: expected a number, got 'far'"),
        ({"ais": {"class": "C"}}, "sensors.ais.class: expected 'A' or 'B'"),
        ({"pressure": {"depth_noise_std_m": -1}}, "non-negative"),
    ],
)
def test_bad_sensor_config_names_file_key_and_reason(sensors, message):
    with pytest.raises(ValueError) as err:
        parse_suite(sensors, "vehicles/x.yaml sensors")
    assert message in str(err.value)


def test_every_catalogue_vehicle_has_a_valid_sensor_suite():
    """The shipped vehicles' `sensors:` blocks parse; underwater ones carry depth + DVL or IMU, surface ones GPS and
    AIS, aerial ones GPS and a magnetometer."""
    import yaml

    from lotusim_core.base.paths import config_dir

    files = sorted((config_dir() / "vehicles").glob("*.yaml"))
    assert files
    for path in files:
        data = yaml.safe_load(path.read_text())
        suite = parse_suite(data.get("sensors"), f"{path.name} sensors")
        assert "imu" in suite, path.name
        if data["domain"] == "underwater":
            assert "pressure" in suite and "dvl" in suite, path.name
        elif data["domain"] == "surface":
            assert "gps" in suite and "ais" in suite, path.name
        else:  # aerial: the x500's navsat, IMU and magnetometer
            assert "gps" in suite and "magnetometer" in suite, path.name
