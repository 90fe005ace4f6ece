"""The table ``ecnlab sweep`` ends with: the points' keys and headline metrics."""

from __future__ import annotations

from pathlib import Path

import pytest

from ecnlab.cli import main
from ecnlab.table import format_table, points_table
from test_plot import run_cli_sweep


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    return run_cli_sweep(tmp_path_factory.mktemp("table"))


def test_sweep_ends_with_a_table_of_its_points(swept: tuple[Path, str]) -> None:
    _, text = swept
    lines = text.splitlines()
    assert lines[0].startswith("sweep: 4 points: 0 already in the store, 4 run, 0 failed")
    header = lines[1]
    for column in ("switch.threshold", "switch.marking", "mean FCT", "small p99 FCT", "goodput"):
        assert column in header, header
    rows = lines[2:6]
    assert [r.split()[:2] for r in rows] == [
        ["5pkt", "per-queue"],
        ["5pkt", "per-port"],
        ["40pkt", "per-queue"],
        ["40pkt", "per-port"],
    ]
    # Every metric cell is a number: the points all finished.
    for row in rows:
        cells = row.split()
        assert len(cells) >= 5 and "-" not in cells[2:], row
    assert lines[6] == "  transport: cc dctcp, no profile (every point)"
    assert "goodput: payload delivered" in lines[7]


def test_sweep_table_again_from_the_store(
    swept: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    """A rerun runs nothing and still shows the points' numbers."""
    store, first = swept
    sweep = store.parent / "sweep.toml"
    assert main(["sweep", str(sweep), "--out", str(store), "--workers", "1"]) == 0
    text = capsys.readouterr().out
    assert "4 already in the store, 0 run" in text
    assert text.splitlines()[1:] == first.splitlines()[1:]


def test_points_table_keys_failures_and_length() -> None:
    rows = {
        "a": {"status": "ok", "fct_overall_mean": 0.002, "fct_small_p99": 0.0005, "drop_rate": 0},
        "b": {"status": "ok", "fct_overall_mean": 0.004, "fct_small_p99": 0.0007, "drop_rate": 0},
        "c": {"status": "failed", "error": "boom"},
    }
    points = [
        ("a", {"case": "x", "switch.marking": "per-queue", "run.seed": 1, "k": 3}),
        ("b", {"case": "y", "switch.marking": "mq-ecn", "run.seed": 1, "k": 4}),
        ("c", {"case": "y", "switch.marking": "mq-ecn", "run.seed": 2, "k": 5}),
    ]
    text = points_table(points, rows)
    header, *body = text.splitlines()
    # switch.marking follows the case label; run.seed and k vary by themselves.
    assert header.split() == [
        "case", "run.seed", "k", "mean", "FCT", "(ms)", "small", "p99", "FCT", "(us)",
        "drop", "rate", "status",
    ]  # fmt: skip
    assert body[0].split() == ["x", "1", "3", "2.00", "500", "0", "ok"]
    assert body[2].split() == ["y", "2", "5", "-", "-", "-", "failed"]
    short = points_table(points, rows, max_rows=2)
    assert short.splitlines()[-1] == "  ... and 1 more points"


def test_format_table_aligns_columns() -> None:
    text = format_table(["name", "value"], [["a", "1.5"], ["long name", "10.25"]], [False, True])
    assert text.splitlines() == [
        "  name        value",
        "  a             1.5",
        "  long name   10.25",
    ]
