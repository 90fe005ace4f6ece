"""Plotting helpers over result tables (matplotlib, no pyplot state).

The ``*_over_time`` functions draw onto an ``Axes`` you pass in, so they work
the same in a notebook and in a script. :func:`new_figure` makes a figure bound
to the Agg canvas without touching pyplot's global backend.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from ._atomic import atomic_write
from .runner.result import Result

__all__ = [
    "FORMATS",
    "amounts",
    "error_bars",
    "goodput_over_time",
    "line_series",
    "new_figure",
    "normalize_series",
    "queue_over_time",
    "queue_series",
    "save_figure",
    "scheme_comparison",
]

_QUEUE_UNITS = {
    "packets": ("packets", 1.0, "queue length (packets)"),
    "bytes": ("bytes", 1.0, "queue length (bytes)"),
    "KB": ("bytes", 1e-3, "queue length (KB)"),
}


def _col(table: pa.Table, name: str) -> np.ndarray:
    return np.asarray(table.column(name).to_numpy())


def new_figure(width: float, height: float) -> Figure:
    """A figure drawn with the Agg backend, independent of pyplot."""
    fig = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(fig)
    return fig


FORMATS = ("png", "pdf", "svg")
"""The file formats :func:`save_figure` writes."""


def save_figure(fig: Figure, path: str | Path, dpi: int = 150, format: str = "png") -> Path:
    """Save ``fig`` atomically (never leaves a half-written file) as PNG,
    PDF or SVG (:data:`FORMATS`); ``dpi`` sets a PNG's resolution."""
    if format not in FORMATS:
        raise ValueError(f"format {format!r}: expected one of {', '.join(FORMATS)}")
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    with atomic_write(target, "wb") as handle:
        fig.savefig(handle, format=format, dpi=dpi)
    return target


def _shade_warmup(ax: Axes, warmup: float | None) -> None:
    if warmup:
        ax.axvspan(0.0, warmup, color="0.9", zorder=0, linewidth=0)


def goodput_over_time(
    ax: Axes,
    table: pa.Table,
    services: Sequence[int] | None = None,
    *,
    warmup: float | None = None,
    label: str = "service {service}",
    legend: bool = True,
) -> list[Line2D]:
    """Plot goodput (Gbps) against time, one line per service.

    ``table`` is a ``goodput`` table (``time``, ``service``, ``gbps``).
    ``services`` limits and orders the services drawn (default: all). The
    warm-up period, when given, is shaded.
    """
    time = _col(table, "time")
    service = _col(table, "service")
    gbps = _col(table, "gbps")
    chosen = sorted(int(s) for s in np.unique(service)) if services is None else list(services)
    lines: list[Line2D] = []
    for svc in chosen:
        sel = service == svc
        order = np.argsort(time[sel], kind="stable")
        (line,) = ax.plot(time[sel][order], gbps[sel][order], label=label.format(service=svc))
        lines.append(line)
    _shade_warmup(ax, warmup)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("goodput (Gbps)")
    ax.set_ylim(bottom=0)
    if legend and lines:
        ax.legend(loc="upper right", fontsize="small")
    return lines


def queue_series(
    table: pa.Table, port: int, unit: str = "packets"
) -> tuple[np.ndarray, np.ndarray, dict[int, tuple[np.ndarray, np.ndarray]]]:
    """Return one port's queue length over time from a ``queues`` table.

    The result is ``(times, total, per_queue)``: the sample times, the sum
    over the port's queues at each time, and ``{queue: (times, values)}``.
    ``unit`` is ``"packets"``, ``"bytes"`` or ``"KB"``.
    """
    if unit not in _QUEUE_UNITS:
        raise ValueError(f"unit must be one of {', '.join(_QUEUE_UNITS)}, not {unit!r}")
    column, scale, _ = _QUEUE_UNITS[unit]
    sel = _col(table, "port") == port
    time = _col(table, "time")[sel]
    queue = _col(table, "queue")[sel]
    values = _col(table, column)[sel].astype(np.float64) * scale
    times, inverse = np.unique(time, return_inverse=True)
    total = np.bincount(inverse.ravel(), weights=values, minlength=len(times))
    per_queue: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    for q in np.unique(queue):
        qsel = queue == q
        order = np.argsort(time[qsel], kind="stable")
        per_queue[int(q)] = (time[qsel][order], values[qsel][order])
    return times, total, per_queue


def queue_over_time(
    ax: Axes,
    table: pa.Table,
    port: int,
    *,
    unit: str = "packets",
    per_queue: bool = True,
    total: bool = True,
    warmup: float | None = None,
    legend: bool = True,
) -> list[Line2D]:
    """Plot a port's queue length against time: the sum and/or each queue.

    ``table`` is a ``queues`` table (``time``, ``port``, ``queue``, ``bytes``,
    ``packets``).
    """
    times, sums, queues = queue_series(table, port, unit)
    lines: list[Line2D] = []
    if total:
        (line,) = ax.plot(times, sums, color="black", linewidth=1.0, label="port total")
        lines.append(line)
    if per_queue:
        for q, (qt, qv) in queues.items():
            (line,) = ax.plot(qt, qv, linewidth=0.8, alpha=0.85, label=f"queue {q}")
            lines.append(line)
    _shade_warmup(ax, warmup)
    ax.set_xlabel("time (s)")
    ax.set_ylabel(_QUEUE_UNITS[unit][2])
    ax.set_ylim(bottom=0)
    if legend and lines:
        ax.legend(loc="upper right", fontsize="small")
    return lines


def scheme_comparison(
    results: Mapping[str, Result],
    ports: Mapping[str, int],
    *,
    warmup: float | None = None,
    title: str | None = None,
    unit: str = "packets",
) -> Figure:
    """One column per scheme: goodput by service on top, bottleneck queue below.

    ``results`` maps a scheme name to its result and ``ports`` maps it to the
    id of the port whose queues are drawn.
    """
    names = list(results)
    if not names:
        raise ValueError("no results to plot")
    fig = new_figure(4.2 * len(names), 6.0)
    axes: Any = fig.subplots(2, len(names), sharex="col", sharey="row", squeeze=False)
    for column, name in enumerate(names):
        result = results[name]
        top, bottom = axes[0][column], axes[1][column]
        goodput_over_time(top, result.table("goodput"), warmup=warmup, legend=column == 0)
        top.set_title(name)
        queue_over_time(
            bottom,
            result.table("queues"),
            ports[name],
            unit=unit,
            warmup=warmup,
            legend=column == 0,
        )
        if column:
            top.set_ylabel("")
            bottom.set_ylabel("")
        top.set_xlabel("")
    if title:
        fig.suptitle(title)
    return fig


# --------------------------------------------------------------------------- series against x
#
# A "series" maps a label to rows ``{"x": value, "ours": number, ...}``: the
# shape of a reproduced figure's line panel (``ecnlab reproduce``) and of
# ``ecnlab plot``'s lines over a sweep store.

_MARKERS = "osD^v<>pP*Xh"


def _split_amount(x: Any) -> tuple[float, str] | None:
    """'14pkt' → (14.0, 'pkt'); None for anything that is not an amount."""
    if isinstance(x, bool) or not isinstance(x, (str, int, float)):
        return None
    if not isinstance(x, str):
        return float(x), ""
    i = 0
    while i < len(x) and (x[i].isdigit() or x[i] in ".-+e"):
        i += 1
    try:
        return float(x[:i]), x[i:].strip()
    except ValueError:
        return None


def amounts(xs: Sequence[Any]) -> tuple[list[float], str] | None:
    """xs as numbers and their unit when every one is an amount in one unit
    (``["10pkt", "40pkt"]`` → ``([10.0, 40.0], "pkt")``; plain numbers have
    unit ``""``), so that they plot spaced by value instead of as
    categories; None otherwise."""
    parts = [_split_amount(x) for x in xs]
    if not parts or any(p is None for p in parts) or len({p[1] for p in parts if p}) != 1:
        return None
    return [p[0] for p in parts if p], next(p[1] for p in parts if p)


def normalize_series(series: Mapping[str, list[dict[str, Any]]], base: str) -> None:
    """Divide, in place, every row's ``ours`` by series ``base``'s at the
    same x (NaN where ``base`` has none, or zero); the value before is kept
    as ``raw``."""
    ref = {json.dumps(r["x"]): r["ours"] for r in series.get(base, [])}
    for rows in series.values():
        for r in rows:
            b = ref.get(json.dumps(r["x"]), math.nan)
            r["raw"] = r["ours"]
            r["ours"] = r["ours"] / b if b and not math.isnan(b) else math.nan


def _shift(positions: Mapping[str, float] | None, k: int, n: int, dodge: float) -> float:
    """How far series ``k`` of ``n`` moves along x: ``dodge`` of the
    smallest gap between x positions, the series spread about each x, so
    that intervals at one x do not hide each other."""
    if not positions or not dodge or n < 2:
        return 0.0
    xs = sorted(set(positions.values()))
    gaps = [b - a for a, b in zip(xs, xs[1:]) if b > a]
    if not gaps:
        return 0.0
    return (k - (n - 1) / 2) * dodge * min(gaps) / (n - 1)


def error_bars(
    ax: Axes,
    series: Mapping[str, Sequence[Mapping[str, Any]]],
    positions: Mapping[str, float] | None,
    colors: Mapping[str, str],
    *,
    dodge: float = 0.0,
) -> None:
    """Draw each row's interval (``ci_low`` .. ``ci_high``, where both are
    set) as an error bar in its series' colour; ``positions`` is what
    :func:`line_series` returned (None: x values as they are), ``dodge``
    what it was given."""
    for k, (name, rows) in enumerate(series.items()):
        shift = _shift(positions, k, len(series), dodge)
        bars = [
            (
                positions[str(r["x"])] + shift if positions else r["x"],
                r["ours"],
                r["ci_low"],
                r["ci_high"],
            )
            for r in rows
            if r.get("ci_low") is not None and r.get("ci_high") is not None
        ]
        if not bars:
            continue
        x, y, low, high = (list(v) for v in zip(*bars))
        below = [max(0.0, yy - lo) for yy, lo in zip(y, low)]
        above = [max(0.0, hi - yy) for yy, hi in zip(y, high)]
        ax.errorbar(
            x,
            y,
            yerr=[below, above],
            fmt="none",
            ecolor=colors.get(name, "black"),
            capsize=2.5,
            linewidth=0.9,
            zorder=4,
        )


def line_series(
    ax: Axes,
    series: Mapping[str, Sequence[Mapping[str, Any]]],
    *,
    normalized: bool = False,
    extra_x: Iterable[Any] = (),
    colors: Mapping[str, str] | None = None,
    dodge: float = 0.0,
) -> dict[str, float] | None:
    """Draw each series as a line with markers, labelled with its name.

    x values that are all amounts in one unit (with ``extra_x``, x values
    drawn later on the same axes) are placed by value; otherwise they are
    categories. ``normalized`` draws a dashed line at 1; ``colors`` fixes a
    series' colour (by name; else the next of the cycle); ``dodge`` spreads
    the series about each x by that share of the smallest gap between x
    values (x placed by value only). Returns the map from ``str(x)`` to its
    position on the axis (before the spread), or None for categories.
    """
    every = [r["x"] for rows in series.values() for r in rows] + list(extra_x)
    found = amounts(every)
    num = dict(zip(map(str, every), found[0])) if found else None
    for k, (name, rows) in enumerate(series.items()):
        x = [r["x"] for r in rows]
        y = [math.nan if r["ours"] is None else r["ours"] for r in rows]
        if num:
            shift = _shift(num, k, len(series), dodge)
            x = [num[str(v)] + shift for v in x]
        color = (colors or {}).get(name)
        ax.plot(x, y, marker=_MARKERS[k % len(_MARKERS)], label=name, color=color)
    if normalized:
        ax.axhline(1.0, color="0.5", linestyle="--", linewidth=0.8)
    return num
