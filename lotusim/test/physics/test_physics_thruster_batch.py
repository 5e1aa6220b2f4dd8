"""Many vessels' thruster commands in one message (lotusim_physics.thruster_batch), on a worker without ROS: each
command lands on its vessel's thruster as the per-thruster topic would put it, other workers' vessels are ignored,
a vessel with a non-finite command keeps its last valid ones, unknown thrusters are reported once, and a
per-thruster command afterwards changes only its own thruster."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from lotusim_physics import layout as L
from lotusim_physics.thruster_batch import ThrusterCommandBatch
from lotusim_physics.worker import CREATE, FleetWorker
from lotusim_physics.worker_settings import PARAMETERS, WorkerSettings


def _vessel(name: str, model: str, z: float):
    v3 = lambda x, y, z: SimpleNamespace(x=x, y=y, z=z)  # noqa: E731
    pose = SimpleNamespace(position=v3(0.0, 0.0, z), orientation=SimpleNamespace(x=0.0, y=0.0, z=0.0, w=1.0))
    twist = SimpleNamespace(linear=v3(0.0, 0.0, 0.0), angular=v3(0.0, 0.0, 0.0))
    return SimpleNamespace(name=name, model=model, overrides_yaml="", pose=pose, twist=twist)


def _worker() -> FleetWorker:
    w = FleetWorker("w", WorkerSettings.from_parameters({**PARAMETERS, "mode": "lockstep"}))
    w.run_commands([(CREATE, _vessel("d1", "x500", 20.0)), (CREATE, _vessel("d2", "x500", 30.0))])
    w.run_commands([(CREATE, _vessel("auv", "lrauv", -5.0))])
    return w


def _fleet_commands(w: FleetWorker, name: str) -> list[float]:
    """The commands the fleet holds for the vessel's thrusters (its pool rows: what the kernel reads)."""
    t0, nt = w.fleet._vi[w.fleet.index(name), 0:2]
    return w.fleet._tp[t0 : t0 + nt, L.T_CMD].tolist()


def test_a_batch_commands_each_named_thruster_and_ignores_other_workers_vessels():
    w = _worker()
    rotors = [t.name for t in w.fleet.spec("d1").thrusters]
    prop = w.fleet.spec("auv").thrusters[0].name
    names = [f"d2/{r}" for r in rotors] + [f"elsewhere/{rotors[0]}", f"auv/{prop}"] + [f"d1/{r}" for r in rotors[::-1]]
    values = [500.0, 501.0, 502.0, 503.0, 9.0, 30.0, 700.0, 701.0, 702.0, 703.0]
    batch = ThrusterCommandBatch(w)
    assert batch.apply(names, values) == ""
    assert _fleet_commands(w, "d2") == [500.0, 501.0, 502.0, 503.0]
    assert _fleet_commands(w, "d1") == [703.0, 702.0, 701.0, 700.0]  # named in reverse order
    assert _fleet_commands(w, "auv") == [30.0] and w.vessels["d1"].thruster_cmd.tolist() == [703.0, 702.0, 701.0, 700.0]
    # a non-finite command: that vessel keeps its last ones, the others take theirs
    values2 = list(values)
    values2[1] = float("nan")
    values2[6] = 600.0
    problem = batch.apply(names, values2)
    assert "d2" in problem and "non-finite" in problem and _fleet_commands(w, "d2")[1] == 501.0
    assert _fleet_commands(w, "d1")[3] == 600.0
    # a per-thruster command afterwards changes only its thruster
    assert w.command_actuator("d1", "thruster", 0, 1.0) == ""
    assert _fleet_commands(w, "d1") == [1.0, 702.0, 701.0, 600.0]


def test_unknown_thrusters_are_reported_once_and_bad_lengths_refused():
    w = _worker()
    batch = ThrusterCommandBatch(w)
    names = ["d1/no_such_rotor", "elsewhere/x"]
    assert "no_such_rotor" in batch.apply(names, [1.0, 2.0]) and batch.apply(names, [1.0, 2.0]) == ""
    assert "2 names but 1 values" in batch.apply(names, [1.0])
    assert np.all(np.asarray(_fleet_commands(w, "d1")) == 0.0)


def test_fins_and_thrusters_by_their_topic_names_in_one_batch():
    """`<vessel>/thrusters/<t>` and `<vessel>/fins/<f>` (a command topic's name without /cmd): the LRAUV's
    propeller and both fins from one message, beside the drones' rotors; a non-finite fin command keeps all of
    that vessel's last commands and no other's."""
    w = _worker()
    spec = w.fleet.spec("auv")
    fins = [f.name for f in spec.fins]
    rotors = [t.name for t in w.fleet.spec("d1").thrusters]
    names = [f"auv/thrusters/{spec.thrusters[0].name}", f"auv/fins/{fins[1]}", f"auv/fins/{fins[0]}"]
    names += [f"d1/thrusters/{r}" for r in rotors]
    batch = ThrusterCommandBatch(w)
    assert batch.apply(names, [40.0, -0.1, 0.2, 1.0, 2.0, 3.0, 4.0]) == ""
    assert _fleet_commands(w, "auv") == [40.0] and w.vessels["auv"].fin_cmd.tolist() == [0.2, -0.1]
    assert _fleet_commands(w, "d1") == [1.0, 2.0, 3.0, 4.0]
    problem = batch.apply(names, [41.0, float("inf"), 0.3, 5.0, 6.0, 7.0, 8.0])
    assert "auv" in problem and "d1" not in problem
    assert _fleet_commands(w, "auv") == [40.0] and w.vessels["auv"].fin_cmd.tolist() == [0.2, -0.1]
    assert _fleet_commands(w, "d1") == [5.0, 6.0, 7.0, 8.0]
    assert "auv/fins/no_fin" in batch.apply(["auv/fins/no_fin"], [0.0])


def test_a_batch_after_a_delete_lands_on_the_vessels_still_there():
    """The pool rows move when a vessel is deleted (the fleet compacts): the layout is made again."""
    w = _worker()
    rotors = [t.name for t in w.fleet.spec("d1").thrusters]
    names = [f"d1/{r}" for r in rotors] + [f"d2/{r}" for r in rotors]
    batch = ThrusterCommandBatch(w)
    assert batch.apply(names, [1.0] * 4 + [2.0] * 4) == ""
    w.delete("d1")
    assert batch.apply(names, [3.0] * 4 + [9.0] * 4) == ""
    assert _fleet_commands(w, "d2") == [9.0] * 4 and _fleet_commands(w, "auv") == [0.0]
