"""A scenario's `environment.waves`: a file with waves loads and carries them to current_server's configuration
(the one every node rebuilds its sea from); bad waves fail at load with file, key and reason."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
import yaml

from lotusim_core.sim.scenario import ScenarioError, load_scenario
from lotusim_env.environment import build_environment

BASE = """
world:
  origin: {latitude_deg: 48.3, longitude_deg: -4.6}
vessels:
  - {name: usv, model: wamv}
"""


def write(tmp_path, waves: str):
    path = tmp_path / "scn.yaml"
    path.write_text(textwrap.dedent(BASE) + "environment:\n  waves: " + waves + "\n")
    return path


def test_a_scenario_with_waves_loads_and_current_server_gets_them(tmp_path):
    waves = "{model: jonswap, significant_height_m: 1.5, peak_period_s: 3.0, gamma: 1.2, from_deg: 270, directions: 8}"
    scenario = load_scenario(write(tmp_path, waves))
    published = yaml.safe_load(scenario.plan().node_parameters["current_server"]["environment_yaml"])
    assert published["waves"]["significant_height_m"] == 1.5
    sea = build_environment(published).waves
    assert sea.model == "jonswap" and sea.components.size == 16 * 8
    # travelling east (from 270°): the energy-weighted mean direction is (1, 0)
    energy = sea.components.amplitude_m**2
    mean = energy @ sea.components.direction_en / energy.sum()
    np.testing.assert_allclose(mean / np.linalg.norm(mean), [1.0, 0.0], atol=1e-12)


@pytest.mark.parametrize(
    ("waves", "key", "reason"),
    [
        ("{model: jonswap, peak_period_s: 3.0}", "environment.waves.significant_height_m", "missing"),
        ("{model: regular, height_m: 1.0, period_s: -2}", "environment.waves.period_s", "expected a number > 0"),
        ("{model: swell}", "environment.waves.model", "expected one of none, regular, jonswap"),
        ("{model: regular, height_m: 1, period_s: 5, hs: 2}", "environment.waves.hs", "unknown key"),
    ],
)
def test_bad_waves_fail_with_file_key_and_reason(tmp_path, waves, key, reason):
    path = write(tmp_path, waves)
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    assert info.value.where == str(path.resolve())
    assert info.value.key == key
    assert reason in info.value.reason
    assert str(path.resolve()) in str(info.value) and key in str(info.value)
