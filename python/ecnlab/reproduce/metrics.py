"""What a figure plots, computed from one stored point.

A *metric* is one number per point: any column of the store's index
(``fct_small_mean``, ``slowdown_small_p99``, ``goodput_gbps_s0``,
``incast_goodput_gbps``, ...) or one of the derived metrics below, which
read the point's tables. A *curve*
is a series of (x, y) per point: a distribution or a time series. Every
metric and curve takes ``args`` from the panel; ``scale`` multiplies the
result (seconds to microseconds: ``scale = 1e6``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..sweep.store import Store

__all__ = ["CURVES", "METRICS", "ROW_METRICS", "PointView", "curve", "metric", "reads_tables"]


class PointView:
    """One stored point: its index row, summary, config and tables."""

    def __init__(self, store: Store, key: str, row: Mapping[str, Any]) -> None:
        self.store = store
        self.key = key
        self.row = dict(row)
        self._tables: dict[str, pa.Table] = {}
        self._config: dict[str, Any] | None = None

    def table(self, name: str) -> pa.Table:
        if name not in self._tables:
            from .carry import is_carried

            if is_carried(self.store, self.key):
                raise KeyError(
                    f"point {self.key} was carried from the repository's record (summary "
                    f"columns only, no {name!r} table): run it again in a store of its own"
                )
            self._tables[name] = self.store.table(self.key, name)
        return self._tables[name]

    @property
    def config(self) -> dict[str, Any]:
        if self._config is None:
            import json

            path = self.store.point_dir(self.key) / "config.json"
            self._config = json.loads(path.read_text(encoding="utf-8"))
        return self._config

    def packet_bytes(self) -> int:
        t = self.config.get("transport", {})
        return int(t.get("mss", 1460)) + int(t.get("header", 40))

    def port_id(self, name: str) -> int:
        node, _, peer = name.partition(":")
        ports = self.table("ports")
        nodes = ports.column("node").to_pylist()
        peers = ports.column("peer").to_pylist()
        ids = ports.column("port").to_pylist()
        for i, n, p in zip(ids, nodes, peers):
            if n == node and p == peer:
                return int(i)
        raise KeyError(f"point {self.key}: no port {name!r}")


def _num(v: Any) -> float:
    if v is None:
        return math.nan
    return float(v)


# --------------------------------------------------------------------------- metrics


def _goodput_total(p: PointView, **_: Any) -> float:
    values = [_num(v) for k, v in p.row.items() if k.startswith("goodput_gbps_s")]
    return float(np.nansum(values)) if values else math.nan


def _rtt(p: PointView, stat: str = "mean", service: int | None = None, **_: Any) -> float:
    rtt = p.table("rtt")
    values = np.asarray(rtt.column("rtt").to_numpy(), dtype=float)
    if service is not None:
        values = values[np.asarray(rtt.column("service").to_numpy()) == service]
    if values.size == 0:
        return math.nan
    if stat == "mean":
        return float(values.mean())
    return float(np.percentile(values, float(stat.lstrip("p"))))


def _port_max_packets(p: PointView, port: str, **_: Any) -> float:
    ports = p.table("ports")
    pid = p.port_id(port)
    sel = (np.asarray(ports.column("port").to_numpy()) == pid) & (
        np.asarray(ports.column("queue").to_numpy()) == -1
    )
    max_bytes = np.asarray(ports.column("max_bytes").to_numpy())[sel]
    return float(max_bytes[0]) / p.packet_bytes()


def _long_goodput(p: PointView, **_: Any) -> float:
    """Goodput of the long-lived flows together, Gbps, over the run."""
    flows = p.table("flows")
    kind = np.asarray(flows.column("kind").to_pylist())
    got = np.asarray(flows.column("bytes_received").to_numpy(), dtype=float)[kind == "long"]
    start = np.asarray(flows.column("start").to_numpy(), dtype=float)[kind == "long"]
    sim = _num(p.row.get("sim_seconds"))
    if got.size == 0 or not sim:
        return math.nan
    span = sim - np.nanmin(start)
    return float(got.sum() * 8 / span / 1e9)


def _service_share(p: PointView, service: int, **_: Any) -> float:
    total = _goodput_total(p)
    return _num(p.row.get(f"goodput_gbps_s{service}")) / total if total else math.nan


def _incast_senders(p: PointView, group: int) -> int:
    senders = p.config["incast"][group]["senders"]
    return len(senders) if isinstance(senders, list) else int(senders)


def _incast_aggregate(
    p: PointView, skip_rounds: int = 0, min_senders: int = 0, group: int = 0, **_: Any
) -> float:
    """Incast goodput as an application sees it over many rounds, Gbps: all
    the blocks of the rounds after the first ``skip_rounds`` over the time
    those rounds took (the summary's ``incast_goodput_gbps`` is the mean of
    the per-round rates instead, which lets one round stalled by a 300 ms
    retransmission timeout count as little as a fast one). NaN for a point
    with fewer than ``min_senders`` senders, which ``last_above`` passes
    over: a sender count too small for the scheme to fill the link even
    without loss (Tuning ECN's h = 0) is not a collapse."""
    if _incast_senders(p, group) < min_senders:
        return math.nan
    inc = p.table("incast")
    rounds = np.asarray(inc.column("round").to_numpy())
    span = np.asarray(inc.column("finish").to_numpy()) - np.asarray(inc.column("start").to_numpy())
    rate = np.asarray(inc.column("goodput_gbps").to_numpy(), dtype=float)
    keep = rounds > skip_rounds
    if not keep.any():
        return math.nan
    return float((rate[keep] * span[keep]).sum() / span[keep].sum())


def _flow_stat(
    p: PointView,
    column: str = "fct",
    stat: str = "mean",
    kind: str | None = None,
    size_min: int | None = None,
    size_max: int | None = None,
    above: float = 0.0,
    **_: Any,
) -> float:
    """A statistic of one ``flows`` column over the finished flows (those
    with an FCT) of a kind and size range: ``mean``, ``pNN`` (a percentile,
    ``p50`` the median) or ``fraction`` (the share whose value exceeds
    ``above``: with ``column = "timeouts"``, the flows that timed out)."""
    t = p.table("flows")
    mask = ~np.isnan(np.asarray(t.column("fct").to_numpy(), dtype=float))
    if kind is not None:
        mask &= np.asarray(t.column("kind").to_pylist()) == kind
    sizes = np.asarray(t.column("size").to_numpy())
    if size_min is not None:
        mask &= sizes >= size_min
    if size_max is not None:
        mask &= sizes <= size_max
    values = np.asarray(t.column(column).to_numpy(), dtype=float)[mask]
    values = values[~np.isnan(values)]  # a flow with no value (no ideal FCT: no slowdown)
    if values.size == 0:
        return math.nan
    if stat == "mean":
        return float(values.mean())
    if stat == "fraction":
        return float((values > above).mean())
    if stat.startswith("p"):
        return float(np.percentile(values, float(stat[1:])))
    raise ValueError(f"flow_stat: stat = {stat!r}: expected mean, fraction or pNN (e.g. p50)")


def _slowdown(
    p: PointView,
    stat: str = "mean",
    size_min: int | None = None,
    size_max: int | None = None,
    **_: Any,
) -> float:
    """FCT slowdown (each flow's FCT over its ideal FCT alone in the empty
    network, the flows table's ``slowdown``) of the finished sized flows in
    a size range: ``mean`` or ``pNN`` (``p50``, ``p99``, ``p99.9``)."""
    if "slowdown" not in p.table("flows").column_names:
        raise KeyError(f"point {p.key}: no slowdown in its flows table (made before model 3)")
    return _flow_stat(
        p, column="slowdown", stat=stat, kind="sized", size_min=size_min, size_max=size_max
    )


def _per_flow(p: PointView, column: str, **_: Any) -> float:
    """An index column (``timeouts``, ``packets_dropped``, ...) per sized
    flow of the run: counts from runs of different sizes compare (a quick
    run against the paper's 50,000 flows, with ``scale = 50000``)."""
    flows = _num(p.row.get("fct_flows"))
    return _num(p.row.get(column)) / flows if flows else math.nan


def _flow_goodput(p: PointView, stat: str = "min", **_: Any) -> float:
    """The long-lived flows' goodput, each from its start to the run's end
    (Gbps): ``stat`` = min | max | mean, or ``jain`` (Jain's fairness index
    of the flows' goodputs, 1 when all are equal). Flows that start at or
    after the run's end are left out."""
    flows = p.table("flows")
    kind = np.asarray(flows.column("kind").to_pylist())
    got = np.asarray(flows.column("bytes_received").to_numpy(), dtype=float)
    start = np.asarray(flows.column("start").to_numpy(), dtype=float)
    sim = _num(p.row.get("sim_seconds"))
    sel = (kind == "long") & (start < sim)
    if not sel.any():
        return math.nan
    rates = got[sel] * 8 / (sim - start[sel]) / 1e9
    if stat == "jain":
        return float(rates.sum() ** 2 / (rates.size * (rates**2).sum()))
    if stat in ("min", "max", "mean"):
        return float(getattr(np, stat)(rates))
    raise ValueError(f"flow_goodput: stat = {stat!r}: expected min, max, mean or jain")


def _queue_stat(
    p: PointView,
    port: str,
    stat: str = "mean",
    queue: int | None = None,
    unit: str = "KB",
    t0: float = 0.0,
    below: float = 0.0,
    **_: Any,
) -> float:
    """A statistic of one port's sampled queue (the ``queues`` table, every
    ``run.sample_interval``) from ``t0`` seconds on: the port's total, or
    with ``queue`` that queue alone; ``mean``, ``pNN`` (``p99``) or
    ``fraction`` of the samples below ``below``, in ``unit`` (``KB``,
    ``bytes``, ``packets``)."""
    from ..plots import queue_series

    times, total, per_queue = queue_series(p.table("queues"), p.port_id(port), unit)
    if queue is not None:
        times, total = per_queue.get(int(queue), (np.array([]), np.array([])))
    values = np.asarray(total, dtype=float)[np.asarray(times) >= t0]
    if values.size == 0:
        return math.nan
    if stat == "mean":
        return float(values.mean())
    if stat == "fraction":
        return float((values < below).mean())
    if stat.startswith("p") and stat[1:].replace(".", "", 1).isdigit():
        return float(np.percentile(values, float(stat[1:])))
    raise ValueError(f"queue_stat: stat = {stat!r}: expected mean, fraction or pNN (e.g. p99)")


def _settle_time(
    p: PointView, service: int = 0, fraction: float = 0.95, window: int = 5, **_: Any
) -> float:
    """When a service's goodput settles (seconds): the start of the first
    ``window``-bin moving mean of the ``run.goodput_interval`` bins from
    which every later one stays at or above ``fraction`` of the mean over
    the run's second half (the window smooths single-bin dips)."""
    times, gbps = _goodput_series(p, service)
    if times.size < window + 1:
        return math.nan
    final = gbps[times >= times[-1] / 2].mean()
    smooth = np.convolve(gbps, np.ones(window) / window, mode="valid")
    low = np.nonzero(smooth < fraction * final)[0]
    if low.size == 0:
        return float(times[0])
    if low[-1] + 1 >= smooth.size:
        return math.nan  # not settled by the run's end
    return float(times[low[-1] + 1])


METRICS: dict[str, Callable[..., float]] = {
    "goodput_total_gbps": _goodput_total,
    "incast_aggregate_gbps": _incast_aggregate,
    "rtt": _rtt,
    "port_max_packets": _port_max_packets,
    "long_goodput_gbps": _long_goodput,
    "service_share": _service_share,
    "flow_stat": _flow_stat,
    "slowdown": _slowdown,
    "per_flow": _per_flow,
    "flow_goodput": _flow_goodput,
    "queue_stat": _queue_stat,
    "settle_time": _settle_time,
}
"""Derived metrics by name; any index column is a metric too."""

ROW_METRICS = frozenset({"per_flow"})
"""The derived metrics that read only the point's index row; every other
one reads a per-flow table (or the config and a table)."""


def reads_tables(panels: Iterable[Any]) -> bool:
    """Whether drawing these panels reads a point's tables: a curve, or a
    derived metric other than :data:`ROW_METRICS` (index columns do not).
    A point carried from the repository's record has no tables."""
    for panel in panels:
        if getattr(panel, "curve", ""):
            return True
        names = [panel.metric] + [str(m.get("metric", "")) for m in panel.metrics]
        if any(n in METRICS and n not in ROW_METRICS for n in names):
            return True
    return False


def metric(p: PointView, name: str, args: Mapping[str, Any]) -> float:
    """The value of metric ``name`` for point ``p``."""
    kwargs = dict(args)
    scale = float(kwargs.pop("scale", 1.0))
    if name in METRICS:
        value = METRICS[name](p, **kwargs)
    elif name in p.row:
        value = _num(p.row[name])
    else:
        known = ", ".join(sorted(METRICS))
        raise KeyError(f"unknown metric {name!r}: not an index column nor one of {known}")
    return value * scale


# --------------------------------------------------------------------------- curves


def _cdf(
    p: PointView,
    table: str,
    column: str,
    kind: str | None = None,
    size_max: int | None = None,
    size_min: int | None = None,
    service: int | None = None,
    **_: Any,
) -> tuple[np.ndarray, np.ndarray]:
    t = p.table(table)
    mask = np.ones(t.num_rows, dtype=bool)
    if kind is not None:
        mask &= np.asarray(pc.equal(t.column("kind"), kind).to_numpy(zero_copy_only=False))
    if size_max is not None:
        mask &= np.asarray(t.column("size").to_numpy()) <= size_max
    if size_min is not None:
        mask &= np.asarray(t.column("size").to_numpy()) >= size_min
    if service is not None:
        mask &= np.asarray(t.column("service").to_numpy()) == service
    values = np.asarray(t.column(column).to_numpy(), dtype=float)[mask]
    values = np.sort(values[~np.isnan(values)])
    probs = np.arange(1, values.size + 1) / max(values.size, 1)
    return values, probs


def _queue(
    p: PointView,
    port: str,
    unit: str = "packets",
    t0: float = 0.0,
    t1: float | None = None,
    **_: Any,
) -> tuple[np.ndarray, np.ndarray]:
    from ..plots import queue_series

    times, total, _ = queue_series(p.table("queues"), p.port_id(port), unit)
    sel = times >= t0
    if t1 is not None:
        sel &= times <= t1
    return times[sel], total[sel]


def _goodput_series(p: PointView, service: int = 0, **_: Any) -> tuple[np.ndarray, np.ndarray]:
    g = p.table("goodput")
    sel = np.asarray(g.column("service").to_numpy()) == service
    return (
        np.asarray(g.column("time").to_numpy())[sel],
        np.asarray(g.column("gbps").to_numpy())[sel],
    )


def _slowdown_by_size(
    p: PointView, stat: str = "p95", bins: int = 20, workload_only: bool = True, **_: Any
) -> tuple[np.ndarray, np.ndarray]:
    """The HPCC paper's FCT plot (its analysis/fct_analysis.py): the finished
    sized flows sorted by size into ``bins`` groups of equal count; x: each
    group's largest size (bytes), y: its slowdown statistic (``pNN`` or
    ``mean``; a slowdown below 1 counts as 1). ``workload_only``: the
    ``[workload]``'s flows alone, not the ``[[flows]]`` entries before them
    (the figure's incasts, which the paper plots apart)."""
    t = p.table("flows")
    explicit = sum(int(f.get("count", 1)) for f in p.config.get("flows", []))
    ids = np.asarray(t.column("id").to_numpy())
    size = np.asarray(t.column("size").to_numpy(), dtype=float)
    slow = np.asarray(t.column("slowdown").to_numpy(), dtype=float)
    keep = np.isfinite(slow) & (np.asarray(t.column("kind").to_pylist()) == "sized")
    if workload_only:
        keep &= ids >= explicit
    order = np.lexsort((ids[keep], size[keep]))
    size, slow = size[keep][order], np.maximum(slow[keep][order], 1.0)
    n = len(size)
    xs, ys = [], []
    for i in range(bins):
        lo, hi = i * n // bins, (i + 1) * n // bins
        if hi <= lo:
            continue
        group = slow[lo:hi]
        xs.append(size[hi - 1])
        ys.append(group.mean() if stat == "mean" else np.percentile(group, float(stat[1:])))
    return np.asarray(xs), np.asarray(ys)


CURVES: dict[str, Callable[..., tuple[np.ndarray, np.ndarray]]] = {
    "cdf": _cdf,
    "queue": _queue,
    "goodput": _goodput_series,
    "slowdown_by_size": _slowdown_by_size,
}
"""Curves by name: ``cdf`` (of a table column, y = probability), ``queue``
(a port's total queue over time), ``goodput`` (a service over time),
``slowdown_by_size`` (a slowdown statistic per flow-size group)."""


def curve(p: PointView, name: str, args: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    kwargs = dict(args)
    xscale = float(kwargs.pop("scale", 1.0))
    yscale = float(kwargs.pop("yscale", 1.0))
    if name not in CURVES:
        raise KeyError(f"unknown curve {name!r}; expected one of {', '.join(sorted(CURVES))}")
    x, y = CURVES[name](p, **kwargs)
    return x * xscale, y * yscale
