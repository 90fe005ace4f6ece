"""The command line: exit codes and one-line errors (stand-in engine where needed)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from conftest import FakeEngine
from ecnlab.cli import main
from ecnlab.progress import ProgressBar

GOOD_TOML = """\
[run]
duration = "0.05s"
warmup = "0.01s"
[switch]
marking = "per-queue"
"""


def one_error_line(err: str) -> str:
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("ecnlab: error: "), err
    return lines[0]


@pytest.fixture
def good_file(tmp_path: Path) -> Path:
    path = tmp_path / "exp.toml"
    path.write_text(GOOD_TOML, encoding="utf-8")
    return path


def test_missing_file_exits_2_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "missing.toml"
    assert main(["run", str(missing)]) == 2
    captured = capsys.readouterr()
    assert "missing.toml" in one_error_line(captured.err)
    assert "Traceback" not in captured.err
    assert captured.out == ""


def test_toml_syntax_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bad.toml"
    path.write_text("[run\n", encoding="utf-8")
    assert main(["run", str(path)]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert "bad.toml" in line and "line 1" in line


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["bogus"],
        ["run"],
        ["run", "a.toml", "--frobnicate"],
        ["run", "a.toml", "--set"],
        ["demo", "--duration"],
        ["version", "extra"],
    ],
)
def test_bad_arguments_exit_2_with_one_line(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    one_error_line(capsys.readouterr().err)


def test_bad_override_exits_2(good_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", str(good_file), "--set", "switch.marking"]) == 2
    assert "'switch.marking'" in one_error_line(capsys.readouterr().err)


def test_help_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    assert "usage: ecnlab" in capsys.readouterr().out
    assert main(["run", "--help"]) == 0
    assert "--set KEY=VALUE" in capsys.readouterr().out


def test_version_without_engine(no_engine: None, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["version"]) == 0
    assert "engine not built" in capsys.readouterr().out


def test_run_without_engine_exits_1(
    no_engine: None, good_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", str(good_file), "--out", str(tmp_path / "o")]) == 1
    assert "not built" in one_error_line(capsys.readouterr().err)


def test_run_prints_summary_and_writes(
    fake_engine: FakeEngine,
    good_file: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = tmp_path / "out"
    assert main(["run", str(good_file), "--out", str(out), "--set", "run.seed=5"]) == 0
    text = capsys.readouterr().out
    assert "1,000 events" in text
    assert "goodput    in-order payload delivered after warm-up, mean rate in Gbps" in text
    assert "0             4.000" in text and "1             6.000" in text
    assert "CE marks" in text and "drops" in text
    assert str(out) in text
    assert (out / "summary.json").is_file()
    assert fake_engine.calls[-1]["run"]["seed"] == 5


def test_run_default_out_and_quiet(
    fake_engine: FakeEngine,
    good_file: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["run", str(good_file), "--quiet"]) == 0
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""
    assert (tmp_path / "results" / "exp" / "summary.json").is_file()


def test_engine_config_error_exits_2(
    fake_engine: FakeEngine, good_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["run", str(good_file), "--out", str(tmp_path / "o"), "--set", "switch.marking=dwr"]
    assert main(argv) == 2
    line = one_error_line(capsys.readouterr().err)
    assert line.startswith('ecnlab: error: switch.marking = "dwr": unknown value')


def test_keyboard_interrupt_exits_130(
    fake_engine: FakeEngine,
    good_file: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    def interrupted(config_json: str, sink: object, progress: object = None) -> dict:
        raise KeyboardInterrupt

    monkeypatch.setattr(fake_engine, "run", interrupted)
    out = tmp_path / "o"
    assert main(["run", str(good_file), "--out", str(out)]) == 130
    assert capsys.readouterr().err.splitlines() == [
        f"ecnlab: interrupted; no files written to {out}"
    ]
    assert not out.exists()


def test_interrupt_during_the_run_keeps_readable_files(
    fake_engine: FakeEngine,
    good_file: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Ctrl-C seen at a progress report: the engine still hands its tables
    over, they are written and marked incomplete, and the line says so."""

    def interrupt(self: ProgressBar, sim_time: float, fraction: float) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(ProgressBar, "__call__", interrupt)
    out = tmp_path / "o"
    assert main(["run", str(good_file), "--out", str(out)]) == 130
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("ecnlab: interrupted at ") and f"the files in {out} are readable" in line
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["complete"] is False and summary["ended_by"] == "interrupted"
    assert pq.read_table(out / "flows.parquet").num_rows == 2


def test_run_threads_flag_sets_run_threads(
    fake_engine: FakeEngine, good_file: Path, tmp_path: Path
) -> None:
    """`--threads N` is `--set run.threads=N` (the partitioned engine)."""
    assert main(["run", str(good_file), "--out", str(tmp_path / "o"), "--threads", "2", "-q"]) == 0
    assert fake_engine.calls[-1]["run"]["threads"] == 2
    assert main(["run", str(good_file), "--threads", "-1"]) == 2
