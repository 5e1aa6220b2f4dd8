"""The controllers' status of the vessels that operators have selected: a client asks to `watch` a vessel (again
every few seconds while it stays selected); the console then subscribes to those of that vessel's controller
status topics that the graph has (std_msgs/Float64MultiArray whose layout label names the values,
lotusim_autonomy's controllers; a controller started later is found at a later refresh) and shows their latest
values; a vessel nobody watched for WATCH_S is dropped, with its subscriptions. Controllers that publish
their status only while subscribed start and stop with it.
"""

from __future__ import annotations

import threading
import time

from std_msgs.msg import Float64MultiArray

# the status topics of lotusim_autonomy's controllers, relative to the vessel: kind -> topic
STATUS_TOPICS = {
    "waypoints": "waypoints/status",
    "autopilot": "autopilot/status",
    "station": "station_keeper/status",
    "flight": "flight_controller/status",
    "usv": "usv_controller/status",
}
WATCH_S = 10.0  # wall seconds a watch lasts without being asked again
MAX_WATCHED = 50  # vessels watched at once, at most


def labelled(msg: Float64MultiArray) -> dict[str, float]:
    """A status message's values by the names of its layout label ("stamp_s,index,count,..."); unnamed values
    as v<k>."""
    names = msg.layout.dim[0].label.split(",") if msg.layout.dim else []
    return {names[k] if k < len(names) else f"v{k}": round(float(v), 3) for k, v in enumerate(msg.data)}


class ControllerWatch:
    """The watched vessels of `node`: name -> until (monotonic s), subscriptions and latest status by kind."""

    def __init__(self, node) -> None:
        self.node = node
        self.until: dict[str, float] = {}
        self.subscriptions: dict[str, dict[str, object]] = {}  # vessel -> kind -> subscription
        self.status: dict[str, dict[str, dict[str, float]]] = {}
        self._lock = threading.Lock()  # watch() comes from the Foxglove server's threads

    def watch(self, name: str) -> None:
        """Watch `name` for WATCH_S more seconds (its subscriptions made on the node's thread: `refresh`)."""
        with self._lock:
            if name in self.until or len(self.until) < MAX_WATCHED:
                self.until[name] = time.monotonic() + WATCH_S

    def refresh(self) -> dict[str, dict[str, dict[str, float]]]:
        """Subscribe to newly watched vessels, drop expired ones; the status of every watched vessel."""
        now = time.monotonic()
        with self._lock:
            watched = dict(self.until)
        published: set[str] | None = None  # the graph's topics, asked once per refresh if needed
        for name, until in watched.items():
            if until < now:
                self._drop_if_expired(name, now)
                continue
            made = self.subscriptions.setdefault(name, {})
            if len(made) == len(STATUS_TOPICS):
                continue
            if published is None:
                published = {topic for topic, _ in self.node.get_topic_names_and_types()}
            for kind, topic in STATUS_TOPICS.items():
                if kind not in made and f"/{name}/{topic}" in published:
                    made[kind] = self._subscribe(name, kind, topic)
        return {name: self.status[name] for name in watched if name in self.subscriptions and self.status.get(name)}

    def _drop_if_expired(self, name: str, now: float) -> None:
        with self._lock:
            if self.until.get(name, now) >= now:  # watched again meanwhile
                return
            del self.until[name]
        for sub in self.subscriptions.pop(name, {}).values():
            self.node.destroy_subscription(sub)
        self.status.pop(name, None)

    def _subscribe(self, name: str, kind: str, topic: str):
        def on_status(msg: Float64MultiArray) -> None:
            self.status.setdefault(name, {})[kind] = labelled(msg)

        return self.node.create_subscription(Float64MultiArray, f"/{name}/{topic}", on_status, 1)
