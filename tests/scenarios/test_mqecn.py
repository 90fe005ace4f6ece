"""MQ-ECN against per-queue, per-queue-min, per-port and per-pool marking
(Bai et al., NSDI 2016) on a 10 Gbps star, base RTT 100 us, K = 65 packets;
over DWRR (round-time estimate) and over WFQ (the weight-sum variant, §3.4)."""

from __future__ import annotations

import numpy as np
import pytest

import ecnlab
from scenario_kit import goodput, port_queue, run_checked, star

K = 65


def one_vs_four(marking: str, sched: str = "dwrr") -> ecnlab.Result:
    # Service 0: one flow (host0); service 1: four flows (host1). Equal quanta.
    cfg = star(
        switch={
            "queues": 2,
            "scheduler": sched,
            "marking": marking,
            "threshold": f"{K}pkt",
            "buffer": "200pkt",
        },
        flows=[{"src": 0, "dst": 2, "service": 0}, {"src": 1, "dst": 2, "service": 1, "count": 4}],
    )
    return run_checked(cfg)


def share1(res: ecnlab.Result) -> float:
    g = goodput(res)
    return g[1] / (g[0] + g[1])


@pytest.mark.parametrize("sched", ["dwrr", "wfq"])
def test_per_port_marking_breaks_fair_sharing(sched: str) -> None:
    # MQ-ECN Fig. 3 (§2.2.3): with one per-port threshold the 4-flow service
    # takes clearly more than its half (testbed: 539 vs 403 Mbps = 57%),
    # whichever scheduler shares the link (measured here: 66% under both).
    assert share1(one_vs_four("per-port", sched)) > 0.57


@pytest.mark.parametrize("marking", ["per-queue", "mq-ecn"])
def test_per_queue_and_mqecn_split_evenly(marking: str) -> None:
    # Equal quanta, both queues backlogged: DWRR gives 50/50 when each queue
    # is marked on its own occupancy (MQ-ECN §2.1, Fig. 6a).
    assert share1(one_vs_four(marking)) == pytest.approx(0.5, abs=0.05 * 0.5)


def test_mqecn_keeps_shared_port_queue_well_below_2k() -> None:
    # Per-queue with the standard K lets each of the 2 active queues hold K:
    # the port holds ~2K. MQ-ECN scales each to K × quantum/(C·T_round) =
    # K/2, so the port holds ~K (MQ-ECN Eq. 5; Fig. 6b's ~50% lower delay).
    std = port_queue(one_vs_four("per-queue"), "switch", "host2", warmup=0.1)
    mq = port_queue(one_vs_four("mq-ecn"), "switch", "host2", warmup=0.1)
    assert std.mean() > 1.6 * K, std.mean()
    assert mq.mean() < 1.2 * K, mq.mean()
    assert np.percentile(mq, 99) < 1.5 * K


def test_mqecn_generic_over_wfq_splits_evenly_below_2k() -> None:
    # Issue 11's bar for MQ-ECN's weight-sum variant over WFQ (§3.4): the
    # 1-flow and 4-flow services split evenly (within 5%) and the port
    # queue stays below 2K. Both queues backlogged with equal weights give
    # W_est → 2w and K_i → K/2, so the port holds about K, not the 2K of
    # per-queue K (measured: mean 59 packets, at most 68).
    res = one_vs_four("mq-ecn", "wfq")
    assert share1(res) == pytest.approx(0.5, abs=0.05 * 0.5)
    q = port_queue(res, "switch", "host2", warmup=0.1)
    assert q.max() < 2 * K, q.max()
    assert q.mean() < 1.2 * K, q.mean()


def rtt_with_active_queues(marking: str, active: int) -> float:
    # 8 long flows from 8 hosts spread evenly over `active` of 8 DWRR queues;
    # ping in queue 0 (an active queue), as in MQ-ECN Fig. 1.
    cfg = star(
        hosts=9,
        duration="0.2s",
        warmup="0.05s",
        switch={
            "queues": 8,
            "scheduler": "dwrr",
            "marking": marking,
            "threshold": f"{K}pkt",
            "buffer": "1000pkt",
        },
        flows=[{"src": i, "dst": 8, "service": i % active} for i in range(8)],
        ping=[{"src": 0, "dst": 8, "service": 0, "interval": "100us"}],
    )
    res = ecnlab.run(cfg, progress=False)
    return float(np.mean(res["rtt"]["rtt"].to_numpy()))


def test_rtt_grows_with_active_queues_under_standard_k_not_mqecn() -> None:
    # MQ-ECN Fig. 1: per-queue K lets the port hold (active queues) × K, so
    # RTT grows with the number of queues (testbed: 279 → 1582 us, 5.7×).
    # Here each extra K adds 65 × 1.2 us = 78 us. MQ-ECN keeps the port
    # near K whatever the number of queues.
    std = [rtt_with_active_queues("per-queue", n) for n in (1, 2, 4, 8)]
    mq = [rtt_with_active_queues("mq-ecn", n) for n in (1, 2, 4, 8)]
    assert all(b > a + 40e-6 for a, b in zip(std, std[1:])), std
    assert std[-1] > 3 * std[0], std
    assert max(mq) < 1.15 * min(mq), mq
    assert mq[-1] < 0.35 * std[-1]


@pytest.mark.parametrize("sched", ["dwrr", "wfq"])
def test_mqecn_weighted_quanta_follow_weights_not_flow_counts(sched: str) -> None:
    # The authors' test-dwrr.tcl set-up (docs/schemes/mq-ecn.md, prediction
    # 4): quanta 1500:6000, 8 flows in queue 0, 2 flows in queue 1 joining
    # later. Goodput settles near 2:8 and queue 0 holds about K/5. Over WFQ
    # the generic variant gives the same K/5: w_0/(w_0 + w_1) = 1500/7500
    # (MQ-ECN §3.4), as the round time does under DWRR (Eq. 5).
    cfg = star(
        hosts=11,
        duration="0.3s",
        warmup="0.15s",
        switch={
            "queues": 2,
            "scheduler": sched,
            "quantum": ["1500B", "6000B"],
            "marking": "mq-ecn",
            "threshold": "80pkt",
        },
        transport={"cc": "ecn-star"},
        flows=[{"src": i, "dst": 10, "service": 0} for i in range(8)]
        + [{"src": 8 + i, "dst": 10, "service": 1, "start": "0.1s"} for i in range(2)],
    )
    res = run_checked(cfg)
    g = goodput(res)
    assert g[1] / (g[0] + g[1]) == pytest.approx(0.8, abs=0.03)
    q0 = port_queue(res, "switch", "host10", warmup=0.15, queue=0)
    assert 0.5 * 80 / 5 <= q0.mean() <= 1.5 * 80 / 5, q0.mean()


def test_per_queue_min_threshold_trades_throughput_for_latency() -> None:
    # Minimum threshold K × w_i/Σw (MQ-ECN Eq. 2): with 8 queues and ECN*, a
    # lone active queue gets K/8, too small for one ECN* flow's sawtooth, so
    # it loses throughput that MQ-ECN (K_i = K for a lone queue) keeps
    # (MQ-ECN §2.2.2 and §5.3.2).
    def run(marking: str) -> float:
        cfg = star(
            rate=["40Gbps", "10Gbps", "10Gbps"],
            duration="0.25s",
            warmup="0.05s",
            switch={"queues": 8, "scheduler": "dwrr", "marking": marking, "threshold": "84pkt"},
            transport={"cc": "ecn-star"},
            flows=[{"src": 0, "dst": 2, "service": 0}],
        )
        return goodput(ecnlab.run(cfg, progress=False))[0]

    mq, mn = run("mq-ecn"), run("per-queue-min")
    assert mq >= 0.95 * 9.733, mq
    assert mn < 0.9 * mq, (mn, mq)


@pytest.mark.parametrize("dequeue", [False, True])
def test_per_pool_marking_counts_the_whole_switch(dequeue: bool) -> None:
    # Per-pool marking (MQ-ECN §2.1) compares the switch-wide occupancy with
    # K: two congested ports together hold about K, where per-queue marking
    # lets each hold K. The same holds when the test is made at dequeue.
    def both_ports(marking: str) -> float:
        cfg = star(
            hosts=6,
            switch={"marking": marking, "threshold": f"{K}pkt", "dequeue_marking": dequeue},
            flows=[
                {"src": 0, "dst": 4},
                {"src": 1, "dst": 4},
                {"src": 2, "dst": 5},
                {"src": 3, "dst": 5},
            ],
        )
        res = run_checked(cfg)
        a = port_queue(res, "switch", "host4", warmup=0.1)
        b = port_queue(res, "switch", "host5", warmup=0.1)
        return float((a + b).mean())

    pool, per_queue = both_ports("per-pool"), both_ports("per-queue")
    assert pool < 1.2 * K, pool
    assert per_queue > 1.7 * K, per_queue
