"""The stderr progress bar (no engine needed)."""

from __future__ import annotations

import io

from ecnlab.progress import ProgressBar


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class TtyStream(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_hidden_for_short_runs_on_a_terminal() -> None:
    clock, stream = FakeClock(), TtyStream()
    bar = ProgressBar(stream, clock=clock)
    clock.now += 1.0
    bar(0.1, 0.5)
    assert stream.getvalue() == ""
    bar.close()
    assert stream.getvalue() == ""


def test_appears_after_delay_and_erases_itself() -> None:
    clock, stream = FakeClock(), TtyStream()
    bar = ProgressBar(stream, clock=clock)
    clock.now += 2.0
    bar(0.25, 0.5)
    drawn = stream.getvalue()
    assert drawn.startswith("\r[")
    assert "50.0%" in drawn
    assert "sim 0.250 s" in drawn
    assert bar.shown
    bar.close()
    assert not bar.shown
    tail = stream.getvalue()[len(drawn) :]
    assert tail.strip() == ""  # only carriage returns and spaces
    assert tail.startswith("\r") and tail.endswith("\r")
    assert len(tail) - 2 >= len(drawn) - 1  # blanks cover the whole bar


def test_never_drawn_when_not_a_terminal() -> None:
    clock, stream = FakeClock(), io.StringIO()
    bar = ProgressBar(stream, clock=clock)
    clock.now += 10.0
    bar(0.25, 0.5)
    bar.close()
    assert stream.getvalue() == ""


def test_forced_draws_at_once_even_without_terminal() -> None:
    clock, stream = FakeClock(), io.StringIO()
    with ProgressBar(stream, force=True, clock=clock) as bar:
        bar(0.5, 1.0)
        assert "100.0%" in stream.getvalue()
    assert stream.getvalue().endswith("\r")


def test_redraws_are_throttled() -> None:
    clock, stream = FakeClock(), io.StringIO()
    bar = ProgressBar(stream, force=True, clock=clock)
    bar(0.1, 0.1)
    first = stream.getvalue()
    clock.now += 0.01
    bar(0.2, 0.2)
    assert stream.getvalue() == first
    clock.now += 0.5
    bar(0.3, 0.3)
    assert "30.0%" in stream.getvalue()


def test_render_clamps_the_fraction() -> None:
    bar = ProgressBar(io.StringIO(), force=True)
    assert "100.0%" in bar.render(2.0, 1.5, 3.0)
    assert "0.0%" in bar.render(0.0, -0.1, 1.0)
    assert "0.0%" in bar.render(0.0, float("nan"), 1.0)
    assert "eta" not in bar.render(0.0, 0.0, 1.0)
    assert "eta 3.0s" in bar.render(0.25, 0.25, 1.0)


def test_broken_stream_does_not_raise() -> None:
    stream = io.StringIO()
    bar = ProgressBar(stream, force=True)
    stream.close()
    bar(0.1, 1.0)  # must not raise: an exception here would abort the run
    bar.close()
