"""The run limit of a dynamics worker: sim time advances only while it is below the `run_until_s` parameter.

`run_until_s` (double, s of sim time; negative or +inf: no limit, the default) holds the worker at the first
step at or after that time: the step that reaches or passes it is the last one integrated, then the worker
waits (it keeps serving commands, services and stats, and publishes nothing else) until the parameter is raised.
It applies in every mode: the timers of realtime, scaled and fast mode stop stepping, and a lockstep request is
cut at the limit (its reply says so). Sim time is integer nanoseconds, so the limit is exact: 30 s at 0.02 s
steps holds after step 1,500.

`lotusim run` starts the clock master with `run_until_s: 0` (nothing integrates: the scenario's vessels are
spawned and the recorder is listening before sim time leaves 0), then sets it to `--duration` (or raises it in
chunks to pace a recorded fast run). From a shell: `ros2 param set /dynamics_0 run_until_s 60.0`.
"""

from __future__ import annotations

import math

from rcl_interfaces.msg import SetParametersResult

PARAMETER = "run_until_s"


def until_iteration(value_s: float, step_ns: int) -> int | None:
    """The iteration of the first step at or after `value_s` seconds of sim time (None: no limit).
    Raises ValueError for NaN."""
    if math.isnan(value_s):
        raise ValueError(f"{PARAMETER}: expected a sim time in s (negative or inf: no limit), got nan")
    if value_s < 0 or math.isinf(value_s):
        return None
    return -(-round(value_s * 1e9) // step_ns)  # ceil in integer nanoseconds


class RunLimit:
    """The `run_until_s` parameter of `node` (declared here, validated on every set) for a worker stepping
    `step_ns` nanoseconds at a time."""

    def __init__(self, node, step_ns: int) -> None:
        self.step_ns = step_ns
        value = float(node.declare_parameter(PARAMETER, -1.0).value)
        self.until = until_iteration(value, step_ns)
        node.add_on_set_parameters_callback(self._check)
        node.add_post_set_parameters_callback(self._apply)

    def _check(self, parameters) -> SetParametersResult:
        """Refuse a NaN or non-number value (the parameter keeps its value)."""
        for parameter in parameters:
            if parameter.name == PARAMETER:
                try:
                    until_iteration(float(parameter.value), self.step_ns)
                except (TypeError, ValueError) as exc:
                    return SetParametersResult(successful=False, reason=str(exc))
        return SetParametersResult(successful=True)

    def _apply(self, parameters) -> None:
        for parameter in parameters:
            if parameter.name == PARAMETER:
                self.until = until_iteration(float(parameter.value), self.step_ns)

    def allowed(self, iteration: int, steps: int) -> int:
        """How many of `steps` steps from `iteration` may be integrated (0 when held)."""
        if self.until is None:
            return steps
        return max(0, min(steps, self.until - iteration))

    def describe(self) -> str:
        return f"held at {PARAMETER} = {self.until * self.step_ns * 1e-9:g} s" if self.until is not None else ""
