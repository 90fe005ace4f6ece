"""Flow-completion-time (FCT) statistics, in the form MQ-ECN and CEDM report them.

Only flows of kind ``"sized"`` are counted: long-lived flows have no
completion time, incast blocks are measured per round instead, and
rate-limited flows (``"rate-limited"``) finish when their rate lets them. Flows are
binned by size with SI units (1 KB = 1000 bytes, 1 MB = 10**6 bytes):

* small: ``0 < size <= 100 KB``
* medium: ``100 KB < size <= 10 MB``
* large: ``size > 10 MB``
* one packet: ``0 < size <= mss`` (a subset of small)

All FCTs are in seconds. :func:`fct_stats` gives the numbers a run's summary
stores; :func:`fct_estimates` gives each percentile (and each slowdown
statistic, when the flows table has a ``slowdown`` column) with the number
of flows it rests on and a bootstrap confidence interval (see
:mod:`ecnlab.quantiles` for the quantile definition and the interval).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from .quantiles import (
    DEFAULT_LEVEL,
    DEFAULT_RESAMPLES,
    MIN_TAIL,
    bootstrap_mean,
    bootstrap_quantile,
    quantile,
    rng_for,
    tail_flows,
)

__all__ = [
    "DEFAULT_MSS",
    "ESTIMATE_CLASSES",
    "FCT_KEYS",
    "Estimate",
    "MEDIUM_MAX_BYTES",
    "SMALL_MAX_BYTES",
    "fct_estimates",
    "fct_stats",
    "estimates_title",
    "format_estimates",
    "has_sized_flows",
    "mss_from_config",
    "normalize",
]

KB = 1_000
MB = 1_000_000
SMALL_MAX_BYTES = 100 * KB
MEDIUM_MAX_BYTES = 10 * MB
DEFAULT_MSS = 1460
SIZED = "sized"

FCT_KEYS: tuple[str, ...] = (
    "overall_mean",
    "small_mean",
    "small_p99",
    "small_p999",
    "medium_mean",
    "large_mean",
    "one_packet_mean",
    "timeouts",
    "flows",
    "unfinished",
    "small_flows",
    "medium_flows",
    "large_flows",
    "one_packet_flows",
    "overall_tput",
    "mean_tput",
    "small_tput",
    "medium_tput",
    "large_tput",
    "small_marks",
    "medium_marks",
    "large_marks",
)
"""The keys of :func:`fct_stats`'s result, in order."""

_REQUIRED_COLUMNS = ("size", "fct", "timeouts", "kind")


def _sized(flows: pa.Table) -> Any:
    # pyarrow.compute is imported here, not with the package: it takes 9 MiB,
    # which a run that only streams its tables does not need.
    import pyarrow.compute as pc

    kind = flows.column("kind")
    if not (pa.types.is_string(kind.type) or pa.types.is_large_string(kind.type)):
        kind = pc.cast(kind, pa.string())  # e.g. dictionary-encoded strings
    return pc.fill_null(pc.equal(kind, SIZED), False)


def _sized_mask(flows: pa.Table) -> np.ndarray:
    return np.asarray(_sized(flows).to_numpy(zero_copy_only=False), dtype=bool)


def _numbers(flows: pa.Table, name: str, dtype: Any, missing: Any) -> np.ndarray:
    import pyarrow.compute as pc

    column = pc.fill_null(pc.cast(flows.column(name), dtype), missing)
    return np.asarray(column.to_numpy(zero_copy_only=False))


def has_sized_flows(flows: pa.Table) -> bool:
    """Whether ``flows`` has a ``kind`` column with at least one ``"sized"`` flow."""
    if "kind" not in flows.column_names or flows.num_rows == 0:
        return False
    import pyarrow.compute as pc

    return bool(pc.any(_sized(flows)).as_py())


def _mean(values: np.ndarray) -> float | None:
    return float(values.mean()) if values.size else None


def _ratio_of_means(num: np.ndarray, den: np.ndarray) -> float | None:
    return float(num.mean() / den.mean()) if den.size and den.mean() > 0 else None


def _percentile(values: np.ndarray, q: float) -> float | None:
    return float(np.percentile(values, q)) if values.size else None


def fct_stats(flows: pa.Table, mss: int = DEFAULT_MSS) -> dict[str, float | int | None]:
    """Summarise the completion times of the sized flows in a ``flows`` table.

    Only rows with ``kind == "sized"`` are counted; other rows and extra
    columns are ignored. The result has the keys of :data:`FCT_KEYS`:

    * ``overall_mean``: mean FCT of all finished sized flows;
    * ``small_mean``, ``small_p99``, ``small_p999``: mean, 99th and 99.9th
      percentile FCT of small flows (``0 < size <= 100 KB``);
    * ``medium_mean``: mean FCT of medium flows (``100 KB < size <= 10 MB``);
    * ``large_mean``: mean FCT of large flows (``size > 10 MB``);
    * ``one_packet_mean``: mean FCT of flows of at most one segment
      (``0 < size <= mss``);
    * ``timeouts``: retransmission timeouts summed over all sized flows,
      finished or not;
    * ``flows``: the number of sized flows; ``unfinished``: how many of them
      have no FCT (NaN or null);
    * ``small_flows``, ``medium_flows``, ``large_flows``,
      ``one_packet_flows``: the number of sized flows in each class,
      unfinished ones included;
    * ``overall_tput``, ``small_tput``, ``medium_tput``, ``large_tput``:
      the mean over finished flows of size / FCT, in bits per second
      (ML-ECN §IV-B's throughput: each flow's rate, then the average);
    * ``mean_tput``: mean size in bits over mean FCT, over finished flows
      (FQ-CoDel in the DCN §IV-A's "mean throughput of all flows", which
      large flows dominate, unlike ``overall_tput``);
    * ``small_marks``, ``medium_marks``, ``large_marks``: CE-marked packets
      the receivers of each class's flows got (ML-ECN §IV-C), summed over
      all its sized flows; ``None`` when the table has no ``ce_marks``.

    FCTs are in seconds. **Unfinished flows are left out of every mean and
    percentile**, so a run where many flows do not finish can look better
    than it is; check ``unfinished``. A statistic is ``None`` when its class
    has no finished flow. Percentiles use ``numpy.percentile``'s default
    linear interpolation (Hyndman and Fan's type 7; why, and how far other
    definitions such as polars' ``"nearest"`` land from it: :mod:`ecnlab.quantiles`).
    A p99 of fewer than about 1000 flows has fewer than 10 flows above it
    and is unstable: :func:`fct_estimates` gives each percentile with its
    flow count and a confidence interval. KB and MB are SI (1000 and 10**6 bytes).

    Raises ``ValueError`` when a needed column (size, fct, timeouts, kind) is
    missing or ``mss`` is not positive.
    """
    missing = [name for name in _REQUIRED_COLUMNS if name not in flows.column_names]
    if missing:
        raise ValueError(f"flows table lacks column(s): {', '.join(missing)}")
    if isinstance(mss, bool) or not isinstance(mss, (int, np.integer)) or mss <= 0:
        raise ValueError(f"mss must be a positive number of bytes, got {mss!r}")

    sized = _sized_mask(flows)
    size = _numbers(flows, "size", pa.int64(), -1)[sized]
    fct = _numbers(flows, "fct", pa.float64(), float("nan"))[sized]
    timeouts = _numbers(flows, "timeouts", pa.int64(), 0)[sized]

    finished = ~np.isnan(fct)
    classes = size_classes(size)
    small, medium, large = classes["small"], classes["medium"], classes["large"]
    one_packet = (size > 0) & (size <= int(mss))

    small_fct = fct[small & finished]
    rate = np.divide(size * 8.0, fct, out=np.full(fct.shape, np.nan), where=finished & (fct > 0))
    has_marks = "ce_marks" in flows.column_names
    marks = _numbers(flows, "ce_marks", pa.int64(), 0)[sized] if has_marks else None

    def marked(cls: np.ndarray) -> int | None:
        return int(marks[cls].sum()) if marks is not None else None

    return {
        "overall_mean": _mean(fct[finished]),
        "small_mean": _mean(small_fct),
        "small_p99": _percentile(small_fct, 99.0),
        "small_p999": _percentile(small_fct, 99.9),
        "medium_mean": _mean(fct[medium & finished]),
        "large_mean": _mean(fct[large & finished]),
        "one_packet_mean": _mean(fct[one_packet & finished]),
        "timeouts": int(timeouts.sum()),
        "flows": int(size.size),
        "unfinished": int((~finished).sum()),
        "small_flows": int(small.sum()),
        "medium_flows": int(medium.sum()),
        "large_flows": int(large.sum()),
        "one_packet_flows": int(one_packet.sum()),
        "overall_tput": _mean(rate[finished]),
        "mean_tput": _ratio_of_means(size[finished] * 8.0, fct[finished]),
        "small_tput": _mean(rate[small & finished]),
        "medium_tput": _mean(rate[medium & finished]),
        "large_tput": _mean(rate[large & finished]),
        "small_marks": marked(small),
        "medium_marks": marked(medium),
        "large_marks": marked(large),
    }


def normalize(
    ours: Mapping[str, float | int | None], baseline: Mapping[str, float | int | None]
) -> dict[str, float | None]:
    """Divide each statistic by the baseline's, as MQ-ECN and CEDM plot FCT.

    The result has the keys of ``ours``; a value is ``None`` where either
    side is ``None`` or the baseline is zero.
    """
    ratios: dict[str, float | None] = {}
    for key, value in ours.items():
        base = baseline.get(key)
        if value is None or base is None or base == 0:
            ratios[key] = None
        else:
            ratios[key] = float(value) / float(base)
    return ratios


def mss_from_config(config: Mapping[str, Any] | None) -> int:
    """The ``transport.mss`` of a resolved config, or :data:`DEFAULT_MSS`."""
    transport = config.get("transport") if isinstance(config, Mapping) else None
    mss = transport.get("mss") if isinstance(transport, Mapping) else None
    if isinstance(mss, int) and not isinstance(mss, bool) and mss > 0:
        return mss
    return DEFAULT_MSS


# --------------------------------------------------------------------------- estimates

ESTIMATE_CLASSES: tuple[str, ...] = ("small", "medium", "large", "all")
"""The size classes of :func:`fct_estimates`, in order ("all": every sized flow)."""

_QUANTILES: dict[str, float] = {"p50": 0.5, "p99": 0.99, "p99.9": 0.999}
FCT_ESTIMATES: tuple[str, ...] = ("p50", "p99", "p99.9")
SLOWDOWN_ESTIMATES: tuple[str, ...] = ("mean", "p50", "p99", "p99.9")


@dataclass(frozen=True)
class Estimate:
    """One statistic of one size class, with what it rests on.

    ``metric`` is ``"fct"`` (seconds) or ``"slowdown"`` (FCT over the ideal
    FCT); ``stat`` is ``"mean"``, ``"p50"``, ``"p99"`` or ``"p99.9"``;
    ``flows`` counts the values it is computed from (finished sized flows of
    the class, with a defined slowdown for ``"slowdown"``); ``above``, for
    a percentile, how many of them lie above the estimate. ``ci_low`` and
    ``ci_high`` bound the bootstrap interval (``None`` when not computed).
    ``warning`` says why the value is not to be trusted, or is ``None``.
    """

    metric: str
    size_class: str
    stat: str
    value: float
    flows: int
    above: int | None
    ci_low: float | None
    ci_high: float | None
    warning: str | None

    @property
    def label(self) -> str:
        return f"{self.metric} {self.size_class} {self.stat}"

    def as_dict(self) -> dict[str, Any]:
        """The fields as a JSON-safe dict."""
        return asdict(self)


def size_classes(size: np.ndarray) -> dict[str, np.ndarray]:
    """Masks of the small, medium and large flows among ``size`` (bytes;
    <= 0 for unsized) and of all of them: the classes every FCT and
    slowdown statistic uses."""
    return {
        "small": (size > 0) & (size <= SMALL_MAX_BYTES),
        "medium": (size > SMALL_MAX_BYTES) & (size <= MEDIUM_MAX_BYTES),
        "large": size > MEDIUM_MAX_BYTES,
        "all": np.ones(size.shape, dtype=bool),
    }


def flows_needed(q: float, tail: int = MIN_TAIL) -> int:
    """Flows for ``tail`` of them to lie above the ``q`` quantile, on average."""
    return math.ceil(tail / (1.0 - q) - 1e-9)


def _tail_warning(label: str, q: float, n: int, above: int) -> str | None:
    if above >= MIN_TAIL:
        return None
    stat = label.split()[-1]
    need = f"a {stat} needs {flows_needed(q):,} flows in its class for {MIN_TAIL} above it"
    if above <= 1:
        return (
            f"{label} rests on {n:,} flows with {above} above it: the tail is estimated "
            f"from 0-1 samples (it is about the largest value, not a tail estimate); {need}"
        )
    return (
        f"{label} rests on {n:,} flows with only {above} above it (fewer than {MIN_TAIL}): "
        f"unstable, and its interval covers less than it says; {need}"
    )


def _estimate(
    metric: str,
    cls: str,
    stat: str,
    values: np.ndarray,
    resamples: int,
    level: float,
    seed: int,
) -> Estimate:
    label = f"{metric} {cls} {stat}"
    rng = rng_for(seed, label)
    low: float | None = None
    high: float | None = None
    if stat == "mean":
        value = float(values.mean())
        if resamples > 0:
            low, high = bootstrap_mean(values, rng, resamples, level)
        return Estimate(metric, cls, stat, value, int(values.size), None, low, high, None)
    q = _QUANTILES[stat]
    value = quantile(values, q)
    if resamples > 0:
        low, high = bootstrap_quantile(values, q, rng, resamples, level)
    above = tail_flows(values, value)
    warning = _tail_warning(label, q, int(values.size), above)
    return Estimate(metric, cls, stat, value, int(values.size), above, low, high, warning)


def fct_estimates(
    flows: pa.Table,
    *,
    resamples: int = DEFAULT_RESAMPLES,
    level: float = DEFAULT_LEVEL,
    seed: int = 0,
) -> list[Estimate]:
    """Percentiles of FCT, and slowdown statistics, with counts and intervals.

    For each size class of :data:`ESTIMATE_CLASSES` with a finished sized
    flow: FCT p50, p99 and p99.9 (seconds). When ``flows`` has a
    ``slowdown`` column (FCT over the flow's ideal FCT; NaN or null where
    undefined), also the slowdown's mean, p50, p99 and p99.9 over the
    finished sized flows whose slowdown is defined; without the column,
    no slowdown rows. Unfinished flows are left out, as in :func:`fct_stats`.

    Percentiles are the linear (type 7) sample quantile, the definition of
    :func:`fct_stats`'s ``small_p99``, so the two agree. Each comes with
    ``flows`` (the values it rests on), ``above`` (how many lie above it)
    and a percentile-bootstrap interval at ``level`` from ``resamples``
    replicates (0: no interval), drawn from a generator seeded by ``seed``
    and the row's label, so the numbers are the same on every call. A
    percentile with fewer than :data:`ecnlab.quantiles.MIN_TAIL` flows above
    it carries a ``warning``: its interval undercovers (about 63% for a
    nominal 95% with 1 flow above, 82% with 3, 93% with 10, on exponential
    samples; docs/statistics.md). See :mod:`ecnlab.quantiles` for both choices.

    Raises ``ValueError`` when a needed column (size, fct, kind) is missing
    or ``level`` is not in (0, 1) or ``resamples`` is negative.
    """
    missing = [name for name in ("size", "fct", "kind") if name not in flows.column_names]
    if missing:
        raise ValueError(f"flows table lacks column(s): {', '.join(missing)}")
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    if isinstance(resamples, bool) or not isinstance(resamples, (int, np.integer)) or resamples < 0:
        raise ValueError(f"resamples must be a non-negative integer, got {resamples!r}")
    sized = _sized_mask(flows)
    size = _numbers(flows, "size", pa.int64(), -1)[sized]
    fct = _numbers(flows, "fct", pa.float64(), float("nan"))[sized]
    finished = ~np.isnan(fct)
    has_slowdown = "slowdown" in flows.column_names
    if has_slowdown:
        slowdown = _numbers(flows, "slowdown", pa.float64(), float("nan"))[sized]
        defined = finished & np.isfinite(slowdown)
    out: list[Estimate] = []
    masks = size_classes(size)
    for metric, stats in (("fct", FCT_ESTIMATES), ("slowdown", SLOWDOWN_ESTIMATES)):
        if metric == "slowdown" and not has_slowdown:
            continue
        for cls in ESTIMATE_CLASSES:
            if metric == "fct":
                values = fct[masks[cls] & finished]
            else:
                values = slowdown[masks[cls] & defined]
            if values.size == 0:
                continue
            for stat in stats:
                out.append(_estimate(metric, cls, stat, values, int(resamples), level, seed))
    return out


def _fct_time(seconds: float) -> str:
    if abs(seconds) < 1e-3:
        return f"{seconds * 1e6:,.1f} us"
    return f"{seconds * 1e3:,.3f} ms"


def _show(metric: str, value: float | None) -> str:
    if value is None or math.isnan(value):
        return "-"
    return _fct_time(value) if metric == "fct" else f"{value:,.2f}"


def estimates_title(directory: object, resamples: int, level: float = DEFAULT_LEVEL) -> str:
    """The heading ``ecnlab fct`` prints over :func:`format_estimates`."""
    how = (
        f"{level * 100:g}% percentile-bootstrap intervals, {resamples:,} resamples"
        if resamples > 0
        else "no intervals (--resamples 0)"
    )
    return (
        f"percentiles of {directory} (linear interpolation, numpy's default; {how}; "
        f"'!': fewer than {MIN_TAIL} flows above it)"
    )


def format_estimates(
    estimates: list[Estimate],
    title: str | None = None,
    level: float = DEFAULT_LEVEL,
) -> str:
    """A table of :func:`fct_estimates`, one statistic a row, then its warnings.

    A row whose estimate carries a warning is marked ``!`` in its last column.
    """
    ci_head = f"{level * 100:g}% CI"
    header = ["metric", "class", "stat", "value", ci_head, "flows", "above", ""]
    rows = [header]
    for e in estimates:
        ci = "-"
        if e.ci_low is not None and e.ci_high is not None:
            ci = f"{_show(e.metric, e.ci_low)} .. {_show(e.metric, e.ci_high)}"
        above = "-" if e.above is None else f"{e.above:,}"
        mark = "!" if e.warning else ""
        rows.append(
            [e.metric, e.size_class, e.stat, _show(e.metric, e.value), ci, f"{e.flows:,}", above]
            + [mark]
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = [title] if title else []
    for row in rows:
        cells = [row[i].ljust(widths[i]) for i in range(3)]
        cells += [row[i].rjust(widths[i]) for i in range(3, len(header))]
        lines.append("  " + "   ".join(cells).rstrip())
    note = _thin_tails_note([e for e in estimates if e.warning])
    if note:
        lines.append(f"  ! {note}")
    return "\n".join(lines)


def _thin_tails_note(flagged: list[Estimate]) -> str | None:
    """One line for every row marked '!' (each estimate's own warning is in
    its ``warning``, and in ``ecnlab fct --json``): how many, which rest on
    0-1 flows above them, and the flows each percentile needs."""
    if not flagged:
        return None
    rows = "1 row rests" if len(flagged) == 1 else f"{len(flagged)} rows rest"
    text = (
        f"{rows} on fewer than {MIN_TAIL} flows above the estimate: unstable, and an "
        "interval covers less than it says (docs/statistics.md)"
    )
    lone = sum(1 for e in flagged if e.above is not None and e.above <= 1)
    if lone:
        text += (
            f"; {lone} of them {'has' if lone == 1 else 'have'} 0-1 above (about the largest "
            "value, not a tail estimate)"
        )
    stats = sorted({e.stat for e in flagged}, key=lambda s: _QUANTILES[s])
    needs = ", ".join(f"a {s} {flows_needed(_QUANTILES[s]):,}" for s in stats)
    return text + f"; flows a class needs for {MIN_TAIL} above: {needs}"
