"""The testbed's switch process: ``python -m ecnlab.switch SPEC.json`` (or
the ``ecnlab-switch`` command an install puts on the PATH). ``ecnlab
testbed`` starts it inside the switch's network namespace with the spec it
writes; it forwards frames until SIGINT or SIGTERM, then writes its
report. The code is the engine's (``crates/ecnlab/src/testbed``), built
into the extension module, so the package carries its switch whichever way
it was installed: a wheel, ``pip install .`` or ``make build``."""

from __future__ import annotations

import sys
from collections.abc import Sequence

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the switch on ``argv`` (default: the command line); its exit
    status: 0 done, 1 failed while forwarding, 2 a bad spec."""
    from ._engine import switch_main

    args = list(sys.argv[1:] if argv is None else argv)
    return int(switch_main("ecnlab-switch", args))


if __name__ == "__main__":
    sys.exit(main())
