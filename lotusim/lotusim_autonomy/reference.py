"""Third-order reference model (setpoint filter) for heading and depth commands.

Fossen 2021 sec. 12.1.1, eq. 12.12 (PVS guidance.refModel3): the desired state x_d follows the command r through
    x_d''' + (2 zeta + 1) w x_d'' + (2 zeta + 1) w^2 x_d' + w^3 x_d = w^3 r
with the rate x_d' saturated to +-v_max; integrated by forward Euler over the caller's step h (s). For angles
(`angle=True`) the error r - x_d is the smallest signed angle, so a command across +-180 deg takes the short way.
Batched: every field may be an array over vessels.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from lotusim_autonomy.pid import ssa


@dataclass
class ReferenceModel3:
    """x_d, its rate v_d and acceleration a_d (units of the commanded quantity per s^k)."""

    omega_rad_s: float | np.ndarray
    zeta: float | np.ndarray = 1.0
    v_max: float | np.ndarray = np.inf
    angle: bool = False
    x: np.ndarray = field(default_factory=lambda: np.zeros(()))
    v: np.ndarray = field(default_factory=lambda: np.zeros(()))
    a: np.ndarray = field(default_factory=lambda: np.zeros(()))

    def reset(self, x0) -> None:
        """Start at rest at x0 (e.g. the measured heading when the autopilot engages)."""
        self.x = np.asarray(x0, dtype=float).copy()
        self.v = np.zeros_like(self.x)
        self.a = np.zeros_like(self.x)

    def step(self, command, h: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Advance by h seconds towards `command`; returns (x_d, v_d, a_d)."""
        w, z = self.omega_rad_s, self.zeta
        err = np.asarray(command, dtype=float) - self.x
        if self.angle:
            err = ssa(err)
        jerk = w**3 * err - (2 * z + 1) * w**2 * self.v - (2 * z + 1) * w * self.a
        x = self.x + h * self.v
        self.x = ssa(x) if self.angle else x
        self.v = np.clip(self.v + h * self.a, -self.v_max, self.v_max)
        self.a = self.a + h * jerk
        return self.x, self.v, self.a
