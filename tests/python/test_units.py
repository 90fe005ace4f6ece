"""Unit-string helpers (no engine needed)."""

from __future__ import annotations

import pytest

from ecnlab.units import format_time, parse_time


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("1s", 1.0),
        ("0.5s", 0.5),
        ("100us", 100e-6),
        ("85.2us", 85.2e-6),
        ("25 µs", 25e-6),
        ("5ms", 5e-3),
        ("10ns", 10e-9),
        ("3ps", 3e-12),
        ("1e-3s", 1e-3),
        (0.25, 0.25),
        (2, 2.0),
    ],
)
def test_parse_time(text: str | float, seconds: float) -> None:
    assert parse_time(text) == pytest.approx(seconds, rel=1e-12)


@pytest.mark.parametrize("bad", ["", "1", "s", "1 h", "-1s", "1Gbps", True, float("inf")])
def test_parse_time_rejects(bad: object) -> None:
    with pytest.raises(ValueError):
        parse_time(bad)  # type: ignore[arg-type]


def test_format_time_round_trips() -> None:
    for seconds in (0.1, 0.04, 1.5, 2e-5):
        assert parse_time(format_time(seconds)) == pytest.approx(seconds)
    assert format_time(0.1) == "0.1s"
