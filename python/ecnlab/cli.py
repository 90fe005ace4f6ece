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
from typing import Any, NoReturn

import pyarrow as pa
import pyarrow.parquet as pq

from .cli_format import _number, _run_line, format_fct, format_store, format_summary
from .errors import ConfigError, EngineNotBuiltError, RunInterrupted
from .execute import SchedulerError
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
from .results import Result
from .runner import engine_version, run
from .store import Store, StoreError
from .storeplot import PlotError

__all__ = ["build_parser", "format_fct", "format_store", "format_summary", "main"]

PROG = "ecnlab"
EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


class _UsageError(Exception):
    """A command-line mistake reported by argparse."""


class _InputError(Exception):
    """A missing or unreadable input named on the command line (exit 2)."""


class _Stopped(Exception):
    """Interrupted with nothing written (exit 130); the message says so."""


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser that reports mistakes as one line instead of usage + exit."""

    def error(self, message: str) -> NoReturn:
        raise _UsageError(message)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser for ``ecnlab`` and its subcommands."""
    parser = _Parser(
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
    _add_set(p_run)
    p_run.add_argument(
        "--threads",
        metavar="N",
        type=_non_negative_int,
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
    _add_set(p_demo)
    p_demo.add_argument("--quiet", "-q", action="store_true", help="print nothing on success")
    p_demo.set_defaults(handler=_cmd_demo)

    p_tb = commands.add_parser(
        "testbed",
        help="run a star experiment on real Linux TCP (network namespaces, root)",
        description=(
            "Run a star experiment with hosts in network namespaces (the kernel's TCP) and "
            "one switch process running ecnlab's queue disciplines on the real frames; "
            "write the same files as `ecnlab run`. Needs root."
        ),
    )
    p_tb.add_argument("config", metavar="CONFIG", nargs="?", help="experiment TOML file")
    p_tb.add_argument(
        "--out", metavar="DIR", type=Path, help="output directory (default: results/testbed-<stem>)"
    )
    _add_set(p_tb)
    p_tb.add_argument(
        "--kernel-cc",
        default="reno",
        choices=["reno", "cubic"],
        help='the kernel congestion control for cc = "ecn-star" and "reno" (default reno)',
    )
    p_tb.add_argument(
        "--allow-fast", action="store_true", help="run link rates above the measured limit (warns)"
    )
    p_tb.add_argument(
        "--cleanup",
        action="store_true",
        help="delete the namespaces any testbed run left behind (after a SIGKILL) and exit",
    )
    p_tb.add_argument("--quiet", "-q", action="store_true", help="print nothing on success")
    p_tb.set_defaults(handler=_cmd_testbed)

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
        type=_non_negative_int,
        default=DEFAULT_RESAMPLES,
        help=f"bootstrap replicates per interval (default {DEFAULT_RESAMPLES}; 0: no intervals)",
    )
    p_fct.add_argument(
        "--seed", type=_non_negative_int, default=0, help="the bootstrap's seed (default 0)"
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
    _add_workers(p_sweep)
    p_sweep.add_argument("--quick", action="store_true", help="apply the sweep's [quick] table")
    _add_set(p_sweep)
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

    from .storeplot import add_command as add_plot

    add_plot(commands)

    p_rep = commands.add_parser(
        "reproduce",
        help="reproduce a paper figure (run its sweep, draw it, judge it against the paper)",
        description=(
            "Run a figure's sweep into OUT/store (resumable), draw OUT/ID.png shaped like the "
            "paper's figure and write OUT/ID.json with, per plotted point, our number, the "
            "paper's number or stated trend, and a verdict. ID `all` runs every figure."
        ),
    )
    p_rep.add_argument("figure", metavar="ID", nargs="?", help="figure id (see --list), or all")
    p_rep.add_argument("--list", action="store_true", help="list the figures and exit")
    p_rep.add_argument(
        "--status",
        action="store_true",
        help=(
            "where the full-scale record stands (ID or every figure): recorded or not, points "
            "with rows in record/ (carried or recorded), core-hours left; then exit"
        ),
    )
    p_rep.add_argument(
        "--out",
        metavar="DIR",
        type=Path,
        default=None,
        help="output folder (default results/reproduce)",
    )
    p_rep.add_argument(
        "--quick", action="store_true", help="a reduced run (fewer flows, one seed): about a minute"
    )
    p_rep.add_argument(
        "--record",
        metavar="DIR",
        nargs="?",
        const="",
        default=None,
        type=str,
        help=(
            "also write the figure's record (PNG, JSON with intervals and verdicts, the store "
            "index rows; stamped with the model version and date) into DIR/ID/ (default: the "
            "source tree's record/); full-scale runs only"
        ),
    )
    _add_workers(p_rep)
    p_rep.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    p_rep.set_defaults(handler=_cmd_reproduce)

    p_report = commands.add_parser(
        "report",
        help="one page with every reproduced figure, our numbers beside the paper's",
        description="Write DIR/report.md (with the PNGs) and DIR/report.html from DIR/<id>.json.",
    )
    p_report.add_argument("dir", metavar="DIR", type=Path, help="a reproduce output folder")
    p_report.set_defaults(handler=_cmd_report)

    p_adv = commands.add_parser(
        "advise",
        help="marking thresholds and buffer sizes the papers derive, with their equations",
        description=(
            "Print C×RTT, DCTCP's K, ECN*'s threshold bounds (Tuning ECN Eq. 1, 4, 5), dequeue "
            "marking's buffer bound (§4.2), the per-queue minimum threshold (MQ-ECN Eq. 2) and "
            "the buffer pressure of N queues each at K; then one switch.threshold per marking "
            "scheme (K rounded up to whole packets) with the --set flags that run it, flagged "
            "impractical where it holds a queue under 3 packets."
        ),
    )
    p_adv.add_argument("--rate", required=True, help="bottleneck rate, e.g. 10Gbps")
    p_adv.add_argument("--rtt", required=True, help="round-trip time, e.g. 100us")
    p_adv.add_argument("--buffer", help="per-port buffer, e.g. 300KB or 200pkt")
    p_adv.add_argument("--queues", type=_positive_int, default=1, help="queues per port")
    p_adv.add_argument(
        "--weights", help="queue weights, comma separated (default equal), e.g. 1,2,3"
    )
    p_adv.add_argument("--cc", default="dctcp", help="dctcp or ecn-star (its λ for the standard K)")
    p_adv.add_argument("--mtu", type=_positive_int, default=1500, help="packet size on the wire")
    p_adv.add_argument(
        "--lso", action="store_true", help="senders batch with LSO: add CEDM's bounds (Cor. 2, 4)"
    )
    p_adv.add_argument(
        "--lso-fraction", type=float, default=1 / 3, help="β, the share of cwnd per LSO segment"
    )
    p_adv.add_argument("--lso-max", default="64KB", help="largest LSO segment L (default 64KB)")
    p_adv.add_argument(
        "--senders", type=_positive_int, default=2, help="synchronised senders N (default 2)"
    )
    p_adv.set_defaults(handler=_cmd_advise)

    from .keys import add_command as add_keys

    add_keys(commands)

    p_version = commands.add_parser("version", help="print the package and engine versions")
    p_version.set_defaults(handler=_cmd_version)
    return parser


def _add_set(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--set",
        dest="overrides",
        metavar="KEY=VALUE",
        action="append",
        default=[],
        help="override a config value, e.g. --set switch.marking=mq-ecn (repeatable)",
    )


def _add_workers(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--workers",
        metavar="N",
        type=_positive_int,
        help="parallel runs (default: every core; with --scheduler local, its worker count)",
    )
    parser.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help='run on Dask: "local" (a LocalCluster) or tcp://HOST:PORT of a running scheduler',
    )


def _whole_number(text: str, least: int, rule: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < least:
        raise argparse.ArgumentTypeError(f"{rule}, got {value}")
    return value


def _positive_int(text: str) -> int:
    return _whole_number(text, 1, "must be at least 1")


def _non_negative_int(text: str) -> int:
    return _whole_number(text, 0, "must be 0 or more")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``ecnlab`` command; returns the exit status."""
    parser = build_parser()
    try:
        args = parser.parse_args(None if argv is None else list(argv))
    except _UsageError as exc:
        return _fail(str(exc), EXIT_USAGE)
    except SystemExit as exc:  # --help and friends
        return exc.code if isinstance(exc.code, int) else EXIT_OK
    previous_term = _term_as_interrupt()
    try:
        status: int = args.handler(args)
        return status
    except (ConfigError, _InputError, StoreError, SchedulerError, PlotError) as exc:
        return _fail(str(exc), EXIT_USAGE)
    except EngineNotBuiltError as exc:
        return _fail(str(exc), EXIT_FAILURE)
    except BrokenPipeError:
        # The reader went away (`ecnlab store ... | head`): stop quietly.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    except RunInterrupted as exc:
        print(f"{PROG}: {_interrupted_text(exc.result)}", file=sys.stderr)
        return EXIT_INTERRUPTED
    except _Stopped as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return EXIT_INTERRUPTED
    except KeyboardInterrupt as exc:
        detail = f": {exc}" if str(exc) else ""
        print(f"{PROG}: interrupted{detail}", file=sys.stderr)
        return EXIT_INTERRUPTED
    except OSError as exc:
        return _fail(_os_error_text(exc), EXIT_FAILURE)
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
    from . import runner

    active = runner.ACTIVE_RUN
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


def _fail(message: str, status: int) -> int:
    one_line = " ".join(part.strip() for part in str(message).splitlines() if part.strip())
    print(f"{PROG}: error: {one_line}", file=sys.stderr)
    return status


def _os_error_text(exc: OSError) -> str:
    if exc.filename is not None and exc.strerror:
        return f"{exc.filename}: {exc.strerror}"
    return str(exc) or type(exc).__name__


# --------------------------------------------------------------------------- commands


def _cmd_run(args: argparse.Namespace) -> int:
    config = Path(args.config)
    out = args.out if args.out is not None else Path("results") / config.stem
    overrides = list(args.overrides)
    if args.threads is not None:
        overrides.append(f"run.threads={args.threads}")
    try:
        result = run(config, out=out, overrides=overrides, progress=False if args.quiet else None)
    except KeyboardInterrupt as exc:
        if isinstance(exc, RunInterrupted):
            raise
        raise _Stopped(f"interrupted; no files written to {out}") from None
    if not args.quiet:
        print(format_summary(result, title=str(config)))
    return EXIT_OK


def _cmd_testbed(args: argparse.Namespace) -> int:
    from .testbed import TestbedUnavailable, cleanup, run_testbed

    if args.cleanup:
        try:
            gone = cleanup()
        except OSError as exc:
            return _fail(f"cleanup: {_os_error_text(exc)}", EXIT_FAILURE)
        if not args.quiet:
            print(f"removed {len(gone)} namespace(s)" + (": " + ", ".join(gone) if gone else ""))
        return EXIT_OK
    if args.config is None:
        raise _InputError("testbed: CONFIG is required (or --cleanup)")
    config = Path(args.config)
    out = args.out if args.out is not None else Path("results") / f"testbed-{config.stem}"
    try:
        result = run_testbed(
            config,
            out,
            overrides=args.overrides,
            kernel_cc=args.kernel_cc,
            allow_fast=args.allow_fast,
        )
    except TestbedUnavailable as exc:
        return _fail(str(exc), EXIT_FAILURE)
    except RuntimeError as exc:
        return _fail(f"testbed: {exc}", EXIT_FAILURE)
    except FileNotFoundError as exc:
        return _fail(str(exc), EXIT_FAILURE)
    except KeyboardInterrupt:
        raise _Stopped(
            f"interrupted; everything of the run torn down, no files written to {out}"
        ) from None
    if not args.quiet:
        s = result.summary
        sw = s["switch"]
        shares = ", ".join(
            f"service {k}: {v * 1e3:.1f} Mbps" for k, v in s["goodput_gbps_by_service"].items()
        )
        rate = s["rate_bps"] / 1e6
        print(f"{config} on the testbed ({s['kernel_cc']}, {rate:g} Mbps ports) -> {out}")
        print(f"  goodput after warmup: {shares}")
        print(
            f"  switch: {sw['frames_in']} frames in, {sw['frames_out']} out, "
            f"{sw['dropped_overflow'] + sw['dropped_aqm']} dropped, "
            f"{sw['queued_at_end']} queued at the end; "
            f"{s['ce_marks']} CE marks; conserved: {sw['conserved']}"
        )
        if s.get("incast_goodput_gbps") is not None:
            print(
                f"  incast: {s['incast_rounds_completed']} rounds, "
                f"{s['incast_goodput_gbps'] * 1e3:.1f} Mbps a round (mean); "
                f"{s['retransmits']} retransmissions, {s['timeouts']} timeouts"
            )
        held = min((p["sustained"] for p in s["switch_ports"]), default=1.0)
        print(f"  ports sent at {held * 100:.1f}% (lowest) of the bucket's rate while backlogged")
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
    from .table import points_table

    rows = {r["key"]: r for r in Store(store, create=False).index().to_pylist()}
    return points_table(
        [(p.key, {**({"case": p.case} if p.case else {}), **p.params}) for p in points], rows
    )


def _cmd_store(args: argparse.Namespace) -> int:
    if not args.store.exists():
        raise _InputError(f"{args.store}: no such store")
    store = Store(args.store, create=False)
    index = store.index()
    if args.json:
        print(json.dumps(index.to_pylist(), indent=2, default=str))
        return EXIT_OK
    print(format_store(store, index))
    return EXIT_OK


def _cmd_reproduce(args: argparse.Namespace) -> int:
    from .reproduce import DEFAULT_OUT, figure_ids, load_figure, reproduce

    if args.list:
        for fid in figure_ids():
            fig = load_figure(fid)
            print(f"{fid:<18} {fig.paper} {fig.figure}: {fig.description}")
        return EXIT_OK
    if args.status:
        from .reproduce.record import default_record_root
        from .reproduce.status import format_status, record_status

        root = Path(args.record) if args.record else default_record_root()
        wanted = figure_ids() if args.figure in (None, "all") else [args.figure]
        print(format_status(record_status(root, wanted)))
        return EXIT_OK
    if not args.figure:
        raise _InputError("reproduce: give a figure id (see `ecnlab reproduce --list`) or all")
    ids = figure_ids() if args.figure == "all" else [args.figure]
    for fid in ids:
        load_figure(fid)  # every id checked before anything runs
    out = args.out if args.out is not None else DEFAULT_OUT
    record = None
    if args.record is not None:
        if args.quick:
            raise _InputError(
                "reproduce: --record keeps full-scale runs only; drop --quick (a quick run's "
                "PNG and JSON go to --out)"
            )
        from .reproduce.record import default_record_root

        record = Path(args.record) if args.record else default_record_root()
    status = EXIT_OK
    for fid in ids:
        doc = reproduce(
            fid,
            out,
            quick=args.quick,
            workers=args.workers,
            scheduler=args.scheduler,
            progress=False if args.quiet else None,
            record=record,
        )
        v = doc["verdicts"]
        failed = doc["sweep"]["failed"]
        if failed:
            status = EXIT_FAILURE
        print(
            f"{fid}: {v['matches']} matches, {v['within noise']} within noise, "
            f"{v['same direction']} same direction, {v['differs']} differ; "
            f"{doc['sweep']['points']} points ({failed} failed"
            + _build_counts(doc["sweep"])
            + "), "
            f"{doc['cpu_seconds']:.0f} s of runs -> {out / doc['png']}"
            + (f"; recorded in {doc['record']}" if "record" in doc else "")
        )
    return status


def _build_counts(sweep: dict[str, Any]) -> str:
    """The reproduction's points made by another engine build: reused (a
    plain run) or run again (a record)."""
    if sweep.get("rerun_other_build"):
        return f", {sweep['rerun_other_build']} rerun: another engine build had made them"
    if sweep.get("reused_other_build"):
        return f", {sweep['reused_other_build']} reused from another engine build"
    return ""


def _cmd_report(args: argparse.Namespace) -> int:
    from .reproduce.report import write_report

    if not args.dir.is_dir():
        raise _InputError(f"{args.dir}: no such directory")
    try:
        md, page = write_report(args.dir)
    except FileNotFoundError as exc:
        raise _InputError(str(exc)) from None
    print(f"wrote {md} and {page}")
    return EXIT_OK


def _cmd_advise(args: argparse.Namespace) -> int:
    from .advise import advise, format_advice

    weights = None
    if args.weights:
        try:
            weights = [float(w) for w in args.weights.split(",")]
        except ValueError:
            raise _InputError(f"--weights {args.weights!r}: expected numbers like 1,2,3") from None
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
    """FCT statistics of the run in ``directory`` and its flows table, or :class:`_InputError`."""
    if not directory.exists():
        raise _InputError(f"{directory}: no such directory")
    if not directory.is_dir():
        raise _InputError(f"{directory}: not a directory")
    flows_path = directory / "flows.parquet"
    if not flows_path.is_file():
        raise _InputError(f"{flows_path}: no such file (not a run directory?)")
    try:
        flows = pq.read_table(flows_path)
    except (pa.ArrowInvalid, ValueError) as exc:
        raise _InputError(f"{flows_path}: cannot read ({exc})") from exc
    try:
        stats: dict[str, Any] = fct_stats(flows, mss=_run_mss(directory))
    except ValueError as exc:
        raise _InputError(f"{flows_path}: {exc}") from exc
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
