"""flight_controller: the multirotor flight controller (X500), a vessel controller (contract: controller_host.py) on
the standard per-vessel topics (docs/autonomy.md, 'Flight controller'). ROS only converts messages here; the
control law and the flight phases are lotusim_autonomy.multirotor (ROS-free).

  in   <vessel>/odom                  nav_msgs/Odometry (map ENU, base_link FLU; at 50 Hz: physics.odom_rate_hz), with
                                       state_source: odom (the default of the standalone node); state_source:
                                       fleet_state (the default in a controller host): the vessel's row of
                                       /lotusim/fleet_state instead, all the host's drones stepped at once
                                       (FlightFleetIntake)
  in   <vessel>/cmd_vel               geometry_msgs/Twist, REP 103: linear x forward, y left, z up (m/s) in the
                                       drone's level heading frame (cmd_vel_frame: body, the default) or x east,
                                       y north, z up in `map` (cmd_vel_frame: map); angular.z yaw rate (rad/s,
                                       counter-clockwise seen from above). Held cmd_vel_timeout_s (0.5 s), then
                                       the drone holds where it is
  in   <vessel>/goal_pose             geometry_msgs/PoseStamped in `map` ENU: fly there and hold it; the
                                       orientation's yaw is the heading (an all-zero quaternion keeps it)
  srv  <vessel>/takeoff               std_srvs/Trigger: arm and climb takeoff_height_m (5 m) above where it is
  srv  <vessel>/land                  std_srvs/Trigger: descend where it is at land_speed_mps, rotors off at touchdown
  in   <vessel>/land_on               std_msgs/String: the name of a vessel to land on (a moving USV's deck): the
                                       drone follows <name>/odom, lines up approach_height_m above its reference
                                       point, descends onto it and stops its rotors on touchdown
  out  <vessel>/thrusters/<rotor>/cmd std_msgs/Float64, motor speed command, rad/s (the rotors of the vehicle file);
                                       with state_source fleet_state the host's drones' commands go out together
                                       in one sensor_msgs/JointState on /lotusim/thruster_commands (name
                                       <vessel>/thrusters/<rotor>, velocity rad/s; stamp: the fleet state's;
                                       frame_id: the host node, so that a realtime clock master does not run
                                       more than max_control_lag_s ahead of its answers) per fleet state; the
                                       worker still takes the per-rotor topics (a vehicle stack flies the
                                       drone through them)
  out  <vessel>/flight_controller/status  std_msgs/Float64MultiArray, layout label STATUS_LABEL (while subscribed)

Set-points from params["setpoints"] (scenario `setpoints:`; all optional):
  waypoints            [[x, y], ...] map ENU m or [{latitude_deg, longitude_deg}, ...] (as scenario.py hands them
                       on: waypoints_enu and latitude/longitude lists), flown at altitude_m after a takeoff
  altitude_m           map z (m above the sea surface z = 0) of the waypoints; default: the takeoff altitude
  altitudes_m          one altitude per waypoint instead
  heading_deg          compass heading held (default: the heading at the start)
  speed_mps            horizontal speed along the route (0: speed_max_mps)
  acceptance_radius_m  a waypoint is reached within this distance (0: 1 m); loop: fly the route again
  takeoff              true: take off at the first odometry (the default when waypoints are given)
  armed                false: start with the rotors stopped (resting on a deck) until a takeoff
Without set-points the drone holds where it is from the first odometry (in the air, or idling on a deck).
One control step per odometry message (or fleet state), h = difference of the stamps (sim time); gains:
MultirotorGains field names, phase settings: PilotSettings field names, both as parameters.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any

import numpy as np
from geometry_msgs.msg import PoseStamped, Twist
from nav_msgs.msg import Odometry
from rclpy.node import Node
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64, Float64MultiArray, MultiArrayDimension, String
from std_srvs.srv import Trigger

from lotusim_autonomy.controller_base import VesselController, main_for, standalone_node
from lotusim_autonomy.fleet_state_intake import FleetStateFeed, one_per_node
from lotusim_autonomy.multirotor import (
    PHASES,
    FlightMission,
    MultirotorGains,
    MultirotorPilot,
    PilotSettings,
    cannot_fly,
)
from lotusim_autonomy.multirotor_batch import MultirotorFleet
from lotusim_autonomy.odometry import NedState, ned_arrays
from lotusim_core.base import frames, rotations
from lotusim_core.base.vehicle_spec import VehicleSpec
from lotusim_core.ros.joint_commands import JointCommands
from lotusim_core.ros.prepacked import raw_publish
from lotusim_interfaces.msg import FleetState

STATUS_LABEL = "stamp_s,phase,waypoint_index,waypoint_count,x_m,y_m,z_m,target_error_m,done"
SETPOINT_KEYS = (
    "waypoints",
    "acceptance_radius_m",
    "speed_mps",
    "loop",
    "heading_deg",
    "altitude_m",
    "altitudes_m",
    "takeoff",
    "armed",
)
SLOW_ODOMETRY_S = 0.03  # a control step longer than this is too slow for the rate loop (warned once)
# A scenario's takeoff waits for this many states in a row at the rate loop's pace (0.5 s at 50 Hz), or TAKEOFF_WAIT_S
# of sim time: a host starved while every process starts steps on stale states and sends late commands, and a
# takeoff from the sea then flipped most of Table V's drones in one run of three.
STEADY_STATES = 25
TAKEOFF_WAIT_S = 2.0
# The control step the integrators see at most: states dropped by a late host (a gap of 0.16 s was seen at start)
# must not kick the velocity and rate integrals by 8 steps' worth at once, which flipped drones on takeoff.
MAX_CONTROL_STEP_S = 0.04
STATUS_CHECK_S = 0.5  # how often (sim s) a controller asks whether its status topic has subscribers


class FlightController(VesselController):
    """One multirotor's flight controller on a host node (contract: controller_host.py)."""

    TYPE = "flight_controller"
    SETPOINT_KEYS = SETPOINT_KEYS
    REQUIRED_SETPOINTS = ()
    MIN_ODOM_RATE_HZ = 40.0  # the rate loop steps on every state (scenario.py checks the rate of its source)
    STATE_SOURCE_IN_HOST = "fleet_state"  # a controller host's default_state_source

    @classmethod
    def cannot_drive(cls, spec: VehicleSpec) -> str | None:
        """Why the flight controller cannot fly this vehicle (it flies multirotors with rotor thrusters)."""
        return cannot_fly(spec)

    def __init__(self, node: Node, vessel: str, params: dict[str, Any]) -> None:
        read, spec = self.open(node, vessel, params)
        where = read.where
        gains, settings = MultirotorGains(), PilotSettings()
        for obj in (gains, settings):
            for f in fields(obj):
                setattr(obj, f.name, read.number(f.name, getattr(obj, f.name), 0.0))
        self.cmd_vel_frame = read.text("cmd_vel_frame", "body", ("body", "map"))
        read.origin()  # the waypoints arrive in map ENU from scenario.py (lat/lon converted there)
        self._initial = self._parse_setpoints(read.setpoints(), f"{where}: setpoints")
        read.finish()
        v = vessel
        made = self._endpoints
        self._fleet: FlightFleetIntake | None = None
        if self.state_source == "fleet_state":  # stepped with the host's other drones (FlightFleetIntake)
            self._fleet = FlightFleetIntake.of(node)
            self.pilot = self._fleet.add(self, spec, gains, settings)
            self._pubs = []
        else:
            self.pilot = MultirotorPilot(spec, gains, settings)
        self._rotors = self.pilot.controller.mixer.names
        if self._fleet is None:
            self._pubs = [made.publisher(Float64, f"{v}/thrusters/{name}/cmd") for name in self._rotors]
            self.listen_for_states()
        self._status_pub = made.publisher(Float64MultiArray, f"{v}/flight_controller/status")
        self._status_checked_s, self._status_wanted = -math.inf, False
        made.subscription(Twist, f"{v}/cmd_vel", self._on_cmd_vel, 1)
        made.subscription(PoseStamped, f"{v}/goal_pose", self._on_goal)
        made.service(Trigger, f"{v}/takeoff", self._on_takeoff)
        made.service(Trigger, f"{v}/land", self._on_land)
        made.subscription(String, f"{v}/land_on", self._on_land_on)
        self._deck_sub = None  # the odometry subscription of the vessel to land on
        self._deck_name, self._deck_started = "", False
        self._warned_slow = False
        self._steady, self._first_state_s = 0, None  # the states before the scenario's takeoff (_ready_to_start)
        self.last_commands = np.zeros(len(self._rotors))
        node.get_logger().info(f"flight controller for {v} ({self.model}), set-points {self._initial}")

    def close(self) -> None:
        """Destroy this controller's endpoints on the host node (and leave the host's batch of drones)."""
        self._drop_deck()
        if self._fleet is not None:
            self._fleet.remove(self)
        self._endpoints.close()

    def _drop_deck(self) -> None:
        if self._deck_sub is not None:
            self.node.destroy_subscription(self._deck_sub)
            self._deck_sub = None

    # --- set-points ----------------------------------------------------------------------------------------------
    @staticmethod
    def _parse_setpoints(sp: dict[str, Any], where: str) -> dict[str, Any]:
        """Check the controller's own set-point keys (scenario.py has checked the waypoints)."""
        out = dict(sp)
        for key in ("altitude_m", "heading_deg", "speed_mps", "acceptance_radius_m"):
            if key in out and (isinstance(out[key], bool) or not isinstance(out[key], (int, float))):
                raise ValueError(f"{where}.{key}: expected a number, got {out[key]!r}")
        points = out.get("waypoints_enu") or []
        alts = out.get("altitudes_m")
        if alts is not None and (not isinstance(alts, list) or len(alts) != len(points)):
            raise ValueError(f"{where}.altitudes_m: expected one altitude per waypoint ({len(points)}), got {alts!r}")
        for key in ("takeoff", "armed"):
            if key in out and not isinstance(out[key], bool):
                raise ValueError(f"{where}.{key}: expected true or false, got {out[key]!r}")
        return out

    def _ready_to_start(self, s: NedState, h: float) -> bool:
        """Whether the scenario's set-points start now: at once without a takeoff, else once STEADY_STATES states
        in a row came at the rate loop's pace, or TAKEOFF_WAIT_S after the first state."""
        sp = self._initial
        if not sp.get("takeoff", bool(sp.get("waypoints_enu"))) or not sp.get("armed", True):
            return True
        self._first_state_s = s.t_s if self._first_state_s is None else self._first_state_s
        self._steady = self._steady + 1 if 0.0 < h <= SLOW_ODOMETRY_S else 0
        return self._steady >= STEADY_STATES or s.t_s - self._first_state_s >= TAKEOFF_WAIT_S

    def _start(self, s: NedState) -> None:
        """At the first odometry: the scenario's set-points (a takeoff, a route), else hold where it is."""
        sp, self._initial = self._initial, None
        if "heading_deg" in sp:
            self.pilot.heading_rad = math.radians(float(sp["heading_deg"]))
        points = sp.get("waypoints_enu") or []
        default_altitude = -(s.position_ned_m[2] - self.pilot.settings.takeoff_height_m)
        altitude = float(sp.get("altitude_m", default_altitude))
        if not sp.get("armed", True):
            self.pilot.disarm()  # resting (on a deck) until a takeoff
        if sp.get("takeoff", bool(points)):
            self.pilot.takeoff(s, -altitude if points else None)
        if points:
            alts = sp.get("altitudes_m") or [altitude] * len(points)
            ned = [np.array([float(y), float(x), -float(z)]) for (x, y), z in zip(points, alts, strict=True)]
            radius = float(sp.get("acceptance_radius_m") or 1.0)
            speed = float(sp.get("speed_mps") or 0.0) or None
            self.pilot.set_mission(FlightMission(ned, radius, speed, bool(sp.get("loop", False))))

    def _warn(self, topic: str, reason: str) -> None:
        self.node.get_logger().warning(f"{self.vessel}/{topic}: {reason}; ignored")

    def _on_cmd_vel(self, msg: Twist) -> None:
        lin, ang = msg.linear, msg.angular
        values = [lin.x, lin.y, lin.z, ang.z]
        if not all(math.isfinite(x) for x in values):
            return self._warn("cmd_vel", "expected finite numbers")
        if self.state is None:
            return self._warn("cmd_vel", "no odometry yet")
        if self.cmd_vel_frame == "map":
            v_ned = frames.enu_to_ned(np.array([lin.x, lin.y, lin.z]))
        else:  # level heading frame FLU: x forward along the heading, y left, z up
            psi = float(self.state.rpy_ned_rad[2])
            fwd, right = lin.x, -lin.y
            v_ned = np.array(
                [fwd * math.cos(psi) - right * math.sin(psi), fwd * math.sin(psi) + right * math.cos(psi), -lin.z]
            )
        ok, why = self.pilot.set_velocity(v_ned, -ang.z, self.state.t_s)
        if not ok:
            self._warn("cmd_vel", why)

    def _on_goal(self, msg: PoseStamped) -> None:
        p, q = msg.pose.position, msg.pose.orientation
        if msg.header.frame_id not in ("", "map"):
            return self._warn("goal_pose", f"expected frame_id 'map' (ENU), got {msg.header.frame_id!r}")
        if not all(math.isfinite(x) for x in (p.x, p.y, p.z, q.x, q.y, q.z, q.w)):
            return self._warn("goal_pose", "expected finite numbers")
        heading = None
        if q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w > 1e-12:
            yaw_enu = rotations.yaw_one(q.x, q.y, q.z, q.w)
            heading = float(frames.yaw_enu_to_ned(yaw_enu))
        ok, why = self.pilot.goto(np.array([p.y, p.x, -p.z]), heading)
        if not ok:
            return self._warn("goal_pose", why)
        self.node.get_logger().info(f"{self.vessel}: goal ({p.x:.2f}, {p.y:.2f}, {p.z:.2f}) m")

    def _on_land_on(self, msg: String) -> None:
        name = msg.data.strip().strip("/")
        if not name or name == self.vessel:
            return self._warn("land_on", f"expected the name of another vessel, got {msg.data!r}")
        if self.state is None:
            return self._warn("land_on", "no odometry yet")
        self._drop_deck()
        self._deck_sub = self.node.create_subscription(Odometry, f"{name}/odom", self._on_deck_odom, 1)
        self._deck_name, self._deck_started = name, False
        self.node.get_logger().info(f"{self.vessel}: landing on {name}")

    def _on_deck_odom(self, msg: Odometry) -> None:
        """The vessel landed on: its position and velocity (NED) to the pilot; the landing starts at the first."""
        p, lin, o = msg.pose.pose.position, msg.twist.twist.linear, msg.pose.pose.orientation
        q_ned_frd = frames.q_enu_flu_to_q_ned_frd(np.array([o.x, o.y, o.z, o.w]))
        v_ned = frames.rotation_matrix(q_ned_frd) @ frames.flu_to_frd(np.array([lin.x, lin.y, lin.z]))
        position = np.array([p.y, p.x, -p.z])
        if not (np.all(np.isfinite(position)) and np.all(np.isfinite(v_ned))):
            return
        if self._deck_started:
            self.pilot.update_vessel(position, v_ned)
            return
        self._deck_started = True
        ok, why = self.pilot.land_on(self.state, position, v_ned)
        if not ok:
            self._drop_deck()
            self._warn("land_on", why)

    def _on_takeoff(self, _request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        if self.state is None:
            response.success, response.message = False, "no odometry yet"
        else:
            response.success, response.message = self.pilot.takeoff(self.state)
        return response

    def _on_land(self, _request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        if self.state is None:
            response.success, response.message = False, "no odometry yet"
        else:
            response.success, response.message = self.pilot.land(self.state)
        return response

    # --- control ---------------------------------------------------------------------------------------------
    def control(self, s: NedState, h: float) -> None:
        """One flight-control step of this drone alone (state_source odom) on the new state."""
        if not self.before_step(s, h):
            return
        try:
            cmd = self.pilot.step(s, min(h, MAX_CONTROL_STEP_S))
            if not np.all(np.isfinite(cmd)):
                raise ValueError(f"non-finite rotor commands {cmd.tolist()}")
        except (ValueError, FloatingPointError) as exc:  # a failed step holds the last commands
            self.node.get_logger().error(f"{self.vessel}: control step at t = {s.t_s:.3f} s failed ({exc})")
            cmd = self.last_commands
        self.last_commands = cmd
        for pub, value in zip(self._pubs, cmd, strict=True):
            pub.publish(Float64(data=float(value)))
        self.after_step(s)

    def before_step(self, s: NedState, h: float) -> bool:
        """At a new state: the scenario's set-points at the first; whether to step (a stamp that did not advance:
        no step; the first one steps with h 0); a warning if the steps are too long for the rate loop."""
        if self._initial is not None:
            if not self._ready_to_start(s, h):
                return False  # resting, rotors stopped
            self._start(s)
        if h <= 0.0 and self.updates > 0:
            return False
        if h > SLOW_ODOMETRY_S and not self._warned_slow:
            self._warned_slow = True
            source = "odometry" if self._fleet is None else "fleet state"
            self.node.get_logger().warning(
                f"{self.vessel}: {source} every {h:.3f} s; the flight controller's rate loop needs >= 40 Hz "
                "(scenario physics.odom_rate_hz: 50, or step_s 0.02 for the fleet state)"
            )
        return True

    def after_step(self, s: NedState) -> None:
        """The status, while someone subscribes (asked once per STATUS_CHECK_S of sim time: 2 us a call)."""
        if s.t_s >= self._status_checked_s + STATUS_CHECK_S or s.t_s < self._status_checked_s:
            self._status_checked_s = s.t_s
            self._status_wanted = self._status_pub.get_subscription_count() > 0
        if self._status_wanted:
            self._publish_status(s)
        self.updates += 1

    def _publish_status(self, s: NedState) -> None:
        pilot, m = self.pilot, self.pilot.mission
        target = pilot.target.position_ned_m
        error = float(np.linalg.norm(target - s.position_ned_m)) if target is not None else 0.0
        x, y, z = frames.ned_to_enu(s.position_ned_m)
        out = Float64MultiArray()
        out.layout.dim = [MultiArrayDimension(label=STATUS_LABEL, size=9, stride=9)]
        out.data = [
            s.t_s,
            float(PHASES.index(pilot.phase)),
            float(m.index if m else 0),
            float(len(m.points_ned) if m else 0),
            float(x),
            float(y),
            float(z),
            error,
            float(bool(m and m.done)),
        ]
        self._status_pub.publish(out)


@dataclass
class _Group:
    """The drones of one vehicle model found in one worker's fleet state: their rows in the FleetState arrays and
    in the model's MultirotorFleet, their controllers, where their rotors are in the JointState of commands."""

    fleet: MultirotorFleet
    index: np.ndarray  # rows of the FleetState arrays
    rows: np.ndarray  # rows of the MultirotorFleet
    controllers: list[FlightController]
    out: slice  # their rotors' place in the JointState


class FlightFleetIntake:
    """The flight controllers of one host node that take their states from /lotusim/fleet_state (state_source
    fleet_state, the default in a controller host): one subscription for all of them, the cascade of all drones
    of a model in one NumPy pass per fleet state (lotusim_autonomy.multirotor_batch), their rotor commands in one
    sensor_msgs/JointState on /lotusim/thruster_commands (lotusim_physics.thruster_batch). Each controller keeps
    its own set-point topics, services and status."""

    @classmethod
    def of(cls, node: Node) -> FlightFleetIntake:
        """The node's intake (made at the first flight controller that asks)."""
        return one_per_node(node, "_lotusim_flight_fleet", lambda: cls(node))

    def __init__(self, node: Node) -> None:
        self.node = node
        self.fleets: dict[str, MultirotorFleet] = {}  # by vehicle model
        self.members: dict[str, tuple[FlightController, int]] = {}  # vessel -> (controller, row in its fleet)
        self.last_t: dict[str, float] = {}  # vessel -> stamp of its last state
        self._layouts: dict[tuple[str, tuple[str, ...]], tuple[list[_Group], JointCommands]] = {}
        FleetStateFeed.of(node).listen(self._on_fleet_state)  # shared with the host's marine controllers
        self._pub = node.create_publisher(JointState, "/lotusim/thruster_commands", 10)
        self._send = raw_publish(self._pub)
        # the answers name the host: a realtime clock master keeps its sim time within max_control_lag_s of them
        # (lotusim_physics.pacing.ControlLag); an answer without names says this host flies nothing of a worker
        self.host = node.get_fully_qualified_name()
        self._answered: set[str] = set()  # workers whose fleet states this host answered with commands

    def add(
        self, controller: FlightController, spec: VehicleSpec, gains: MultirotorGains, settings: PilotSettings
    ) -> MultirotorPilot:
        """A drone joins: its pilot, a row of its model's batch."""
        fleet = self.fleets.get(spec.name)
        if fleet is None:
            fleet = self.fleets[spec.name] = MultirotorFleet(spec)
        pilot = fleet.add(gains, settings)
        self.members[controller.vessel] = (controller, len(fleet.pilots) - 1)
        self._layouts.clear()
        return pilot

    def remove(self, controller: FlightController) -> None:
        """A drone leaves (its row stays unused)."""
        self.members.pop(controller.vessel, None)
        self._layouts.clear()

    def _layout(self, worker: str, names: list[str]) -> tuple[list[_Group], JointCommands]:
        key = (worker, tuple(names))
        layout = self._layouts.get(key)
        if layout is None:
            found: dict[str, tuple[list[int], list[int], list[FlightController]]] = {}
            for i, name in enumerate(names):
                member = self.members.get(name)
                if member is not None:
                    c, row = member
                    index, rows, controllers = found.setdefault(c.model, ([], [], []))
                    index.append(i)
                    rows.append(row)
                    controllers.append(c)
            groups, rotor_names, start = [], [], 0
            for model, (index, rows, controllers) in found.items():
                fleet = self.fleets[model]
                n = len(fleet.batch.mixer.names) * len(controllers)
                groups.append(_Group(fleet, np.array(index), np.array(rows), controllers, slice(start, start + n)))
                rotor_names += [f"{c.vessel}/thrusters/{r}" for c in controllers for r in fleet.batch.mixer.names]
                start += n
            layout = self._layouts[key] = (groups, JointCommands(rotor_names, self.host))
        return layout

    def _on_fleet_state(self, msg: FleetState) -> None:
        try:
            self._fly(msg)
        except Exception as exc:  # noqa: BLE001 - logged, and the host flies on with the next fleet state
            self.node.get_logger().error(
                f"flight controllers: fleet state not handled ({exc!r})", throttle_duration_sec=5.0
            )

    def _fly(self, msg: FleetState) -> None:
        """One control step of the drones of this host found in a worker's fleet state, and their commands."""
        groups, out = self._layout(msg.worker, msg.names)
        if not groups:
            if msg.worker in self._answered:  # its last drone there is gone: the worker need not wait for this host
                self._answered.discard(msg.worker)
                self._send(out.message(msg.header.stamp.sec, msg.header.stamp.nanosec))
            return
        self._answered.add(msg.worker)
        t = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
        position = np.asarray(msg.position, dtype=float).reshape(-1, 3)
        orientation = np.asarray(msg.orientation, dtype=float).reshape(-1, 4)
        twist = np.asarray(msg.twist, dtype=float).reshape(-1, 6)
        for g in groups:
            out.velocity[g.out] = self._step_group(g, t, position[g.index], orientation[g.index], twist[g.index])
        self._send(out.message(msg.header.stamp.sec, msg.header.stamp.nanosec))

    def _step_group(self, g: _Group, t: float, p_enu: np.ndarray, q: np.ndarray, twist: np.ndarray) -> np.ndarray:
        """One control step of a group's drones; returns their rotor commands, rotor after rotor of each drone
        (a drone whose state is not finite, or whose stamp did not advance, keeps its last commands)."""
        p, rpy, nu = ned_arrays(p_enu, q, twist)
        finite = np.isfinite(p).all(axis=1) & np.isfinite(nu).all(axis=1)
        last = [c.last_commands for c in g.controllers]
        stepping, states, h = [], [], []
        for k, c in enumerate(g.controllers):
            c.odom_count += 1
            if not finite[k]:
                c.node.get_logger().warning(f"{c.vessel}: non-finite state ignored")
                continue
            s = NedState(t, p[k], rpy[k], nu[k])
            dt = t - self.last_t.get(c.vessel, t)
            self.last_t[c.vessel] = t
            c.state = s
            if c.before_step(s, dt):
                stepping.append(k)
                states.append(s)
                h.append(min(dt, MAX_CONTROL_STEP_S))
        if stepping:
            k = np.array(stepping)
            try:
                cmd = g.fleet.step(g.rows[k], states, p[k], rpy[k], nu[k], np.array(h))
            except (ValueError, FloatingPointError) as exc:  # a failed step holds the last commands
                self.node.get_logger().error(f"flight controllers: control step at t = {t:.3f} s failed ({exc})")
                cmd = np.array([last[j] for j in stepping])
            ok = np.isfinite(cmd).all(axis=1)
            for j, kk in enumerate(stepping):
                c = g.controllers[kk]
                if ok[j]:
                    c.last_commands = last[kk] = cmd[j]
                else:
                    self.node.get_logger().error(f"{c.vessel}: non-finite rotor commands {cmd[j].tolist()}")
                c.after_step(states[j])
        return np.concatenate(last)


FlightControllerNode = standalone_node(FlightController)


def main(args: list[str] | None = None) -> None:
    """Entry point of `ros2 run lotusim flight_controller --ros-args -p vessel:=drone -p model:=x500`."""
    main_for(FlightControllerNode, FlightController.TYPE, args)
