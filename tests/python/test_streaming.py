"""Streaming outputs through the engine: files written row group by row group
equal files written in one piece, a run stopped early leaves whole, readable
files marked incomplete, and a run that fails leaves none."""

from __future__ import annotations

import copy
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import ecnlab
from ecnlab.runner.writer import ROW_GROUP_ROWS, RunWriter

pytest.importorskip("ecnlab._engine")

# MQ-ECN's 1-vs-4 star (python/ecnlab/experiments/mqecn_motivation.toml),
# with queue samples every 1 us: 0.2 s of it gives 200,001 samples of 3 ports
# × 2 queues, 1.2 M rows, so the queues file has two row groups.
STAR = {
    "run": {"seed": 1, "duration": "0.2s", "warmup": "0.05s", "sample_interval": "1us"},
    "topology": {"kind": "star", "hosts": 3, "link_rate": "10Gbps", "link_delay": "25us"},
    "switch": {
        "buffer": "200pkt",
        "queues": 2,
        "scheduler": "dwrr",
        "marking": "mq-ecn",
        "threshold": "65pkt",
    },
    "transport": {"cc": "dctcp", "min_rto": "5ms"},
    "flows": [
        {"src": 0, "dst": 2, "service": 0},
        {"src": 1, "dst": 2, "service": 1, "count": 4},
    ],
    "ping": [{"src": 0, "dst": 2, "service": 0, "interval": "100us"}],
}


def star(**run: object) -> dict:
    cfg = copy.deepcopy(STAR)
    cfg["run"].update(run)
    return cfg


def test_streamed_files_equal_files_written_in_one_piece(tmp_path: Path) -> None:
    streamed = ecnlab.run(star(), out=tmp_path / "streamed", progress=False)
    in_memory = ecnlab.run(star(), progress=False)
    in_memory.write(tmp_path / "whole")  # pyarrow.parquet.write_table, one call per table
    assert pq.ParquetFile(tmp_path / "streamed" / "queues.parquet").metadata.num_rows == 1_200_006
    groups = pq.ParquetFile(tmp_path / "streamed" / "queues.parquet").metadata.num_row_groups
    assert groups == 2 and 1_200_006 > ROW_GROUP_ROWS
    names = sorted(p.name for p in (tmp_path / "whole").glob("*.parquet"))
    assert names == sorted(p.name for p in (tmp_path / "streamed").glob("*.parquet"))
    assert len(names) == 6
    for name in names:
        a = (tmp_path / "streamed" / name).read_bytes()
        assert a == (tmp_path / "whole" / name).read_bytes(), name
    # The streamed result reads its tables back from the files, and copies
    # them as they are when written elsewhere.
    assert streamed.tables["queues"].equals(in_memory.tables["queues"])
    assert streamed.complete and "complete" not in streamed.summary
    assert "queues[1200006]" in repr(ecnlab.Result.read(tmp_path / "streamed"))
    streamed.write(tmp_path / "copy")
    for name in names:
        a = (tmp_path / "copy" / name).read_bytes()
        assert a == (tmp_path / "whole" / name).read_bytes(), name


def test_interrupted_run_leaves_readable_files_marked_incomplete(tmp_path: Path) -> None:
    """Ctrl-C as seen at a progress report, after the run has gone some way:
    the files are whole, end where the run stopped, and agree with the full
    run up to there."""
    calls = []

    def stop_later(sim: float, fraction: float) -> None:
        calls.append(sim)
        if sim > 0.3:
            raise KeyboardInterrupt

    cfg = star(duration="5s", sample_interval="100us")
    with pytest.raises(ecnlab.RunInterrupted) as info:
        ecnlab.run(cfg, out=tmp_path / "cut", progress=stop_later)
    result = info.value.result
    assert isinstance(info.value, KeyboardInterrupt)
    stop = result.summary["sim_seconds"]
    assert 0.3 < stop < 5.0
    assert result.summary["complete"] is False and result.summary["ended_by"] == "interrupted"
    assert not result.complete
    written = json.loads((tmp_path / "cut" / "summary.json").read_text(encoding="utf-8"))
    assert written["complete"] is False
    # Whole files: every table reads back; no temporary file is left.
    read = ecnlab.Result.read(tmp_path / "cut")
    assert sorted(read.tables) == ["flows", "goodput", "incast", "ports", "queues", "rtt"]
    assert not [p for p in (tmp_path / "cut").iterdir() if p.name.startswith(".")]
    queues = read.tables["queues"]
    assert max(queues.column("time").to_pylist()) <= stop
    # Up to the stop, the samples are the full run's (a run is deterministic).
    full = ecnlab.run(star(duration=f"{stop + 0.01}s", sample_interval="100us"), progress=False)
    whole = full.tables["queues"]
    assert whole.num_rows > queues.num_rows
    assert queues.equals(whole.slice(0, queues.num_rows))
    # Packet conservation holds at the stop too.
    s = result.summary
    assert (
        s["packets_sent"] == s["packets_delivered"] + s["packets_dropped"] + s["packets_in_flight"]
    )


def test_a_failing_writer_leaves_no_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "run"
    ecnlab.run(star(duration="20ms", warmup="0s"), out=out, progress=False)
    assert (out / "summary.json").is_file()
    seen = []
    real_rows = RunWriter.rows

    def disk_full(self: RunWriter, name: str, columns: object) -> None:
        seen.append(name)
        if len(seen) > 3:
            raise OSError(28, "No space left on device")
        real_rows(self, name, columns)

    monkeypatch.setattr(RunWriter, "rows", disk_full)
    with pytest.raises(OSError, match="No space left"):
        ecnlab.run(star(duration="0.1s"), out=out, progress=False)
    # The old run's summary went first, so the directory no longer claims
    # to be complete; no temporary file is left behind.
    assert not (out / "summary.json").exists()
    assert not [p for p in out.iterdir() if p.name.startswith(".")]
    with pytest.raises(FileNotFoundError, match="incomplete or missing run"):
        ecnlab.Result.read(out)


def test_a_config_error_leaves_an_earlier_run_untouched(tmp_path: Path) -> None:
    out = tmp_path / "run"
    ecnlab.run(star(duration="20ms", warmup="0s"), out=out, progress=False)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    with pytest.raises(ecnlab.ConfigError):
        ecnlab.run(
            star(duration="20ms", warmup="0s", sample_interval="1ps"), out=out, progress=False
        )
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def _cli(args: list[str], **kwargs: object) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "ecnlab", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kwargs,  # type: ignore[arg-type]
    )


def test_kill_stops_a_background_run_whose_sigint_is_ignored(tmp_path: Path) -> None:
    # A shell without job control starts `ecnlab run ... &` with SIGINT
    # ignored; `kill` (SIGTERM) must still stop it and finish its files.
    path = _long_run_file(tmp_path)
    out = tmp_path / "out"
    ignore = lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)  # noqa: E731
    proc = _cli(["run", str(path), "--out", str(out)], preexec_fn=ignore)
    _wait_for_temp_files(out, proc)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert err.strip().startswith("ecnlab: interrupted at ") and "are readable" in err


def _long_run_file(tmp_path: Path) -> Path:
    """The built-in MQ-ECN star stretched to 100 s, long enough to interrupt."""
    path = tmp_path / "long.toml"
    path.write_text(
        (Path(ecnlab.__file__).parent / "experiments" / "mqecn_motivation.toml")
        .read_text(encoding="utf-8")
        .replace('duration = "0.5s"', 'duration = "100s"'),
        encoding="utf-8",
    )
    return path


def _wait_for_temp_files(out: Path, proc: subprocess.Popen) -> None:
    """Until the run has started writing (its temporary files exist)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        if out.is_dir() and any(p.name.endswith(".tmp") for p in out.iterdir()):
            time.sleep(0.5)
            return
        time.sleep(0.05)
    raise AssertionError(f"the run never started writing: {proc.communicate()}")


def _sigint_as_at_a_terminal() -> None:
    # Ctrl-C reaches a command at an interactive shell; a harness that
    # started these tests in the background may have left SIGINT ignored,
    # which children inherit.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_ctrl_c_at_the_command_line_says_which_files_it_left(tmp_path: Path, sig: int) -> None:
    path = _long_run_file(tmp_path)
    out = tmp_path / "out"
    proc = _cli(["run", str(path), "--out", str(out)], preexec_fn=_sigint_as_at_a_terminal)
    _wait_for_temp_files(out, proc)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("ecnlab: interrupted at ") and "are readable" in lines[0]
    result = ecnlab.Result.read(out)
    assert result.summary["complete"] is False
    assert 0 < result.summary["sim_seconds"] < 100
    assert result.tables["queues"].num_rows > 0
    assert not [p for p in out.iterdir() if p.name.startswith(".")]


def test_a_killed_run_leaves_no_file_that_claims_to_be_whole(tmp_path: Path) -> None:
    path = _long_run_file(tmp_path)
    out = tmp_path / "out"
    proc = _cli(["run", str(path), "--out", str(out)])
    _wait_for_temp_files(out, proc)
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=60)
    # Only hidden temporary files: no summary, no table under its final name.
    assert [p.name for p in out.iterdir() if not p.name.startswith(".")] == []
    with pytest.raises(FileNotFoundError):
        ecnlab.Result.read(out)
