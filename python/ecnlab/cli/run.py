"""``ecnlab run``, ``ecnlab demo`` and ``ecnlab fct``: one experiment run,
MQ-ECN's motivating example run under three schemes, and the FCT
statistics of a finished run."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from ..errors import RunInterrupted
from ..fct import (
    DEFAULT_MSS,
    estimates_title,
    fct_estimates,
    fct_stats,
    format_estimates,
    mss_from_config,
    normalize,
)
from ..quantiles import DEFAULT_RESAMPLES
from ..runner import Result, run
from ..slowdown import has_slowdown, slowdown_stats
from .common import EXIT_OK, InputError, Stopped, add_set, add_unset, non_negative_int
from .formatting import format_fct, format_run_line, format_summary

__all__ = ["add_commands"]


def add_commands(commands: Any) -> None:
    """Register ``ecnlab run``, ``ecnlab demo`` and ``ecnlab fct``."""
    p_run = commands.add_parser(
        "run",
        help="run one experiment file",
        description="Run one TOML experiment and write its Parquet tables and summary.json.",
    )
    p_run.add_argument("config", metavar="CONFIG", help="experiment TOML file")
    p_run.add_argument(
        "--out",
        metavar="DIR",
        type=Path,
        help="output directory (default: results/<config stem>)",
    )
    add_set(p_run)
    add_unset(p_run)
    p_run.add_argument(
        "--threads",
        metavar="N",
        type=non_negative_int,
        default=None,
        help="run on N threads (run.threads): the partitioned engine, whose outputs are the "
        "sequential engine's for every N; 0 is the sequential engine (default: the file's, else 0)",
    )
    p_run.add_argument("--quiet", "-q", action="store_true", help="print nothing on success")
    p_run.set_defaults(handler=_cmd_run)

    p_demo = commands.add_parser(
        "demo",
        help="run MQ-ECN's motivating example under three marking schemes",
        description=(
            "Run 1 flow vs 4 flows on a 2-queue DWRR port with per-port ECN, per-queue "
            "ECN and MQ-ECN; write each run and a figure."
        ),
    )
    p_demo.add_argument(
        "--out",
        metavar="DIR",
        type=Path,
        default=None,
        help="output directory (default: results/demo)",
    )
    p_demo.add_argument(
        "--duration", metavar="T", help="simulated time per run, e.g. 0.2s (warm-up = T/5)"
    )
    add_set(p_demo)
    p_demo.add_argument("--quiet", "-q", action="store_true", help="print nothing on success")
    p_demo.set_defaults(handler=_cmd_demo)

    p_fct = commands.add_parser(
        "fct",
        help="flow-completion-time statistics of a finished run",
        description=(
            "Print FCT statistics of the sized flows in OUT_DIR/flows.parquet: means by "
            "size class (small <= 100 KB < medium <= 10 MB < large), small-flow tail "
            "percentiles, timeouts and unfinished flows. Unfinished flows are left out of "
            "the means. With --baseline, also the baseline run's values and ours / baseline. "
            "Then each percentile (and the slowdown, when the run has one) by size class with "
            "the flows it rests on, how many lie above it and a 95% bootstrap interval; a "
            "percentile with fewer than 10 flows above it is marked '!' (see docs/statistics.md)."
        ),
    )
    p_fct.add_argument("out_dir", metavar="OUT_DIR", type=Path, help="a run's output directory")
    p_fct.add_argument(
        "--baseline",
        metavar="OTHER_OUT_DIR",
        type=Path,
        help="another run's output directory to normalise by",
    )
    p_fct.add_argument("--json", action="store_true", help="print the statistics as JSON")
    p_fct.add_argument(
        "--resamples",
        type=non_negative_int,
        default=DEFAULT_RESAMPLES,
        help=f"bootstrap replicates per interval (default {DEFAULT_RESAMPLES}; 0: no intervals)",
    )
    p_fct.add_argument(
        "--seed", type=non_negative_int, default=0, help="the bootstrap's seed (default 0)"
    )
    p_fct.set_defaults(handler=_cmd_fct)


def _cmd_run(args: argparse.Namespace) -> int:
    config = Path(args.config)
    out = args.out if args.out is not None else Path("results") / config.stem
    overrides = list(args.overrides)
    if args.threads is not None:
        overrides.append(f"run.threads={args.threads}")
    try:
        result = run(
            config,
            out=out,
            overrides=overrides,
            progress=False if args.quiet else None,
            unset=args.unsets,
        )
    except KeyboardInterrupt as exc:
        if isinstance(exc, RunInterrupted):
            raise
        raise Stopped(f"interrupted; no files written to {out}") from None
    if not args.quiet:
        print(format_summary(result, title=str(config)))
    else:
        for w in result.summary.get("warnings") or []:
            print(f"ecnlab run: warning: {w}", file=sys.stderr)
    return EXIT_OK


def _cmd_demo(args: argparse.Namespace) -> int:
    from ..demo import DEFAULT_OUT, run_demo  # matplotlib is only needed here

    def report(scheme: str, result: Result) -> None:
        if not args.quiet:
            print(f"{scheme:>10}: {format_run_line(result.summary)}", flush=True)

    outcome = run_demo(
        out=args.out if args.out is not None else DEFAULT_OUT,
        duration=args.duration,
        overrides=args.overrides,
        progress=False if args.quiet else None,
        on_run=report,
    )
    if not args.quiet:
        print()
        print(outcome.table())
        print()
        print(f"runs in {outcome.out}/<scheme>/, figure {outcome.figure}")
    return EXIT_OK


def _cmd_fct(args: argparse.Namespace) -> int:
    ours, ours_flows = _run_fct(args.out_dir)
    baseline, base_flows = _run_fct(args.baseline) if args.baseline is not None else (None, None)
    runs = [(args.out_dir, ours_flows)]
    if baseline is not None:
        runs.append((args.baseline, base_flows))
    estimates = [fct_estimates(f, resamples=args.resamples, seed=args.seed) for _, f in runs]
    if args.json:
        document: dict[str, Any] = {"dir": str(args.out_dir), "fct": ours}
        document["estimates"] = [e.as_dict() for e in estimates[0]]
        if baseline is not None:
            document["baseline"] = {"dir": str(args.baseline), "fct": baseline}
            document["baseline"]["estimates"] = [e.as_dict() for e in estimates[1]]
            document["normalized"] = normalize(ours, baseline)
        print(json.dumps(document, indent=2, allow_nan=False))
    else:
        title = f"FCT of sized flows in {args.out_dir}"
        if baseline is not None:
            title += f" (baseline {args.baseline})"
        print(format_fct(ours, baseline, title=title))
        for (directory, _), rows in zip(runs, estimates):
            print()
            print(format_estimates(rows, title=estimates_title(directory, args.resamples)))
    return EXIT_OK


def _run_fct(directory: Path) -> tuple[dict[str, Any], pa.Table]:
    """FCT statistics of the run in ``directory`` and its flows table, or :class:`InputError`."""
    if not directory.exists():
        raise InputError(f"{directory}: no such directory")
    if not directory.is_dir():
        raise InputError(f"{directory}: not a directory")
    flows_path = directory / "flows.parquet"
    if not flows_path.is_file():
        raise InputError(f"{flows_path}: no such file (not a run directory?)")
    try:
        flows = pq.read_table(flows_path)
    except (pa.ArrowInvalid, ValueError) as exc:
        raise InputError(f"{flows_path}: cannot read ({exc})") from exc
    try:
        stats: dict[str, Any] = fct_stats(flows, mss=_run_mss(directory))
    except ValueError as exc:
        raise InputError(f"{flows_path}: {exc}") from exc
    if has_slowdown(flows):
        # FCT over ideal FCT, so that --baseline normalises it too.
        slowdown = slowdown_stats(flows)
        stats.update({f"slowdown_{k}": v for k, v in slowdown.items() if k != "flows"})
    # The drop rate (ML-ECN §IV-D) is the run's, from its summary.
    try:
        summary = json.loads((directory / "summary.json").read_text(encoding="utf-8"))
        stats["drop_rate"] = summary.get("drop_rate")
    except (OSError, ValueError, AttributeError):
        stats["drop_rate"] = None
    return stats, flows


def _run_mss(directory: Path) -> int:
    """The MSS in the run's config.json, or the engine's default when unknown."""
    try:
        config = json.loads((directory / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return DEFAULT_MSS
    return mss_from_config(config)
