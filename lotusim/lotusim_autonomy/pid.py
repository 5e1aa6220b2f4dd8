"""PID with anti-windup and the angle helpers the controllers share; batched: every gain and state is a NumPy
array (or scalar) broadcast over vessels.

Discrete PID (parallel form, Fossen 2021 sec. 15.3 / Astrom & Murray 2008 sec. 10.3 and 10.4):
    u = Kp e + Ki I + Kd de/dt,          de/dt from the error (or -dy/dt, "derivative on measurement")
Anti-windup by conditional integration (Astrom & Murray 2008 sec. 10.4, "clamping"): the integral I += e h is
kept only when the output is not saturated or when the error drives it back from saturation, and |Ki I| is
bounded by `integral_limit` in output units. The output is saturated to [u_min, u_max].
h comes from the caller (sim time between two measurements), never from a wall clock.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np


def ssa(angle_rad):
    """Smallest signed angle: wrap to [-pi, pi) (Fossen 2021 eq. 15.132, PVS gnc.ssa)."""
    return (np.asarray(angle_rad, dtype=float) + np.pi) % (2.0 * np.pi) - np.pi


def sat(x, limit):
    """Saturate x to [-limit, limit] (elementwise)."""
    return np.clip(x, -limit, limit)


@dataclass
class Pid:
    """Parallel PID with clamping anti-windup; gains in output units per error unit (per s for Ki, times s for Kd).

    `step(error, h, derivative=None)` returns the saturated output. Pass `derivative` (d error / dt, e.g. minus
    the measured rate) to avoid differentiating a noisy or stepped error; otherwise the error is differenced.
    """

    kp: float | np.ndarray
    ki: float | np.ndarray = 0.0
    kd: float | np.ndarray = 0.0
    u_max: float | np.ndarray = np.inf
    integral_limit: float | np.ndarray = np.inf  # bound on |Ki I| in output units
    integral: np.ndarray = field(default_factory=lambda: np.zeros(()))
    _last_error: np.ndarray | None = None

    def reset(self) -> None:
        self.integral = np.zeros_like(self.integral)
        self._last_error = None

    def step(self, error, h: float, derivative=None) -> np.ndarray:
        """Output for `error` after a step of h seconds (h > 0; h <= 0 leaves the integral unchanged)."""
        if self._scalar(error, derivative):
            return self._step_scalar(float(error), h, None if derivative is None else float(derivative))
        e = np.asarray(error, dtype=float)
        if derivative is None:
            derivative = np.zeros_like(e) if self._last_error is None or h <= 0 else (e - self._last_error) / h
        self._last_error = e
        integral = np.broadcast_to(self.integral, e.shape).astype(float)
        if h > 0:
            candidate = integral + e * h
            ki = np.asarray(self.ki, dtype=float)
            with np.errstate(divide="ignore", invalid="ignore"):
                bound = np.where(ki != 0, np.asarray(self.integral_limit) / np.abs(ki), np.inf)
            candidate = np.clip(candidate, -bound, bound)
            unsat = self.kp * e + self.ki * candidate + self.kd * derivative
            # clamping: integrate only if the output is inside the limits, or if the error pulls it back in
            saturated = np.abs(unsat) > self.u_max
            winding = saturated & (np.sign(unsat) == np.sign(e))
            integral = np.where(winding, integral, candidate)
        self.integral = integral
        u = self.kp * e + self.ki * integral + self.kd * derivative
        return sat(u, self.u_max)

    def _scalar(self, error, derivative) -> bool:
        """One vessel with scalar gains: the same law in plain floats (a controller host steps hundreds of these
        per second; NumPy's per-call overhead on 0-d arrays was ~150 us a step)."""
        return (
            _is_scalar(error)
            and (derivative is None or _is_scalar(derivative))
            and _is_scalar(self.kp)
            and _is_scalar(self.ki)
            and _is_scalar(self.kd)
            and _is_scalar(self.u_max)
            and _is_scalar(self.integral_limit)
            and _is_scalar(self.integral)
        )

    def _step_scalar(self, e: float, h: float, derivative: float | None) -> np.float64:
        last = None if self._last_error is None else float(self._last_error)
        if derivative is None:
            derivative = 0.0 if last is None or h <= 0 else (e - last) / h
        self._last_error = np.float64(e)
        kp, ki, kd, u_max = float(self.kp), float(self.ki), float(self.kd), float(self.u_max)
        integral = float(self.integral)
        if h > 0:
            bound = float(self.integral_limit) / abs(ki) if ki != 0 else math.inf
            candidate = min(max(integral + e * h, -bound), bound)
            unsat = kp * e + ki * candidate + kd * derivative
            winding = abs(unsat) > u_max and _sign(unsat) == _sign(e)
            integral = integral if winding else candidate
        self.integral = np.float64(integral)
        u = kp * e + ki * integral + kd * derivative
        return np.float64(min(max(u, -u_max), u_max))


_SCALAR_TYPES = (float, int, np.float64)


def _is_scalar(v) -> bool:
    t = type(v)
    return t in _SCALAR_TYPES or (t is np.ndarray and v.ndim == 0)


def _sign(x: float) -> float:
    return (x > 0) - (x < 0)
