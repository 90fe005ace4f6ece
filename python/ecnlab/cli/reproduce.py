"""``ecnlab reproduce`` and ``ecnlab report``: a paper figure run, drawn
and judged, and the page of every reproduced figure (their parsers and
handlers; ``ecnlab.reproduce`` is imported only when one runs)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from .common import EXIT_FAILURE, EXIT_OK, InputError, add_workers


def add_commands(commands: Any) -> None:
    """Register ``ecnlab reproduce`` and ``ecnlab report`` with the CLI's subcommands."""
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
        "--claims",
        action="store_true",
        help=(
            "the papers' headline claims with our numbers and one verdict each, judged from "
            "the record (ID: one paper, e.g. mqecn; --record DIR: another record); then exit"
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
    add_workers(p_rep)
    p_rep.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    p_rep.set_defaults(handler=_cmd_reproduce)

    p_report = commands.add_parser(
        "report",
        help="one page with every reproduced figure, our numbers beside the paper's",
        description="Write DIR/report.md (with the PNGs) and DIR/report.html from DIR/<id>.json.",
    )
    p_report.add_argument("dir", metavar="DIR", type=Path, help="a reproduce output folder")
    p_report.set_defaults(handler=_cmd_report)


def _cmd_reproduce(args: argparse.Namespace) -> int:
    from ..reproduce import DEFAULT_OUT, figure_ids, load_figure, reproduce

    if args.list:
        for fid in figure_ids():
            fig = load_figure(fid)
            print(f"{fid:<18} {fig.paper} {fig.figure}: {fig.description}")
        return EXIT_OK
    if args.claims:
        from ..reproduce.claims import evaluate_claims, format_claims, load_claims
        from ..reproduce.record import default_record_root

        root = Path(args.record) if args.record else default_record_root()
        paper = None if args.figure in (None, "all") else args.figure
        print(format_claims(evaluate_claims(load_claims(paper), root)))
        return EXIT_OK
    if args.status:
        return _status(args)
    if not args.figure:
        raise InputError("reproduce: give a figure id (see `ecnlab reproduce --list`) or all")
    ids = figure_ids() if args.figure == "all" else [args.figure]
    for fid in ids:
        load_figure(fid)  # every id checked before anything runs
    out = args.out if args.out is not None else DEFAULT_OUT
    record = None
    if args.record is not None:
        if args.quick:
            raise InputError(
                "reproduce: --record keeps full-scale runs only; drop --quick (a quick run's "
                "PNG and JSON go to --out)"
            )
        from ..reproduce.record import default_record_root

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
            f"{doc['sweep']['points']} point{'' if doc['sweep']['points'] == 1 else 's'} "
            f"({failed} failed" + _build_counts(doc["sweep"]) + "), "
            f"{doc['cpu_seconds']:.0f} s of runs -> {out / doc['png']}"
            + (f"; recorded in {doc['record']}" if "record" in doc else "")
        )
    return status


def _status(args: argparse.Namespace) -> int:
    """``--status``: the record's rows of the source tree (or ``--record
    DIR``); an installed package carries the figures but not the record,
    so there it says so and gives each figure's points."""
    from ..errors import ConfigError
    from ..reproduce import figure_ids, load_figure
    from ..reproduce.figure import experiments_root
    from ..reproduce.record import default_record_root
    from ..reproduce.status import format_points, format_status, point_counts, record_status

    wanted = figure_ids() if args.figure in (None, "all") else [args.figure]
    for fid in wanted:
        load_figure(fid)  # an unknown id: one error naming the figures
    if args.record:
        root = Path(args.record)
        if not root.is_dir():
            raise InputError(f"--record {args.record}: no such folder")
    else:
        try:
            root = default_record_root()
        except ConfigError:
            root = None
    if root is None or not root.is_dir():
        why = (
            f"this ecnlab carries the figures ({experiments_root()}) but not their record "
            "(record/ of the source tree: the full-scale runs' rows), so what is recorded and "
            "the core-hours left are not known here; each figure's recorded result is on its "
            "gallery page. Run from a source checkout, or give its record folder: "
            "--status --record DIR. The figures' points at full scale:"
        )
        print(format_points(point_counts(wanted), why))
        return EXIT_OK
    print(format_status(record_status(root, wanted)))
    return EXIT_OK


def _build_counts(sweep: dict[str, Any]) -> str:
    """The reproduction's points made by another engine build: reused (a
    plain run) or run again (a record)."""
    if sweep.get("rerun_other_build"):
        return f", {sweep['rerun_other_build']} rerun: another engine build had made them"
    if sweep.get("reused_other_build"):
        return f", {sweep['reused_other_build']} reused from another engine build"
    return ""


def _cmd_report(args: argparse.Namespace) -> int:
    from ..reproduce.report import write_report

    if not args.dir.is_dir():
        raise InputError(f"{args.dir}: no such directory")
    try:
        md, page = write_report(args.dir)
    except FileNotFoundError as exc:
        raise InputError(str(exc)) from None
    print(f"wrote {md} and {page}")
    return EXIT_OK
