"""Standard open-loop manoeuvres of a vehicle model, headless, through the batched Fleet (ROS-free).

Each manoeuvre puts its variants (command levels, port and starboard, the zig-zag pairs) as rows of one Fleet
and advances them together; commands are held between decisions taken every `record_s` of sim time, so the
zig-zag's rudder switches are vectorised over rows too. Calm water, no current, no wind, deep water (the hull
never nears the surface). Every manoeuvre returns a `Manoeuvre`: one `Row` of numbers per variant plus the
recorded traces for plots.

Manoeuvres (the turning circle and zig-zag trials of [IMO2002], here applied open loop to any vehicle):
- `speed_curve`: steady surge speed against the propulsion command; for underwater vehicles also the trim at
  speed (pitch, roll) and the vertical speed (open loop, fins at zero).
- `turning_circles`: approach straight, then rudder (or differential thrust) to port and to starboard; steady
  yaw rate, speed, speed loss U/U0, diameter of the steady circle (least-squares fit, [Kasa1976]),
  advance at 90 deg and tactical diameter (transfer at 180 deg).
- `zigzag`: the delta/psi zig-zag; first and second overshoot angles, time to the first rudder reversal.
- `pitch_steps`: elevator steps nose-up / nose-down at speed; steady pitch and vertical speed.
- `step_responses`: from rest, a command step per degree of freedom (surge, heave, yaw); steady value, time
  constant (63 %), 10-90 % rise time.

Sign conventions (FRD/NED, Fossen): a positive rudder angle turns the bow to starboard (r > 0), a positive
elevator angle pitches the nose up (q > 0); the per-fin deflections that realise them come from each fin's
lift direction and lever (`Actuation`). Heading change is unwrapped (degrees, positive to starboard).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from lotusim_core.base.frames import euler_zyx_from_quat
from lotusim_core.base.vehicle_spec import VehicleSpec
from lotusim_physics.fleet import Fleet
from lotusim_physics.thrusters import allocation_matrix

DEFAULT_DT_S = 0.02
DEFAULT_RECORD_S = 0.1
UNDERWATER_START_DEPTH_M = 200.0


# --- results -------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Trace:
    """Recorded time series of one row (sampled every record_s): t (K,) s, position_ned (K, 3) m,
    euler_rad (K, 3) roll, pitch, yaw (zyx, NED/FRD), nu (K, 6) FRD, steer (K,) the rudder/elevator angle
    (deg) or steering sign applied."""

    label: str
    t_s: np.ndarray
    position_ned: np.ndarray
    euler_rad: np.ndarray
    nu: np.ndarray
    steer: np.ndarray


@dataclass(frozen=True)
class Row:
    """One variant of a manoeuvre: its label (e.g. '1525 rpm', 'starboard 15 deg') and its numbers."""

    label: str
    values: dict[str, float]


@dataclass(frozen=True)
class Manoeuvre:
    """The rows and traces of one manoeuvre; `units` maps each value name to its unit."""

    name: str
    title: str
    rows: tuple[Row, ...]
    traces: tuple[Trace, ...]
    units: dict[str, str] = field(default_factory=dict)

    def row(self, label: str) -> Row:
        for r in self.rows:
            if r.label == label:
                return r
        raise KeyError(f"manoeuvre {self.name}: no row {label!r}; rows: {[r.label for r in self.rows]}")


# --- actuation -----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Actuation:
    """How a model's actuators realise the standard commands (sign per actuator, from the geometry).

    surge (nT,): +1/-1/0, the thrusters pushing forward and with which sign of command; heave (nT,): the
    thrusters pushing down (+z); yaw (nT,): the thrusters giving a positive (bow to starboard) yaw moment
    with that sign; rudder (nF,): deflection sign per fin for a positive rudder angle; elevator (nF,) for a
    positive (nose-up) elevator angle."""

    surge: np.ndarray
    heave: np.ndarray
    yaw: np.ndarray
    rudder: np.ndarray
    elevator: np.ndarray
    command_min: np.ndarray
    command_max: np.ndarray
    fin_max_deg: float
    axial: np.ndarray  # (nT,) bool: thrust mostly along x (|d_x| > 0.9): propellers, not vectored thrusters

    @property
    def has_rudder(self) -> bool:
        return bool(np.any(self.rudder))

    @property
    def has_elevator(self) -> bool:
        return bool(np.any(self.elevator))

    @property
    def has_differential_yaw(self) -> bool:
        """Axial forward thrusters on both sides: steering by differential thrust (not a vectored ROV layout)."""
        fwd = (self.surge > 0) & self.axial
        return bool(np.any(fwd & (self.yaw > 0)) and np.any(fwd & (self.yaw < 0)))

    def thrust(self, signs: np.ndarray, level: float) -> np.ndarray:
        """Commands (nT,) for sign pattern `signs` at `level` (fraction of each thruster's limit, 0..1)."""
        return np.where(signs > 0, level * self.command_max, np.where(signs < 0, level * self.command_min, 0.0))


def actuation(spec: VehicleSpec, tol: float = 1e-6) -> Actuation:
    """Actuation signs of a model from its thruster axes and positions and its fins' normals and levers."""
    b = allocation_matrix(spec.thrusters)  # (6, nT): wrench per newton
    surge = _signs_for(b, 0, tol)
    heave = _signs_for(b, 2, tol)
    yaw = np.sign(np.where(np.abs(b[5]) > tol, b[5], 0.0))
    rudder, elevator = [], []
    for f in spec.fins:
        normal = np.array([0.0, -np.cos(f.roll_angle_rad), -np.sin(f.roll_angle_rad)])
        moment = np.cross(np.asarray(f.position_frd_m, dtype=float), normal)  # per unit lift of +deflection
        rudder.append(np.sign(moment[2]) if abs(normal[1]) > 0.5 and abs(moment[2]) > tol else 0.0)
        elevator.append(np.sign(moment[1]) if abs(normal[2]) > 0.5 and abs(moment[1]) > tol else 0.0)
    fin_max = min((f.max_angle_rad for f in spec.fins), default=0.0)
    return Actuation(
        surge=surge,
        heave=heave,
        yaw=yaw,
        rudder=np.array(rudder),
        elevator=np.array(elevator),
        command_min=np.array([t.command_min for t in spec.thrusters], dtype=float),
        command_max=np.array([t.command_max for t in spec.thrusters], dtype=float),
        fin_max_deg=float(np.degrees(fin_max)),
        axial=np.abs(b[0]) > 0.9,
    )


def _signs_for(b: np.ndarray, dof: int, tol: float) -> np.ndarray:
    """Sign of each thruster's component along `dof` (0 for thrusters with none): all of them pushing that way
    at the same |command|, so symmetric layouts cancel their other components."""
    comp = b[dof]
    return np.sign(np.where(np.abs(comp) > tol, comp, 0.0))


# --- the engine ----------------------------------------------------------------------------------------------
Controller = Callable[[float, np.ndarray, np.ndarray, np.ndarray], "tuple[np.ndarray, np.ndarray, np.ndarray]"]


def run_rows(
    spec: VehicleSpec,
    controller: Controller,
    rows: int,
    duration_s: float,
    *,
    dt_s: float = DEFAULT_DT_S,
    record_s: float = DEFAULT_RECORD_S,
    water_density_kgm3: float = 1025.0,
    nu0: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """Run `rows` copies of `spec` for duration_s (RK4, dt_s) from rest (or body velocity nu0 (rows, 6)).

    controller(t_s, position_ned (R,3), euler_rad (R,3), nu (R,6)) -> (thruster commands (R, nT), fin
    commands (R, nF) rad, steer (R,) for the record) is called every record_s; its commands are held until the
    next call. Start: heading north, level, at UNDERWATER_START_DEPTH_M (underwater) or on the waterline.
    Returns t (K,), position_ned (R,K,3), euler_rad (R,K,3), nu (R,K,6), steer (R,K)."""
    fleet = Fleet(dt_s, water_density_kgm3=water_density_kgm3, capacity=rows)
    z0 = UNDERWATER_START_DEPTH_M if spec.domain == "underwater" else 0.0
    names = [f"row{i}" for i in range(rows)]
    for i, name in enumerate(names):
        fleet.add(name, spec, [0.0, 0.0, z0], [1.0, 0.0, 0.0, 0.0], None if nu0 is None else nu0[i])
    chunk = max(1, round(record_s / dt_s))
    n_rec = int(round(duration_s / (chunk * dt_s))) + 1
    t = np.arange(n_rec) * chunk * dt_s
    pos = np.zeros((rows, n_rec, 3))
    eul = np.zeros((rows, n_rec, 3))
    nu = np.zeros((rows, n_rec, 6))
    steer = np.zeros((rows, n_rec))
    held_thr = held_fins = None
    for k in range(n_rec):
        pos[:, k] = fleet.position_ned
        eul[:, k] = euler_zyx_from_quat(fleet.q_ned_frd)
        nu[:, k] = fleet.nu
        thr, fins, steer[:, k] = controller(t[k], pos[:, k], eul[:, k], nu[:, k])
        if k == n_rec - 1:
            break
        # commands go to the fleet only for the rows whose commands changed (a rudder switch, the approach's end)
        for i in _changed_rows(held_thr, thr):
            fleet.set_thruster_commands(names[i], thr[i])
        for i in _changed_rows(held_fins, fins):
            fleet.set_fin_commands(names[i], fins[i])
        held_thr, held_fins = thr.copy(), fins.copy()
        faults = fleet.step(t[k], steps=chunk)
        if faults:
            raise RuntimeError(f"model {spec.name}: manoeuvre diverged: {faults[0].detail}")
    eul[:, :, 2] = np.unwrap(eul[:, :, 2], axis=1)
    return {"t": t, "position_ned": pos, "euler_rad": eul, "nu": nu, "steer": steer}


def _changed_rows(held: np.ndarray | None, new: np.ndarray) -> np.ndarray:
    """Rows of `new` (R, k) that differ from `held` (all rows the first time; none when k = 0)."""
    if new.shape[1] == 0:
        return np.zeros(0, dtype=np.int64)
    if held is None:
        return np.arange(new.shape[0])
    return np.flatnonzero(np.any(new != held, axis=1))


def _traces(run: dict[str, np.ndarray], labels: list[str]) -> tuple[Trace, ...]:
    return tuple(
        Trace(lab, run["t"], run["position_ned"][i], run["euler_rad"][i], run["nu"][i], run["steer"][i])
        for i, lab in enumerate(labels)
    )


def _tail_mean(x: np.ndarray, fraction: float = 0.15) -> np.ndarray:
    """Mean over the last `fraction` of the samples (last axis)."""
    k = max(1, int(x.shape[-1] * fraction))
    return x[..., -k:].mean(axis=-1)


def _tail_rate(t: np.ndarray, x: np.ndarray, fraction: float = 0.15) -> np.ndarray:
    """Least-squares slope of x over the last `fraction` of the samples (per unit of t)."""
    k = max(2, int(t.size * fraction))
    tt = t[-k:] - t[-k:].mean()
    return ((x[..., -k:] - x[..., -k:].mean(axis=-1, keepdims=True)) * tt).sum(axis=-1) / (tt * tt).sum()


# --- manoeuvres ----------------------------------------------------------------------------------------------
def speed_curve(spec: VehicleSpec, levels: list[tuple[str, float]], duration_s: float = 120.0, **kw) -> Manoeuvre:
    """Steady straight run at each (label, level) (fraction of the thrusters' limits), fins at zero.

    Values: u_mps (surge through the water), speed_mps (|v| horizontal+vertical), pitch_deg, roll_deg,
    heave_rate_mps (dz/dt, + down), yaw_rate_dps: means (rates: slopes) over the last 15 % of the run."""
    act = actuation(spec)
    thr = np.array([act.thrust(act.surge, lv) for _, lv in levels]).reshape(len(levels), -1)
    fins = np.zeros((len(levels), len(spec.fins)))
    run = run_rows(spec, lambda *_: (thr, fins, np.zeros(len(levels))), len(levels), duration_s, **kw)
    t, nu, eul, pos = run["t"], run["nu"], run["euler_rad"], run["position_ned"]
    rows = []
    for i, (label, _) in enumerate(levels):
        rows.append(
            Row(
                label,
                {
                    "u_mps": float(_tail_mean(nu[i, :, 0])),
                    "speed_mps": float(_tail_mean(np.linalg.norm(nu[i, :, :3], axis=-1))),
                    "pitch_deg": float(np.degrees(_tail_mean(eul[i, :, 1]))),
                    "roll_deg": float(np.degrees(_tail_mean(eul[i, :, 0]))),
                    "heave_rate_mps": float(_tail_rate(t, pos[i, :, 2])),
                    "yaw_rate_dps": float(np.degrees(_tail_mean(nu[i, :, 5]))),
                },
            )
        )
    units = {"u_mps": "m/s", "speed_mps": "m/s", "pitch_deg": "deg", "roll_deg": "deg", "heave_rate_mps": "m/s"}
    units["yaw_rate_dps"] = "deg/s"
    return Manoeuvre("speed", "steady speed against command (open loop, fins at zero)", tuple(rows),
                     _traces(run, [lab for lab, _ in levels]), units)  # fmt: skip


def _steering(act: Actuation, level: float, inner_level: float, angle_deg: float) -> Callable:
    """(sign (R,)) -> (thruster commands, fin commands rad, steer record) for steering to port (-1) or
    starboard (+1): rudder fins at sign * angle_deg, or, with no rudder, differential thrust (outer side at
    `level`, inner at `inner_level`)."""
    base = act.thrust(act.surge, level)
    if act.has_rudder:
        delta = np.radians(angle_deg) * act.rudder

        def steer(sign: np.ndarray):
            n = sign.size
            return np.tile(base, (n, 1)), sign[:, None] * delta[None, :], sign * angle_deg

        return steer
    if not act.has_differential_yaw:
        raise ValueError("the model has neither rudder fins nor forward thrusters on both sides")
    inner = act.thrust(act.surge, inner_level)

    def steer_diff(sign: np.ndarray):
        outer_is_pos_yaw = sign[:, None] > 0
        pos_yaw = (act.yaw > 0)[None, :]
        use_outer = np.where(outer_is_pos_yaw, pos_yaw, ~pos_yaw) | (act.yaw == 0)[None, :]
        thr = np.where(use_outer | (sign[:, None] == 0), base[None, :], inner[None, :])
        return thr, np.zeros((sign.size, act.rudder.size)), sign.astype(float)

    return steer_diff


def turning_circles(
    spec: VehicleSpec,
    angle_deg: float | tuple[float, ...],
    level: float = 1.0,
    inner_level: float = 0.0,
    approach_s: float = 40.0,
    turn_s: float = 120.0,
    **kw,
) -> Manoeuvre:
    """Turning circles to port and to starboard after a straight approach at `level`, for each rudder angle.

    Rudder at -/+angle_deg (vehicles with rudder fins; rows 'port A deg', 'starboard A deg' per angle A) or
    differential thrust (outer side at `level`, inner at `inner_level`; the angles are then ignored). Values per
    row: approach_speed_mps U0, speed_mps U and yaw_rate_dps r (means over the last 25 % of the turn),
    speed_ratio U/U0, diameter_m (circle fitted to the horizontal track of the last full revolution, or of the
    last 25 % when the turn makes less than one), advance_m and tactical_diameter_m (along and across the
    approach track, at 90 and 180 deg of heading change), roll_deg and pitch_deg (means), heave_rate_mps
    (+ down), turns (revolutions made)."""
    act = actuation(spec)
    angles = [float(a) for a in np.atleast_1d(angle_deg)] if act.has_rudder else [0.0]
    steer = _steering(act, level, inner_level, 1.0)
    signs = np.tile([-1.0, 1.0], len(angles))
    scale = np.repeat(angles, 2) if act.has_rudder else np.ones(2)
    idle = np.zeros(signs.size)

    def control(t, pos, eul, nu):
        thr, fins, rec = steer(signs if t >= approach_s else idle)
        return thr, fins * scale[:, None], rec * scale

    run = run_rows(spec, control, signs.size, approach_s + turn_s, **kw)
    if act.has_rudder:
        labels = [f"{side} {a:g} deg" for a in angles for side in ("port", "starboard")]
    else:
        labels = [f"{side} (differential {level:g}/{inner_level:g})" for side in ("port", "starboard")]
    rows = tuple(Row(lab, _turn_values(run, i, approach_s)) for i, lab in enumerate(labels))
    units = {
        "approach_speed_mps": "m/s", "speed_mps": "m/s", "speed_ratio": "-", "yaw_rate_dps": "deg/s",
        "diameter_m": "m", "advance_m": "m", "tactical_diameter_m": "m", "roll_deg": "deg", "pitch_deg": "deg",
        "heave_rate_mps": "m/s", "turns": "rev",
    }  # fmt: skip
    return Manoeuvre("turning", "turning circles", rows, _traces(run, labels), units)


def _turn_values(run: dict[str, np.ndarray], i: int, approach_s: float) -> dict[str, float]:
    t, pos, eul, nu = run["t"], run["position_ned"][i], run["euler_rad"][i], run["nu"][i]
    k0 = int(np.searchsorted(t, approach_s))
    tt, p, psi = t[k0:], pos[k0:], eul[k0:, 2] - eul[k0, 2]
    speed = np.linalg.norm(nu[:, :3], axis=-1)
    quarter = max(2, tt.size // 4)
    turned = abs(psi[-1]) / (2 * np.pi)
    last_turn = np.abs(psi) >= abs(psi[-1]) - 2 * np.pi
    sel = last_turn if turned >= 1.0 else np.arange(tt.size) >= tt.size - quarter
    x, y = p[sel, 0] - p[0, 0], p[sel, 1] - p[0, 1]
    return {
        "approach_speed_mps": float(speed[k0 - 1] if k0 > 0 else speed[0]),
        "speed_mps": float(speed[-quarter:].mean()),
        "speed_ratio": float(speed[-quarter:].mean() / max(speed[k0 - 1] if k0 > 0 else speed[0], 1e-9)),
        "yaw_rate_dps": float(np.degrees(nu[-quarter:, 5].mean())),
        "diameter_m": float(2.0 * _circle_radius(x, y)),
        "advance_m": _at_heading(psi, p[:, 0] - p[0, 0], np.pi / 2),
        "tactical_diameter_m": _at_heading(psi, np.abs(p[:, 1] - p[0, 1]), np.pi),
        "roll_deg": float(np.degrees(eul[-quarter:, 0].mean())),
        "pitch_deg": float(np.degrees(eul[-quarter:, 1].mean())),
        "heave_rate_mps": float(_tail_rate(tt, p[:, 2], 0.25)),
        "turns": float(turned),
    }


def _circle_radius(x: np.ndarray, y: np.ndarray) -> float:
    """Radius of the least-squares circle x^2 + y^2 + D x + E y + F = 0 (the algebraic fit of [Kasa1976])."""
    a = np.column_stack([x, y, np.ones_like(x)])
    d, e, f = np.linalg.lstsq(a, -(x * x + y * y), rcond=None)[0]
    return float(np.sqrt(max(0.25 * (d * d + e * e) - f, 0.0)))


def _at_heading(psi: np.ndarray, value: np.ndarray, angle: float) -> float:
    """value (linearly interpolated) where |heading change| first reaches `angle`; NaN if it never does."""
    a = np.abs(psi)
    k = int(np.argmax(a >= angle))
    if a[k] < angle:
        return float("nan")
    if k == 0:
        return float(value[0])
    w = (angle - a[k - 1]) / (a[k] - a[k - 1])
    return float(value[k - 1] + w * (value[k] - value[k - 1]))


def zigzag(
    spec: VehicleSpec,
    pairs: list[tuple[float, float]],
    level: float = 1.0,
    inner_level: float = 0.0,
    approach_s: float = 40.0,
    duration_s: float = 90.0,
    **kw,
) -> Manoeuvre:
    """delta/psi zig-zags ([IMO2002]), one row per (delta_deg, psi_deg) pair: rudder to starboard, reversed
    each time the heading change passes +-psi (checked every record_s). Vehicles without rudder fins steer by
    differential thrust (delta is then ignored: full differential). Values: overshoot1_deg, overshoot2_deg
    (heading beyond +-psi after the 1st and 2nd reversal), reversal1_s (time from rudder-over to the first
    reversal), period_s (between the 1st and 3rd reversal), speed_mps (mean after the first reversal)."""
    act = actuation(spec)
    rows_n = len(pairs)
    deltas = np.array([d for d, _ in pairs], dtype=float)
    psis = np.radians([p for _, p in pairs])
    base_steer = _steering(act, level, inner_level, 1.0)
    state = {"sign": np.ones(rows_n), "psi0": None}

    def control(t, pos, eul, nu):
        if t < approach_s:
            return base_steer(np.zeros(rows_n))
        if state["psi0"] is None:
            state["psi0"] = eul[:, 2].copy()
        dpsi = np.unwrap(np.stack([state["psi0"], eul[:, 2]]), axis=0)[1] - state["psi0"]
        s = state["sign"]
        s[(s > 0) & (dpsi >= psis)] = -1.0
        s[(s < 0) & (dpsi <= -psis)] = 1.0
        thr, fins, rec = base_steer(s.copy())
        if act.has_rudder:
            fins = fins * deltas[:, None]
            rec = rec * deltas
        return thr, fins, rec

    run = run_rows(spec, control, rows_n, approach_s + duration_s, **kw)
    labels = [f"{d:g}/{p:g}" if act.has_rudder else f"differential/{p:g}" for d, p in pairs]
    rows = tuple(Row(lab, _zigzag_values(run, i, approach_s, np.degrees(psis[i]))) for i, lab in enumerate(labels))
    units = {"overshoot1_deg": "deg", "overshoot2_deg": "deg", "reversal1_s": "s", "period_s": "s", "speed_mps": "m/s"}
    return Manoeuvre("zigzag", "zig-zag", rows, _traces(run, labels), units)


def _zigzag_values(run: dict[str, np.ndarray], i: int, approach_s: float, psi_deg: float) -> dict[str, float]:
    t, steer = run["t"], run["steer"][i]
    k0 = int(np.searchsorted(t, approach_s))
    psi = np.degrees(run["euler_rad"][i, :, 2] - run["euler_rad"][i, k0, 2])
    sign = np.sign(steer)
    switches = [k for k in range(k0 + 1, t.size) if sign[k] != sign[k - 1] and sign[k - 1] != 0]
    over = []
    for j, k in enumerate(switches[:2]):
        end = switches[j + 1] if j + 1 < len(switches) else t.size
        prev = sign[k - 1]
        over.append(float(np.max(prev * psi[k:end]) - psi_deg))
    nan = float("nan")
    speed = np.linalg.norm(run["nu"][i, :, :3], axis=-1)
    return {
        "overshoot1_deg": over[0] if over else nan,
        "overshoot2_deg": over[1] if len(over) > 1 else nan,
        "reversal1_s": float(t[switches[0]] - t[k0]) if switches else nan,
        "period_s": float(t[switches[2]] - t[switches[0]]) if len(switches) > 2 else nan,
        "speed_mps": float(speed[switches[0] :].mean()) if switches else nan,
    }


def pitch_steps(
    spec: VehicleSpec, angle_deg: float, level: float = 1.0, approach_s: float = 40.0, step_s: float = 60.0, **kw
) -> Manoeuvre:
    """Elevator steps at speed: rows 0, +angle (nose up) and -angle after a straight approach at `level`.
    Values: pitch_deg (steady, mean of the last 25 %), heave_rate_mps (+ down, slope of the last 25 %),
    speed_mps, pitch_rate_peak_dps (largest |q| after the step)."""
    act = actuation(spec)
    if not act.has_elevator:
        raise ValueError(f"model {spec.name} has no elevator fins")
    base = act.thrust(act.surge, level)
    angles = np.array([0.0, angle_deg, -angle_deg])
    delta = np.radians(angles)[:, None] * act.elevator[None, :]

    def control(t, pos, eul, nu):
        on = t >= approach_s
        return np.tile(base, (3, 1)), delta * on, angles * on

    run = run_rows(spec, control, 3, approach_s + step_s, **kw)
    labels = ["0 deg", f"+{angle_deg:g} deg (nose up)", f"-{angle_deg:g} deg (nose down)"]
    t = run["t"]
    k0 = int(np.searchsorted(t, approach_s))
    rows = []
    for i, lab in enumerate(labels):
        rows.append(
            Row(
                lab,
                {
                    "pitch_deg": float(np.degrees(_tail_mean(run["euler_rad"][i, :, 1], 0.25))),
                    "heave_rate_mps": float(_tail_rate(t, run["position_ned"][i, :, 2], 0.25)),
                    "speed_mps": float(_tail_mean(np.linalg.norm(run["nu"][i, :, :3], axis=-1), 0.25)),
                    "pitch_rate_peak_dps": float(np.degrees(np.max(np.abs(run["nu"][i, k0:, 4])))),
                },
            )
        )
    units = {"pitch_deg": "deg", "heave_rate_mps": "m/s", "speed_mps": "m/s", "pitch_rate_peak_dps": "deg/s"}
    return Manoeuvre("pitch", "elevator steps at speed", tuple(rows), _traces(run, labels), units)


STEP_DOFS = {"surge": (0, "surge", "m/s"), "heave": (2, "heave", "m/s"), "yaw": (5, "yaw", "deg/s")}


def step_responses(spec: VehicleSpec, levels: tuple[float, ...] = (1.0,), duration_s: float = 20.0, **kw) -> Manoeuvre:
    """From rest, a step of each level on each degree of freedom the thrusters can drive alone (surge, heave
    down, yaw to starboard; no heave for surface vessels), one row each ('surge 1', 'yaw 0.5', ...). Values:
    steady (m/s or deg/s, mean of the last 15 %), tau63_s (first time at 63.2 % of the steady value), rise_s
    (10 % to 90 %)."""
    act = actuation(spec)
    dofs = [d for d in STEP_DOFS if np.any(getattr(act, d)) and not (spec.domain == "surface" and d == "heave")]
    cases = [(d, lv) for d in dofs for lv in levels]
    thr = np.array([act.thrust(getattr(act, d), lv) for d, lv in cases]).reshape(len(cases), -1)
    fins = np.zeros((len(cases), len(spec.fins)))
    rec = np.array([lv for _, lv in cases])
    run = run_rows(spec, lambda *_: (thr, fins, rec), len(cases), duration_s, **kw)
    rows = []
    for i, (d, lv) in enumerate(cases):
        col = STEP_DOFS[d][0]
        x = run["nu"][i, :, col] * (180.0 / np.pi if col >= 3 else 1.0)
        steady = float(_tail_mean(x))
        rows.append(Row(f"{d} {lv:g}", {"steady": steady, **_step_times(run["t"], x, steady)}))
    units = {"steady": "m/s (surge, heave) or deg/s (yaw)", "tau63_s": "s", "rise_s": "s"}
    return Manoeuvre("steps", "step responses from rest", tuple(rows), _traces(run, [r.label for r in rows]), units)


def _step_times(t: np.ndarray, x: np.ndarray, steady: float) -> dict[str, float]:
    """tau63_s and rise_s (10-90 %) of a step response x(t) towards `steady`."""
    if abs(steady) < 1e-9:
        return {"tau63_s": float("nan"), "rise_s": float("nan")}
    y = x / steady

    def first(level: float) -> float:
        k = int(np.argmax(y >= level))
        if y[k] < level:
            return float("nan")
        if k == 0:
            return float(t[0])
        return float(t[k - 1] + (level - y[k - 1]) / (y[k] - y[k - 1]) * (t[k] - t[k - 1]))

    return {"tau63_s": first(1.0 - np.exp(-1.0)), "rise_s": first(0.9) - first(0.1)}
