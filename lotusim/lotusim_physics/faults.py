"""Fault reports of the fleet: which vessel was frozen, when, and why (docs/architecture.md, rule 7)."""

from __future__ import annotations

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
