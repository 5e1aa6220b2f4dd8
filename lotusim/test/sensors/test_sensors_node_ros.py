"""sensor_publisher over real DDS: a test node publishes FleetState in sim time and reads the sensor topics
(rates in sim time, frames, values), a modem message is delivered range / 1500 s later, and a vessel leaving
the fleet stops its topics."""

from __future__ import annotations

import time

import numpy as np
import pytest
import yaml

rclpy = pytest.importorskip("rclpy")

from geometry_msgs.msg import PoseWithCovarianceStamped, TwistWithCovarianceStamped  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from rclpy.qos import QoSProfile, ReliabilityPolicy  # noqa: E402
from sensor_msgs.msg import FluidPressure, Imu, NavSatFix, NavSatStatus  # noqa: E402

from lotusim_core.base.geodesy import GeodeticOrigin, geodetic_to_enu  # noqa: E402
from lotusim_core.ros.qos import LATCHED  # noqa: E402
from lotusim_core.ros.ros_arrays import to_float64_array  # noqa: E402
from lotusim_interfaces.msg import AIS, AcousticMessage, AcousticRange, FleetRoster, FleetState, VesselInfo  # noqa: E402
from lotusim_sensors.sensor_publisher import SensorPublisher  # noqa: E402

pytestmark = pytest.mark.ros  # starts DDS participants (nodes, node processes or the ros2 CLI)
STEP_NS = 10_000_000  # 100 Hz physics
G = 9.80665
VESSELS = {
    "auv": {
        "sensors": {
            "imu": {"rate_hz": 50},
            "pressure": {"rate_hz": 10},
            "dvl": {"max_rate_hz": 5},
            "gps": {"rate_hz": 5},
            "modem": {},
            "usbl": {"rate_hz": 1, "range_noise_std_m": 0.0, "angle_noise_std_rad": 0.0},
        }
    },
    "usv": {
        "sensors": {
            "gps": {"rate_hz": 5, "horizontal_noise_std_m": 0.0, "vertical_noise_std_m": 0.0},
            "ais": {"class": "A", "mmsi": 227000001},
            "modem": {},
        }
    },
    "glider": {"sensors": {"gps": {"rate_hz": 5, "position_frd_m": [0.0, 0.0, -0.3]}}},  # antenna 0.3 m up
}


def _state(t_ns: int, names: list[str]) -> FleetState:
    glider_z = 0.0 if t_ns < 500_000_000 else -5.0  # at the surface, then dives at 0.5 s
    rows = {
        "auv": ([0.0, 0.0, -10.0], [0.0, 0.0, 0.0]),
        "usv": ([300.0, 400.0, 0.0], [2.0, 0.0, 0.0]),
        "glider": ([-100.0, 0.0, glider_z], [0.0, 0.0, 0.0]),
    }
    msg = FleetState(worker="w0", names=names)
    msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(t_ns, 1_000_000_000)
    msg.header.frame_id = "map"
    north = [0.0, 0.0, np.sin(np.pi / 4), np.cos(np.pi / 4)]  # heading north (yaw +90 deg ENU)
    msg.position = to_float64_array(np.array([rows[n][0] for n in names]))
    msg.orientation = to_float64_array(np.array([north for _ in names]))
    msg.twist = to_float64_array(np.array([rows[n][1] + [0.0, 0.0, 0.0] for n in names]))
    msg.accel = to_float64_array(np.zeros((len(names), 6)))
    return msg


@pytest.fixture
def rig(ros_context):
    params = [
        Parameter("vessels_yaml", value=yaml.safe_dump(VESSELS)),
        Parameter("seed", value=42),
        Parameter("origin_latitude_deg", value=36.8),
        Parameter("origin_longitude_deg", value=-121.9),
        Parameter("acoustic_beacons_yaml", value="{dock: [0.0, 0.0, -50.0]}"),
    ]
    sensors = SensorPublisher(context=ros_context, parameter_overrides=params)
    test = rclpy.create_node("sensor_test", context=ros_context)
    executor = SingleThreadedExecutor(context=ros_context)
    executor.add_node(sensors)
    executor.add_node(test)
    # the test node stands for worker w0: it latches the roster of its model-less vessels (suites from vessels_yaml)
    roster = FleetRoster(worker="w0", vessels=[VesselInfo(name=name, worker="w0") for name in VESSELS])
    test.create_publisher(FleetRoster, "/lotusim/fleet_roster", LATCHED).publish(roster)
    _spin_until(executor, lambda: "w0" in sensors._sources.rosters)
    yield sensors, test, executor
    executor.shutdown()
    test.destroy_node()
    sensors.destroy_node()


def _spin_until(executor, predicate, timeout=10.0):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        executor.spin_once(timeout_sec=0.01)


def test_sensor_topics_rates_frames_values_and_vessel_removal(rig):
    sensors, test, executor = rig
    qos = QoSProfile(depth=500, reliability=ReliabilityPolicy.RELIABLE)
    got: dict[str, list] = {}

    def collect(topic, kind):
        got[topic] = []
        test.create_subscription(kind, topic, got[topic].append, qos)

    for topic, kind in [
        ("/auv/imu/data", Imu),
        ("/auv/pressure", FluidPressure),
        ("/auv/depth", PoseWithCovarianceStamped),
        ("/auv/dvl", TwistWithCovarianceStamped),
        ("/auv/gps/fix", NavSatFix),
        ("/usv/gps/fix", NavSatFix),
        ("/usv/ais", AIS),
        ("/lotusim/ais", AIS),
        ("/usv/modem/rx", AcousticMessage),
        ("/auv/acoustic/range", AcousticRange),
        ("/glider/gps/fix", NavSatFix),
    ]:
        collect(topic, kind)
    state_pub = test.create_publisher(FleetState, "/lotusim/fleet_state", 10)
    tx_pub = test.create_publisher(AcousticMessage, "/auv/modem/tx", 10)
    # the latched roster alone made the vessels' topics, before any fleet state (a sensor node started after the
    # spawn, the sim time held at 0, hears no fleet state until it runs), but none of them is a target yet
    _spin_until(executor, lambda: state_pub.get_subscription_count() > 0 and tx_pub.get_subscription_count() > 0)
    _spin_until(executor, lambda: len(test.get_publishers_info_by_topic("/glider/gps/fix")) == 1)
    assert sensors._slot_of.keys() == set(VESSELS) and not sensors._fleet.alive.any()

    def step(k, names):
        t_ns = k * STEP_NS
        state_pub.publish(_state(t_ns, names))
        _spin_until(executor, lambda: sensors._t_ns == t_ns and sensors._slot_of.keys() == set(names))

    for k in range(0, 101):  # sim time 0 .. 1.00 s, both vessels
        step(k, ["auv", "usv", "glider"])
        if k == 50:  # a malformed state (positions missing) is reported and ignored, the node carries on
            bad = _state(k * STEP_NS + 5_000_000, ["auv", "usv"])
            bad.position = to_float64_array(np.zeros(3))
            state_pub.publish(bad)
            _spin_until(executor, lambda: "shape/w0" in sensors._warned)
        if k == 20:  # t = 0.2 s: the AUV sends 3 bytes to the USV, 500.1 m away
            tx_pub.publish(AcousticMessage(destination="usv", data=b"hi!"))
            _spin_until(executor, lambda: len(sensors._modem_queue) == 1)
    for k in range(101, 201):  # 1.01 .. 2.00 s: the USV has left the fleet
        step(k, ["auv", "glider"])
    _spin_until(executor, lambda: len(got["/auv/imu/data"]) >= 101)
    for _ in range(20):
        executor.spin_once(timeout_sec=0.01)

    def stamps(topic):
        return np.array([m.header.stamp.sec * 10**9 + m.header.stamp.nanosec for m in got[topic]])

    # rates in sim time: 50 Hz IMU over 0..2 s = 101 samples exactly 20 ms apart; 10 Hz pressure; 5 Hz DVL
    assert len(got["/auv/imu/data"]) == 101
    assert np.all(np.diff(stamps("/auv/imu/data")) == 20_000_000)
    assert len(got["/auv/pressure"]) == 21 and np.all(np.diff(stamps("/auv/pressure")) == 100_000_000)
    assert len(got["/auv/depth"]) == 21
    assert len(got["/auv/dvl"]) >= 9  # water track (1000 m default bottom) at <= 5 Hz, range-limited period
    assert np.all(np.diff(stamps("/auv/dvl")) >= 200_000_000)
    # frames and values
    imu = got["/auv/imu/data"]
    assert imu[0].header.frame_id == "auv/imu_link"
    accel_z = np.array([m.linear_acceleration.z for m in imu])
    assert abs(accel_z.mean() - G) < 0.25 and np.all(np.abs(accel_z - G) < 1.5)  # +g up, noise + turn-on bias
    assert imu[0].linear_acceleration_covariance[0] == pytest.approx(0.004**2 * 50)
    pressures = np.array([m.fluid_pressure for m in got["/auv/pressure"]])
    rho = sensors._env.water_density_kgm3  # the environment default (no config published in this test)
    assert pressures.mean() == pytest.approx(101325 + rho * G * 10, abs=4 * rho * G * 0.01 / np.sqrt(21) + 1e-9)
    assert got["/auv/pressure"][0].variance == pytest.approx((rho * G * 0.01) ** 2)
    depth = np.array([m.pose.pose.position.z for m in got["/auv/depth"]])
    assert depth.mean() == pytest.approx(-10.0, abs=0.02)
    dvl_v = np.array([[m.twist.twist.linear.x, m.twist.twist.linear.y] for m in got["/auv/dvl"]])
    assert np.all(np.abs(dvl_v) < 0.02)  # at rest in still water
    # water track, 4 beams at 30 deg, sigma 0.0035 per beam: var(v_x) = sigma^2 / (2 sin^2 30 deg); angular -1
    cov = np.array(got["/auv/dvl"][0].twist.covariance).reshape(6, 6)
    assert cov[0, 0] == pytest.approx(0.0035**2 / (2 * 0.25)) and cov[5, 5] == -1.0
    # GPS: the submerged AUV never publishes a fix; the USV at 5 Hz while present, at its true position
    assert got["/auv/gps/fix"] == []
    usv_fix = got["/usv/gps/fix"]
    assert len(usv_fix) == 6 and np.all(stamps("/usv/gps/fix") <= 1_000_000_000)
    assert all(m.status.status == NavSatStatus.STATUS_FIX for m in usv_fix)
    enu = geodetic_to_enu(
        np.array([[usv_fix[0].latitude, usv_fix[0].longitude, usv_fix[0].altitude]]), GeodeticOrigin(36.8, -121.9)
    )
    np.testing.assert_allclose(enu[0], [300.0, 400.0, 0.0], atol=0.01)
    # the glider dives at 0.5 s: fixes at 0, 0.2, 0.4 s, one NO_FIX at 0.6 s, then silence
    glider = got["/glider/gps/fix"]
    assert [m.status.status for m in glider] == [NavSatStatus.STATUS_FIX] * 3 + [NavSatStatus.STATUS_NO_FIX]
    assert stamps("/glider/gps/fix")[-1] == 600_000_000 and np.isnan(glider[-1].latitude)
    assert glider[-1].position_covariance_type == NavSatFix.COVARIANCE_TYPE_UNKNOWN
    assert glider[0].position_covariance_type == NavSatFix.COVARIANCE_TYPE_DIAGONAL_KNOWN
    # AIS: class A at 3.9 kn reports every 10 s -> one report at t = 0, on both topics
    assert len(got["/usv/ais"]) == 1 and len(got["/lotusim/ais"]) == 1
    report = got["/usv/ais"][0]
    assert report.mmsi == 227000001 and report.name == "usv"
    assert report.sog_mps == pytest.approx(2.0) and report.cog_deg == pytest.approx(0.0, abs=1e-9)
    assert report.heading_deg == pytest.approx(0.0, abs=1e-9)
    # modem: sent at 0.2 s over 500.1 m, received at 0.2 + 500.1 / 1500 s
    (rx,) = got["/usv/modem/rx"]
    distance = np.sqrt(300**2 + 400**2 + 10**2)
    assert bytes(rx.data) == b"hi!" and rx.source == "auv" and rx.range_m == pytest.approx(distance)
    assert rx.travel_time_s == pytest.approx(distance / 1500.0)
    assert rx.header.stamp.sec * 10**9 + rx.header.stamp.nanosec == 200_000_000 + round(distance / 1500.0 * 1e9)
    # USBL at 1 Hz: the beacon 40 m straight below at 0, 1, 2 s; the USV (500.1 m away) at 0 and 1 s only
    ranges = got["/auv/acoustic/range"]
    dock = [m for m in ranges if m.target == "dock"]
    usv = [m for m in ranges if m.target == "usv"]
    assert len(dock) == 3 and len(usv) == 2
    assert len(ranges) == 5 + 3  # + the glider (100 m away) at 0, 1, 2 s
    assert dock[0].range_m == pytest.approx(40.0) and dock[0].elevation_rad == pytest.approx(-np.pi / 2)
    assert usv[0].range_m == pytest.approx(distance) and usv[0].travel_time_s == pytest.approx(distance / 1500.0)
    # heading north, the USV (300 m east, 400 m north) is 36.87 deg to the right: bearing -atan2(300, 400)
    assert usv[0].bearing_rad == pytest.approx(-np.arctan2(300.0, 400.0))
    assert usv[0].header.frame_id == "auv/usbl_link"
    # the USV left at 1.01 s: its publishers are gone
    assert test.get_publishers_info_by_topic("/usv/gps/fix") == []
    assert len(test.get_publishers_info_by_topic("/auv/imu/data")) == 1
