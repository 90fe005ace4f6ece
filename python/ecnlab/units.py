"""Small helpers for the unit strings used in experiment files.

The engine is the authority on units; these exist only so the Python side can
read a few values back (for example a run's warm-up time when summarising it).
"""

from __future__ import annotations

import math
import re

__all__ = ["parse_time", "format_time"]

_TIME_SCALE = {"ps": 1e-12, "ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0}
_NUMBER_UNIT = re.compile(r"^\s*([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)\s*([^\s\d].*?)?\s*$")


def parse_time(value: str | float | int) -> float:
    """Return a duration such as ``"85.2us"`` in seconds.

    Plain numbers are taken to be seconds already. Raises ``ValueError`` for
    anything else.
    """
    if isinstance(value, bool):
        raise ValueError(f"expected a duration, got {value!r}")
    if isinstance(value, (int, float)):
        seconds = float(value)
    else:
        match = _NUMBER_UNIT.match(value)
        if match is None or match.group(2) not in _TIME_SCALE:
            raise ValueError(
                f"expected a duration such as '25us' (units ps, ns, us, ms, s), got {value!r}"
            )
        seconds = float(match.group(1)) * _TIME_SCALE[match.group(2)]
    if not math.isfinite(seconds) or seconds < 0:
        raise ValueError(f"expected a finite, non-negative duration, got {value!r}")
    return seconds


def format_time(seconds: float) -> str:
    """Format seconds as a duration string the engine accepts (``"0.1s"``)."""
    return f"{seconds:.9g}s"
