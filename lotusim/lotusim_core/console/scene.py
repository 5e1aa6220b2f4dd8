"""The fleet as Foxglove's well-known messages (foxglove-sdk), for Foxglove's or Lichtblick's own panels (ROS-free):
a 3-D scene (one box per vessel, sized by domain, coloured by domain, with its name and an arrow of the current
at it), the frame transforms map ->
<vessel>/base_link, and the vessels' geographic positions for a Map panel. Built only while a client subscribes.
"""

from __future__ import annotations

import math

from foxglove.messages import (
    ArrowPrimitive,
    Color,
    CubePrimitive,
    FrameTransform,
    FrameTransforms,
    LocationFix,
    LocationFixes,
    Pose,
    Quaternion,
    SceneEntity,
    SceneEntityDeletion,
    SceneEntityDeletionType,
    SceneUpdate,
    TextPrimitive,
    Timestamp,
    Vector3,
)

from lotusim_core.base import rotations
from lotusim_core.console.fleet_view import Snapshot

# domain -> (RGBA, box length x width x height in m): a stand-in for the hull at a glance, not its shape
LOOKS = {
    "surface": ((0.95, 0.55, 0.1, 1.0), (4.0, 2.0, 1.0)),
    "underwater": ((0.2, 0.6, 1.0, 1.0), (3.0, 0.4, 0.4)),
    "aerial": ((0.3, 0.9, 0.4, 1.0), (0.6, 0.6, 0.25)),
}
OTHER = ((0.7, 0.7, 0.7, 1.0), (2.0, 1.0, 1.0))
CURRENT_ARROW_S = 30.0  # a current arrow is as long as the water moves in this time (m per m/s)
CURRENT_COLOR = Color(r=0.3, g=0.95, b=0.95, a=0.9)


def stamp(sim_time_s: float) -> Timestamp:
    ns = round(sim_time_s * 1e9)
    return Timestamp(ns // 1_000_000_000, ns % 1_000_000_000)


def scene_update(snap: Snapshot, gone: list[str]) -> SceneUpdate:
    """One entity per vessel in `map` (its pose, a box and a label); `gone`: vessels to delete from the scene."""
    t = stamp(snap.sim_time_s)
    entities = []
    for i, name in enumerate(snap.names):
        (r, g, b, a), (lx, ly, lz) = LOOKS.get(snap.domains[i], OTHER)
        pose = _pose(snap, i)
        entities.append(
            SceneEntity(
                timestamp=t,
                frame_id="map",
                id=name,
                frame_locked=False,
                cubes=[CubePrimitive(pose=pose, size=Vector3(x=lx, y=ly, z=lz), color=Color(r=r, g=g, b=b, a=a))],
                arrows=_current_arrow(snap, i),
                texts=[
                    TextPrimitive(
                        pose=pose,
                        billboard=True,
                        font_size=14.0,
                        scale_invariant=True,
                        color=Color(r=1.0, g=1.0, b=1.0, a=1.0),
                        text=name,
                    )  # fmt: skip
                ],
            )
        )
    deletions = [SceneEntityDeletion(timestamp=t, type=SceneEntityDeletionType.MatchingId, id=n) for n in gone]
    return SceneUpdate(deletions=deletions, entities=entities)


def frame_transforms(snap: Snapshot) -> FrameTransforms:
    """map -> <vessel>/base_link for every vessel (REP 105 names, as the simulation's /tf)."""
    t = stamp(snap.sim_time_s)
    out = []
    for i, name in enumerate(snap.names):
        p, q = snap.position[i], snap.orientation[i]
        out.append(
            FrameTransform(
                timestamp=t,
                parent_frame_id="map",
                child_frame_id=f"{name}/base_link",
                translation=Vector3(x=float(p[0]), y=float(p[1]), z=float(p[2])),
                rotation=Quaternion(x=float(q[0]), y=float(q[1]), z=float(q[2]), w=float(q[3])),
            )
        )
    return FrameTransforms(transforms=out)


def location_fixes(snap: Snapshot) -> LocationFixes:
    """Every vessel's WGS84 position (altitude: minus its depth), for a Map panel."""
    t = stamp(snap.sim_time_s)
    return LocationFixes(
        fixes=[
            LocationFix(
                timestamp=t,
                frame_id=name,
                latitude=float(snap.latitude_deg[i]),
                longitude=float(snap.longitude_deg[i]),
                altitude=float(-snap.depth_m[i]),
            )
            for i, name in enumerate(snap.names)
        ]
    )


def _current_arrow(snap: Snapshot, i: int) -> list[ArrowPrimitive]:
    """The current at the vessel (ENU, horizontal) as an arrow from it, CURRENT_ARROW_S seconds of drift long."""
    east, north = (float(c) for c in snap.current_enu[i])
    speed = math.hypot(east, north)
    if speed < 1e-3:
        return []
    yaw = math.atan2(north, east)  # ENU: from east, counter-clockwise (REP 103)
    p = snap.position[i]
    q = rotations.about_axis_one(2, yaw)
    pose = Pose(
        position=Vector3(x=float(p[0]), y=float(p[1]), z=float(p[2])),
        orientation=Quaternion(x=q[0], y=q[1], z=q[2], w=q[3]),
    )
    length = CURRENT_ARROW_S * speed
    return [ArrowPrimitive(pose=pose, shaft_length=0.8 * length, shaft_diameter=0.15, head_length=0.2 * length,
                           head_diameter=0.5, color=CURRENT_COLOR)]  # fmt: skip


def _pose(snap: Snapshot, i: int) -> Pose:
    p, q = snap.position[i], snap.orientation[i]
    return Pose(
        position=Vector3(x=float(p[0]), y=float(p[1]), z=float(p[2])),
        orientation=Quaternion(x=float(q[0]), y=float(q[1]), z=float(q[2]), w=float(q[3])),
    )
