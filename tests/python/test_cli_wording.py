"""What the command line tells (issue 55, item 10): "1 point", not "1
points"; one line for every thinly-supported percentile of ``ecnlab fct``,
not one each; ``fct --baseline`` normalises slowdown; the run's printout
gives the slowdown."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ecnlab.cli import main
from ecnlab.fct import fct_estimates, format_estimates
from ecnlab.sweep import SweepReport
from ecnlab.sweep.store import PointRecord


def test_one_point_is_a_point() -> None:
    failed = PointRecord("k", "", {}, "failed", "config: x", 0.0, "e", "s", {})
    line = SweepReport(Path("store"), total=1, failed=[failed]).line()
    assert line.startswith("1 point: 0 already in the store, 0 run, 1 failed"), line
    assert SweepReport(Path("store"), total=2).line().startswith("2 points: ")


def _flows(slowdown: float, n: int = 500) -> pa.Table:
    """``n`` finished small sized flows, FCTs 1..n us, slowdowns evenly
    from ``slowdown`` to twice it (their mean: 1.5 × ``slowdown``)."""
    return pa.table(
        {
            "size": [10_000] * n,
            "fct": [(i + 1) * 1e-6 for i in range(n)],
            "timeouts": [0] * n,
            "kind": ["sized"] * n,
            "slowdown": [slowdown * (1 + i / (n - 1)) for i in range(n)],
        }
    )


def test_thinly_supported_percentiles_are_one_line() -> None:
    text = format_estimates(fct_estimates(_flows(2.0), resamples=0))
    marked = [line for line in text.splitlines() if line.rstrip().endswith("!")]
    notes = [line for line in text.splitlines() if line.startswith("  ! ")]
    # 500 flows: p99 has 5 above it, p99.9 one (fct and slowdown, small and
    # all): 8 rows marked, told in one line, not one line each.
    assert len(marked) == 8
    assert len(notes) == 1, text
    assert notes[0].startswith("  ! 8 rows rest on fewer than 10 flows above the estimate")
    assert "a p99 1,000, a p99.9 10,000" in notes[0]


def test_fct_baseline_normalises_slowdown(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name, slowdown in (("ours", 2.0), ("base", 4.0)):
        (tmp_path / name).mkdir()
        pq.write_table(_flows(slowdown), tmp_path / name / "flows.parquet")
    argv = ["fct", str(tmp_path / "ours"), "--baseline", str(tmp_path / "base")]
    assert main([*argv, "--resamples", "0"]) == 0
    row = next(r for r in capsys.readouterr().out.splitlines() if "slowdown mean" in r)
    assert row.split()[-3:] == ["3.00", "6.00", "0.500"]
    assert main([*argv, "--resamples", "0", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["normalized"]["slowdown_small_p99"] == pytest.approx(0.5)


def test_run_printout_gives_the_slowdown(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    exp = tmp_path / "two.toml"
    exp.write_text(
        '[run]\nsample_ports = "none"\n[topology]\nkind = "star"\nhosts = 3\n'
        'link_rate = "10Gbps"\nlink_delay = "5us"\n[[flows]]\nsrc = 0\ndst = 2\nsize = "50KB"\n'
        '[[flows]]\nsrc = 1\ndst = 2\nsize = "50KB"\n',
        encoding="utf-8",
    )
    assert main(["run", str(exp), "--out", str(tmp_path / "out")]) == 0
    printed = capsys.readouterr().out
    summary = json.loads((tmp_path / "out" / "summary.json").read_text(encoding="utf-8"))
    mean = summary["slowdown"]["overall_mean"]
    assert f"slowdown (FCT / FCT alone in the empty network): mean {mean:,.2f}" in printed
