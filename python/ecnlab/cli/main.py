"""The ``ecnlab`` command line: its parser, built from each command's module
(:func:`build_parser`), and :func:`main`, which runs a command and turns
what it raises into one line and an exit status.

Errors a user can fix (bad config, missing file, bad argument) print one line
``ecnlab: error: ...`` to stderr and exit with status 2; an unavailable engine
or an output error exits 1; Ctrl-C (or SIGTERM) exits 130 with one line that
says whether the run's files were written (readable, marked incomplete) or not.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections.abc import Sequence
from typing import Any

from ..errors import ConfigError, EngineNotBuiltError, RunInterrupted
from ..runner import Result, engine_version
from ..sweep.plot import PlotError
from ..sweep.pool import SchedulerError
from ..sweep.store import StoreError
from . import advise, keys, peers, reproduce, run, sweep, testbed, tutorial
from .common import (
    EXIT_FAILURE,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    PROG,
    InputError,
    Parser,
    Stopped,
    UsageError,
    fail,
    os_error_text,
)
from .formatting import format_number

__all__ = ["build_parser", "main"]

# Each module registers its commands; `ecnlab --help` lists them in this order.
COMMAND_MODULES = (run, testbed, sweep, reproduce, advise, keys, peers, tutorial)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser for ``ecnlab`` and its subcommands."""
    parser = Parser(
        prog=PROG,
        description="Packet-level simulator for ECN marking in multi-queue switches.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module in COMMAND_MODULES:
        module.add_commands(commands)
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
    from ..runner import engine

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
    sim = format_number(result.summary.get("sim_seconds"), 6)
    return (
        f"interrupted at {sim} s simulated; the files in {result.out} are readable and end "
        "there (summary.json: complete = false)"
    )


# --------------------------------------------------------------------------- commands


def _cmd_version(args: argparse.Namespace) -> int:
    from .. import __version__  # importlib.metadata: only when asked

    engine = engine_version()
    print(f"{PROG} {__version__} (engine {engine if engine is not None else 'not built'})")
    return EXIT_OK
