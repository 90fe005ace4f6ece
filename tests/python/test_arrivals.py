"""Goodput over a workload's arrival window (issue 55, item 3): the run's
printout and the sweep table report the goodput from warm-up to the last
flow's arrival, which leaves out the drain after it; the whole-run mean
takes the drain in and reads as a network that saturates."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from ecnlab.arrivals import arrival_goodput, goodput_between
from ecnlab.cli import main

# Two services, 1 ms bins: 4 + 6 Gbps for 5 ms, then nothing for 5 ms.
TIMES = [t / 1000 for t in range(1, 11)]
GOODPUT = pa.table(
    {
        "time": TIMES * 2,
        "service": [0] * 10 + [1] * 10,
        "gbps": [4.0] * 5 + [0.0] * 5 + [6.0] * 5 + [0.0] * 5,
    }
)


def test_goodput_between_weights_each_bin_by_its_part_in_the_window() -> None:
    # Bins delivered 10 Gbps (4 + 6) up to 5 ms, none after.
    assert goodput_between(GOODPUT, 0.0, 0.005) == pytest.approx(10.0)
    assert goodput_between(GOODPUT, 0.0, 0.010) == pytest.approx(5.0)
    # [4.5 ms, 5.5 ms]: half a bin at 10 Gbps, half a bin at 0.
    assert goodput_between(GOODPUT, 0.0045, 0.0055) == pytest.approx(5.0)
    assert goodput_between(GOODPUT, 0.005, 0.005) is None


def test_arrival_window_runs_from_the_warmup_to_the_last_sized_start() -> None:
    flows = pa.table(
        {"start": [0.0, 0.002, 0.005, 0.0], "kind": ["sized", "sized", "sized", "long"]}
    )
    config = {"run": {"warmup": "1ms"}, "workload": {"kind": "poisson"}}
    got = arrival_goodput(GOODPUT, flows, config)
    assert got == pytest.approx(
        {"arrival_goodput_gbps": 10.0, "arrival_window_from": 0.001, "arrival_window_to": 0.005}
    )
    # Sized flows of [[flows]] with no workload: the whole-run mean stands.
    assert arrival_goodput(GOODPUT, flows, {"run": {"warmup": "1ms"}}) is None


WORKLOAD = """\
[run]
sample_ports = "none"
[topology]
kind = "star"
hosts = 4
link_rate = "10Gbps"
link_delay = "5us"
[switch]
threshold = "20pkt"
[workload]
kind = "poisson"
load = 0.6
flows = 60
distribution = "web_search"
"""


def test_printout_and_sweep_table_give_goodput_over_the_arrival_window(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    exp = tmp_path / "poisson.toml"
    exp.write_text(WORKLOAD, encoding="utf-8")
    assert main(["run", str(exp), "--out", str(tmp_path / "run")]) == 0
    printed = " ".join(capsys.readouterr().out.split())  # wrapped lines joined
    assert "Gbps in all over the arrival window" in printed
    assert "(the last arrival); the run went on to" in printed
    sweep = tmp_path / "sweep.toml"
    sweep.write_text('base = "poisson.toml"\n[grid]\n"workload.load" = [0.3, 0.6]\n')
    argv = ["sweep", str(sweep), "--out", str(tmp_path / "store"), "--workers", "1"]
    assert main(argv) == 0
    table = capsys.readouterr().out
    header = table.splitlines()[1]
    assert "goodput to last arrival (Gbps)" in header
    # Every point has a workload: the whole-run goodput column is left out.
    assert "goodput (Gbps)" not in header
    assert "from warm-up to the last flow's arrival" in table
