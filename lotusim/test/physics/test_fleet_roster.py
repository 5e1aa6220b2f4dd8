"""The roster a dynamics worker publishes (lotusim_physics.fleet_roster): its vessels' models, domains and
creation overrides in fleet order, and a new revision only when they change."""

from __future__ import annotations

from types import SimpleNamespace

from lotusim_physics.fleet_roster import RosterEntry, RosterRevisions, roster_of
from lotusim_physics.worker import CREATE, DELETE, FleetWorker
from lotusim_physics.worker_settings import PARAMETERS, WorkerSettings


def _vessel(name: str, model: str = "", overrides: str = "") -> SimpleNamespace:
    """A VesselDescription look-alike at the ENU origin, 5 m down, identity attitude, at rest."""
    v3 = lambda x, y, z: SimpleNamespace(x=x, y=y, z=z)  # noqa: E731
    pose = SimpleNamespace(position=v3(0.0, 0.0, -5.0), orientation=SimpleNamespace(x=0.0, y=0.0, z=0.0, w=1.0))
    twist = SimpleNamespace(linear=v3(0.0, 0.0, 0.0), angular=v3(0.0, 0.0, 0.0))
    return SimpleNamespace(name=name, model=model, overrides_yaml=overrides, pose=pose, twist=twist)


def _worker() -> FleetWorker:
    return FleetWorker("w0", WorkerSettings.from_parameters({**PARAMETERS, "mode": "lockstep"}))


def test_roster_lists_model_domain_and_creation_overrides_in_fleet_order():
    worker = _worker()
    assert roster_of(worker) == ()
    overrides = "{sensors: {imu: {rate_hz: 25}}}"
    results = worker.run_commands(
        [
            (CREATE, _vessel("tethys", "lrauv", overrides)),
            (CREATE, _vessel("boat", "wamv")),
            (CREATE, _vessel("r", "remus100")),
        ]
    )
    assert all(r.ok for r in results)
    assert roster_of(worker) == (
        RosterEntry("tethys", "lrauv", "underwater", overrides),
        RosterEntry("boat", "wamv", "surface", ""),
        RosterEntry("r", "remus100", "underwater", ""),
    )
    assert worker.run_commands([(DELETE, _vessel("boat"))])[0].ok
    assert [e.name for e in roster_of(worker)] == ["tethys", "r"]


def test_a_deleted_and_recreated_vessel_shows_its_new_model():
    worker = _worker()
    worker.run_commands([(CREATE, _vessel("x", "lrauv"))])
    worker.run_commands([(DELETE, _vessel("x")), (CREATE, _vessel("x", "wamv"))])
    assert roster_of(worker) == (RosterEntry("x", "wamv", "surface", ""),)


def test_revisions_count_changes_only():
    revisions = RosterRevisions()
    empty: tuple[RosterEntry, ...] = ()
    one = (RosterEntry("x", "lrauv", "underwater", ""),)
    assert revisions.changed(empty) == 0
    assert revisions.changed(empty) is None
    assert revisions.changed(one) == 1
    assert revisions.changed(one) is None
    assert revisions.changed((RosterEntry("x", "wamv", "surface", ""),)) == 2
    assert revisions.changed(empty) == 3
