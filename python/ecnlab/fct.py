"""Flow-completion-time (FCT) statistics, in the form MQ-ECN and CEDM report them.

Only flows of kind ``"sized"`` are counted: long-lived flows have no
completion time, incast blocks are measured per round instead, and
rate-limited flows (``"rate-limited"``) finish when their rate lets them. Flows are
binned by size with SI units (1 KB = 1000 bytes, 1 MB = 10**6 bytes):

* small: ``0 < size <= 100 KB``
* medium: ``100 KB < size <= 10 MB``
* large: ``size > 10 MB``
* one packet: ``0 < size <= mss`` (a subset of small)

All FCTs are in seconds.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pyarrow as pa

__all__ = [
    "DEFAULT_MSS",
    "FCT_KEYS",
    "MEDIUM_MAX_BYTES",
    "SMALL_MAX_BYTES",
    "fct_stats",
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
    linear interpolation. KB and MB are SI (1000 and 10**6 bytes).

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
    small = (size > 0) & (size <= SMALL_MAX_BYTES)
    medium = (size > SMALL_MAX_BYTES) & (size <= MEDIUM_MAX_BYTES)
    large = size > MEDIUM_MAX_BYTES
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
