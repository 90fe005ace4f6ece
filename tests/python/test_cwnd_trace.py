"""run.trace_cwnd (issue 55): a cwnd.parquet with the named flows' windows,
and none without it."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest

import ecnlab

pytest.importorskip("ecnlab._engine")

# One DCTCP flow on a 10 Gbps star marking above 20 packets, 2 ms.
CFG = {
    "run": {"duration": "2ms"},
    "topology": {"kind": "star", "hosts": 2, "link_rate": "10Gbps", "link_delay": "5us"},
    "switch": {"marking": "per-queue", "threshold": "20pkt"},
    "transport": {"cc": "dctcp"},
    "flows": [{"src": 0, "dst": 1}],
}


def test_a_traced_flow_gets_its_window_rows(tmp_path: Path) -> None:
    cfg = {**CFG, "run": {**CFG["run"], "trace_cwnd": [0]}}
    ecnlab.run(cfg, out=tmp_path / "on", progress=False)
    rows = pq.read_table(tmp_path / "on" / "cwnd.parquet").to_pylist()
    assert list(rows[0]) == ["time", "flow", "cwnd", "ssthresh"]
    # The first row: transport.init_cwnd's 10 segments as the first data leave.
    assert rows[0]["flow"] == 0 and rows[0]["cwnd"] == 10.0
    # Each later row is a change, in time order.
    pairs = [(r["cwnd"], r["ssthresh"]) for r in rows]
    assert all(a != b for a, b in zip(pairs, pairs[1:]))
    assert [r["time"] for r in rows] == sorted(r["time"] for r in rows)


def test_no_table_without_it(tmp_path: Path) -> None:
    ecnlab.run(CFG, out=tmp_path / "off", progress=False)
    assert not (tmp_path / "off" / "cwnd.parquet").exists()
    with pytest.raises(ecnlab.ConfigError, match=r"run.trace_cwnd\[0\] = 1: no such flow"):
        ecnlab.run({**CFG, "run": {**CFG["run"], "trace_cwnd": [1]}}, progress=False)
