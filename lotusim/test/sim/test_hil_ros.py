"""The HIL recipe of docs/hil.md over real DDS, from the entry point: `lotusim run single_auv --remap FILE` (a
process of its own, with its node processes) and a stand-in vehicle stack (an rclpy node of this test) that has
its own topic names and driver rates. The stack receives the simulated sensors through the remappings at its
rates, commands the propeller on its own topic, and keeps time with lockstep: it advances the simulation one
control cycle at a time through /lotusim/step. The ground truth (remapped too) shows the vessel driven."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

rclpy = pytest.importorskip("rclpy")

from geometry_msgs.msg import PoseWithCovarianceStamped  # noqa: E402
from nav_msgs.msg import Odometry  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from sensor_msgs.msg import Imu  # noqa: E402
from std_msgs.msg import Float64  # noqa: E402

from lotusim_core.ros import spin  # noqa: E402
from lotusim_interfaces.srv import Step  # noqa: E402

pytestmark = pytest.mark.ros  # starts DDS participants (nodes, node processes or the ros2 CLI)
REMAP = textwrap.dedent(
    """
    vessel: remus_1
    lockstep: true
    topics:
      imu/data: {name: /stack/sensors/imu, rate_hz: 25.0}      # the stack's IMU driver: 25 Hz (default 50)
      depth: {name: /stack/sensors/depth, rate_hz: 5.0}        # its depth driver: 5 Hz (default 10)
      pressure: {name: /stack/sensors/pressure, rate_hz: 5.0}
      odom: {name: /stack/truth, rate_hz: 10.0}
      thrusters/propeller/cmd: /stack/actuators/thrust
    """
)
CYCLE_STEPS = 5  # the stack's control cycle: 5 physics steps of 0.02 s = 0.1 s of sim time per /lotusim/step
THRUST_RPM = 1525.0  # REMUS 100 full ahead (vehicle file: command_max 1525 rpm, 2.5 m/s)


class StandInStack:
    """A vehicle stack's ROS side: reads its drivers' topics, writes its actuator topic, steps the simulation."""

    def __init__(self, context) -> None:
        self.node = rclpy.create_node("couguv_stack", context=context)
        self.executor = SingleThreadedExecutor(context=context)
        self.executor.add_node(self.node)
        self.imu: list[Imu] = []
        self.depth: list[PoseWithCovarianceStamped] = []
        self.truth: list[Odometry] = []
        self.node.create_subscription(Imu, "/stack/sensors/imu", self.imu.append, 100)
        self.node.create_subscription(PoseWithCovarianceStamped, "/stack/sensors/depth", self.depth.append, 100)
        self.node.create_subscription(Odometry, "/stack/truth", self.truth.append, 100)
        self.thrust = self.node.create_publisher(Float64, "/stack/actuators/thrust", 10)
        self.step = self.node.create_client(Step, "/lotusim/step")

    def spin_until(self, predicate, timeout_s: float, what: str, alive=None) -> None:
        """Spin (20 ms steps) until `predicate()`; `alive()` may raise (lotusim run ended). TimeoutError after
        `timeout_s` wall seconds."""
        spin.spin_until(
            self.executor,
            predicate,
            timeout_s,
            f"stand-in stack: timed out waiting for {what}",
            check=alive,
            step_s=0.02,
        )

    def cycle(self, ended) -> bool:
        """One control cycle: command, advance the simulation by one cycle, wait for its reply. False: the
        simulation ended (`ended()`) before it replied."""
        self.thrust.publish(Float64(data=THRUST_RPM))
        future = self.step.call_async(Step.Request(steps=CYCLE_STEPS))
        self.spin_until(lambda: future.done() or ended(), 30.0, f"the step reply ({len(self.truth)} odometry)")
        if not future.done():
            return False
        # docs/hil.md sec. 4: the sensors of the last step follow the reply; the stack waits for their stamp
        self.spin_until(lambda: self.truth or ended(), 10.0, "the ground truth of the cycle")
        if self.imu and self.truth:
            cycle_end_ms = _stamps_ms(self.truth[-1:])[0]
            self.spin_until(
                lambda: _stamps_ms(self.imu[-1:])[0] > cycle_end_ms - 40 or ended(), 10.0, "the IMU of the cycle"
            )
        return True

    def close(self) -> None:
        self.executor.shutdown()
        self.node.destroy_node()


def _stamps_ms(msgs) -> np.ndarray:
    return np.array([m.header.stamp.sec * 1000 + m.header.stamp.nanosec // 1_000_000 for m in msgs])


def test_stand_in_stack_drives_a_remapped_vessel_in_lockstep_from_lotusim_run(tmp_path, own_domain_env):
    remap = tmp_path / "remap.yaml"
    remap.write_text(REMAP)
    command = [sys.executable, "-m", "lotusim_core.cli", "run", "single_auv", "--remap", str(remap)]
    command += ["--duration", "6", "--headless", "--log-dir", str(tmp_path / "logs")]
    proc = subprocess.Popen(
        command,
        env=own_domain_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=int(own_domain_env["ROS_DOMAIN_ID"]))
    stack = StandInStack(context)
    try:

        def alive() -> None:
            if proc.poll() is not None and proc.returncode != 0:
                raise AssertionError(f"lotusim run exited early:\n{proc.stdout.read()}")

        # the worker subscribes to the stack's actuator topic (remapped), then the vessel's sensors appear
        stack.spin_until(lambda: stack.thrust.get_subscription_count() == 1, 240.0, "the simulator", alive)
        stack.spin_until(stack.step.service_is_ready, 60.0, "/lotusim/step", alive)
        settle = time.monotonic() + 1.0  # let the server match our answer reader (an answer before that is lost)
        stack.spin_until(lambda: time.monotonic() > settle, 5.0, "discovery")
        assert stack.node.count_subscribers("/remus_1/thrusters/propeller/cmd") == 0  # renamed, not duplicated
        assert stack.node.count_publishers("/remus_1/imu/data") == 0
        # lockstep: the sensor publisher creates the vessel's topics at the first fleet state that shows it
        assert stack.cycle(lambda: proc.poll() is not None)
        stack.spin_until(lambda: stack.node.count_publishers("/stack/sensors/imu") == 1, 30.0, "the IMU", alive)
        settle = time.monotonic() + 1.0
        stack.spin_until(lambda: time.monotonic() > settle, 5.0, "discovery")
        cycles = 1
        # lotusim run stops after --duration 6 s of sim time (it may end while a step is in flight)
        while cycles < 200 and stack.cycle(lambda: proc.poll() is not None):
            cycles += 1
        out, _ = proc.communicate(timeout=60)
    finally:
        stack.close()
        context.try_shutdown()
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, out
    assert "lockstep: waiting for /lotusim/step" in out
    assert "not started (the stack drives): depth_heading_autopilot_remus_1" in out
    # at least 6 s of sim time (--duration); a few more while lotusim run notices and stops its nodes
    assert cycles >= 60, f"{cycles} control cycles of 0.1 s for 6 s of sim time"
    # the stack's driver rates, exact in sim time (lockstep: nothing runs ahead or falls behind)
    assert len(stack.imu) > 50 and set(np.diff(_stamps_ms(stack.imu))) == {40}
    assert len(stack.depth) > 10 and set(np.diff(_stamps_ms(stack.depth))) == {200}
    assert stack.imu[-1].header.frame_id == "remus_1/imu_link"
    # driven as commanded: full ahead from rest, nose east (single_auv: yaw 0) -> it moves east, surging
    first, last = stack.truth[0], stack.truth[-1]
    assert set(np.diff(_stamps_ms(stack.truth))) == {100}
    east = last.pose.pose.position.x - first.pose.pose.position.x
    assert east > 2.5, f"moved {east:.2f} m east in {len(stack.truth) / 10:.1f} s at full thrust"
    assert last.twist.twist.linear.x > 1.0  # body surge, m/s (2.5 m/s at steady state)
    assert abs(last.pose.pose.position.y - first.pose.pose.position.y) < 0.1  # no autopilot turned it
