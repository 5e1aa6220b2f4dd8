"""A controller's endpoints on its host node (controller_base.Endpoints), on a real rclpy node: everything it made
is destroyed by close(), and nothing the host made itself, so a host can drop one controller and keep the rest."""

from __future__ import annotations

import pytest

rclpy = pytest.importorskip("rclpy")

from std_msgs.msg import Float64  # noqa: E402

from lotusim_autonomy.controller_base import Endpoints, ParamReader  # noqa: E402
from lotusim_interfaces.srv import SetWaypoints  # noqa: E402

pytestmark = pytest.mark.ros  # starts DDS participants (nodes, node processes or the ros2 CLI)


def _names(node) -> tuple[set[str], set[str], set[str]]:
    ns = node.get_namespace()
    pubs = {t for t, _ in node.get_publisher_names_and_types_by_node(node.get_name(), ns)}
    subs = {t for t, _ in node.get_subscriber_names_and_types_by_node(node.get_name(), ns)}
    srvs = {s for s, _ in node.get_service_names_and_types_by_node(node.get_name(), ns)}
    return pubs, subs, srvs


def test_close_destroys_what_the_controller_made_and_only_that(ros_context):
    node = rclpy.create_node("host", context=ros_context)
    try:
        host_pub = node.create_publisher(Float64, "/host/own", 10)
        made = Endpoints(node)
        made.publisher(Float64, "/a/thrusters/t0/cmd")
        made.subscription(Float64, "/a/setpoint/depth", lambda _msg: None)
        made.service(SetWaypoints, "/a/waypoints/set", lambda _req, res: res)
        pubs, subs, srvs = _names(node)
        assert {"/a/thrusters/t0/cmd", "/host/own"} <= pubs
        assert "/a/setpoint/depth" in subs
        assert "/a/waypoints/set" in srvs
        made.close()
        pubs, subs, srvs = _names(node)
        assert "/a/thrusters/t0/cmd" not in pubs and "/host/own" in pubs
        assert "/a/setpoint/depth" not in subs
        assert "/a/waypoints/set" not in srvs
        assert host_pub.handle is not None
        made.close()  # a second close does nothing
    finally:
        node.destroy_node()


def test_vehicle_names_the_model_and_the_reason_a_controller_cannot_drive_it():
    read = ParamReader({"model": "lrauv"}, "waypoint_follower usv_1")
    with pytest.raises(ValueError, match=r"^waypoint_follower usv_1: model: needs a surface vessel$"):
        read.vehicle(lambda spec: None if spec.domain == "surface" else "needs a surface vessel")
    assert read.vehicle(lambda spec: None).name == "lrauv"
