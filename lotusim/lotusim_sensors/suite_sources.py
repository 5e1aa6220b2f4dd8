"""Which sensors a vessel carries, from its worker's roster and `vessels_yaml` (ROS-free; schema and merge in
lotusim_sensors.suite).

A vessel's suite is the `sensors:` mapping of its catalogue model, merged with the `sensors:` of the overrides
it was created with, then with its entry in the node's `vessels_yaml` (docs/sensors.md). The model and creation
overrides come from the roster its dynamics worker latches on /lotusim/fleet_roster (lotusim_interfaces/FleetRoster,
one per worker, the latest kept); `vessels_yaml` may give the model too (it wins). A vessel that no roster lists
and whose model `vessels_yaml` does not give waits, with no sensors, until a roster lists it; one whose model
`vessels_yaml` gives starts at once, and its creation overrides apply when its roster entry arrives.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import yaml

from lotusim_core.base import safe_yaml
from lotusim_core.base.catalogue import load_vehicle
from lotusim_sensors.suite import merge_sensors, parse_suite

Entry = tuple[str, dict | None]  # (model, `sensors:` of its creation overrides or None)
Entries = dict[str, Entry]  # vessel -> its entry in one worker's roster


def parse_vessels_yaml(text: str) -> dict[str, dict]:
    """The `vessels_yaml` parameter, {vessel: {model: ..., sensors: {...}}}, given as JSON (what the scenario
    planner writes: 100x faster to parse than YAML for 1000 vessels) or YAML; ValueError if malformed."""
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        try:
            data = safe_yaml.load(text)
        except yaml.YAMLError as exc:
            raise ValueError(f"parameter vessels_yaml: invalid YAML ({exc})") from None
    if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
        found = type(data).__name__ if not isinstance(data, dict) else "a non-mapping vessel entry"
        expected = "{vessel: {model: ..., sensors: {...}}}"
        raise ValueError(f"parameter vessels_yaml: expected {expected}, got {found}")
    return data


def spawn_sensors(overrides_yaml: str) -> dict | None:
    """The `sensors:` mapping of the overrides a vessel was created with (None if there are none). The worker
    validated them against the catalogue when it created the vessel; unreadable YAML (which a worker refuses: a
    peer's roster, not ours) counts as none."""
    try:
        overrides = safe_yaml.load(overrides_yaml) if overrides_yaml.strip() else None
    except yaml.YAMLError:
        return None
    sensors = overrides.get("sensors") if isinstance(overrides, dict) else None
    return sensors if isinstance(sensors, dict) else None


class SuiteSources:
    """Suites of the vessels from the workers' rosters and `vessels_yaml`, and which vessels wait for a roster."""

    def __init__(self, vessels: Mapping[str, dict]) -> None:
        self.vessels = vessels  # the parsed `vessels_yaml`
        self.rosters: dict[str, Entries] = {}  # worker -> its latest roster
        # vessel -> (its worker when its suite was resolved, (model, creation sensors) it was resolved with or None
        # while it waits)
        self.used: dict[str, tuple[str, Entry | None]] = {}

    @property
    def unsuited(self) -> set[str]:
        """The vessels without sensors until a roster lists them."""
        return {name for name, (_, inputs) in self.used.items() if inputs is None}

    def entry(self, name: str, worker: str) -> Entry | None:
        """The vessel's entry in `worker`'s roster, else in any roster (it moved), else None."""
        found = self.rosters.get(worker, {}).get(name)
        if found is None:
            found = next((entries[name] for entries in self.rosters.values() if name in entries), None)
        return found

    def _inputs(self, name: str, worker: str) -> Entry | None:
        """(model, creation sensors) of the vessel: the model `vessels_yaml` gives, else its roster's; None while
        neither tells it."""
        given, entry = self.vessels.get(name, {}).get("model"), self.entry(name, worker)
        if entry is None:
            return (given, None) if given else None
        return given or entry[0], entry[1]

    def resolve(self, name: str, worker: str) -> tuple[dict[str, dict], str]:
        """(parsed suite, model) of vessel `name` of `worker`; ({}, "") while it waits for a roster."""
        inputs = self._inputs(name, worker)
        self.used[name] = (worker, inputs)
        if inputs is None:
            return {}, ""
        model, created_with = inputs
        base = merge_sensors(load_vehicle(model).sensors if model else {}, created_with)
        return parse_suite(merge_sensors(base, self.vessels.get(name, {}).get("sensors")),
                           f"vessel {name} (model {model!r}) sensors"), model  # fmt: skip

    def on_roster(self, worker: str, entries: Entries) -> list[str]:
        """Take `worker`'s latest roster; the vessels to configure again: those whose model or creation sensors it
        changes (a vessel that waited; one deleted and created again with another model or overrides). A vessel
        the roster no longer lists keeps its suite (its fleet state removes it)."""
        self.rosters[worker] = entries
        again = []
        for name, (owner, used) in self.used.items():
            inputs = self._inputs(name, owner) if name in entries else None
            if inputs is not None and inputs != used:
                again.append(name)
        return again

    def forget(self, name: str) -> None:
        """The vessel left: a later vessel of the same name may be another model."""
        self.used.pop(name, None)


def entries_of(vessels: list[Any]) -> Entries:
    """The Entries of a FleetRoster's vessels (objects with name, model, overrides_yaml)."""
    return {info.name: (info.model, spawn_sensors(info.overrides_yaml)) for info in vessels}
