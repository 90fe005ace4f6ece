"""``ecnlab testbed``: a star experiment on the kernel's TCP (its
parser and handler; the testbed itself is ``ecnlab.testbed``, imported
only when the command runs)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from .common import EXIT_FAILURE, EXIT_OK, InputError, Stopped, add_set, fail, os_error_text


def add_commands(commands: Any) -> None:
    """Register ``ecnlab testbed`` with the CLI's subcommands."""
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
    add_set(p_tb)
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


def _cmd_testbed(args: argparse.Namespace) -> int:
    from ..testbed import TestbedUnavailable, cleanup, run_testbed

    if args.cleanup:
        try:
            gone = cleanup()
        except OSError as exc:
            return fail(f"cleanup: {os_error_text(exc)}", EXIT_FAILURE)
        if not args.quiet:
            print(f"removed {len(gone)} namespace(s)" + (": " + ", ".join(gone) if gone else ""))
        return EXIT_OK
    if args.config is None:
        raise InputError("testbed: CONFIG is required (or --cleanup)")
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
        return fail(str(exc), EXIT_FAILURE)
    except RuntimeError as exc:
        return fail(f"testbed: {exc}", EXIT_FAILURE)
    except FileNotFoundError as exc:
        return fail(str(exc), EXIT_FAILURE)
    except KeyboardInterrupt:
        raise Stopped(
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
