"""Goodput over a workload's arrival window.

A run with a Poisson workload ends when its last flow finishes, so the
summary's goodput (payload delivered in order from warm-up to the run's
end) averages in the drain after the last arrival, when less and less is
sent: at load 0.7 on the tutorial's leaf-spine the arrivals end at about
two thirds of the run, and the whole-run mean reads as if the network
saturated well below what was offered. Over the arrival window, from the
warm-up's end to the last sized flow's start, the network carries what the
workload offers while it offers it.

The goodput time series (``goodput``: ``gbps`` per service over bins of
``run.goodput_interval`` ending at ``time``, the last one cut at the run's
end) holds what each bin delivered; a bin the window cuts counts for the
part inside it, as if delivered evenly across the bin. It is worked out
from a run's tables when shown (the run's printout, the sweep table), not
stored in ``summary.json``, whose columns a record compares run by run.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from .units import parse_time

__all__ = ["arrival_goodput", "arrival_goodput_in", "goodput_between", "has_workload"]


def has_workload(config: Mapping[str, Any] | None) -> bool:
    """Whether a resolved config generates flows from a ``[workload]``."""
    workload = config.get("workload") if isinstance(config, Mapping) else None
    return isinstance(workload, Mapping) and bool(workload.get("kind"))


def goodput_between(goodput: pa.Table, start: float, end: float) -> float | None:
    """Mean goodput in Gbps, summed over services, over ``[start, end]``
    (seconds) from a ``goodput`` table; None when the window is empty or
    the table has no bin in it."""
    if end <= start or goodput.num_rows == 0:
        return None
    time = np.asarray(goodput.column("time").to_numpy(zero_copy_only=False), dtype=float)
    gbps = np.asarray(goodput.column("gbps").to_numpy(zero_copy_only=False), dtype=float)
    ends, inverse = np.unique(time, return_inverse=True)
    total = np.bincount(inverse.ravel(), weights=gbps, minlength=len(ends))
    starts = np.concatenate(([0.0], ends[:-1]))
    overlap = np.clip(np.minimum(ends, end) - np.maximum(starts, start), 0.0, None)
    if not overlap.any():
        return None
    return float((total * overlap).sum() / (end - start))


def arrival_goodput(
    goodput: pa.Table | None, flows: pa.Table | None, config: Mapping[str, Any]
) -> dict[str, float] | None:
    """``{"arrival_goodput_gbps", "arrival_window_from", "arrival_window_to"}``
    for a run with a workload: the mean goodput, summed over services (so
    over all hosts), from the warm-up's end to the last sized flow's start
    (seconds); None without a workload, sized flows or goodput bins, or when
    the last arrival comes before the warm-up ends."""
    if goodput is None or flows is None or not has_workload(config):
        return None
    if not {"start", "kind"} <= set(flows.column_names):
        return None
    kind = np.asarray(flows.column("kind").to_pylist(), dtype=object)
    start = np.asarray(flows.column("start").to_numpy(zero_copy_only=False), dtype=float)
    start = start[(kind == "sized") & np.isfinite(start)]
    if start.size == 0:
        return None
    run = config.get("run") if isinstance(config.get("run"), Mapping) else {}
    try:
        warmup = parse_time(run.get("warmup") or 0.0)
    except ValueError:
        return None
    last = float(start.max())
    gbps = goodput_between(goodput, warmup, last)
    if gbps is None:
        return None
    return {
        "arrival_goodput_gbps": gbps,
        "arrival_window_from": warmup,
        "arrival_window_to": last,
    }


def arrival_goodput_in(directory: str | Path) -> dict[str, float] | None:
    """:func:`arrival_goodput` of the run written to ``directory`` (a run's
    output folder or a store's point folder); None where a file it needs is
    missing or unreadable."""
    import pyarrow.parquet as pq

    folder = Path(directory)
    try:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        if not has_workload(config):
            return None
        flows = pq.read_table(folder / "flows.parquet", columns=["start", "kind"])
        goodput = pq.read_table(folder / "goodput.parquet")
    except (OSError, ValueError, pa.ArrowException):
        return None
    return arrival_goodput(goodput, flows, config)
