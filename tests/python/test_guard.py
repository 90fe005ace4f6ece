"""The resource guard and the new run keys, through the command line: a run
that would write or hold too much, or ask for meaningless resolution, is
refused at once with one line naming the keys responsible (exit 2)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from ecnlab.cli import main

pytest.importorskip("ecnlab._engine")

MOTIVATION = Path(__file__).resolve().parents[2] / "python/ecnlab/experiments/mqecn_motivation.toml"


def run_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str], *sets: str) -> tuple[int, str]:
    argv = ["run", str(MOTIVATION), "--out", str(tmp_path / "out"), "-q"]
    for s in sets:
        argv += ["--set", s]
    code = main(argv)
    err = capsys.readouterr().err
    lines = err.splitlines()
    assert len(lines) <= 1, err
    return code, lines[0] if lines else ""


@pytest.mark.parametrize(
    ("sets", "line"),
    [
        # Issue 14's two inputs: a nine-digit duration with the default
        # samplers, and picosecond samples over 5 ms.
        (
            ["run.duration=999999999s"],
            'run.duration: "999999999s": longer than 1000000s (11.6 days), '
            "the longest simulated time ecnlab counts",
        ),
        (
            ["run.sample_interval=1ps", "run.duration=5ms", "run.warmup=0s"],
            "run.sample_interval = 1ps: must be at least 1ns",
        ),
        # 10 us samples of 3 ports × 2 queues for a day: 8.6e9 samples.
        (
            ["run.duration=86400s"],
            "run.sample_interval: 10us over run.duration = 86400s samples 8.6e9 times on 3 "
            "ports of 2 queues (1.45TB, over run.max_output = 10GB); use a coarser "
            "run.sample_interval, a shorter run or fewer run.sample_ports, or raise "
            "run.max_output",
        ),
        # Goodput bins alone: 1 ns bins of 2 services over 100 s.
        (
            ["run.duration=100s", "run.sample_ports=none", "run.goodput_interval=1ns"],
            "run.goodput_interval: 1ns over run.duration = 100s makes 1e11 bins for 2 services "
            "(4TB, over run.max_output = 10GB); use a coarser run.goodput_interval or a shorter "
            "run, or raise run.max_output",
        ),
        (
            ["run.max_output=1MB"],
            "run.sample_interval: 10us over run.duration = 500ms samples 50001 times on 3 ports "
            "of 2 queues (8.4MB, over run.max_output = 1MB); use a coarser run.sample_interval, "
            "a shorter run or fewer run.sample_ports, or raise run.max_output",
        ),
    ],
)
def test_refused_in_one_line_at_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], sets: list[str], line: str
) -> None:
    start = time.monotonic()
    code, got = run_cli(tmp_path, capsys, *sets)
    elapsed = time.monotonic() - start
    assert (code, got) == (2, f"ecnlab: error: {line}")
    assert not (tmp_path / "out").exists()
    # Refused before anything is built or simulated (a bound, not a speed
    # test: it is milliseconds; the old build aborted or never finished).
    assert elapsed < 10


def test_a_raised_budget_lets_a_large_run_through_validation() -> None:
    import ecnlab

    cfg = ecnlab.load_config(MOTIVATION, ["run.duration=86400s"])
    with pytest.raises(ecnlab.ConfigError, match="over run.max_output = 10GB"):
        ecnlab.validate(cfg)
    ecnlab.validate(cfg, ["run.max_output=2TB"])


@pytest.mark.parametrize(
    ("value", "fragments"),
    [
        ("10", ["run.max_output: 10: a size needs a unit"]),
        ('"-1GB"', ['run.max_output: "-1GB": must not be negative']),
        ('"0GB"', ["run.max_output = 0B: must be positive"]),
        ('"lots"', ['run.max_output: "lots": expected a number followed by B, KB']),
        ('"10pkt"', ['run.max_output: "10pkt": expected a size in bytes']),
        ("true", ['run.max_output = true: must be a size with a unit, e.g. "64KB"']),
    ],
)
def test_bad_max_output_values(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str, fragments: list[str]
) -> None:
    code, line = run_cli(tmp_path, capsys, f"run.max_output={value}")
    assert code == 2
    for fragment in fragments:
        assert fragment in line, line


@pytest.mark.parametrize(
    ("override", "line"),
    [
        ("run.goodput_interval=999ps", "run.goodput_interval = 999ps: must be at least 1ns"),
        ("run.sample_interval=0.5ns", "run.sample_interval = 500ps: must be at least 1ns"),
        (
            "topology.link_rate=9Tbps",
            'topology.link_rate: "9Tbps": faster than 8Tbps (one byte per picosecond), '
            "the fastest link ecnlab models",
        ),
        (
            "topology.link_delay=1e30s",
            'topology.link_delay: "1e30s": longer than 1000000s (11.6 days), '
            "the longest simulated time ecnlab counts",
        ),
        ('run.pcap=["switch:hostX"]', 'run.pcap[0] = "switch:hostX": no such switch port'),
    ],
)
def test_bad_resolution_and_ranges(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], override: str, line: str
) -> None:
    code, got = run_cli(tmp_path, capsys, override)
    assert code == 2
    assert got.startswith(f"ecnlab: error: {line}"), got
