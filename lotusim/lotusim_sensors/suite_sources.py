"""Which sensors a vessel carries, from three sources (ROS-free; schema and merge in lotusim_sensors.suite).

A vessel's suite is the `sensors:` mapping of its catalogue model, merged with the `sensors:` of the overrides
it was created with, then with its entry in the node's `vessels_yaml` (docs/sensors.md). The model and creation
overrides come from its worker's listing (list_vessels, asked by the node); the model may also be given by
`vessels_yaml`, else the name (`<model>` or `<model>_<k>`) or the default model tells it. A vessel whose worker
can be asked waits for the listing (no sensors) unless `vessels_yaml` names its model; its creation overrides
then apply when the listing arrives. Listings are asked with ListingRequests: at most one request in flight per
worker (its answer serves every vessel that waits), sent again when unanswered for a while (an answer can be lost
while discovery is still matching a new client, docs/simulation.md), or its vessels would wait for ever.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from typing import Any

import yaml

from lotusim_core.base import safe_yaml
from lotusim_core.base.catalogue import list_models, load_vehicle
from lotusim_sensors.suite import merge_sensors, parse_suite

Listing = dict[str, tuple[str, dict | None]]  # vessel -> (model, `sensors:` of its creation overrides or None)


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
    peer's listing, not ours) counts as none."""
    try:
        overrides = safe_yaml.load(overrides_yaml) if overrides_yaml.strip() else None
    except yaml.YAMLError:
        return None
    sensors = overrides.get("sensors") if isinstance(overrides, dict) else None
    return sensors if isinstance(sensors, dict) else None


class SuiteSources:
    """Suites of the vessels, and which of them wait for their worker's listing."""

    def __init__(self, vessels: Mapping[str, dict], default_model: str) -> None:
        self.vessels = vessels  # the parsed `vessels_yaml`
        self.default_model = default_model
        self._model_names = sorted(list_models(), key=len, reverse=True)  # longest first: "wamv_x" before "wamv"
        self.listed: Listing = {}  # from the workers' listings
        self.unsuited: set[str] = set()  # without sensors until their worker's listing tells the model
        self.pending: dict[str, str] = {}  # vessel -> worker whose listing it waits for

    def model_from_name(self, name: str) -> str:
        """The catalogue model a name `<model>` or `<model>_<k>` (k digits) names, else the default model."""
        for model in self._model_names:
            if name == model or (name.startswith(model + "_") and name[len(model) + 1 :].isdigit()):
                return model
        return self.default_model

    def resolve(self, name: str, worker: str, ask: Callable[[str], bool]) -> tuple[dict[str, dict], str]:
        """(parsed suite, model) of vessel `name`; ({}, "") while it waits for `worker`'s listing. `ask(worker)`
        requests that listing if not listed yet: False if the worker cannot be asked (then no wait)."""
        entry = self.vessels.get(name, {})
        listed = self.listed.get(name)
        if listed is None and self._ask(name, worker, ask) and not entry.get("model"):
            self.unsuited.add(name)
            return {}, ""
        listed_model, created_with = listed or ("", None)
        model = entry.get("model") or listed_model or self.model_from_name(name)
        base = merge_sensors(load_vehicle(model).sensors if model else {}, created_with)
        return parse_suite(merge_sensors(base, entry.get("sensors")), f"vessel {name} (model {model!r}) sensors"), model

    def _ask(self, name: str, worker: str, ask: Callable[[str], bool]) -> bool:
        if not ask(worker):
            return False
        self.pending[name] = worker
        return True

    def on_listing(self, worker: str, listing: Listing) -> list[str]:
        """Take `worker`'s listing for the vessels waiting for it (one not in it gets its suite from its name);
        the vessels to configure again: those that waited, and those created with sensor overrides."""
        again = []
        for name in [n for n, w in self.pending.items() if w == worker]:
            del self.pending[name]
            self.listed[name] = listing.get(name, ("", None))
            waited = name in self.unsuited
            self.unsuited.discard(name)
            if waited or self.listed[name][1] is not None:
                again.append(name)
        return again

    def forget(self, name: str) -> None:
        """The vessel left: a later vessel of the same name may be another model."""
        self.listed.pop(name, None)
        self.pending.pop(name, None)
        self.unsuited.discard(name)


def listing_of(vessels: list[Any]) -> Listing:
    """The Listing of a list_vessels reply's vessels (objects with name, model, overrides_yaml)."""
    return {info.name: (info.model, spawn_sensors(info.overrides_yaml)) for info in vessels}


class ListingRequests:
    """list_vessels requests to the workers, through the node's clients (objects with rclpy Client's
    service_is_ready, call_async and remove_pending_request; their futures: add_done_callback, done)."""

    def __init__(
        self,
        make_client: Callable[[str], Any],
        make_request: Callable[[], Any],
        on_answer: Callable[[str, list, str], None],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """make_client(worker) -> its list_vessels client; on_answer(worker, the reply's vessels, "" or why the request
        failed (then no vessels)); clock: wall s."""
        self._make_client, self._make_request, self._on_answer, self._clock = (
            make_client,
            make_request,
            on_answer,
            clock,
        )
        self._clients: dict[str, Any] = {}
        self.inflight: dict[str, tuple[Any, float]] = {}  # worker -> (future, clock time sent)

    def client(self, worker: str) -> Any | None:
        """The worker's client, made at the first call (None for an unnamed worker)."""
        if worker and worker not in self._clients:
            self._clients[worker] = self._make_client(worker)
        return self._clients.get(worker)

    def ask(self, worker: str) -> bool:
        """Request the worker's listing unless a request is in flight; False if its service is not there."""
        client = self.client(worker)
        if client is None or not client.service_is_ready():
            return False
        if worker not in self.inflight:
            self._send(worker, client)
        return True

    def _send(self, worker: str, client: Any) -> None:
        future = client.call_async(self._make_request())
        self.inflight[worker] = (future, self._clock())
        future.add_done_callback(lambda f, w=worker: self._answered(w, f))

    def _answered(self, worker: str, future: Any) -> None:
        self.inflight.pop(worker, None)  # (a request given up on never answers: its future was removed)
        try:
            vessels, error = future.result().vessels, ""
        except Exception as exc:  # noqa: BLE001 - a failed query must not stop the node
            vessels, error = [], str(exc)
        self._on_answer(worker, vessels, error)

    def ask_again(self, retry_s: float) -> list[str]:
        """Send again the requests unanswered for more than retry_s (clock s); the workers asked again."""
        now = self._clock()
        again = []
        for worker, (future, sent) in list(self.inflight.items()):
            if now - sent > retry_s and not future.done():
                self._clients[worker].remove_pending_request(future)
                self._send(worker, self._clients[worker])
                again.append(worker)
        return again
