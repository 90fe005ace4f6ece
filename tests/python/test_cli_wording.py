"""Wording of the command line's counts (issue 55, item 10): "1 point", not
"1 points"."""

from __future__ import annotations

from pathlib import Path

from ecnlab.store import PointRecord
from ecnlab.sweep import SweepReport


def test_one_point_is_a_point() -> None:
    failed = PointRecord("k", "", {}, "failed", "config: x", 0.0, "e", "s", {})
    line = SweepReport(Path("store"), total=1, failed=[failed]).line()
    assert line.startswith("1 point: 0 already in the store, 0 run, 1 failed"), line
    assert SweepReport(Path("store"), total=2).line().startswith("2 points: ")
