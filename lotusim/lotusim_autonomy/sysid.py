"""System identification of the 3-DOF surface model (usv_model.py) by least squares, after [SaldarriagaMesa2025]
sec. 3.5-3.6 and sec. 6: an excitation run, Phi(nu, nu_dot) zeta = tau solved for the nine parameters, and a
validation that *simulates* the fitted model on held-out data (not one-step prediction) and scores it with
R^2 = 1 - sum (y - y_hat)^2 / sum (y - mean y)^2, RMSE and MAE per state (the paper's Table 4).

  - Excitation (excitation_commands): persistently exciting thruster commands, a seeded random sequence of
    (common, differential) command levels held for random times; run on the batched physics (run_excitation),
    which records the body velocity, the pose and the thrust the thrusters really gave (rotor lag included),
    turned into tau = B T (the vehicle file's allocation matrix, rows X, Y, N).
  - Accelerations: Savitzky-Golay smoothing and derivative ([SavitzkyGolay1964], scipy.signal.savgol_filter) of
    the sampled velocities, and the same smoothing of tau (both sides of the regression filtered alike),
    as the paper's pipeline filters the logged series before the fit; nothing is taken from the simulator's
    accelerations, so a recording of a real vessel goes through the same path.
  - Fit (fit): the stacked regression of all samples and the three equations. The rows of each equation are
    weighted by the inverse of that equation's residual standard deviation of a first, unweighted pass (the
    equations are in N, N and N m). Covariance s^2 (Phi^T W Phi)^-1 gives the standard deviations and the 95 %
    confidence intervals (Student t).
All velocities body FRD, tau FRD at CO, poses NED (north, east, heading), SI units.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import signal, stats

from lotusim_autonomy.usv_model import ZETA_NAMES, Usv3Dof, regressor, simulate
from lotusim_core.base import frames
from lotusim_core.base.vehicle_spec import VehicleSpec
from lotusim_physics.fleet import Fleet
from lotusim_physics.thrusters import (
    UNIT_TO_RPS,
    allocation_matrix,
    decay_factor,
    rotor_lag,
    t200_thrust,
    thrust_quadratic,
)

STATES = ("u", "v", "r", "x", "y", "psi")
STATE_UNITS = ("m/s", "m/s", "rad/s", "m", "m", "rad")


@dataclass(frozen=True)
class Recording:
    """Samples at times t (N,) s, equally spaced: nu (N, 3) [u, v, r] FRD, tau (N, 3) [X, Y, N] FRD acting
    from each sample to the next, eta (N, 3) [north, east, heading] NED (m, m, rad)."""

    t: np.ndarray
    nu: np.ndarray
    tau: np.ndarray
    eta: np.ndarray

    @property
    def dt_s(self) -> float:
        return float(self.t[1] - self.t[0])

    def slice(self, start: int, stop: int) -> Recording:
        return Recording(self.t[start:stop], self.nu[start:stop], self.tau[start:stop], self.eta[start:stop])


def excitation_commands(n_thrusters: int, side: np.ndarray, duration_s: float, dt_s: float, seed: int) -> np.ndarray:
    """(N, n_thrusters) normalised commands: a common level in [-0.4, 1] and a differential level in
    [-0.8, 0.8] (port +, starboard -; side = -1 port, +1 starboard per thruster), each redrawn after a random
    hold of 2-12 s, clipped to [-1, 1]."""
    rng = np.random.default_rng(seed)
    n = int(round(duration_s / dt_s))
    out = np.empty((n, n_thrusters))
    k = 0
    while k < n:
        hold = int(round(rng.uniform(2.0, 12.0) / dt_s))
        common, diff = rng.uniform(-0.4, 1.0), rng.uniform(-0.8, 0.8)
        out[k : k + hold] = np.clip(common - side * diff, -1.0, 1.0)
        k += hold
    return out


def run_excitation(spec: VehicleSpec, duration_s: float, seed: int, dt_s: float = 0.02) -> Recording:
    """Drive one vessel of `spec` (catalogue, normalised thruster commands) with excitation_commands on the batched
    physics (RK4 at dt_s, calm water) and record every step."""
    side = np.sign([t.position_frd_m[1] for t in spec.thrusters])
    if np.any(side == 0.0) or len(spec.thrusters) < 2:
        raise ValueError(f"sysid: {spec.name}: expected thrusters on both sides of the centreline")
    commands = excitation_commands(len(spec.thrusters), side, duration_s, dt_s, seed)
    b = allocation_matrix(spec.thrusters)[[0, 1, 5]]
    fleet = Fleet(dt_s, "rk4", water_density_kgm3=spec.water_density_kgm3)
    fleet.add("usv", spec, [0.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0])
    n = len(commands)
    nu, eta, tau = np.empty((n, 3)), np.empty((n, 3)), np.empty((n, 3))
    for k in range(n):
        nu[k] = fleet.nu[0, [0, 1, 5]]
        eta[k] = (*fleet.position_ned[0, :2], frames.euler_zyx_from_quat(fleet.q_ned_frd[0])[2])
        fleet.set_thruster_commands("usv", commands[k])
        fleet.step(k * dt_s)
        tau[k] = b @ fleet.thrust_n("usv")  # the thrust over this step (rotor lag included)
    eta[:, 2] = np.unwrap(eta[:, 2])
    return Recording(np.arange(n) * dt_s, nu, tau, eta)


def thrust_from_commands(spec: VehicleSpec, t_s: np.ndarray, commands: np.ndarray, substep_s: float = 0.02):
    """tau (N, 3) [X, Y, N] FRD acting over each interval [t_k, t_k+1] of a recording of thruster commands (N, n)
    held over the interval: each thruster's rotor follows its clipped command with its first-order lag (exact over
    sub-steps of at most substep_s, as lotusim_physics.thrusters), its thrust is averaged over the interval and
    tau = B T (the vehicle file's allocation matrix)."""
    t_s, commands = np.asarray(t_s, dtype=float), np.asarray(commands, dtype=float)
    b = allocation_matrix(spec.thrusters)[[0, 1, 5]]
    state = np.zeros(len(spec.thrusters))
    tau = np.zeros((len(t_s), 3))
    for k in range(len(t_s)):
        h = float(t_s[k + 1] - t_s[k]) if k + 1 < len(t_s) else float(t_s[k] - t_s[k - 1])
        n = max(1, int(np.ceil(h / substep_s)))
        total = np.zeros(len(state))
        for j, thruster in enumerate(spec.thrusters):
            c = (
                min(max(commands[k, j], thruster.command_min), thruster.command_max)
                * UNIT_TO_RPS[thruster.command_unit]
            )
            decay = decay_factor(thruster.time_constant_s, h / n)
            for _ in range(n):
                state[j] = rotor_lag(state[j], c, decay)
                total[j] += _thrust(thruster, state[j], spec.water_density_kgm3)
        tau[k] = b @ (total / n)
    return tau


def _thrust(thruster, s: float, rho: float) -> float:
    if thruster.model == "quadratic":
        kt_rev = thruster.kt_reverse if thruster.kt_reverse is not None else thruster.kt
        return float(thrust_quadratic(rho, thruster.diameter_m, thruster.kt, kt_rev, s))
    return float(t200_thrust(s, thruster.curve))


def accelerations(nu: np.ndarray, dt_s: float, window_s: float = 0.5) -> tuple[np.ndarray, np.ndarray]:
    """(smoothed nu, nu_dot) by a Savitzky-Golay filter of order 3 over window_s (odd number of samples)."""
    w = max(5, int(round(window_s / dt_s)) | 1)
    smooth = signal.savgol_filter(nu, w, 3, axis=0)
    return smooth, signal.savgol_filter(nu, w, 3, deriv=1, delta=dt_s, axis=0)


@dataclass(frozen=True)
class Fit:
    zeta: np.ndarray  # (9,)
    std: np.ndarray  # (9,) standard deviations
    ci95: np.ndarray  # (9, 2)
    residual_std: np.ndarray  # (3,) of the three equations, N, N, N m
    samples: int

    @property
    def model(self) -> Usv3Dof:
        return Usv3Dof(self.zeta)


def fit(rec: Recording, window_s: float = 0.5) -> Fit:
    """Least-squares zeta of Phi zeta = tau over a recording (see the module docstring)."""
    smooth, acc = accelerations(rec.nu, rec.dt_s, window_s)
    edge = max(5, int(round(window_s / rec.dt_s)))  # the filter's edges are less accurate: left out
    phi = regressor(smooth, acc)[edge:-edge]  # (N, 3, 9)
    tau = accelerations(rec.tau, rec.dt_s, window_s)[0][edge:-edge]  # the same smoothing on both sides
    zeta0 = np.linalg.lstsq(phi.reshape(-1, 9), tau.reshape(-1), rcond=None)[0]
    sigma = np.std(tau - phi @ zeta0, axis=0)
    sigma = np.where(sigma > 0.0, sigma, 1.0)
    a = (phi / sigma[None, :, None]).reshape(-1, 9)
    y = (tau / sigma).reshape(-1)
    zeta, *_ = np.linalg.lstsq(a, y, rcond=None)
    dof = max(len(y) - 9, 1)
    s2 = float(np.sum((y - a @ zeta) ** 2) / dof)
    std = np.sqrt(np.diag(s2 * np.linalg.inv(a.T @ a)))
    half = stats.t.ppf(0.975, dof) * std
    resid = np.std(tau - phi @ zeta, axis=0)
    return Fit(zeta, std, np.column_stack([zeta - half, zeta + half]), resid, len(tau))


@dataclass(frozen=True)
class Validation:
    t: np.ndarray
    measured: np.ndarray  # (N, 6) u v r x y psi
    simulated: np.ndarray  # (N, 6)
    r2: np.ndarray  # (6,)
    rmse: np.ndarray
    mae: np.ndarray


def validate(model: Usv3Dof, rec: Recording) -> Validation:
    """Simulate the model over a recording from its first state under its tau and score it per state."""
    nu, eta = simulate(model, rec.nu[0], rec.tau, rec.dt_s, rec.eta[0])
    measured = np.column_stack([rec.nu, rec.eta])
    sim = np.column_stack([nu, eta])
    err = sim - measured
    ss_tot = np.sum((measured - measured.mean(axis=0)) ** 2, axis=0)
    r2 = 1.0 - np.sum(err**2, axis=0) / np.where(ss_tot > 0.0, ss_tot, np.inf)
    return Validation(rec.t, measured, sim, r2, np.sqrt(np.mean(err**2, axis=0)), np.mean(np.abs(err), axis=0))


def identify(rec: Recording, train_fraction: float = 0.6) -> tuple[Fit, Validation]:
    """Fit on the first train_fraction of a recording, validate on the rest (held out)."""
    if not 0.1 <= train_fraction <= 0.9:
        raise ValueError(f"sysid: train_fraction: expected a number in [0.1, 0.9], got {train_fraction}")
    split = int(len(rec.t) * train_fraction)
    if split < 200 or len(rec.t) - split < 200:
        raise ValueError(f"sysid: expected at least 200 samples for fitting and for validation, got {len(rec.t)}")
    result = fit(rec.slice(0, split))
    return result, validate(result.model, rec.slice(split, len(rec.t)))


def vehicle_fragment(spec: VehicleSpec, zeta: np.ndarray) -> dict[str, list[float]]:
    """The identified surge/sway/yaw terms as vehicle-file keys (added mass = zeta_1..3 minus the file's rigid body,
    damping diagonals), the other entries kept from `spec`."""
    rigid = Usv3Dof.from_spec(spec).mass - np.diag(spec.added_mass)[[0, 1, 5]]
    added, lin, quad = (
        np.diag(spec.added_mass).copy(),
        np.diag(spec.damping_linear).copy(),
        np.diag(spec.damping_quadratic).copy(),
    )
    added[[0, 1, 5]] = zeta[:3] - rigid
    lin[[0, 1, 5]] = zeta[[3, 5, 7]]
    quad[[0, 1, 5]] = zeta[[4, 6, 8]]
    return {
        "added_mass": [round(float(x), 4) for x in added],
        "damping_linear": [round(float(x), 4) for x in lin],
        "damping_quadratic": [round(float(x), 4) for x in quad],
    }


__all__ = ["ZETA_NAMES", "Fit", "Recording", "Validation", "fit", "identify", "run_excitation", "validate"]
