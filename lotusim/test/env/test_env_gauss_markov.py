"""Gauss–Markov (Ornstein–Uhlenbeck) processes: analytic statistics over long seeded runs, reproducibility,
order-independence (pure function of seed and sim time), bounds, and the currents built on them.

Analytic values (Fossen 2021 §10.3, Ornstein–Uhlenbeck form): dx = −μ(x − m)dt + σ dW has stationary mean m,
variance σ²/(2μ) and autocorrelation e^{−μ|τ|}; with μ = 0 (random walk) Var x(t) = σ² t whatever the step.
Tolerances are several standard errors of the estimators (an OU run of length T holds ≈ μT/2 independent
samples).
"""

from __future__ import annotations

import numpy as np
import pytest

from lotusim_env.config import derive_seed
from lotusim_env.environment import build_environment
from lotusim_env.gauss_markov import OrnsteinUhlenbeck

MU = 0.1  # 1/s
SIGMA = 0.05  # m/s/√s
MEAN = 0.5
STD = SIGMA / np.sqrt(2 * MU)  # 0.1118 m/s


def process(seed=7, mean=MEAN, mu=MU, sigma=SIGMA, step=1.0, dims=1, initial="stationary"):
    return OrnsteinUhlenbeck(
        np.full(dims, mean), np.full(dims, mu), np.full(dims, sigma), step, derive_seed(seed, "test"), initial
    )


@pytest.fixture(scope="module")
def long_run():
    t = np.arange(0.0, 400_000.0, 1.0)  # μT/2 = 20 000 independent samples
    return t, process().sample(t)[:, 0]


def test_stationary_mean_is_the_configured_mean_not_zero(long_run):
    _, x = long_run
    standard_error = STD * np.sqrt(2.0 / (MU * x.size))
    assert abs(x.mean() - MEAN) < 4 * standard_error  # UUV Simulator's process would drift to ≈ 0 [UUVSimulator2020]


def test_stationary_variance_is_sigma2_over_2mu(long_run):
    _, x = long_run
    assert x.var() == pytest.approx(STD**2, rel=0.04)  # 0.0125 m²/s²


@pytest.mark.parametrize("lag_s", [1.0, 5.0, 10.0, 20.0])
def test_autocorrelation_is_exp_minus_mu_tau(long_run, lag_s):
    _, x = long_run
    y = x - x.mean()
    k = int(lag_s)
    rho = np.dot(y[:-k], y[k:]) / np.dot(y, y)
    assert rho == pytest.approx(np.exp(-MU * lag_s), abs=0.03)  # e^-1 = 0.368 at 10 s


@pytest.mark.parametrize("step_s", [0.1, 1.0, 5.0])
def test_random_walk_variance_grows_as_sigma2_t_for_any_step(step_s):
    """√dt scaling: the variance at t does not depend on the grid step (UUV Simulator's does [UUVSimulator2020])."""
    walk = process(mu=0.0, sigma=0.2, step=step_s, dims=2500, initial="mean")
    x = walk.sample(np.array([100.0]))[0]
    assert x.var() == pytest.approx(0.2**2 * 100.0, rel=0.09)  # 4.0; 2500 samples: rel. s.e. 2.8 %
    assert abs(x.mean() - MEAN) < 4 * np.sqrt(4.0 / 2500)


def test_same_seed_same_series_other_seed_other_series():
    t = np.linspace(-500.0, 20_000.0, 3001)
    a, b, c = process(seed=3).sample(t), process(seed=3).sample(t), process(seed=4).sample(t)
    assert np.array_equal(a, b)
    assert not np.allclose(a, c)


def test_value_at_t_does_not_depend_on_query_order_or_history():
    rng = np.random.default_rng(0)
    times = np.concatenate([rng.uniform(-3e4, 3e5, 300), [0.0, 0.5, 1024.0, 1024.5, -1024.0, 2.5e5]])
    in_order = process(seed=11).sample(np.sort(times))
    shuffled_process = process(seed=11)
    order = rng.permutation(times.size)
    one_by_one = np.empty((times.size, 1))
    for i in order:  # far future first, then back, one time per call, as different nodes would ask
        one_by_one[i] = shuffled_process.sample(times[i])
    assert np.array_equal(in_order, one_by_one[np.argsort(times)])


def test_negative_times_continue_the_stationary_process():
    x = process(seed=5).sample(-np.arange(0.0, 200_000.0, 1.0))[:, 0]
    assert abs(x.mean() - MEAN) < 4 * STD * np.sqrt(2.0 / (MU * x.size))
    assert x.var() == pytest.approx(STD**2, rel=0.06)


def test_linear_between_grid_nodes():
    ou = process(step=2.0)
    nodes = ou.sample(np.array([10.0, 12.0]))[:, 0]
    assert ou.sample(11.5)[0, 0] == pytest.approx(nodes[0] + 0.75 * (nodes[1] - nodes[0]), rel=1e-12)


def gm_config(seed=1, **override):
    current = {
        "model": "gauss_markov",
        "time_step_s": 1.0,
        "east": {"mean": 0.3, "mu": 0.05, "stationary_std": 0.1, "min": 0.2, "max": 0.4},
        "north": {"mean": -0.1, "mu": 0.05, "stationary_std": 0.05},
        **override,
    }
    return {"seed": seed, "current": current}


def test_environment_gm_is_reproducible_across_builds_and_uniform_in_space():
    points = np.array([[0.0, 0.0, -5.0], [100.0, -30.0, -50.0]])
    first = build_environment(gm_config())
    second = build_environment(gm_config())
    for t in (3000.0, 10.0, 123.4):  # different order in the two environments
        v1 = first.current.velocity_enu(t, points)
        assert np.array_equal(v1[0], v1[1])
    assert np.array_equal(second.current.velocity_enu(10.0, points), first.current.velocity_enu(10.0, points))
    other = build_environment(gm_config(seed=2)).current.velocity_enu(10.0, points)
    assert not np.array_equal(other, first.current.velocity_enu(10.0, points))


def test_bounds_saturate_the_reported_value():
    env = build_environment(gm_config())
    v = np.array([env.current.velocity_enu(t, np.zeros((1, 3)))[0] for t in np.arange(0.0, 5000.0, 5.0)])
    assert v[:, 0].min() == pytest.approx(0.2) and v[:, 0].max() == pytest.approx(0.4)  # hits both bounds
    assert np.all(v[:, 2] == 0.0)


def test_polar_mode_speed_direction_elevation():
    """UUV Simulator's speed/horizontal/vertical angle form; direction is 'towards', clockwise from north."""
    current = {
        "model": "gauss_markov",
        "mode": "polar",
        "speed": {"mean": 0.5},
        "direction_deg": {"mean": 90.0},
        "elevation_deg": {"mean": 30.0},
    }
    v = build_environment({"current": current}).current.velocity_enu(0.0, np.zeros((1, 3)))[0]
    assert np.allclose(v, [0.5 * np.cos(np.radians(30)), 0.0, 0.25], atol=1e-12)  # towards east, rising


def test_sum_of_ekman_and_gauss_markov_perturbation():
    base = {"origin": {"latitude_deg": 47.0, "longitude_deg": 0.0}, "wind": {"speed_mps": 10.0, "from_deg": 0.0}}
    ekman = {"model": "ekman"}
    perturbation = {"model": "gauss_markov", "east": {"mean": 0.0, "mu": 0.01, "stationary_std": 0.02}}
    total = build_environment({**base, "current": {"model": "sum", "terms": [ekman, perturbation]}}).current
    alone = build_environment({**base, "current": ekman}).current
    points = np.array([[0.0, 0.0, 0.0], [0.0, 0.0, -30.0]])
    residual = [total.velocity_enu(t, points) - alone.velocity_enu(t, points) for t in (50.0, 5000.0)]
    for r in residual:  # what is left is the spatially uniform, east-only perturbation
        assert r[0] == pytest.approx(r[1], abs=1e-15) and np.all(r[:, 1:] == 0.0)
    assert residual[0][0, 0] != residual[1][0, 0]
