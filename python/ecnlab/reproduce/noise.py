"""Seed-to-seed noise of a reproduced point: the mean over seeds and its 95%
confidence interval (Student's t, n - 1 degrees of freedom), and the check
that a figure declared seedless really is (docs/statistics.md, "Seeds and
intervals of the reproduced figures").
"""

from __future__ import annotations

import copy
import json
import math
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["CONFIDENCE", "Interval", "mean_interval", "seedless_differences", "t_quantile"]

CONFIDENCE = 0.95
"""The two-sided coverage of every interval a figure draws."""


def _t_two_sided(t: float, dof: int) -> float:
    """P(|T| <= t) for Student's t with an integer ``dof``: the finite series
    of Abramowitz and Stegun 26.7.3 (odd dof) and 26.7.4 (even dof), exact
    for integer dof, so no special-function library is needed."""
    theta = math.atan(t / math.sqrt(dof))
    s, c = math.sin(theta), math.cos(theta)
    if dof % 2 == 1:
        total, term = 0.0, c  # c, then c^3 * 2/3, c^5 * (2*4)/(3*5), ...
        for k in range(1, (dof - 1) // 2 + 1):
            total += term
            term *= c * c * (2 * k) / (2 * k + 1)
        return 2.0 / math.pi * (theta + s * total) if dof > 1 else 2.0 * theta / math.pi
    total, term = 0.0, 1.0  # 1, then c^2/2, c^4 * (1*3)/(2*4), ...
    for k in range(1, dof // 2 + 1):
        total += term
        term *= c * c * (2 * k - 1) / (2 * k)
    return s * total


def t_quantile(p: float, dof: int) -> float:
    """The ``p`` quantile (p > 0.5) of Student's t with ``dof`` degrees of
    freedom, by bisection on the exact CDF (to 1e-12)."""
    if dof < 1:
        raise ValueError(f"t_quantile: dof = {dof}: needs at least 1")
    if not 0.5 < p < 1.0:
        raise ValueError(f"t_quantile: p = {p}: expected 0.5 < p < 1")
    target = 2.0 * p - 1.0  # P(|T| <= t)
    lo, hi = 0.0, 1.0
    while _t_two_sided(hi, dof) < target:
        hi *= 2.0
    while hi - lo > 1e-12 * max(1.0, hi):
        mid = (lo + hi) / 2.0
        if _t_two_sided(mid, dof) < target:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2.0


@dataclass(frozen=True)
class Interval:
    """The mean of ``n`` values and its two-sided interval (NaN bounds when
    ``n`` < 2: one run has no spread to estimate)."""

    mean: float
    low: float
    high: float
    n: int

    def holds(self, value: float) -> bool:
        return self.low <= value <= self.high


def mean_interval(values: Sequence[float], confidence: float = CONFIDENCE) -> Interval:
    """Mean ± t(1 - (1 - confidence)/2, n - 1) · s/√n over the finite values
    (s: the sample standard deviation, divisor n - 1)."""
    good = [float(v) for v in values if v is not None and math.isfinite(float(v))]
    n = len(good)
    if n == 0:
        return Interval(math.nan, math.nan, math.nan, 0)
    mean = math.fsum(good) / n
    if n < 2:
        return Interval(mean, math.nan, math.nan, n)
    sd = math.sqrt(math.fsum((v - mean) ** 2 for v in good) / (n - 1))
    half = t_quantile(1.0 - (1.0 - confidence) / 2.0, n - 1) * sd / math.sqrt(n)
    return Interval(mean, mean - half, mean + half, n)


# --------------------------------------------------------------------------- seedless check

_TIMING = {"wall_seconds", "events_per_second"}
"""Summary fields that measure the machine, not the run."""


def seedless_differences(config: dict[str, Any], seeds: Sequence[int] = (1, 2)) -> list[str]:
    """Run ``config`` once per seed and list what differs between the runs'
    outputs (every table byte for byte, the summary but for its timings);
    empty when the set-up has no random element the seed reaches."""
    from ..config import set_value
    from ..runner import run

    outputs: list[dict[str, Any]] = []
    for seed in seeds:
        cfg = copy.deepcopy(config)
        set_value(cfg, "run.seed", seed)
        with tempfile.TemporaryDirectory(prefix="ecnlab-seedless-") as tmp:
            run(cfg, out=Path(tmp), progress=False)
            files = {
                p.name: p.read_bytes() for p in sorted(Path(tmp).rglob("*.parquet")) if p.is_file()
            }
            summary = json.loads((Path(tmp) / "summary.json").read_text(encoding="utf-8"))
        for key in _TIMING:
            summary.pop(key, None)
        outputs.append({"files": files, "summary": summary})
    first, diffs = outputs[0], []
    for seed, other in zip(seeds[1:], outputs[1:]):
        for name in sorted(set(first["files"]) | set(other["files"])):
            if first["files"].get(name) != other["files"].get(name):
                diffs.append(f"seed {seeds[0]} vs {seed}: {name} differs")
        if first["summary"] != other["summary"]:
            keys = [
                k
                for k in sorted(set(first["summary"]) | set(other["summary"]))
                if first["summary"].get(k) != other["summary"].get(k)
            ]
            diffs.append(f"seed {seeds[0]} vs {seed}: summary differs in {', '.join(keys)}")
    return diffs
