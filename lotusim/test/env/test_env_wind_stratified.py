"""Wind field (direction convention, gust statistics, Taylor advection) and the DAVE-style stratified current.

Gusts: VRX's USVWind process [VRX2025] is an OU process with time constant τ whose stationary standard
deviation is its gain K; we check std K and autocorrelation e^{−lag/τ}. Taylor's frozen turbulence: a point s
metres downwind sees at t + s/U what the origin saw at t.
"""

from __future__ import annotations

import numpy as np
import pytest

from lotusim_env.environment import build_environment


@pytest.mark.parametrize(
    ("from_deg", "towards_en"),
    [(0.0, (0.0, -1.0)), (90.0, (-1.0, 0.0)), (180.0, (0.0, 1.0)), (270.0, (1.0, 0.0)), (225.0, (0.7071, 0.7071))],
)
def test_meteorological_direction_is_where_the_wind_comes_from(from_deg, towards_en):
    wind = build_environment({"wind": {"speed_mps": 8.0, "from_deg": from_deg}}).wind
    v = wind.velocity_enu(0.0, np.zeros((1, 3)))[0]
    assert np.allclose(v, [8.0 * towards_en[0], 8.0 * towards_en[1], 0.0], atol=1e-3)
    assert wind.from_deg == pytest.approx(from_deg % 360.0)


def test_velocity_enu_form_gives_the_same_wind():
    a = build_environment({"wind": {"speed_mps": 10.0, "from_deg": 300.0}}).wind
    b = build_environment({"wind": {"velocity_enu": a.mean_enu.tolist()}}).wind
    assert b.from_deg == pytest.approx(300.0) and b.speed_mps == pytest.approx(10.0)


@pytest.fixture(scope="module")
def gusty():
    config = {
        "seed": 3,
        "wind": {
            "speed_mps": 10.0,
            "from_deg": 270.0,
            "gust_std_mps": 2.0,
            "gust_lateral_std_mps": 1.0,
            "gust_time_constant_s": 5.0,
            "time_step_s": 0.5,
        },
    }
    return build_environment(config).wind


def test_gust_std_and_autocorrelation(gusty):
    t = np.arange(0.0, 100_000.0, 0.5)
    v = np.array([gusty.velocity_enu(ti, np.zeros((1, 3)))[0] for ti in t[:10]])  # per-call path
    samples = gusty.gusts.sample(t)  # vectorised path (the same numbers velocity_enu gives at the origin)
    along, across = samples[:, 0], samples[:, 1]
    assert np.allclose(v[:, 0], 10.0 + along[:10]) and np.allclose(v[:, 1], across[:10])
    # 100 000 s / (2 τ) = 10 000 independent samples: std s.e. 0.7 %
    assert along.std() == pytest.approx(2.0, rel=0.04) and across.std() == pytest.approx(1.0, rel=0.04)
    assert abs(along.mean()) < 4 * 2.0 * np.sqrt(2 * 5.0 / 100_000.0)
    y = along - along.mean()
    lag = 10  # 5 s = τ
    assert np.dot(y[:-lag], y[lag:]) / np.dot(y, y) == pytest.approx(np.exp(-1.0), abs=0.03)


def test_gusts_are_carried_downwind_at_the_mean_speed(gusty):
    """Wind from the west (towards +x) at 10 m/s: x = 250 m at t + 25 s equals x = 0 at t."""
    t = np.array([10.0, 33.3, 400.0])
    here = np.array([gusty.velocity_enu(ti, np.array([[0.0, 0.0, 0.0]]))[0] for ti in t])
    downwind = np.array([gusty.velocity_enu(ti + 25.0, np.array([[250.0, 40.0, -3.0]]))[0] for ti in t])
    assert np.allclose(here, downwind, atol=1e-12)
    crosswind = np.array([gusty.velocity_enu(ti, np.array([[0.0, 500.0, 0.0]]))[0] for ti in t])
    assert np.allclose(here, crosswind, atol=1e-12)  # frozen pattern: no variation across the wind
    assert not np.allclose(here, np.array([gusty.velocity_enu(ti, np.array([[250.0, 0.0, 0.0]]))[0] for ti in t]))


def test_wind_is_seeded():
    config = {"seed": 9, "wind": {"speed_mps": 5.0, "gust_std_mps": 1.0}}
    pts = np.array([[0.0, 0.0, 0.0], [-300.0, 20.0, 0.0]])
    a = build_environment(config).wind.velocity_enu(42.0, pts)
    assert np.array_equal(a, build_environment(config).wind.velocity_enu(42.0, pts))
    assert not np.array_equal(a, build_environment({**config, "seed": 10}).wind.velocity_enu(42.0, pts))


DAVE_CSV = """# Ocean current database (example in DAVE's format)
# two info lines, then the header
# Data (North direction velocity [m/s], East direction velocity [m/s], Depth [m])
0.00, 0.05, 0
0.01, 0.03, 10
0.02, 0.00, 50
"""


def test_stratified_table_interpolates_linearly_in_depth_and_holds_the_ends(tmp_path):
    (tmp_path / "db.csv").write_text(DAVE_CSV)
    env = build_environment({"current": {"model": "stratified", "file": "db.csv"}}, base_dir=tmp_path)
    depths = np.array([0.0, 5.0, 10.0, 30.0, 50.0, 80.0])
    v = env.current.velocity_enu(0.0, np.column_stack([np.zeros(6), np.zeros(6), -depths]))
    assert np.allclose(v[:, 0], [0.05, 0.04, 0.03, 0.015, 0.0, 0.0], atol=1e-15)  # east
    assert np.allclose(v[:, 1], [0.0, 0.005, 0.01, 0.015, 0.02, 0.02], atol=1e-15)  # north
    assert np.all(v[:, 2] == 0.0)


def test_stratified_layers_perturbed_independently_with_the_configured_statistics():
    layers = [{"depth_m": 0.0, "east_mps": 0.2}, {"depth_m": 100.0, "north_mps": -0.1}]
    config = {
        "seed": 4,
        "current": {
            "model": "stratified",
            "layers": layers,
            "time_step_s": 5.0,
            "perturbation": {"mu": 0.01, "stationary_std": 0.03},
        },
    }
    current = build_environment(config).current
    t = np.arange(0.0, 2_000_000.0, 5.0)  # μT/2 = 10 000 independent samples
    values = current.model.process.sample(t).reshape(t.size, 2, 2)  # (time, layer, east/north)
    assert np.allclose(values.mean(axis=0), [[0.2, 0.0], [0.0, -0.1]], atol=4 * 0.03 * np.sqrt(2 / 20_000))
    assert np.allclose(values.std(axis=0), 0.03, rtol=0.05)
    corr = np.corrcoef(values[:, 0, 0], values[:, 1, 0])[0, 1]
    assert abs(corr) < 0.05  # the layers are independent processes
    surface = current.velocity_enu(t[7], np.array([[0.0, 0.0, 0.0]]))[0]
    assert np.allclose(surface[:2], values[7, 0], atol=1e-15)
