"""Whole queue disciplines end to end: FQ-CoDel (RFC 8290) on the host links
in both directions, as Gong, Roberts and Rossi place it ("Per-Flow Fairness
in the Datacenter Network", §III: scheduling only on ToR-server links, both
directions), with the paper's CoDel setting (§IV: target 5 us, interval
100 us, 1024 buckets); pFabric's port; and their bad inputs."""

from __future__ import annotations

from typing import Any

import ecnlab
from scenario_kit import (
    assert_refused,
    check_conservation,
    goodput,
    port_queue,
    port_totals,
    run_checked,
    star,
)

PAPER = {"qdisc": "fq-codel", "codel_target": "5us", "codel_interval": "100us"}


def fq_star(flows: list[dict[str, Any]], nic: dict[str, Any] | None = None, **sw: Any) -> dict:
    cfg = star(
        hosts=4,
        delay="3us",
        duration="0.05s",
        warmup="0s",
        switch={**PAPER, **sw},
        flows=flows,
    )
    cfg["nic"] = nic if nic is not None else {}
    cfg["run"]["sample_ports"] = "none"
    return cfg


def test_long_flows_share_one_bottleneck_equally() -> None:
    # Four long flows into host 3, two of them from host 0: the switch's
    # port to host 3 is the bottleneck, and DRR over per-flow buckets gives
    # each flow a quarter of it (RFC 8290 §4.1). Host 0's NIC, FQ-CoDel too
    # ([nic]), carries two of them at half its rate each. Shares within 5%
    # of 1/4 over 50 ms (a bucket collision among 4 flows in 1024 buckets
    # would show as a 1/2 share). CoDel marks (the flows are DCTCP, ECT),
    # never drops, and the buffer never overflows.
    flows = [{"src": 0, "dst": 3}, {"src": 0, "dst": 3}, {"src": 1, "dst": 3}, {"src": 2, "dst": 3}]
    res = run_checked(fq_star(flows))
    got = [r["bytes_received"] for r in res["flows"].to_pylist()]
    total = sum(got)
    assert total > 0.9 * 10e9 / 8 * 0.05 * 1460 / 1500 * 0.9, got
    for i, b in enumerate(got):
        assert abs(b / total - 0.25) < 0.05 * 0.25, (i, got)
    port = port_totals(res)[("switch", "host3")]
    assert port["marked"] > 100 and port["dropped_overflow"] == 0 and port["dropped_aqm"] == 0, port
    assert res.summary["ce_marks"] >= port["marked"]


def test_overflow_and_nic_drops_are_conserved_and_every_flow_finishes() -> None:
    # Drops everywhere a whole discipline makes them: 12 sized flows into
    # host 3 through a 16-packet FQ-CoDel limit (fattest-bucket batches at
    # the switch), Reno without ECN (CoDel drops instead of marking), and
    # host NICs held to 2 packets ([nic] fq_limit), so NICs drop too. Every
    # packet is accounted for (run_checked: sent = delivered + dropped + in
    # flight, twice, byte-identical) and every flow finishes: a sender that
    # NIC drops unblocked is woken, not left to its retransmission timer.
    flows = [{"src": i % 3, "dst": 3, "size": "300KB", "start": f"{i * 20}us"} for i in range(12)]
    cfg = fq_star(flows, nic={"fq_limit": 2}, fq_limit=16)
    cfg["transport"] = {"cc": "reno", "init_cwnd": 10, "min_rto": "1ms"}
    cfg["run"].pop("duration")
    res = run_checked(cfg)
    assert res.summary["flows_unfinished"] == 0
    ports = port_totals(res)
    sw = ports[("switch", "host3")]
    assert sw["dropped_overflow"] > 0, sw
    nic_drops = sum(ports[(f"host{h}", "switch")]["dropped_overflow"] for h in range(3))
    assert nic_drops > 0
    # The ports' drop counters are the run's drops.
    assert (
        sum(r["dropped_overflow"] + r["dropped_aqm"] for r in ports.values())
        == res.summary["packets_dropped"]
    )


def test_pfabric_lets_a_short_flow_through_a_full_port() -> None:
    # pFabric end to end (its port, 36 KB = 36864 B per port, its note's
    # 2xBDP; its transport stamping remaining sizes): six 200 KB flows fill
    # the port to host 3, overflowing it, and a 3-packet flow arrives in the
    # middle. Shortest-remaining-first sends its packets ahead of the queued
    # ones, so it finishes within 1.5 times its unloaded FCT (22.9 us: SYN
    # and SYN-ACK, 6.06 us each over two 3 us links, then 3 packets of 1.2
    # us each, the first stored and forwarded once: 6 + 2.4 + 2 x 1.2), while
    # behind the same drop-tail FIFO it waits for the queue (24 packets,
    # ~29 us, and its losses cost 45 us RTOs). Conservation and determinism
    # either way.
    flows = [{"src": i % 3, "dst": 3, "size": "200KB"} for i in range(6)]
    flows.append({"src": 2, "dst": 3, "size": "4380B", "start": "100us"})
    fct = {}
    for qdisc in ("pfabric", "composed"):
        cfg = fq_star(flows)
        cfg["switch"] = {"qdisc": qdisc, "buffer": "36864B"}
        cfg["nic"] = {"qdisc": qdisc} if qdisc == "pfabric" else {}
        cfg["transport"] = {"cc": "pfabric"}
        cfg["run"].pop("duration")
        res = run_checked(cfg)
        assert res.summary["flows_unfinished"] == 0
        assert port_totals(res)[("switch", "host3")]["dropped_overflow"] > 0
        fct[qdisc] = res["flows"].to_pylist()[-1]["fct"]
    unloaded = 2 * (6e-6 + 2 * 40 * 8 / 10e9) + 6e-6 + 4 * 1500 * 8 / 10e9
    assert fct["pfabric"] < 1.5 * unloaded, fct
    # Behind the FIFO it waits at least for the 24 packets queued ahead of
    # it (28.8 us); a loss adds a 45 us RTO (measured 58.8 us with the
    # default host jitter; 3x pFabric's without it, when a loss fell on it).
    assert fct["composed"] > unloaded + 24 * 1500 * 8 / 10e9, fct
    assert fct["composed"] > 2 * fct["pfabric"], fct


def test_bad_whole_discipline_keys_get_one_clear_error() -> None:
    cases = [
        ({"qdisc": "fq-codel", "fq_flows": 0}, "switch.fq_flows = 0: must be 1 to 65536"),
        (
            {"qdisc": "fq-codel", "codel_target": "100us", "codel_interval": "100us"},
            "switch.codel_target = 100us: must be below codel_interval (100us)",
        ),
        (
            {"qdisc": "fq-codel", "marking": "per-port", "threshold": "20pkt"},
            'switch.marking = "per-port": switch.qdisc "fq-codel" is a whole discipline',
        ),
        (
            {"fq_quantum": "3000B"},
            'switch.fq_quantum = 3000B: set, but qdisc "composed" with marking "none" does not',
        ),
        (
            {"qdisc": "pfabric", "codel_ecn": False},
            'switch.codel_ecn = false: set, but qdisc "pfabric" does not use it',
        ),
        ({"qdisc": "fq"}, "switch.qdisc: unknown variant `fq`"),
        (
            {"qdisc": "pfabric", "buffer": "36864B"},
            'switch.qdisc = "pfabric": pFabric\'s port schedules by the remaining-size priority',
        ),
    ]
    for sw, want in cases:
        assert_refused(star(switch=sw, flows=[{"src": 0, "dst": 1}]), want, sw)
    nic = star(flows=[{"src": 0, "dst": 1}])
    nic["nic"] = {"qdisc": "fq-codel", "fq_limit": 0}
    assert_refused(nic, "nic.fq_limit = 0: must be at least 1 packet", "nic")
    # The paper's setting is accepted.
    ecnlab.validate(star(switch=PAPER, flows=[{"src": 0, "dst": 1}]))


# ------------------------------------------------- the paper's scenario (§IV)


def paper_point(scheme: str, flows: int, **workload: Any) -> dict[str, Any]:
    """FQ-CoDel in the DCN §IV's set-up (experiments/fqcodel-fig3): the
    32-host fqcodel preset, data mining at load 0.6, Table II's tuning, NICs
    that are the switch's ports with no TCP small queues (ns-2's FullTcp), and
    one of the compared schemes."""
    cfg: dict[str, Any] = {
        "run": {"seed": 1, "sample_ports": "none"},
        "topology": {"preset": "fqcodel"},
        "switch": {"buffer": "100pkt"},
        "transport": {"profile": "pfabric", "cc": "reno", "host_queue_limit": "1GB"},
        "nic": {},
        "workload": {
            "kind": "poisson",
            "load": 0.6,
            "flows": flows,
            "distribution": "data_mining",
            **workload,
        },
    }
    if scheme == "dctcp":
        cfg["transport"]["cc"] = "dctcp"
        cfg["switch"].update(marking="per-queue", threshold="65pkt")
    elif scheme == "fq-codel":
        cfg["switch"].update(PAPER)
        cfg["fabric"] = {"qdisc": "composed"}
        cfg["nic"] = {"qdisc": "fq-codel"}
    else:
        cfg["transport"]["cc"] = "pfabric"
        cfg["switch"] = {"qdisc": "pfabric", "buffer": "36864B"}
        cfg["nic"] = {"qdisc": "pfabric"}
    return cfg


def paper_fct(scheme: str, flows: int, **workload: Any) -> dict[str, Any]:
    """The FCT statistics of a paper point, run twice where the scheme is
    a whole discipline (determinism), packets conserved either way."""
    cfg = paper_point(scheme, flows, **workload)
    res = run_checked(cfg) if scheme != "dctcp" else ecnlab.run(cfg, progress=False)
    check_conservation(res.summary)
    fct = res.summary["fct"]
    assert fct["unfinished"] == 0
    return fct


def test_fig3_order_of_one_packet_fct_and_throughput() -> None:
    # Fig. 3 (§IV-C): 1-packet FCT pFabric <= FQ-CoDel < DCTCP, FQ-CoDel
    # "very close" to pFabric (issue 12's bar: within 2x); mean throughput
    # highest under pFabric. 600 flows, not the figure's 10,000: at 10,000
    # (`ecnlab reproduce fqcodel-fig3`, seeds 1-3) 1-packet FCT is 18.6, 19.2
    # and 134 us; the paper's FQ-CoDel > DCTCP throughput is not resolved there
    # (3.33 vs 3.47 Gbps, within noise: fqcodel-fig3/NOTES.md) and is not
    # asserted here.
    got = {s: paper_fct(s, 600) for s in ("dctcp", "fq-codel", "pfabric")}
    one = {s: f["one_packet_mean"] for s, f in got.items()}
    tput = {s: f["mean_tput"] for s, f in got.items()}
    assert one["pfabric"] <= 1.05 * one["fq-codel"], one
    assert one["fq-codel"] < 0.5 * one["dctcp"], one
    assert one["fq-codel"] <= 2 * one["pfabric"], one
    assert tput["pfabric"] > max(tput["fq-codel"], tput["dctcp"]), tput


def test_fig4_fqcodel_nears_pfabric_as_one_packet_flows_grow() -> None:
    # Fig. 4 (§IV-C): sizes capped at 10^5 packets, extra 1-packet flows
    # carrying 0.01% then 10% of the bytes. FQ-CoDel's 1-packet FCT, as a
    # multiple of pFabric's, does not grow (the paper: it approaches
    # pFabric's), while DCTCP's stays far, at least 1.5x pFabric's.
    cap = {"max_size": "146000000B"}
    ratio = {}
    for share in (0.0001, 0.1):
        one = {
            s: paper_fct(s, 300, one_packet_share=share, **cap)["one_packet_mean"]
            for s in ("dctcp", "fq-codel", "pfabric")
        }
        ratio[share] = {s: one[s] / one["pfabric"] for s in one}
        assert ratio[share]["dctcp"] >= 1.5, (share, one)
    assert ratio[0.1]["fq-codel"] <= 1.02 * ratio[0.0001]["fq-codel"], ratio


def test_codel_as_a_composed_queues_aqm_holds_the_sojourn_near_target() -> None:
    # CoDel (RFC 8289) as the AQM of a plain FIFO (marking = "codel"):
    # four Reno flows (no ECN, so CoDel drops) into one 10 Gbps port with
    # room for 1000 packets. Drop-tail lets them fill it (mean queue of
    # hundreds of packets); CoDel with target 20 us holds the standing
    # queue near target: at 10 Gbps 20 us is 16.7 packets, and the mean
    # stays below 3x that (bursts after each drop-free interval), while the
    # link stays over 90% busy.
    flows = [{"src": i % 3, "dst": 3} for i in range(4)]
    means = {}
    for marking in ("none", "codel"):
        sw: dict[str, Any] = {"buffer": "1000pkt", "marking": marking}
        if marking == "codel":
            sw.update(codel_target="20us", codel_interval="200us")
        cfg = star(hosts=4, delay="3us", duration="0.06s", warmup="0.02s", switch=sw, flows=flows)
        cfg["transport"] = {"cc": "reno", "init_cwnd": 10, "min_rto": "1ms"}
        res = run_checked(cfg)
        means[marking] = port_queue(res, "switch", "host3", 0.02).mean()
        gbps = sum(goodput(res).values())
        assert gbps > 0.9 * 10 * 1460 / 1500, (marking, gbps)
        if marking == "codel":
            port = port_totals(res)[("switch", "host3")]
            assert port["dropped_aqm"] > 0 and port["dropped_overflow"] == 0, port
    assert means["none"] > 300, means
    assert means["codel"] < 3 * 20e-6 * 10e9 / 8 / 1500, means
