"""ML-ECN end to end: stage tags from the hosts, the switch's stage classes
and their 4:2:1 WRR shares, and ML-ECN marking on a star. Alanazi &
Hamdaoui, "Fair Packet Enqueueing and Marking in Multi-Queue Datacenter
Networks" (ML-ECN), §III-B and §IV."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import dpkt
import pytest

import ecnlab
from scenario_kit import check_conservation, port_totals, run_checked, star

STAGES = ["20KB", "200KB"]  # α_1, α_2: stages 1, 2, 3
ALPHA = [20_000, 200_000]


def ml_switch(**extra: Any) -> dict[str, Any]:
    """Three queues, one per class, WRR weights 4:2:1 by quantum (ML-ECN §IV:
    4:2:1, 1.5 KB quantum per weight), ML-ECN marking with K = 65 packets."""
    return {
        "queues": 3,
        "scheduler": "wrr",
        "quantum": ["6000B", "3000B", "1500B"],
        "small_queues": [0],
        "medium_queues": [1],
        "large_queues": [2],
        "marking": "ml-ecn",
        "threshold": "65pkt",
        **extra,
    }


def test_packets_carry_the_stage_of_their_flows_bytes_sent() -> None:
    # §III-B-1: a flow's packets carry stage j exactly while its bytes sent
    # lie in [α_{j-1}, α_j). One 500 KB flow through the switch, every
    # packet it sends captured at the receiver's port, DSCP = stage.
    cfg = star(
        duration="0.02s",
        warmup="0s",
        rate="1Gbps",
        switch=ml_switch(),
        flows=[{"src": 0, "dst": 2, "size": "500KB"}],
        host={"stages": STAGES},
    )
    cfg["run"]["pcap"] = ["switch:host2"]
    run_checked(cfg)  # determinism (captures included) and conservation
    with tempfile.TemporaryDirectory() as tmp:
        res = ecnlab.run(cfg, out=Path(tmp) / "r", progress=False)
        check_conservation(res.summary)
        assert res.summary["retransmits"] == 0
        seen = {1: 0, 2: 0, 3: 0}
        with open(Path(tmp) / "r" / "pcap" / "switch-host2.pcap", "rb") as f:
            for _, buf in dpkt.pcap.Reader(f):
                ip = dpkt.ethernet.Ethernet(buf).data
                tcp = ip.data
                if ip.len <= 60:
                    continue  # the SYN: headers only (captures keep headers alone)
                sent = tcp.seq - 1  # data byte i is sequence number i + 1
                want = 1 + sum(a <= sent for a in ALPHA)
                assert ip.tos >> 2 == want, (sent, ip.tos >> 2)
                seen[want] += 1
    # 500 KB in 1460 B segments, the k-th starting at byte 1460·k: k = 0..13
    # start below 20 KB, k = 14..136 below 200 KB, k = 137..342 above.
    assert seen == {1: 14, 2: 123, 3: 206}, seen


def test_stage_classes_share_the_link_4_2_1() -> None:
    # §III-B-2-c and §IV: small, medium and large queues under WRR with
    # weights 4:2:1. One long flow per class (tagged by its size, so each
    # stays in its class), DCTCP, 1 Gbps: the bottleneck port's queues send
    # 4/7, 2/7, 1/7 of the bytes; the bar is 3%.
    cfg = star(
        hosts=4,
        rate="1Gbps",
        duration="0.3s",
        warmup="0s",
        switch=ml_switch(buffer="500KB"),
        flows=[
            {"src": 0, "dst": 3, "size": "1GB"},
            {"src": 1, "dst": 3, "size": "6GB"},
            {"src": 2, "dst": 3, "size": "20GB"},
        ],
        host={"stages": ["5GB", "10GB"], "stage_by": "size"},
    )
    res = run_checked(cfg)
    rows = [r for r in res["ports"].to_pylist() if (r["node"], r["peer"]) == ("switch", "host3")]
    sent = {r["queue"]: r["sent_bytes"] for r in rows if r["queue"] >= 0}
    total = sum(sent.values())
    for q, want in enumerate([4 / 7, 2 / 7, 1 / 7]):
        share = sent[q] / total
        assert abs(share / want - 1) < 0.03, (q, share, want)
    # ML-ECN keeps the port near K: the total stays under the 500 KB buffer.
    assert port_totals(res)[("switch", "host3")]["dropped_overflow"] == 0


def test_small_class_is_not_marked_by_the_large_class_backlog() -> None:
    # §III-B-2-b: small queues are marked only above K, medium/large ones by
    # level from TL_1 = K/4. A long flow builds the large queue; serial
    # 20 KB flows (stage 1) share the port: they see none of the large
    # queue's marks, which per-port marking would give them (the fairness
    # ML-ECN is after, Fig. 1-2).
    def run(marking: str) -> dict[str, Any]:
        switch = ml_switch(marking=marking)
        cfg = star(
            hosts=3,
            rate="1Gbps",
            duration="0.2s",
            warmup="0s",
            switch=switch,
            flows=[
                {"src": 0, "dst": 2},
                {
                    "src": 1,
                    "dst": 2,
                    "size": "10KB",
                    "count": 200,
                    "serial": True,
                    "start": "0.02s",
                },
            ],
            host={"stages": STAGES},
        )
        res = run_checked(cfg)
        small = [r for r in res["flows"].to_pylist() if r["kind"] == "sized"]
        long = [r for r in res["flows"].to_pylist() if r["kind"] == "long"]
        return {"small": sum(r["ce_marks"] for r in small), "long": long[0]["ce_marks"]}

    ml, per_port = run("ml-ecn"), run("per-port")
    assert ml["long"] > 0 and per_port["long"] > 0
    assert ml["small"] == 0, ml
    assert per_port["small"] > 0, per_port


ML_BASE = Path(__file__).parents[2] / "experiments" / "mlecn-fig4" / "base.toml"
ML_CLASSES = {
    "marking": "ml-ecn",
    "quantum": ["6000B"] * 3 + ["3000B"] * 3 + ["1500B"] * 2,
    "small_queues": [0, 1, 2],
    "medium_queues": [3, 4, 5],
    "large_queues": [6, 7],
}


def leaf_spine(switch: dict[str, Any], load: float, checked: bool = False) -> dict[str, Any]:
    """ML-ECN §IV's leaf-spine (experiments/mlecn-fig4/base.toml), web search,
    DWRR, 2,000 flows at `load`: the summary's FCT statistics."""
    cfg = ecnlab.load_config(ML_BASE)
    cfg["switch"].update(switch)
    cfg["workload"].update({"load": load, "flows": 2000})
    res = run_checked(cfg) if checked else ecnlab.run(cfg, progress=False)
    check_conservation(res.summary)
    fct = res.summary["fct"]
    assert fct["unfinished"] == 0
    return fct


@pytest.mark.parametrize("load", [0.6, 0.8])
def test_leaf_spine_small_flows_gain_without_large_flow_loss(load: float) -> None:
    # ML-ECN §IV-A (Figs. 5-6) and §IV-C (Fig. 12), the bar: ML-ECN's
    # small-flow mean FCT below MQ-ECN's and per-queue K's (paper: -39% to
    # -55%), its large-flow mean within ~10% of theirs, and at most a tenth
    # as many CE marks on small flows as per-queue K (paper: none). At 2,000
    # flows the gaps are smaller than at the paper's 50,000 (quick run of
    # experiments/mlecn-fig6: -40% against K, -15% to -20% against MQ-ECN).
    ml = leaf_spine(ML_CLASSES, load, checked=load == 0.6)
    mq = leaf_spine({"marking": "mq-ecn"}, load)
    k = leaf_spine({"marking": "per-queue"}, load)
    assert ml["small_mean"] < mq["small_mean"], (ml, mq)
    assert ml["small_mean"] < k["small_mean"], (ml, k)
    for other in (mq, k):
        assert abs(ml["large_mean"] / other["large_mean"] - 1) < 0.10, (ml, other)
    assert ml["small_marks"] * 10 <= k["small_marks"], (ml["small_marks"], k["small_marks"])
