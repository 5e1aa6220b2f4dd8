"""Fault reports of the fleet: which vessel was frozen, when, and why (docs/architecture.md, rule 7); and the
contact events of aerial vehicles (a touchdown on, or a lift-off from, the surface below them)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from lotusim_physics import layout as L

REASONS = {
    L.FAULT_NONFINITE_STATE: "state became non-finite (NaN/inf)",
    L.FAULT_SPEED: "linear speed exceeded the limit",
    L.FAULT_RATE: "angular rate exceeded the limit",
    L.FAULT_POSITION: "position exceeded the limit",
    L.FAULT_NONFINITE_ENV: "environment gave a non-finite water or air velocity",
}


@dataclass(frozen=True)
class FaultReport:
    """A vessel frozen by the fleet at sim time `sim_time_s`; its state is the last good one (start of the step)."""

    vessel: str
    sim_time_s: float
    code: int
    reason: str

    def __str__(self) -> str:
        return f"vessel '{self.vessel}' frozen at t={self.sim_time_s:.3f} s: {self.reason}"


@dataclass(frozen=True)
class ContactEvent:
    """An aerial vehicle touched down on (touchdown True) or lifted off (False) the sea or a vessel's deck at the
    end of the step ending at sim_time_s (the last sea event of a vehicle within one Fleet.step() call of several
    steps; deck events are found after every step)."""

    vessel: str
    sim_time_s: float
    touchdown: bool
    surface: str = "sea"  # "sea" (the sea or the ground at sea level) or the vessel whose deck it is
    # a touchdown: where the vehicle's CO came to rest; a lift-off: where it was at the end of the step; NED m
    position_ned: tuple[float, float, float] | None = None
    # relative to the surface (the deck), down positive: a touchdown's descent speed at the start of its step; a
    # lift-off's vertical speed at the end of its step (negative: climbing), m/s
    descent_mps: float = math.nan

    def __str__(self) -> str:
        where = "the sea" if self.surface == "sea" else f"the deck of '{self.surface}'"
        what = f"touched down on {where}" if self.touchdown else f"lifted off {where}"
        if not math.isfinite(self.descent_mps):
            speed = ""
        elif self.touchdown:
            speed = f" (descending at {self.descent_mps:.2f} m/s)"
        else:
            speed = f" (climbing at {-self.descent_mps:.2f} m/s)"
        return f"vessel '{self.vessel}' {what} at t={self.sim_time_s:.3f} s{speed}"
