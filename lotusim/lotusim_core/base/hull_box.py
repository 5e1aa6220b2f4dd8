"""The box that stands for a vessel's hull in collisions (and for other vessels seen by a ray caster), from its
vehicle file. ROS-free.

A vehicle file may give the box itself (`hull_box`: length, beam, height, centre FRD from CO). Otherwise it is
derived from the keys the file has, by domain (docs/physics.md, 'Collisions', lists the box of every shipped
vehicle):

- surface: length L = wind.length_m; height above the waterline h = A_L / L and beam B = A_F / h (the shipped files
  take their wind areas as "above-water height x beam / length", so this gives back their beam and height); the
  box reaches from h above the waterline down to the draft T (surface.draft_m): height h + T, centre
  (0, 0, (T - h) / 2) FRD (CO on the waterline, midships). Without wind areas: the waterplane rectangle of the wave
  sample points (L = sqrt(2 A_wp), B = A_wp / L) and h = T.
- underwater: a cylinder of the hull's diameter d (hull_height_m, else body_lift.diameter_m) holding the displaced
  volume: L = V / (pi d^2 / 4), B = d, height d, centred at the CB.
- aerial: a cube of side twice the contact height, centred at CO.
"""

from __future__ import annotations

import math

import numpy as np

from lotusim_core.base.vehicle_spec import VehicleSpec


def hull_box_of(spec: VehicleSpec) -> tuple[np.ndarray, np.ndarray]:
    """(half extents (3,) m along body x, y, z; centre (3,) m FRD from CO) of the vessel's hull box."""
    if spec.hull_box is not None:
        b = spec.hull_box
        return 0.5 * np.array([b.length_m, b.beam_m, b.height_m]), np.asarray(b.centre_frd_m, dtype=float).copy()
    if spec.domain == "surface":
        return _surface_box(spec)
    if spec.domain == "underwater":
        return _underwater_box(spec)
    side = 2.0 * (spec.aerial.contact_height_m if spec.aerial is not None else 0.25)
    return np.full(3, 0.5 * side), np.zeros(3)


def _surface_box(spec: VehicleSpec) -> tuple[np.ndarray, np.ndarray]:
    draft = spec.surface.draft_m
    w = spec.wind
    if w is not None and w.length_m > 0.0 and w.lateral_area_m2 > 0.0 and w.frontal_area_m2 > 0.0:
        length = w.length_m
        above = w.lateral_area_m2 / length
        beam = w.frontal_area_m2 / above
    else:
        area = spec.surface.waterplane_area_m2
        length = math.sqrt(2.0 * area)
        beam, above = area / length, draft
    return 0.5 * np.array([length, beam, above + draft]), np.array([0.0, 0.0, 0.5 * (draft - above)])


def _underwater_box(spec: VehicleSpec) -> tuple[np.ndarray, np.ndarray]:
    d = spec.hull_height_m or (spec.body_lift.diameter_m if spec.body_lift is not None else 0.0)
    if d <= 0.0:
        d = max(spec.volume_m3, 1e-6) ** (1.0 / 3.0)
    length = max(d, spec.volume_m3 / (0.25 * math.pi * d * d))
    return 0.5 * np.array([length, d, d]), np.asarray(spec.cb_frd_m, dtype=float).copy()


def bounding_radius_m(half_extents: np.ndarray, centre_frd: np.ndarray) -> np.ndarray:
    """Radius (m) of the sphere about CO that holds the box: |centre| + |half extents| (rows or one box)."""
    return np.linalg.norm(centre_frd, axis=-1) + np.linalg.norm(half_extents, axis=-1)
