"""Converted HPCC-simulator runs (``ecnlab import-hpcc``), run end to end:
the 8:1 DCQCN incast resolves to the keys of ecnlab's hand-written
comparisons (bench/dcqcn_incast.toml for the transport and marking,
bench/hpcc_pfc/compare.py for the peer's MMU), and the 1 MB incast's flow
completion times match the peer's own FCT file. Inputs: tests/data/hpcc/."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import ecnlab
from ecnlab.peers.hpcc import import_hpcc
from ecnlab.peers.hpcc_fct import compare_fct, read_fct
from ecnlab.runner.engine import resolve
from scenario_kit import run_checked

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "hpcc"


def bench_pfc_config(n: int, kib: int) -> dict:
    sys.path.insert(0, str(ROOT / "bench" / "hpcc_pfc"))
    try:
        import compare  # bench/hpcc_pfc/compare.py

        return compare.config(n, kib, 0, "hpcc")
    finally:
        sys.path.pop(0)


def test_the_dcqcn_incast_resolves_as_the_benches_set_it() -> None:
    ours = resolve(import_hpcc(DATA / "incast8_dcqcn" / "config.txt").config)
    bench = resolve(ROOT / "bench" / "dcqcn_incast.toml")
    # Transport and marking: every DCQCN and RDMA key as bench/dcqcn_incast.toml
    # (its profile dcqcn-nic fills them; the import writes them from config.txt).
    # The bench leaves R_AI and R_HAI to their per-rate defaults: 5 Mb/s per
    # 25 Gb/s of link and 10 × that, 20 and 200 Mb/s at 100G (config.txt's).
    want = {**bench["transport"], "dcqcn_rai": "20Mbps", "dcqcn_rhai": "200Mbps"}
    assert (bench["transport"]["dcqcn_rai"], bench["transport"]["dcqcn_rhai"]) == (None, None)
    for key in (
        "cc",
        "mss",
        "header",
        *(
            k
            for k in bench["transport"]
            if k.startswith(("dcqcn", "rdma")) and k != "rdma_ack_service"
        ),
    ):
        assert ours["transport"][key] == want[key], key
    for key in (
        "marking",
        "red_min",
        "red_max",
        "red_pmax",
        "red_wq",
        "red_spacing",
        "red_at_dequeue",
    ):
        assert ours["switch"][key] == bench["switch"][key], key
    # The peer's MMU as bench/hpcc_pfc/compare.py sets it for this incast
    # (32 MiB, 9 ports): the same rules, the same pool.
    pfc = resolve(bench_pfc_config(8, 32768))
    for key in ("buffer_policy", "buffer_accounting", "pfc", "pfc_xon_offset"):
        assert ours["switch"][key] == pfc["switch"][key], key
    # ACK_HIGH_PRIO 1: ACKs in service 0 (strict priority), the data and its
    # lossless priority one up; the benches keep one service.
    assert ours["transport"]["rdma_ack_service"] == 0
    assert (ours["switch"]["queues"], ours["switch"]["scheduler"]) == (2, "sp")
    assert ours["switch"]["pfc_priorities"] == [p + 1 for p in pfc["switch"]["pfc_priorities"]]
    # α = 1, the default (the resolved form leaves it out).
    assert ours["switch"].get("dt_alpha", 1.0) == pfc["switch"].get("dt_alpha", 1.0) == 1.0
    assert ours["host"]["jitter"] == pfc["host"]["jitter"] == "0s"
    # compare.py gives the headroom itself, 30,955 B per port; the import
    # lets ecnlab's "auto" work it out by the peer's formula (30,956 B with
    # the response it sets): 1 B apart per port, so the shared buffers (the
    # peer's 32 MiB less one set of headroom) are 9 B apart, and the pools
    # (less the headroom again) 18 B of 33 MB.
    assert (ours["switch"].get("pfc_headroom", "auto"), pfc["switch"]["pfc_headroom"]) == (
        "auto",
        "30955B",
    )
    shared = {
        k: int(c["switch"]["shared_buffer"].rstrip("B")) for k, c in (("ours", ours), ("pfc", pfc))
    }
    assert shared["pfc"] - shared["ours"] == 9


def test_the_converted_dcqcn_incast_runs_as_the_peer() -> None:
    imp = import_hpcc(DATA / "incast8_dcqcn" / "config.txt")
    res = run_checked(imp.config)
    s = res.summary
    assert s["packets_dropped"] == 0
    # The peer (README of the comparison, incast8_dcqcn): 91.28 Gb/s of payload
    # over 0-20 ms, PFC never pausing (its threshold is ~3.7 MB per ingress
    # queue with 32 MiB). ecnlab within 1.5% (docs/rdma.md: 1% of it is the
    # peer's links running fast, serialisation truncated to whole ns).
    gbps = sum(s["goodput_gbps_by_service"].values())
    assert gbps == pytest.approx(91.28, rel=0.015)
    pfc = res["pfc"].to_pandas()
    assert pfc["pause_sent"].sum() == 0


def test_the_1mb_incast_fcts_match_the_peers() -> None:
    imp = import_hpcc(DATA / "incast8_1MB_dcqcn" / "config.txt")
    res = run_checked(imp.config)
    flows = res["flows"]
    peer = read_fct(DATA / "incast8_1MB_dcqcn" / "peer_fct.txt", imp.peer_ids)
    ours = flows.to_pandas()
    assert ours["fct"].notna().all() and len(ours) == peer.num_rows == 8
    # The peer: FCT mean 1,089 us, max 1,118 us, ideal alone 85.08 us.
    # ecnlab's ideal counts the same path (2 hops, 1 us each, 1,048 B frames
    # at 100G): 1 MB / 96.5 Gb/s of payload plus the path, within 1%.
    assert np.mean(peer["fct"].to_numpy()) == pytest.approx(1089e-6, rel=1e-3)
    assert ours["ideal_fct"].iloc[0] == pytest.approx(85.08e-6, rel=0.01)
    # Mean FCT and the slowdown percentiles within 3% of the peer's.
    assert ours["fct"].mean() == pytest.approx(1089e-6, rel=0.03)
    row = next(r for r in compare_fct(flows, peer) if r["bin"] == "all")
    for p in ("p50", "p95", "p99"):
        assert row[f"{p}_ecnlab"] == pytest.approx(row[f"{p}_peer"], rel=0.03), p
    assert ecnlab.fct_stats(flows)["flows"] == 8
