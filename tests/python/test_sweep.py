"""Sweeps and the result store: parsing, keys, bad input, partial failure.
(Interruption and Dask equivalence: tests/scenarios/test_sweep_resume.py.)"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from ecnlab.cli import main
from ecnlab.errors import ConfigError
from ecnlab.runner import load_engine
from ecnlab.sweep import load_sweep, point_key, resolve_points, run_sweep
from ecnlab.sweep.store import Store, StoreError

# A tiny experiment: two sized flows on a 10G star, ends when both finish.
BASE: dict[str, Any] = {
    "run": {"seed": 1, "sample_ports": "none"},
    "topology": {"kind": "star", "hosts": 3, "link_rate": "10Gbps", "link_delay": "5us"},
    "switch": {"queues": 2, "marking": "per-queue", "threshold": "20pkt"},
    "flows": [
        {"src": 0, "dst": 2, "size": "200KB", "service": 0},
        {"src": 1, "dst": 2, "size": "200KB", "service": 1},
    ],
}


def spec(**extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"base": BASE, "grid": {"run.seed": [1, 2]}}
    out.update(extra)
    return out


def one_error_line(err: str) -> str:
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("ecnlab: error: "), err
    return lines[0]


def write_sweep(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "sweep.toml"
    base = tmp_path / "base.toml"
    base.write_text(
        '[run]\nseed = 1\nsample_ports = "none"\n[topology]\nkind = "star"\nhosts = 3\n'
        'link_rate = "10Gbps"\nlink_delay = "5us"\n[switch]\nqueues = 2\nmarking = "per-queue"\n'
        'threshold = "20pkt"\n[[flows]]\nsrc = 0\ndst = 2\nsize = "100KB"\n',
        encoding="utf-8",
    )
    path.write_text('base = "base.toml"\n' + text, encoding="utf-8")
    return path


# ------------------------------------------------------------------ parsing


def test_points_are_cases_crossed_with_the_grid() -> None:
    s = load_sweep(
        spec(
            grid={"run.seed": [1, 2], "switch.threshold": ["10pkt", "20pkt", "30pkt"]},
            case=[
                {"label": "a", "switch.marking": "per-queue"},
                {"label": "b", "switch.marking": "per-port"},
            ],
        )
    )
    points = s.points()
    assert len(points) == 2 * 2 * 3
    assert [p.case for p in points[:6]] == ["a"] * 6
    assert points[0].params == {
        "switch.marking": "per-queue",
        "run.seed": 1,
        "switch.threshold": "10pkt",
    }
    assert points[-1].config["switch"]["threshold"] == "30pkt"
    assert points[-1].config["switch"]["marking"] == "per-port"
    assert BASE["switch"]["marking"] == "per-queue"  # the base is never changed
    assert s.quick().grid == s.grid  # no [quick]: the same sweep


def test_quick_replaces_grid_values_and_sets() -> None:
    s = load_sweep(spec(quick={"set": {"flows.0.size": "50KB"}, "grid": {"run.seed": [7]}}))
    q = s.quick().points()
    assert len(q) == 1 and q[0].params["run.seed"] == 7
    assert q[0].config["flows"][0]["size"] == "50KB"


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"grid": {}}, "empty grid"),
        ({"grid": {"run.seed": []}}, "empty list"),
        ({"grid": {"run.seed": 3}}, "expected a list of values"),
        ({"grdi": {}}, "unknown key 'grdi'"),
        ({"case": [{"label": "x", "run.seed": 2}]}, "both a grid key and set by case"),
        ({"case": [{"label": "x", "a.b": 1}, {"label": "x", "a.c": 1}]}, "used by another case"),
        ({"case": [{"label": "x"}]}, "sets nothing"),
        ({"quick": {"grids": {}}}, "quick.grids: unknown key"),
    ],
)
def test_malformed_sweeps_are_one_line_errors(extra: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_sweep(spec(**extra))
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def test_nothing_to_sweep() -> None:
    with pytest.raises(ConfigError, match="nothing to sweep"):
        load_sweep({"base": BASE})


# ------------------------------------------------------------------ keys


def test_two_spellings_of_one_run_share_a_key() -> None:
    engine = load_engine()
    a = load_sweep(spec(grid={"switch.threshold": ["20pkt"]}))
    b = load_sweep(spec(grid={"topology.link_delay": ["5000ns"]}))  # same run, spelled otherwise
    c = load_sweep(spec(grid={"switch.threshold": ["21pkt"]}))
    keys = []
    for s in (a, b, c):
        points = s.points()
        resolve_points(s, points, engine)
        keys.append(points[0].key)
    assert keys[0] == keys[1] != keys[2]
    # The engine version is part of the key.
    points = a.points()
    resolve_points(a, points, engine)
    assert point_key(points[0].resolved, "other-engine") != keys[0]


def test_a_csv_distribution_is_keyed_by_its_contents(tmp_path: Path) -> None:
    csv = tmp_path / "d.csv"
    csv.write_text("size_bytes,cdf\n1000,0.5\n2000,1\n", encoding="utf-8")
    cfg = json.dumps({"workload": {"distributions": [str(csv)]}})
    k1 = point_key(cfg, "e")
    csv.write_text("size_bytes,cdf\n1000,0.5\n3000,1\n", encoding="utf-8")
    assert point_key(cfg, "e") != k1


# ------------------------------------------------------------------ running


def test_sweep_runs_each_point_once_and_indexes_it(tmp_path: Path) -> None:
    s = load_sweep(
        spec(
            case=[
                {"label": "pq", "switch.marking": "per-queue"},
                {"label": "pp", "switch.marking": "per-port"},
            ]
        )
    )
    first = run_sweep(s, tmp_path / "st", workers=1, progress=False)
    assert (first.total, first.already, first.ran, first.failed) == (4, 0, 4, [])
    again = run_sweep(s, tmp_path / "st", workers=1, progress=False)
    assert (again.already, again.ran) == (4, 0)
    index = pq.read_table(tmp_path / "st" / "points.parquet")
    assert index.num_rows == 4
    rows = index.to_pylist()
    assert {r["case"] for r in rows} == {"pq", "pp"}
    assert {r["run.seed"] for r in rows} == {1, 2}
    assert all(r["status"] == "ok" and r["flows_completed"] == 2 for r in rows)
    # Each point's tables are there, with the run's own summary.
    st = Store(tmp_path / "st", create=False)
    for r in rows:
        assert st.summary(r["key"])["flows_completed"] == 2
        assert st.table(r["key"], "flows").num_rows == 2


def test_a_bad_cell_fails_alone_and_the_exit_status_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_sweep(tmp_path, '[grid]\n"switch.threshold" = ["20pkt", "-3pkt"]\n')
    assert main(["sweep", str(path), "--out", str(tmp_path / "st"), "--workers", "1"]) == 1
    out, err = capsys.readouterr()
    assert "2 points: 0 already in the store, 1 run, 1 failed" in out
    assert "switch.threshold" in err and "-3pkt" in err
    index = pq.read_table(tmp_path / "st" / "points.parquet").to_pylist()
    assert sorted(r["status"] for r in index) == ["failed", "ok"]
    failed = next(r for r in index if r["status"] == "failed")
    assert failed["switch.threshold"] == "-3pkt" and "must not be negative" in failed["error"]


@pytest.mark.parametrize(
    ("sweep_text", "message"),
    [
        ('[grid]\n"switch.treshold" = ["20pkt"]\n', "unknown key 'switch.treshold'"),
        ("[grid]\n", "empty grid"),
        ('[grid]\n"switch.threshold" = [20]\n', "every point is rejected"),
        ('[grid]\n"run.seed" = 1\n', "expected a list of values"),
    ],
)
def test_bad_sweeps_exit_2_and_write_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], sweep_text: str, message: str
) -> None:
    path = write_sweep(tmp_path, sweep_text)
    store = tmp_path / "st"
    assert main(["sweep", str(path), "--out", str(store)]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert message in line
    assert not store.exists()


@pytest.mark.parametrize(
    ("key", "fragments"),
    [
        # Issue 28: a valid key the resolved form leaves out while unset
        # (connections) is offered, from the engine's declared keys.
        (
            "workload.conections",
            [
                "unknown key 'workload.conections'",
                "did you mean 'workload.connections'?",
                "connections",
            ],
        ),
        ("switch.treshold", ["did you mean 'switch.threshold'?", "`ecnlab keys switch`"]),
        ("switch.stages", ["[switch] has no 'stages'", "it is a key of [host]: 'host.stages'"]),
        ("swtich.queues", ["the top level has no 'swtich'", "did you mean 'switch'?"]),
    ],
)
def test_an_unknown_sweep_key_gets_the_declared_keys_and_did_you_mean(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], key: str, fragments: list[str]
) -> None:
    path = write_sweep(tmp_path, f'[grid]\n"{key}" = ["per-pair"]\n')
    base = tmp_path / "base.toml"
    base.write_text(
        base.read_text(encoding="utf-8").split("[[flows]]")[0]
        + '[workload]\nkind = "poisson"\nload = 0.5\nflows = 10\n',
        encoding="utf-8",
    )
    assert main(["sweep", str(path), "--out", str(tmp_path / "st")]) == 2
    line = one_error_line(capsys.readouterr().err)
    for f in fragments:
        assert f in line, line


def test_a_store_path_that_is_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_sweep(tmp_path, '[grid]\n"run.seed" = [1]\n')
    (tmp_path / "file").write_text("x")
    assert main(["sweep", str(path), "--out", str(tmp_path / "file")]) == 2
    assert "is a file, not a store directory" in one_error_line(capsys.readouterr().err)
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("mine")
    assert main(["sweep", str(path), "--out", str(tmp_path / "other")]) == 2
    assert "is not an ecnlab store" in one_error_line(capsys.readouterr().err)
    assert sorted(p.name for p in (tmp_path / "other").iterdir()) == ["notes.txt"]


def test_a_dask_address_that_does_not_answer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_sweep(tmp_path, '[grid]\n"run.seed" = [1]\n')
    store = tmp_path / "st"
    status = main(["sweep", str(path), "--out", str(store), "--scheduler", "tcp://127.0.0.1:9"])
    assert status == 2
    assert "no Dask scheduler answers" in one_error_line(capsys.readouterr().err)
    assert not store.exists()
    assert main(["sweep", str(path), "--out", str(store), "--scheduler", "nonsense"]) == 2
    assert 'expected "local" or an address' in one_error_line(capsys.readouterr().err)


def test_two_sweeps_cannot_write_one_store(tmp_path: Path) -> None:
    st = Store(tmp_path / "st")
    with st.locked(), pytest.raises(StoreError, match="in use by another sweep"):
        with Store(tmp_path / "st").locked():
            pass


def test_store_command_prints_what_is_there(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_sweep(tmp_path, '[grid]\n"run.seed" = [1, 2]\n')
    assert main(["sweep", str(path), "--out", str(tmp_path / "st"), "--workers", "1", "-q"]) == 0
    assert main(["store", str(tmp_path / "st")]) == 0
    out = capsys.readouterr().out
    assert "2 points, 0 failed" in out and "run.seed: 1, 2" in out and "flows, goodput" in out
    from ecnlab.engine_build import build_identity

    assert f"builds     {build_identity()}: 2" in out  # both made by this build
    assert main(["store", str(tmp_path / "nowhere")]) == 2


def test_readme_one_liners_read_the_store(tmp_path: Path) -> None:
    """docs/guide/sweeps.md: the index and every point's table, one line each in pandas,
    DuckDB and polars, with the point key as a column."""
    path = write_sweep(tmp_path, '[grid]\n"run.seed" = [1, 2, 3]\n')
    store = tmp_path / "st"
    assert main(["sweep", str(path), "--out", str(store), "--workers", "1", "-q"]) == 0
    pd = pytest.importorskip("pandas")
    duckdb = pytest.importorskip("duckdb")
    pl = pytest.importorskip("polars")
    assert len(pd.read_parquet(store / "points.parquet")) == 3
    flows = duckdb.sql(
        f"SELECT key, count(*) AS n FROM read_parquet('{store}/points/*/flows.parquet', "
        "hive_partitioning=true) GROUP BY key"
    ).fetchall()
    assert len(flows) == 3 and all(n == 1 for _, n in flows)
    lazy = pl.scan_parquet(f"{store}/points/*/flows.parquet", hive_partitioning=True)
    assert lazy.select(pl.col("key").n_unique()).collect().item() == 3
