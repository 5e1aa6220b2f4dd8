"""Collisions (lotusim_physics.collisions) and the hull boxes (lotusim_core.base.hull_box): expected values from
geometry and from the impulse law of [Baraff1997] sec. 8, not from the code under test."""

from __future__ import annotations

import math

import numpy as np
import pytest

from lotusim_core.base.catalogue import load_vehicle
from lotusim_core.base.hull_box import hull_box_of
from lotusim_env.bathymetry import FlatSeabed, GridSeabed
from lotusim_physics.collisions import (
    BOX,
    CYLINDER,
    SPHERE,
    Collider,
    ContactParams,
    Contacts,
    FleetState,
    Obstacles,
    box_box,
    respond_pairs,
    respond_static,
)
from lotusim_physics.fleet import Fleet

IDENTITY = [1.0, 0.0, 0.0, 0.0]


def _rotation(q: np.ndarray) -> np.ndarray:
    from lotusim_core.base.frames import rotation_matrix

    return rotation_matrix(q[None, :])[0]


def _rotations(q: np.ndarray) -> np.ndarray:
    from lotusim_core.base.frames import rotation_matrix

    return rotation_matrix(q)


def _q_heading(psi: float) -> list[float]:
    return [math.cos(psi / 2), 0.0, 0.0, math.sin(psi / 2)]


# --------------------------------------------------------------------------------------------- hull boxes
@pytest.mark.parametrize(
    ("model", "length", "beam"),
    [
        ("dtmb5415", 142.0, 19.06),  # DTMB 5415: L 142 m, B 19.06 m (SIMMAN 2014)
        ("fremm", 142.0, 20.0),  # FREMM: 142 m, 20 m beam (the file's published figures)
        ("pha", 199.0, 32.0),  # Mistral class: 199 m, 32 m
        ("wamv", 4.9, 2.4),  # WAM-V 16: hull length 4.9 m, overall beam 2.4 m (VRX)
        ("remus100", 1.33, 0.191),  # Prestero 2001
        ("bluerov2_heavy", 0.457, 0.338),  # Blue Robotics
    ],
)
def test_hull_box_has_the_published_length_and_beam(model, length, beam):
    half, _ = hull_box_of(load_vehicle(model))
    assert 2 * half[0] == pytest.approx(length, rel=1e-3)
    assert 2 * half[1] == pytest.approx(beam, rel=1e-3)


def test_every_shipped_vehicle_has_a_box_reaching_from_above_the_waterline_to_its_draft():
    from lotusim_core.base.catalogue import list_models

    for model in list_models():
        spec = load_vehicle(model)
        half, centre = hull_box_of(spec)
        assert np.all(half > 0.0), model
        if spec.domain == "surface":  # box bottom at the draft (FRD z down from the waterline)
            assert centre[2] + half[2] == pytest.approx(spec.surface.draft_m, abs=1e-9), model
            assert centre[2] - half[2] < 0.0, model  # and its top above the water


# ------------------------------------------------------------------------------------------- narrow phase
def test_box_box_overlap_along_north_and_its_normal():
    ca, cb = np.array([[0.0, 0.0, 0.0]]), np.array([[1.7, 0.2, 0.0]])
    h = np.array([[1.0, 0.5, 0.5]])
    depth, normal = box_box(ca, np.zeros(1), h, cb, np.zeros(1), h)
    assert depth[0] == pytest.approx(0.3)  # 2 x 1.0 - 1.7
    assert normal[0] == pytest.approx([-1.0, 0.0, 0.0])  # from b to a


def test_box_box_turned_45_degrees_corner_on_face():
    # b (a 1 m cube turned 45 deg) with a corner at sqrt(2)/2 from its centre, 1.6 m north of a's centre: a's face at
    # 1.0 m. On a's north axis b reaches 1.6 - 0.7071 = 0.8929, overlap 0.1071; on b's diagonal axes the overlap is
    # larger (1.4142/2 + ... ), so the contact is on a's axis.
    ca, cb = np.array([[0.0, 0.0, 0.0]]), np.array([[1.6, 0.0, 0.0]])
    depth, normal = box_box(
        ca, np.zeros(1), np.array([[1.0, 1.0, 1.0]]), cb, np.array([math.pi / 4]), np.array([[0.5, 0.5, 0.5]])
    )
    assert depth[0] == pytest.approx(1.0 + math.sqrt(0.5) - 1.6)
    assert normal[0] == pytest.approx([-1.0, 0.0, 0.0])


def test_box_box_apart_is_negative_gap():
    depth, _ = box_box(
        np.array([[0.0, 0.0, 0.0]]),
        np.zeros(1),
        np.ones((1, 3)),
        np.array([[0.0, 3.5, 0.0]]),
        np.zeros(1),
        np.ones((1, 3)),
    )
    assert depth[0] == pytest.approx(-1.5)


def _one_box(position, psi=0.0, half=(1.0, 0.5, 0.5), mass=100.0) -> FleetState:
    return FleetState(
        position=np.array([position], dtype=float),
        q=np.array([_q_heading(psi)]),
        nu=np.zeros((1, 6)),
        half=np.array([half], dtype=float),
        centre_frd=np.zeros((1, 3)),
        mass=np.array([mass]),
        aerial=np.zeros(1, dtype=bool),
        active=np.ones(1, dtype=bool),
    )


def _objects(shape: int, centre, half) -> Obstacles:
    return Obstacles(
        object_names=("thing",),
        object_shapes=np.array([shape]),
        object_centres_ned=np.array([centre], dtype=float),
        object_half=np.array([half], dtype=float),
        object_psi=np.zeros(1),
    )


@pytest.mark.parametrize(
    ("shape", "centre", "half", "depth", "normal"),
    [
        # sphere r 0.5 whose centre is 1.3 m north of the box's centre: face at 1.0, overlap 0.5 - 0.3
        (SPHERE, (1.3, 0.0, 0.0), (0.5, 0.5, 0.5), 0.2, (-1.0, 0.0, 0.0)),
        # sphere r 1 off the box's corner (1, 0.5) by (0.6, 0.8) (distance 1.0 - 0.0): just touching
        (SPHERE, (1.6, 1.3, 0.0), (1.0, 1.0, 1.0), 0.0, (-0.6, -0.8, 0.0)),
        # vertical cylinder r 0.4, 0.75 m east of the centre: side at 0.5, overlap 0.4 - 0.25
        (CYLINDER, (0.0, 0.75, 0.0), (0.4, 0.4, 2.0), 0.15, (0.0, -1.0, 0.0)),
        # a box 0.2 m below the box's bottom, overlapping by 0.3 vertically (half heights 0.5 + 0.5 - 0.7)
        (BOX, (0.0, 0.0, 0.7), (3.0, 3.0, 0.5), 0.3, (0.0, 0.0, -1.0)),
    ],
)
def test_objects_depth_and_normal(shape, centre, half, depth, normal):
    collider = Collider(_objects(shape, centre, half), ContactParams(margin_m=0.05))
    state = _one_box([0.0, 0.0, 0.0])
    boxes = collider.boxes(state)
    from lotusim_physics.collisions import object_contacts

    found = object_contacts(boxes, collider.obstacles, 0.05)
    assert found.depth[0] == pytest.approx(depth, abs=1e-12)
    assert found.normal[0] == pytest.approx(normal, abs=1e-12)


# ----------------------------------------------------------------------------------------------- response
def test_static_response_is_plastic_and_frictionless_by_default():
    position, velocity = np.zeros((1, 3)), np.array([[-2.0, 1.0, 0.0]])
    c = Contacts(
        np.array([0]), np.array([1]), np.array([0]), np.array([0.1]), np.array([[1.0, 0.0, 0.0]]), np.zeros((1, 3))
    )
    speed = respond_static(position, velocity, c, ContactParams())
    assert position[0] == pytest.approx([0.1, 0.0, 0.0])
    assert velocity[0] == pytest.approx([0.0, 1.0, 0.0])  # the normal part gone, the tangential kept
    assert speed[0] == pytest.approx(2.0)


def test_static_response_with_restitution_and_friction():
    position, velocity = np.zeros((1, 3)), np.array([[-2.0, 1.0, 0.0]])
    c = Contacts(
        np.array([0]), np.array([1]), np.array([0]), np.array([0.1]), np.array([[1.0, 0.0, 0.0]]), np.zeros((1, 3))
    )
    respond_static(position, velocity, c, ContactParams(restitution=0.5, friction=0.2))
    # dv_n = (1 + 0.5) 2 = 3: v_n -2 -> +1; friction impulse 0.2 x 3 = 0.6 off the tangential 1.0
    assert velocity[0] == pytest.approx([1.0, 0.4, 0.0])


@pytest.mark.parametrize("e", [0.0, 0.5, 1.0])
def test_pair_response_keeps_momentum_and_loses_the_inelastic_energy(e):
    m1, m2, v1, v2 = 2.0, 1.0, 3.0, -3.0  # head on along north; normal from 2 to 1 is -north
    position = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]])
    velocity = np.array([[v1, 0.0, 0.0], [v2, 0.0, 0.0]])
    mass = np.array([m1, m2])
    i, j = np.array([0]), np.array([1])
    respond_pairs(position, velocity, mass, i, j, np.array([0.3]), np.array([[-1.0, 0.0, 0.0]]), ContactParams(e))
    # Newton's law of restitution: v1' - v2' = -e (v1 - v2), with momentum kept
    p = m1 * v1 + m2 * v2
    v1_after = (p - m2 * e * (v1 - v2)) / (m1 + m2)
    v2_after = (p + m1 * e * (v1 - v2)) / (m1 + m2)
    assert velocity[:, 0] == pytest.approx([v1_after, v2_after])
    assert m1 * velocity[0, 0] + m2 * velocity[1, 0] == pytest.approx(p)
    mu = m1 * m2 / (m1 + m2)
    lost = 0.5 * (m1 * v1**2 + m2 * v2**2) - 0.5 * (m1 * velocity[0, 0] ** 2 + m2 * velocity[1, 0] ** 2)
    assert lost == pytest.approx(0.5 * mu * (1 - e**2) * (v1 - v2) ** 2)  # 12 J x (1 - e^2)
    # pushed apart by the overlap, shared by the inverse masses: 0.3 x 1/3 and 0.3 x 2/3
    assert position[:, 0] == pytest.approx([-0.1, 1.2])


# --------------------------------------------------------------------------------------- in the fleet
def _fleet(obstacles: Obstacles | None = None, params: ContactParams | None = None, dt: float = 0.02) -> Fleet:
    fleet = Fleet(dt)
    fleet.enable_collisions(obstacles, params)
    return fleet


def _run(fleet: Fleet, seconds: float, steps_per_call: int = 1) -> list:
    events = []
    calls = round(seconds / (fleet.dt_s * steps_per_call))
    for k in range(calls):
        fleet.step(k * steps_per_call * fleet.dt_s, steps=steps_per_call)
        events += fleet.take_collision_events()
    return events


def test_a_box_pressed_onto_a_flat_seabed_rests_on_it_and_reports_one_contact():
    depth = 30.0
    fleet = _fleet(Obstacles(FlatSeabed(depth).seabed_depth_m, depth))
    fleet.add("rov", load_vehicle("bluerov2_heavy"), [0.0, 0.0, 29.0], IDENTITY)
    fleet.set_body_wrench("rov", [0.0, 0.0, 40.0, 0.0, 0.0, 0.0])  # 40 N down at CO
    events = _run(fleet, 8.0)
    # at rest its box bottom (CO + 0.127 m: the 254 mm frame) is on the seabed
    assert fleet.position_ned[0, 2] + 0.254 / 2 == pytest.approx(depth, abs=1e-9)
    assert abs(fleet.nu[0, 2]) < 1e-9
    assert [(e.vessel, e.other, e.kind) for e in events] == [("rov", "seabed", "seabed")]
    assert events[0].normal_enu == pytest.approx((0.0, 0.0, 1.0))
    assert events[0].point_enu[2] == pytest.approx(-depth, abs=0.05)
    assert fleet.colliding.tolist() == [True]


def _slope(depth0: float, slope: float) -> GridSeabed:
    """A plane seabed rising to the north: D(x_east, y_north) = depth0 - y_north tan(slope)."""
    x = np.array([-100.0, 100.0])
    y = np.array([-100.0, 100.0])
    return GridSeabed(x, y, depth0 - np.tan(slope) * np.array([[-100.0, 100.0], [-100.0, 100.0]]))


def test_on_a_slope_the_lowest_corner_rests_on_the_seabed_with_friction_and_slides_down_without():
    slope = math.radians(10.0)
    seabed = _slope(30.0, slope)
    resting = []
    for mu in (0.5, 0.0):  # 0.5 > tan 10 deg = 0.176: held; 0: slides
        fleet = _fleet(Obstacles(seabed.seabed_depth_m, 0.0), ContactParams(friction=mu))
        fleet.add("rov", load_vehicle("bluerov2_heavy"), [0.0, 0.0, 29.5], IDENTITY)
        fleet.set_body_wrench("rov", [0.0, 0.0, 40.0, 0.0, 0.0, 0.0])
        _run(fleet, 6.0)
        resting.append((fleet.position_ned[0].copy(), fleet.nu[0, 0]))
    (p_held, u_held), (p_slid, u_slid) = resting
    # held: level, its uphill (north) bottom corners on the seabed, z + h_z = D(n + h_x), where it landed
    assert p_held[2] + 0.127 == pytest.approx(30.0 - (p_held[0] + 0.2285) * math.tan(slope), abs=1e-9)
    assert abs(p_held[0]) < 1e-9 and abs(u_held) < 1e-9
    n_slid = p_slid[0]
    assert n_slid < -0.05 and u_slid < -0.01  # downhill is south


def _island_edge(north_m: float) -> Obstacles:
    """Land north of north_m (a 1 km wide wall, water to the south): one edge with its water normal (-1, 0)."""
    edges = np.array([[north_m, -500.0, north_m, 500.0]])
    return Obstacles(edges=edges, edge_normals=np.array([[-1.0, 0.0]]))


@pytest.mark.parametrize("steps_per_call", [1, 25])
def test_a_vessel_driven_at_the_coast_stops_at_its_edge(steps_per_call):
    fleet = _fleet(_island_edge(20.0))
    kayak = load_vehicle("kayak_usv")
    fleet.add("kayak", kayak, [10.0, 0.0, 0.0], IDENTITY, [1.5, 0.0, 0.0, 0.0, 0.0, 0.0])
    fleet.set_body_wrench("kayak", [60.0, 0.0, 0.0, 0.0, 0.0, 0.0])  # driven north, at the coast
    events = _run(fleet, 20.0, steps_per_call)
    centre = fleet.position_ned[0] + _rotation(fleet.q_ned_frd[0]) @ hull_box_of(kayak)[1]  # the box's centre
    bow = centre[0] + 1.197 / 2  # the kayak's 1.197 m length
    assert bow == pytest.approx(20.0, abs=1e-9)  # at the edge, not through it
    assert abs(fleet.nu[0, 0]) < 1e-9
    assert [(e.other, e.kind) for e in events] == [("coast", "coast")]
    assert events[0].normal_enu == pytest.approx((0.0, -1.0, 0.0))  # ENU: towards the south (the water)
    assert events[0].relative_speed_mps > 0.5  # hit under way


def test_the_collider_keeps_the_momentum_of_a_pair_of_vessels_exactly():
    state = FleetState(
        position=np.array([[0.0, 0.0, 0.0], [1.9, 0.3, 0.0]]),
        q=np.array([IDENTITY, _q_heading(0.2)]),
        nu=np.array([[3.0, 0.5, 0.0, 0.0, 0.0, 0.0], [-1.0, 0.0, 0.0, 0.0, 0.0, 0.0]]),
        half=np.array([[1.0, 0.5, 0.5], [1.0, 0.5, 0.5]]),
        centre_frd=np.zeros((2, 3)),
        mass=np.array([300.0, 100.0]),
        aerial=np.zeros(2, dtype=bool),
        active=np.ones(2, dtype=bool),
    )
    r1 = _rotation(state.q[1])
    momentum = 300.0 * state.nu[0, :3] + 100.0 * (r1 @ state.nu[1, :3])
    Collider().resolve(state, ["a", "b"], 0.0)
    after = 300.0 * state.nu[0, :3] + 100.0 * (r1 @ state.nu[1, :3])
    assert after == pytest.approx(momentum, abs=1e-12)


def test_two_vessels_head_on_stop_without_passing_through():
    fleet = _fleet()
    kayak = load_vehicle("kayak_usv")
    fleet.add("a", kayak, [0.0, 0.0, 0.0], IDENTITY, [2.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    fleet.add("b", kayak, [4.0, 0.0, 0.0], _q_heading(math.pi), [1.0, 0.0, 0.0, 0.0, 0.0, 0.0])  # heading south
    events = []
    for k in range(100):
        fleet.step(k * fleet.dt_s)
        new = fleet.take_collision_events()
        if new:  # plastic, equal masses: no relative normal (north) velocity left after the impact
            v_ned = np.einsum("nij,nj->ni", _rotations(fleet.q_ned_frd), fleet.nu[:, :3])
            assert v_ned[0, 0] == pytest.approx(v_ned[1, 0], abs=1e-12)
        events += new
        centres = fleet.position_ned + np.einsum("nij,j->ni", _rotations(fleet.q_ned_frd), hull_box_of(kayak)[1])
        gap = (centres[1, 0] - 1.197 / 2) - (centres[0, 0] + 1.197 / 2)
        assert gap > -1e-9  # never through each other
    assert sorted((e.vessel, e.other) for e in events) == [("a", "b"), ("b", "a")]
    assert fleet.nu[0, 0] > 0.0  # pushed on together, north: a's momentum was the larger


def test_the_collision_event_comes_once_and_again_after_the_vessels_part():
    fleet = _fleet(_island_edge(5.0))
    fleet.add("k", load_vehicle("kayak_usv"), [0.0, 0.0, 0.0], IDENTITY)
    fleet.set_body_wrench("k", [60.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    assert len(_run(fleet, 10.0)) == 1  # pressed on the coast for seconds: one event
    fleet.set_body_wrench("k", [-60.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    assert _run(fleet, 5.0) == [] and not fleet.colliding[0]  # backed off
    fleet.set_body_wrench("k", [60.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    assert len(_run(fleet, 10.0)) == 1  # a new contact


def test_a_fleet_without_collisions_enabled_passes_through():
    fleet = Fleet(0.02)
    kayak = load_vehicle("kayak_usv")
    fleet.add("a", kayak, [0.0, 0.0, 0.0], IDENTITY, [2.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    fleet.add("b", kayak, [1.5, 0.0, 0.0], IDENTITY)
    _run(fleet, 3.0)
    assert fleet.position_ned[0, 0] > fleet.position_ned[1, 0]
    assert fleet.take_collision_events() == []


def test_drones_do_not_collide_with_marine_vessels_but_with_each_other():
    fleet = _fleet()
    x500, kayak = load_vehicle("x500"), load_vehicle("kayak_usv")
    fleet.add("boat", kayak, [0.0, 0.0, 0.0], IDENTITY)
    fleet.add("d1", x500, [0.0, 0.0, -0.1], IDENTITY)
    fleet.add("d2", x500, [0.2, 0.0, -5.0], IDENTITY)
    fleet.add("d3", x500, [0.5, 0.0, -5.0], IDENTITY)
    fleet.step(0.0)
    others = {(e.vessel, e.other) for e in fleet.take_collision_events()}
    assert others == {("d2", "d3"), ("d3", "d2")}


# ------------------------------------------------------------------------------------- from a world (ENU)
def _world_obstacles(world_cfg: dict, depth_m: float = 30.0) -> Obstacles:
    from lotusim_env.environment import build_environment
    from lotusim_physics.collisions import obstacles_of

    env = build_environment({"bathymetry": {"model": "flat", "depth_m": depth_m}, "world": world_cfg})
    return obstacles_of(env)


@pytest.mark.parametrize("clockwise", [False, True])
def test_the_water_side_of_every_coast_edge_faces_away_from_the_island(clockwise):
    square = [[30.0, -25.0], [80.0, -25.0], [80.0, 25.0], [30.0, 25.0]]
    obstacles = _world_obstacles({"coast": {"polygons": [square[::-1] if clockwise else square]}})
    mids = 0.5 * (obstacles.edges[:, :2] + obstacles.edges[:, 2:])  # NED (north, east)
    centre = np.array([0.0, 55.0])  # the island's centre, NED
    outward = np.einsum("ki,ki->k", obstacles.edge_normals, mids - centre)
    assert len(mids) == 4 and np.all(outward > 0.0)
    assert obstacles.seabed_min_depth_m == 30.0


def test_a_lake_on_an_island_has_its_water_inside():
    outer = [[0.0, 0.0], [100.0, 0.0], [100.0, 100.0], [0.0, 100.0]]
    from lotusim_env.environment import build_environment
    from lotusim_physics.collisions import water_normals_enu

    env = build_environment({"world": {"coast": {"polygons": [outer]}}})
    world = env.world
    # a ring around a lake (hole) of the same land: its water side is inside the ring
    import shapely

    lake = [[40.0, 40.0], [60.0, 40.0], [60.0, 60.0], [40.0, 60.0]]
    land = shapely.Polygon(outer, [lake])
    from dataclasses import replace

    world = replace(world, land=land)
    edges = np.array([[40.0, 40.0, 60.0, 40.0]])  # the lake's south shore, ENU
    assert water_normals_enu(world, edges)[0] == pytest.approx([0.0, 1.0])  # north, into the lake


def test_a_vessel_driven_at_an_island_of_the_world_stops_at_its_shore_and_at_a_buoy():
    square = [[30.0, -25.0], [80.0, -25.0], [80.0, 25.0], [30.0, 25.0]]
    buoy = {"name": "b1", "kind": "buoy", "position": [0.0, 20.0, 0.0]}  # ENU; 0.5 m radius (the buoy default)
    obstacles = _world_obstacles({"coast": {"polygons": [square]}, "objects": [buoy]})
    kayak = load_vehicle("kayak_usv")
    fleet = _fleet(obstacles)
    # NED: to_shore at 20 m east heading east (90 deg) at the island's west shore (x_east 30); to_buoy 10 m north
    # of the origin heading north at the buoy (20 m north)
    fleet.add("to_shore", kayak, [0.0, 20.0, 0.0], _q_heading(math.pi / 2), [1.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    fleet.add("to_buoy", kayak, [10.0, 0.0, 0.0], IDENTITY, [1.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    fleet.set_body_wrench("to_shore", [60.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    fleet.set_body_wrench("to_buoy", [60.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    events = _run(fleet, 40.0, steps_per_call=5)
    half, centre_frd = hull_box_of(kayak)
    centres = fleet.position_ned + np.einsum("nij,j->ni", _rotations(fleet.q_ned_frd), centre_frd)
    assert centres[0, 1] + half[0] == pytest.approx(30.0, abs=1e-9)  # its bow on the shore (x_east 30)
    assert centres[1, 0] + half[0] == pytest.approx(19.5, abs=1e-9)  # its bow on the buoy's side (r 0.5)
    assert sorted((e.vessel, e.other, e.kind) for e in events) == [
        ("to_buoy", "b1", "object"),
        ("to_shore", "coast", "coast"),
    ]


# ------------------------------------------------------------------------ the worker and the vehicle files
def _kayak_heading_east(name: str, x_east: float):
    """A VesselDescription look-alike: a kayak on the waterline at (x_east, 0) ENU heading east (ENU yaw 0)."""
    from types import SimpleNamespace

    v3 = lambda x, y, z: SimpleNamespace(x=x, y=y, z=z)  # noqa: E731
    pose = SimpleNamespace(position=v3(x_east, 0.0, 0.0), orientation=SimpleNamespace(x=0.0, y=0.0, z=0.0, w=1.0))
    twist = SimpleNamespace(linear=v3(1.0, 0.0, 0.0), angular=v3(0.0, 0.0, 0.0))
    return SimpleNamespace(name=name, model="kayak_usv", overrides_yaml="", pose=pose, twist=twist)


def test_the_worker_collides_with_its_environments_world_and_reports_status_and_message():
    from lotusim_interfaces.msg import Collision, VesselInfo
    from lotusim_physics.dynamics_node_outputs import collision_message, fleet_status, vessel_infos
    from lotusim_physics.worker import CREATE, FleetWorker
    from lotusim_physics.worker_settings import PARAMETERS, WorkerSettings

    worker = FleetWorker("w", WorkerSettings.from_parameters({**PARAMETERS, "mode": "lockstep", "step_s": 0.02}))
    worker.apply_environment(
        "world: {coast: {polygons: [[[10.0, -5.0], [20.0, -5.0], [20.0, 5.0], [10.0, 5.0]]]}}\n", 1
    )
    worker.run_commands([(CREATE, _kayak_heading_east("k", 0.0))])
    worker.command_wrench("k", np.array([60.0, 0.0, 0.0, 0.0, 0.0, 0.0]))  # FLU: ahead
    version = worker.extras_version
    events = []
    for _ in range(100):  # 20 s
        worker.integrate(10)
        events += worker.fleet.take_collision_events()
    assert worker.extras_version > version  # the fleet state's status column is written again
    assert fleet_status(worker.fleet.frozen, worker.fleet.colliding).tolist() == [VesselInfo.STATUS_CONTACT]
    info = vessel_infos(worker)[0]
    assert (info.status, info.status_reason) == (VesselInfo.STATUS_CONTACT, "in contact with coast")
    assert len(events) == 1
    msg = collision_message(events[0], "w")
    assert (msg.worker, msg.vessel, msg.other, msg.kind) == ("w", "k", "coast", Collision.KIND_COAST)
    assert msg.header.frame_id == "map" and msg.position.x == pytest.approx(10.0, abs=0.01)
    assert (msg.normal.x, msg.normal.y) == pytest.approx((-1.0, 0.0))
    t_event = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
    assert 0.0 < t_event < worker.sim_time_ns * 1e-9


def test_collisions_can_be_switched_off_in_the_worker():
    from lotusim_physics.worker import CREATE, FleetWorker
    from lotusim_physics.worker_settings import PARAMETERS, WorkerSettings

    worker = FleetWorker("w", WorkerSettings.from_parameters({**PARAMETERS, "mode": "lockstep", "collisions": False}))
    worker.run_commands([(CREATE, _kayak_heading_east("a", 0.0)), (CREATE, _kayak_heading_east("b", 0.5))])
    worker.integrate(10)
    assert worker.fleet.collider is None and worker.contacts() == {}


@pytest.mark.parametrize(
    ("box", "key", "reason"),
    [
        ({"length_m": 1.0, "beam_m": 0.5}, "hull_box.height_m", "missing"),
        ({"length_m": 1.0, "beam_m": -0.5, "height_m": 0.3}, "hull_box.beam_m", "positive"),
        ({"length_m": 1.0, "beam_m": 0.5, "height_m": 0.3, "centre_frd_m": [0.0, 1.0]}, "hull_box.centre_frd_m", "3"),
    ],
)
def test_a_bad_hull_box_names_file_key_and_reason(tmp_path, box, key, reason):
    import copy

    import yaml

    from lotusim_core.base.catalogue import CatalogueError, read_vehicle_mapping, vehicles_dir

    data = copy.deepcopy(read_vehicle_mapping(vehicles_dir() / "kayak_usv.yaml"))
    data["hull_box"] = box
    data["sources"]["hull_box"] = "test"
    path = tmp_path / "boat.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    with pytest.raises(CatalogueError) as info:
        load_vehicle(path)
    assert str(path) in str(info.value) and info.value.key.startswith(key)
    assert reason in info.value.reason


def test_a_hull_box_overrides_the_derived_one_and_round_trips():
    from lotusim_core.base.catalogue import apply_overrides, spec_from_mapping, spec_to_mapping

    box = {"length_m": 2.0, "beam_m": 1.0, "height_m": 0.5}
    kayak = apply_overrides(load_vehicle("kayak_usv"), {"hull_box": box, "sources": {"hull_box": "a test"}})
    half, centre = hull_box_of(kayak)
    assert half == pytest.approx([1.0, 0.5, 0.25]) and centre == pytest.approx([0.0, 0.0, 0.0])
    again = spec_from_mapping(spec_to_mapping(kayak), "again", "kayak_usv")
    assert hull_box_of(again)[0] == pytest.approx([1.0, 0.5, 0.25])


def test_a_scenarios_physics_section_sets_the_contact_law_of_its_workers(tmp_path):
    from lotusim_core.sim.scenario import ScenarioError, load_scenario

    text = "vessels: [{name: k, model: kayak_usv, pose: {position: [0.0, 0.0, 0.0]}}]\nphysics: {%s}\n"
    path = tmp_path / "s.yaml"
    path.write_text(text % "collision_restitution: 0.3, collision_friction: 0.4")
    params = load_scenario(path).plan().node_parameters["dynamics_0"]
    assert (params["collisions"], params["collision_restitution"], params["collision_friction"]) == (True, 0.3, 0.4)
    path.write_text(text % "collision_restitution: 1.5")
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    assert "physics.collision_restitution" in str(info.value)


def test_a_drone_still_lands_on_a_deck_with_collisions_on():
    """Drone-deck contact is the deck model's (lotusim_physics.decks): with collisions on, a drone dropped 2 m over a
    WAM-V's deck lands on it (gear on the deck plane 1.0 m above the waterline) and no collision is reported."""
    fleet = _fleet(Obstacles(FlatSeabed(30.0).seabed_depth_m, 30.0))
    fleet.add("usv", load_vehicle("wamv"), [0.0, 0.0, 0.0], IDENTITY)
    fleet.step(0.0, steps=200)  # settled at its waterline
    gear = load_vehicle("x500").aerial.contact_height_m
    fleet.add("drone", load_vehicle("x500"), [0.0, 0.0, -(1.0 + gear + 2.0)], IDENTITY)  # motors off
    fleet.step(4.0, steps=150)
    assert fleet.on_deck("drone") == "usv"
    boat, drone = fleet.position_ned
    assert drone[2] + gear - boat[2] == pytest.approx(-1.0, abs=1e-6)
    assert fleet.take_collision_events() == [] and not fleet.colliding.any()


def test_a_vessel_created_or_moved_onto_land_is_put_back_in_the_water_through_the_nearest_shore():
    square = [[0.0, 0.0], [200.0, 0.0], [200.0, 100.0], [0.0, 100.0]]  # ENU: 200 m east x 100 m north
    fleet = _fleet(_world_obstacles({"coast": {"polygons": [square]}}))
    kayak = load_vehicle("kayak_usv")
    half, centre_frd = hull_box_of(kayak)
    fleet.add("k", kayak, [30.0, 100.0, 0.0], IDENTITY)  # NED: 30 m north of the south shore, heading north
    fleet.step(0.0)
    centre = fleet.position_ned[0] + _rotation(fleet.q_ned_frd[0]) @ centre_frd
    assert centre[0] + half[0] == pytest.approx(0.0, abs=1e-9)  # out through the south shore, bow on it
    assert [(e.vessel, e.other) for e in fleet.take_collision_events()] == [("k", "coast")]
    fleet.set_pose("k", [60.0, 190.0, 0.0], _q_heading(math.pi / 2))  # 10 m from the east shore, heading east
    fleet.step(0.03)
    centre = fleet.position_ned[0] + _rotation(fleet.q_ned_frd[0]) @ centre_frd
    assert centre[1] - half[0] == pytest.approx(200.0, abs=1e-9)  # its stern on the east shore
