"""Waves over DDS: the dynamics node applies a latched /lotusim/environment with a sea, as current_server publishes
it, and its WAM-V rides the waves (lockstep, the fleet state's ENU positions)."""

from __future__ import annotations

import numpy as np
import pytest

rclpy = pytest.importorskip("rclpy")

from rclpy.qos import DurabilityPolicy, QoSProfile  # noqa: E402

from lotusim_core.ros.ros_arrays import from_float64_array  # noqa: E402
from lotusim_interfaces.msg import EnvironmentConfig, FleetState  # noqa: E402
from simnodes import Sim, create_item, spin_until  # noqa: E402

pytestmark = pytest.mark.ros  # starts DDS participants


@pytest.fixture
def sim(ros_context):
    s = Sim(ros_context, mode="lockstep", step_s=0.02)
    yield s
    s.close()


def test_a_wamv_rides_the_waves_of_the_published_environment(sim):
    """A regular wave H 1 m, T 6 s (no ramp) on /lotusim/environment: over 12 s (two periods) the WAM-V's up
    coordinate in the fleet state spans about H (heave amplitude 0.5 m within 15 %)."""
    states: list[FleetState] = []
    sim.client.create_subscription(FleetState, "/lotusim/fleet_state", states.append, 1000)
    latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)
    publisher = sim.client.create_publisher(EnvironmentConfig, "/lotusim/environment", latched)
    config = "waves: {model: regular, height_m: 1.0, period_s: 6.0, ramp_time_s: 0.0}\n"
    publisher.publish(EnvironmentConfig(revision=1, config_yaml=config))
    spin_until(sim.executor, lambda: sim.worker.environment_yaml == config, 10.0, "environment applied")
    sim.command([create_item("boat", "wamv", (0.0, 0.0, 0.0))])
    up = []
    for _ in range(60):  # 60 x 10 steps of 0.02 s = 12 s
        states.clear()
        sim.step(10)
        spin_until(sim.executor, lambda: len(states) >= 1, 10.0, "fleet state")
        up.append(from_float64_array(states[-1].position).reshape(-1, 3)[0, 2])
    heave = np.array(up[10:])
    assert 0.5 * (heave.max() - heave.min()) == pytest.approx(0.5, rel=0.15)
