"""Schedulers on one 10G port: weighted shares (WRR, DWRR, WFQ), strict priority,
SP+DWRR."""

from __future__ import annotations

import pytest

from scenario_kit import goodput, run_checked, star


def shares(
    sched: str, quanta: list[str], flows_per_queue: int = 2, **switch: object
) -> dict[int, float]:
    nq = len(quanta)
    hosts = nq * flows_per_queue
    flows = [{"src": h, "dst": hosts, "service": h // flows_per_queue} for h in range(hosts)]
    cfg = star(
        hosts=hosts + 1,
        switch={
            "queues": nq,
            "scheduler": sched,
            "quantum": quanta,
            "marking": "per-queue",
            "threshold": "65pkt",
            **switch,
        },
        flows=flows,
    )
    g = goodput(run_checked(cfg))
    total = sum(g.values())
    return {k: v / total for k, v in g.items()}


@pytest.mark.parametrize("sched", ["dwrr", "wrr"])
def test_backlogged_queues_share_in_proportion_to_quanta(sched: str) -> None:
    # Round-robin with byte quanta gives each backlogged queue quantum_i/Σ of
    # the link (Shreedhar & Varghese; MQ-ECN §3.3.2): 1:2:3 → 1/6, 2/6, 3/6.
    s = shares(sched, ["1500B", "3000B", "4500B"])
    for q, want in {0: 1 / 6, 1: 2 / 6, 2: 3 / 6}.items():
        assert s[q] == pytest.approx(want, rel=0.03), s


def test_wfq_backlogged_queues_share_in_proportion_to_weights() -> None:
    # WFQ (here SCFQ, Golestani 1994) gives each backlogged queue w_i/Σw of
    # the link, with weights ∝ quantum: 1:2:3 → 1/6, 2/6, 3/6 (issue 11 asks
    # within 2%). Per-queue K keeps every queue backlogged.
    s = shares("wfq", ["1500B", "3000B", "4500B"])
    for q, want in {0: 1 / 6, 1: 2 / 6, 2: 3 / 6}.items():
        assert s[q] == pytest.approx(want, rel=0.02), s


def test_dwrr_quantum_below_packet_size_still_shares() -> None:
    # DWRR carries deficit across rounds, so a 500 B quantum still earns 1/4
    # of the link against 1500 B (Shreedhar & Varghese).
    s = shares("dwrr", ["500B", "1500B"])
    assert s[0] == pytest.approx(0.25, rel=0.03), s


def test_strict_priority_starves_lower_queue() -> None:
    s = shares("sp", ["1500B", "1500B"])
    assert s[0] > 0.99 and s.get(1, 0.0) < 0.01, s


def test_sp_dwrr_strict_queue_first_then_weighted_group() -> None:
    # SP+DWRR (MQ-ECN §3.4): a 5 MB flow in the strict queue pre-empts the
    # DWRR group, finishing in about size/C (4.1 ms at 10G) plus handshake
    # and slow start; the DWRR queues 1 and 2 split what is left 1:3.
    flows = [
        {"src": 0, "dst": 3, "service": 0, "size": "5MB", "start": "0.15s"},
        {"src": 1, "dst": 3, "service": 1},
        {"src": 2, "dst": 3, "service": 2},
    ]
    cfg = star(
        hosts=4,
        switch={
            "queues": 3,
            "scheduler": "sp-dwrr",
            "sp_queues": 1,
            "quantum": ["1500B", "1500B", "4500B"],
            "marking": "per-queue",
            "threshold": "65pkt",
        },
        flows=flows,
    )
    res = run_checked(cfg)
    fct = res["flows"]["fct"].to_pylist()[0]
    ideal = 5e6 * 8 / (10e9 * 1460 / 1500)
    assert ideal < fct < 1.5 * ideal, fct
    g = goodput(res)
    assert g[2] / (g[1] + g[2]) == pytest.approx(0.75, rel=0.03), g
