"""ecnlab.quantiles: the quantile definition, the exact-resampling bootstrap and
how often its interval covers the true quantile (on samples of known distribution)."""

from __future__ import annotations

import numpy as np
import pytest

from ecnlab.quantiles import (
    bootstrap_mean,
    bootstrap_quantile,
    mean_replicates,
    quantile,
    quantile_replicates,
    rng_for,
    tail_flows,
)


def ks_distance(a: np.ndarray, b: np.ndarray) -> float:
    """The two-sample Kolmogorov-Smirnov statistic: the largest gap between
    the two empirical CDFs (ties handled by evaluating at every value)."""
    grid = np.union1d(a, b)
    cdf_a = np.searchsorted(np.sort(a), grid, side="right") / a.size
    cdf_b = np.searchsorted(np.sort(b), grid, side="right") / b.size
    return float(np.abs(cdf_a - cdf_b).max())


def plain_bootstrap(values: np.ndarray, q: float, seed: int, resamples: int) -> np.ndarray:
    """The textbook loop: resample n values with replacement, take the quantile."""
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, values.size, size=(resamples, values.size))
    return np.quantile(values[draws], q, axis=1)


def test_quantile_is_numpys_linear_definition() -> None:
    values = np.arange(1.0, 101.0)  # 1 .. 100
    assert quantile(values, 0.99) == pytest.approx(99.01)  # 1 + 0.99 · 99
    assert quantile(values, 0.5) == pytest.approx(50.5)
    assert quantile(np.array([7.0]), 0.999) == 7.0


@pytest.mark.parametrize(("n", "q"), [(40, 0.5), (300, 0.99), (300, 0.9), (2000, 0.999)])
def test_exact_resampling_matches_the_plain_bootstrap(n: int, q: float) -> None:
    """Two Beta draws per replicate give the distribution that resampling n
    values gives: the two samples of 20,000 replicates are as close as two
    samples of one distribution (KS distance below its 0.1% critical value,
    1.95·sqrt(2/20000) = 0.0195)."""
    values = np.random.default_rng(n).exponential(size=n)
    resamples = 20_000
    exact = quantile_replicates(values, q, np.random.default_rng(1), resamples)
    plain = plain_bootstrap(values, q, 2, resamples)
    assert ks_distance(exact, plain) < 0.0195


def test_mean_replicates_are_the_plain_bootstrap() -> None:
    values = np.random.default_rng(3).exponential(size=500)
    means = mean_replicates(values, np.random.default_rng(4), 4000)
    # The bootstrap's standard error of the mean is the sample's sd / sqrt(n).
    assert means.std() == pytest.approx(values.std() / np.sqrt(values.size), rel=0.05)
    assert means.mean() == pytest.approx(values.mean(), rel=0.01)


def coverage(n: int, q: float, seeds: int) -> float:
    """How often the 95% interval of an exponential sample's q-quantile covers
    the true one, -ln(1 - q), over ``seeds`` samples (seeds 0 .. seeds-1)."""
    truth = -np.log1p(-q)
    hits = 0
    for seed in range(seeds):
        rng = np.random.default_rng(seed)
        low, high = bootstrap_quantile(rng.exponential(size=n), q, rng)
        hits += low <= truth <= high
    return hits / seeds


@pytest.mark.parametrize(("n", "q"), [(3000, 0.99), (500, 0.5), (30_000, 0.999)])
def test_interval_covers_the_true_quantile_about_95_percent(n: int, q: float) -> None:
    """With 30 or more values above the quantile, the nominal 95% interval
    covers the truth in 90-99% of 300 samples (fixed seeds: deterministic;
    the binomial sd of a 95% rate over 300 samples is 1.3%)."""
    assert 0.90 <= coverage(n, q, 300) <= 0.99


def test_interval_undercovers_a_thin_tail() -> None:
    """What the warning says: a p99 of 100 values (1 above it) is covered far
    less often than 95%; about 63% (docs/statistics.md)."""
    assert coverage(100, 0.99, 300) < 0.8


def test_mean_interval_covers_the_true_mean() -> None:
    hits = 0
    for seed in range(200):
        rng = np.random.default_rng(seed)
        low, high = bootstrap_mean(rng.exponential(size=400), rng, resamples=1000)
        hits += low <= 1.0 <= high
    assert 0.90 <= hits / 200 <= 0.99


def test_same_seed_and_label_give_the_same_interval() -> None:
    values = np.random.default_rng(0).exponential(size=1000)
    first = bootstrap_quantile(values, 0.99, rng_for(0, "fct small p99"))
    assert bootstrap_quantile(values, 0.99, rng_for(0, "fct small p99")) == first
    assert bootstrap_quantile(values, 0.99, rng_for(1, "fct small p99")) != first
    assert bootstrap_quantile(values, 0.99, rng_for(0, "fct all p99")) != first


def test_one_value_and_no_values() -> None:
    assert bootstrap_quantile(np.array([2.0]), 0.99, np.random.default_rng(0)) == (2.0, 2.0)
    with pytest.raises(ValueError):
        bootstrap_quantile(np.array([]), 0.99, np.random.default_rng(0))
    with pytest.raises(ValueError):
        bootstrap_mean(np.array([]), np.random.default_rng(0))


def test_tail_flows() -> None:
    values = np.arange(1.0, 101.0)
    assert tail_flows(values, quantile(values, 0.99)) == 1  # 99.01: only 100 above
    assert tail_flows(values, quantile(values, 0.5)) == 50
