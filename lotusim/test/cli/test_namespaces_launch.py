"""Namespaces with the real launch system: `ros2 launch` of a file that pushes a dynamics worker into a namespace
with PushRosNamespace, starts another with `namespace=` and a remapping, and the MAS server in the root namespace.
Skipped where `ros2 launch` is not installed (../shared/ros2cli/install.sh installs it; a sourced ROS 2 has it)."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import textwrap
import time

import pytest

rclpy = pytest.importorskip("rclpy")

# DDS participants; serial: a large fleet, a long run or the whole machine (run one at a time, Makefile)
pytestmark = [pytest.mark.ros, pytest.mark.serial]
if shutil.which("ros2") is None or shutil.which("dynamics") is None:
    pytest.skip(
        "ros2 launch (../shared/ros2cli/install.sh) or the lotusim console scripts missing", allow_module_level=True
    )

from nav_msgs.msg import Odometry  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402

from lotusim_core.ros import spin  # noqa: E402
from lotusim_core.ros.fleet_client import FleetClient  # noqa: E402
from lotusim_interfaces.msg import SimStats  # noqa: E402
from simnodes import create_item  # noqa: E402

LAUNCH = textwrap.dedent(
    """
    from launch import LaunchDescription
    from launch.actions import GroupAction
    from launch_ros.actions import Node, PushRosNamespace


    def generate_launch_description():
        return LaunchDescription([
            Node(executable="mas_server", name="mas_server", output="screen"),
            GroupAction([
                PushRosNamespace("fleet"),
                Node(executable="dynamics", name="dynamics_0", output="screen",
                     parameters=[{"worker": "worker_0", "odom_rate_hz": 10.0}]),
            ]),
            Node(executable="dynamics", name="dynamics_1", namespace="other", output="screen",
                 parameters=[{"worker": "worker_1", "clock_master": False, "odom_rate_hz": 10.0}],
                 remappings=[("b/odom", "/my/odom")]),
        ])
    """
)


def test_push_ros_namespace_and_launch_remappings_move_vessel_topics(tmp_path, own_domain_env):
    path = tmp_path / "ns.launch.py"
    path.write_text(LAUNCH)
    log = tmp_path / "launch.log"  # a file, not a pipe: an unread pipe fills and stalls launch and its nodes
    proc = subprocess.Popen(
        ["ros2", "launch", str(path)],
        env=own_domain_env,
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
        text=True,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=int(own_domain_env["ROS_DOMAIN_ID"]))
    node = rclpy.create_node("user", context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    workers: set[str] = set()
    node.create_subscription(SimStats, "/lotusim/stats", lambda m: workers.add(m.worker), 10)
    got: dict[str, list[Odometry]] = {}
    for topic in ("/fleet/a/odom", "/my/odom", "/a/odom", "/other/b/odom"):
        got[topic] = []
        node.create_subscription(Odometry, topic, got[topic].append, 100)

    def launch_alive() -> None:
        assert proc.poll() is None, f"ros2 launch exited:\n{log.read_text()[-3000:]}"

    def spin_until(predicate, timeout_s: float, what: str) -> None:
        def failure() -> str:
            return f"timed out waiting for {what}; launch output:\n{log.read_text()[-3000:]}"

        spin.spin_until(executor, predicate, timeout_s, failure, check=launch_alive)

    try:
        fleet = FleetClient(node, executor, check=launch_alive)
        spin_until(fleet.server_is_ready, 120.0, "the MAS server")
        # both workers found (their /lotusim/<worker>/... services are absolute: namespaces do not hide them)
        spin_until(lambda: {"worker_0", "worker_1"} <= workers, 120.0, "both workers' stats")
        fleet.spin_for(2.0)  # the MAS server reads the same stats
        a, b = create_item("a", "remus100", (0.0, 0.0, -5.0)), create_item("b", "remus100", (10.0, 0.0, -5.0))
        a.vessel.worker, b.vessel.worker = "worker_0", "worker_1"
        # the MAS server learns of a worker from its stats as we did, but may hear it later on a loaded machine:
        # a create for a worker it does not know yet is refused (NO_WORKER) and asked again
        pending, deadline = [a, b], time.monotonic() + 60.0
        while pending:
            result = fleet.command(pending, timeout_s=60.0)
            unknown = {r.name for r in result.results if not r.ok and "unknown worker" in r.reason}
            assert all(r.ok or r.name in unknown for r in result.results), [r.reason for r in result.results]
            assert not unknown or time.monotonic() < deadline, [r.reason for r in result.results]
            pending = [item for item in pending if item.vessel.name in unknown]
            if pending:
                time.sleep(1.0)
        spin_until(lambda: len(got["/fleet/a/odom"]) >= 5 and len(got["/my/odom"]) >= 5, 60.0, "odometry")
        assert got["/a/odom"] == [] and got["/other/b/odom"] == []
        assert node.count_publishers("/a/odom") == 0 and node.count_publishers("/other/b/odom") == 0
        assert node.count_subscribers("/fleet/a/thrusters/propeller/cmd") == 1
        assert node.count_subscribers("/other/b/thrusters/propeller/cmd") == 1
        assert got["/my/odom"][-1].child_frame_id == "b/base_link"
    finally:
        executor.shutdown()
        node.destroy_node()
        context.try_shutdown()
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=30)
        with contextlib.suppress(ProcessLookupError):  # launch's nodes too (a process group of their own)
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
