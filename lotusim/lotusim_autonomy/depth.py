"""Nested (successive-loop) pitch-depth autopilot of a torpedo AUV ([Meyers2025] sec. V-A; Fossen
2021 sec. 15.3.6; PVS remus100 depth autopilot [PVS2025]). NED: depth z down, pitch theta nose-up positive,
pitch rate q and heave velocity w of body FRD.

Outer loop (PI, depth -> pitch command, saturated to +-theta_max):
    theta_d = sat(Kp_z (z - z_d) + Ki_z int (z - z_d))          (shallower than wanted -> nose down)
Inner loop (PID on pitch with rate feedback, plus heave-velocity feedback against the Munk moment):
    delta_q = Kp_t ssa(theta_d - theta) - Kd_t q + Ki_t int ssa(theta_d - theta) - K_w w
delta_q is the "pitch deflection" (rad of equivalent elevator, positive = nose-up moment) that
allocation.FinAllocation maps onto the vehicle's fins. PVS's -K_w w term is kept: the Munk moment
(m_z - m_x) u w turns a body with w > 0 nose-up, so a nose-down correction proportional to w counters it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lotusim_autonomy.pid import Pid, ssa


@dataclass
class DepthPitchAutopilot:
    """Outer depth PI (`depth`, output pitch command, rad) and inner pitch PID (`pitch`, output rad of fin)."""

    depth: Pid
    pitch: Pid
    k_w: float | np.ndarray = 0.0

    def reset(self) -> None:
        self.depth.reset()
        self.pitch.reset()

    def step(self, z_m, z_d_m, theta_rad, q_rad_s, w_mps, h: float) -> tuple[np.ndarray, np.ndarray]:
        """(theta_d, delta_q) for depth z_m (m, down), depth command z_d_m, pitch, pitch rate, heave speed."""
        theta_d = self.depth.step(np.asarray(z_m) - np.asarray(z_d_m), h)
        delta_q = self.pitch.step(ssa(theta_d - np.asarray(theta_rad)), h, derivative=-np.asarray(q_rad_s))
        return theta_d, delta_q - self.k_w * np.asarray(w_mps)
