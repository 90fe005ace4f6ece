"""The demo experiment, its table and figure, against a stand-in engine."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from conftest import FakeEngine, sample_raw_tables
from ecnlab.cli import main
from ecnlab.config import load_config
from ecnlab.demo import (
    SCHEMES,
    SchemeRow,
    duration_overrides,
    format_table,
    load_experiment,
    run_demo,
    summarize,
)
from ecnlab.errors import ConfigError
from ecnlab.plots import goodput_over_time, new_figure, queue_over_time, queue_series
from ecnlab.runner.result import Result


def test_bundled_experiment_matches_the_brief() -> None:
    cfg = load_experiment()
    assert cfg["topology"] == {
        "kind": "star",
        "hosts": 3,
        "link_rate": "10Gbps",
        "link_delay": "25us",
    }
    sw = cfg["switch"]
    assert (sw["queues"], sw["scheduler"], sw["quantum"], sw["threshold"]) == (
        2,
        "dwrr",
        "1500B",
        "65pkt",
    )
    assert cfg["transport"] == {"cc": "dctcp", "init_cwnd": 10, "min_rto": "5ms"}
    flows = [(f["src"], f["dst"], f["service"], f["count"], f["size"]) for f in cfg["flows"]]
    assert flows == [(0, 2, 0, 1, "infinite"), (1, 2, 1, 4, "infinite")]
    assert cfg["run"]["duration"] == "0.5s" and cfg["run"]["warmup"] == "0.1s"


def test_unknown_bundled_experiment() -> None:
    with pytest.raises(ConfigError, match="mqecn_motivation.toml"):
        load_experiment("nope.toml")


def test_duration_overrides() -> None:
    assert duration_overrides("0.2s") == ["run.duration=0.2s", "run.warmup=0.04s"]
    assert duration_overrides("500ms") == ["run.duration=0.5s", "run.warmup=0.1s"]
    with pytest.raises(ConfigError, match="duration"):
        duration_overrides("soon")
    with pytest.raises(ConfigError, match="positive"):
        duration_overrides("0s")
    cfg = load_config(load_experiment(), duration_overrides("0.2s"))
    assert cfg["run"]["warmup"] == "0.04s"


def test_queue_series_sums_queues_per_time() -> None:
    queues = Result.from_raw({"summary": {}, "tables": sample_raw_tables(0.03)})["queues"]
    times, total, per_queue = queue_series(queues, port=2)
    assert times.tolist() == pytest.approx([0.01, 0.02, 0.03])
    assert total.tolist() == [40.0, 40.0, 40.0]
    assert sorted(per_queue) == [0, 1]
    assert per_queue[1][1].tolist() == [30.0, 30.0, 30.0]
    _, total_kb, _ = queue_series(queues, port=2, unit="KB")
    assert total_kb.tolist() == pytest.approx([60.0] * 3)
    with pytest.raises(ValueError):
        queue_series(queues, port=2, unit="furlongs")


def test_summarize_and_table() -> None:
    result = Result.from_raw(
        {
            "summary": {"ce_marks": 1234, "goodput_gbps_by_service": {"0": 2.5, "1": 7.5}},
            "tables": sample_raw_tables(0.05),
        }
    )
    row = summarize("per-port", result, port=2, warmup=0.02)
    assert row.shares == {0: 0.25, 1: 0.75}
    assert row.mean_queue_pkt == 40.0
    assert row.ce_marks == 1234
    empty = SchemeRow("mq-ecn", {}, math.nan, None)
    text = format_table([row, empty])
    lines = text.splitlines()
    assert lines[0].split()[:3] == ["scheme", "service", "0"]
    assert "25.0% (2.50 Gbps)" in lines[1] and "75.0% (7.50 Gbps)" in lines[1]
    assert "40.0 pkt" in lines[1] and "1,234" in lines[1]
    assert lines[2].startswith("mq-ecn") and lines[2].split()[1:] == ["-", "-", "-", "-"]
    assert len({len(line) for line in lines}) == 1  # aligned


def test_plot_functions_draw(tmp_path: Path) -> None:
    result = Result.from_raw({"summary": {}, "tables": sample_raw_tables(0.05)})
    fig = new_figure(6, 3)
    left, right = fig.subplots(1, 2)
    lines = goodput_over_time(left, result["goodput"], warmup=0.01)
    assert [line.get_label() for line in lines] == ["service 0", "service 1"]
    lines = queue_over_time(right, result["queues"], port=2)
    assert [line.get_label() for line in lines] == ["port total", "queue 0", "queue 1"]
    assert queue_over_time(right, result["queues"], port=2, per_queue=False, legend=False)


def test_run_demo_writes_runs_and_figure(fake_engine: FakeEngine, tmp_path: Path) -> None:
    seen: list[str] = []
    outcome = run_demo(
        out=tmp_path,
        duration="0.05s",
        overrides=["run.seed=3"],
        progress=False,
        on_run=lambda scheme, result: seen.append(scheme),
    )
    assert seen == list(SCHEMES)
    assert [c["switch"]["marking"] for c in fake_engine.calls] == list(SCHEMES)
    assert all(c["run"]["seed"] == 3 for c in fake_engine.calls)
    assert all(c["run"]["warmup"] == "0.01s" for c in fake_engine.calls)
    for scheme in SCHEMES:
        assert (tmp_path / scheme / "summary.json").is_file()
        assert (tmp_path / scheme / "config.json").is_file()
    png = tmp_path / "mqecn_motivation.png"
    assert outcome.figure == png
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert [row.scheme for row in outcome.rows] == list(SCHEMES)
    assert "per-port" in outcome.table()


def test_demo_marking_wins_over_user_override(fake_engine: FakeEngine, tmp_path: Path) -> None:
    run_demo(out=tmp_path, duration="0.02s", overrides=["switch.marking=none"], progress=False)
    assert [c["switch"]["marking"] for c in fake_engine.calls] == list(SCHEMES)


def test_demo_cli(
    fake_engine: FakeEngine, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["demo", "--out", str(tmp_path), "--duration", "0.03s"]) == 0
    out = capsys.readouterr().out
    assert "scheme" in out and "mq-ecn" in out and "mqecn_motivation.png" in out
    assert main(["demo", "--out", str(tmp_path), "--duration", "later"]) == 2
    assert capsys.readouterr().err.startswith("ecnlab: error: duration")
