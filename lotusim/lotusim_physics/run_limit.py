"""The run limit of a dynamics worker: sim time advances only while it is below the `run_until_s` parameter
and the `paused` parameter is false.

`run_until_s` (double, s of sim time; negative or +inf: no limit, the default) holds the worker at the first
step at or after that time: the step that reaches or passes it is the last one integrated, then the worker
waits (it keeps serving commands, services and stats, and publishes nothing else) until the parameter is raised.
It applies in every mode: the timers of realtime, scaled and fast mode stop stepping, and a lockstep request is
cut at the limit (its reply says so). Sim time is integer nanoseconds, so the limit is exact: 30 s at 0.02 s
steps holds after step 1,500.

`lotusim run` starts the clock master with `run_until_s: 0` (nothing integrates: the scenario's vessels are
spawned and the recorder is listening before sim time leaves 0), then sets it to `--duration` (or raises it in
chunks to pace a recorded fast run). From a shell: `ros2 param set /dynamics_0 run_until_s 60.0`.

`paused` (bool, default false) holds the worker the same way at the step it has reached, whatever
`run_until_s` says, until it is set false again (the operator console's pause; `ros2 param set /dynamics_0 paused
true`). On the clock master it pauses every worker: the followers step only up to its /clock.

`real_time_factor` may change while a realtime or scaled clock master runs (RateParameter): `ros2 param set
/dynamics_0 real_time_factor 4.0`; other workers and modes refuse the change with the reason.
"""

from __future__ import annotations

import dataclasses
import math

from rcl_interfaces.msg import SetParametersResult

from lotusim_physics import pacing

PARAMETER = "run_until_s"
PAUSED = "paused"


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
        self.paused = bool(node.declare_parameter(PAUSED, False).value)
        node.add_on_set_parameters_callback(self._check)
        node.add_post_set_parameters_callback(self._apply)

    def _check(self, parameters) -> SetParametersResult:
        """Refuse a NaN or non-number value (the parameter keeps its value)."""
        for parameter in parameters:
            if parameter.name == PAUSED and not isinstance(parameter.value, bool):
                return SetParametersResult(successful=False, reason=f"{PAUSED}: expected true or false")
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
            elif parameter.name == PAUSED:
                self.paused = bool(parameter.value)

    def allowed(self, iteration: int, steps: int) -> int:
        """How many of `steps` steps from `iteration` may be integrated (0 when held or paused)."""
        if self.paused:
            return 0
        if self.until is None:
            return steps
        return max(0, min(steps, self.until - iteration))

    def describe(self) -> str:
        if self.paused:
            return f"paused (parameter {PAUSED})"
        return f"held at {PARAMETER} = {self.until * self.step_ns * 1e-9:g} s" if self.until is not None else ""


RTF_PARAMETER = "real_time_factor"
MAX_RTF = 1000.0  # a scaled master ticks every step_s / RTF: faster than this is fast mode's job


def rtf_change_problem(mode: str, clock_master: bool, value: object) -> str:
    """Why `real_time_factor` cannot be set to `value` at run time ("" if it can): only a realtime or scaled
    clock master paces by it, and it must be a number in (0, MAX_RTF]."""
    if not clock_master or mode not in ("realtime", "scaled"):
        return f"{RTF_PARAMETER}: changes at run time only on a realtime or scaled clock master (this is {mode})"
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (0.0 < float(value) <= MAX_RTF):
        return f"{RTF_PARAMETER}: expected a number in (0, {MAX_RTF:g}], got {value!r}"
    return ""


class RateParameter:
    """`real_time_factor` changed at run time on a realtime or scaled clock master: the worker switches to
    scaled mode (realtime at 1) and its step timer to step_s / RTF wall seconds. `node` has `settings`
    (WorkerSettings) and, once its timers exist, `_timer`."""

    def __init__(self, node) -> None:
        self.node = node
        node.add_on_set_parameters_callback(self._check)
        node.add_post_set_parameters_callback(self._apply)

    def _check(self, parameters) -> SetParametersResult:
        s = self.node.settings
        for parameter in parameters:
            if parameter.name == RTF_PARAMETER:
                problem = rtf_change_problem(s.mode, s.clock_master, parameter.value)
                if problem:
                    return SetParametersResult(successful=False, reason=problem)
        return SetParametersResult(successful=True)

    def _apply(self, parameters) -> None:
        for parameter in parameters:
            if parameter.name == RTF_PARAMETER:
                rtf = float(parameter.value)
                mode = "realtime" if rtf == 1.0 else "scaled"
                self.node.settings = dataclasses.replace(self.node.settings, mode=mode, rtf_target=rtf)
                self.node.mode = mode
                period_s = pacing.tick_of(mode, True, self.node.settings.step_s, rtf)[1]
                self.node.retime(period_s)
