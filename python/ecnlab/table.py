"""Compact text tables for the terminal.

:func:`format_table` lines up cells under a header; :func:`points_table`
is what ``ecnlab sweep`` ends with: one row per point, the keys the points
differ in, then the headline metrics the store's index holds (mean FCT, the
small flows' p99 FCT, slowdown, goodput, ...), each column in one unit.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["Metric", "format_table", "headline_metrics", "points_table"]

MAX_ROWS = 40
ARRIVAL_GOODPUT = "goodput to last arrival"
"""The title of the goodput over a workload's arrival window (:mod:`ecnlab.arrivals`)."""


def format_table(
    header: Sequence[str], rows: Sequence[Sequence[str]], numeric: Sequence[bool] | None = None
) -> str:
    """Rows of cells under ``header``, two spaces in from the left, columns
    three spaces apart; ``numeric`` columns are right-aligned."""
    right = list(numeric) if numeric is not None else [False] * len(header)
    table = [list(header)] + [list(r) for r in rows]
    widths = [max(len(r[i]) for r in table) for i in range(len(header))]
    lines = []
    for row in table:
        cells = [
            cell.rjust(width) if right[i] else cell.ljust(width)
            for i, (cell, width) in enumerate(zip(row, widths))
        ]
        lines.append(("  " + "   ".join(cells)).rstrip())
    return "\n".join(lines)


@dataclass(frozen=True)
class Metric:
    """A column of the points table: its title, kind (``time`` in seconds,
    ``gbps``, ``ratio``, ``count`` or ``number``) and how to read it from an
    index row."""

    title: str
    kind: str
    read: Callable[[Mapping[str, Any]], Any]


def _column(name: str) -> Callable[[Mapping[str, Any]], Any]:
    return lambda row: row.get(name)


def _goodput(names: list[str]) -> Callable[[Mapping[str, Any]], Any]:
    def total(row: Mapping[str, Any]) -> Any:
        values = [row.get(n) for n in names]
        good = [float(v) for v in values if v is not None]
        return sum(good) if good else None

    return total


def _first(names: Sequence[str], *tests: Callable[[str], bool]) -> str | None:
    """The first name that passes every test."""
    for name in names:
        if all(test(name) for test in tests):
            return name
    return None


def headline_metrics(columns: Sequence[str]) -> list[Metric]:
    """The headline metrics an index with these columns holds, in order:
    mean FCT, small flows' p99 FCT, slowdown (p99 and mean, when the index
    has them), goodput over a workload's arrival window (:mod:`ecnlab.arrivals`),
    goodput summed over services (hence over all hosts), incast
    goodput, drop rate, unfinished flows."""
    names = list(columns)
    out: list[Metric] = []
    if "fct_overall_mean" in names:
        out.append(Metric("mean FCT", "time", _column("fct_overall_mean")))
    if "fct_small_p99" in names:
        out.append(Metric("small p99 FCT", "time", _column("fct_small_p99")))
    slow = [n for n in names if "slowdown" in n]
    p99 = _first(slow, lambda n: "small" in n, lambda n: n.endswith("p99")) or _first(
        slow, lambda n: n.endswith("p99")
    )
    if p99:
        title = "small p99 slowdown" if "small" in p99 else "p99 slowdown"
        out.append(Metric(title, "number", _column(p99)))
    mean = _first(
        slow,
        lambda n: n.endswith("mean"),
        lambda n: not any(c in n for c in ("small", "medium", "large", "packet")),
    )
    if mean:
        out.append(Metric("mean slowdown", "number", _column(mean)))
    if "arrival_goodput_gbps" in names:
        out.append(Metric(ARRIVAL_GOODPUT, "gbps", _column("arrival_goodput_gbps")))
    services = [n for n in names if n.startswith("goodput_gbps_s")]
    if services:
        out.append(Metric("goodput", "gbps", _goodput(services)))
    if "incast_goodput_gbps" in names:
        out.append(Metric("incast goodput", "gbps", _column("incast_goodput_gbps")))
    if "drop_rate" in names:
        out.append(Metric("drop rate", "ratio", _column("drop_rate")))
    for name in ("fct_unfinished", "flows_unfinished"):
        if name in names:
            out.append(Metric("unfinished", "count", _column(name)))
            break
    return out


def _number(value: Any) -> float | None:
    if value is None or isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(number) else number


def _time_unit(values: list[float]) -> tuple[float, str]:
    top = max((abs(v) for v in values), default=0.0)
    if top < 1e-3:
        return 1e6, "us"
    if top < 1.0:
        return 1e3, "ms"
    return 1.0, "s"


def _decimals(values: list[float]) -> int:
    """Three significant digits at the column's largest value."""
    top = max((abs(v) for v in values), default=0.0)
    if top == 0:
        return 0
    digits = math.floor(math.log10(top)) + 1
    return min(6, max(0, 3 - digits))


def _metric_cells(metric: Metric, rows: list[Mapping[str, Any]]) -> tuple[str, list[str]] | None:
    """The header and cells of one metric column, or None when no row has it."""
    values = [_number(metric.read(r)) for r in rows]
    present = [v for v in values if v is not None]
    if not present:
        return None
    if metric.kind == "count":
        if not any(present):
            return None  # nothing unfinished anywhere: not worth a column
        return metric.title, ["-" if v is None else f"{v:,.0f}" for v in values]
    if metric.kind == "ratio":
        cells = ["-" if v is None else "0" if v == 0 else f"{v:.1e}" for v in values]
        return metric.title, cells
    factor, unit = 1.0, ""
    if metric.kind == "time":
        factor, unit = _time_unit(present)
    elif metric.kind == "gbps":
        unit = "Gbps"
    scaled = [None if v is None else v * factor for v in values]
    places = _decimals([v for v in scaled if v is not None])
    cells = ["-" if v is None else f"{v:,.{places}f}" for v in scaled]
    return metric.title + (f" ({unit})" if unit else ""), cells


def _label(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, (dict, list, bool)):
        return json.dumps(value)
    return str(value)


def _follows_case(key: str, points: Sequence[tuple[str, Mapping[str, Any]]]) -> bool:
    """Whether ``key``'s value and the case label each tell the other."""
    pairs = {(str(p.get("case")), json.dumps(p.get(key), default=str)) for _, p in points}
    return len(pairs) == len({c for c, _ in pairs}) == len({v for _, v in pairs})


def points_table(
    points: Sequence[tuple[str, Mapping[str, Any]]],
    index_rows: Mapping[str, Mapping[str, Any]],
    max_rows: int = MAX_ROWS,
    transports: Mapping[str, str] | None = None,
    notes: Sequence[str] = (),
) -> str:
    """One row per point: the keys the points differ in, then the headline
    metrics from the point's index row.

    ``points`` are ``(key, params)`` pairs in the order to show (params:
    the point's grid and case values, ``case`` included when it has one);
    ``index_rows`` maps a point key to its row of the store's index. A
    point with no row, or one whose status is not ``ok``, shows ``-`` and
    its status. Past ``max_rows`` points, one line says how many more.

    ``transports`` maps a point key to the transport it ran
    (:func:`ecnlab.transport.describe`): a column when the points differ in
    it, else one line under the table; ``notes`` are lines added at the end.
    """
    seen: set[str] = set()
    unique = []
    for key, params in points:
        if key not in seen:
            seen.add(key)
            unique.append((key, params))
    if not unique:
        return "  (no points)"
    names: list[str] = []
    for _, params in unique:
        names += [k for k in params if k not in names]
    varied = [k for k in names if len({json.dumps(p.get(k), default=str) for _, p in unique}) > 1]
    if "case" in varied:  # a key the case label already tells is left out
        varied = [k for k in varied if k == "case" or not _follows_case(k, unique)]
    shown = unique[:max_rows]
    rows = [index_rows.get(key) or {} for key, _ in shown]
    ok_rows = [r if r.get("status") == "ok" else {} for r in rows]
    every: list[str] = []
    for r in ok_rows:
        every += [c for c in r if c not in every]
    header: list[str] = list(varied) or ["point"]
    cells: list[list[str]] = [
        [_label(params.get(k)) for k in varied] or [key] for key, params in shown
    ]
    told = {transports.get(key, "-") for key, _ in unique} if transports else set()
    if len(told) > 1 and transports:
        header.append("transport")
        for row_cells, (key, _) in zip(cells, shown):
            row_cells.append(transports.get(key, "-"))
    numeric = [False] * len(header)
    metrics = headline_metrics(every)
    if all(_number(r.get("arrival_goodput_gbps")) is not None for r in ok_rows if r):
        # Every point has a workload: its whole-run goodput averages in the
        # drain after the last arrival, and would read as saturation.
        metrics = [m for m in metrics if m.title != "goodput"]
    for metric in metrics:
        column = _metric_cells(metric, ok_rows)
        if column is None:
            continue
        header.append(column[0])
        numeric.append(True)
        for row_cells, cell in zip(cells, column[1]):
            row_cells.append(cell)
    statuses = ["" if r.get("status") == "ok" else str(r.get("status") or "not run") for r in rows]
    if any(statuses):
        header.append("status")
        numeric.append(False)
        for row_cells, status in zip(cells, statuses):
            row_cells.append(status or "ok")
    text = format_table(header, cells, numeric)
    if len(told) == 1:
        text += f"\n  transport: {told.pop()} (every point)"
    if any(h.startswith(ARRIVAL_GOODPUT) for h in header):
        text += (
            f"\n  {ARRIVAL_GOODPUT}: payload delivered in order from warm-up to the last flow's "
            "arrival (not the drain after it), all hosts and services"
        )
    if any(h.startswith("goodput (") for h in header):
        text += "\n  goodput: payload delivered in order after warm-up, all hosts and services"
    if len(unique) > max_rows:
        text += f"\n  ... and {len(unique) - max_rows} more points"
    for note in notes:
        text += f"\n  {note}"
    return text
