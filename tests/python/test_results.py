"""Raw-column conversion and result storage (no engine needed)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import ecnlab.runner.result as result_mod
from conftest import raw_numeric, sample_raw_tables
from ecnlab._atomic import atomic_write
from ecnlab.runner.columns import column_to_arrow, tables_from_raw
from ecnlab.runner.result import Result, find_port

SUMMARY = {
    "events": 1234,
    "wall_seconds": 0.5,
    "goodput_gbps_by_service": {"1": 6.0, "0": 4.0},
    "incast_goodput_gbps": None,
    "nan_value": math.nan,
}


def assert_tables_equal(a: pa.Table, b: pa.Table) -> None:
    """Equal schema and values, counting NaN as equal to NaN."""
    assert a.schema == b.schema
    for name in a.column_names:
        left, right = a.column(name), b.column(name)
        if pa.types.is_floating(left.type):
            np.testing.assert_array_equal(left.to_numpy(), right.to_numpy())
        else:
            assert left.to_pylist() == right.to_pylist(), name


def make_result(config: dict | None = None) -> Result:
    raw = {"summary": dict(SUMMARY), "tables": sample_raw_tables()}
    return Result.from_raw(raw, config=config)


# --------------------------------------------------------------------------- conversion


@pytest.mark.parametrize(
    ("code", "values", "arrow_type"),
    [
        ("u8", [0, 255], pa.uint8()),
        ("u32", [0, 2**32 - 1], pa.uint32()),
        ("u64", [0, 2**64 - 1], pa.uint64()),
        ("i64", [-1, 2**62], pa.int64()),
        ("f64", [0.5, -1e300], pa.float64()),
    ],
)
def test_numeric_columns(code: str, values: list, arrow_type: pa.DataType) -> None:
    array = column_to_arrow(raw_numeric(code, values), "c")
    assert array.type == arrow_type
    assert array.to_pylist() == values


def test_nan_stays_nan_and_not_null() -> None:
    array = column_to_arrow(raw_numeric("f64", [math.nan, 1.0]))
    assert array.null_count == 0
    assert math.isnan(array.to_pylist()[0])


def test_string_and_empty_columns() -> None:
    assert column_to_arrow(["long", "incast"]).to_pylist() == ["long", "incast"]
    assert column_to_arrow([]).type == pa.string()
    empty = column_to_arrow(("u32", b""))
    assert empty.type == pa.uint32() and len(empty) == 0


def test_bytes_like_payloads() -> None:
    data = np.array([1, 2, 3], dtype="<u4").tobytes()
    assert column_to_arrow(("u32", bytearray(data))).to_pylist() == [1, 2, 3]
    assert column_to_arrow(("u32", memoryview(data))).to_pylist() == [1, 2, 3]


@pytest.mark.parametrize(
    ("column", "fragment"),
    [
        (("u16", b"\x00\x00"), "unknown dtype 'u16'"),
        (("u32", b"\x00\x00\x00"), "not a whole number"),
        (["a", 1], "only strings"),
        (42, "expected (dtype, bytes)"),
    ],
)
def test_bad_columns(column: object, fragment: str) -> None:
    with pytest.raises(ValueError) as info:
        column_to_arrow(column, "flows.x")
    assert fragment in str(info.value)
    assert "flows.x" in str(info.value)


def test_tables_keep_column_order_and_check_lengths() -> None:
    tables = tables_from_raw(sample_raw_tables())
    assert tables["flows"].column_names[:3] == ["id", "src", "dst"]
    assert tables["flows"].column_names[-1] == "kind"
    assert tables["rtt"].num_rows == 0
    with pytest.raises(ValueError, match="differ in length"):
        tables_from_raw({"t": {"a": raw_numeric("u32", [1]), "b": raw_numeric("u32", [1, 2])}})


def test_result_helpers() -> None:
    result = make_result()
    assert result.goodput_by_service == {0: 4.0, 1: 6.0}
    assert list(result.goodput_by_service) == [0, 1]
    assert result["flows"] is result.tables["flows"]
    assert result.column("flows", "size").tolist() == [-1, 15000]
    assert result.column("flows", "kind").tolist() == ["long", "sized"]
    assert result.port("switch", "host2") == 2
    with pytest.raises(KeyError, match="no table 'nope'"):
        result.table("nope")
    assert "flows[2]" in repr(result)


def test_find_port_errors() -> None:
    ports = tables_from_raw(sample_raw_tables())["ports"]
    assert find_port(ports, "switch", "host0") == 0
    with pytest.raises(LookupError, match="no port"):
        find_port(ports, "switch", "host9")
    duplicated = pa.table(
        {"port": [1, 4], "node": ["switch", "switch"], "peer": ["host0", "host0"]}
    )
    with pytest.raises(LookupError, match="several ports"):
        find_port(duplicated, "switch", "host0")


# --------------------------------------------------------------------------- writing


def test_write_creates_every_file(tmp_path: Path) -> None:
    result = make_result(config={"run": {"seed": 1}})
    out = result.write(tmp_path / "a" / "b")
    assert out == tmp_path / "a" / "b"
    assert result.out == out
    names = sorted(p.name for p in out.iterdir())
    expected = sorted([f"{t}.parquet" for t in result.tables] + ["summary.json", "config.json"])
    assert names == expected
    flows = pq.read_table(out / "flows.parquet")
    assert_tables_equal(flows, result.tables["flows"])
    meta = pq.ParquetFile(out / "flows.parquet").metadata
    column = meta.row_group(0).column(0)
    assert column.compression == "ZSTD"
    assert column.statistics is not None and column.statistics.has_min_max


def test_summary_json_format(tmp_path: Path) -> None:
    make_result().write(tmp_path)
    text = (tmp_path / "summary.json").read_text(encoding="utf-8")
    assert text.endswith("}\n")
    assert not text.endswith("\n\n")
    data = json.loads(text)  # strict JSON: NaN was written as null
    assert data["nan_value"] is None
    assert data["incast_goodput_gbps"] is None
    assert text == json.dumps(data, indent=2, sort_keys=True) + "\n"


def test_write_is_byte_identical(tmp_path: Path) -> None:
    first, second = tmp_path / "one", tmp_path / "two"
    make_result(config={"b": 1, "a": [1, 2]}).write(first)
    make_result(config={"a": [1, 2], "b": 1}).write(second)
    files = sorted(p.name for p in first.iterdir())
    assert files == sorted(p.name for p in second.iterdir())
    for name in files:
        assert (first / name).read_bytes() == (second / name).read_bytes(), name
    # rewriting in place also gives the same bytes
    before = {name: (first / name).read_bytes() for name in files}
    make_result(config={"b": 1, "a": [1, 2]}).write(first)
    assert {name: (first / name).read_bytes() for name in files} == before


def test_no_temporary_files_left(tmp_path: Path) -> None:
    make_result().write(tmp_path)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_interrupted_table_write_leaves_old_file_and_no_temp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = make_result()
    result.write(tmp_path)
    old = (tmp_path / "flows.parquet").read_bytes()

    def half_write(table: pa.Table, where: object, **kwargs: object) -> None:
        where.write(b"PAR1 half a file")  # type: ignore[attr-defined]
        raise KeyboardInterrupt

    monkeypatch.setattr(result_mod.pq, "write_table", half_write)
    with pytest.raises(KeyboardInterrupt):
        result.write(tmp_path)
    assert (tmp_path / "flows.parquet").read_bytes() == old
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_interrupted_first_write_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def failing(table: pa.Table, where: object, **kwargs: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(result_mod.pq, "write_table", failing)
    with pytest.raises(OSError, match="disk full"):
        make_result().write(tmp_path / "run")
    assert list((tmp_path / "run").iterdir()) == []


def test_atomic_write_text_mode(tmp_path: Path) -> None:
    target = tmp_path / "x.txt"
    with atomic_write(target, "w") as handle:
        handle.write("hello\n")
        assert not target.exists()
    assert target.read_bytes() == b"hello\n"
    with pytest.raises(ValueError):
        with atomic_write(target, "a"):
            pass


def test_read_round_trip(tmp_path: Path) -> None:
    result = make_result(config={"run": {"seed": 1}})
    result.write(tmp_path)
    loaded = Result.read(tmp_path)
    assert loaded.out == tmp_path
    assert loaded.config == {"run": {"seed": 1}}
    assert loaded.summary["events"] == 1234
    assert set(loaded.tables) == set(result.tables)
    for name, table in result.tables.items():
        assert_tables_equal(loaded.tables[name], table)


def test_read_incomplete_directory(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="summary.json"):
        Result.read(tmp_path)
