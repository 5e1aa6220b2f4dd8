"""The environment of a dynamics worker: the configuration applied last, and the current and wind held at the
vessels between two samples (ROS-free).

Currents and wind vary over minutes and hundreds of metres: they are sampled at the vessels every
`period_ns` of sim time (and whenever the fleet changes: `invalidate`) and held in between, so the physics
integrates the steps between two samples in one call. Until a configuration is applied the water is still and
there is no wind (nothing is sampled). The environment is a pure function of its configuration and sim time
(lotusim_env.environment), so a checkpoint keeps the configuration, the held samples and the time of the next.
Waves are not held: they change within seconds, so the fleet evaluates the sea (`sea`, the configuration's wave
table in float32) before every step (Fleet.step(waves=...), lotusim_physics.sea_over_hulls).
Frames: the models are ENU, the held samples NED (the physics' frame); velocities in m/s.
"""

from __future__ import annotations

import numpy as np

from lotusim_core.base import frames, safe_yaml
from lotusim_env.environment import Environment, build_environment
from lotusim_env.waves import WaveComponents


def sea_of(environment: Environment) -> WaveComponents | None:
    """The wave table the physics evaluates: float32 (2 mm and 2 mm/s of float64 at 10 km and one hour, 15x
    faster: docs/performance.md, 'Waves'), None for a calm sea."""
    return None if environment.waves.calm else environment.waves.components.astype(np.float32)


class HeldEnvironment:
    """The applied environment configuration (its YAML and revision) and its samples held at the vessels."""

    def __init__(self, period_s: float) -> None:
        self.period_ns = max(1, round(period_s * 1e9))  # sim time between two samples, ns
        self.environment: Environment = build_environment(None)
        self.sea: WaveComponents | None = None  # the waves the fleet evaluates every step (None: a flat sea)
        self.config_yaml = ""  # of the configuration applied ("": none, still water)
        self.revision = 0  # of the /lotusim/environment applied (0: none yet)
        self.samples: dict[str, np.ndarray] = {}  # "current", "wind": (N, 3) NED m/s at the vessels, or empty
        self.next_ns = 0  # sim time of the next sample, ns

    @property
    def active(self) -> bool:
        """Whether a configuration was applied (otherwise still water, no wind)."""
        return bool(self.config_yaml)

    def apply(self, config_yaml: str, revision: int) -> None:
        """Apply configuration `config_yaml` (YAML text) of `revision`; the held samples are dropped. Raises
        (anything lotusim_env.environment.build_environment or the YAML loader raise) with nothing changed."""
        environment = build_environment(safe_yaml.load(config_yaml))
        self.environment, self.config_yaml, self.revision = environment, config_yaml, revision
        self.sea = sea_of(environment)
        self.samples = {}

    def restore(self, environment: Environment, config_yaml: str, samples: dict, next_ns: int) -> None:
        """Take a checkpoint's environment, held samples and next sample time (the revision is kept)."""
        self.environment, self.config_yaml = environment, config_yaml
        self.sea = sea_of(environment)
        self.samples, self.next_ns = samples, next_ns

    def invalidate(self) -> None:
        """Drop the held samples (the fleet changed): the next step samples again."""
        self.samples = {}

    def held_for(self, vessels: int) -> bool:
        """Whether samples for exactly `vessels` vessels are held."""
        return bool(self.samples) and len(self.samples["current"]) == vessels

    def steps_to_next_sample(self, t_ns: int, step_ns: int) -> int:
        """The steps from sim time `t_ns` (ns) after which a new sample is due (>= 1 unless a sample is due
        now: then one period, in steps, from now; both rounded up)."""
        if t_ns < self.next_ns:
            return -(-(self.next_ns - t_ns) // step_ns)
        return -(-self.period_ns // step_ns)

    def sample(self, t_ns: int, fleet) -> bool:
        """Evaluate current and wind at sim time `t_ns` at the vessels of `fleet` (a Fleet: its names and its
        position_ned (N, 3) NED m) if the held values are stale (the period passed, or another vessel count);
        returns whether it sampled."""
        n = len(fleet.names)
        if t_ns < self.next_ns and self.samples.get("current", np.zeros((0, 3))).shape[0] == n:
            return False
        self.next_ns = t_ns + self.period_ns
        t_s = t_ns * 1e-9
        positions_enu = frames.ned_to_enu(fleet.position_ned)
        env = self.environment
        self.samples = {
            "current": frames.enu_to_ned(env.current.velocity_enu(t_s, positions_enu)),
            "wind": frames.enu_to_ned(env.wind.velocity_enu(t_s, positions_enu)),
        }
        return True

    def current(self, _t_s: float, _positions_ned: np.ndarray) -> np.ndarray:
        """The held current (N, 3) NED m/s (a Fleet.step environment field)."""
        return self.samples["current"]

    def wind(self, _t_s: float, _positions_ned: np.ndarray) -> np.ndarray:
        """The held wind at 10 m (N, 3) NED m/s (a Fleet.step environment field)."""
        return self.samples["wind"]

    def write_enu(self, dst: np.ndarray) -> None:
        """Write the held current (columns 0:3) and wind (3:6), ENU m/s, into `dst` (N, 6); zeros if no sample
        is held for those N vessels."""
        if self.held_for(len(dst)):
            dst[:, :3] = frames.ned_to_enu(self.samples["current"])
            dst[:, 3:] = frames.ned_to_enu(self.samples["wind"])
        else:
            dst[:] = 0.0
