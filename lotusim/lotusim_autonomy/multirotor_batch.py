"""The multirotor cascade of lotusim_autonomy.multirotor for N drones of one model at once, ROS-free.

The same laws, equation for equation, as MultirotorController.step (module lotusim_autonomy.multirotor: position,
velocity PI, thrust vector and desired attitude [Lee2010] §III, geometric attitude error, rate PI with the
gyroscopic term, mixer with the thrust > roll/pitch > yaw saturation priority; structure of [PX4Controllers2025]),
evaluated on arrays: row i of every array is drone i; frames NED (world) and FRD (body), SI units. Gains may differ
per drone (one MultirotorGains per row). Equal to the per-drone law within rounding (test_autonomy_multirotor_batch).

MultirotorFleet puts a MultirotorPilot (the flight phases, per drone: events are rare and per drone) in front of
each row and steps them all with one call of the batched cascade: a controller host flies its drones from the
fleet state at 50 Hz in one NumPy pass instead of one Python cascade per odometry message.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields

import numpy as np

from lotusim_autonomy.multirotor import (
    GRAVITY_MPS2,
    FlightTarget,
    MultirotorGains,
    MultirotorPilot,
    PilotSettings,
    RotorMixer,
)
from lotusim_autonomy.odometry import NedState
from lotusim_core.base import rotations
from lotusim_core.base.vehicle_spec import VehicleSpec

RATE_INTEGRAL_MAX = 20.0  # rad/s² of angular acceleration, as MultirotorController's rate PI


def rotations_of(rpy_ned_rad: np.ndarray) -> np.ndarray:
    """R (N, 3, 3) = Rz(ψ) Ry(θ) Rx(φ), body FRD -> NED, of zyx Euler angles (N, 3) (Fossen 2021 §2.2.1)."""
    return rotations.euler_zyx_matrix(rpy_ned_rad)


def _norm_rows(a: np.ndarray) -> np.ndarray:
    return np.sqrt(np.einsum("ij,ij->i", a, a))


def _ssa(angle: np.ndarray) -> np.ndarray:
    return (angle + np.pi) % (2.0 * np.pi) - np.pi


def _gain_rows(gains: Sequence[MultirotorGains]) -> dict[str, np.ndarray]:
    """Every MultirotorGains field as an (N,) array."""
    return {f.name: np.array([float(getattr(g, f.name)) for g in gains]) for f in fields(MultirotorGains)}


class MultirotorBatch:
    """The cascade for N multirotors of one vehicle spec: step(...) -> rotor speeds (N, rotors) rad/s."""

    def __init__(self, spec: VehicleSpec, gains: Sequence[MultirotorGains]) -> None:
        self.spec, self.mixer = spec, RotorMixer(spec)
        self.mass_kg = float(spec.mass_kg)
        self.inertia = np.asarray(spec.inertia_cg_kgm2, dtype=float).reshape(3, 3)
        self.gains: list[MultirotorGains] = []
        self.g: dict[str, np.ndarray] = {}
        self.velocity_integral = np.zeros((0, 3))  # I of the velocity PI (m/s), NED
        self.rate_integral = np.zeros((0, 3))  # I of the rate PI (rad/s), FRD
        self.heading_rad = np.zeros(0)  # the heading held while a yaw rate is asked (NaN: none yet)
        for g in gains:
            self.add(g)

    def __len__(self) -> int:
        return len(self.gains)

    def add(self, gains: MultirotorGains | None = None) -> int:
        """A new row (integrals zero, no heading held); returns its index."""
        self.gains.append(gains or MultirotorGains())
        self.g = _gain_rows(self.gains)
        g = self.g
        self.kv = np.stack([g["velocity_p_per_s"], g["velocity_p_per_s"], g["velocity_z_p_per_s"]], axis=1)
        self.kvi = np.stack([g["velocity_i_per_s2"], g["velocity_i_per_s2"], g["velocity_z_i_per_s2"]], axis=1)
        self.kw = np.stack([g["rate_p_per_s"], g["rate_p_per_s"], g["yaw_rate_p_per_s"]], axis=1)
        self.kwi = np.stack([g["rate_i_per_s2"], g["rate_i_per_s2"], g["yaw_rate_i_per_s2"]], axis=1)
        self.kr = np.stack([g["attitude_p_per_s"], g["attitude_p_per_s"], g["yaw_p_per_s"]], axis=1)
        self.rate_limit = np.stack([g["rate_max_rad_s"], g["rate_max_rad_s"], g["yaw_rate_max_rad_s"]], axis=1)
        self.tan_tilt = np.tan(np.radians(g["tilt_max_deg"]))
        with np.errstate(divide="ignore"):  # bound on I so that |Ki I| <= the integral limit (Pid)
            a_max = g["acceleration_integral_max_mps2"][:, None]
            self.velocity_bound = np.where(self.kvi != 0, a_max / np.abs(self.kvi), np.inf)
            self.rate_bound = np.where(self.kwi != 0, RATE_INTEGRAL_MAX / np.abs(self.kwi), np.inf)
        self.velocity_integral = np.vstack([self.velocity_integral, np.zeros((1, 3))])
        self.rate_integral = np.vstack([self.rate_integral, np.zeros((1, 3))])
        self.heading_rad = np.append(self.heading_rad, np.nan)
        return len(self.gains) - 1

    def reset(self, row: int) -> None:
        """Forget row's integrals and held heading (MultirotorController.reset)."""
        self.velocity_integral[row] = 0.0
        self.rate_integral[row] = 0.0
        self.heading_rad[row] = np.nan

    # --- the loops, rows `rows` ------------------------------------------------------------------------------
    def limit_velocity(self, v: np.ndarray, speed_max: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """Horizontal speed at most min(speed_max, the gains') (speed_max NaN: the gains'), climb/descent limits."""
        g = {k: self.g[k][rows] for k in ("speed_max_mps", "climb_max_mps", "descent_max_mps")}
        limit = np.where(np.isnan(speed_max), g["speed_max_mps"], np.fmin(speed_max, g["speed_max_mps"]))
        v = v.copy()
        speed = np.hypot(v[:, 0], v[:, 1])
        over = speed > limit
        v[over, :2] *= (limit[over] / speed[over])[:, None]
        v[:, 2] = np.minimum(np.maximum(v[:, 2], -g["climb_max_mps"]), g["descent_max_mps"])
        return v

    def thrust_vector(self, a_sp: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """F = m (g e3 − a_sp) (NED N), its vertical part at least 0.2 m g, tilted at most tilt_max."""
        m = self.mass_kg
        f = m * (np.array([0.0, 0.0, GRAVITY_MPS2]) - a_sp)
        f[:, 2] = np.maximum(f[:, 2], 0.2 * m * GRAVITY_MPS2)
        horizontal = np.hypot(f[:, 0], f[:, 1])
        limit = f[:, 2] * self.tan_tilt[rows]
        over = horizontal > limit
        f[over, :2] *= (limit[over] / horizontal[over])[:, None]
        return f

    def desired_attitudes(self, force: np.ndarray, heading: np.ndarray) -> np.ndarray:
        """R_d (N, 3, 3): b3 along F/|F|, b1 as near the heading as that allows [Lee2010] §III."""
        b3 = force / _norm_rows(force)[:, None]
        b1c = np.stack([np.cos(heading), np.sin(heading), np.zeros_like(heading)], axis=1)
        b2 = rotations.cross(b3, b1c)
        n = _norm_rows(b2)
        degenerate = n < 1e-6  # thrust axis horizontal along the heading
        if np.any(degenerate):
            b2[degenerate] = rotations.cross(b3[degenerate], np.tile([0.0, 1.0, 0.0], (int(degenerate.sum()), 1)))
            n[degenerate] = _norm_rows(b2[degenerate])
        b2 = b2 / n[:, None]
        return np.stack([rotations.cross(b2, b3), b2, b3], axis=2)

    def speeds(self, thrust_n: np.ndarray, moment: np.ndarray) -> np.ndarray:
        """Rotor speeds (N, rotors) of RotorMixer.speeds, row by row."""
        mx = self.mixer
        lo, hi = np.zeros_like(mx.thrust_max_n), mx.thrust_max_n
        base = np.clip(-thrust_n[:, None] * mx.pinv[:, 0], lo, hi)
        roll_pitch = moment[:, 0:1] * mx.pinv[:, 1] + moment[:, 1:2] * mx.pinv[:, 2]
        yaw = moment[:, 2:3] * mx.pinv[:, 3]
        base = base + _fit_fractions(base, roll_pitch, lo, hi)[:, None] * roll_pitch
        t = base + _fit_fractions(base, yaw, lo, hi)[:, None] * yaw
        return np.clip(np.sqrt(np.maximum(t, 0.0) / mx.k_f), mx.omega_min, mx.omega_max)

    # --- one step ---------------------------------------------------------------------------------------------
    def step(
        self,
        rows: np.ndarray,
        position_ned: np.ndarray,
        rpy_ned: np.ndarray,
        nu_frd: np.ndarray,
        targets: dict[str, np.ndarray],
        h: np.ndarray,
    ) -> np.ndarray:
        """Rotor speeds (len(rows), rotors) rad/s after a control step of h (s, per row) at the given states.

        targets (arrays over `rows`): position_ned (n, 3) and has_position (n,) bool; velocity_ned (n, 3) (the
        feed-forward of a position target, else the velocity set-point); heading_rad (n,) (NaN: hold the heading
        and turn at yaw_rate_rad_s (n,)); speed_max_mps (n,) (NaN: the gains')."""
        g = {k: v[rows] for k, v in self.g.items()}
        r = rotations_of(rpy_ned)
        velocity = np.einsum("nij,nj->ni", r, nu_frd[:, :3])
        has_p = targets["has_position"]
        err = np.where(has_p[:, None], targets["position_ned"] - position_ned, 0.0)
        kx = np.stack([g["position_p_per_s"], g["position_p_per_s"], g["position_z_p_per_s"]], axis=1)
        v_sp = self.limit_velocity(np.where(has_p[:, None], kx * err, 0.0) + targets["velocity_ned"],
                                   targets["speed_max_mps"], rows)  # fmt: skip
        # velocity PI (Pid with clamping; no saturation of its output, so the integral is only bounded)
        e = v_sp - velocity
        stepping = (h > 0)[:, None]
        integral = np.where(stepping, np.clip(self.velocity_integral[rows] + e * h[:, None],
                                              -self.velocity_bound[rows], self.velocity_bound[rows]),
                            self.velocity_integral[rows])  # fmt: skip
        self.velocity_integral[rows] = integral
        a_sp = self.kv[rows] * e + self.kvi[rows] * integral
        force = self.thrust_vector(a_sp, rows)
        heading, yaw_ff = self._headings(rows, rpy_ned[:, 2], targets, h)
        r_d = self.desired_attitudes(force, heading)
        thrust = np.einsum("ni,ni->n", force, r[:, :, 2])
        # attitude: e_R = ½ (R_dᵀ R − Rᵀ R_d)^∨, Ω_sp = −K_R e_R + ψ̇_ff Rᵀ e3
        m = np.einsum("nki,nkj->nij", r_d, r) - np.einsum("nki,nkj->nij", r, r_d)
        e_r = 0.5 * np.stack([m[:, 2, 1], m[:, 0, 2], m[:, 1, 0]], axis=1)
        limit = self.rate_limit[rows]
        rate_sp = np.clip(-self.kr[rows] * e_r + yaw_ff[:, None] * r[:, 2, :], -limit, limit)
        # rate PI and the gyroscopic term
        rates = nu_frd[:, 3:]
        e_w = rate_sp - rates
        integral = np.where(stepping, np.clip(self.rate_integral[rows] + e_w * h[:, None],
                                              -self.rate_bound[rows], self.rate_bound[rows]),
                            self.rate_integral[rows])  # fmt: skip
        self.rate_integral[rows] = integral
        alpha = self.kw[rows] * e_w + self.kwi[rows] * integral
        moment = alpha @ self.inertia.T + rotations.cross(rates, rates @ self.inertia.T)
        self.last = {"velocity_sp": v_sp, "acceleration_sp": a_sp, "thrust_n": thrust, "attitude_sp": r_d,
                     "rate_sp": rate_sp, "moment": moment}  # fmt: skip
        return self.speeds(np.maximum(thrust, 0.0), moment)

    def _headings(
        self, rows: np.ndarray, psi: np.ndarray, targets: dict[str, np.ndarray], h: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """MultirotorController._heading row by row: the target's heading, or the held heading advanced by the
        asked yaw rate (kept within 1 rad of the vehicle's); and the yaw-rate feed-forward."""
        target = targets["heading_rad"]
        given = ~np.isnan(target)
        held = self.heading_rad[rows]
        held = np.where(np.isnan(held), psi, held)
        y_max = self.g["yaw_rate_max_rad_s"][rows]
        rate = np.clip(targets["yaw_rate_rad_s"], -y_max, y_max)
        lead = np.clip(_ssa(held + rate * np.maximum(h, 0.0) - psi), -1.0, 1.0)
        heading = np.where(given, target, psi + lead)
        self.heading_rad[rows] = heading
        return heading, np.where(given, 0.0, rate)


def _fit_fractions(base: np.ndarray, delta: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Per row, the largest s in [0, 1] with lo <= base + s delta <= hi (allocation._fit_fraction over rows)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        up = np.where(delta > 0, (hi - base) / delta, np.inf)
        down = np.where(delta < 0, (lo - base) / delta, np.inf)
    s = np.minimum(np.minimum(up.min(axis=1), down.min(axis=1)), 1.0)
    return np.maximum(s, 0.0)


class _RowController:
    """What a MultirotorPilot asks of its controller (reset, idle, gains), for one row of a MultirotorBatch."""

    def __init__(self, batch: MultirotorBatch, row: int) -> None:
        self.batch, self.row = batch, row
        self.gains = batch.gains[row]
        self.mixer = batch.mixer

    def reset(self) -> None:
        self.batch.reset(self.row)

    def idle(self) -> np.ndarray:
        return self.batch.mixer.omega_min.copy()


class MultirotorFleet:
    """Drones of one vehicle spec, each with its MultirotorPilot (flight phases), stepped together: the pilots
    choose each drone's target (Python per drone: a few µs), MultirotorBatch computes the rotor speeds of all."""

    def __init__(self, spec: VehicleSpec) -> None:
        self.batch = MultirotorBatch(spec, [])
        self.pilots: list[MultirotorPilot] = []

    def add(self, gains: MultirotorGains | None = None, settings: PilotSettings | None = None) -> MultirotorPilot:
        """A new drone; returns its pilot (commands: takeoff, land, goto, set_velocity, set_mission, ...)."""
        row = self.batch.add(gains)
        pilot = MultirotorPilot(self.batch.spec, self.batch.gains[row], settings)
        pilot.controller = _RowController(self.batch, row)
        self.pilots.append(pilot)
        return pilot

    def step(
        self,
        rows: np.ndarray,
        states: Sequence[NedState],
        position_ned: np.ndarray,
        rpy_ned: np.ndarray,
        nu_frd: np.ndarray,
        h: np.ndarray,
    ) -> np.ndarray:
        """Rotor speeds (len(rows), rotors) of drones `rows` at these states (one NedState per row for its pilot,
        and the same numbers as arrays over rows for the cascade) after control steps h (s, per row):
        MultirotorPilot.step of each, the cascade batched."""
        out = np.empty((len(rows), len(self.batch.mixer.names)))
        flying, targets = [], []
        for k, (row, state) in enumerate(zip(rows.tolist(), states, strict=True)):
            target = self.pilots[row].plan(state)
            if target is not None:
                flying.append(k)
                targets.append(target)
        out[:] = self.batch.mixer.omega_min
        if flying:
            f = np.array(flying)
            out[f] = self.batch.step(rows[f], position_ned[f], rpy_ned[f], nu_frd[f], _target_arrays(targets), h[f])
        return out


_NO_POSITION = np.zeros(3)


def _target_arrays(targets: list[FlightTarget]) -> dict[str, np.ndarray]:
    """The arrays of MultirotorBatch.step from one FlightTarget per row (None fields: NaN, or no position)."""
    return {
        "position_ned": np.array([_NO_POSITION if t.position_ned_m is None else t.position_ned_m for t in targets]),
        "has_position": np.array([t.position_ned_m is not None for t in targets]),
        "velocity_ned": np.array([t.velocity_ned_mps for t in targets], dtype=float),
        "heading_rad": np.array([np.nan if t.heading_rad is None else t.heading_rad for t in targets], dtype=float),
        "yaw_rate_rad_s": np.array([t.yaw_rate_rad_s for t in targets], dtype=float),
        "speed_max_mps": np.array(
            [np.nan if t.speed_max_mps is None else t.speed_max_mps for t in targets], dtype=float
        ),
    }
