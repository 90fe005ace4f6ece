"""Sample quantiles and their bootstrap confidence intervals, as ``ecnlab fct`` reports them.

**Which quantile.** Every percentile here is numpy's default
(``method="linear"``, type 7 in Hyndman and Fan's list of nine sample
quantiles, "Sample Quantiles in Statistical Packages", The American
Statistician 50(4), 1996; also R's and pandas' default): with the n values
sorted as x[0] <= ... <= x[n-1], h = (n - 1)·q and

    Q(q) = x[floor(h)] + (h - floor(h)) · (x[floor(h) + 1] - x[floor(h)]).

It is kept because the run summaries, result stores and figure verdicts
already hold ``small_p99`` computed this way, so a number printed by
``ecnlab fct`` is the number stored beside the run. The nine definitions
differ by at most the gap between the two order statistics around rank h;
in a thin tail that gap is large, so they can disagree by a lot: polars'
``quantile`` defaults to ``"nearest"`` (the order statistic at the rounded
rank); on the small flows of ten 1,000-flow MQ-ECN runs (about 540 each)
its p99 was up to 12% from this one, on ten 5,000-flow runs within 2%
(docs/statistics.md). Where the definitions disagree the tail holds few
flows, and that is what the interval and the tail count below expose.
(Pass ``interpolation="linear"`` to polars to get the same numbers.)

**Which interval.** The percentile bootstrap (Efron and Tibshirani, An
Introduction to the Bootstrap, 1993, ch. 13): resample the n values with
replacement, recompute the statistic, take the (1 - level)/2 and
(1 + level)/2 quantiles of the replicates. For a quantile the resampling
is done exactly without drawing n values per replicate: the k-th smallest
of n draws from the sorted sample is x[floor(n·U)], where U is the k-th
smallest of n uniforms on (0, 1), which is Beta(k, n + 1 - k); the next
one up is U + (1 - U)·Beta(1, n - k). So each replicate costs two Beta
draws whatever n is, and the result is the same distribution as the
textbook resampling loop (``tests/python/test_quantiles.py`` checks this
against it). Means are bootstrapped the plain way, in chunks.

The bootstrap of a sample quantile is only as good as the tail it
resamples: with fewer than about 1/(1 - q) values, no value lies above the
estimate and every replicate is one of the few largest values, so the
interval says little. :func:`tail_flows` counts the values above an
estimate and :data:`MIN_TAIL` is where ``ecnlab fct`` starts warning.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import numpy as np

__all__ = [
    "DEFAULT_LEVEL",
    "DEFAULT_RESAMPLES",
    "MIN_TAIL",
    "QUANTILE_METHOD",
    "bootstrap_mean",
    "bootstrap_quantile",
    "mean_replicates",
    "quantile",
    "quantile_replicates",
    "rng_for",
    "tail_flows",
]

QUANTILE_METHOD = "linear"
"""numpy's name for the quantile definition used (Hyndman and Fan's type 7)."""

DEFAULT_RESAMPLES = 2000
"""Bootstrap replicates. Efron and Tibshirani (1993) ask for about 1000 or
more for a percentile interval (far more than the 50-200 a standard error
needs), since its ends sit in the replicates' tails; 2000 keeps the Monte
Carlo wobble of a 95% end well below its sampling error."""

DEFAULT_LEVEL = 0.95

MIN_TAIL = 10
"""A percentile with fewer values than this above it gets a warning. At 10,
the count above the true quantile is roughly Poisson(10), whose central
95% runs from 4 to 17: the estimate could be any of a dozen order
statistics. ``docs/statistics.md`` measures what that means for p99 FCT."""

# Rows of a chunk of the plain bootstrap: at most this many draws at once.
_CHUNK_DRAWS = 1 << 21


def quantile(values: np.ndarray, q: float) -> float:
    """The type 7 (linear) sample quantile of ``values``, ``0 <= q <= 1``."""
    return float(np.quantile(values, q, method=QUANTILE_METHOD))


def rng_for(seed: int, label: str) -> np.random.Generator:
    """A generator for one statistic: the same (seed, label) gives the same
    draws whatever else is computed, so one row's interval does not move
    when another row is added."""
    return np.random.default_rng([int(seed), zlib.crc32(label.encode("utf-8"))])


def _interval(replicates: np.ndarray, level: float) -> tuple[float, float]:
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(replicates, [tail, 1.0 - tail])
    return float(low), float(high)


def quantile_replicates(
    values: np.ndarray, q: float, rng: np.random.Generator, resamples: int = DEFAULT_RESAMPLES
) -> np.ndarray:
    """``resamples`` bootstrap replicates of :func:`quantile` ``(values, q)``.

    Exact resampling of the two order statistics the estimate interpolates
    between (module docstring); ``values`` need not be sorted.
    """
    x = np.sort(np.asarray(values, dtype=float))
    n = x.size
    if n == 0:
        raise ValueError("no values to bootstrap")
    h = (n - 1) * q
    j = min(int(np.floor(h)), n - 1)
    frac = h - j
    k = j + 1  # 1-based rank of the lower order statistic
    # The k-th smallest of n uniforms is Beta(k, n + 1 - k); floor(n·U) is
    # the index into the sorted sample that a uniform draw picks.
    u = rng.beta(k, n + 1 - k, size=resamples)
    lower = np.minimum(np.floor(n * u).astype(np.int64), n - 1)
    estimate = x[lower]
    if frac > 0 and k < n:
        # The (k+1)-th: the smallest of the n - k uniforms above U.
        v = u + (1.0 - u) * rng.beta(1, n - k, size=resamples)
        upper = np.minimum(np.floor(n * v).astype(np.int64), n - 1)
        estimate = estimate + frac * (x[upper] - estimate)
    return estimate


def bootstrap_quantile(
    values: np.ndarray,
    q: float,
    rng: np.random.Generator,
    resamples: int = DEFAULT_RESAMPLES,
    level: float = DEFAULT_LEVEL,
) -> tuple[float, float]:
    """The percentile-bootstrap interval of :func:`quantile` ``(values, q)``.

    One value gives a zero-width interval at it.
    """
    return _interval(quantile_replicates(values, q, rng, resamples), level)


def mean_replicates(
    values: np.ndarray, rng: np.random.Generator, resamples: int = DEFAULT_RESAMPLES
) -> np.ndarray:
    """``resamples`` bootstrap replicates of the mean, drawn in chunks."""
    x = np.asarray(values, dtype=float)
    n = x.size
    if n == 0:
        raise ValueError("no values to bootstrap")
    means = np.empty(resamples)
    rows = max(1, _CHUNK_DRAWS // n)
    for start in range(0, resamples, rows):
        stop = min(resamples, start + rows)
        means[start:stop] = x[rng.integers(0, n, size=(stop - start, n))].mean(axis=1)
    return means


def bootstrap_mean(
    values: np.ndarray,
    rng: np.random.Generator,
    resamples: int = DEFAULT_RESAMPLES,
    level: float = DEFAULT_LEVEL,
) -> tuple[float, float]:
    """The percentile-bootstrap interval of the mean of ``values``."""
    return _interval(mean_replicates(values, rng, resamples), level)


def tail_flows(values: np.ndarray | Sequence[float], estimate: float) -> int:
    """How many of ``values`` lie strictly above ``estimate``."""
    x = np.asarray(values, dtype=float)
    return int(np.count_nonzero(x > estimate))
