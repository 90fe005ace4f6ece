"""How the ``ecnlab`` command line shows runs, FCT statistics and stores."""

from __future__ import annotations

import json
import math
from typing import Any

import pyarrow as pa

from .fct import normalize
from .results import Result
from .store import Store

__all__ = ["format_fct", "format_store", "format_summary"]


def _number(value: Any, digits: int = 0) -> str:
    if value is None:
        return "-"
    try:
        number = float(value)
    except (TypeError, ValueError):
        return str(value)
    if math.isnan(number):
        return "-"
    return f"{number:,.{digits}f}"


def _run_line(summary: dict[str, Any]) -> str:
    events = _number(summary.get("events"))
    wall = _number(summary.get("wall_seconds"), 2)
    rate = summary.get("events_per_second")
    rate_text = "-" if rate is None else f"{float(rate) / 1e6:.2f} M"
    return f"{events} events in {wall} s wall ({rate_text} events/s)"


_FCT_ROWS: tuple[tuple[str, str, bool | str], ...] = (
    # (label, key in fct_stats (drop_rate: from summary.json), is a time;
    # "rate": bits/s; "ratio": a fraction)
    ("overall mean", "overall_mean", True),
    ("small mean", "small_mean", True),
    ("small p99", "small_p99", True),
    ("small p99.9", "small_p999", True),
    ("medium mean", "medium_mean", True),
    ("large mean", "large_mean", True),
    ("1-packet mean", "one_packet_mean", True),
    ("overall throughput", "overall_tput", "rate"),
    ("mean throughput", "mean_tput", "rate"),
    ("small throughput", "small_tput", "rate"),
    ("medium throughput", "medium_tput", "rate"),
    ("large throughput", "large_tput", "rate"),
    ("small CE marks", "small_marks", False),
    ("medium CE marks", "medium_marks", False),
    ("large CE marks", "large_marks", False),
    ("drop rate", "drop_rate", "ratio"),
    ("timeouts", "timeouts", False),
    ("flows", "flows", False),
    ("unfinished", "unfinished", False),
)


def _duration(seconds: Any) -> str:
    """A time in seconds as microseconds below 1 ms, else as milliseconds."""
    if seconds is None or math.isnan(float(seconds)):
        return "-"
    value = float(seconds)
    if abs(value) < 1e-3:
        return f"{value * 1e6:,.1f} us"
    return f"{value * 1e3:,.3f} ms"


def _rate(bps: Any) -> str:
    if bps is None or math.isnan(float(bps)):
        return "-"
    return f"{float(bps) / 1e9:,.3f} Gbps"


def _ratio(value: Any) -> str:
    if value is None or math.isnan(float(value)):
        return "-"
    return f"{float(value):.2e}"


def format_fct(
    stats: dict[str, Any], baseline: dict[str, Any] | None = None, title: str | None = None
) -> str:
    """A table of :func:`ecnlab.fct.fct_stats` values, one metric a row.

    With ``baseline``, two more columns: the baseline's value and
    ``normalized`` = ours / baseline (``-`` where undefined).
    """
    header = ["metric", "value"]
    if baseline is not None:
        header = ["metric", "ours", "baseline", "normalized"]
        ratios = normalize(stats, baseline)
    rows = [header]
    for label, key, kind in _FCT_ROWS:
        show = {"rate": _rate, "ratio": _ratio}.get(kind, _duration) if kind else _number
        row = [label, show(stats.get(key))]
        if baseline is not None:
            ratio = ratios.get(key)
            row += [show(baseline.get(key)), "-" if ratio is None else f"{ratio:.3f}"]
        rows.append(row)
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = [title] if title else []
    for row in rows:
        cells = [row[0].ljust(widths[0])]
        cells += [cell.rjust(width) for cell, width in zip(row[1:], widths[1:])]
        lines.append("  " + "   ".join(cells).rstrip())
    return "\n".join(lines)


def format_summary(result: Result, title: str | None = None) -> str:
    """A few lines describing a run, for the terminal."""
    summary = result.summary
    goodput = result.goodput_by_service
    goodput_text = (
        ", ".join(f"service {s}: {g:.3f} Gbps" for s, g in goodput.items()) if goodput else "-"
    )
    rows = [
        ("events", _run_line(summary)),
        ("simulated", f"{_number(summary.get('sim_seconds'), 3)} s"),
        ("goodput", goodput_text),
    ]
    incast = summary.get("incast_goodput_gbps")
    if incast is not None:
        rows.append(("incast", f"{_number(incast, 3)} Gbps"))
    rows += [
        ("CE marks", _number(summary.get("ce_marks"))),
        ("drops", _number(summary.get("packets_dropped"))),
    ]
    unfinished = summary.get("flows_unfinished") or 0
    if summary.get("ended_by") == "duration" and unfinished:
        rows.append(
            (
                "unfinished",
                f"{_number(unfinished)} sized flows: run.duration was reached first; "
                "FCT statistics leave them out (drop run.duration to run until all finish)",
            )
        )
    if result.out is not None:
        rows.append(("written to", str(result.out)))
    lines = [title] if title else []
    lines += [f"  {name:<11}{text}" for name, text in rows]
    return "\n".join(lines)


def format_store(store: Store, index: pa.Table) -> str:
    """What ``ecnlab store`` prints: counts, parameters, failures, tables."""
    rows = index.to_pylist()
    ok = [r for r in rows if r["status"] == "ok"]
    failed = [r for r in rows if r["status"] != "ok"]
    lines = [f"store {store.path}: {len(ok)} points, {len(failed)} failed"]
    engines = sorted({r["engine"] for r in ok if r["engine"]})
    if engines:
        lines.append(f"  engine     {', '.join(engines)}")
    sweeps = sorted({r["sweep"] for r in rows if r["sweep"]})
    if sweeps:
        lines.append(f"  sweeps     {', '.join(sweeps)}")
    cases = sorted({r["case"] for r in rows if r["case"]})
    if cases:
        lines.append(f"  cases      {', '.join(cases)}")
    # Parameters: the columns between the fixed ones and the results.
    names = index.column_names
    params = [n for n in names if "." in n]
    for name in params:
        values = sorted({json.dumps(r[name]) for r in rows if r.get(name) is not None})
        lines.append(f"  {name}: {', '.join(values)}")
    if ok:
        wall = sum(float(r["wall_seconds"] or 0) for r in ok)
        lines.append(f"  run time   {wall:,.1f} s in all ({wall / len(ok):,.2f} s a point)")
        tables = sorted(p.stem for p in store.point_dir(ok[0]["key"]).glob("*.parquet"))
        lines.append(f"  tables     {', '.join(tables)} (per point, under points/key=<key>/)")
    for r in failed[:10]:
        lines.append(f"  failed {r['key']}: {r['error']}")
    lines.append(f"  index      {store.path / 'points.parquet'}")
    return "\n".join(lines)
