"""ecnlab.run against a stand-in engine (see conftest.FakeEngine)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest

import ecnlab
from conftest import FakeEngine
from ecnlab.progress import ProgressBar
from ecnlab.runner import engine_version

CONFIG = {
    "run": {"seed": 1, "duration": "0.05s", "warmup": "0.01s"},
    "switch": {"queues": 2, "marking": "per-queue"},
    "flows": [{"src": 0, "dst": 2, "count": 1}],
}


def test_run_returns_tables_and_passes_resolved_json(fake_engine: FakeEngine) -> None:
    result = ecnlab.run(CONFIG, overrides=["switch.marking=mq-ecn"], progress=False)
    assert fake_engine.calls[-1]["switch"]["marking"] == "mq-ecn"
    assert CONFIG["switch"]["marking"] == "per-queue"  # caller's dict untouched
    assert isinstance(result.tables["flows"], pa.Table)
    assert result.tables["flows"].column("kind").to_pylist() == ["long", "sized"]
    assert result.summary["extra_key"] == [1, 2]  # unknown keys pass through
    assert result.config is not None and result.config["switch"]["marking"] == "mq-ecn"
    assert result.out is None


def test_run_writes_output_with_config(fake_engine: FakeEngine, tmp_path: Path) -> None:
    out = tmp_path / "run1"
    result = ecnlab.run(CONFIG, out=out, overrides=["run.seed=7"], progress=False)
    assert result.out == out
    written = json.loads((out / "config.json").read_text(encoding="utf-8"))
    assert written["run"]["seed"] == 7
    assert (out / "summary.json").is_file()
    assert {p.stem for p in out.glob("*.parquet")} == set(result.tables)


def test_run_from_toml_file(fake_engine: FakeEngine, tmp_path: Path) -> None:
    path = tmp_path / "exp.toml"
    path.write_text('[run]\nduration = "0.02s"\n[switch]\nmarking = "per-port"\n')
    result = ecnlab.run(path, progress=False)
    assert result.summary["sim_seconds"] == pytest.approx(0.02)


def test_engine_config_error_is_wrapped_unchanged(fake_engine: FakeEngine) -> None:
    with pytest.raises(ecnlab.ConfigError) as info:
        ecnlab.run(CONFIG, overrides=["switch.marking=dwr"], progress=False)
    assert str(info.value) == (
        'switch.marking = "dwr": unknown value; expected one of '
        "none, per-queue, per-queue-min, per-port, per-pool, mq-ecn"
    )
    assert isinstance(info.value.__cause__, fake_engine.ConfigError)
    with pytest.raises(ValueError):  # still a ValueError for generic handlers
        ecnlab.validate(CONFIG, ["switch.marking=dwr"])


def test_validate_returns_resolved_config(fake_engine: FakeEngine) -> None:
    assert ecnlab.validate(CONFIG, ["run.seed=3"])["run"]["seed"] == 3


def test_progress_callback_and_interrupt(
    fake_engine: FakeEngine,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    ecnlab.run(CONFIG, progress=True)
    err = capsys.readouterr().err
    assert "25.0%  sim 0.013 s" in err  # first report drawn at once when forced
    assert err.endswith("\r")  # erased at the end

    def interrupt(self: ProgressBar, sim_time: float, duration: float) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(ProgressBar, "__call__", interrupt)
    with pytest.raises(KeyboardInterrupt):
        ecnlab.run(CONFIG, progress=True)


def test_python_side_errors_come_before_engine(no_engine: None) -> None:
    with pytest.raises(ecnlab.ConfigError, match="missing '='"):
        ecnlab.run(CONFIG, overrides=["oops"])


def test_missing_engine(no_engine: None) -> None:
    with pytest.raises(ecnlab.EngineNotBuiltError, match="not built"):
        ecnlab.run(CONFIG)
    assert engine_version() is None


def test_engine_version(fake_engine: FakeEngine) -> None:
    assert engine_version() == "fake-0.0"


def test_version_string() -> None:
    assert isinstance(ecnlab.__version__, str) and ecnlab.__version__
