"""``ecnlab keys [NAME]``: every key ecnlab accepts, as the engine declares
it (type, default, what is allowed, what it is, its paper and section), by
section and by scheme, as ns-3's ``--PrintAttributes`` does. NAME is a
section (``switch``), a kind of scheme (``marking``, ``scheduler``,
``qdisc``, ``cc``, ``profile``) or ``recipe`` (a paper's whole set-up for a
scheme, ``switch.recipe``), a scheme or recipe (``mq-ecn``) or a key
(``mqecn_beta``). ``--markdown`` prints the experiment-file reference
(docs/reference.md) instead."""

from __future__ import annotations

import argparse
from typing import Any

from ..keys import catalog, render, select

__all__ = ["add_commands"]


def _cmd_keys(args: argparse.Namespace) -> int:
    if args.markdown:
        from ..runner import load_engine

        print(load_engine().reference_markdown(), end="")
        return 0
    print(render(select(catalog(), args.name)), end="")
    return 0


def add_commands(commands: Any) -> None:
    """Register ``ecnlab keys``."""
    p = commands.add_parser(
        "keys",
        help="every section's and scheme's keys: type, default, range, doc, source",
        description=__doc__.split("\n\n")[0].replace("\n", " ") if __doc__ else None,
    )
    p.add_argument("name", nargs="?", help="a section, a kind of scheme, a scheme or a key")
    p.add_argument("--markdown", action="store_true", help="print docs/reference.md instead")
    p.set_defaults(handler=_cmd_keys)
