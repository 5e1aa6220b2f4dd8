"""Namespaces, remapping and REP 105 frames over real DDS (docs/interfaces.md, "Names and namespaces").

A dynamics worker and a sensor publisher started with `--ros-args -r __ns:=/ns` (what a launch `namespace=` or
`PushRosNamespace` passes) serve their vessels under /ns/<vessel>/..., a `-r <vessel>/odom:=/my/odom` rule moves
one topic, and the fleet-wide names (/lotusim/..., /clock, /tf) stay where every node finds them. The frames
that the messages name form one tf tree map -> odom -> <vessel>/base_link -> <vessel>/<sensor>_link, with the
sensor mounts of the vehicle file."""

from __future__ import annotations

import math

import pytest
import yaml

rclpy = pytest.importorskip("rclpy")

from nav_msgs.msg import Odometry  # noqa: E402
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy  # noqa: E402
from sensor_msgs.msg import Imu, NavSatFix  # noqa: E402
from std_msgs.msg import Float64  # noqa: E402
from tf2_msgs.msg import TFMessage  # noqa: E402

from lotusim_core.base.paths import config_dir  # noqa: E402
from lotusim_sensors.sensor_publisher import SensorPublisher  # noqa: E402
from simnodes import Sim, create_item, spin_until  # noqa: E402

pytestmark = pytest.mark.ros  # starts DDS participants (nodes, node processes or the ros2 CLI)
# tf2_ros's static listener: transient local, depth 100 (one latched message per static broadcaster)
STATIC = QoSProfile(depth=100, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE)


def _listen(sim: Sim, msg_type, topic: str, qos=1000) -> list:
    received: list = []
    sim.client.create_subscription(msg_type, topic, received.append, qos)
    return received


def _await_publisher(sim: Sim, topic: str) -> None:
    """Step until the sensor publisher has created `topic` (at the first fleet state that shows the vessel with
    its model), and let discovery match it: a lockstep burst before that would be lost to the listener."""
    spin_until(sim.executor, lambda: sim.step(1) and sim.client.count_publishers(topic) == 1, 20.0, topic)
    sim.spin_for(0.3)


def _sensors(sim: Sim, args: list[str]) -> SensorPublisher:
    node = SensorPublisher(context=sim.context, cli_args=args)
    sim.executor.add_node(node)
    return node


def test_a_worker_in_a_namespace_serves_its_vessels_under_it(ros_context):
    """Odometry on /ns/auv/odom, thrust taken from /ns/auv/thrusters/propeller/cmd, sensors on /ns/auv/...;
    nothing at /auv/...; the MAS server (root namespace) still finds the worker through /lotusim/..."""
    sim = Sim(
        ros_context, mode="lockstep", step_s=0.02, odom_rate_hz=10.0, worker_args=["--ros-args", "-r", "__ns:=/ns"]
    )
    sensors = _sensors(sim, ["--ros-args", "-r", "__ns:=/ns"])
    try:
        assert sim.worker.get_namespace() == "/ns"
        odom = _listen(sim, Odometry, "/ns/auv/odom")
        imu = _listen(sim, Imu, "/ns/auv/imu/data")
        assert sim.command([create_item("auv", "remus100", (0.0, 0.0, -5.0))]).results[0].ok
        thrust = sim.client.create_publisher(Float64, "/ns/auv/thrusters/propeller/cmd", 10)
        spin_until(sim.executor, lambda: thrust.get_subscription_count() == 1, 10.0, "the namespaced command topic")
        assert sim.client.count_publishers("/auv/odom") == 0 and sim.client.count_subscribers("/auv/odom") == 0
        _await_publisher(sim, "/ns/auv/imu/data")
        thrust.publish(Float64(data=1525.0))
        sim.spin_for(0.3)
        sim.step(250)  # 5 s
        spin_until(sim.executor, lambda: len(odom) >= 45 and imu, 10.0, "namespaced odometry and IMU")
        first, last = odom[0].pose.pose.position, odom[-1].pose.pose.position
        assert last.x - first.x > 1.0, f"moved {last.x - first.x:.2f} m east under full thrust in 5 s"
        assert imu[-1].header.frame_id == "auv/imu_link"  # frames are not namespaced (ROS 2 does not resolve them)
        assert sim.client.count_publishers("/auv/imu/data") == 0
    finally:
        sim.executor.remove_node(sensors)
        sensors.destroy_node()
        sim.close()


def test_a_remapping_rule_moves_one_vessel_topic(ros_context):
    """`-r auv/odom:=/my/odom` (relative: it follows the namespace too) and `-r /ns/auv/thrusters/propeller/cmd:=
    /stack/thrust` (absolute); the vessel's other topics keep their names."""
    args = ["--ros-args", "-r", "__ns:=/ns", "-r", "auv/odom:=/my/odom"]
    args += ["-r", "/ns/auv/thrusters/propeller/cmd:=/stack/thrust"]
    sim = Sim(ros_context, mode="lockstep", step_s=0.02, odom_rate_hz=10.0, worker_args=args)
    try:
        moved = _listen(sim, Odometry, "/my/odom")
        assert sim.command([create_item("auv", "remus100", (0.0, 0.0, -5.0))]).results[0].ok
        thrust = sim.client.create_publisher(Float64, "/stack/thrust", 10)
        spin_until(sim.executor, lambda: thrust.get_subscription_count() == 1, 10.0, "the remapped command topic")
        assert sim.client.count_publishers("/ns/auv/odom") == 0
        assert sim.client.count_subscribers("/ns/auv/fins/top/cmd") == 1  # not remapped: still there
        thrust.publish(Float64(data=1525.0))
        sim.spin_for(0.3)
        sim.step(250)
        spin_until(sim.executor, lambda: len(moved) >= 45, 10.0, "odometry on /my/odom")
        assert moved[-1].pose.pose.position.x - moved[0].pose.pose.position.x > 1.0  # ~2 m; none without thrust
    finally:
        sim.close()


def _frd_mount(model: str, kind: str) -> tuple[float, float, float]:
    """A sensor's mount from the vehicle file, FRD -> FLU by hand (y and z change sign)."""
    spec = yaml.safe_load((config_dir() / "vehicles" / f"{model}.yaml").read_text())
    x, y, z = spec["sensors"][kind].get("position_frd_m", [0.0, 0.0, 0.0])
    return (x, -y, -z)


def test_frames_form_one_rep105_tree_with_the_sensor_mounts(ros_context):
    """A late /tf_static subscriber gets map -> odom (identity) and auv/base_link -> auv/<sensor>_link for each
    sensor of the REMUS 100 file (DVL and GPS mounts as written there); /tf gives odom -> auv/base_link; every
    frame_id the odometry and the sensor messages name resolves to `map` through that tree."""
    sim = Sim(ros_context, mode="lockstep", step_s=0.02, odom_rate_hz=10.0)
    sensors = _sensors(sim, [])
    try:
        tf = _listen(sim, TFMessage, "/tf")
        odom = _listen(sim, Odometry, "/auv/odom")
        imu, fix = _listen(sim, Imu, "/auv/imu/data"), _listen(sim, NavSatFix, "/auv/gps/fix")
        assert sim.command([create_item("auv", "remus100", (10.0, 20.0, 0.0))]).results[0].ok
        _await_publisher(sim, "/auv/gps/fix")
        sim.step(50)
        spin_until(sim.executor, lambda: tf and odom and imu and fix, 10.0, "tf, odometry and sensors")
        static = _listen(sim, TFMessage, "/tf_static", STATIC)  # late: latched messages only
        wanted = {"odom", "auv/imu_link", "auv/dvl_link", "auv/gps_link"}
        spin_until(
            sim.executor,
            lambda: wanted <= {t.child_frame_id for m in static for t in m.transforms},
            10.0,
            "latched static frames",
        )
        parent = {t.child_frame_id: t for m in static + tf for t in m.transforms}
        identity = parent["odom"].transform
        assert parent["odom"].header.frame_id == "map"
        assert (identity.translation.x, identity.translation.y, identity.translation.z) == (0.0, 0.0, 0.0)
        assert identity.rotation.w == 1.0
        for kind in ("dvl", "gps"):
            mount = parent[f"auv/{kind}_link"]
            assert mount.header.frame_id == "auv/base_link"
            xyz = (mount.transform.translation.x, mount.transform.translation.y, mount.transform.translation.z)
            assert xyz == pytest.approx(_frd_mount("remus100", kind))
        assert parent["auv/base_link"].header.frame_id == "odom"
        assert parent["auv/base_link"].transform.translation.x == pytest.approx(10.0, abs=0.5)

        def root(frame: str) -> str:
            for _ in range(10):
                if frame not in parent:
                    return frame
                frame = parent[frame].header.frame_id
            raise AssertionError(f"loop in the tf tree at {frame}")

        named = {odom[-1].header.frame_id, odom[-1].child_frame_id, imu[-1].header.frame_id, fix[-1].header.frame_id}
        assert named == {"odom", "auv/base_link", "auv/imu_link", "auv/gps_link"}
        assert {frame: root(frame) for frame in named} == dict.fromkeys(named, "map")
        assert math.isclose(odom[-1].pose.pose.position.x, 10.0, abs_tol=0.5)  # odom = map: no drift
    finally:
        sim.executor.remove_node(sensors)
        sensors.destroy_node()
        sim.close()
