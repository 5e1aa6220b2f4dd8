"""A dynamics worker's roster, without ROS: per vessel its name, catalogue model, domain and the parameter
overrides it was created with, in fleet order. The dynamics node publishes it latched on /lotusim/fleet_roster
(lotusim_interfaces/FleetRoster, docs/interfaces.md) whenever it changes, so the sensor publisher learns each
vessel's model and creation overrides without asking the worker."""

from __future__ import annotations

from dataclasses import dataclass

from lotusim_physics.worker import FleetWorker


@dataclass(frozen=True)
class RosterEntry:
    """One vessel of a roster (overrides_yaml: YAML mapping over its catalogue model, "" for none)."""

    name: str
    model: str
    domain: str
    overrides_yaml: str


def roster_of(worker: FleetWorker) -> tuple[RosterEntry, ...]:
    """The worker's vessels in fleet order."""
    entries = (worker.vessels[name] for name in worker.fleet.names)
    return tuple(RosterEntry(e.name, e.model, e.domain, e.overrides_yaml) for e in entries)


class RosterRevisions:
    """Counts a worker's rosters: the first is revision 0, each different one the next revision."""

    def __init__(self) -> None:
        self.revision = -1
        self.entries: tuple[RosterEntry, ...] | None = None

    def changed(self, entries: tuple[RosterEntry, ...]) -> int | None:
        """The revision under which to publish `entries`; None if they are those of the last revision."""
        if entries == self.entries:
            return None
        self.revision += 1
        self.entries = entries
        return self.revision
