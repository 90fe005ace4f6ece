"""The options that mirror the MQ-ECN authors' ns-2 scenario (issue 15):
`workload.connections = "per-pair"` (persistent connections per host pair),
`run.fct_end = "sender"` (FCT ends at the last ACK) and
`workload.service_mapping = "by-source"`."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ecnlab
from scenario_kit import assert_refused, exact, run_checked, star

# 2 hosts on a 10 Gbps star with 10 us links: a hop costs 10 us plus the
# packet's serialisation (1500 B: 1.2 us; 40 B: 0.032 us), two hops a way.
DATA_WAY = 2 * (10e-6 + 1.2e-6)  # 22.4 us
CTRL_WAY = 2 * (10e-6 + 0.032e-6)  # 20.064 us


def one_packet_flows(tmp_path: Path, **workload: object) -> dict:
    """200 one-segment flows between the two hosts at a load of 1e-5: 60 ms
    apart on average (12 kbit each against 0.2 Mbit/s offered), so flows of
    a pair (42 us each) overlap with odds of about 0.07 in the whole run."""
    sizes = tmp_path / "one_packet.csv"
    sizes.write_text("size_bytes,cdf\n1460,1\n")
    cfg = star(hosts=2, delay="10us", warmup="0s", transport={"init_cwnd": 16})
    del cfg["run"]["duration"]
    cfg["run"]["sample_ports"] = "none"
    exact(cfg)  # the FCTs are checked to the nanosecond against the path's time
    cfg["workload"] = {
        "kind": "poisson",
        "load": 1e-5,
        "flows": 200,
        "distribution": str(sizes),
        **workload,
    }
    return cfg


def fcts(res) -> np.ndarray:
    return np.array([f["fct"] for f in res["flows"].to_pylist() if f["kind"] == "sized"])


@pytest.mark.parametrize(
    "connections, fct_end, want",
    [
        # A handshake (SYN and SYN-ACK, 40 B each), then the segment.
        ("per-flow", "receiver", 2 * CTRL_WAY + DATA_WAY),  # 62.528 us
        # ... and the last ACK's way back.
        ("per-flow", "sender", 3 * CTRL_WAY + DATA_WAY),  # 82.592 us
        # An open connection: the segment only.
        ("per-pair", "receiver", DATA_WAY),  # 22.4 us
        # The authors' ns-2 FCT: hand-off to the sender's last ACK, 1 RTT.
        ("per-pair", "sender", CTRL_WAY + DATA_WAY),  # 42.464 us
    ],
)
def test_one_packet_fct_follows_connection_and_end_point(
    tmp_path: Path, connections: str, fct_end: str, want: float
) -> None:
    cfg = one_packet_flows(tmp_path, connections=connections)
    cfg["run"]["fct_end"] = fct_end
    res = run_checked(cfg)  # conservation and determinism
    f = fcts(res)
    assert len(f) == 200 and res.summary["ended_by"] == "finished"
    # Idle network: every flow takes exactly the path's time (to 1 ns:
    # times are picoseconds, FCTs seconds in float).
    assert np.allclose(f, want, rtol=0, atol=1e-9), (f.min(), f.max(), want)
    # No SYN crosses the network on reused connections: 1 packet and 1 ACK
    # per flow; a connection per flow adds SYN and SYN-ACK.
    per_flow = res.summary["packets_sent"] / 200
    assert per_flow == (2 if connections == "per-pair" else 4), per_flow


def test_busy_pairs_open_extra_connections(tmp_path: Path) -> None:
    # Idle pairs: the two directions' first connections carry every flow.
    res = run_checked(one_packet_flows(tmp_path, connections="per-pair"))
    assert res.summary["connections_opened"] == 2
    # At 60% load with 146 KB flows (100 segments: IW 16 then three more
    # windows, 120 us of serialisation, about 290 us in all) arriving about
    # 200 us apart per direction, flows of a pair often overlap: the ones
    # that find every connection busy open an extra one (12 here), the
    # others reuse a free one.
    sizes = tmp_path / "s.csv"
    sizes.write_text("size_bytes,cdf\n146000,1\n")
    cfg = one_packet_flows(tmp_path, connections="per-pair")
    cfg["workload"].update(load=0.6, distribution=str(sizes))
    res = run_checked(cfg)
    assert len(fcts(res)) == 200
    assert 2 < res.summary["connections_opened"] < 100, res.summary["connections_opened"]


def test_by_source_needs_every_host(tmp_path: Path) -> None:
    cfg = one_packet_flows(tmp_path, service_mapping="by-source", senders=[0])
    assert_refused(cfg, "workload.service_mapping", "by-source")


def test_bad_connection_and_fct_end_values_are_refused(tmp_path: Path) -> None:
    cfg = one_packet_flows(tmp_path, connections="per-host")
    assert_refused(cfg, "workload.connections", "per-host")
    cfg = one_packet_flows(tmp_path)
    cfg["run"]["fct_end"] = "ack"
    assert_refused(cfg, "run.fct_end", "ack")


def ns2_workload(hosts: int = 8, **workload: object) -> dict:
    """The authors' generator (`workload.arrivals = "ns2"`) on a small star:
    8 hosts, 4 services (the script's (dst + 1)·hosts + src + 1, by source
    here since 8 is a multiple of 4), 300 flows at load 0.3."""
    cfg = star(hosts=hosts, delay="2us", warmup="0s")
    del cfg["run"]["duration"]
    cfg["run"]["sample_ports"] = "none"
    cfg["switch"] = {"queues": 4, "scheduler": "dwrr", "marking": "per-queue", "threshold": "65pkt"}
    cfg["transport"] = {"cc": "dctcp"}
    cfg["workload"] = {
        "kind": "poisson",
        "load": 0.3,
        "flows": 300,
        "services": 4,
        "service_mapping": "by-source",
        "arrivals": "ns2",
        "distributions": ["cache", "web_search", "hadoop", "data_mining"],
        **workload,
    }
    return cfg


def test_ns2_arrivals_replay_the_same_flows_whatever_the_seed() -> None:
    cfg = ns2_workload()
    res = run_checked(cfg)  # conservation and determinism
    flows = [f for f in res["flows"].to_pylist() if f["kind"] == "sized"]
    assert len(flows) == 300 and res.summary["flows_unfinished"] == 0
    # The script seeds its generators from the pair alone: another run.seed
    # draws the same flows (ns-2's runs have no seed to change).
    cfg["run"]["seed"] = 7
    again = ecnlab.run(cfg, progress=False)["flows"].to_pylist()
    other = [f for f in again if f["kind"] == "sized"]
    key = [(f["src"], f["dst"], f["size"], f["start"]) for f in flows]
    assert key == [(f["src"], f["dst"], f["size"], f["start"]) for f in other]
    # Sizes in whole 1460 B segments, each source in its service.
    assert all(f["size"] % 1460 == 0 and f["service"] == (f["src"] + 1) % 4 for f in flows)
    # Neighbouring seeds draw nearly the same values (ns2_arrivals.rs): the
    # first uniform is about frac(3.343e-4 · seed), and sources s and s + 4
    # (the same service, so the same rate) to one destination have seeds
    # 68 apart, first uniforms 0.023 apart. Their first flows' starts,
    # -ln(u) / rate, rise and fall together over the destinations: a rank
    # correlation near 1, where independent draws would give about 0.
    first: dict[tuple[int, int], float] = {}
    for f in flows:
        first.setdefault((f["src"], f["dst"]), f["start"])
    pairs = [
        (first[(s, d)], first[(s + 4, d)]) for (s, d) in first if s < 4 and (s + 4, d) in first
    ]
    assert len(pairs) >= 10, len(pairs)
    a, b = np.array(pairs).T
    rho = np.corrcoef(np.argsort(np.argsort(a)), np.argsort(np.argsort(b)))[0, 1]
    assert rho > 0.9, (rho, pairs)


def test_ns2_arrivals_and_ecmp_refuse_what_they_cannot_replay() -> None:
    assert_refused(ns2_workload(service_mapping="by-pair"), "workload.arrivals", "by-pair")
    assert_refused(ns2_workload(one_packet_share=0.01), "workload.one_packet_share", "1-packet")
    assert_refused(ns2_workload(distributions=["mix"] * 4), "workload.distributions[0]", "mix")
    assert_refused(ns2_workload(arrivals="ns3"), "workload.arrivals", "ns3")
    cfg = ns2_workload()
    cfg["topology"]["ecmp"] = "ns3"
    assert_refused(cfg, "topology.ecmp", "ns3")
