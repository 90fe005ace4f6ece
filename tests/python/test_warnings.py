"""A setting that cannot act in its network is warned of (issue 55): in what
``ecnlab run`` prints, on stderr with ``--quiet``, and in summary.json's
``warnings``; a run whose settings fit writes no ``warnings`` key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ecnlab.cli import main

# Issue 55's network: a 4 -> 1 star at 10 Gbps, 25 us links (100 us base
# RTT), the default 300 KB buffer, which holds 300,000 x 8 / 1e10 s = 240 us.
STAR = """\
[run]
duration = "20ms"
sample_ports = "none"
[topology]
kind = "star"
hosts = 5
link_rate = "10Gbps"
link_delay = "25us"
[switch]
{switch}
[transport]
cc = "dctcp"
""" + "".join(f"[[flows]]\nsrc = {s}\ndst = 4\n" for s in range(4))


def run(tmp_path: Path, switch: str, *flags: str) -> tuple[int, dict]:
    path = tmp_path / "exp.toml"
    path.write_text(STAR.format(switch=switch), encoding="utf-8")
    out = tmp_path / "out"
    code = main(["run", str(path), "--out", str(out), *flags])
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    return code, summary


def test_pie_defaults_warn_in_the_printout_and_the_summary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, summary = run(tmp_path, 'marking = "pie"')
    out = capsys.readouterr().out
    assert code == 0
    # RFC 8033's 15 ms target against the 240 us the buffer holds; its
    # 150 ms burst allowance against the 20 ms run.
    warnings = summary["warnings"]
    assert [w.split(" =")[0] for w in warnings] == ["switch.pie_target", "switch.pie_max_burst"]
    assert "240us at 10Gbps" in warnings[0]
    assert 'switch.recipe = "pie"' in warnings[0]
    assert summary["ce_marks"] == 0
    # One "warning" row each, its text wrapped onto unnamed rows below it.
    printed = [line.strip() for line in out.splitlines() if line.strip().startswith("warning")]
    assert len(printed) == len(warnings)
    flat = " ".join(out.split())
    for w in warnings:
        assert " ".join(w.split()) in flat, w


def test_quiet_runs_warn_on_stderr(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, summary = run(tmp_path, 'qdisc = "dualpi2"', "--quiet")
    captured = capsys.readouterr()
    assert code == 0 and captured.out == ""
    lines = captured.err.splitlines()
    assert lines == [f"ecnlab run: warning: {w}" for w in summary["warnings"]]
    assert [w.split(" =")[0] for w in summary["warnings"]] == [
        "switch.dualpi2_target",
        "switch.dualpi2_min_th",
    ]


def test_the_recipes_fit_and_mark(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for switch in ('recipe = "pie"', 'recipe = "dualpi2"'):
        code, summary = run(tmp_path, switch)
        assert code == 0
        assert "warnings" not in summary, switch
        assert summary["ce_marks"] > 0, switch
    assert "warning" not in capsys.readouterr().out
