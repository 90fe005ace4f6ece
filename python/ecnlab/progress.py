"""A one-line progress bar for simulated time, drawn on stderr.

The engine calls the bar with ``(sim_time_s, fraction_done)`` every few tenths
of a second of wall time: the fraction is simulated time over ``run.duration``,
or, for a run without a duration, the share of its sized flows finished. By
default the bar stays hidden for short runs: it appears only once a run has
taken more than :data:`SHOW_AFTER_S` seconds and only when the stream is a
terminal. It erases itself when closed.
"""

from __future__ import annotations

import shutil
import sys
import time
from typing import Callable, TextIO

__all__ = ["SHOW_AFTER_S", "ProgressBar"]

SHOW_AFTER_S = 1.5
"""Wall seconds a run must last before the bar is drawn (unless forced)."""

_MIN_REDRAW_S = 0.1


class ProgressBar:
    """Callable progress reporter, usable as a context manager.

    ``force=True`` draws from the first update even when the stream is not a
    terminal; ``force=False``/``None`` draws only on a terminal and only after
    ``delay`` seconds. ``clock`` is injectable for tests.
    """

    def __init__(
        self,
        stream: TextIO | None = None,
        *,
        force: bool = False,
        delay: float = SHOW_AFTER_S,
        label: str = "",
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.stream: TextIO = stream if stream is not None else sys.stderr
        self.force = force
        self.delay = 0.0 if force else delay
        self.label = label
        self._clock = clock
        self._start = clock()
        self._last_draw = -float("inf")
        self._drawn_width = 0
        self._enabled = force or _is_tty(self.stream)

    # The engine calls this; it must never raise anything but interrupts.
    def __call__(self, sim_time: float, fraction: float) -> None:
        if not self._enabled:
            return
        now = self._clock()
        elapsed = now - self._start
        if elapsed < self.delay or now - self._last_draw < _MIN_REDRAW_S:
            return
        self._last_draw = now
        self._draw(self.render(sim_time, fraction, elapsed))

    def render(self, sim_time: float, fraction: float, elapsed: float) -> str:
        """Return the text of the bar (without carriage return or padding)."""
        fraction = min(max(fraction, 0.0), 1.0) if fraction == fraction else 0.0
        eta = elapsed * (1.0 - fraction) / fraction if fraction > 0 else None
        prefix = f"{self.label} " if self.label else ""
        tail = f" {fraction * 100:5.1f}%  sim {sim_time:.3f} s  wall {_clock_text(elapsed)}" + (
            f"  eta {_clock_text(eta)}" if eta is not None else ""
        )
        columns = _terminal_columns(self.stream)
        bar_width = max(10, min(40, columns - len(prefix) - len(tail) - 3))
        filled = int(round(fraction * bar_width))
        text = f"{prefix}[{'#' * filled}{'.' * (bar_width - filled)}]{tail}"
        return text[: max(columns - 1, 20)]

    def _draw(self, text: str) -> None:
        pad = " " * max(0, self._drawn_width - len(text))
        try:
            self.stream.write(f"\r{text}{pad}")
            self.stream.flush()
        except (OSError, ValueError):
            self._enabled = False  # closed or broken stream: stop drawing, keep running
            return
        self._drawn_width = len(text)

    def close(self) -> None:
        """Erase the bar if it was drawn."""
        if self._drawn_width:
            try:
                self.stream.write("\r" + " " * self._drawn_width + "\r")
                self.stream.flush()
            except (OSError, ValueError):
                pass
            self._drawn_width = 0

    @property
    def shown(self) -> bool:
        """Whether the bar is currently on screen."""
        return self._drawn_width > 0

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _is_tty(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def _terminal_columns(stream: TextIO) -> int:
    if stream is sys.stderr or stream is sys.stdout:
        return shutil.get_terminal_size(fallback=(80, 24)).columns
    return 80


def _clock_text(seconds: float) -> str:
    seconds = max(0.0, seconds)
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, secs = divmod(int(round(seconds)), 60)
    if minutes < 60:
        return f"{minutes}m{secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"
