"""FCT statistics (ecnlab.fct), summary["fct"] and `ecnlab fct`, on hand-built tables."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import ecnlab
from conftest import FakeEngine
from ecnlab.cli import main
from ecnlab.fct import FCT_KEYS, fct_stats, mss_from_config, normalize

NAN = float("nan")
MS = 1e-3


def flows_table(
    sizes: Sequence[int],
    fcts: Sequence[float],
    kinds: Sequence[str] | None = None,
    timeouts: Sequence[int] | None = None,
) -> pa.Table:
    """A flows table with the engine's columns and types."""
    n = len(sizes)
    kinds = ["sized"] * n if kinds is None else list(kinds)
    timeouts = [0] * n if timeouts is None else list(timeouts)
    starts = [0.001 * i for i in range(n)]
    u32, u64 = pa.uint32(), pa.uint64()
    return pa.table(
        {
            "id": pa.array(range(n), u32),
            "src": pa.array([0] * n, u32),
            "dst": pa.array([1] * n, u32),
            "service": pa.array([0] * n, u32),
            "size": pa.array(sizes, pa.int64()),
            "start": pa.array(starts, pa.float64()),
            "finish": pa.array([s + f for s, f in zip(starts, fcts)], pa.float64()),
            "fct": pa.array(fcts, pa.float64()),
            "bytes_received": pa.array([max(s, 0) for s in sizes], u64),
            "timeouts": pa.array(timeouts, u32),
            "retransmits": pa.array([0] * n, u32),
            "ce_marks": pa.array([0] * n, u32),
            "drops": pa.array([0] * n, u32),
            "kind": pa.array(kinds, pa.string()),
        }
    )


# --------------------------------------------------------------------------- fct_stats


def test_throughput_and_marks_by_class() -> None:
    """ML-ECN §IV-B: each flow's size/FCT, then the mean (not total bytes over
    total time); §IV-C: CE marks summed per class, unfinished flows included."""
    table = flows_table([50_000, 100_000, 1_000_000, 20_000_000], [1 * MS, 4 * MS, 8 * MS, NAN])
    table = table.set_column(
        table.column_names.index("ce_marks"), "ce_marks", pa.array([0, 2, 5, 7], pa.uint32())
    )
    stats = fct_stats(table)
    # 50 KB in 1 ms = 400 Mbps, 100 KB in 4 ms = 200 Mbps: mean 300 Mbps
    # (total bytes over total time would give 240 Mbps).
    assert stats["small_tput"] == pytest.approx(300e6)
    assert stats["medium_tput"] == pytest.approx(1e6 * 8 / 8 / MS)
    assert stats["large_tput"] is None  # its one flow is unfinished
    assert stats["overall_tput"] == pytest.approx((400e6 + 200e6 + 1e9) / 3)
    # FQ-CoDel in the DCN §IV-A: mean size in bits over mean FCT, finished
    # flows only: (50 KB + 100 KB + 1 MB)·8 / 3 over (1 + 4 + 8) ms / 3 =
    # 9.2 Mbit / 13 ms ≈ 708 Mbps, below the mean of rates above.
    assert stats["mean_tput"] == pytest.approx(1.15e6 * 8 / (13 * MS))
    # Rate-limited flows are not sized flows: they leave every measure alone.
    streams = flows_table(
        [50_000, 100_000, 1_000_000, 20_000_000, 1460],
        [1 * MS, 4 * MS, 8 * MS, NAN, 9 * MS],
        kinds=["sized"] * 4 + ["rate-limited"],
    )
    assert fct_stats(streams)["mean_tput"] == pytest.approx(stats["mean_tput"])
    assert fct_stats(streams)["one_packet_flows"] == 0
    assert (stats["small_marks"], stats["medium_marks"], stats["large_marks"]) == (2, 5, 7)
    assert fct_stats(table.drop(["ce_marks"]))["small_marks"] is None


def test_class_boundaries_are_si_and_inclusive_above() -> None:
    sizes = [1_460, 1_461, 100_000, 100_001, 10_000_000, 10_000_001]
    fcts = [1 * MS, 2 * MS, 3 * MS, 4 * MS, 5 * MS, 6 * MS]
    stats = fct_stats(flows_table(sizes, fcts))
    assert list(stats) == list(FCT_KEYS)
    assert stats["one_packet_flows"] == 1
    assert stats["one_packet_mean"] == pytest.approx(1 * MS)
    assert stats["small_flows"] == 3  # 1460, 1461, exactly 100 KB
    assert stats["small_mean"] == pytest.approx(2 * MS)
    assert stats["medium_flows"] == 2  # 100,001 B and exactly 10 MB
    assert stats["medium_mean"] == pytest.approx(4.5 * MS)
    assert stats["large_flows"] == 1
    assert stats["large_mean"] == pytest.approx(6 * MS)
    assert stats["overall_mean"] == pytest.approx(3.5 * MS)
    assert stats["flows"] == 6 and stats["unfinished"] == 0 and stats["timeouts"] == 0


def test_mss_parameter_sets_one_packet_class() -> None:
    table = flows_table([1_000, 1_460, 1_461, 9_000], [MS, MS, MS, MS])
    assert fct_stats(table)["one_packet_flows"] == 2
    assert fct_stats(table, mss=9_000)["one_packet_flows"] == 4
    assert fct_stats(table, mss=1_000)["one_packet_flows"] == 1
    with pytest.raises(ValueError, match="mss"):
        fct_stats(table, mss=0)


def test_only_sized_flows_count() -> None:
    table = flows_table(
        [-1, 50_000, 20_000, 30_000],
        [NAN, 1 * MS, 9 * MS, 3 * MS],
        kinds=["long", "incast", "sized", "sized"],
        timeouts=[7, 5, 1, 2],
    )
    stats = fct_stats(table)
    assert stats["flows"] == 2
    assert stats["unfinished"] == 0
    assert stats["timeouts"] == 3
    assert stats["overall_mean"] == pytest.approx(6 * MS)
    assert stats["small_flows"] == 2


def test_unfinished_flows_are_counted_but_left_out_of_means() -> None:
    table = flows_table(
        [10_000, 10_000, 10_000, 1_000_000, 1_000_000],
        [1 * MS, 3 * MS, NAN, NAN, NAN],
        timeouts=[0, 1, 4, 2, 0],
    )
    stats = fct_stats(table)
    assert stats["flows"] == 5
    assert stats["unfinished"] == 3
    assert stats["timeouts"] == 7  # unfinished flows' timeouts still count
    assert stats["small_flows"] == 3 and stats["medium_flows"] == 2
    assert stats["small_mean"] == pytest.approx(2 * MS)
    assert stats["overall_mean"] == pytest.approx(2 * MS)
    assert stats["medium_mean"] is None  # every medium flow unfinished
    assert stats["large_mean"] is None and stats["large_flows"] == 0


def test_null_fct_counts_as_unfinished() -> None:
    table = flows_table([10_000, 10_000], [MS, MS])
    table = table.set_column(
        table.column_names.index("fct"), "fct", pa.array([2 * MS, None], pa.float64())
    )
    stats = fct_stats(table)
    assert stats["unfinished"] == 1
    assert stats["small_mean"] == pytest.approx(2 * MS)


def test_no_sized_flows_gives_nones_and_zeros() -> None:
    stats = fct_stats(flows_table([-1], [NAN], kinds=["long"]))
    assert all(stats[key] is None for key in FCT_KEYS if key.endswith(("_mean", "_p99", "_p999")))
    assert stats["flows"] == 0 and stats["timeouts"] == 0 and stats["small_flows"] == 0
    assert fct_stats(flows_table([], []))["overall_mean"] is None


def test_small_percentiles_are_linear() -> None:
    fcts = [i * MS for i in range(1, 101)]  # 1 ms .. 100 ms
    stats = fct_stats(flows_table([5_000] * 100, fcts))
    assert stats["small_mean"] == pytest.approx(50.5 * MS)
    assert stats["small_p99"] == pytest.approx(99.01 * MS)  # 1 + 0.99 * 99
    assert stats["small_p999"] == pytest.approx(99.901 * MS)  # 1 + 0.999 * 99
    single = fct_stats(flows_table([5_000], [7 * MS]))
    assert single["small_p99"] == pytest.approx(7 * MS)


def test_dictionary_kind_and_extra_columns() -> None:
    table = flows_table([10_000, -1], [MS, NAN], kinds=["sized", "long"])
    kind = table.column("kind").dictionary_encode()
    table = table.set_column(table.column_names.index("kind"), "kind", kind)
    table = table.append_column("extra", pa.array([1, 2]))
    assert fct_stats(table)["flows"] == 1


def test_missing_column_is_reported() -> None:
    table = flows_table([10_000], [MS]).drop_columns(["fct", "timeouts"])
    with pytest.raises(ValueError, match="fct, timeouts"):
        fct_stats(table)


def test_stats_are_plain_python_and_json_safe() -> None:
    stats = fct_stats(flows_table([10_000, 200_000], [MS, NAN], timeouts=[1, 0]))
    assert all(v is None or type(v) in (int, float) for v in stats.values())
    json.dumps(stats, allow_nan=False)


# --------------------------------------------------------------------------- normalize


def test_normalize() -> None:
    ours = {"small_mean": 2 * MS, "large_mean": None, "timeouts": 3, "flows": 4, "a": 1.0}
    base = {"small_mean": 4 * MS, "large_mean": 5 * MS, "timeouts": 0, "flows": 4}
    ratios = normalize(ours, base)
    assert ratios == {
        "small_mean": pytest.approx(0.5),
        "large_mean": None,
        "timeouts": None,  # baseline zero
        "flows": 1.0,
        "a": None,  # baseline lacks it
    }


def test_mss_from_config() -> None:
    assert mss_from_config({"transport": {"mss": 9000}}) == 9000
    assert mss_from_config({"transport": {}}) == 1460
    assert mss_from_config({"transport": {"mss": "9000"}}) == 1460
    assert mss_from_config(None) == 1460


# --------------------------------------------------------------------------- runner

RUN_CONFIG: dict[str, Any] = {
    "run": {"seed": 1, "duration": "0.05s", "warmup": "0.01s"},
    "switch": {"queues": 2, "marking": "per-queue"},
}


def test_run_puts_fct_in_summary(fake_engine: FakeEngine, tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = ecnlab.run(RUN_CONFIG, out=out, progress=False)
    written = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    fct = written["fct"]
    assert fct == result.summary["fct"]
    assert fct["flows"] == 1  # the stand-in's one sized flow: 15,000 B in 1 ms
    assert fct["small_mean"] == pytest.approx(1 * MS)
    assert fct["timeouts"] == 1
    assert fct["large_mean"] is None
    # summary.json is still written last
    mtimes = {p.name: p.stat().st_mtime_ns for p in out.iterdir()}
    assert mtimes["summary.json"] == max(mtimes.values())


def test_run_uses_config_mss(fake_engine: FakeEngine) -> None:
    default = ecnlab.run(RUN_CONFIG, progress=False).summary["fct"]
    assert default["one_packet_flows"] == 0  # the stand-in's sized flow is 15,000 B
    big = ecnlab.run(RUN_CONFIG, overrides=["transport.mss=15000"], progress=False)
    assert big.summary["fct"]["one_packet_flows"] == 1


def test_run_without_sized_flows_has_fct_none(
    fake_engine: FakeEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_tables = fake_engine.tables

    def only_long(duration: float) -> dict[str, Any]:
        tables = real_tables(duration)
        tables["flows"]["kind"] = ["long", "long"]
        return tables

    monkeypatch.setattr(fake_engine, "tables", only_long)
    result = ecnlab.run(RUN_CONFIG, progress=False)
    assert "fct" in result.summary and result.summary["fct"] is None


# --------------------------------------------------------------------------- CLI


def write_run(directory: Path, table: pa.Table, mss: int | None = None) -> Path:
    directory.mkdir(parents=True)
    pq.write_table(table, directory / "flows.parquet")
    if mss is not None:
        config = {"transport": {"mss": mss}}
        (directory / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return directory


LARGE = 20_000_000  # the large flow finishes only in the baseline


@pytest.fixture
def two_runs(tmp_path: Path) -> tuple[Path, Path]:
    ours = write_run(
        tmp_path / "ours",
        flows_table([1_000, 50_000, 2_000_000, LARGE], [0.2 * MS, 0.5 * MS, 4 * MS, NAN]),
    )
    base = write_run(
        tmp_path / "base",
        flows_table([1_000, 50_000, 2_000_000, LARGE], [0.4 * MS, 1 * MS, 2 * MS, 9 * MS]),
    )
    return ours, base


def table_rows(out: str) -> dict[str, list[str]]:
    """Map each metric label of `ecnlab fct`'s first table to the rest of its row."""
    rows: dict[str, list[str]] = {}
    for line in out.splitlines()[1:]:
        if not line.strip():
            break  # the percentiles follow, after a blank line
        cells = [c.strip() for c in line.strip().split("   ") if c.strip()]
        rows[cells[0]] = cells[1:]
    return rows


def test_cli_table(two_runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    ours, _ = two_runs
    assert main(["fct", str(ours)]) == 0
    out = capsys.readouterr().out
    assert str(ours) in out.splitlines()[0]
    rows = table_rows(out)
    assert rows["overall mean"] == ["1.567 ms"]  # (0.2 + 0.5 + 4) / 3
    assert rows["small mean"] == ["350.0 us"]
    assert rows["small p99"] == ["497.0 us"]
    assert rows["small p99.9"] == ["499.7 us"]
    assert rows["medium mean"] == ["4.000 ms"]
    assert rows["large mean"] == ["-"]
    assert rows["1-packet mean"] == ["200.0 us"]
    assert rows["timeouts"] == ["0"]
    assert rows["flows"] == ["4"]
    assert rows["unfinished"] == ["1"]


def test_cli_baseline_normalizes(
    two_runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    ours, base = two_runs
    assert main(["fct", str(ours), "--baseline", str(base)]) == 0
    rows = table_rows(capsys.readouterr().out)
    assert rows["metric"] == ["ours", "baseline", "normalized"]
    assert rows["small mean"] == ["350.0 us", "700.0 us", "0.500"]
    assert rows["medium mean"] == ["4.000 ms", "2.000 ms", "2.000"]
    assert rows["large mean"] == ["-", "9.000 ms", "-"]
    assert rows["unfinished"] == ["1", "0", "-"]
    assert rows["flows"] == ["4", "4", "1.000"]


def test_cli_json(two_runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    ours, base = two_runs
    assert main(["fct", str(ours), "--json"]) == 0
    alone = json.loads(capsys.readouterr().out)
    assert alone["dir"] == str(ours)
    assert alone["fct"]["small_mean"] == pytest.approx(0.35 * MS)
    assert "normalized" not in alone
    assert main(["fct", str(ours), "--baseline", str(base), "--json"]) == 0
    both = json.loads(capsys.readouterr().out)
    assert both["baseline"]["fct"]["large_mean"] == pytest.approx(9 * MS)
    assert both["normalized"]["small_mean"] == pytest.approx(0.5)
    assert both["normalized"]["large_mean"] is None
    # The run's drop rate (summary.json, when the run has one) joins them.
    assert set(both["normalized"]) == set(FCT_KEYS) | {"drop_rate"}


def test_cli_reads_mss_from_config_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = write_run(tmp_path / "jumbo", flows_table([9_000], [MS]), mss=9_000)
    assert main(["fct", str(run_dir), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["fct"]["one_packet_flows"] == 1


def one_error_line(err: str) -> str:
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("ecnlab: error: "), err
    return lines[0]


def test_cli_missing_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fct", str(tmp_path / "nowhere")]) == 2
    captured = capsys.readouterr()
    assert "nowhere: no such directory" in one_error_line(captured.err)
    assert captured.out == ""


def test_cli_missing_flows_file(
    tmp_path: Path, two_runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["fct", str(empty)]) == 2
    assert "flows.parquet: no such file" in one_error_line(capsys.readouterr().err)
    ours, _ = two_runs
    assert main(["fct", str(ours), "--baseline", str(empty)]) == 2
    captured = capsys.readouterr()
    assert "empty" in one_error_line(captured.err)
    assert captured.out == ""


def test_cli_bad_flows_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "flows.parquet").write_bytes(b"not parquet")
    assert main(["fct", str(broken)]) == 2
    assert "flows.parquet" in one_error_line(capsys.readouterr().err)
    partial = write_run(tmp_path / "partial", flows_table([1], [MS]).drop_columns(["kind"]))
    assert main(["fct", str(partial)]) == 2
    assert "kind" in one_error_line(capsys.readouterr().err)


@pytest.mark.parametrize("argv", [["fct"], ["fct", "a", "--baseline"], ["fct", "a", "--bogus"]])
def test_cli_bad_arguments(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    one_error_line(capsys.readouterr().err)
