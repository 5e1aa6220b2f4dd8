"""An operator's command as the console receives it (a JSON object from the page or a Foxglove client), checked
before anything is asked of the simulation (ROS-free).

    {"op": "spawn", "name": "usv_9", "model": "wamv", "lat": 48.39, "lon": -4.48, "depth": 0, "heading": 90}
    {"op": "delete", "name": "usv_9"}
    {"op": "move", "name": "usv_9", "lat": 48.391, "lon": -4.481, "depth": 0, "heading": 0}
    {"op": "waypoints", "name": "usv_9", "points": [[48.391, -4.48], [48.392, -4.47]], "speed": 1.5,
     "radius": 5, "loop": false}
    {"op": "pause"}  {"op": "resume"}  {"op": "rtf", "value": 4}

Latitude and longitude are WGS84 degrees, depth metres positive down, heading compass degrees (0 = north,
clockwise), speed m/s, radius m. A bad command raises CommandError with the reason shown to the operator; the
simulation's own checks (a name in use, an unknown model) come back from the MAS server per item.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

MAX_PAYLOAD_BYTES = 65536
MAX_WAYPOINTS = 1000
MAX_NAME_CHARS = 128
MAX_RTF = 1000.0  # lotusim_physics.run_limit.MAX_RTF


class CommandError(ValueError):
    """A command refused before it reached the simulation; str() is the reason for the operator."""


@dataclass(frozen=True)
class Placement:
    latitude_deg: float
    longitude_deg: float
    depth_m: float
    heading_deg: float


@dataclass(frozen=True)
class Spawn:
    name: str
    model: str
    at: Placement


@dataclass(frozen=True)
class Delete:
    name: str


@dataclass(frozen=True)
class Move:
    name: str
    at: Placement


@dataclass(frozen=True)
class Waypoints:
    name: str
    points: tuple[tuple[float, float], ...]  # (latitude_deg, longitude_deg)
    speed_mps: float  # <= 0: the follower's default
    radius_m: float  # <= 0: the follower's default
    loop: bool


@dataclass(frozen=True)
class Pause:
    paused: bool


@dataclass(frozen=True)
class SetRtf:
    value: float


Command = Spawn | Delete | Move | Waypoints | Pause | SetRtf
OPS = ("spawn", "delete", "move", "waypoints", "pause", "resume", "rtf")


def parse_command(payload: bytes | str) -> Command:
    """The command of a JSON payload; raises CommandError (bad JSON, unknown op, a missing or bad field)."""
    if len(payload) > MAX_PAYLOAD_BYTES:
        raise CommandError(f"command: larger than {MAX_PAYLOAD_BYTES} bytes")
    try:
        body = json.loads(payload)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CommandError(f"command: not JSON ({exc})") from None
    if not isinstance(body, dict):
        raise CommandError("command: expected a JSON object with an 'op'")
    op = body.get("op")
    if op not in OPS:
        raise CommandError(f"command: op: expected one of {', '.join(OPS)}, got {op!r}")
    allowed = {
        "spawn": {"name", "model", "lat", "lon", "depth", "heading"},
        "delete": {"name"},
        "move": {"name", "lat", "lon", "depth", "heading"},
        "waypoints": {"name", "points", "speed", "radius", "loop"},
        "pause": set(),
        "resume": set(),
        "rtf": {"value"},
    }[op]
    unknown = sorted(set(body) - allowed - {"op"})
    if unknown:
        raise CommandError(f"{op}: unknown keys {unknown} (expected {sorted(allowed) or 'none'})")
    if op == "spawn":
        return Spawn(_name(body, op), _text(body, "model", op), _placement(body, op))
    if op == "delete":
        return Delete(_name(body, op))
    if op == "move":
        return Move(_name(body, op), _placement(body, op))
    if op == "waypoints":
        return _waypoints(body)
    if op in ("pause", "resume"):
        return Pause(op == "pause")
    return SetRtf(_number(body, "value", op, low=0.0, high=MAX_RTF, open_low=True))


def describe(command: Command) -> str:
    """One line for the audit log."""
    if isinstance(command, Spawn):
        return f"spawn {command.name} ({command.model}) at {_where(command.at)}"
    if isinstance(command, Delete):
        return f"delete {command.name}"
    if isinstance(command, Move):
        return f"move {command.name} to {_where(command.at)}"
    if isinstance(command, Waypoints):
        return f"waypoints for {command.name}: {len(command.points)} point(s)" + (", loop" if command.loop else "")
    if isinstance(command, Pause):
        return "pause" if command.paused else "resume"
    return f"real-time factor {command.value:g}"


def _where(at: Placement) -> str:
    return f"{at.latitude_deg:.6f}, {at.longitude_deg:.6f}, depth {at.depth_m:g} m, heading {at.heading_deg:g} deg"


def _text(body: dict, key: str, op: str) -> str:
    value = body.get(key)
    if not isinstance(value, str) or not value.strip():
        raise CommandError(f"{op}: {key}: expected a non-empty string, got {value!r}")
    if len(value) > MAX_NAME_CHARS:
        raise CommandError(f"{op}: {key}: longer than {MAX_NAME_CHARS} characters")
    return value.strip()


def _name(body: dict, op: str) -> str:
    return _text(body, "name", op)


def _number(
    body: dict, key: str, op: str, low: float, high: float, default: float | None = None, open_low: bool = False
) -> float:
    value = body.get(key, default)
    if value is None:
        raise CommandError(f"{op}: {key}: a number is needed")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise CommandError(f"{op}: {key}: expected a number, got {value!r}")
    if value < low or value > high or (open_low and value == low):
        bounds = f"{'(' if open_low else '['}{low:g}, {high:g}]"
        raise CommandError(f"{op}: {key}: expected a number in {bounds}, got {value!r}")
    return float(value)


def _placement(body: dict, op: str) -> Placement:
    return Placement(
        latitude_deg=_number(body, "lat", op, -90.0, 90.0),
        longitude_deg=_number(body, "lon", op, -180.0, 360.0),
        depth_m=_number(body, "depth", op, -1000.0, 11000.0, default=0.0),
        heading_deg=_number(body, "heading", op, -360.0, 360.0, default=0.0),
    )


def _waypoints(body: dict) -> Waypoints:
    points = body.get("points")
    if not isinstance(points, list) or not points:
        raise CommandError("waypoints: points: expected a non-empty list of [lat, lon]")
    if len(points) > MAX_WAYPOINTS:
        raise CommandError(f"waypoints: points: at most {MAX_WAYPOINTS}, got {len(points)}")
    checked = []
    for i, point in enumerate(points):
        if not isinstance(point, list) or len(point) != 2:
            raise CommandError(f"waypoints: points[{i}]: expected [lat, lon], got {point!r}")
        pair = {"lat": point[0], "lon": point[1]}
        checked.append(
            (_number(pair, "lat", f"waypoints: points[{i}]", -90, 90), _number(pair, "lon", f"points[{i}]", -180, 360))
        )
    loop = body.get("loop", False)
    if not isinstance(loop, bool):
        raise CommandError(f"waypoints: loop: expected true or false, got {loop!r}")
    return Waypoints(
        name=_name(body, "waypoints"),
        points=tuple(checked),
        speed_mps=_number(body, "speed", "waypoints", 0.0, 100.0, default=0.0),
        radius_m=_number(body, "radius", "waypoints", 0.0, 10000.0, default=0.0),
        loop=loop,
    )
