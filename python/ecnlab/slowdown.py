"""FCT slowdown statistics: each sized flow's FCT over its ideal FCT.

The flows table's ``ideal_fct`` is the flow's FCT alone in the empty
network, replayed by the engine with the run's own TCP (handshake, slow
start from the initial window, delayed ACKs, serialisation at every link
and propagation; see ``crates/ecnlab/src/network/ideal.rs``), measured as ``fct``
is; ``slowdown = fct / ideal_fct``, 1 for a flow that met its ideal. Long-
lived, incast and rate-limited flows have none (NaN).

Flows are binned by size as :mod:`ecnlab.fct` bins them (SI units): small
``<= 100 KB``, medium ``<= 10 MB``, large above.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from .fct import size_classes

__all__ = ["SLOWDOWN_KEYS", "has_slowdown", "slowdown_stats"]

SLOWDOWN_KEYS: tuple[str, ...] = (
    "overall_mean",
    "overall_p50",
    "overall_p99",
    "small_mean",
    "small_p50",
    "small_p99",
    "medium_mean",
    "medium_p99",
    "large_mean",
    "flows",
)
"""The keys of :func:`slowdown_stats`'s result, in order."""


def has_slowdown(flows: pa.Table) -> bool:
    """Whether ``flows`` has the ``slowdown`` column (runs of engine model
    3 and later) and the columns it is read with."""
    return all(name in flows.column_names for name in ("slowdown", "size", "kind"))


def _stat(values: np.ndarray, stat: str) -> float | None:
    if values.size == 0:
        return None
    if stat == "mean":
        return float(values.mean())
    return float(np.percentile(values, float(stat[1:])))


def slowdown_stats(flows: pa.Table) -> dict[str, Any]:
    """Mean and percentiles of the slowdown of the finished sized flows of
    a ``flows`` table, overall and by size class, with the keys of
    :data:`SLOWDOWN_KEYS`: ``<class>_mean``, ``<class>_p50``,
    ``<class>_p99`` (percentiles by ``numpy.percentile``'s linear
    interpolation) and ``flows``, the number of flows counted. Unfinished
    flows (no FCT, so no slowdown) are left out, as :func:`ecnlab.fct.fct_stats`
    leaves them out; a statistic is ``None`` when its class has no flow.

    Raises ``ValueError`` when the table has no ``slowdown`` column (runs
    made before engine model 3)."""
    if not has_slowdown(flows):
        raise ValueError("flows table lacks the slowdown column (made before engine model 3?)")
    kind = np.asarray(flows.column("kind").to_pylist(), dtype=object)
    size = np.asarray(flows.column("size").to_numpy(zero_copy_only=False), dtype=np.int64)
    slowdown = np.asarray(flows.column("slowdown").to_numpy(zero_copy_only=False), dtype=float)
    keep = (kind == "sized") & np.isfinite(slowdown)
    size, slowdown = size[keep], slowdown[keep]
    classes = size_classes(size)
    classes["overall"] = classes.pop("all")
    out: dict[str, Any] = {}
    for key in SLOWDOWN_KEYS[:-1]:
        cls, _, stat = key.partition("_")
        out[key] = _stat(slowdown[classes[cls]], stat)
    out["flows"] = int(size.size)
    return out
