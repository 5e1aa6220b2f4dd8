"""Vessel names: the one check used wherever a name enters (scenario loader, FleetCommand items at the MAS
server, the dynamics worker's command service).

A vessel name becomes a ROS namespace and a frame prefix: `<name>/odom`, `<name>/thrusters/<thruster>/cmd`,
`<name>/base_link`, the parameter services of its controller node `/<controller>_<name>/...`
(lotusim_core.ros.ros_names). The limit counts these names at the root namespace: a launch namespace (`/sim`)
takes its own length off it. ROS refuses a
topic or service name longer than TOPIC_NAME_MAX characters (rmw's RMW_TOPIC_MAX_NAME_LENGTH, 255 - 8 for the
middleware's prefixes), and it does so when the topic is created, in a timer after the create was answered OK.
So a name is accepted only if every name a vessel gets fits: MAX_NAME_LENGTH characters with actuator names of
at most ACTUATOR_NAME_ALLOWANCE characters (all shipped vehicles), fewer when a vehicle's actuator names are
longer (checked where the vehicle is known).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

NAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")  # a ROS name token: vessel names become namespaces
TOPIC_NAME_MAX = 247  # rmw/validate_full_topic_name.h: RMW_TOPIC_MAX_NAME_LENGTH (255U - 8U)
ACTUATOR_NAME_ALLOWANCE = 32  # characters of a thruster or fin name assumed when the vehicle is not known
# Every per-vessel topic, service and frame name ({v}: the vessel, {a}: an actuator), from the nodes that create
# them (dynamics, sensors, controllers; docs/interfaces.md). The longest decides the limit.
VESSEL_NAMES = (
    "/{v}/odom",
    "/{v}/cmd_wrench",
    "/{v}/thrusters/{a}/cmd",
    "/{v}/fins/{a}/cmd",
    "{v}/base_link",
    "{v}/magnetometer_link",  # sensor frames (lotusim_core.ros.ros_names.sensor_frame), the longest kind
    "/{v}/imu/data",
    "/{v}/mag",
    "/{v}/pressure",
    "/{v}/depth",
    "/{v}/gps/fix",
    "/{v}/gps/vel",
    "/{v}/dvl",
    "/{v}/dvl/altitude",
    "/{v}/altimeter",
    "/{v}/ais",
    "/{v}/acoustic/range",
    "/{v}/modem/rx",
    "/{v}/modem/tx",
    "/{v}/waypoints/set",
    "/{v}/waypoints/status",
    "/{v}/autopilot/status",
    "/{v}/setpoint/depth",
    "/{v}/setpoint/heading",
    "/{v}/setpoint/speed",
    "/{v}/setpoint/propeller",
    # a controller node (lotusim_core.sim.scenario.ControllerPlan.node_name) and its standard services
    "/depth_heading_autopilot_{v}/set_parameters_atomically",
    "/depth_heading_autopilot_{v}/get_type_description",
    "/waypoint_follower_{v}/set_parameters_atomically",
)


def _longest_suffix(actuators: Iterable[str] = ()) -> int:
    """Characters that the longest per-vessel name adds to the vessel name."""
    actuator = max([ACTUATOR_NAME_ALLOWANCE, *(len(a) for a in actuators)])
    return max(len(pattern.format(v="", a="a" * actuator)) for pattern in VESSEL_NAMES)


def max_name_length(actuators: Iterable[str] = ()) -> int:
    """The longest vessel name whose every topic, service and frame name ROS accepts."""
    return TOPIC_NAME_MAX - _longest_suffix(actuators)


MAX_NAME_LENGTH = max_name_length()


def name_problem(name: object, actuators: Iterable[str] = ()) -> str:
    """Why `name` cannot name a vessel ('' if it can): a ROS name token ([A-Za-z][A-Za-z0-9_]*) short enough
    for every name the vessel gets (`actuators`: its thruster and fin names, if known)."""
    if not isinstance(name, str) or not NAME_RE.match(name):
        shown = repr(name) if len(repr(name)) <= 60 else f"{repr(name)[:57]}..."
        return f"{shown} is not a valid ROS name token ([A-Za-z][A-Za-z0-9_]*)"
    limit = max_name_length(actuators)
    if len(name) > limit:
        return (
            f"{name[:20]}... has {len(name)} characters: at most {limit}, or its longest topic name would exceed "
            f"ROS's {TOPIC_NAME_MAX} characters"
        )
    return ""
