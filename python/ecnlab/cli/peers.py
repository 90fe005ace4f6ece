"""``ecnlab import-hpcc`` and ``ecnlab hpcc-fct``: an HPCC simulator run
(its config.txt, topology and flow files) as an ecnlab experiment, and an
ecnlab run's flows in the peer's FCT format, with slowdown percentiles by
flow size side by side with the peer's (docs/guide/hpcc-import.md)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..peers.hpcc import HEADER, import_hpcc
from ..peers.hpcc_fct import compare_fct, format_compare, read_fct, write_fct
from ..runner import Result
from .common import EXIT_OK, InputError

__all__ = ["add_commands"]


def _cmd_import(args: argparse.Namespace) -> int:
    if not args.config.is_file():
        raise InputError(f"{args.config}: no such file")
    imp = import_hpcc(args.config, header=args.header)
    for w in imp.warnings:
        print(f"warning: {w}", file=sys.stderr)
    if args.out is None:
        sys.stdout.write(imp.toml)
    else:
        args.out.write_text(imp.toml, encoding="utf-8")
        if not args.quiet:
            print(
                f"wrote {args.out} ({len(imp.config['flows'])} flows, {len(imp.warnings)} warnings)"
            )
    return EXIT_OK


def _cmd_fct(args: argparse.Namespace) -> int:
    if not (args.result / "summary.json").is_file():
        raise InputError(f"{args.result}: not a run's output directory (no summary.json)")
    flows = Result.read(args.result).tables["flows"]
    peer_ids = import_hpcc(args.peer_config).peer_ids if args.peer_config else None
    if args.out:
        n = write_fct(flows, args.out, peer_ids)
        print(f"wrote {args.out} ({n} finished flows)")
    if args.compare:
        if not args.compare.is_file():
            raise InputError(f"{args.compare}: no such file")
        print(format_compare(compare_fct(flows, read_fct(args.compare, peer_ids))), end="")
    if not args.out and not args.compare:
        raise InputError("give --out FILE, --compare PEER_FCT, or both")
    return EXIT_OK


def add_commands(commands: Any) -> None:
    """Register ``ecnlab import-hpcc`` and ``ecnlab hpcc-fct``."""
    p = commands.add_parser(
        "import-hpcc",
        help="an HPCC simulator run (config.txt) as an ecnlab experiment",
        description="Convert the HPCC simulator's config.txt, with the topology and flow files it "
        "names, to an ecnlab experiment TOML; what ecnlab does differently goes to stderr, one "
        "line per key.",
    )
    p.add_argument("config", metavar="CONFIG", type=Path, help="the peer's config.txt")
    p.add_argument("--out", metavar="FILE", type=Path, help="write the TOML here (default: stdout)")
    p.add_argument(
        "--header",
        metavar="BYTES",
        type=int,
        default=HEADER,
        help=f"header bytes of a data frame (transport.header; default {HEADER})",
    )
    p.add_argument("--quiet", "-q", action="store_true", help="print nothing but warnings")
    p.set_defaults(handler=_cmd_import)

    q = commands.add_parser(
        "hpcc-fct",
        help="a run's flows in the HPCC simulator's FCT format, or compared with its fct.txt",
        description="Write an ecnlab run's finished flows as the HPCC simulator's FCT file, and/or "
        "print slowdown percentiles by flow size beside those of the peer's FCT file.",
    )
    q.add_argument(
        "result", metavar="RESULT_DIR", type=Path, help="an ecnlab run's output directory"
    )
    q.add_argument("--out", metavar="FILE", type=Path, help="write the flows in the peer's format")
    q.add_argument(
        "--compare", metavar="PEER_FCT", type=Path, help="the peer's fct.txt to compare with"
    )
    q.add_argument(
        "--peer-config",
        metavar="CONFIG",
        type=Path,
        help="the peer's config.txt the run was imported from (to use the peer's node ids)",
    )
    q.set_defaults(handler=_cmd_fct)
