"""What ``ecnlab run`` prints: goodput labelled (all hosts, a sending host)
and the FCT summary of the sized flows."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import FakeEngine
from ecnlab.cli import main

FAKE_TOML = """\
[run]
duration = "0.05s"
warmup = "0.01s"
[switch]
marking = "per-queue"
"""

STAR = """\
[run]
seed = 1
sample_ports = "none"
{run}
[topology]
kind = "star"
hosts = 4
link_rate = "10Gbps"
link_delay = "5us"
[switch]
queues = 2
marking = "per-queue"
threshold = "20pkt"
"""


def run_text(tmp_path: Path, toml: str, capsys: pytest.CaptureFixture[str]) -> str:
    path = tmp_path / "exp.toml"
    path.write_text(toml, encoding="utf-8")
    assert main(["run", str(path), "--out", str(tmp_path / "out")]) == 0
    return capsys.readouterr().out


def goodput_rows(text: str) -> list[list[str]]:
    """The rows of the goodput table under its header."""
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("  goodput"))
    assert lines[at + 1].split() == [
        "service",
        "all",
        "hosts",
        "a",
        "sending",
        "host",
        "sending",
        "hosts",
    ]
    rows = []
    for line in lines[at + 2 :]:
        if not line.startswith(" " * 13):
            break
        rows.append(line.split())
    return rows


def test_goodput_is_labelled_and_divided_among_senders(
    fake_engine: FakeEngine, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The stand-in engine says 4 and 6 Gbps for services 0 and 1; host 0
    sends service 0, host 1 service 1."""
    text = run_text(tmp_path, FAKE_TOML, capsys)
    assert "  goodput    in-order payload delivered after warm-up, mean rate in Gbps" in text
    assert goodput_rows(text) == [
        ["0", "4.000", "4.000", "1"],
        ["1", "6.000", "6.000", "1"],
        ["total", "10.000", "5.000", "2"],
    ]


def test_fct_summary_of_the_sized_flows(
    fake_engine: FakeEngine, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One sized flow of 15 KB that took 1 ms (the other flow is long-lived)."""
    text = run_text(tmp_path, FAKE_TOML, capsys)
    assert "  FCT        1 sized flow, 0 unfinished, 1 timeout; mean 1.000 ms" in text
    assert "small (<= 100 KB, 1 flow): mean 1.000 ms, p99 1.000 ms, p99.9 1.000 ms" in text
    assert "medium" not in text and "large" not in text
    assert f"`ecnlab fct {tmp_path / 'out'}` for every statistic" in text


def test_real_run_with_sized_flows(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    flows = (
        '[[flows]]\nsrc = 0\ndst = 3\nsize = "50KB"\nservice = 0\n'
        '[[flows]]\nsrc = 1\ndst = 3\nsize = "200KB"\nservice = 1\n'
        '[[flows]]\nsrc = 2\ndst = 3\nsize = "200KB"\nservice = 1\n'
    )
    text = run_text(tmp_path, STAR.format(run="") + flows, capsys)
    rows = goodput_rows(text)
    assert [r[0] for r in rows] == ["0", "1", "total"]
    assert [r[3] for r in rows] == ["1", "2", "3"]
    for _, total, per_host, hosts in rows:
        assert float(per_host) == pytest.approx(float(total) / int(hosts), abs=2e-3)
    # No more than the receiver's 10 Gbps link, summed over all hosts.
    assert 0 < float(rows[-1][1]) <= 10.0
    assert "  FCT        3 sized flows, 0 unfinished, 0 timeouts; mean " in text
    assert "small (<= 100 KB, 1 flow): mean " in text
    assert "medium (100 KB - 10 MB, 2 flows): mean " in text


def test_real_run_of_long_flows_has_no_fct(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    flows = "[[flows]]\nsrc = 0\ndst = 3\nservice = 0\n[[flows]]\nsrc = 1\ndst = 3\nservice = 0\n"
    text = run_text(tmp_path, STAR.format(run='duration = "5ms"\nwarmup = "1ms"') + flows, capsys)
    rows = goodput_rows(text)
    assert len(rows) == 1 and rows[0][0] == "0" and rows[0][3] == "2"
    assert 8.0 < float(rows[0][1]) <= 10.0  # two senders share the receiver's link
    assert "FCT" not in text
