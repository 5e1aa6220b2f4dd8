"""A vehicle model as the physics consumes it: the validated, numeric form of config/vehicles/<model>.yaml.

Conventions (Fossen, Handbook of Marine Craft Hydrodynamics and Motion Control, 2nd ed. 2021, ch. 2-3 and 6-8):
- Body frame FRD (x forward, y starboard, z down), origin CO (the body-fixed reference point); the world frame
  used inside the physics is NED. Conversion to ROS ENU/FLU happens only in lotusim_core.base.frames.
- Generalised velocity nu = [u, v, w, p, q, r] (m/s, rad/s), generalised force tau = [X, Y, Z, K, M, N] (N, N m).
- All matrices are given as positive magnitudes in the sense of the equation of motion
      (M_RB + M_A) nu_r_dot + C_RB(nu) nu + C_A(nu_r) nu_r + D(nu_r) nu_r + g(eta) = tau
  i.e. M_A = -diag(X_udot, ...) (positive definite), D_lin = -diag(X_u, ...), D_quad = -diag(X_u|u|, ...) with
  the quadratic damping force -(D_quad @ diag(|nu_r|)) nu_r.

This module only defines the data; lotusim_core.base.catalogue loads and validates it from YAML, and
lotusim_physics builds the batched fleet arrays from it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class ThrusterSpec:
    """One thruster (propeller), fixed to the body.

    Thrust along `direction_frd` (unit vector) applied at `position_frd_m` (from CO, FRD).
    Command: the rotor speed set-point in `command_unit` ("rpm", "rps", "rad_s") or a normalised throttle
    ("normalized", in [-1, 1], for curve models such as t200). The rotor follows the command with a
    first-order lag `time_constant_s`.
    Thrust models:
      - "quadratic": T = rho * D^4 * K_T * n|n|, n in rev/s (Fossen 2021 eq. 9.3 with constant K_T);
        reverse thrust uses kt_reverse when given. Reaction torque Q = rho D^5 K_Q n|n| about the axis.
      - "t200": Blue Robotics T200 thrust vs. normalised command, [SaldarriagaMesa2025] Eq. 16, Table 2
        parameters in `curve` (the catalogue file says which).
      - "glf": the same generalised logistic curve (Eq. 16 form, also VRX usv_gazebo_thrust_plugin mappingType 1)
        for other thrusters, e.g. the WAM-V's; parameters in `curve`.
      - "rotor": a multirotor motor and propeller (gz MulticopterMotorModel's equations [GzSim2026],
        lotusim_physics.rotors): motor speed w (rad/s) follows the command with `time_constant_s` when speeding up
        and `time_constant_down_s` when slowing down; thrust T = motor_constant w^2 along `direction_frd`, yaw
        drag torque -spin moment_constant_m T about it (spin +1 "ccw", -1 "cw", seen from the side the thrust
        points to); rotor drag -|w| rotor_drag_coefficient V_perp and rolling moment
        -|w| rolling_moment_coefficient V_perp against the air velocity V_perp across the rotor axis.
    `curve` keys for "t200" and "glf" (thrust in N, cmd in [-1, 1]):
        T(cmd) = 0                                                   for |cmd| <= deadband
        T(cmd) = a_pos + (k_pos - a_pos) / (c_pos + exp(-b_pos (cmd - m_pos)))^(1 / nu_pos)   for cmd > deadband
        T(cmd) = a_neg + (k_neg - a_neg) / (c_neg + exp(-b_neg (cmd - m_neg)))^(1 / nu_neg)   for cmd < -deadband
        then clipped to [max_force_rev_n, max_force_fwd_n] (max_force_rev_n < 0).
    """

    name: str
    position_frd_m: np.ndarray  # (3,)
    direction_frd: np.ndarray  # (3,) unit
    model: str  # "quadratic" | "t200"
    command_unit: str  # "rpm" | "rps" | "rad_s" | "normalized"
    command_min: float
    command_max: float
    time_constant_s: float
    diameter_m: float = 0.0
    kt: float = 0.0
    kt_reverse: float | None = None
    kq: float = 0.0  # torque coefficient (reaction moment about the axis, sign = propeller handedness)
    curve: dict[str, float] = field(default_factory=dict)  # parameters of a curve model (t200)
    # "rotor" model only (0 / "" otherwise)
    motor_constant: float = 0.0  # k_f, N / (rad/s)^2
    moment_constant_m: float = 0.0  # k_m, m (yaw drag torque per newton of thrust)
    spin: str = ""  # "ccw" | "cw" about the thrust direction
    time_constant_down_s: float = 0.0  # motor slow-down time constant, s (time_constant_s is the speed-up one)
    rotor_drag_coefficient: float = 0.0  # C_D, N s^2 / (rad m): F = -|w| C_D V_perp (N)
    rolling_moment_coefficient: float = 0.0  # C_R, M = -|w| C_R V_perp (N m)


@dataclass(frozen=True)
class FinSpec:
    """One control surface (fin / rudder / elevator), N-fin model of [Meyers2025] Eqs. 4-9.

    The fin sits at `position_frd_m` (centre of pressure, from CO). `roll_angle_rad` is the fin's angular
    position around the body x axis (0 = top vertical fin, pi/2 = starboard horizontal fin, ...), which sets its
    lift direction. Lift = 1/2 rho |v|^2 area C_L(alpha), C_L piecewise linear: slope `lift_slope_per_rad` up to
    `stall_angle_rad`, then `post_stall_slope_per_rad`; drag = 1/2 rho |v|^2 area (cd0 + k alpha^2 form via
    `induced_drag_factor`). Deflection follows the command with `time_constant_s` and `rate_limit_rad_s`,
    limited to +-`max_angle_rad`.
    """

    name: str
    position_frd_m: np.ndarray  # (3,)
    roll_angle_rad: float
    area_m2: float
    lift_slope_per_rad: float
    stall_angle_rad: float
    post_stall_slope_per_rad: float
    cd0: float
    induced_drag_factor: float
    max_angle_rad: float
    time_constant_s: float
    rate_limit_rad_s: float


@dataclass(frozen=True)
class WindSpec:
    """Wind load coefficients of a surface vessel ([SaldarriagaMesa2025] wind model / Fossen 2021 sec. 10.1)."""

    frontal_area_m2: float
    lateral_area_m2: float
    length_m: float
    cx: float
    cy: float
    cn: float
    air_density_kgm3: float = 1.225


@dataclass(frozen=True)
class SurfaceHydrostatics:
    """Hydrostatics of a surface vessel (Fossen 2021 sec. 4.2): restoring in heave, roll, pitch about the
    equilibrium waterline. Buoyancy grows with immersion and vanishes above the waterline (no buoyancy when
    the hull is out of the water)."""

    waterplane_area_m2: float
    gm_transverse_m: float
    gm_longitudinal_m: float
    draft_m: float  # equilibrium draft (m); the body origin CO sits at the waterline at rest
    # where the sea is sampled for the wave loads: (K, 2) points [x, y] (m, FRD from CO, on the waterline);
    # None: a grid over the waterplane rectangle (lotusim_physics.fleet.hull_points_frd)
    wave_points_frd: np.ndarray | None = None


@dataclass(frozen=True)
class BodyLiftSpec:
    """Hull lift of a slender body of revolution (Prestero 2001 sec. 3.5.4 after Hoerner 1965, "body lift").

    A hull moving with a cross-flow component feels a lift force against that component, proportional to the
    forward speed, applied at the hull's centre of pressure on the body x axis:
        Y = -1/2 rho d^2 c_yd |u_r| v_r,   Z = -1/2 rho d^2 c_yd |u_r| w_r   at (x_cp, 0, 0)
    i.e. Prestero's Y_uvl = Z_uwl = -1/2 rho d^2 c_yd and M_uwl = -N_uvl = -1/2 rho d^2 c_yd x_cp."""

    diameter_m: float  # d: maximum hull diameter, m
    lift_coefficient_per_rad: float  # c_yd: body-lift coefficient per radian of angle of attack (Hoerner)
    centre_of_pressure_x_m: float  # x_cp: body x of the centre of pressure of the hull lift (from CO, FRD), m


@dataclass(frozen=True)
class DeckSpec:
    """A flat deck on a surface vessel where an aerial vehicle can land (lotusim_physics.decks): a rectangle
    `length_m` x `beam_m` centred at (centre_x_m, centre_y_m) (FRD from CO), `height_m` above CO (the waterline)."""

    height_m: float
    length_m: float
    beam_m: float
    centre_x_m: float = 0.0
    centre_y_m: float = 0.0


@dataclass(frozen=True)
class HullBoxSpec:
    """The box that stands for a vessel's hull in collisions (lotusim_core.base.hull_box): `length_m` (body x) x
    `beam_m` (y) x `height_m` (z), centred at `centre_frd_m` (FRD from CO). Optional in a vehicle file: without it
    the box is derived from the file's other keys (hull_box.hull_box_of)."""

    length_m: float
    beam_m: float
    height_m: float
    centre_frd_m: np.ndarray = field(default_factory=lambda: np.zeros(3))


@dataclass(frozen=True)
class AerialSpec:
    """What an aerial vehicle (a multirotor) needs beyond its rigid body and rotors: where it touches a surface
    below it, and the air it flies in. Its damping matrices are body drag against the air (not the water)."""

    contact_height_m: float  # distance from CO down (body z, FRD) to the lowest point of the landing gear, m
    air_density_kgm3: float = 1.225


@dataclass(frozen=True)
class VehicleSpec:
    """Everything the physics needs about one vehicle model (SI units, body FRD, origin CO)."""

    name: str
    domain: str  # "underwater" | "surface" | "aerial"
    description: str
    mass_kg: float
    inertia_cg_kgm2: np.ndarray  # (3, 3) about the CG, body axes
    cg_frd_m: np.ndarray  # (3,) CG from CO
    added_mass: np.ndarray  # (6, 6) M_A, symmetric positive semi-definite
    damping_linear: np.ndarray  # (6, 6) D_lin
    damping_quadratic: np.ndarray  # (6, 6) D_quad
    # underwater hydrostatics: displaced volume and centre of buoyancy (used when domain == "underwater")
    volume_m3: float = 0.0
    cb_frd_m: np.ndarray = field(default_factory=lambda: np.zeros(3))
    surface: SurfaceHydrostatics | None = None  # used when domain == "surface"
    # vertical extent of the hull about the centre of buoyancy (underwater vehicles; e.g. the hull diameter), m.
    # Near the surface the buoyancy is scaled by the submerged fraction of this extent; 0 = not modelled (full
    # buoyancy at any depth).
    hull_height_m: float = 0.0
    body_lift: BodyLiftSpec | None = None  # hull lift of a slender body (None: no hull lift)
    # C_A(nu_r) in Fossen's skew-symmetric form; if a vehicle file switches Munk-moment terms off it must say
    # why (coriolis_note); the physics never drops terms silently.
    coriolis_added_mass: str = "full"  # "full" | "no_munk" | "off"
    coriolis_note: str = ""
    thrusters: tuple[ThrusterSpec, ...] = ()
    fins: tuple[FinSpec, ...] = ()
    wind: WindSpec | None = None
    aerial: AerialSpec | None = None  # used when domain == "aerial"
    deck: DeckSpec | None = None  # a surface vessel's landing deck (None: drones cannot land on it)
    hull_box: HullBoxSpec | None = None  # the hull as a box for collisions (None: derived, hull_box.hull_box_of)
    water_density_kgm3: float = 1025.0
    sensors: dict = field(default_factory=dict)  # default sensor suite (schema: docs/sensors.md)
    sources: dict[str, str] = field(default_factory=dict)  # key -> citation, for every number
