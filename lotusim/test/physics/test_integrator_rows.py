"""The start of a row's step shared by the marine and the aerial kernels (integrators.row_start): a row whose
environment inputs are not finite is frozen and reported, its state untouched, the others step on."""

from __future__ import annotations

import numpy as np

from lotusim_core.base.catalogue import load_vehicle
from lotusim_physics import layout as L
from lotusim_physics.fleet import Fleet

DT = 0.02


def test_a_non_finite_environment_freezes_that_marine_row_and_that_drone_only() -> None:
    fleet = Fleet(DT)
    fleet.add("auv", load_vehicle("remus100"), [0, 0, 10], [1, 0, 0, 0])
    fleet.add("auv_bad", load_vehicle("remus100"), [20, 0, 10], [1, 0, 0, 0])
    fleet.add("drone", load_vehicle("x500"), [0, 20, -30], [1, 0, 0, 0])
    fleet.add("drone_bad", load_vehicle("x500"), [0, 40, -30], [1, 0, 0, 0])
    bad = {fleet.index("auv_bad"), fleet.index("drone_bad")}
    before = {name: fleet.position_ned[fleet.index(name)].copy() for name in fleet.names}

    def wind(t, pos):  # a broken wind model: NaN at two of the vessels
        out = np.zeros((len(pos), 3))
        out[sorted(bad)] = np.nan
        return out

    reports = fleet.step(0.0, wind_ned=wind)
    assert {r.vessel for r in reports} == {"auv_bad", "drone_bad"}
    assert {r.code for r in reports} == {L.FAULT_NONFINITE_ENV}
    assert [bool(f) for f in fleet.frozen] == [fleet.index(n) in bad for n in fleet.names]
    for name in ("auv_bad", "drone_bad"):
        np.testing.assert_array_equal(fleet.position_ned[fleet.index(name)], before[name])
    # the drone falls under gravity (its rotors at rest): the healthy rows did step
    assert fleet.nu[fleet.index("drone"), 2] > 0.0
    assert fleet.step(DT) == []  # frozen rows are skipped, not reported again
