"""Who is connected to the console, as what, and what they commanded (ROS-free).

Every client of the console's WebSocket server (the page or Foxglove) is a spectator until it logs in with a
name and a role. An operator may command; a spectator only watches. When the console is bound to an address other
than the loopback, logging in as an operator needs the console's token (compared in constant time). Every
command, accepted or refused, is one entry of the audit log, shown to every client and published on ROS
(`/lotusim/console/audit`, recorded with the rest).
"""

from __future__ import annotations

import functools
import hmac
import re
import threading
import time
from collections import deque
from dataclasses import asdict, dataclass

ROLES = ("spectator", "operator")
NAME_RE = re.compile(r"^[\w .@-]{1,40}$")
AUDIT_KEPT = 200


def _locked(method):
    """The method under the instance's lock: the Foxglove server's threads and the node's thread share it."""

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        with self._lock:
            return method(self, *args, **kwargs)

    return wrapper


class LoginError(ValueError):
    """A login or a command refused for who sent it; str() is the reason."""


@dataclass
class Operator:
    client_id: int
    name: str
    role: str
    since_wall_s: float  # time.time() at connection


@dataclass(frozen=True)
class AuditEntry:
    seq: int
    wall_time_s: float  # time.time()
    sim_time_s: float
    operator: str
    command: str
    ok: bool
    message: str


class Operators:
    """The clients by id. `token`: needed to log in as an operator (None: anyone may)."""

    def __init__(self, token: str | None = None) -> None:
        self.token = token
        self.clients: dict[int, Operator] = {}
        self.revision = 0  # +1 at every change (the console republishes the listing then)
        self._lock = threading.RLock()

    @_locked
    def seen(self, client_id: int) -> Operator:
        """A client that subscribed or called: known, or a new spectator named guest-<id>."""
        if client_id not in self.clients:
            self.clients[client_id] = Operator(client_id, f"guest-{client_id}", "spectator", time.time())
            self.revision += 1
        return self.clients[client_id]

    @_locked
    def left(self, client_id: int) -> None:
        if self.clients.pop(client_id, None) is not None:
            self.revision += 1

    @_locked
    def login(self, client_id: int, name: object, role: object, token: object = None) -> Operator:
        if not isinstance(name, str) or not NAME_RE.match(name.strip()):
            raise LoginError("login: name: 1 to 40 letters, digits, spaces or . @ - _")
        if role not in ROLES:
            raise LoginError(f"login: role: expected one of {', '.join(ROLES)}, got {role!r}")
        if role == "operator" and self.token is not None and not _same(token, self.token):
            raise LoginError("login: operator: this console needs its token (lotusim console --token)")
        operator = self.seen(client_id)
        operator.name, operator.role = name.strip(), role
        self.revision += 1
        return operator

    @_locked
    def commander(self, client_id: int) -> Operator:
        """The operator behind a command; raises LoginError for a spectator."""
        operator = self.seen(client_id)
        if operator.role != "operator":
            raise LoginError(f"{operator.name} is a spectator: log in as an operator to command")
        return operator

    @_locked
    def listing(self) -> list[dict]:
        return [
            {"id": o.client_id, "name": o.name, "role": o.role, "since": round(o.since_wall_s, 1)}
            for o in sorted(self.clients.values(), key=lambda o: o.client_id)
        ]


def _same(given: object, token: str) -> bool:
    return isinstance(given, str) and hmac.compare_digest(given.encode(), token.encode())


class AuditLog:
    """The last AUDIT_KEPT entries, numbered from 1."""

    def __init__(self) -> None:
        self.entries: deque[AuditEntry] = deque(maxlen=AUDIT_KEPT)
        self.seq = 0
        self._lock = threading.Lock()

    @_locked
    def add(self, operator: str, command: str, ok: bool, message: str, sim_time_s: float) -> AuditEntry:
        self.seq += 1
        entry = AuditEntry(self.seq, time.time(), round(sim_time_s, 3), operator, command, ok, message)
        self.entries.append(entry)
        return entry

    @_locked
    def recent(self, count: int = 50) -> list[dict]:
        return [asdict(e) for e in list(self.entries)[-count:]]
