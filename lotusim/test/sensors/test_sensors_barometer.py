"""The barometer (lotusim_sensors.barometer): the ISA troposphere against its published table, the sampler's air
and water readings, its noise and its parameters, without ROS."""

from __future__ import annotations

import numpy as np
import pytest
from test_sensors_samplers import LEVEL, P_ATM, rig, sample

from lotusim_sensors import barometer
from lotusim_sensors.suite import parse_suite

G = 9.80665  # standard gravity (3rd CGPM)


@pytest.mark.parametrize(
    ("height_m", "table_pa"),
    [(0.0, 101325.0), (500.0, 95461.0), (1000.0, 89875.0), (3000.0, 70108.0), (11000.0, 22632.0)],
)
def test_isa_pressure_matches_the_standard_atmosphere_table(height_m, table_pa):
    # ISO 2533 / U.S. Standard Atmosphere 1976 tabulated pressures (Pa, rounded to 1 Pa)
    assert barometer.isa_pressure_pa(np.array([height_m]))[0] == pytest.approx(table_pa, abs=1.0)


def test_the_height_an_autopilot_derives_is_the_height_and_a_metre_is_about_12_pa_near_the_sea():
    heights = np.array([0.0, 15.0, 120.0, 2500.0])
    assert barometer.isa_height_m(barometer.isa_pressure_pa(heights)) == pytest.approx(heights, abs=1e-9)
    # dp/dh = -rho g with the ISA's sea-level density 1.225 kg/m^3: -12.01 Pa/m
    slope = (barometer.isa_pressure_pa(np.array([1.0]))[0] - P_ATM) / 1.0
    assert slope == pytest.approx(-1.225 * G, rel=2e-3)


def test_sampler_reads_the_air_above_the_sea_and_the_water_below_it():
    states = {"drone": ([0, 0, 20.0], LEVEL, [0] * 6), "wet": ([0, 0, -2.0], LEVEL, [0] * 6)}
    roster, banks, slots, site = rig(states, ["barometer"])
    for slot in slots:
        banks["barometer"].configure(slot, parse_suite({"barometer": {"noise_std_pa": 0.0}}, "t")["barometer"], 1,
                                     roster.names[slot], 0)  # fmt: skip
    _, out = sample("barometer", roster, banks, slots, site)
    pa, var = out.columns
    rho = site.env.water_density_kgm3
    air_20 = 101325.0 * (1.0 - 0.0065 * 20.0 / 288.15) ** 5.2559  # ISA at 20 m, the exponent as published
    assert pa == pytest.approx([air_20, P_ATM + rho * G * 2.0], rel=1e-7) and var == [0.0, 0.0]
    assert out.period_s == pytest.approx(1.0 / 50.0)


def test_noise_has_its_standard_deviation_and_repeats_with_the_seed():
    states = {f"d{k}": ([0, 0, 30.0], LEVEL, [0] * 6) for k in range(400)}
    roster, banks, slots, site = rig(states, ["barometer"])
    for slot in slots:
        banks["barometer"].configure(slot, parse_suite({"barometer": {}}, "t")["barometer"], 1, roster.names[slot], 0)
    _, first = sample("barometer", roster, banks, slots, site)
    errors = np.array(first.columns[0]) - barometer.isa_pressure_pa(np.array([30.0]))[0]
    assert np.std(errors) == pytest.approx(1.2, rel=0.1) and abs(np.mean(errors)) < 0.2
    assert first.columns[1][0] == pytest.approx(1.2**2)
    again = rig(states, ["barometer"])
    for slot in again[2]:
        again[1]["barometer"].configure(slot, parse_suite({"barometer": {}}, "t")["barometer"], 1,
                                        again[0].names[slot], 0)  # fmt: skip
    assert sample("barometer", *again)[1].columns[0] == first.columns[0]


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"noise_std_pa": -1.0}, "noise_std_pa: expected a non-negative"),
        ({"rate_hz": 0.0}, "rate_hz: expected a positive"),
    ],
)
def test_bad_parameters_are_refused_with_the_key(params, message):
    with pytest.raises(ValueError, match=message):
        parse_suite({"barometer": params}, "x500")
