"""The parameters of a dynamics worker, their defaults and their checks, and the output schedules they give
(ROS-free: the node declares PARAMETERS and passes their values to WorkerSettings.from_parameters).

Rates of sim time are kept exactly on average (lotusim_physics.output_schedule): the fleet state every
`fleet_state_every` steps, or at `fleet_state_rate_hz` (Hz of sim time) when that is > 0; each vessel's odometry
(and its transform) at `odom_rate_hz`, 0 for none.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from lotusim_physics.output_schedule import SimTimeRate
from lotusim_physics.pacing import CONTROL_LAG_S, check_mode, target_rtf

PARAMETERS = {  # ROS parameter -> default (its type is the default's)
    "step_s": 0.03,
    "mode": "realtime",
    "real_time_factor": 1.0,
    "clock_master": True,
    "fleet_state_every": 1,
    "fleet_state_rate_hz": 0.0,
    "odom_rate_hz": 10.0,
    "publish_tf": True,
    "stats_rate_hz": 1.0,
    "integrator": "rk4",
    "substeps": 1,
    "water_density_kgm3": 1025.0,
    # Currents and wind vary over minutes and hundreds of metres: they are sampled at the vessels every
    # environment_period_s of sim time (and whenever the fleet changes) and held in between.
    "environment_period_s": 0.1,
    # checkpoints: saved and restored by name in this directory (lotusim_core.base.checkpoint_store.checkpoint_dir)
    "checkpoint_dir": "",
    # collisions (lotusim_physics.collisions): vessels with each other, the seabed, the coast and the world's
    # objects; the contact law's restitution e in [0, 1] and Coulomb friction mu >= 0
    "collisions": True,
    "collision_restitution": 0.0,
    "collision_friction": 0.0,
    # realtime / scaled clock master: the sim time runs at most this far (s) ahead of the latest answer of each
    # host that answers every fleet state (lotusim_physics.pacing.ControlLag); 0: it waits for none
    "max_control_lag_s": CONTROL_LAG_S,
}


@dataclass(frozen=True)
class WorkerSettings:
    """A worker's checked parameters (s, Hz of sim time unless said otherwise)."""

    step_s: float
    mode: str
    rtf_target: float  # 1 in realtime mode, `real_time_factor` otherwise
    clock_master: bool
    fleet_state_every: int  # >= 1
    fleet_state_rate_hz: float
    odom_rate_hz: float
    publish_tf: bool
    stats_rate_hz: float  # Hz of wall time
    integrator: str
    substeps: int
    water_density_kgm3: float
    environment_period_s: float
    checkpoint_dir: str
    collisions: bool = True
    collision_restitution: float = 0.0
    collision_friction: float = 0.0
    max_control_lag_s: float = CONTROL_LAG_S

    @classmethod
    def from_parameters(cls, values: dict) -> WorkerSettings:
        """The settings of parameter values (name -> value, those of PARAMETERS); raises ValueError for a mode
        not in lotusim_physics.pacing.MODES, a step that is not a positive number of seconds, or a rate < 0."""
        mode, step_s = values["mode"], float(values["step_s"])
        check_mode(mode)
        if not (step_s > 0 and math.isfinite(step_s)):
            raise ValueError(f"parameter step_s: expected a positive step in seconds, got {step_s}")
        for name in ("fleet_state_rate_hz", "odom_rate_hz"):
            rate = float(values[name])
            if not (rate >= 0 and math.isfinite(rate)):
                raise ValueError(f"parameter {name}: expected a rate >= 0 Hz (0: off / default), got {rate}")
        restitution = float(values.get("collision_restitution", 0.0))
        friction = float(values.get("collision_friction", 0.0))
        if not 0.0 <= restitution <= 1.0:
            raise ValueError(f"parameter collision_restitution: expected a number in [0, 1], got {restitution}")
        if not (friction >= 0.0 and math.isfinite(friction)):
            raise ValueError(f"parameter collision_friction: expected a number >= 0, got {friction}")
        max_lag = float(values.get("max_control_lag_s", CONTROL_LAG_S))
        if not (max_lag >= 0.0 and math.isfinite(max_lag)):
            raise ValueError(f"parameter max_control_lag_s: expected seconds >= 0 (0: off), got {max_lag}")
        return cls(
            step_s=step_s,
            mode=mode,
            rtf_target=target_rtf(mode, float(values["real_time_factor"])),
            clock_master=bool(values["clock_master"]),
            fleet_state_every=max(1, int(values["fleet_state_every"])),
            fleet_state_rate_hz=float(values["fleet_state_rate_hz"]),
            odom_rate_hz=float(values["odom_rate_hz"]),
            publish_tf=bool(values["publish_tf"]),
            stats_rate_hz=float(values["stats_rate_hz"]),
            integrator=values["integrator"],
            substeps=int(values["substeps"]),
            water_density_kgm3=float(values["water_density_kgm3"]),
            environment_period_s=float(values["environment_period_s"]),
            checkpoint_dir=str(values["checkpoint_dir"]),
            collisions=bool(values.get("collisions", True)),
            collision_restitution=restitution,
            collision_friction=friction,
            max_control_lag_s=max_lag,
        )

    @property
    def step_ns(self) -> int:
        """The step in integer nanoseconds (sim time is iteration * step_ns)."""
        return int(round(self.step_s * 1e9))

    def schedules(self) -> tuple[SimTimeRate, SimTimeRate | None]:
        """(fleet state, odometry or None) schedules in sim time."""
        step_ns = self.step_ns
        if self.fleet_state_rate_hz > 0:
            state = SimTimeRate.from_rate_hz(step_ns, self.fleet_state_rate_hz)
        else:
            state = SimTimeRate(step_ns, self.fleet_state_every * step_ns)
        odom = SimTimeRate.from_rate_hz(step_ns, self.odom_rate_hz) if self.odom_rate_hz else None
        return state, odom

    def too_fast(self) -> list[str]:
        """The rate parameters whose period is shorter than the step (published after every step)."""
        state, odom = self.schedules()
        pairs = (("fleet_state_rate_hz", state), ("odom_rate_hz", odom))
        return [name for name, s in pairs if s is not None and s.period_ns < self.step_ns]
