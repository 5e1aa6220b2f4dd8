"""Multirotor flight control (X500 and any multirotor of the catalogue whose thrusters are `rotor`s), ROS-free.

A cascade, the structure of PX4's multicopter controllers [PX4Controllers2025], each loop a plain function of the
state so that it can be tested alone; frames NED (world) and FRD (body), SI units:

    position     v_sp = K_x (p_d − p) + v_ff                  limited to speed_max (horizontal), climb/descent max
    velocity     a_sp = K_v (v_sp − v) + K_vi ∫(v_sp − v) dt  (PI, clamping anti-windup; the integral learns the
                                                              wind's drag and a weight error)
    thrust       F = m (g e3 − a_sp), tilted at most tilt_max from the vertical, its vertical part at least
                 0.2 m g; collective thrust f = F · R e3 (the part the body's thrust axis −b3 can give) and
                 desired attitude R_d = [b2d × b3d, b2d, b3d], b3d = F/|F|, b2d = b3d × b1c/|b3d × b1c|,
                 b1c = (cos ψ_d, sin ψ_d, 0)  — Lee, Leok & McClamroch 2010 [Lee2010] §III (their e3 is NED down)
    attitude     e_R = ½ (R_dᵀ R − Rᵀ R_d)^∨ (the geometric attitude error on SO(3) [Lee2010] §III);
                 Ω_sp = −K_R e_R + ψ̇_ff Rᵀ e3, limited to rate_max (roll, pitch) and yaw_rate_max
    rate         M = J (K_Ω (Ω_sp − Ω) + K_Ωi ∫(Ω_sp − Ω) dt) + Ω × J Ω   (PI on the rate error, the gyroscopic
                 term of Euler's equation cancelled as in [Lee2010] §III)
    mixer        [−f; M] = A T,  A = the rows Z, K, M, N of the rotors' wrench per newton of thrust (positions,
                 directions, spins and k_m of the vehicle file), T = A⁺ [−f; M] (exact for a quad), each rotor's
                 thrust T_i ∈ [0, k_f ω_max²], ω_i = √(T_i/k_f). Saturation keeps thrust and roll/pitch first: the
                 yaw moment is scaled down to what fits, then roll/pitch, then the speeds are clipped.

Gains are set by the bandwidth of each loop (a first-order loop per axis: K_Ω = 12 /s means the rate error decays
as e^{−12 t}); each outer loop is kept 2–3 times slower than the one inside it (the usual separation of a
cascade). The defaults suit a control step of 0.02 s (the physics' 50 Hz odometry) and the X500's motors
(time constants 0.0125 s up, 0.025 s down); a faster step allows faster loops.

Modes: `position` (hold / fly to a point, with a yaw), `velocity` (a velocity set-point in NED with a yaw rate,
e.g. from a cmd_vel), and the `FlightPhase` logic of the ROS controller (disarmed, takeoff, flying, landing) on
top (lotusim_autonomy.multirotor_controller). One instance per vehicle; the state is a lotusim_autonomy.odometry
NedState.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from lotusim_autonomy.allocation import _fit_fraction
from lotusim_autonomy.odometry import NedState
from lotusim_autonomy.pid import Pid, ssa
from lotusim_core.base import rotations
from lotusim_core.base.vehicle_spec import VehicleSpec

GRAVITY_MPS2 = 9.81  # as the physics (lotusim_physics.fleet)
E3 = np.array([0.0, 0.0, 1.0])


@dataclass
class MultirotorGains:
    """Loop gains and limits (SI; NED/FRD). Every field is a controller parameter of the same name."""

    position_p_per_s: float = 0.9  # horizontal position error -> velocity
    position_z_p_per_s: float = 1.2  # vertical position error -> velocity
    velocity_p_per_s: float = 2.0  # horizontal velocity error -> acceleration
    velocity_i_per_s2: float = 0.6
    velocity_z_p_per_s: float = 4.0
    velocity_z_i_per_s2: float = 1.0
    acceleration_integral_max_mps2: float = 4.0  # bound of the velocity loops' integral term
    attitude_p_per_s: float = 5.0  # roll/pitch attitude error -> rate
    yaw_p_per_s: float = 2.0
    rate_p_per_s: float = 12.0  # roll/pitch rate error -> angular acceleration
    rate_i_per_s2: float = 4.0
    yaw_rate_p_per_s: float = 5.0
    yaw_rate_i_per_s2: float = 1.0
    speed_max_mps: float = 5.0  # horizontal
    climb_max_mps: float = 2.5
    descent_max_mps: float = 1.5
    tilt_max_deg: float = 35.0
    rate_max_rad_s: float = 3.5  # roll/pitch
    yaw_rate_max_rad_s: float = 1.5


@dataclass(frozen=True)
class FlightTarget:
    """What to fly: a position (NED m) or, if position is None, a velocity (NED m/s); a heading (rad, compass) or,
    if None, a yaw rate (rad/s, clockwise seen from above: FRD r)."""

    position_ned_m: np.ndarray | None = None
    velocity_ned_mps: np.ndarray = field(default_factory=lambda: np.zeros(3))
    heading_rad: float | None = None
    yaw_rate_rad_s: float = 0.0
    speed_max_mps: float | None = None  # horizontal speed limit of this target (None: the gains')


def rotation_of(state: NedState) -> np.ndarray:
    """R (3, 3) = Rz(ψ) Ry(θ) Rx(φ), body FRD -> NED, of a state's zyx Euler angles (Fossen 2021 §2.2.1)."""
    phi, theta, psi = (float(a) for a in state.rpy_ned_rad)
    return rotations.euler_zyx_matrix_one(phi, theta, psi)


def vee(m: np.ndarray) -> np.ndarray:
    """The vector of a skew-symmetric matrix (the ∨ map): vee(hat(w)) = w."""
    return np.array([m[2, 1], m[0, 2], m[1, 0]])


def attitude_error(r: np.ndarray, r_d: np.ndarray) -> np.ndarray:
    """e_R = ½ (R_dᵀ R − Rᵀ R_d)^∨ (body axes, rad for small errors) [Lee2010] §III."""
    return 0.5 * vee(r_d.T @ r - r.T @ r_d)


def desired_attitude(force_ned: np.ndarray, heading_rad: float) -> np.ndarray:
    """R_d whose b3 axis (body down) is along the thrust-opposing force F/|F| and whose b1 (nose) points as near
    the heading as that allows [Lee2010] §III."""
    b3 = force_ned / np.linalg.norm(force_ned)
    b1c = np.array([math.cos(heading_rad), math.sin(heading_rad), 0.0])
    b2 = rotations.cross(b3, b1c)
    n = np.linalg.norm(b2)
    if n < 1e-6:  # thrust axis horizontal along the heading: keep any b2 perpendicular to b3
        b2 = rotations.cross(b3, np.array([0.0, 1.0, 0.0]))
        n = np.linalg.norm(b2)
    b2 = b2 / n
    return np.column_stack([rotations.cross(b2, b3), b2, b3])


class RotorMixer:
    """Body thrust f (N, along −z FRD) and moments M (N m, FRD at CO) -> rotor speeds (rad/s) of a multirotor."""

    def __init__(self, spec: VehicleSpec) -> None:
        rotors = [t for t in spec.thrusters if t.model == "rotor"]
        if len(rotors) < 4:
            raise ValueError(f"{spec.name}: a multirotor needs at least 4 rotors, has {len(rotors)}")
        self.names = tuple(t.name for t in rotors)
        self.k_f = np.array([t.motor_constant for t in rotors])
        self.omega_max = np.array([t.command_max for t in rotors])
        self.omega_min = np.array([max(t.command_min, 0.0) for t in rotors])
        self.thrust_max_n = self.k_f * self.omega_max**2
        columns = []
        for t in rotors:
            d = np.asarray(t.direction_frd, dtype=float)
            d = d / np.linalg.norm(d)
            spin = 1.0 if t.spin == "ccw" else -1.0
            moment = np.cross(np.asarray(t.position_frd_m, dtype=float), d) - spin * t.moment_constant_m * d
            columns.append(np.concatenate([d, moment]))
        wrench = np.array(columns).T  # (6, n): wrench [X Y Z K M N] per newton of each rotor's thrust
        self.allocation = wrench[[2, 3, 4, 5]]  # rows Z, K, M, N
        if np.linalg.matrix_rank(self.allocation) < 4:
            raise ValueError(f"{spec.name}: its rotors cannot make thrust, roll, pitch and yaw independently")
        self.pinv = np.linalg.pinv(self.allocation)

    def thrusts(self, thrust_n: float, moment_frd: np.ndarray) -> np.ndarray:
        """Rotor thrusts (N) for thrust f and moments M, with the saturation priority of the module docstring."""
        lo, hi = np.zeros_like(self.thrust_max_n), self.thrust_max_n
        base = self.pinv @ np.array([-thrust_n, 0.0, 0.0, 0.0])
        base = np.clip(base, lo, hi)
        roll_pitch = self.pinv @ np.array([0.0, moment_frd[0], moment_frd[1], 0.0])
        yaw = self.pinv @ np.array([0.0, 0.0, 0.0, moment_frd[2]])
        base = base + _fit_fraction(base, roll_pitch, lo, hi) * roll_pitch
        return base + _fit_fraction(base, yaw, lo, hi) * yaw

    def speeds(self, thrust_n: float, moment_frd: np.ndarray) -> np.ndarray:
        """Rotor speed commands (rad/s) in the vehicle file's rotor order."""
        t = self.thrusts(thrust_n, moment_frd)
        return np.clip(np.sqrt(np.maximum(t, 0.0) / self.k_f), self.omega_min, self.omega_max)


class MultirotorController:
    """The cascade of the module docstring for one multirotor: step(state, target, h) -> rotor speeds (rad/s)."""

    def __init__(self, spec: VehicleSpec, gains: MultirotorGains | None = None) -> None:
        self.spec = spec
        self.gains = g = gains or MultirotorGains()
        self.mass_kg = float(spec.mass_kg)
        self.inertia = np.asarray(spec.inertia_cg_kgm2, dtype=float).reshape(3, 3)
        self.mixer = RotorMixer(spec)
        a_max = g.acceleration_integral_max_mps2
        self.velocity_pid = Pid(
            kp=np.array([g.velocity_p_per_s, g.velocity_p_per_s, g.velocity_z_p_per_s]),
            ki=np.array([g.velocity_i_per_s2, g.velocity_i_per_s2, g.velocity_z_i_per_s2]),
            integral_limit=np.full(3, a_max),
            integral=np.zeros(3),
        )
        self.rate_pid = Pid(
            kp=np.array([g.rate_p_per_s, g.rate_p_per_s, g.yaw_rate_p_per_s]),
            ki=np.array([g.rate_i_per_s2, g.rate_i_per_s2, g.yaw_rate_i_per_s2]),
            integral_limit=np.full(3, 20.0),  # rad/s² of angular acceleration
            integral=np.zeros(3),
        )
        self.heading_rad: float | None = None  # the heading held while a yaw rate is not asked
        # the last values of each stage, for status and tests
        self.velocity_sp = np.zeros(3)
        self.acceleration_sp = np.zeros(3)
        self.thrust_n = 0.0
        self.attitude_sp = np.eye(3)
        self.rate_sp = np.zeros(3)
        self.moment = np.zeros(3)

    def hover_thrust_n(self) -> float:
        return self.mass_kg * GRAVITY_MPS2

    def reset(self) -> None:
        """Forget the integrals and the held heading (at arming, after a landing)."""
        self.velocity_pid.reset()
        self.rate_pid.reset()
        self.heading_rad = None

    # --- the loops ---------------------------------------------------------------------------------------------
    def position_loop(
        self, position_ned: np.ndarray, target_ned: np.ndarray, v_ff: np.ndarray, speed_max: float | None = None
    ) -> np.ndarray:
        """v_sp (NED m/s) = K_x (p_d − p) + v_ff, horizontal speed ≤ speed_max, climb/descent limits."""
        g = self.gains
        err = np.asarray(target_ned, dtype=float) - position_ned
        v = np.array([g.position_p_per_s * err[0], g.position_p_per_s * err[1], g.position_z_p_per_s * err[2]])
        return self.limit_velocity(v + v_ff, speed_max)

    def limit_velocity(self, v_ned: np.ndarray, speed_max: float | None = None) -> np.ndarray:
        """v_ned with its horizontal speed at most speed_max (default the gains') and the climb/descent limits."""
        g = self.gains
        limit = g.speed_max_mps if speed_max is None else min(speed_max, g.speed_max_mps)
        v = np.array(v_ned, dtype=float)
        speed = math.hypot(v[0], v[1])
        if speed > limit:
            v[:2] *= limit / speed
        v[2] = min(max(v[2], -g.climb_max_mps), g.descent_max_mps)
        return v

    def velocity_loop(self, velocity_ned: np.ndarray, velocity_sp: np.ndarray, h: float) -> np.ndarray:
        """a_sp (NED m/s²): PI on the velocity error."""
        return self.velocity_pid.step(velocity_sp - velocity_ned, h)

    def thrust_vector(self, acceleration_sp: np.ndarray) -> np.ndarray:
        """F = m (g e3 − a_sp) (NED N, pointing where the body's z axis must point), tilt and minimum limited."""
        g = self.gains
        f = self.mass_kg * (GRAVITY_MPS2 * E3 - acceleration_sp)
        f[2] = max(f[2], 0.2 * self.mass_kg * GRAVITY_MPS2)
        horizontal = math.hypot(f[0], f[1])
        limit = f[2] * math.tan(math.radians(g.tilt_max_deg))
        if horizontal > limit:
            f[:2] *= limit / horizontal
        return f

    def attitude_loop(self, r: np.ndarray, r_d: np.ndarray, yaw_rate_ff: float) -> np.ndarray:
        """Ω_sp (FRD rad/s) = −K_R e_R + ψ̇_ff Rᵀ e3, limited."""
        g = self.gains
        e_r = attitude_error(r, r_d)
        omega = -np.array([g.attitude_p_per_s, g.attitude_p_per_s, g.yaw_p_per_s]) * e_r + yaw_rate_ff * (r.T @ E3)
        limits = (g.rate_max_rad_s, g.rate_max_rad_s, g.yaw_rate_max_rad_s)
        return np.array([min(max(float(w), -lim), lim) for w, lim in zip(omega, limits, strict=True)])

    def rate_loop(self, rates_frd: np.ndarray, rate_sp: np.ndarray, h: float) -> np.ndarray:
        """M (FRD N m) = J (PI of the rate error) + Ω × J Ω."""
        alpha = self.rate_pid.step(rate_sp - rates_frd, h)
        return self.inertia @ alpha + rotations.cross(rates_frd, self.inertia @ rates_frd)

    # --- one step -------------------------------------------------------------------------------------------------
    def step(self, state: NedState, target: FlightTarget, h: float) -> np.ndarray:
        """Rotor speed commands (rad/s, vehicle-file order) after a control step of h s (sim time) at `state`."""
        r = rotation_of(state)
        velocity = r @ state.nu_frd[:3]
        if target.position_ned_m is not None:
            self.velocity_sp = self.position_loop(
                state.position_ned_m, target.position_ned_m, target.velocity_ned_mps, target.speed_max_mps
            )
        else:
            self.velocity_sp = self.limit_velocity(target.velocity_ned_mps, target.speed_max_mps)
        self.acceleration_sp = self.velocity_loop(velocity, self.velocity_sp, h)
        force = self.thrust_vector(self.acceleration_sp)
        heading, yaw_rate_ff = self._heading(state, target, h)
        self.attitude_sp = desired_attitude(force, heading)
        self.thrust_n = float(force @ (r @ E3))
        self.rate_sp = self.attitude_loop(r, self.attitude_sp, yaw_rate_ff)
        self.moment = self.rate_loop(state.nu_frd[3:], self.rate_sp, h)
        return self.mixer.speeds(max(self.thrust_n, 0.0), self.moment)

    def _heading(self, state: NedState, target: FlightTarget, h: float) -> tuple[float, float]:
        """The heading to hold and the yaw-rate feed-forward: the target's heading, or the held heading advanced by
        the asked yaw rate (kept within 1 rad of the vehicle's so that it cannot run away)."""
        psi = float(state.rpy_ned_rad[2])
        if target.heading_rad is not None:
            self.heading_rad = float(target.heading_rad)
            return self.heading_rad, 0.0
        if self.heading_rad is None:
            self.heading_rad = psi
        rate = float(np.clip(target.yaw_rate_rad_s, -self.gains.yaw_rate_max_rad_s, self.gains.yaw_rate_max_rad_s))
        held = self.heading_rad + rate * max(h, 0.0)
        lead = float(ssa(held - psi))
        self.heading_rad = psi + float(np.clip(lead, -1.0, 1.0))
        return self.heading_rad, rate

    def idle(self) -> np.ndarray:
        """Rotor speeds when disarmed (the rotors' minimum command, 0 rad/s for the X500)."""
        return self.mixer.omega_min.copy()


def cannot_fly(spec: VehicleSpec) -> str | None:
    """Why the multirotor controller cannot fly a vehicle of this spec, or None."""
    if spec.domain != "aerial":
        return f"the flight controller flies multirotors (domain aerial); {spec.name} is {spec.domain}"
    try:
        RotorMixer(spec)
    except ValueError as exc:
        return str(exc).split(": ", 1)[-1]
    return None


# ------------------------------------------------------------------------------------------------ flight phases
PHASES = ("disarmed", "takeoff", "hold", "velocity", "mission", "landing")  # status codes 0 … 5


@dataclass
class FlightMission:
    """Waypoints (NED m) flown in order; one is reached within acceptance_radius_m (3-D); the last is then held
    (or, loop, the first flown again)."""

    points_ned: list[np.ndarray]
    acceptance_radius_m: float = 1.0
    speed_mps: float | None = None
    loop: bool = False
    index: int = 0
    done: bool = False

    def current(self, position_ned: np.ndarray) -> np.ndarray:
        """The waypoint to fly to from `position_ned`, advancing past those reached."""
        while not self.done and np.linalg.norm(self.points_ned[self.index] - position_ned) <= self.acceptance_radius_m:
            if self.index + 1 < len(self.points_ned):
                self.index += 1
            elif self.loop:
                self.index = 0
            else:
                self.done = True
        return self.points_ned[self.index]


@dataclass
class PilotSettings:
    """The flight-phase settings of a MultirotorPilot (controller parameters of the same names)."""

    takeoff_height_m: float = 5.0  # climb of a takeoff, above where it starts
    land_speed_mps: float = 0.7  # descent speed of a landing
    landed_after_s: float = 1.0  # a landing ends (rotors off) after descending slower than 0.1 m/s this long
    cmd_vel_timeout_s: float = 0.5  # without a new velocity set-point for this long, hold the position reached
    reached_m: float = 0.3  # a takeoff ends within this of its altitude
    approach_height_m: float = 2.0  # landing on a vessel: height above it where the drone lines up first
    align_radius_m: float = 0.3  # ... and starts its descent once within this horizontal distance of it
    align_speed_mps: float = 0.3  # ... and within this horizontal speed of it


class MultirotorPilot:
    """The flight phases over a MultirotorController (ROS-free; the ROS controller only converts messages).

    disarmed: rotors at their minimum (0 rad/s). takeoff: climb takeoff_height_m above the start (or to the
    mission's altitude), then the mission or hold. hold: a position and heading. velocity: NED velocity and yaw
    rate set-points, hold where it is after cmd_vel_timeout_s without one. mission: waypoints, then hold the last.
    landing: hold x, y and descend at land_speed_mps; disarmed once it has stopped descending for landed_after_s
    (on the ground, the sea or a deck). Landing on a moving vessel (land_on, update_vessel): fly over the vessel's
    reference point with its velocity as feed-forward, line up approach_height_m above it until within
    align_radius_m and align_speed_mps of it, then descend at land_speed_mps relative to it; landed when its
    descent relative to the vessel stays below 0.1 m/s for landed_after_s. A pilot starts in `hold` at its first
    state (a drone spawned in the air stays there; on the ground it idles in place) unless told to take off or
    disarmed (disarm()).
    """

    def __init__(self, spec: VehicleSpec, gains: MultirotorGains | None = None, settings: PilotSettings | None = None):
        self.controller = MultirotorController(spec, gains)
        self.settings = settings or PilotSettings()
        self.phase = "hold"
        self.hold_ned: np.ndarray | None = None
        self.heading_rad: float | None = None
        self.mission: FlightMission | None = None
        self.velocity_ned = np.zeros(3)
        self.yaw_rate_rad_s = 0.0
        self._velocity_stamp_s = -math.inf
        self._takeoff_ned: np.ndarray | None = None
        self._slow_since_s: float | None = None
        self.target: FlightTarget = FlightTarget()
        self.last_state: NedState | None = None
        self.vessel: tuple[np.ndarray, np.ndarray] | None = None  # landing on: its position and velocity, NED
        self._descending = False

    @property
    def armed(self) -> bool:
        return self.phase != "disarmed"

    # --- commands (each returns (accepted, message)) ---------------------------------------------------------
    def takeoff(self, state: NedState, altitude_ned_m: float | None = None) -> tuple[bool, str]:
        """Arm and climb takeoff_height_m above `state` (or to NED z altitude_ned_m if higher)."""
        if self.phase in ("takeoff",):
            return False, "already taking off"
        z = state.position_ned_m[2] - self.settings.takeoff_height_m
        if altitude_ned_m is not None:
            z = min(z, altitude_ned_m)
        if self.phase == "disarmed":
            self.controller.reset()
        self._takeoff_ned = np.array([state.position_ned_m[0], state.position_ned_m[1], z])
        self.heading_rad = float(state.rpy_ned_rad[2]) if self.heading_rad is None else self.heading_rad
        self.phase = "takeoff"
        return True, f"taking off to {-z:.1f} m (map z)"

    def land(self, state: NedState) -> tuple[bool, str]:
        """Descend where it is and disarm on touchdown."""
        if self.phase == "disarmed":
            return False, "disarmed (already landed)"
        self.hold_ned = state.position_ned_m.copy()
        self.phase, self._slow_since_s, self.vessel = "landing", None, None
        return True, "landing"

    def land_on(self, state: NedState, position_ned: np.ndarray, velocity_ned: np.ndarray) -> tuple[bool, str]:
        """Land on a (moving) vessel whose reference point is at `position_ned` moving at `velocity_ned`; keep it
        current with update_vessel."""
        if self.phase == "disarmed":
            return False, "disarmed (already landed)"
        self.update_vessel(position_ned, velocity_ned)
        self.hold_ned = state.position_ned_m.copy()
        self.phase, self._slow_since_s, self._descending = "landing", None, False
        return True, "landing on the vessel"

    def update_vessel(self, position_ned: np.ndarray, velocity_ned: np.ndarray) -> None:
        """The latest position (NED m) and velocity (NED m/s) of the vessel to land on."""
        self.vessel = (np.asarray(position_ned, dtype=float).copy(), np.asarray(velocity_ned, dtype=float).copy())

    def disarm(self) -> None:
        """Rotors to their minimum now (a drone resting on a deck or the ground before its takeoff)."""
        self.phase = "disarmed"
        self.controller.reset()

    def goto(self, position_ned: np.ndarray, heading_rad: float | None) -> tuple[bool, str]:
        """Fly to a point and hold it (and a heading, if given)."""
        if self.phase == "disarmed":
            return False, "disarmed: take off first"
        self.hold_ned = np.asarray(position_ned, dtype=float).copy()
        if heading_rad is not None:
            self.heading_rad = heading_rad
        self.phase, self.mission = "hold", None
        return True, "going to the goal"

    def set_velocity(self, velocity_ned: np.ndarray, yaw_rate_rad_s: float, t_s: float) -> tuple[bool, str]:
        """A velocity set-point (NED m/s) and a yaw rate (rad/s, FRD r), valid cmd_vel_timeout_s from t_s."""
        if self.phase in ("disarmed", "takeoff", "landing"):
            return False, f"{self.phase}: velocity set-points are taken while flying"
        self.velocity_ned = np.asarray(velocity_ned, dtype=float).copy()
        self.yaw_rate_rad_s, self._velocity_stamp_s = float(yaw_rate_rad_s), float(t_s)
        self.phase, self.mission = "velocity", None
        return True, "velocity"

    def set_mission(self, mission: FlightMission) -> None:
        """Fly a mission (after the takeoff, if one is under way)."""
        self.mission = mission
        if self.phase not in ("takeoff", "disarmed"):
            self.phase = "mission"

    # --- control --------------------------------------------------------------------------------------------
    def step(self, state: NedState, h: float) -> np.ndarray:
        """Rotor speeds (rad/s) for this state after a control step h (s)."""
        target = self.plan(state)
        if target is None:
            return self.controller.idle()
        return self.controller.step(state, target, h)

    def plan(self, state: NedState) -> FlightTarget | None:
        """The flight phases at this state: the target of the cascade, or None when disarmed (rotors idle).
        (lotusim_autonomy.multirotor_batch steps the cascade of many pilots' targets at once.)"""
        self.last_state = state
        if self.hold_ned is None:
            self.hold_ned = state.position_ned_m.copy()
        if self.heading_rad is None:
            self.heading_rad = float(state.rpy_ned_rad[2])
        if self.phase == "disarmed":
            return None
        self.target = self._target(state)
        if self.phase == "disarmed":  # the landing ended in this step
            return None
        return self.target

    def _hold(self, position_ned: np.ndarray) -> None:
        self.hold_ned, self.phase = position_ned.copy(), "hold"

    def _target(self, state: NedState) -> FlightTarget:
        s, p = self.settings, state.position_ned_m
        if self.phase == "takeoff":
            if abs(p[2] - self._takeoff_ned[2]) <= s.reached_m:
                if self.mission is not None:
                    self.phase = "mission"
                else:
                    self._hold(self._takeoff_ned)
            else:
                return FlightTarget(self._takeoff_ned, heading_rad=self.heading_rad)
        if self.phase == "velocity":
            if state.t_s - self._velocity_stamp_s > s.cmd_vel_timeout_s:
                self.heading_rad = float(state.rpy_ned_rad[2])
                self._hold(p)
            else:
                return FlightTarget(velocity_ned_mps=self.velocity_ned, yaw_rate_rad_s=self.yaw_rate_rad_s)
        if self.phase == "mission":
            waypoint = self.mission.current(p)
            if self.mission.done:
                self._hold(waypoint)
            else:
                return FlightTarget(waypoint, heading_rad=self.heading_rad, speed_max_mps=self.mission.speed_mps)
        if self.phase == "landing":
            return self._landing_target(state)
        return FlightTarget(self.hold_ned, heading_rad=self.heading_rad)

    def _landing_target(self, state: NedState) -> FlightTarget:
        """Hold x, y (or follow the vessel landed on); descend at land_speed_mps relative to the ground or the
        vessel (a point below, reached at that speed by the position loop); disarm after the touchdown."""
        s, p = self.settings, state.position_ned_m
        k_z = self.controller.gains.position_z_p_per_s
        v_ref = self.vessel[1] if self.vessel is not None else np.zeros(3)
        descent = float((rotation_of(state) @ state.nu_frd[:3])[2] - v_ref[2])
        if descent < 0.1 and (self.vessel is None or self._descending):
            self._slow_since_s = state.t_s if self._slow_since_s is None else self._slow_since_s
            if state.t_s - self._slow_since_s >= s.landed_after_s:
                self.disarm()
                return FlightTarget(p)
        else:
            self._slow_since_s = None
        if self.vessel is None:
            below = p[2] + s.land_speed_mps / k_z
            return FlightTarget(np.array([self.hold_ned[0], self.hold_ned[1], below]), heading_rad=self.heading_rad)
        where, velocity = self.vessel
        offset = math.hypot(where[0] - p[0], where[1] - p[1])
        v = rotation_of(state) @ state.nu_frd[:3]
        lined_up = (
            offset <= s.align_radius_m and math.hypot(v[0] - velocity[0], v[1] - velocity[1]) <= s.align_speed_mps
        )
        if not self._descending and lined_up and p[2] <= where[2] - s.approach_height_m + s.reached_m:
            self._descending = True
        z = p[2] + s.land_speed_mps / k_z if self._descending else where[2] - s.approach_height_m
        v_ff = np.array([velocity[0], velocity[1], velocity[2] if self._descending else 0.0])
        return FlightTarget(np.array([where[0], where[1], z]), v_ff, heading_rad=self.heading_rad)
