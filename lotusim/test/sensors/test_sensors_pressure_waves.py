"""The pressure sensor under waves (lotusim_sensors.pressure with the environment's sea): Airy's gauge pressure
ρ g (−z) + ρ g a e^{kz} cos φ below the surface, the atmosphere above it, unchanged in a calm sea."""

from __future__ import annotations

import math

import numpy as np
import pytest

from lotusim_core.base.geodesy import GeodeticOrigin
from lotusim_env.environment import build_environment
from lotusim_sensors.banks import SensorBanks
from lotusim_sensors.pressure import pressure_measure
from lotusim_sensors.roster import Roster
from lotusim_sensors.samplers import SAMPLERS, Site
from lotusim_sensors.suite import KINDS, parse_suite

G_STD = 9.80665  # the sensor's g (3rd CGPM)
G_WAVES = 9.81  # the sea's g (lotusim_env.waves)
P_ATM = 101325.0
RHO = 1026.0
LEVEL = [0.0, 0.0, 0.0, 1.0]


def pressures(waves: dict | None, positions_enu: list[list[float]], t_ns: int) -> np.ndarray:
    """Noiseless pressure readings (Pa) of sensors at the vessels' origins, through the node's sampler."""
    roster = Roster()
    names = tuple(f"v{i}" for i in range(len(positions_enu)))
    slots = roster.update("w0", names).slots
    n = len(names)
    roster.set_state(slots, np.array(positions_enu, float), np.tile(LEVEL, (n, 1)), np.zeros((n, 6)),
                     np.zeros((n, 6)), None)  # fmt: skip
    banks = SensorBanks(KINDS, roster.capacity)
    suite = parse_suite({"pressure": {"depth_noise_std_m": 0.0}}, "test")
    for name, slot in roster.slot_of.items():
        banks["pressure"].configure(slot, suite["pressure"], 1, name, 0)
    env = build_environment({"water_density_kgm3": RHO, **({"waves": waves} if waves else {})})
    site = Site(env, GeodeticOrigin(43.0, 5.0, 0.0), np.zeros(3), 1500.0, {})
    bank = banks["pressure"]
    due = bank.due(slots, t_ns)
    return np.array(SAMPLERS["pressure"](bank, due, t_ns, roster, site).columns[0])


def test_under_a_regular_wave_the_gauge_pressure_is_airys():
    """H 2 m, T 8 s from the west (travelling east), deep water, no ramp; sensors at 2 m and 10 m below the mean
    level and at x = 0, λ/4, λ/2; one 0.5 m above the mean level under the crest, one there under the trough."""
    a, period = 1.0, 8.0
    omega = 2 * math.pi / period
    k = omega**2 / G_WAVES
    lam = 2 * math.pi / k
    waves = {"model": "regular", "height_m": 2 * a, "period_s": period, "from_deg": 270.0, "ramp_time_s": 0.0}
    xs = [0.0, lam / 4, lam / 2]
    points = [[x, 0.0, z] for z in (-2.0, -10.0) for x in xs] + [[0.0, 0.0, 0.5], [lam / 2, 0.0, 0.5]]
    got = pressures(waves, points, 0)
    for (x, _, z), p in zip(points[:6], got[:6], strict=True):
        expected = P_ATM + RHO * G_STD * -z + RHO * G_WAVES * a * math.exp(k * z) * math.cos(k * x)
        assert p == pytest.approx(expected, abs=1e-6 * expected)
    # under the crest (η = 1 m) at z = +0.5: wet, ρ g (−0.5) + ρ g a (value at z = 0); under the trough: air
    assert got[6] == pytest.approx(P_ATM - RHO * G_STD * 0.5 + RHO * G_WAVES * a, rel=1e-9)
    assert got[7] == P_ATM


def test_calm_sea_reads_the_hydrostatic_pressure_as_before():
    got = pressures(None, [[0.0, 0.0, -10.0], [0.0, 0.0, 1.0]], 0)
    np.testing.assert_allclose(got, [P_ATM + RHO * G_STD * 10.0, P_ATM])
    points = np.array([[0.0, 0.0, -3.0], [5.0, 1.0, 2.0]])
    flat = pressure_measure(points, np.zeros(2), RHO, np.zeros((2, 1)))
    np.testing.assert_allclose(flat[0], [P_ATM + RHO * G_STD * 3.0, P_ATM])
