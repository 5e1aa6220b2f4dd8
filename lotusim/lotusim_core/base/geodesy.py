"""WGS84 geodetic <-> local ENU (`map`) around the scenario's geodetic origin, batched over points.

The world frame `map` (REP 105) is the local East-North-Up tangent frame at the origin (lat0, lon0, h0):
x east, y north, z up, metres. Conversions go through Earth-centred Earth-fixed coordinates on the WGS84
ellipsoid (NIMA TR8350.2: a = 6378137 m, f = 1/298.257223563), computed by pymap3d (Hirsch 2018, JOSS 3(23)
580), exact for any distance (no flat-Earth approximation). Used by the GPS and AIS sensors, the MAS server
(spawn by latitude/longitude) and anything else that speaks WGS84.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pymap3d

WGS84_A_M = 6378137.0  # semi-major axis (NIMA TR8350.2 Table 3.1)
WGS84_F = 1.0 / 298.257223563  # flattening (NIMA TR8350.2 Table 3.1)
WGS84_E2 = WGS84_F * (2.0 - WGS84_F)  # first eccentricity squared


@dataclass(frozen=True)
class GeodeticOrigin:
    """The geodetic point at the origin of `map`: WGS84 latitude, longitude (deg) and ellipsoidal height (m)."""

    latitude_deg: float = 0.0
    longitude_deg: float = 0.0
    altitude_m: float = 0.0

    def __post_init__(self) -> None:
        if not (-90.0 <= self.latitude_deg <= 90.0 and -180.0 <= self.longitude_deg <= 360.0):
            raise ValueError(
                f"geodetic origin: expected latitude in [-90, 90] and longitude in [-180, 360] deg, "
                f"got ({self.latitude_deg}, {self.longitude_deg})"
            )
        if not np.isfinite(self.altitude_m):
            raise ValueError(f"geodetic origin: expected a finite altitude_m, got {self.altitude_m}")

    @classmethod
    def from_mapping(cls, mapping: dict | None, where: str = "origin") -> GeodeticOrigin:
        """Build from {latitude_deg, longitude_deg, altitude_m}; `where` names the source in errors."""
        mapping = mapping or {}
        unknown = set(mapping) - {"latitude_deg", "longitude_deg", "altitude_m"}
        if unknown:
            expected = "latitude_deg, longitude_deg, altitude_m"
            raise ValueError(f"{where}: unknown keys {sorted(unknown)} (expected {expected})")
        try:
            return cls(
                float(mapping.get("latitude_deg", 0.0)),
                float(mapping.get("longitude_deg", 0.0)),
                float(mapping.get("altitude_m", 0.0)),
            )
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{where}: {exc}") from exc


def enu_to_geodetic(points_enu: np.ndarray, origin: GeodeticOrigin) -> np.ndarray:
    """Map N x 3 ENU points (m, `map`) to N x 3 WGS84 [latitude_deg, longitude_deg, ellipsoidal height_m]."""
    p = np.asarray(points_enu, dtype=float).reshape(-1, 3)
    lat, lon, h = pymap3d.enu2geodetic(
        p[:, 0], p[:, 1], p[:, 2], origin.latitude_deg, origin.longitude_deg, origin.altitude_m
    )
    return np.column_stack([lat, lon, h])


def geodetic_to_enu(points_geodetic: np.ndarray, origin: GeodeticOrigin) -> np.ndarray:
    """Map N x 3 WGS84 [latitude_deg, longitude_deg, height_m] to N x 3 ENU points (m, `map`)."""
    g = np.asarray(points_geodetic, dtype=float).reshape(-1, 3)
    e, n, u = pymap3d.geodetic2enu(
        g[:, 0], g[:, 1], g[:, 2], origin.latitude_deg, origin.longitude_deg, origin.altitude_m
    )
    return np.column_stack([e, n, u])


def prime_vertical_radius_m(latitude_deg: np.ndarray | float) -> np.ndarray:
    """N(phi) = a / sqrt(1 - e^2 sin^2 phi), the WGS84 prime-vertical radius of curvature (m)."""
    s = np.sin(np.radians(latitude_deg))
    return WGS84_A_M / np.sqrt(1.0 - WGS84_E2 * s * s)


def meridian_radius_m(latitude_deg: np.ndarray | float) -> np.ndarray:
    """M(phi) = a (1 - e^2) / (1 - e^2 sin^2 phi)^(3/2), the WGS84 meridian radius of curvature (m)."""
    s = np.sin(np.radians(latitude_deg))
    return WGS84_A_M * (1.0 - WGS84_E2) / (1.0 - WGS84_E2 * s * s) ** 1.5
