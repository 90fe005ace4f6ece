"""Slowdown statistics, the store index's slowdown columns and the figure
metric, on hand-made flows tables (no engine needed)."""

from __future__ import annotations

import io
import math
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ecnlab.reproduce.metrics import PointView, metric
from ecnlab.slowdown import SLOWDOWN_KEYS, has_slowdown, slowdown_stats
from ecnlab.sweep.store import PointRecord, Store, summary_row

NAN = float("nan")


def flows() -> pa.Table:
    # Five small sized flows (slowdowns 1..5), one medium (8), one large
    # (20), one unfinished small one, a long-lived and an incast flow.
    return pa.table(
        {
            "size": [1000, 2000, 3000, 50_000, 100_000, 5_000_000, 20_000_000, 700, -1, -1],
            "fct": pa.array([1.0, 2.0, 3.0, 4.0, 5.0, 8.0, 20.0, NAN, NAN, 3.0]),
            "slowdown": pa.array([1.0, 2.0, 3.0, 4.0, 5.0, 8.0, 20.0, NAN, NAN, NAN]),
            "kind": ["sized"] * 8 + ["long", "incast"],
        }
    )


def test_slowdown_stats_by_class() -> None:
    s = slowdown_stats(flows())
    assert list(s) == list(SLOWDOWN_KEYS)
    # Overall: the seven finished sized flows, 1 2 3 4 5 8 20: mean 43/7,
    # median 4; p99 by linear interpolation at rank 0.99 × 6 = 5.94:
    # 8 + 0.94 × (20 − 8) = 19.28.
    assert s["flows"] == 7
    assert s["overall_mean"] == pytest.approx(43 / 7)
    assert s["overall_p50"] == pytest.approx(4.0)
    assert s["overall_p99"] == pytest.approx(19.28)
    # Small (<= 100 KB): 1..5, mean 3, median 3, p99 at rank 3.96: 4.96.
    assert (s["small_mean"], s["small_p50"]) == (pytest.approx(3.0), pytest.approx(3.0))
    assert s["small_p99"] == pytest.approx(4.96)
    assert s["medium_mean"] == s["medium_p99"] == pytest.approx(8.0)
    assert s["large_mean"] == pytest.approx(20.0)


def test_a_class_with_no_flow_is_none_and_old_tables_are_refused() -> None:
    small_only = flows().slice(0, 5)
    assert slowdown_stats(small_only)["large_mean"] is None
    old = flows().drop_columns(["slowdown"])
    assert not has_slowdown(old)
    with pytest.raises(ValueError, match="slowdown"):
        slowdown_stats(old)


def test_the_index_row_has_slowdown_columns() -> None:
    summary = {"fct": {"small_p99": 0.5}, "slowdown": {"overall_mean": 2.5, "large_mean": None}}
    assert summary_row(summary) == {
        "fct_small_p99": 0.5,
        "slowdown_overall_mean": 2.5,
        "slowdown_large_mean": None,
    }


def test_the_slowdown_figure_metric(tmp_path: Path) -> None:
    store = Store(tmp_path / "store")
    buf = io.BytesIO()
    pq.write_table(flows(), buf)
    summary = {"slowdown": slowdown_stats(flows())}
    record = PointRecord("k1", "", {}, "ok", "", 0.0, "test", "", summary_row(summary))
    store.commit(record, {"flows.parquet": buf.getvalue()})
    row = store.index().to_pylist()[0]
    # The index column and the derived metric agree; the derived one takes
    # any size range and percentile.
    p = PointView(store, "k1", row)
    assert metric(p, "slowdown_small_p99", {}) == pytest.approx(4.96)
    assert metric(p, "slowdown", {"stat": "p99", "size_max": 100_000}) == pytest.approx(4.96)
    assert metric(p, "slowdown", {}) == pytest.approx(43 / 7)
    assert metric(p, "slowdown", {"stat": "p50", "size_min": 1_000_000}) == pytest.approx(14.0)
    assert math.isnan(metric(p, "slowdown", {"size_min": 10**9}))


def test_the_slowdown_by_size_curve(tmp_path: Path) -> None:
    # The HPCC paper's FCT plot as its simulator's analysis/fct_analysis.py
    # draws it: finished sized flows sorted by size into groups of equal
    # count, a statistic of each group's slowdown (below 1 counted as 1), at
    # the group's largest size. Flows 0-1 are [[flows]] entries (an incast,
    # slowdown 50), left out; then 20 workload flows of 100..2000 B, given
    # out of order, whose slowdown is 0.5 up to 1 KB and size/100 above;
    # an unfinished one and a long-lived one never count.
    from ecnlab.reproduce.metrics import curve

    sizes = [500_000, 500_000] + [100 * i for i in (7, 3, 20, 1, 12, 9, 15, 4, 18, 6)]
    sizes += [100 * i for i in (2, 11, 19, 5, 14, 8, 17, 10, 13, 16)] + [300, -1]
    slow = [50.0, 50.0] + [0.5 if s <= 1000 else s / 100 for s in sizes[2:22]] + [NAN, NAN]
    t = pa.table(
        {
            "id": list(range(len(sizes))),
            "size": sizes,
            "slowdown": pa.array(slow),
            "kind": ["sized"] * 23 + ["long"],
        }
    )
    store = Store(tmp_path / "store")
    buf = io.BytesIO()
    pq.write_table(t, buf)
    record = PointRecord("k1", "", {}, "ok", "", 0.0, "test", "", {})
    store.commit(
        record, {"flows.parquet": buf.getvalue(), "config.json": b'{"flows": [{"count": 2}]}'}
    )
    p = PointView(store, "k1", store.index().to_pylist()[0])
    x, y = curve(p, "slowdown_by_size", {"stat": "p50", "bins": 4})
    # Groups of 5: 100-500 and 600-1000 B (all clamped to 1), 1100-1500 B
    # (11..15, median 13), 1600-2000 B (16..20, median 18).
    assert list(x) == [500, 1000, 1500, 2000]
    assert list(y) == pytest.approx([1.0, 1.0, 13.0, 18.0])
    # With the [[flows]] entries counted, the two 500 KB flows form the top
    # of the last group (22 flows in 4 groups: 5, 6, 5, 6).
    x, y = curve(p, "slowdown_by_size", {"stat": "mean", "bins": 4, "workload_only": False})
    assert x[-1] == 500_000 and y[-1] == pytest.approx((17 + 18 + 19 + 20 + 50 + 50) / 6)
