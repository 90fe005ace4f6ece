"""What the ``ecnlab`` command line's modules share: exit statuses, the
errors their handlers raise for :func:`ecnlab.cli.main` to report as one
line, and the options several commands take."""

from __future__ import annotations

import argparse
import sys
from typing import NoReturn

PROG = "ecnlab"
EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


class UsageError(Exception):
    """A command-line mistake reported by argparse."""


class InputError(Exception):
    """A missing or unreadable input named on the command line (exit 2)."""


class Stopped(Exception):
    """Interrupted with nothing written (exit 130); the message says so."""


class Parser(argparse.ArgumentParser):
    """An ArgumentParser that reports mistakes as one line instead of usage + exit."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def add_set(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--set",
        dest="overrides",
        metavar="KEY=VALUE",
        action="append",
        default=[],
        help="override a config value, e.g. --set switch.marking=mq-ecn (repeatable)",
    )


def add_unset(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--unset",
        dest="unsets",
        metavar="KEY",
        action="append",
        default=[],
        help="remove a key the file sets, so its default applies, e.g. --unset switch.threshold "
        "(repeatable; after every --set)",
    )


def add_workers(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--workers",
        metavar="N",
        type=positive_int,
        help="parallel runs (default: every core; with --scheduler local, its worker count)",
    )
    parser.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help='run on Dask: "local" (a LocalCluster) or tcp://HOST:PORT of a running scheduler',
    )


def whole_number(text: str, least: int, rule: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < least:
        raise argparse.ArgumentTypeError(f"{rule}, got {value}")
    return value


def positive_int(text: str) -> int:
    return whole_number(text, 1, "must be at least 1")


def non_negative_int(text: str) -> int:
    return whole_number(text, 0, "must be 0 or more")


def fail(message: str, status: int) -> int:
    one_line = " ".join(part.strip() for part in str(message).splitlines() if part.strip())
    print(f"{PROG}: error: {one_line}", file=sys.stderr)
    return status


def os_error_text(exc: OSError) -> str:
    if exc.filename is not None and exc.strerror:
        return f"{exc.filename}: {exc.strerror}"
    return str(exc) or type(exc).__name__
