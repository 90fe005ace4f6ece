"""How the ``ecnlab`` command line shows runs, FCT statistics and stores."""

from __future__ import annotations

import json
import math
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from ..fct import fct_stats, has_sized_flows, mss_from_config, normalize
from ..runner import Result
from ..sweep.store import Store
from ..table import format_table

__all__ = ["format_fct", "format_number", "format_run_line", "format_store", "format_summary"]


def format_number(value: Any, digits: int = 0) -> str:
    """A number with thousands separators and ``digits`` decimals; ``-`` for
    none or NaN, and anything that is not a number as it is."""
    if value is None:
        return "-"
    try:
        number = float(value)
    except (TypeError, ValueError):
        return str(value)
    if math.isnan(number):
        return "-"
    return f"{number:,.{digits}f}"


def format_run_line(summary: dict[str, Any]) -> str:
    """One line of a run's summary: events, wall time and event rate."""
    events = format_number(summary.get("events"))
    wall = format_number(summary.get("wall_seconds"), 2)
    rate = summary.get("events_per_second")
    rate_text = "-" if rate is None else f"{float(rate) / 1e6:.2f} M"
    return f"{events} events in {wall} s wall ({rate_text} events/s)"


_FCT_ROWS: tuple[tuple[str, str, bool | str], ...] = (
    # (label, key in fct_stats (drop_rate: from summary.json; slowdown_*:
    # slowdown_stats), is a time; "rate": bits/s; "ratio": a fraction;
    # "slowdown": FCT over ideal FCT)
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
    ("slowdown mean", "slowdown_overall_mean", "slowdown"),
    ("slowdown p99", "slowdown_overall_p99", "slowdown"),
    ("small slowdown mean", "slowdown_small_mean", "slowdown"),
    ("small slowdown p99", "slowdown_small_p99", "slowdown"),
    ("medium slowdown mean", "slowdown_medium_mean", "slowdown"),
    ("large slowdown mean", "slowdown_large_mean", "slowdown"),
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


def _times(value: Any) -> str:
    if value is None or math.isnan(float(value)):
        return "-"
    return f"{float(value):,.2f}"


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
        if kind == "slowdown" and key not in stats:
            continue  # a run made before the flows table had slowdown
        show = (
            {"rate": _rate, "ratio": _ratio, "slowdown": _times}.get(kind, _duration)
            if kind
            else format_number
        )
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
    """A few lines describing a run, for the terminal: events, goodput by
    service (over all hosts and per sending host), the FCT summary when the
    run has sized flows, marks, drops, and any warnings."""
    summary = result.summary
    rows: list[tuple[str, str]] = [
        ("events", format_run_line(summary)),
        ("simulated", f"{format_number(summary.get('sim_seconds'), 3)} s"),
    ]
    if result.config:
        from ..transport import describe

        rows += _wrapped("transport", describe(result.config))
    rows += _goodput_rows(result)
    incast = summary.get("incast_goodput_gbps")
    if incast is not None:
        rows.append(("incast", f"{format_number(incast, 3)} Gbps a round (mean over rounds)"))
    rows += _fct_rows(result)
    rows += [
        ("CE marks", format_number(summary.get("ce_marks"))),
        ("drops", format_number(summary.get("packets_dropped"))),
    ]
    unfinished = summary.get("flows_unfinished") or 0
    if summary.get("ended_by") == "duration" and unfinished:
        rows.append(
            (
                "unfinished",
                f"{format_number(unfinished)} sized flows: run.duration was reached first; "
                "FCT statistics leave them out (drop run.duration to run until all finish)",
            )
        )
    # Settings that cannot act in this network (the engine's warnings.rs),
    # and a profile's value a key of the file beat (transport.py).
    for warning in summary.get("warnings") or []:
        rows += _wrapped("warning", str(warning))
    if result.out is not None:
        rows.append(("written to", str(result.out)))
    lines = [title] if title else []
    lines += [f"  {name:<11}{text}".rstrip() for name, text in rows]
    return "\n".join(lines)


def _wrapped(name: str, text: str, width: int = 86) -> list[tuple[str, str]]:
    """A row whose text continues on unnamed rows, ``width`` characters each."""
    import textwrap

    parts = textwrap.wrap(text, width=width, break_on_hyphens=False) or [""]
    return [(name, parts[0])] + [("", part) for part in parts[1:]]


def _slowdown_rows(stats: Any) -> list[tuple[str, str]]:
    """The slowdown (FCT over the flow's ideal FCT) of the sized flows:
    overall, then by size class, as ``summary["slowdown"]`` holds it."""
    if not isinstance(stats, dict) or not stats.get("flows"):
        return []

    def of(cls: str, stats_of: tuple[str, ...]) -> str:
        values = [(s, stats.get(f"{cls}_{s}")) for s in stats_of]
        return ", ".join(f"{s} {float(v):,.2f}" for s, v in values if isinstance(v, (int, float)))

    parts = [of("overall", ("mean", "p50", "p99"))]
    for cls, stats_of in (
        ("small", ("mean", "p50", "p99")),
        ("medium", ("mean", "p99")),
        ("large", ("mean",)),
    ):
        text = of(cls, stats_of)
        if text:
            parts.append(f"{cls} {text}")
    return [
        ("", f"slowdown (FCT / FCT alone in the empty network): {parts[0]}"),
        ("", "  " + "; ".join(parts[1:])),
    ]


def _senders(result: Result) -> tuple[dict[int, int], int] | None:
    """Hosts that send each service's flows, and all services', from the
    flows table; None without one."""
    try:
        flows = result.table("flows")
    except KeyError:
        return None
    if not {"src", "service"} <= set(flows.column_names):
        return None
    counts = flows.group_by("service").aggregate([("src", "count_distinct")]).to_pylist()
    per = {int(r["service"]): int(r["src_count_distinct"]) for r in counts}
    return per, int(pc.count_distinct(flows.column("src")).as_py())


def _goodput_rows(result: Result) -> list[tuple[str, str]]:
    """Goodput per service as the engine's summary gives it, labelled: the
    in-order payload bytes of the service's flows delivered after warm-up,
    summed over all hosts, over the time from warm-up to the run's end;
    then the same divided among the hosts that send the service."""
    goodput = result.goodput_by_service
    if not goodput:
        return [("goodput", "-")]
    senders = _senders(result)
    header = ["service", "all hosts"]
    if senders is not None:
        header += ["a sending host", "sending hosts"]
    table: list[list[str]] = []

    def row(label: str, gbps: float, hosts: int | None) -> list[str]:
        cells = [label, f"{gbps:,.3f}"]
        if senders is not None:
            cells += ["-", "0"] if not hosts else [f"{gbps / hosts:,.3f}", str(hosts)]
        return cells

    for service, gbps in goodput.items():
        table.append(row(str(service), gbps, senders[0].get(service) if senders else None))
    if len(goodput) > 1:
        table.append(row("total", sum(goodput.values()), senders[1] if senders else None))
    text = format_table(header, table, [False] + [True] * (len(header) - 1))
    lines = text.splitlines()
    out = [("goodput", "in-order payload delivered after warm-up, mean rate in Gbps")]
    out += [("", line[2:]) for line in lines]
    window = _arrivals(result)
    if window is not None:
        text = (
            f"{window['arrival_goodput_gbps']:,.3f} Gbps in all over the arrival window, "
            f"{format_number(window['arrival_window_from'], 3)} s (warm-up end) to "
            f"{format_number(window['arrival_window_to'], 3)} s (the last arrival); the run went "
            f"on to {format_number(result.summary.get('sim_seconds'), 3)} s to drain, which the "
            "means above take in"
        )
        out += _wrapped("", text)
    return out


def _arrivals(result: Result) -> dict[str, float] | None:
    """Goodput over a workload's arrival window (:mod:`ecnlab.arrivals`)."""
    from ..arrivals import arrival_goodput, has_workload

    if not has_workload(result.config):
        return None
    try:
        goodput, flows = result.table("goodput"), result.table("flows")
    except KeyError:
        return None
    return arrival_goodput(goodput, flows, result.config)


def _count(n: Any, noun: str) -> str:
    """'1 flow', '2 flows', '- flows' (unknown)."""
    return f"{format_number(n)} {noun}" + ("" if n == 1 else "s")


def _fct_rows(result: Result) -> list[tuple[str, str]]:
    """The FCT summary of the sized flows (nothing when the run has none)."""
    stats = result.summary.get("fct")
    if not isinstance(stats, dict):
        try:
            flows = result.table("flows")
        except KeyError:
            return []
        try:
            if not has_sized_flows(flows):
                return []
            stats = fct_stats(flows, mss=mss_from_config(result.config))
        except ValueError:
            return []
    head = (
        f"{_count(stats.get('flows'), 'sized flow')}, {format_number(stats.get('unfinished'))} "
        f"unfinished, {_count(stats.get('timeouts'), 'timeout')}; "
        f"mean {_duration(stats.get('overall_mean'))}"
    )
    rows = [("FCT", head)]
    classes = (
        (
            "small",
            "<= 100 KB",
            ("mean", "small_mean"),
            ("p99", "small_p99"),
            ("p99.9", "small_p999"),
        ),
        ("medium", "100 KB - 10 MB", ("mean", "medium_mean")),
        ("large", "> 10 MB", ("mean", "large_mean")),
    )
    for name, sizes, *stats_of in classes:
        count = stats.get(f"{name}_flows")
        if not count:
            continue
        values = ", ".join(f"{label} {_duration(stats.get(key))}" for label, key in stats_of)
        rows.append(("", f"{name} ({sizes}, {_count(count, 'flow')}): {values}"))
    rows += _slowdown_rows(result.summary.get("slowdown"))
    if result.out is not None:
        rows.append(("", f"(`ecnlab fct {result.out}` for every statistic)"))
    return rows


def format_store(store: Store, index: pa.Table) -> str:
    """What ``ecnlab store`` prints: counts, parameters, failures, tables."""
    rows = index.to_pylist()
    ok = [r for r in rows if r["status"] == "ok"]
    failed = [r for r in rows if r["status"] != "ok"]
    lines = [f"store {store.path}: {_count(len(ok), 'point')}, {len(failed)} failed"]
    engines = sorted({r["engine"] for r in ok if r["engine"]})
    if engines:
        lines.append(f"  engine     {', '.join(engines)}")
    # Which builds made the runs (a record draws on one build only).
    builds: dict[str, int] = {}
    for r in ok:
        name = r.get("build") or "unknown (stored before builds were recorded)"
        builds[name] = builds.get(name, 0) + 1
    if builds:
        lines.append("  builds     " + "; ".join(f"{b}: {n}" for b, n in sorted(builds.items())))
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
