"""RED, TCN, CEDM and queue traces on a 10 Gbps, 100 us star (4 × 25 us
links), with long DCTCP flows."""

from __future__ import annotations

import copy

import numpy as np

import ecnlab
from scenario_kit import (
    PAYLOAD_FRACTION,
    assert_refused,
    assert_same_outputs,
    check_conservation,
    goodput,
    port_queue,
    run_checked,
    star,
)

LINE = 10.0 * PAYLOAD_FRACTION  # 9.733 Gbps of payload on a 10G link
PKT = 1500


def long_flows(n: int, services: list[int] | None = None) -> list[dict]:
    services = services or [0] * n
    return [{"src": i, "dst": n, "service": services[i]} for i in range(n)]


def test_red_with_wq_1_and_min_equal_max_is_per_queue_marking() -> None:
    # RED's average with w_q = 1 is the instantaneous queue, and with
    # min = max = K its only regions are "pass" (avg <= K) and "mark"
    # (avg > K): per-queue marking with K, packet for packet (red.rs). RED
    # drops the Not-ECT packets it would mark, so the per-queue run drops
    # them too (drop_not_ect). Every output file must be byte-identical.
    k = "20pkt"
    base = star(hosts=3, duration="0.1s", warmup="0.02s", flows=long_flows(2))
    per_queue = copy.deepcopy(base)
    per_queue["switch"].update({"marking": "per-queue", "threshold": k, "drop_not_ect": True})
    red = copy.deepcopy(base)
    red["switch"].update(
        {"marking": "red", "red_min": k, "red_max": k, "red_pmax": 0.5, "red_wq": 1.0}
    )
    a = run_checked(per_queue)
    b = run_checked(red)
    assert_same_outputs(per_queue, red)
    # Marking happened, or the comparison shows nothing.
    assert a.summary["ce_marks"] > 1000 and b.summary["ce_marks"] == a.summary["ce_marks"]


def test_mq_ecn_probabilistic_variant_with_one_threshold_is_mq_ecn() -> None:
    # MQ-ECN §3.4's probabilistic variant scales RED's K_min and K_max by
    # min(quantum_i/(C·T_round), 1). With w_q = 1 and K_min = K_max = K it
    # must mark exactly where MQ-ECN with K does (both test
    # occupancy > K·share on the same T_round estimate): four flows in four
    # DWRR queues, every output byte-identical (MQ-ECN drops the Not-ECT
    # packets RED would, via drop_not_ect).
    flows = [{"src": i, "dst": 4, "service": i, "start": f"{i * 3}ms"} for i in range(4)]
    base = star(hosts=5, duration="0.06s", warmup="0.02s", flows=flows)
    sw = {"queues": 4, "scheduler": "dwrr", "quantum": ["1500B", "3000B", "1500B", "4500B"]}
    mq = copy.deepcopy(base)
    mq["switch"].update({**sw, "marking": "mq-ecn", "threshold": "65pkt", "drop_not_ect": True})
    red = copy.deepcopy(base)
    red["switch"].update(
        {
            **sw,
            "marking": "mq-ecn",
            "red_min": "65pkt",
            "red_max": "65pkt",
            "red_pmax": 1.0,
            "red_wq": 1.0,
        }
    )
    a, b = run_checked(mq), run_checked(red)
    assert_same_outputs(mq, red)
    assert a.summary["ce_marks"] == b.summary["ce_marks"] > 1000
    # And a real ramp (K_min 20, K_max 65 packets, p_max 0.2) marks on the
    # average, so it differs, yet keeps the link full and weighted shares.
    ramp = copy.deepcopy(base)
    ramp["switch"].update(
        {
            **sw,
            "marking": "mq-ecn",
            "red_min": "20pkt",
            "red_max": "65pkt",
            "red_pmax": 0.2,
            "red_wq": 0.1,
        }
    )
    c = run_checked(ramp)
    g = goodput(c)
    assert sum(g.values()) >= 0.95 * LINE, g
    # Quanta 1:2:1:3 (out of 7): each queue's share of the link.
    for svc, w in enumerate([1, 2, 1, 3]):
        assert abs(g[svc] / sum(g.values()) - w / 7) <= 0.02, g


def test_red_average_queue_lets_bursts_through_then_holds_the_queue_low() -> None:
    # RED with the classic w_q = 0.002 and min 20 / max 60 packets,
    # p_max 0.1: marks come only while the average is above min and every
    # packet is marked above max, so the average, and with it the queue's
    # long-run mean (the average is an EWMA of the queue), settles between
    # the two (RED §4-5); throughput stays full with min 20 > 0.17·C·RTT
    # (DCTCP's K guideline). Measured mean: 24.3 packets.
    cfg = star(
        hosts=3,
        duration="0.2s",
        warmup="0.05s",
        switch={"marking": "red", "red_min": "20pkt", "red_max": "60pkt", "red_pmax": 0.1},
        flows=long_flows(2),
    )
    res = run_checked(cfg)
    assert goodput(res)[0] >= 0.95 * LINE
    q = port_queue(res, "switch", "host2", warmup=0.05)
    assert 20 <= q.mean() <= 60, q.mean()


def test_tcn_threshold_follows_each_queues_drain_rate() -> None:
    # TCN marks on sojourn time T = K/C (docs/schemes/tcn.md, prediction
    # 2): two DWRR queues with equal quanta, both backlogged, each drain at
    # C/2, so a queue's packets are marked once its own backlog passes
    # about K/2. Per-queue marking with the same K lets each queue hold K.
    # K = 65 packets at 10 Gbps: T = 78 us. Expected mean occupancy per
    # queue: TCN ~ K/2 = 32.5, per-queue ~ K = 65 (DCTCP: queue near K).
    k = 65
    t_us = k * PKT * 8 / 10e9 * 1e6
    flows = long_flows(2, services=[0, 1])
    sw = {"queues": 2, "scheduler": "dwrr"}

    def two_queues(marking: dict) -> dict:
        return star(
            hosts=3, duration="0.15s", warmup="0.05s", flows=flows, switch={**sw, **marking}
        )

    tcn = two_queues({"marking": "tcn", "tcn_threshold": f"{t_us}us"})
    pq = two_queues({"marking": "per-queue", "threshold": f"{k}pkt"})
    r_tcn, r_pq = run_checked(tcn), run_checked(pq)
    for q in (0, 1):
        m_tcn = port_queue(r_tcn, "switch", "host2", warmup=0.05, queue=q).mean()
        m_pq = port_queue(r_pq, "switch", "host2", warmup=0.05, queue=q).mean()
        assert 0.7 * k / 2 <= m_tcn <= 1.3 * k / 2, (q, m_tcn)
        assert 0.75 * k <= m_pq <= 1.15 * k, (q, m_pq)
    # Both keep the link full and share it equally.
    g = goodput(r_tcn)
    assert g[0] + g[1] >= 0.95 * LINE and abs(g[0] - g[1]) <= 0.05 * LINE


def test_cedm_without_batching_marks_like_k1_and_takes_few_marks_back() -> None:
    # Without host batching the queue rises smoothly, so CEDM (K1 = 20,
    # K2 = 40 packets) behaves close to single-threshold marking at K1:
    # throughput is full (DCTCP with K1 > 0.17·C·RTT ≈ 14 packets, DCTCP
    # paper §3.3) and the queue stays near K1, below K2: DCTCP's queue
    # swings by ½·√(2N(C·d + K1)) ≈ 10 packets around K1 (CEDM §III-B
    # remarks), so its mean lies within K1 ± 10 (measured 16.6). Marks are
    # taken back only on the queue's falling edges: some, but fewer than set
    # (measured 5,032 of 20,484).
    cfg = star(
        hosts=3,
        duration="0.15s",
        warmup="0.05s",
        switch={"marking": "cedm", "threshold": "20pkt", "cedm_k2": "40pkt"},
        flows=long_flows(2),
    )
    res = run_checked(cfg)
    assert goodput(res)[0] >= 0.95 * LINE
    q = port_queue(res, "switch", "host2", warmup=0.05)
    assert 10 <= q.mean() <= 30, q.mean()
    port = [r for r in res["ports"].to_pylist() if r["node"] == "switch" and r["peer"] == "host2"]
    row = next(r for r in port if r["queue"] == -1)
    assert row["marked"] > 100 and 0 < row["unmarked"] < row["marked"], row


def test_trace_records_every_enqueue_and_dequeue() -> None:
    # The trace of the bottleneck port over 2 ms: each row is one packet in
    # (+1) or out (-1), and the occupancy it reports moves by exactly that
    # packet; the packets the port sent in the window equal the -1 rows.
    cfg = star(
        hosts=3,
        duration="0.05s",
        warmup="0.02s",
        switch={"marking": "per-queue", "threshold": "20pkt"},
        flows=long_flows(2),
        run={
            "seed": 1,
            "duration": "0.05s",
            "warmup": "0.02s",
            "sample_interval": "20us",
            "trace_ports": ["switch:host2"],
            "trace_from": "0.03s",
            "trace_to": "0.032s",
        },
    )
    res = run_checked(cfg)
    tr = res["trace"]
    t = tr["time"].to_numpy()
    ev = tr["event"].to_numpy()
    pk = tr["packets"].to_numpy().astype(int)
    assert len(t) > 2000  # 2 ms at 10 Gbps: ~1670 packets out, as many in
    assert t.min() >= 0.03 and t.max() < 0.032 and np.all(np.diff(t) >= 0)
    assert set(np.unique(ev)) == {-1, 1}
    # Occupancy steps by one packet per row, in the event's direction.
    assert np.all(np.diff(pk) == ev[1:])
    # A departure every 1.2 us while backlogged: ~2 ms / 1.2 us leave.
    out = int((ev == -1).sum())
    assert abs(out - 2e-3 / 1.2e-6) <= 20, out
    check_conservation(res.summary)


def test_bad_trace_keys_get_one_clear_error() -> None:
    flows = long_flows(2)
    for run, want in [
        ({"trace_from": "0.1s"}, "run.trace_from: set, but run.trace_ports"),
        (
            {"trace_ports": ["switch:host2"], "trace_from": "0.2s", "trace_to": "0.1s"},
            "run.trace_to = 0.1s: must be after run.trace_from",
        ),
        ({"trace_ports": ["nowhere:host2"]}, 'run.trace_ports[0] = "nowhere:host2"'),
    ]:
        cfg = star(hosts=3, flows=flows)
        cfg["run"].update(run)
        # An unknown port is found when the network is built, by run.
        run_it = (lambda c: ecnlab.run(c, progress=False)) if "nowhere" in str(run) else None
        assert_refused(cfg, want, run, run_it)


def test_bad_aqm_keys_get_one_clear_error() -> None:
    cases = [
        ({"marking": "cedm", "threshold": "20pkt", "cedm_k2": "10pkt"}, "switch.cedm_k2 = 10pkt"),
        ({"marking": "cedm", "threshold": "20pkt"}, "switch.cedm_k2: missing"),
        (
            {"marking": "cedm", "threshold": "20pkt", "cedm_k2": "30pkt", "cedm_ws": 0.0},
            "switch.cedm_ws = 0",
        ),
        (
            {"marking": "cedm", "threshold": "20pkt", "cedm_k2": "30pkt", "cedm_ws": 1.5},
            "switch.cedm_ws = 1.5",
        ),
        (
            {"marking": "red", "red_min": "60pkt", "red_max": "20pkt", "red_pmax": 0.1},
            "switch.red_min = 60pkt",
        ),
        (
            {"marking": "red", "red_min": "20pkt", "red_max": "60pkt", "red_pmax": 1.5},
            "switch.red_pmax = 1.5",
        ),
        (
            {"marking": "red", "red_min": "20pkt", "red_max": "60pkt", "red_pmax": 0.0},
            "switch.red_pmax = 0",
        ),
        ({"marking": "red", "red_min": "20pkt", "red_max": "60pkt"}, "switch.red_pmax: missing"),
        (
            {
                "marking": "red",
                "red_min": "20pkt",
                "red_max": "60pkt",
                "red_pmax": 0.1,
                "red_wq": 0.0,
            },
            "switch.red_wq = 0",
        ),
        (
            {"marking": "per-queue", "threshold": "20pkt", "red_min": "20pkt"},
            "switch.red_min: set, but",
        ),
        ({"marking": "tcn"}, "switch.tcn_threshold: missing"),
        (
            {"marking": "tcn", "tcn_threshold": "80us", "dequeue_marking": True},
            "switch.dequeue_marking = true",
        ),
        # Keys of one scheme given to another: refused, not ignored.
        (
            {"marking": "per-queue", "threshold": "20pkt", "cedm_k2": "30pkt"},
            "switch.cedm_k2: set, but",
        ),
        (
            {
                "marking": "red",
                "threshold": "20pkt",
                "red_min": "20pkt",
                "red_max": "60pkt",
                "red_pmax": 0.1,
            },
            "switch.threshold: set, but",
        ),
        (
            {"marking": "tcn", "tcn_threshold": "80us", "threshold": "20pkt"},
            "switch.threshold: set, but",
        ),
        (
            {"marking": "per-port", "threshold": "20pkt", "tcn_threshold": "80us"},
            "switch.tcn_threshold: set, but",
        ),
        ({"marking": "mq-ecn", "red_max": "60pkt", "red_pmax": 0.1}, "switch.red_min: missing"),
    ]
    for sw, want in cases:
        assert_refused(star(hosts=3, switch=sw, flows=long_flows(2)), want, sw)
