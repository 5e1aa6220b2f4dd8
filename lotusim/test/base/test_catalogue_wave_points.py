"""A surface vessel file may say where the sea is sampled for its wave loads (`surface.wave_points_frd`): the
points load, round-trip through overrides, and bad ones fail with file, key and reason."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import yaml

from lotusim_core.base.catalogue import (
    CatalogueError,
    apply_overrides,
    load_vehicle,
    read_vehicle_mapping,
    spec_to_mapping,
    vehicles_dir,
)


def write(tmp_path, points):
    data = copy.deepcopy(read_vehicle_mapping(vehicles_dir() / "kayak_usv.yaml"))
    data["surface"]["wave_points_frd"] = points
    path = tmp_path / "boat.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def test_wamv_is_sampled_at_vrx_hull_points_and_they_survive_an_override():
    wamv = load_vehicle("wamv")
    np.testing.assert_array_equal(
        wamv.surface.wave_points_frd, [[0.6, -1.03], [0.6, 1.03], [-1.4, -1.03], [-1.4, 1.03]]
    )
    changed = apply_overrides(wamv, {"surface": {"draft_m": 0.1}})
    np.testing.assert_array_equal(changed.surface.wave_points_frd, wamv.surface.wave_points_frd)
    assert "wave_points_frd" not in spec_to_mapping(load_vehicle("kayak_usv"))["surface"]  # default: not written


@pytest.mark.parametrize(
    ("points", "reason"),
    [
        ([[0.0, 0.0], [1.0, 0.0]], "at least 3 points"),
        ([[0.0, 0.0], [1.0, 0.0], [2.0, 0.0]], "not on one line"),
        ([[0.0, 0.0], [1.0], [0.0, 1.0]], "list of 2 finite numbers"),
        ("bow", "expected a list"),
    ],
)
def test_bad_wave_points_name_file_key_and_reason(tmp_path, points, reason):
    path = write(tmp_path, points)
    with pytest.raises(CatalogueError) as info:
        load_vehicle(path)
    assert str(path) in str(info.value) and "surface.wave_points_frd" in info.value.key
    assert reason in info.value.reason
