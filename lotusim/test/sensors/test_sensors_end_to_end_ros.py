"""sensor_publisher with the real dynamics worker and MAS server over DDS (lockstep): a vessel whose name is not
a model name gets its catalogue suite through its worker's latched roster (/lotusim/fleet_roster), also when the
sensors start after the workers or the vessel is created again as another model, and the sensors read the physics."""

from __future__ import annotations

import numpy as np
import pytest

rclpy = pytest.importorskip("rclpy")

from geometry_msgs.msg import TwistWithCovarianceStamped  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from sensor_msgs.msg import FluidPressure, Imu, NavSatFix  # noqa: E402

from lotusim_core.base.geodesy import GeodeticOrigin, geodetic_to_enu  # noqa: E402
from lotusim_interfaces.msg import AIS  # noqa: E402
from lotusim_sensors.sensor_publisher import SensorPublisher  # noqa: E402
from simnodes import Sim, create_item, delete_item, spin_until  # noqa: E402

pytestmark = pytest.mark.ros  # starts DDS participants (nodes, node processes or the ros2 CLI)
G = 9.80665


@pytest.fixture
def sim(ros_context):
    s = Sim(ros_context, mode="lockstep", step_s=0.02)
    params = [Parameter("seed", value=3), Parameter("origin_latitude_deg", value=48.4)]
    sensors = SensorPublisher(context=ros_context, parameter_overrides=params)
    s.executor.add_node(sensors)
    yield s, sensors
    s.executor.remove_node(sensors)
    sensors.destroy_node()
    s.close()


def test_catalogue_suites_follow_the_physics(sim):
    sim, sensors = sim
    got: dict[str, list] = {}
    topics = {
        "/tethys/imu/data": Imu,
        "/tethys/pressure": FluidPressure,
        "/tethys/dvl": TwistWithCovarianceStamped,
        "/boat/gps/fix": NavSatFix,
        "/boat/ais": AIS,
    }
    for topic, kind in topics.items():
        got[topic] = []
        sim.client.create_subscription(kind, topic, got[topic].append, 200)
    result = sim.command(
        [create_item("tethys", "lrauv", (0.0, 0.0, -10.0)), create_item("boat", "wamv", (50.0, 0.0, 0.0))]
    )
    assert all(r.ok for r in result.results), [r.reason for r in result.results]
    for _ in range(50):  # 1 s of sim time, one step at a time
        sim.step(1)
        sim.spin_for(0.01)
    spin_until(sim.executor, lambda: len(got["/tethys/imu/data"]) >= 40, 10.0, "tethys IMU messages")
    sim.spin_for(0.2)

    # "tethys" is not a model name: its LRAUV suite (with DVL, 1 Hz Pathfinder) came from the worker's roster
    assert got["/tethys/dvl"], "no DVL on the LRAUV"
    imu = got["/tethys/imu/data"]
    stamps = np.array([m.header.stamp.sec * 10**9 + m.header.stamp.nanosec for m in imu])
    assert np.all(np.diff(stamps) == 20_000_000)  # 50 Hz in sim time on a 50 Hz physics step
    accel = np.array([[m.linear_acceleration.x, m.linear_acceleration.y, m.linear_acceleration.z] for m in imu])
    assert np.linalg.norm(accel.mean(axis=0)) == pytest.approx(G, abs=0.5)  # neutrally buoyant: about +g up
    assert accel.mean(axis=0)[2] > 9.0
    rho = sensors._env.water_density_kgm3
    depth = (np.mean([m.fluid_pressure for m in got["/tethys/pressure"]]) - 101325.0) / (rho * G)
    assert depth == pytest.approx(10.0, abs=0.2)
    fixes = got["/boat/gps/fix"]
    assert 4 <= len(fixes) <= 6  # 5 Hz over 1 s
    enu = geodetic_to_enu(np.array([[f.latitude, f.longitude, f.altitude] for f in fixes]), GeodeticOrigin(48.4, 0.0))
    assert np.abs(enu[:, 0].mean() - 50.0) < 2.0 and np.abs(enu[:, 1].mean()) < 2.0
    (report,) = got["/boat/ais"]  # class B, slow: one report every 180 s
    assert report.name == "boat" and report.ais_class == AIS.CLASS_B


def test_creation_overrides_change_the_sensor_suite(sim):
    """Sensor overrides given with the create item (FleetCommand overrides_yaml) reach the sensor_publisher through
    the worker's roster: a 25 Hz IMU instead of the catalogue's 50 Hz and no DVL on this LRAUV; another LRAUV
    created without overrides keeps the catalogue suite; the node's own vessels_yaml is not needed."""
    sim, _sensors = sim
    got = {t: [] for t in ("/custom/imu/data", "/custom/dvl", "/plain/imu/data", "/plain/dvl")}
    for topic, values in got.items():
        kind = Imu if topic.endswith("imu/data") else TwistWithCovarianceStamped
        sim.client.create_subscription(kind, topic, values.append, 200)
    overrides = "{sensors: {imu: {rate_hz: 25}, dvl: {enabled: false}}}"
    result = sim.command(
        [create_item("custom", "lrauv", (0.0, 0.0, -10.0), overrides), create_item("plain", "lrauv", (9.0, 0, -10.0))]
    )
    assert all(r.ok for r in result.results), [r.reason for r in result.results]
    for _ in range(150):  # 3 s of sim time: three 1 Hz DVL samples on the plain LRAUV
        sim.step(1)
        sim.spin_for(0.01)
    spin_until(sim.executor, lambda: len(got["/custom/imu/data"]) >= 60, 10.0, "IMU messages of the custom LRAUV")
    sim.spin_for(0.2)
    stamps = np.array([m.header.stamp.sec * 10**9 + m.header.stamp.nanosec for m in got["/custom/imu/data"]])
    assert np.all(np.diff(stamps[1:]) == 40_000_000)  # 25 Hz (the first sample comes with the roster)
    plain = np.array([m.header.stamp.sec * 10**9 + m.header.stamp.nanosec for m in got["/plain/imu/data"]])
    assert np.all(np.diff(plain) == 20_000_000)  # the catalogue's 50 Hz
    assert not got["/custom/dvl"] and got["/plain/dvl"]
    listed = sim.listing()  # the MAS server lists them too
    assert {name: v.overrides_yaml for name, v in listed.items()} == {"custom": overrides, "plain": ""}


def _stepped_until(sim, predicate, timeout_s: float, what: str) -> None:
    """Step the simulation 5 steps at a time until `predicate()` holds."""

    def stepped() -> bool:
        sim.step(5)
        sim.spin_for(0.02)
        return predicate()

    spin_until(sim.executor, stepped, timeout_s, what)


def test_a_sensor_node_started_after_the_workers_gets_every_vessels_suite_from_the_latched_rosters(ros_context):
    """Two workers create their vessels (names that are no model's) before the sensor_publisher starts: it joins
    late, takes each worker's latched roster (/lotusim/fleet_roster) and gives each LRAUV its catalogue DVL."""
    sim = Sim(ros_context, mode="lockstep", step_s=0.02, workers=2)
    sensors = None
    try:
        items = [create_item("alpha", "lrauv", (0.0, 0.0, -10.0)), create_item("beta", "lrauv", (20.0, 0.0, -10.0))]
        items[1].vessel.worker = "worker_1"
        items[0].vessel.worker = "worker_0"
        result = sim.command(items)
        assert all(r.ok for r in result.results), [r.reason for r in result.results]
        assert [list(w.vessels) for w in sim.workers] == [["alpha"], ["beta"]]
        sim.step(5)
        sensors = SensorPublisher(context=ros_context, parameter_overrides=[Parameter("seed", value=3)])
        sim.executor.add_node(sensors)
        dvl: dict[str, list] = {"alpha": [], "beta": []}
        for name, got in dvl.items():
            sim.client.create_subscription(TwistWithCovarianceStamped, f"/{name}/dvl", got.append, 200)
        _stepped_until(sim, lambda: all(dvl.values()), 20.0, "the DVL of both LRAUVs")
        assert set(sensors._sources.rosters) == {"worker_0", "worker_1"}
        assert {n: sensors._sources.used[n][1][0] for n in dvl} == {"alpha": "lrauv", "beta": "lrauv"}
    finally:
        if sensors is not None:
            sim.executor.remove_node(sensors)
            sensors.destroy_node()
        sim.close()


def test_a_vessel_deleted_and_created_again_with_another_model_gets_the_new_models_suite(sim):
    """An LRAUV `x` is deleted and a WAM-V `x` created at once (no fleet state in between: the sensors see `x`
    all along): the worker's new roster makes the sensor_publisher swap the LRAUV's suite (DVL) for the WAM-V's
    (AIS)."""
    sim, sensors = sim
    dvl: list = []
    ais: list = []
    sim.client.create_subscription(TwistWithCovarianceStamped, "/x/dvl", dvl.append, 200)
    sim.client.create_subscription(AIS, "/x/ais", ais.append, 200)
    assert sim.command([create_item("x", "lrauv", (0.0, 0.0, -10.0))]).results[0].ok
    _stepped_until(sim, lambda: bool(dvl), 20.0, "the DVL of the LRAUV")
    assert not ais
    result = sim.command([delete_item("x"), create_item("x", "wamv", (0.0, 0.0, 0.0))])
    assert all(r.ok for r in result.results), [r.reason for r in result.results]
    _stepped_until(sim, lambda: bool(ais), 20.0, "the AIS of the WAM-V")
    assert ais[0].name == "x" and ais[0].ais_class == AIS.CLASS_B
    slot = sensors._slot_of["x"]
    assert slot not in sensors._io["dvl"] and slot in sensors._io["ais"]
