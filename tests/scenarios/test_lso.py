"""Host batching ([host]): segmentation offload at senders, interrupt
coalescing and receive offload at receivers, against the CEDM paper (Shan et
al., "Micro-burst in data centers: observations, analysis, and mitigations",
§II-A and §III) on its two-flow, 10 Gbps, 100 us setup."""

from __future__ import annotations

import copy
import struct
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq
import pytest

import ecnlab
from scenario_kit import (
    PAYLOAD_FRACTION,
    cedm_two_flows,
    check_conservation,
    exact,
    goodput,
    output_files,
    port_totals,
    run_checked,
    star,
)

LINE = 10.0 * PAYLOAD_FRACTION  # 9.733 Gbps of payload on a 10G link
# C·d: 10 Gbps × 100 us of base RTT in 1500-byte packets (CEDM §II-C: 83.3).
CD = 10e9 * 100e-6 / 8 / 1500
# A 1500-byte packet takes 1.2 us at 10 Gbps, a 40-byte ACK 32 ns: two
# packets left back to back when their capture times differ by exactly that.
DATA_GAP_NS, ACK_GAP_NS = 1200, 32
# (64,000 B − one 40 B header) / 1460 B of payload: full packets in a 64 KB
# segment (host/nic/lso.rs, as Linux bounds an skb's bytes by 64 KB).
LSO_PACKETS = (64_000 - 40) // 1460
# The CEDM paper's LSO: deferral stops only for loss recovery, not in the
# CWR state after an ECN cut (its analysis assumes bursts of β·w throughout
# and its simulations fit that; host/nic/lso.rs). Linux, ecnlab's default,
# sends at once in CWR: see test_linux_cwr_rule_* below.
PAPER_LSO = {"lso": True, "lso_defer_in_cwr": True}


def run_with_captures(cfg: dict[str, Any]) -> tuple[dict[str, Any], dict[str, bytes]]:
    """Run twice; assert identical outputs (captures included) and packet
    conservation; return the summary and the pcap files by port name. An
    exact replay: the hosts' jitter would move the frames whose spacing the
    tests read."""
    cfg = exact(cfg)
    with tempfile.TemporaryDirectory() as tmp:
        a = ecnlab.run(copy.deepcopy(cfg), out=Path(tmp) / "a", progress=False)
        ecnlab.run(copy.deepcopy(cfg), out=Path(tmp) / "b", progress=False)
        fa, fb = output_files(Path(tmp) / "a"), output_files(Path(tmp) / "b")
        assert fa.keys() == fb.keys()
        for name in fa:
            assert fa[name] == fb[name], f"{name} differs between two runs of the same config"
        pcaps = {n.split("/")[-1]: d for n, d in fa.items() if n.startswith("pcap/")}
    check_conservation(a.summary)
    return a.summary, pcaps


def back_to_back_runs(
    pcap: bytes, frame: int, gap_ns: int, after_ns: int
) -> tuple[np.ndarray, np.ndarray]:
    """Lengths and start times (ns) of the runs of `frame`-byte frames
    (original length, Ethernet header included) that left back to back
    (`gap_ns` apart), after `after_ns`."""
    ts = []
    at = 24
    while at < len(pcap):
        sec, nsec, incl, orig = struct.unpack("<IIII", pcap[at : at + 16])
        if orig == frame:
            ts.append(sec * 10**9 + nsec)
        at += 16 + incl
    t = np.array(ts)
    t = t[t >= after_ns]
    breaks = np.flatnonzero(np.diff(t) != gap_ns)
    starts = t[np.concatenate([[0], breaks + 1])]
    return np.diff(np.concatenate([[-1], breaks, [len(t) - 1]])), starts


def two_flow_leafspine(k: int, host: dict[str, Any]) -> dict[str, Any]:
    """Two DCTCP flows from hosts on leaves 0 and 1 into a host on leaf 2
    (one spine, 10 Gbps everywhere, 8 × 12.5 us = 100 us base RTT). Only
    host 0's data crosses leaf0:spine0, which forwards it at the rate it came,
    so that port's capture shows host 0's NIC departures, shifted."""
    return {
        "run": {
            "seed": 1,
            "duration": "0.06s",
            "warmup": "0.02s",
            "sample_ports": "none",
            "pcap": ["leaf0:spine0"],
        },
        "topology": {
            "kind": "leaf-spine",
            "leaves": 3,
            "spines": 1,
            "hosts_per_leaf": 2,
            "link_rate": "10Gbps",
            "uplink_rate": "10Gbps",
            "link_delay": "12.5us",
        },
        "switch": {"buffer": "1000pkt", "marking": "per-queue", "threshold": f"{k}pkt"},
        "transport": {"cc": "dctcp", "min_rto": "5ms"},
        "host": host,
        "flows": [{"src": 0, "dst": 4}, {"src": 2, "dst": 4}],
    }


def cwnd_at(cfg: dict[str, Any], times_ns: np.ndarray) -> np.ndarray:
    """Flow 0's cwnd (segments) as it was at each of `times_ns`, from a run
    of `cfg` with its cwnd traced."""
    cfg = exact(copy.deepcopy(cfg))
    cfg["run"]["trace_cwnd"] = [0]
    with tempfile.TemporaryDirectory() as tmp:
        ecnlab.run(cfg, out=Path(tmp) / "a", progress=False)
        table = pq.read_table(Path(tmp) / "a" / "cwnd.parquet").to_pandas()
    at = np.round(table.time.to_numpy() * 1e9)
    return table.cwnd.to_numpy()[np.searchsorted(at, times_ns, side="right") - 1]


# A segment's first packet is captured at leaf0:spine0 one host-link delay
# and one serialisation after host 0 handed it over.
HOST_TO_CAPTURE_NS = 12_500 + DATA_GAP_NS


@pytest.mark.parametrize("k,beta", [(65, 1 / 3), (65, 0.25), (300, 1 / 3)])
def test_lso_bursts_are_min_of_lso_max_and_beta_cwnd(k: int, beta: float) -> None:
    # CEDM §II-A: with LSO the burst length is about min(L, βW), W the
    # sender's window when it sends. Each back-to-back run at leaf0:spine0
    # is compared with β·cwnd of flow 0 as it was when the run left host 0:
    # a burst goes once the room reaches β·cwnd, and the room grows by one
    # or two packets per ACK, so a run is β·cwnd to β·cwnd + 3 packets. Two
    # bursts can leave back to back (the next allowance came while the NIC
    # sent the last, as ACKs of a back-to-back burst return at line rate),
    # so a run is m whole bursts; most are one. K = 300: βW >= 128 is beyond
    # L, so every run is L = 43 packets. (CEDM Eq. 11's window range when
    # the queue reaches K, [88.9, 111.2] for K = 65 and β = 1/3, is not
    # what the flows hold here: with the hosts' jitter they settle unequal,
    # means 121 and 79; exact, flow 0 ranges 69-129. Model 5's exact run
    # locked both at 92.2, an artefact of its scheduling-order tie rule.)
    cfg = two_flow_leafspine(k, {**PAPER_LSO, "lso_fraction": beta})
    summary, pcaps = run_with_captures(cfg)
    runs, starts = back_to_back_runs(pcaps["leaf0-spine0.pcap"], 1514, DATA_GAP_NS, 20_000_000)
    burst = np.minimum(LSO_PACKETS, beta * cwnd_at(cfg, starts - HOST_TO_CAPTURE_NS))
    m = np.maximum(1, np.round(runs / burst))
    off = runs - m * burst
    assert np.mean((off >= -1) & (off <= 3)) >= 0.95, np.percentile(off, [1, 5, 50, 95, 99])
    assert np.mean(m == 1) >= 0.6, np.unique(m, return_counts=True)
    if k == 300:
        assert np.all(runs == LSO_PACKETS), np.unique(runs, return_counts=True)
    assert summary["goodput_gbps_by_service"]["0"] >= 0.99 * LINE


def test_without_lso_packets_leave_one_or_two_per_ack() -> None:
    # Without LSO each ACK (one per packet) releases one packet, or two as
    # the window grows (CEDM §II-A b), so host 0's NIC never holds more than
    # two packets (measured: 2); with LSO it holds a burst of β·W (W ≈ 51
    # at K = 17: at least 12; measured 26). The back-to-back runs at the
    # leaf are not the test: they follow the ACKs' spacing, which mirrors
    # how the two flows' packets interleave at the bottleneck (without
    # jitter, trains of one flow form there and persist).
    off = run_checked(exact(two_flow_leafspine(17, {"lso": False})))
    on = run_checked(exact(two_flow_leafspine(17, PAPER_LSO)))
    nic_off = port_totals(off)[("host0", "leaf0")]["max_bytes"]
    nic_on = port_totals(on)[("host0", "leaf0")]["max_bytes"]
    assert nic_off <= 2 * 1500, nic_off
    assert nic_on >= 12 * 1500, nic_on


def two_flows(cc: str, k: int, lso: bool, offset: str, linux: bool = False) -> float:
    """CEDM Fig. 4's set-up (`cedm_two_flows`) with marking at K: the payload
    goodput into host 2."""
    host = ({"lso": True} if linux else PAPER_LSO) if lso else {"lso": False}
    switch = {"marking": "per-queue", "threshold": f"{k}pkt"}
    res = run_checked(cedm_two_flows(cc, switch, host, offset))
    assert res.summary["packets_dropped"] == 0
    return goodput(res)[0]


# Flows started at the same picosecond stay phase-locked: their batches
# reach the switch together (CEDM §III's synchronised flows, the worst case).
# Any other offset (10 us to 3 ms measured alike) lets them drift apart.
OFFSETS = ["0s", "0.5ms"]


@pytest.mark.parametrize("offset", OFFSETS)
def test_ecn_star_with_lso_needs_k_of_one_and_a_half_cd(offset: str) -> None:
    # CEDM Fig. 4(a) and Cor. 2: ECN* without batching is at full throughput
    # at K = C·d = 83 (Tuning ECN); with LSO (β = 1/3, N = 2) it loses
    # throughput there (paper: 127 Mbps; measured: 0.21 Gbps in phase,
    # 0.16 Gbps offset) and needs K >= 3/2·C·d = 125 (measured: >= 99.9%).
    k = round(CD)
    off = two_flows("ecn-star", k, False, offset)
    on = two_flows("ecn-star", k, True, offset)
    assert off >= 0.995 * LINE, off
    assert off - on >= 0.08, (off, on)
    assert two_flows("ecn-star", round(1.5 * CD), True, offset) >= 0.99 * LINE


@pytest.mark.parametrize("offset", OFFSETS)
def test_dctcp_with_lso_needs_cor4_threshold(offset: str) -> None:
    # CEDM Fig. 4(b) and Cor. 4: DCTCP at its recommended K = 0.17·C·d = 14
    # keeps full throughput without batching (DCTCP paper §3.3), loses
    # >= 0.5 Gbps with LSO (paper: 1.391 Gbps; measured at model 4, seed 1:
    # 0.61 Gbps in phase, 0.52 offset; before model 4, without the hosts'
    # jitter, 3.1 and 0.75), and needs K >= C·d/4 + 25/12 = 22.9 (measured:
    # >= 99.9% at K = 23).
    k = round(0.17 * CD)
    off = two_flows("dctcp", k, False, offset)
    on = two_flows("dctcp", k, True, offset)
    assert off >= 0.99 * LINE, off
    assert off - on >= 0.5, (off, on)
    k_cor4 = int(np.ceil(CD / 4 + 25 / 12))  # 22.9 -> 23 packets
    assert two_flows("dctcp", k_cor4, True, offset) >= 0.97 * LINE


def test_linux_cwr_rule_shortens_dctcp_bursts_and_raises_its_k() -> None:
    # Linux (and CEDM Table I cond. 4 read literally) stop deferring in
    # any state but Open, the CWR state after an ECN cut included; DCTCP
    # cuts nearly every window, so most of its sends go at once: at K = 65
    # the median back-to-back run is 1 packet (measured), against β·W ≈ 31
    # with the paper's model (test above). Bursts still come as each CWR
    # ends, and DCTCP at 0.17·C·d = 14 still loses >= 1 Gbps (measured
    # 1.58 in phase, 1.64 offset at model 4; paper 1.391), but Cor. 4's 23 packets
    # no longer give full throughput (measured 9.22-9.25 Gbps): it takes
    # about 65 (full; 9.69 at 40), DCTCP's own 10G recommendation. ECN*,
    # which cuts once per sawtooth, keeps Cor. 2's 125 (measured full).
    _, pcaps = run_with_captures(two_flow_leafspine(65, {"lso": True}))
    runs = back_to_back_runs(pcaps["leaf0-spine0.pcap"], 1514, DATA_GAP_NS, 20_000_000)[0]
    assert np.median(runs) <= 2, np.unique(runs, return_counts=True)
    for offset in OFFSETS:
        off = two_flows("dctcp", 14, False, offset)
        assert off - two_flows("dctcp", 14, True, offset, linux=True) >= 1.0
        assert two_flows("dctcp", 23, True, offset, linux=True) <= 0.97 * LINE
        assert two_flows("dctcp", 65, True, offset, linux=True) >= 0.99 * LINE
        assert two_flows("ecn-star", 125, True, offset, linux=True) >= 0.99 * LINE


def one_flow_acks(host: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any], dict[str, bytes]]:
    """One DCTCP flow host0 -> host2 on the 10G, 100 us star (no queue
    builds: every link runs at the sender's rate)."""
    cfg = star(
        duration="0.06s",
        warmup="0.02s",
        switch={"marking": "per-queue", "threshold": "65pkt"},
        flows=[{"src": 0, "dst": 2}],
        host=host,
    )
    cfg["run"]["sample_ports"] = "none"
    cfg["run"]["pcap"] = ["switch:host0"]
    summary, pcaps = run_with_captures(cfg)
    with tempfile.TemporaryDirectory() as tmp:
        res = ecnlab.run(cfg, out=Path(tmp) / "p", progress=False).load()
        ports = port_totals(res)
    return summary, ports, pcaps


# Data packets reaching the receiver in one 20 us interrupt: one every
# 1.2 us from the first, at 0, 1.2, ..., 19.2 us: floor(20 / 1.2) + 1 = 17.
BATCH = int(20 / 1.2) + 1


@pytest.mark.parametrize(
    "host,per_ack,ack_run",
    [
        ({}, 1, 1),
        ({"interrupt_coalescing": "20us"}, 1, BATCH),
        ({"interrupt_coalescing": "20us", "interrupt_frames": 8}, 1, 8),
        ({"interrupt_coalescing": "20us", "gro": True}, BATCH, 1),
        ({"interrupt_coalescing": "20us", "gro": True, "lso": True}, BATCH, 1),
    ],
)
def test_interrupt_coalescing_and_gro_batch_acks(
    host: dict[str, Any], per_ack: int, ack_run: int
) -> None:
    # CEDM §II-A a, c. Coalescing alone: still one ACK per packet (delayed
    # ACKs off), but the 17 ACKs of a 20 us batch leave back to back (or 8
    # with interrupt_frames = 8). With GRO a batch's in-order packets merge
    # and get one ACK: 17 packets per ACK. A single flow keeps full
    # throughput in every case (measured: 9.732-9.733 Gbps).
    summary, ports, pcaps = one_flow_acks(host)
    data = ports[("switch", "host2")]["sent_packets"]
    acks = ports[("host2", "switch")]["sent_packets"]
    assert abs(data / acks - per_ack) <= 0.05 * per_ack, data / acks
    runs = back_to_back_runs(pcaps["switch-host0.pcap"], 54, ACK_GAP_NS, 20_000_000)[0]
    assert np.median(runs) == ack_run, np.unique(runs, return_counts=True)
    assert summary["goodput_gbps_by_service"]["0"] >= 0.99 * LINE


@pytest.mark.parametrize(
    "host,message",
    [
        ({"lso": True, "lso_fraction": 1.5}, "host.lso_fraction = 1.5: must be in (0, 1]"),
        ({"lso": True, "lso_fraction": 0}, "host.lso_fraction = 0: must be in (0, 1]"),
        (
            {"lso": True, "lso_max": "1KB"},
            "host.lso_max = 1000B: must hold at least one full packet",
        ),
        ({"lso": True, "lso_defer_limit": "0s"}, "host.lso_defer_limit = 0s: must be positive"),
        ({"interrupt_coalescing": "-5us"}, 'host.interrupt_coalescing: "-5us"'),
        ({"interrupt_frames": 4}, "host.interrupt_frames = 4: needs host.interrupt_coalescing"),
        ({"gro": True}, "host.gro = true: needs host.interrupt_coalescing"),
        (
            {"interrupt_coalescing": "20us", "gro": True, "gro_max": "100B"},
            "host.gro_max = 100B: must hold at least one full packet",
        ),
        ({"lso": "yes"}, 'host.lso = "yes": must be true or false'),
    ],
)
def test_bad_host_keys_are_one_clear_error(host: dict[str, Any], message: str) -> None:
    # Each bad [host] value: one error naming the key, the value and what
    # is allowed (the guide's rule for config errors), before anything runs.
    with pytest.raises(ecnlab.ConfigError) as e:
        ecnlab.validate(star(flows=[{"src": 0, "dst": 2}], host=host))
    assert str(e.value).startswith(message), str(e.value)
