"""The console node's parameters and the checks of a start (ROS-free): where the servers bind, the operators'
token, the update rate, the clock master and the map's origin. A console bound beyond the loopback needs a token.
docs/console.md.
"""

from __future__ import annotations

import ipaddress
import math
from dataclasses import dataclass

from lotusim_core.base.geodesy import GeodeticOrigin

PARAMETERS = {
    "host": "127.0.0.1",  # the address both servers bind to; another than the loopback needs `token`
    "port": 8765,  # Foxglove WebSocket server (0: any free port)
    "http_port": 8080,  # the console page (0: any free port; -1: no page)
    "token": "",  # needed to log in as an operator ("" : anyone may, allowed on the loopback only)
    "rate_hz": 10.0,  # updates per wall second to every client
    "master_node": "dynamics_0",  # the clock master: pause, resume and the real-time factor
    "name": "lotusim",  # the server's name, shown by Foxglove
    "origin_latitude_deg": math.nan,  # the map's origin (NaN: from /lotusim/environment's `origin`)
    "origin_longitude_deg": math.nan,
    "origin_altitude_m": 0.0,
}


@dataclass(frozen=True)
class Settings:
    """The console's parameters, checked (PARAMETERS says what each is)."""

    host: str
    port: int
    http_port: int
    token: str
    rate_hz: float
    master_node: str
    name: str
    origin: GeodeticOrigin | None  # None: the map's origin comes from /lotusim/environment

    @classmethod
    def from_parameters(cls, p: dict) -> Settings:
        """The settings of a mapping name -> value with PARAMETERS' keys; raises ValueError (config_problem)."""
        host, token, rate_hz = str(p["host"]), str(p["token"]), float(p["rate_hz"])
        problem = config_problem(host, token, rate_hz)
        if problem:
            raise ValueError(problem)
        lat, lon = float(p["origin_latitude_deg"]), float(p["origin_longitude_deg"])
        origin = None if math.isnan(lat) or math.isnan(lon) else GeodeticOrigin(lat, lon, float(p["origin_altitude_m"]))
        return cls(host, int(p["port"]), int(p["http_port"]), token, rate_hz, str(p["master_node"]), str(p["name"]),
                   origin)  # fmt: skip


def config_problem(host: str, token: str, rate_hz: float) -> str:
    """Why the console cannot start with these parameters ("" if it can)."""
    try:
        loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        return f"host: expected an IP address or localhost, got {host!r}"
    if not loopback and not token:
        return f"host {host}: binding beyond the loopback needs a token (parameter token, lotusim console --token)"
    if not (0.0 < rate_hz <= 100.0):
        return f"rate_hz: expected a rate in (0, 100] Hz, got {rate_hz}"
    return ""
