"""The ``ecnlab`` command line.

Errors a user can fix (bad config, missing file, bad argument) print one line
``ecnlab: error: ...`` to stderr and exit with status 2; an unavailable engine
or an output error exits 1; Ctrl-C (or SIGTERM) exits 130 with one line that
says whether the run's files were written (readable, marked incomplete) or not.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from .cli_base import (
    EXIT_FAILURE,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    PROG,
    InputError,
    Parser,
    Stopped,
    UsageError,
    add_set,
    add_unset,
    add_workers,
    fail,
    non_negative_int,
    os_error_text,
    positive_int,
)
from .cli_format import _number, _run_line, format_fct, format_store, format_summary
from .errors import ConfigError, EngineNotBuiltError, RunInterrupted
from .fct import (
    DEFAULT_MSS,
    estimates_title,
    fct_estimates,
    fct_stats,
    format_estimates,
    mss_from_config,
    normalize,
)
from .quantiles import DEFAULT_RESAMPLES
from .runner import engine_version, run
from .runner.result import Result
from .slowdown import has_slowdown, slowdown_stats
from .sweep.plot import PlotError
from .sweep.pool import SchedulerError
from .sweep.store import Store, StoreError

__all__ = ["build_parser", "format_fct", "format_store", "format_summary", "main"]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser for ``ecnlab`` and its subcommands."""
    parser = Parser(
        prog=PROG,
        description="Packet-level simulator for ECN marking in multi-queue switches.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

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
        "same for every N; 0 is the sequential engine (default: the file's, else 0)",
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

    from .cli_testbed import add_command as add_testbed

    add_testbed(commands)

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

    from .sweep.plot import add_command as add_plot

    add_plot(commands)

    from .cli_reproduce import add_command as add_reproduce

    add_reproduce(commands)

    p_adv = commands.add_parser(
        "advise",
        help="marking thresholds and buffer sizes the papers derive, with their equations",
        description=(
            "Print C×RTT, DCTCP's K, ECN*'s threshold bounds (Tuning ECN Eq. 1, 4, 5), dequeue "
            "marking's buffer bound (§4.2), the per-queue minimum threshold (MQ-ECN Eq. 2) and "
            "the buffer pressure of N queues each at K; then one switch.threshold per marking "
            "scheme (K rounded up to whole packets) with the --set flags that run it, flagged "
            "impractical where it holds a queue under 3 packets; and PIE's and DualPI2's "
            "settings scaled to the RTT (their recipes), with whether the buffer holds them."
        ),
    )
    p_adv.add_argument("--rate", required=True, help="bottleneck rate, e.g. 10Gbps")
    p_adv.add_argument("--rtt", required=True, help="round-trip time, e.g. 100us")
    p_adv.add_argument("--buffer", help="per-port buffer, e.g. 300KB or 200pkt")
    p_adv.add_argument("--queues", type=positive_int, default=1, help="queues per port")
    p_adv.add_argument(
        "--weights", help="queue weights, comma separated (default equal), e.g. 1,2,3"
    )
    p_adv.add_argument("--cc", default="dctcp", help="dctcp or ecn-star (its λ for the standard K)")
    p_adv.add_argument("--mtu", type=positive_int, default=1500, help="packet size on the wire")
    p_adv.add_argument(
        "--lso", action="store_true", help="senders batch with LSO: add CEDM's bounds (Cor. 2, 4)"
    )
    p_adv.add_argument(
        "--lso-fraction", type=float, default=1 / 3, help="β, the share of cwnd per LSO segment"
    )
    p_adv.add_argument("--lso-max", default="64KB", help="largest LSO segment L (default 64KB)")
    p_adv.add_argument(
        "--senders", type=positive_int, default=2, help="synchronised senders N (default 2)"
    )
    p_adv.set_defaults(handler=_cmd_advise)

    from .base_rtt import add_command as add_rtt

    add_rtt(commands)

    from .keys import add_command as add_keys

    add_keys(commands)

    from .tutorial_files import add_command as add_tutorial

    add_tutorial(commands)

    p_version = commands.add_parser("version", help="print the package and engine versions")
    p_version.set_defaults(handler=_cmd_version)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``ecnlab`` command; returns the exit status."""
    parser = build_parser()
    try:
        args = parser.parse_args(None if argv is None else list(argv))
    except UsageError as exc:
        return fail(str(exc), EXIT_USAGE)
    except SystemExit as exc:  # --help and friends
        return exc.code if isinstance(exc.code, int) else EXIT_OK
    previous_term = _term_as_interrupt()
    try:
        status: int = args.handler(args)
        return status
    except (ConfigError, InputError, StoreError, SchedulerError, PlotError) as exc:
        return fail(str(exc), EXIT_USAGE)
    except EngineNotBuiltError as exc:
        return fail(str(exc), EXIT_FAILURE)
    except BrokenPipeError:
        # The reader went away (`ecnlab store ... | head`): stop quietly.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    except RunInterrupted as exc:
        print(f"{PROG}: {_interrupted_text(exc.result)}", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Stopped as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return EXIT_INTERRUPTED
    except KeyboardInterrupt as exc:
        detail = f": {exc}" if str(exc) else ""
        print(f"{PROG}: interrupted{detail}", file=sys.stderr)
        return EXIT_INTERRUPTED
    except OSError as exc:
        return fail(os_error_text(exc), EXIT_FAILURE)
    finally:
        if previous_term is not None:
            signal.signal(signal.SIGTERM, previous_term)


def _term_as_interrupt() -> Any:
    """Make SIGTERM stop a run as Ctrl-C does (its files closed, marked
    incomplete); returns the handler it replaced, or None if it did not."""
    try:
        return signal.signal(signal.SIGTERM, _interrupt)
    except ValueError:  # not the main thread
        return None


def _interrupt(signum: int, frame: Any) -> None:
    """SIGTERM: what Ctrl-C does. A run in progress is asked to stop at its
    next report (its files finished), also where SIGINT is ignored (a job
    that a shell without job control starts in the background inherits
    that, and `kill` must still stop it); otherwise the SIGINT handler
    runs, or the interrupt is raised here."""
    from .runner import engine

    active = engine.ACTIVE_RUN
    handler = signal.getsignal(signal.SIGINT)
    if active is not None:
        active.request()
    elif callable(handler):
        handler(signal.SIGINT, frame)
    else:
        raise KeyboardInterrupt


def _interrupted_text(result: Result | None) -> str:
    if result is None or result.out is None:
        return "interrupted"
    sim = _number(result.summary.get("sim_seconds"), 6)
    return (
        f"interrupted at {sim} s simulated; the files in {result.out} are readable and end "
        "there (summary.json: complete = false)"
    )


# --------------------------------------------------------------------------- commands


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
    from .demo import DEFAULT_OUT, run_demo  # matplotlib is only needed here

    def report(scheme: str, result: Result) -> None:
        if not args.quiet:
            print(f"{scheme:>10}: {_run_line(result.summary)}", flush=True)

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


def _cmd_sweep(args: argparse.Namespace) -> int:
    from .sweep import load_sweep, run_sweep

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
    from .arrivals import arrival_goodput_in
    from .table import MAX_ROWS, points_table
    from .transport import describe, kept_over_profile, profile_warning

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


def _cmd_advise(args: argparse.Namespace) -> int:
    from .advise import advise, format_advice

    weights = None
    if args.weights:
        try:
            weights = [float(w) for w in args.weights.split(",")]
        except ValueError:
            raise InputError(f"--weights {args.weights!r}: expected numbers like 1,2,3") from None
    advice = advise(
        args.rate,
        args.rtt,
        args.buffer,
        args.queues,
        args.cc,
        args.mtu,
        weights=weights,
        lso=args.lso,
        lso_fraction=args.lso_fraction,
        lso_max=args.lso_max,
        senders=args.senders,
    )
    print(format_advice(advice))
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


def _cmd_version(args: argparse.Namespace) -> int:
    from . import __version__  # importlib.metadata: only when asked

    engine = engine_version()
    print(f"{PROG} {__version__} (engine {engine if engine is not None else 'not built'})")
    return EXIT_OK
