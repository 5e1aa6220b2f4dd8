"""The batched fleet: every vessel of a simulation as rows of a few arrays, advanced together by one compiled
call per step (integrators.step_fleet). ROS-free; the dynamics node wires it to topics.

State (internal frames NED / FRD, see lotusim_core.base.frames for ROS ENU / FLU):
    position_ned (N, 3) m, q_ned_frd (N, 4) w x y z, nu (N, 6) FRD, nu_dot (N, 6) FRD (last step), frozen (N,)
These properties are **views** into the fleet arrays, in the row order of `names`: cheap, always current, but
only valid until the next add()/remove() (which may reallocate or reorder rows). Copy them to keep them, and
change the state through set_pose(), not by writing into the views.

Vessels are added and removed between steps in amortised O(1): arrays grow by doubling, a removed vessel's row
is filled by the last row (swap-remove), and its actuator rows are left dead in the actuator pools until the
pools are compacted (when more than half of them are dead). Heterogeneous fleets (any mix of models, numbers of
thrusters and fins) share the same arrays: each vessel row records where its thrusters and fins are. Aerial
vehicles (multirotors) are rows of the same arrays, kept after the marine ones (a marine vessel added later takes
the first aerial row, which moves to the end), and are stepped by a kernel of their own (aerial_integrator), so
that the marine kernel is the same machine code with or without them.

Commands (held until changed) are validated before they touch the state: a wrong length or a non-finite value
raises ValueError naming the vessel and leaves everything unchanged. A vessel whose state becomes non-finite or
explodes (or whose environment inputs are non-finite) is frozen at its last good state and reported by step();
the other vessels continue. set_pose() (a move) brings a frozen vessel back.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable, Sequence

import numpy as np

from lotusim_core.base import frames
from lotusim_core.base.fossen import inertia_about_co, m_rb
from lotusim_core.base.hull_box import bounding_radius_m, hull_box_of
from lotusim_core.base.vehicle_spec import VehicleSpec
from lotusim_env.waves import WaveComponents
from lotusim_physics import layout as L
from lotusim_physics.added_mass import c_a_mask
from lotusim_physics.aerial_integrator import step_aerial
from lotusim_physics.collisions import Collider, CollisionEvent, ContactParams, FleetState, Obstacles
from lotusim_physics.decks import deck_contacts
from lotusim_physics.faults import REASONS, ContactEvent, FaultReport
from lotusim_physics.integrators import METHODS, step_fleet
from lotusim_physics.sea_over_hulls import hull_grid_frd, sea_at_co, sea_over_hulls
from lotusim_physics.thrusters import UNIT_TO_RPS, decay_factor, t200_curve_array

UNIT_TO_RAD_S = {"rad_s": 1.0, "rpm": 2.0 * math.pi / 60.0, "rps": 2.0 * math.pi}  # rotor commands -> rad/s
SPIN_SIGN = {"ccw": 1.0, "cw": -1.0}

EnvField = Callable[[float, np.ndarray], np.ndarray]
# wave sample points of a surface vessel: a grid over its waterplane rectangle (length x beam), WAVE_ROWS across
# (port, starboard) and one row along every WAVE_SPACING_M of length (at least 3, at most 64): the spacing resolves
# waves down to twice it without aliasing, and sets how short waves average out over a long hull
WAVE_ROWS, WAVE_SPACING_M, WAVE_MAX_LONG = 2, 2.0, 64
# collisions: a single step looks this many steps ahead (lotusim_physics.collisions.Collider.near); when nothing is
# within reach in that window its other steps are not checked
CHECK_AHEAD_STEPS = 10


def _vec(values, size: int, what: str, vessel: str) -> np.ndarray:
    arr = np.asarray(values, dtype=float).reshape(-1)
    if arr.shape != (size,):
        raise ValueError(f"vessel '{vessel}': {what} expects {size} values, got {arr.size}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"vessel '{vessel}': {what} must be finite, got {arr.tolist()}")
    return arr


def _mat6(values, what: str, vessel: str) -> np.ndarray:
    arr = np.asarray(values, dtype=float)
    if arr.shape != (6, 6) or not np.all(np.isfinite(arr)):
        raise ValueError(f"vessel '{vessel}' (model {what}): expected a finite 6x6 matrix, got shape {arr.shape}")
    return arr


def pack_vessel(spec: VehicleSpec, name: str, rho: float, g: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Parameter row (V_WIDTH,), thruster rows (k, T_WIDTH) and fin rows (m, F_WIDTH) of one vessel.

    Raises ValueError (naming the vessel, the model and the reason) for inputs the physics cannot run."""
    where = f"vessel '{name}' (model {spec.name})"
    if not (math.isfinite(spec.mass_kg) and spec.mass_kg > 0.0):
        raise ValueError(f"{where}: mass_kg must be positive, got {spec.mass_kg}")
    inertia = np.asarray(spec.inertia_cg_kgm2, dtype=float)
    if inertia.shape != (3, 3) or not np.all(np.isfinite(inertia)):
        raise ValueError(f"{where}: inertia_cg_kgm2 must be a finite 3x3 matrix")
    r_g = _vec(spec.cg_frd_m, 3, "cg_frd_m", name)
    r_b = _vec(spec.cb_frd_m, 3, "cb_frd_m", name)
    m_a = _mat6(spec.added_mass, f"{spec.name} added_mass", name)
    d_lin = _mat6(spec.damping_linear, f"{spec.name} damping_linear", name)
    d_quad = _mat6(spec.damping_quadratic, f"{spec.name} damping_quadratic", name)
    mass_matrix = m_rb(spec.mass_kg, inertia, r_g) + m_a
    try:
        np.linalg.cholesky(0.5 * (mass_matrix + mass_matrix.T))
    except np.linalg.LinAlgError:
        raise ValueError(f"{where}: M = M_RB + M_A is not positive definite") from None
    row = np.zeros(L.V_WIDTH)
    row[L.V_MASS] = spec.mass_kg
    row[L.V_W] = spec.mass_kg * g
    row[L.V_RG : L.V_RG + 3] = r_g
    row[L.V_RB : L.V_RB + 3] = r_b
    row[L.V_IO : L.V_IO + 9] = inertia_about_co(inertia, spec.mass_kg, r_g).reshape(-1)
    row[L.V_MINV : L.V_MINV + 36] = np.linalg.inv(mass_matrix).reshape(-1)
    row[L.V_MA : L.V_MA + 36] = m_a.reshape(-1)
    row[L.V_DL : L.V_DL + 36] = d_lin.reshape(-1)
    row[L.V_DQ : L.V_DQ + 36] = d_quad.reshape(-1)
    try:
        row[L.V_CAMASK : L.V_CAMASK + 36] = c_a_mask(spec.coriolis_added_mass).reshape(-1)
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None
    row[L.V_CA_MODE] = {"full": 0.0, "no_munk": 1.0, "off": 2.0}[spec.coriolis_added_mass]
    minv = row[L.V_MINV : L.V_MINV + 36].reshape(6, 6)
    row[L.V_DIAG] = float(all(not np.any(m - np.diag(np.diag(m))) for m in (m_a, d_lin, d_quad, minv)))
    if spec.domain == "underwater":
        if not (math.isfinite(spec.volume_m3) and spec.volume_m3 >= 0.0):
            raise ValueError(f"{where}: volume_m3 must be >= 0, got {spec.volume_m3}")
        row[L.V_B] = rho * g * spec.volume_m3
        row[L.V_HULLH] = spec.hull_height_m
        if spec.body_lift is not None:
            bl = spec.body_lift
            row[L.V_BL_K] = 0.5 * bl.diameter_m**2 * bl.lift_coefficient_per_rad
            row[L.V_BL_X] = bl.centre_of_pressure_x_m
    elif spec.domain == "surface":
        hs = spec.surface
        if hs is None or not (hs.waterplane_area_m2 > 0.0):
            raise ValueError(f"{where}: a surface vessel needs surface hydrostatics with waterplane_area_m2 > 0")
        row[L.V_SURFACE] = 1.0
        row[L.V_AWP] = hs.waterplane_area_m2
        row[L.V_GMT] = hs.gm_transverse_m
        row[L.V_GML] = hs.gm_longitudinal_m
        row[L.V_BOXDRAFT] = spec.mass_kg / (rho * hs.waterplane_area_m2)
        row[L.V_HULL_KIND] = hull_kind(hull_points_frd(spec))
        if spec.wind is not None:
            w = spec.wind
            row[L.V_HASWIND] = 1.0
            row[L.V_AF], row[L.V_AL], row[L.V_LEN] = w.frontal_area_m2, w.lateral_area_m2, w.length_m
            row[L.V_CX], row[L.V_CY], row[L.V_CN] = w.cx, w.cy, w.cn
            row[L.V_RHOAIR] = w.air_density_kgm3
    elif spec.domain == "aerial":
        if spec.aerial is None:
            raise ValueError(f"{where}: an aerial vehicle needs its aerial mapping (contact_height_m)")
        row[L.V_AERIAL] = 1.0
        row[L.V_CONTACT_H] = spec.aerial.contact_height_m
    else:
        raise ValueError(f"{where}: domain must be 'underwater', 'surface' or 'aerial', got {spec.domain!r}")
    if not np.all(np.isfinite(row)):
        raise ValueError(f"{where}: non-finite parameter")
    return row, _pack_thrusters(spec, where), _pack_fins(spec, where)


def wave_rectangle_m(spec: VehicleSpec) -> tuple[float, float]:
    """(length, beam) m of the waterplane rectangle the default wave sample points of a surface vessel cover: the
    vessel's length (its wind length_m; √(2 A_wp) without a wind section) and the beam A_wp / length that keeps
    its waterplane area."""
    area = spec.surface.waterplane_area_m2
    length = spec.wind.length_m if spec.wind is not None and spec.wind.length_m > 0.0 else math.sqrt(2.0 * area)
    return length, area / length


def hull_points_frd(spec: VehicleSpec) -> np.ndarray:
    """(K, 2) points [x, y] (m, FRD from CO) where the sea is sampled for a surface vessel's wave loads: its
    vehicle file's `surface.wave_points_frd`, else a grid over wave_rectangle_m (WAVE_ROWS across, one row
    per WAVE_SPACING_M along, 3 to WAVE_MAX_LONG)."""
    if spec.surface.wave_points_frd is not None:
        return np.asarray(spec.surface.wave_points_frd, dtype=float)
    length, beam = wave_rectangle_m(spec)
    return hull_grid_frd(length, beam, wave_grid_size(length), WAVE_ROWS)


def hull_kind(points_frd: np.ndarray) -> float:
    """A key (float, exact) of a set of sample points: vessels with the same points are sampled in one batch."""
    return float(zlib.crc32(np.ascontiguousarray(points_frd, dtype=np.float64).tobytes()))


def wave_grid_size(length_m: float) -> int:
    """Sample points along a hull of `length_m`: one per WAVE_SPACING_M, within [3, WAVE_MAX_LONG]."""
    return int(min(WAVE_MAX_LONG, max(3, math.ceil(length_m / WAVE_SPACING_M))))


def _pack_thrusters(spec: VehicleSpec, where: str) -> np.ndarray:
    rows = np.zeros((len(spec.thrusters), L.T_WIDTH))
    for k, t in enumerate(spec.thrusters):
        r = rows[k]
        d = np.asarray(t.direction_frd, dtype=float)
        if d.shape != (3,) or not np.linalg.norm(d) > 0.0:
            raise ValueError(f"{where}: thruster '{t.name}' direction_frd must be a non-zero 3-vector")
        r[L.T_POS : L.T_POS + 3] = np.asarray(t.position_frd_m, dtype=float)
        r[L.T_DIR : L.T_DIR + 3] = d / np.linalg.norm(d)
        if t.command_unit not in UNIT_TO_RPS:
            raise ValueError(f"{where}: thruster '{t.name}' command_unit must be one of {sorted(UNIT_TO_RPS)}")
        r[L.T_TO_RPS] = UNIT_TO_RPS[t.command_unit]
        if t.model == "rotor":
            if spec.domain != "aerial" or t.command_unit not in UNIT_TO_RAD_S:
                raise ValueError(f"{where}: thruster '{t.name}': rotors drive aerial vehicles, in rad_s, rpm or rps")
            r[L.T_MODEL] = L.T_MODEL_ROTOR
            r[L.T_TO_RPS] = UNIT_TO_RAD_S[t.command_unit]
            r[L.T_KF], r[L.T_KM] = t.motor_constant, t.moment_constant_m
            r[L.T_SPIN] = SPIN_SIGN[t.spin]
            r[L.T_TAU_DOWN] = t.time_constant_down_s
            r[L.T_CD], r[L.T_CR] = t.rotor_drag_coefficient, t.rolling_moment_coefficient
        elif t.model == "quadratic":
            if t.command_unit == "normalized":
                raise ValueError(f"{where}: thruster '{t.name}': the quadratic model needs a rotor-speed unit")
            r[L.T_MODEL] = L.T_MODEL_QUADRATIC
        elif t.model in ("t200", "glf"):
            if t.command_unit != "normalized":
                raise ValueError(f"{where}: thruster '{t.name}': the {t.model} curve takes a normalized command")
            r[L.T_MODEL] = L.T_MODEL_T200
            try:
                r[L.T_CURVE : L.T_CURVE + 12], r[L.T_DEADBAND] = t200_curve_array(t.curve)
            except ValueError as exc:
                raise ValueError(f"{where}: thruster '{t.name}': {exc}") from None
        else:
            models = "quadratic, t200, glf or rotor"
            raise ValueError(f"{where}: thruster '{t.name}' model must be {models}, got {t.model!r}")
        if not t.command_min <= t.command_max:
            raise ValueError(f"{where}: thruster '{t.name}' command_min > command_max")
        r[L.T_CMD_MIN], r[L.T_CMD_MAX] = t.command_min, t.command_max
        r[L.T_TAU] = t.time_constant_s
        r[L.T_DIAM], r[L.T_KT], r[L.T_KQ] = t.diameter_m, t.kt, t.kq
        r[L.T_KT_REV] = t.kt if t.kt_reverse is None else t.kt_reverse
        r[L.T_ALIVE] = 1.0
        if not np.all(np.isfinite(r)):
            raise ValueError(f"{where}: thruster '{t.name}' has a non-finite parameter")
    return rows


def _pack_fins(spec: VehicleSpec, where: str) -> np.ndarray:
    rows = np.zeros((len(spec.fins), L.F_WIDTH))
    for k, f in enumerate(spec.fins):
        r = rows[k]
        r[L.F_POS : L.F_POS + 3] = np.asarray(f.position_frd_m, dtype=float)
        r[L.F_COS], r[L.F_SIN] = math.cos(f.roll_angle_rad), math.sin(f.roll_angle_rad)
        r[L.F_AREA], r[L.F_SLOPE], r[L.F_STALL] = f.area_m2, f.lift_slope_per_rad, f.stall_angle_rad
        r[L.F_POST], r[L.F_CD0], r[L.F_KIND] = f.post_stall_slope_per_rad, f.cd0, f.induced_drag_factor
        r[L.F_MAX], r[L.F_TAU], r[L.F_RATE] = f.max_angle_rad, f.time_constant_s, f.rate_limit_rad_s
        r[L.F_ALIVE] = 1.0
        if not np.all(np.isfinite(r)):
            raise ValueError(f"{where}: fin '{f.name}' has a non-finite parameter")
    return rows


class Fleet:
    """All vessels of one simulation, integrated together (see the module docstring)."""

    def __init__(
        self,
        dt_s: float,
        integrator: str = "rk4",
        substeps: int = 1,
        water_density_kgm3: float = 1025.0,
        gravity_mps2: float = 9.81,
        *,
        max_speed_mps: float = 100.0,
        max_rate_rad_s: float = 50.0,
        max_position_m: float = 1.0e8,
        capacity: int = 16,
    ) -> None:
        if not (math.isfinite(dt_s) and dt_s > 0.0):
            raise ValueError(f"Fleet: dt_s must be a positive number of seconds, got {dt_s}")
        if integrator not in METHODS:
            raise ValueError(f"Fleet: integrator must be one of {sorted(METHODS)}, got {integrator!r}")
        if int(substeps) != substeps or substeps < 1:
            raise ValueError(f"Fleet: substeps must be an integer >= 1, got {substeps}")
        self.dt_s = float(dt_s)
        self.integrator = integrator
        self.substeps = int(substeps)
        self.water_density_kgm3 = float(water_density_kgm3)
        self.gravity_mps2 = float(gravity_mps2)
        self.max_speed_mps = float(max_speed_mps)
        self.max_rate_rad_s = float(max_rate_rad_s)
        self.max_position_m = float(max_position_m)
        self._method = METHODS[integrator]
        cap = max(1, int(capacity))
        self._n = 0
        self._n_marine = 0  # rows 0 .. _n_marine-1 are marine vessels, the aerial vehicles follow them
        self._xs = np.zeros((cap, L.X_WIDTH))
        self._views: tuple | None = None  # (_xs, _n, state views) of _state_views
        self._vp = np.zeros((cap, L.V_WIDTH))
        self._vi = np.zeros((cap, L.VI_WIDTH), dtype=np.int64)
        self._frozen = np.zeros(cap, dtype=np.bool_)
        self._status = np.zeros(cap, dtype=np.int64)
        self._fault_step = np.zeros(cap, dtype=np.int64)  # step of a fault within the last step() call
        self._impact = np.zeros(cap)  # aerial: descent speed (m/s) at the start of the step of the last touchdown
        # hull box (lotusim_core.base.hull_box): half extents (3), centre FRD (3), bounding radius about CO (1), m
        self._box = np.zeros((cap, 7))
        self._tp = np.zeros((max(4, cap), L.T_WIDTH))
        self._fp = np.zeros((max(4, cap), L.F_WIDTH))
        self._nt = 0  # used thruster pool rows (alive or dead)
        self._nf = 0
        self._dead_t = 0
        self._dead_f = 0
        self.names: list[str] = []
        self._packed: dict[int, tuple[VehicleSpec, tuple]] = {}  # id(spec) -> (spec, pack_vessel result)
        self._specs: list[VehicleSpec] = []
        self._index: dict[str, int] = {}
        self._env_set = False
        self._waves_set = False
        self._hull_points: dict[float, np.ndarray] = {}  # V_HULL_KIND -> (K, 2) wave sample points, FRD m
        self._contact_events: list[ContactEvent] = []
        self._aerial: dict[str, float] = {}  # aerial vehicle -> contact height, m
        self._decks: dict[str, np.ndarray] = {}  # vessel with a deck -> [H, length, beam, c_x, c_y], m
        self._on_deck: dict[str, str] = {}  # aerial vehicle -> the vessel whose deck it rests on
        self.collider: Collider | None = None  # collisions (lotusim_physics.collisions): off until enabled
        self.contacts_changed = False  # the vessels in contact changed in the last step() (see `colliding`)
        self._unchecked_steps = 0  # steps left in a window found free of contacts (collisions.Collider.near)

    # --- sizes and lookup ------------------------------------------------------------------------------------
    def __len__(self) -> int:
        return self._n

    def __contains__(self, name: object) -> bool:
        return name in self._index

    def index(self, name: str) -> int:
        """Row of vessel `name` in the state arrays (changes when vessels are removed)."""
        try:
            return self._index[name]
        except KeyError:
            raise KeyError(f"no vessel named '{name}' in the fleet") from None

    def spec(self, name: str) -> VehicleSpec:
        return self._specs[self.index(name)]

    # --- state views -----------------------------------------------------------------------------------------
    @property
    def position_ned(self) -> np.ndarray:
        """(N, 3) positions of CO in NED, m (view)."""
        return self._xs[: self._n, L.X_POS : L.X_POS + 3]

    @property
    def q_ned_frd(self) -> np.ndarray:
        """(N, 4) attitudes q_ned_frd, w x y z (view)."""
        return self._xs[: self._n, L.X_Q : L.X_Q + 4]

    @property
    def nu(self) -> np.ndarray:
        """(N, 6) body velocities [u v w p q r], FRD (view)."""
        return self._xs[: self._n, L.X_NU : L.X_NU + 6]

    @property
    def nu_dot(self) -> np.ndarray:
        """(N, 6) body accelerations of the last step, FRD (view)."""
        return self._xs[: self._n, L.X_NUDOT : L.X_NUDOT + 6]

    @property
    def frozen(self) -> np.ndarray:
        """(N,) True for vessels frozen by a fault (view)."""
        return self._frozen[: self._n]

    @property
    def in_contact(self) -> np.ndarray:
        """(N,) True for aerial vehicles resting on the sea or on a deck after the last step (copy)."""
        out = self._xs[: self._n, L.X_CONTACT] > 0.0
        for drone in self._on_deck:
            out[self._index[drone]] = True
        return out

    def on_deck(self, name: str) -> str | None:
        """The vessel on whose deck aerial vehicle `name` rests after the last step (None: not on a deck)."""
        self.index(name)
        return self._on_deck.get(name)

    def take_contact_events(self) -> list[ContactEvent]:
        """Touchdowns and lift-offs of aerial vehicles since the last call (oldest first), then forgotten."""
        events, self._contact_events = self._contact_events, []
        return events

    def thruster_states(self, name: str) -> np.ndarray:
        """Rotor state of each thruster of the vessel (copy): rev/s (quadratic), motor speed rad/s (rotor), the
        lagged normalised command (t200, glf)."""
        t0, nt = self._vi[self.index(name), 0:2]
        return self._tp[t0 : t0 + nt, L.T_STATE].copy()

    def thrust_n(self, name: str) -> np.ndarray:
        """Thrust of each thruster of the vessel in the last step, N (copy)."""
        t0, nt = self._vi[self.index(name), 0:2]
        return self._tp[t0 : t0 + nt, L.T_THRUST].copy()

    def fin_angles_rad(self, name: str) -> np.ndarray:
        """Current deflection of each fin of the vessel, rad (copy)."""
        f0, nf = self._vi[self.index(name), 2:4]
        return self._fp[f0 : f0 + nf, L.F_STATE].copy()

    def state_enu(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(pos_enu (N,3) m, q_enu_flu (N,4) **x y z w**, twist_flu (N,6), accel_flu (N,6)) for ROS (copies).

        twist_flu = [linear (m/s), angular (rad/s)] in body FLU; accel_flu the last step's nu_dot in FLU."""
        return frames.state_ned_frd_to_enu_flu(self.position_ned, self.q_ned_frd, self.nu, self.nu_dot)

    def scatter_state_enu(self, rows: np.ndarray, dst: np.ndarray, index: np.ndarray) -> None:
        """Write the state of `rows` for ROS straight into a flat float64 array (a serialized message):
        dst[index[i, c]] = column c of row i, c < index.shape[1], columns pos_enu 0:3, q_enu_flu (x y z w) 3:7,
        twist_flu 7:13, accel_flu 13:19 (state_enu, packed). rows: int64; index: (N, C) int64."""
        frames.scatter_state_ned_frd_to_enu_flu(*self._state_views(), rows, dst, index)

    def _state_views(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(position_ned, q_ned_frd, nu, nu_dot), made again only when the arrays or the vessel count changed
        (four views cost microseconds: a sizeable part of publishing one vessel's outputs)."""
        views = self._views
        if views is None or views[0] is not self._xs or views[1] != self._n:
            views = self._views = (self._xs, self._n, (self.position_ned, self.q_ned_frd, self.nu, self.nu_dot))
        return views[2]

    # --- vessel management -----------------------------------------------------------------------------------
    def add(self, name: str, spec: VehicleSpec, position_ned_m, q_ned_frd_wxyz, nu_frd=None) -> None:
        """Add vessel `name` of model `spec` at rest (or with body velocity nu_frd). ValueError on a duplicate
        name, a non-finite pose or a model the physics cannot run (nothing is changed then)."""
        if not isinstance(name, str) or not name:
            raise ValueError(f"vessel name must be a non-empty string, got {name!r}")
        if name in self._index:
            raise ValueError(f"vessel '{name}' already exists in the fleet")
        pos, quat, nu = self._pose(name, position_ned_m, q_ned_frd_wxyz, nu_frd)
        vrow, trows, frows = self._pack(spec, name)
        h = self.dt_s / self.substeps
        for r in trows:
            r[L.T_DECAY] = decay_factor(r[L.T_TAU], h)
            r[L.T_DECAY_DOWN] = decay_factor(r[L.T_TAU_DOWN], h)
        for r in frows:
            r[L.F_DECAY] = decay_factor(r[L.F_TAU], h)
        aerial = spec.domain == "aerial"
        i = self._n
        self._reserve_vessels(i + 1)
        t0 = self._append_pool("_tp", "_nt", trows)
        f0 = self._append_pool("_fp", "_nf", frows)
        self.names.append(name)
        self._specs.append(spec)
        if not aerial and self._n_marine < self._n:  # keep the aerial rows last: the first one moves to the end
            self._move_row(self._n_marine, self._n)
            i = self._n_marine
        self._xs[i] = 0.0
        self._xs[i, L.X_POS : L.X_POS + 3] = pos
        self._xs[i, L.X_Q : L.X_Q + 4] = quat
        self._xs[i, L.X_NU : L.X_NU + 6] = nu
        self._vp[i] = vrow
        self._vi[i] = (t0, len(trows), f0, len(frows))
        self._box[i] = _box_row(spec)
        self._frozen[i] = False
        self._status[i] = 0
        self._fault_step[i] = 0
        self._impact[i] = 0.0
        self.names[i] = name
        self._specs[i] = spec
        self._index[name] = i
        self._unchecked_steps = 0
        if self.collider is not None:
            self.collider.placed.add(name)
        self._n += 1
        self._n_marine += not aerial
        self._note_roles(name, spec)

    def _move_row(self, src: int, dst: int) -> None:
        """Copy vessel row `src` (state, parameters, bookkeeping, name, spec) into row `dst`."""
        rows = (self._xs, self._vp, self._vi, self._frozen, self._status, self._fault_step, self._impact, self._box)
        for arr in rows:
            arr[dst] = arr[src]
        moved = self.names[src]
        self.names[dst] = moved
        self._specs[dst] = self._specs[src]
        self._index[moved] = dst

    def _note_roles(self, name: str, spec: VehicleSpec) -> None:
        """Remember an aerial vehicle's contact height, or a vessel's deck (lotusim_physics.decks)."""
        if spec.domain == "aerial" and spec.aerial is not None:
            self._aerial[name] = spec.aerial.contact_height_m
        if spec.deck is not None:
            d = spec.deck
            self._decks[name] = np.array([d.height_m, d.length_m, d.beam_m, d.centre_x_m, d.centre_y_m])

    def _pack(self, spec: VehicleSpec, name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """pack_vessel, once per spec object: vessels of one catalogue model share one spec (the catalogue caches
        it), and packing (mass matrix inverse, checks) costs ~0.5 ms, the bulk of a 1,000-vessel spawn."""
        cached = self._packed.get(id(spec))
        if cached is not None and cached[0] is spec:
            return cached[1]
        packed = pack_vessel(spec, name, self.water_density_kgm3, self.gravity_mps2)
        self._packed[id(spec)] = (spec, packed)
        self._register_hull(spec)
        return packed

    def _register_hull(self, spec: VehicleSpec) -> None:
        if spec.domain == "surface":
            points = hull_points_frd(spec)
            self._hull_points[hull_kind(points)] = points

    def remove(self, name: str) -> None:
        """Remove vessel `name` (KeyError if unknown); the last row takes its place."""
        i = self.index(name)
        last = self._n - 1
        t0, nt, f0, nf = self._vi[i]
        self._tp[t0 : t0 + nt, L.T_ALIVE] = 0.0
        self._fp[f0 : f0 + nf, L.F_ALIVE] = 0.0
        self._dead_t += int(nt)
        self._dead_f += int(nf)
        if i < self._n_marine:  # the last marine row fills the gap, the last aerial row that marine row's place
            last_marine = self._n_marine - 1
            if i != last_marine:
                self._move_row(last_marine, i)
            if last_marine != last:
                self._move_row(last, last_marine)
            self._n_marine -= 1
        elif i != last:
            self._move_row(last, i)
        self.names.pop()
        self._specs.pop()
        self._aerial.pop(name, None)
        self._decks.pop(name, None)
        self._on_deck = {d: v for d, v in self._on_deck.items() if name not in (d, v)}
        if self.collider is not None:
            self.collider.forget(name)
        del self._index[name]
        self._n = last
        if self._dead_t > max(64, self._nt - self._dead_t):
            self._compact("_tp", "_nt", "_dead_t", L.T_ALIVE, 0)
        if self._dead_f > max(64, self._nf - self._dead_f):
            self._compact("_fp", "_nf", "_dead_f", L.F_ALIVE, 2)

    def set_pose(self, name: str, position_ned_m, q_ned_frd_wxyz, nu_frd=None) -> None:
        """Teleport ("move") a vessel: new pose, body velocity nu_frd (default at rest); clears a freeze."""
        i = self.index(name)
        pos, quat, nu = self._pose(name, position_ned_m, q_ned_frd_wxyz, nu_frd)
        self._xs[i, L.X_POS : L.X_POS + 3] = pos
        self._xs[i, L.X_Q : L.X_Q + 4] = quat
        self._xs[i, L.X_NU : L.X_NU + 6] = nu
        self._xs[i, L.X_NUDOT : L.X_NUDOT + 6] = 0.0
        self._frozen[i] = False
        self._status[i] = 0
        self._unchecked_steps = 0
        if self.collider is not None:
            self.collider.placed.add(name)

    # --- commands --------------------------------------------------------------------------------------------
    def set_thruster_commands(self, name: str, values: Sequence[float] | np.ndarray) -> None:
        """One command per thruster, in each thruster's command_unit (saturated to its limits when applied)."""
        i = self.index(name)
        t0, nt = self._vi[i, 0:2]
        self._tp[t0 : t0 + nt, L.T_CMD] = _vec(values, int(nt), "thruster commands", name)

    def thruster_commands(self, name: str) -> np.ndarray:
        """The held command of each thruster of the vessel, in its command_unit (copy)."""
        t0, nt = self._vi[self.index(name), 0:2]
        return self._tp[t0 : t0 + nt, L.T_CMD].copy()

    def fin_commands(self, name: str) -> np.ndarray:
        """The held deflection command of each fin of the vessel, rad (copy)."""
        f0, nf = self._vi[self.index(name), 2:4]
        return self._fp[f0 : f0 + nf, L.F_CMD].copy()

    def actuator_rows_of(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """(thruster rows, fin rows) of the vessel in the actuator pools, in its vehicle file's order: where
        write_commands puts its commands. Valid until the fleet's vessels change (a create, delete or restore)."""
        t0, nt, f0, nf = (int(v) for v in self._vi[self.index(name)])
        return np.arange(t0, t0 + nt), np.arange(f0, f0 + nf)

    def write_commands(
        self, thruster_rows: np.ndarray, thruster_values: np.ndarray, fin_rows: np.ndarray, fin_values: np.ndarray
    ) -> None:
        """Many vessels' actuator commands in one assignment per pool (rows from actuator_rows_of; values finite,
        in each thruster's command_unit and rad for fins: the caller checks them)."""
        self._tp[thruster_rows, L.T_CMD] = thruster_values
        self._fp[fin_rows, L.F_CMD] = fin_values

    def set_fin_commands(self, name: str, angles_rad: Sequence[float] | np.ndarray) -> None:
        """One deflection command per fin, rad (saturated to +-max_angle_rad when applied)."""
        i = self.index(name)
        f0, nf = self._vi[i, 2:4]
        self._fp[f0 : f0 + nf, L.F_CMD] = _vec(angles_rad, int(nf), "fin commands", name)

    def set_body_wrench(self, name: str, wrench_frd: Sequence[float] | np.ndarray) -> None:
        """Direct body wrench [X, Y, Z, K, M, N] (N, N m) in FRD at CO, held until changed."""
        i = self.index(name)
        self._xs[i, L.X_WRENCH : L.X_WRENCH + 6] = _vec(wrench_frd, 6, "body wrench", name)

    # --- stepping --------------------------------------------------------------------------------------------
    def step(
        self,
        t_s: float,
        current_ned: EnvField | None = None,
        wind_ned: EnvField | None = None,
        steps: int = 1,
        waves: WaveComponents | None = None,
    ) -> list:
        """Advance every active vessel by `steps` steps of dt_s from sim time t_s; returns the FaultReports.

        current_ned(t_s, positions_ned (N,3)) -> (N,3) water velocity NED, m/s; wind_ned(t_s, positions_ned)
        -> (N,3) air velocity at 10 m NED, m/s. Both are sampled once at t_s and held for the `steps` steps;
        None means still water / no wind. Several steps in one call give the same states as one call per step
        (with the environment held) at a fraction of the call overhead: the dynamics node batches the steps
        between two publications.

        waves (lotusim_env.waves table; None or empty: a flat sea) are sampled before every step, at its start
        time: the sea over each surface vessel's hull (mean, slopes) and the orbital velocity at every CO
        (lotusim_physics.sea_over_hulls), held over that one step."""
        xs = self._xs
        steps = int(steps)
        if steps < 1:
            raise ValueError(f"step: steps must be >= 1, got {steps}")
        if current_ned is not None or wind_ned is not None:
            self._sample_env(t_s, current_ned, wind_ned)
        elif self._env_set:
            xs[:, L.X_CUR : L.X_WIND + 3] = 0.0
            self._env_set = False
        sea = waves is not None and waves.size > 0
        if not sea and self._waves_set:
            xs[:, L.X_WAVE : L.X_WAVE + 6] = 0.0
            self._waves_set = False
        self.contacts_changed = False
        collide = self.collider is not None and self._n > 0
        near = collide and self._contacts_possible(steps)  # else nothing to check after the steps
        if sea or (self._aerial and self._decks) or (near and steps > 1):
            nfault = self._step_singly(t_s, steps, waves if sea else None, near)
        else:
            nfault = self._kernel(steps)
            if near:
                self._collide(t_s + steps * self.dt_s)
        if collide and not near and self.collider.end_all():
            self.contacts_changed = True
        if not nfault:
            return []
        return self._collect_faults(t_s)

    def _kernel(self, steps: int) -> int:
        """The marine rows (integrators.step_fleet), then the aerial rows (aerial_integrator.step_aerial)."""
        found = step_fleet(
            self._xs, self._vp, self._vi, self._tp, self._fp, self._frozen, self._status, self._fault_step,
            self._n_marine, self.dt_s, self.substeps, steps, self._method, self.water_density_kgm3, self.gravity_mps2,
            self.max_speed_mps, self.max_rate_rad_s, self.max_position_m,
        )  # fmt: skip
        if self._n > self._n_marine:
            found += step_aerial(
                self._xs, self._vp, self._vi, self._tp, self._frozen, self._status, self._fault_step, self._impact,
                self._n_marine, self._n, self.dt_s, self.substeps, steps, self._method,
                self.max_speed_mps, self.max_rate_rad_s, self.max_position_m,
            )  # fmt: skip
        return found

    def _step_singly(self, t_s: float, steps: int, waves: WaveComponents | None, near: bool) -> int:
        """`steps` single steps: the sea (if any) sampled before each, the drones on decks (if any) after each;
        fault steps counted from t_s."""
        nfault = 0
        decks = bool(self._aerial and self._decks)
        for k in range(steps):
            if waves is not None:
                self._sample_waves(t_s + k * self.dt_s, waves)
            before = self._status[: self._n].copy()
            nu0 = self._xs[self._n_marine : self._n, L.X_NU : L.X_NU + 6].copy() if decks else None
            found = self._kernel(1)
            if found:
                self._fault_step[: self._n][self._status[: self._n] != before] += k
                nfault += found
            if decks:
                self._land_on_decks(t_s + (k + 1) * self.dt_s, nu0)
            if near:
                self._collide(t_s + (k + 1) * self.dt_s)
        return nfault

    # --- collisions (lotusim_physics.collisions) ---------------------------------------------------------------
    def enable_collisions(self, obstacles: Obstacles | None = None, params: ContactParams | None = None) -> None:
        """Collide the vessels with each other and with `obstacles` (seabed, coast, objects) after every step, with
        the contact law `params` (defaults: plastic, frictionless); the contacts going on are kept when only the
        obstacles change."""
        self._unchecked_steps = 0
        if self.collider is None:
            self.collider = Collider(obstacles, params)
        else:
            self.collider.obstacles = obstacles or Obstacles()
            self.collider.params = params or self.collider.params

    @property
    def colliding(self) -> np.ndarray:
        """(N,) True for vessels in contact (overlapping or within the contact margin) at the last check (copy)."""
        out = np.zeros(self._n, dtype=bool)
        if self.collider is not None:
            rows = self.collider.contact_rows
            out[rows[rows < self._n]] = True
        return out

    def take_collision_events(self) -> list[CollisionEvent]:
        """The contacts that began since the last call (lotusim_physics.collisions.CollisionEvent), then forgotten."""
        return self.collider.take_events() if self.collider is not None else []

    def hull_boxes(self) -> tuple[np.ndarray, np.ndarray]:
        """(half extents (N, 3) m, box centres (N, 3) FRD from CO, m) of the vessels' hull boxes (copies)."""
        return self._box[: self._n, :3].copy(), self._box[: self._n, 3:6].copy()

    def _contact_state(self) -> FleetState:
        n = self._n
        xs = self._xs
        return FleetState(
            position=xs[:n, L.X_POS : L.X_POS + 3],
            q=xs[:n, L.X_Q : L.X_Q + 4],
            nu=xs[:n, L.X_NU : L.X_NU + 6],
            half=self._box[:n, :3],
            centre_frd=self._box[:n, 3:6],
            radius=self._box[:n, 6],
            mass=self._vp[:n, L.V_MASS],
            aerial=np.arange(n) >= self._n_marine,
            active=~self._frozen[:n],
        )

    def _contacts_possible(self, steps: int) -> bool:
        """Whether a vessel may reach an obstacle within the next `steps` steps (then they are taken one at a time
        and checked after each). A check looks CHECK_AHEAD_STEPS ahead (or `steps` if more), and when nothing is
        within reach the following calls within that window are not checked (the window closes when the fleet
        changes)."""
        if steps <= self._unchecked_steps:
            self._unchecked_steps -= steps
            return False
        ahead = max(steps, CHECK_AHEAD_STEPS)
        possible = self.collider.near(self._contact_state(), ahead * self.dt_s)
        self._unchecked_steps = 0 if possible else ahead - steps
        return possible

    def _collide(self, t_end_s: float) -> None:
        """Contacts after a step: push-out and velocity response in place; the step's acceleration (nu_dot) of a
        vessel whose velocity the contact changed takes that change too."""
        state = self._contact_state()
        collider = self.collider
        if not collider.ongoing and not collider.placed and collider.clear(state):  # the common case: a few calls
            self.contacts_changed |= collider.end_all()
            return
        nu_before = state.nu.copy()
        if self.collider.resolve(state, self.names, t_end_s):
            self.contacts_changed = True
        changed = np.flatnonzero(np.any(state.nu != nu_before, axis=1))
        if len(changed):
            self._xs[changed, L.X_NUDOT : L.X_NUDOT + 6] += (state.nu[changed] - nu_before[changed]) / self.dt_s

    def _land_on_decks(self, t_end_s: float, nu0_aerial: np.ndarray) -> None:
        """Put the drones on the decks below them (lotusim_physics.decks), their step's acceleration from their
        velocities at its start (nu0_aerial: the aerial rows'), and report touchdowns and lift-offs."""
        drones = list(self._aerial)
        vessels = list(self._decks)
        drone_rows = np.array([self._index[d] for d in drones], dtype=np.int64)
        deck_rows = np.array([self._index[v] for v in vessels], dtype=np.int64)
        found = deck_contacts(
            self.position_ned, self.q_ned_frd, self.nu, drone_rows,
            np.array([self._aerial[d] for d in drones]), deck_rows, np.array([self._decks[v] for v in vessels]),
        )  # fmt: skip
        xs = self._xs
        xs[found.drone_rows, L.X_POS : L.X_POS + 3] = found.position_ned
        xs[found.drone_rows, L.X_NU : L.X_NU + 3] = found.velocity_frd
        xs[found.drone_rows, L.X_NU + 3 : L.X_NU + 6] = found.rates_frd
        nu_start = nu0_aerial[found.drone_rows - self._n_marine]
        xs[found.drone_rows, L.X_NUDOT : L.X_NUDOT + 6] = (
            xs[found.drone_rows, L.X_NU : L.X_NU + 6] - nu_start
        ) / self.dt_s
        now: dict[str, str] = {}
        for j, (row, deck) in enumerate(zip(found.drone_rows.tolist(), found.deck_rows.tolist(), strict=True)):
            drone, vessel = self.names[row], self.names[deck]
            now[drone] = vessel
            if self._on_deck.get(drone) != vessel:
                where = tuple(float(v) for v in found.position_ned[j])
                # its descent speed relative to the deck at the step's start (NED down; the drone's attitude now)
                r = frames.rotation_matrix(self._xs[[row, deck], L.X_Q : L.X_Q + 4])
                speed = float((r[0] @ nu_start[j, :3])[2] - (r[1] @ self._xs[deck, L.X_NU : L.X_NU + 3])[2])
                self._contact_events.append(ContactEvent(drone, t_end_s, True, vessel, where, speed))
        for drone, vessel in self._on_deck.items():
            if now.get(drone) != vessel and drone in self._index:
                row = self._index[drone]
                where = tuple(float(v) for v in self._xs[row, L.X_POS : L.X_POS + 3])
                deck = self._index.get(vessel)
                speed = self._descent_mps(row) - (self._descent_mps(deck) if deck is not None else 0.0)
                self._contact_events.append(ContactEvent(drone, t_end_s, False, vessel, where, speed))
        self._on_deck = now

    def _descent_mps(self, row: int) -> float:
        """The vertical speed of the vessel in `row`, down positive (NED), m/s."""
        r = frames.rotation_matrix(self._xs[row, L.X_Q : L.X_Q + 4])
        return float((r @ self._xs[row, L.X_NU : L.X_NU + 3])[2])

    def _sample_waves(self, t_s: float, waves: WaveComponents) -> None:
        """Write the sea at each vessel (layout.X_WAVE: mean elevation over the hull, slopes, orbital velocity)."""
        n = self._n
        xs, vp = self._xs, self._vp
        position, q = xs[:n, L.X_POS : L.X_POS + 3], xs[:n, L.X_Q : L.X_Q + 4]
        surface = vp[:n, L.V_SURFACE] > 0.0
        under = np.flatnonzero(~surface)
        if under.size:  # underwater vehicles: the sea above CO (surface crossing) and the orbital velocity at it
            eta, velocity = sea_at_co(waves, t_s, position[under])
            xs[under, L.X_WAVE] = eta
            xs[under, L.X_WAVE + 3 : L.X_WAVE + 6] = velocity
        kinds = vp[:n, L.V_HULL_KIND]
        for kind in np.unique(kinds[surface]):  # surface vessels, by sample points: the sea over the hull
            rows = np.flatnonzero(surface & (kinds == kind))
            sea = sea_over_hulls(waves, t_s, position[rows], q[rows], self._hull_points[float(kind)])
            xs[rows, L.X_WAVE] = sea.elevation_m
            xs[rows, L.X_WAVE + 1 : L.X_WAVE + 3] = sea.slope_ne
            xs[rows, L.X_WAVE + 3 : L.X_WAVE + 6] = sea.orbital_velocity_ned
        self._waves_set = True

    def _sample_env(self, t_s: float, current_ned: EnvField | None, wind_ned: EnvField | None) -> None:
        n = self._n
        pos = self.position_ned
        for fn, col, what in ((current_ned, L.X_CUR, "current_ned"), (wind_ned, L.X_WIND, "wind_ned")):
            if fn is None:
                self._xs[:n, col : col + 3] = 0.0
                continue
            values = np.asarray(fn(t_s, pos), dtype=float)
            if values.shape != (n, 3):
                values = np.broadcast_to(values, (n, 3)) if values.shape == (3,) else values
            if values.shape != (n, 3):
                raise ValueError(f"{what}(t, positions_ned) must return an ({n}, 3) array, got {values.shape}")
            self._xs[:n, col : col + 3] = values
        self._env_set = True

    def _collect_faults(self, t_s: float) -> list:
        reports = []
        for i in np.flatnonzero(self._status[: self._n]):
            code = int(self._status[i])
            if code in (L.EVENT_TOUCHDOWN, L.EVENT_LIFTOFF):  # not a fault: the vessel runs on
                t_event = float(t_s) + self.dt_s * (int(self._fault_step[i]) + 1)
                down = code == L.EVENT_TOUCHDOWN
                where = tuple(float(v) for v in self._xs[i, L.X_POS : L.X_POS + 3])
                speed = float(self._impact[i]) if down else self._descent_mps(i)
                self._contact_events.append(ContactEvent(self.names[i], t_event, down, "sea", where, speed))
                self._fault_step[i] = 0
                self._status[i] = 0
                continue
            detail = REASONS.get(code, f"fault code {code}")
            if code == L.FAULT_SPEED:
                detail += f" ({self.max_speed_mps} m/s)"
            elif code == L.FAULT_RATE:
                detail += f" ({self.max_rate_rad_s} rad/s)"
            elif code == L.FAULT_POSITION:
                detail += f" ({self.max_position_m} m)"
            t_fault = float(t_s) + self.dt_s * int(self._fault_step[i]) if code != L.FAULT_NONFINITE_ENV else float(t_s)
            reports.append(FaultReport(self.names[i], t_fault, code, detail))
            self._fault_step[i] = 0
            self._status[i] = 0
        return reports

    # --- snapshot --------------------------------------------------------------------------------------------
    def snapshot(self) -> dict:
        """Everything needed to continue identically: settings, names, specs and copies of the arrays."""
        n = self._n
        return {
            "settings": {
                "dt_s": self.dt_s,
                "integrator": self.integrator,
                "substeps": self.substeps,
                "water_density_kgm3": self.water_density_kgm3,
                "gravity_mps2": self.gravity_mps2,
                "max_speed_mps": self.max_speed_mps,
                "max_rate_rad_s": self.max_rate_rad_s,
                "max_position_m": self.max_position_m,
            },
            "names": list(self.names),
            "specs": list(self._specs),
            "xs": self._xs[:n].copy(),
            "vp": self._vp[:n].copy(),
            "vi": self._vi[:n].copy(),
            "frozen": self._frozen[:n].copy(),
            "tp": self._tp[: self._nt].copy(),
            "fp": self._fp[: self._nf].copy(),
            "dead": (self._dead_t, self._dead_f),
        }

    @classmethod
    def from_snapshot(cls, snap: dict) -> Fleet:
        """A fleet that continues bit-identically from `snap` (see snapshot())."""
        fleet = cls(capacity=max(1, len(snap["names"])), **snap["settings"])
        n = len(snap["names"])
        fleet._reserve_vessels(n)
        fleet._xs[:n] = snap["xs"]
        fleet._vp[:n] = snap["vp"]
        fleet._vi[:n] = snap["vi"]
        fleet._frozen[:n] = snap["frozen"]
        fleet._append_pool("_tp", "_nt", snap["tp"])
        fleet._append_pool("_fp", "_nf", snap["fp"])
        fleet._dead_t, fleet._dead_f = snap["dead"]
        fleet.names = list(snap["names"])
        fleet._specs = list(snap["specs"])
        for spec in {id(s): s for s in fleet._specs}.values():  # the wave sample points of each model
            fleet._register_hull(spec)
        fleet._index = {name: i for i, name in enumerate(fleet.names)}
        fleet._n = n
        aerial = np.array([s.domain == "aerial" for s in fleet._specs], dtype=bool)
        fleet._n_marine = int(n - aerial.sum())
        if aerial[: fleet._n_marine].any():
            raise ValueError("snapshot: aerial vehicles must follow the marine vessels (rows of a Fleet)")
        for i, (name, spec) in enumerate(zip(fleet.names, fleet._specs, strict=True)):
            fleet._note_roles(name, spec)
            fleet._box[i] = _box_row(spec)
        fleet._env_set = True
        fleet._waves_set = True  # the restored sea columns are cleared by a step without waves
        return fleet

    def actuator_rows(self) -> tuple[np.ndarray, np.ndarray]:
        """Pool rows of every vessel's thrusters and of its fins, in fleet order then actuator order (int64)."""
        vi = self._vi[: self._n]
        thrusters = _ranges(vi[:, L.VI_THR_START], vi[:, L.VI_THR_COUNT])
        return thrusters, _ranges(vi[:, L.VI_FIN_START], vi[:, L.VI_FIN_COUNT])

    def state_arrays(self) -> dict[str, np.ndarray]:
        """Copies of the arrays a checkpoint keeps (lotusim_physics.checkpoint): xs (N, X_WIDTH), frozen (N,),
        vp (N, V_WIDTH), thrusters (sum of thrusters, T_WIDTH) and fins (sum of fins, F_WIDTH) in fleet order."""
        n = self._n
        t_rows, f_rows = self.actuator_rows()
        return {
            "xs": self._xs[:n].copy(),
            "frozen": self._frozen[:n].copy(),
            "vp": self._vp[:n].copy(),
            "thrusters": self._tp[t_rows],
            "fins": self._fp[f_rows],
        }

    def overwrite_state(self, xs: np.ndarray, frozen: np.ndarray, thrusters: np.ndarray, fins: np.ndarray) -> None:
        """Replace the state of every vessel (rows in fleet order, shapes as state_arrays(), already validated):
        the whole xs rows, the freezes and the actuator pool rows (commands and states)."""
        n = self._n
        self._xs[:n] = xs
        self._frozen[:n] = frozen
        self._status[:n] = 0
        t_rows, f_rows = self.actuator_rows()
        self._tp[t_rows] = thrusters
        self._fp[f_rows] = fins
        self._env_set = True
        self._waves_set = True  # the restored sea columns are cleared by a step without waves
        self._unchecked_steps = 0  # the vessels may be anywhere now: the next step looks for contacts

    # --- internals -------------------------------------------------------------------------------------------
    def _pose(self, name: str, position_ned_m, q_ned_frd_wxyz, nu_frd) -> tuple[np.ndarray, ...]:
        pos = _vec(position_ned_m, 3, "position_ned_m", name)
        quat = _vec(q_ned_frd_wxyz, 4, "q_ned_frd_wxyz", name)
        norm = float(np.linalg.norm(quat))
        if norm < 1e-9:
            raise ValueError(f"vessel '{name}': q_ned_frd_wxyz must be a non-zero quaternion")
        nu = np.zeros(6) if nu_frd is None else _vec(nu_frd, 6, "nu_frd", name)
        return pos, quat / norm, nu

    def _reserve_vessels(self, needed: int) -> None:
        cap = self._xs.shape[0]
        if needed <= cap:
            return
        new_cap = max(needed, 2 * cap)
        for attr in ("_xs", "_vp", "_vi", "_frozen", "_status", "_fault_step", "_impact", "_box"):
            old = getattr(self, attr)
            new = np.zeros((new_cap,) + old.shape[1:], dtype=old.dtype)
            new[: self._n] = old[: self._n]
            setattr(self, attr, new)

    def _append_pool(self, attr: str, count_attr: str, rows: np.ndarray) -> int:
        pool = getattr(self, attr)
        used = getattr(self, count_attr)
        k = len(rows)
        if used + k > pool.shape[0]:
            new = np.zeros((max(used + k, 2 * pool.shape[0]), pool.shape[1]))
            new[:used] = pool[:used]
            setattr(self, attr, new)
            pool = new
        pool[used : used + k] = rows
        setattr(self, count_attr, used + k)
        return used

    def _compact(self, attr: str, count_attr: str, dead_attr: str, alive_col: int, vi_col: int) -> None:
        """Drop dead actuator rows, keeping each vessel's rows contiguous; rewrites the vessels' start indices."""
        pool = getattr(self, attr)
        new = np.zeros_like(pool)
        used = 0
        for i in range(self._n):
            start, count = self._vi[i, vi_col], self._vi[i, vi_col + 1]
            new[used : used + count] = pool[start : start + count]
            self._vi[i, vi_col] = used
            used += count
        assert np.all(new[:used, alive_col] == 1.0)
        setattr(self, attr, new)
        setattr(self, count_attr, used)
        setattr(self, dead_attr, 0)


def _box_row(spec: VehicleSpec) -> np.ndarray:
    """A row of Fleet._box: the hull box's half extents and centre (FRD, m) and its bounding radius about CO."""
    half, centre = hull_box_of(spec)
    return np.concatenate([half, centre, [bounding_radius_m(half, centre)]])


def _ranges(starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Concatenated arange(start, start + count) of each pair (int64), without a Python loop."""
    counts = counts.astype(np.int64)
    total = int(counts.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    offsets = np.repeat(starts.astype(np.int64) - np.cumsum(counts) + counts, counts)
    return offsets + np.arange(total, dtype=np.int64)
