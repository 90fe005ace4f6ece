"""``ecnlab sweep``, ``ecnlab store`` and ``ecnlab plot``: a grid of runs into
a result store, what a store holds, and one of its metrics drawn against
one of its keys (:mod:`ecnlab.sweep`)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..sweep.plot import SIZES, plot_store
from ..sweep.store import Store
from .common import EXIT_FAILURE, EXIT_OK, InputError, add_set, add_unset, add_workers
from .formatting import format_store

__all__ = ["add_commands"]


def add_commands(commands: Any) -> None:
    """Register ``ecnlab sweep``, ``ecnlab store`` and ``ecnlab plot``."""
    p_sweep = commands.add_parser(
        "sweep",
        help="run a grid of experiments into a resumable result store",
        description=(
            "Run every point of SWEEP (a base experiment crossed with a grid and cases) that "
            "is not yet in STORE, on local processes or a Dask cluster. Finished points are "
            "kept across interruptions; rerunning runs only what is missing. Exit status 1 "
            "when some points failed (each is recorded with its error)."
        ),
    )
    p_sweep.add_argument("sweep", metavar="SWEEP", help="sweep TOML file")
    p_sweep.add_argument("--out", metavar="STORE", type=Path, required=True, help="result store")
    add_workers(p_sweep)
    p_sweep.add_argument("--quick", action="store_true", help="apply the sweep's [quick] table")
    add_set(p_sweep)
    add_unset(p_sweep)
    p_sweep.add_argument("--quiet", "-q", action="store_true", help="no progress bar or summary")
    p_sweep.set_defaults(handler=_cmd_sweep)

    p_store = commands.add_parser(
        "store",
        help="show what a result store holds",
        description="Print the points of a sweep store: counts, parameters, failures, tables.",
    )
    p_store.add_argument("store", metavar="STORE", type=Path, help="result store directory")
    p_store.add_argument("--json", action="store_true", help="print the index as JSON rows")
    p_store.set_defaults(handler=_cmd_store)

    _add_plot(commands)


def _cmd_sweep(args: argparse.Namespace) -> int:
    from ..sweep import load_sweep, run_sweep

    spec = load_sweep(args.sweep)
    if args.quick:
        spec = spec.quick()
    report = run_sweep(
        spec,
        args.out,
        workers=args.workers,
        scheduler=args.scheduler,
        overrides=args.overrides,
        progress=False if args.quiet else None,
        unset=args.unsets,
    )
    if not args.quiet:
        print(f"{spec.name}: {report.line()}; store {report.store}")
        if report.points:
            print(_sweep_table(report.store, report.points))
    for rec in report.failed[:10]:
        params = ", ".join(f"{k}={v}" for k, v in rec.params.items())
        where = f"{rec.case}: " if rec.case else ""
        print(f"  failed {rec.key} ({where}{params}): {rec.error}", file=sys.stderr)
    if len(report.failed) > 10:
        print(f"  ... and {len(report.failed) - 10} more failed points", file=sys.stderr)
    return EXIT_OK if report.ok else EXIT_FAILURE


def _sweep_table(store: Path, points: Sequence[Any]) -> str:
    """The sweep's points, what they vary and their headline metrics."""
    from ..arrivals import arrival_goodput_in
    from ..table import MAX_ROWS, points_table
    from ..transport import describe, kept_over_profile, profile_warning

    st = Store(store, create=False)
    rows = {r["key"]: r for r in st.index().to_pylist()}
    # The goodput over a workload's arrival window, from the points' tables
    # (the rows the table shows).
    for key in list(dict.fromkeys(p.key for p in points))[:MAX_ROWS]:
        if rows.get(key, {}).get("status") == "ok":
            window = arrival_goodput_in(st.point_dir(key))
            if window is not None:
                rows[key] = {**rows[key], **window}
    transports: dict[str, str] = {}
    kept: list[str] = []
    for p in points:
        if not p.resolved or p.key in transports:
            continue
        resolved = json.loads(p.resolved)
        transports[p.key] = describe(resolved, keys=False)
        if kept_over_profile(resolved):
            kept.append(p.key)
    notes = []
    if kept:
        first = next(p for p in points if p.key == kept[0])
        points_word = "point" if len(kept) == 1 else "points"
        notes.append(
            f"warning: in {len(kept)} {points_word}, "
            + str(profile_warning(json.loads(first.resolved)))
        )
    return points_table(
        [(p.key, {**({"case": p.case} if p.case else {}), **p.params}) for p in points],
        rows,
        transports=transports,
        notes=notes,
    )


def _cmd_store(args: argparse.Namespace) -> int:
    if not args.store.exists():
        raise InputError(f"{args.store}: no such store")
    store = Store(args.store, create=False)
    index = store.index()
    if args.json:
        print(json.dumps(index.to_pylist(), indent=2, default=str))
        return EXIT_OK
    print(format_store(store, index))
    return EXIT_OK


def _add_plot(commands: Any) -> None:
    p = commands.add_parser(
        "plot",
        help="draw a metric of a sweep store against one of its keys (PNG, PDF or SVG)",
        description=(
            "Draw metric Y of every finished point of STORE against key X, one line per value "
            "of --series, averaged over the other keys that vary (seeds), with 95% intervals of "
            "the mean as error bars; write a PNG, PDF or SVG sized for a paper. Keys are "
            "the store's grid keys (e.g. workload.load, switch.marking, or case); metrics are "
            "its index columns (e.g. fct_overall_mean, fct_small_p99, goodput_gbps_s0). "
            "`ecnlab store STORE` lists the keys; a metric it does not have is answered with "
            "the list of those it has."
        ),
    )
    p.add_argument("store", metavar="STORE", type=Path, help="a sweep's result store")
    p.add_argument("--x", required=True, metavar="KEY", help="the key along the x axis")
    p.add_argument("--y", required=True, metavar="METRIC", help="the metric on the y axis")
    p.add_argument("--series", metavar="KEY", help="one line per value of this key")
    p.add_argument(
        "--where",
        metavar="KEY=VALUE",
        nargs="+",
        action="extend",
        default=[],
        help="keep only the points with this value (repeatable)",
    )
    p.add_argument(
        "--normalize",
        metavar="SERIES",
        help="divide each line by this one (a value of --series) at the same x",
    )
    p.add_argument(
        "--out",
        metavar="FILE",
        type=Path,
        help="the file to write (default STORE/plots/<metric>-by-<key>[-per-<key>].<format>)",
    )
    p.add_argument("--title", help='the figure\'s title (default: what was averaged; "" for none)')
    p.add_argument("--xlabel", help="the x axis label (default: from the key's declaration)")
    p.add_argument("--ylabel", help="the y axis label (default: the metric, spelled out)")
    p.add_argument(
        "--format",
        choices=["png", "pdf", "svg"],
        help="file format (default: --out's suffix, else png)",
    )
    p.add_argument(
        "--size",
        choices=list(SIZES),
        default="double",
        help="column: 3.5 in wide (one column of a two-column paper); double: 7 in "
        "(default double)",
    )
    p.set_defaults(handler=_cmd_plot)


def _cmd_plot(args: argparse.Namespace) -> int:
    plot = plot_store(
        args.store,
        args.x,
        args.y,
        series=args.series,
        where=args.where,
        normalize=args.normalize,
        out=args.out,
        title=args.title,
        xlabel=args.xlabel,
        ylabel=args.ylabel,
        format=args.format,
        size=args.size,
    )
    lines = len(plot.series)
    points = f"{plot.points} point" + ("" if plot.points == 1 else "s")
    text = f"wrote {plot.path}: {plot.y} against {plot.x}, {points}"
    if plot.series_key is not None:
        text += f", {lines} lines ({plot.series_key})"
    if plot.averaged:
        text += "; mean over " + ", ".join(sorted(plot.averaged))
    print(text)
    return 0
