"""The ``ecnlab`` command line (the console script runs :func:`main`).

- :mod:`.main`: the parser built from the modules below, and :func:`main`;
- :mod:`.common`: exit statuses, the errors handlers raise, shared options;
- :mod:`.formatting`: the text a run's, a store's and FCT summaries print;
- one module per group of commands: :mod:`.run` (``run``, ``demo``,
  ``fct``), :mod:`.testbed`, :mod:`.sweep` (``sweep``, ``store``, ``plot``),
  :mod:`.reproduce` (``reproduce``, ``report``), :mod:`.advise`
  (``advise``, ``rtt``), :mod:`.keys`, :mod:`.tutorial`. Each registers its
  commands with ``add_commands(commands)``; the work itself is the
  library's (a handler only parses, calls and prints).
"""

from __future__ import annotations

from .formatting import format_fct, format_store, format_summary
from .main import build_parser, main

__all__ = ["build_parser", "format_fct", "format_store", "format_summary", "main"]
