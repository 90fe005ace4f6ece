"""CEDM against LSO micro-bursts on the CEDM paper's two-flow set-up: a 3-host
10 Gbps star with 100 us of base RTT (C·d = 83.3 packets), LSO at the
senders (64 KB, β = 1/3). Shan & Ren, "Improving ECN marking scheme with
micro-burst traffic in data center networks", §III (Cor. 1-4) and §IV-V."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

import ecnlab
from scenario_kit import PAYLOAD_FRACTION, cedm_two_flows, exact, fct_stats, goodput, run_checked

FIG11_BASE = Path(__file__).parents[2] / "experiments" / "cedm-fig11" / "base.toml"

LINE = 10.0 * PAYLOAD_FRACTION  # 9.733 Gbps of payload on a 10G link
CD = 10e9 * 100e-6 / 8 / 1500  # 83.3 packets
N, BETA = 2, 1 / 3


def two_flows(
    cc: str, switch: dict[str, Any], lso: bool, offset: str, replay: bool = False, **run: Any
) -> Any:
    """CEDM's two-flow set-up (`cedm_two_flows`), run checked; `replay`:
    exactly (no host jitter)."""
    # The paper's LSO: deferral goes on in the CWR state (see
    # test_lso.PAPER_LSO); its Cor. 1-4 and Figs. 4 and 10 assume it.
    cfg = cedm_two_flows(cc, switch, {"lso": lso, "lso_defer_in_cwr": lso}, offset)
    cfg["run"].update(run)
    res = run_checked(exact(cfg) if replay else cfg)
    assert res.summary["packets_dropped"] == 0
    return res


def loss(cc: str, k1: int, cedm: bool, offset: str) -> float:
    """Payload throughput lost to the link (Gbps) with LSO on."""
    if cedm:
        # §IV-C: K2 = K1 + (N − 1)·B = 5/4·K1 + C·d/4 for N = 2, β = 1/3.
        k2 = round(1.25 * k1 + CD / 4)
        sw = {"marking": "cedm", "threshold": f"{k1}pkt", "cedm_k2": f"{k2}pkt", "cedm_ws": 0.129}
    else:
        sw = {"marking": "per-queue", "threshold": f"{k1}pkt"}
    return LINE - goodput(two_flows(cc, sw, True, offset))[0]


# In phase (the analysis's synchronised senders) and drifting apart.
OFFSETS = ["0s", "0.5ms"]


@pytest.mark.parametrize("offset", OFFSETS)
def test_cedm_cuts_dctcp_loss_at_least_threefold(offset: str) -> None:
    # §V, Fig. 10(b): DCTCP at K = 0.17·C·d = 14 with LSO loses 1.391 Gbps,
    # DCTCP+CEDM (K1 = 14, K2 = 38, w_s = 0.129) 0.210: over 6x less. The
    # bar here: at least 3x, from a loss of at least 0.5 Gbps. Measured:
    # 3.14 -> 0.000 in phase, 0.75 -> 0.001 drifting (experiments/cedm-fig10).
    plain, cedm = loss("dctcp", 14, False, offset), loss("dctcp", 14, True, offset)
    assert plain >= 0.5, plain
    assert cedm * 3 <= plain, (plain, cedm)


@pytest.mark.parametrize("offset", OFFSETS)
def test_cedm_cuts_ecn_star_loss_at_least_1_3_fold(offset: str) -> None:
    # §V, Fig. 10(a): ECN* at K = C·d = 83 with LSO loses 0.127 Gbps,
    # ECN*+CEDM (K1 = 83, K2 = 125) 0.076: 1.6x less. The bar: 1.3x.
    # Measured: 0.21 -> 0.078 in phase, 0.16 -> 0.108 drifting.
    plain, cedm = loss("ecn-star", 83, False, offset), loss("ecn-star", 83, True, offset)
    assert plain >= 0.08, plain
    assert cedm * 1.3 <= plain, (plain, cedm)


def amplitude(cc: str, k: int, lso: bool, offset: str) -> float:
    """Queue oscillation amplitude q_max − q_min in packets (CEDM Theorems 1
    and 2 define A so), from every enqueue and dequeue of the bottleneck
    port over 150 ms of steady state. An exact replay: Corollaries 1-4
    bound the oscillation of two flows whose bursts keep a fixed phase (the
    offsets "in phase" and "drifting" construct it); with the hosts' 100 ns
    jitter the drifting DCTCP case measured 67 packets, 31% over Cor. 3's
    upper bound (62 without)."""
    res = two_flows(
        cc,
        {"marking": "per-queue", "threshold": f"{k}pkt"},
        lso,
        offset,
        replay=True,
        trace_ports=["switch:host2"],
        trace_from="0.15s",
    )
    q = res["trace"]["packets"].to_numpy()
    assert len(q) > 100_000
    return float(q.max() - q.min())


@pytest.mark.parametrize("offset", OFFSETS)
def test_lso_widens_ecn_star_oscillation_as_cor1_predicts(offset: str) -> None:
    # Cor. 1 (Eq. 9), N = 2, β = 1/3, K = 125 (where the queue does not
    # underflow, so A is not cut off at zero): with LSO
    # 0.6·(C·d + K) <= A <= 0.75·(C·d + K), i.e. 125.0 to 156.2 packets;
    # without batching A = (C·d + K)/2 = 104.2 (§III-A remarks). Measured:
    # 107 without; 127 (in phase) and 131 (drifting) with. Within 30%.
    k = 125
    x = CD + k
    lo = ((BETA + 1) * N - 2 * BETA) / (2 * (N - BETA)) * x
    hi = ((BETA + 1) * N - 2 * BETA) / (2 * N * (1 - BETA)) * x
    off, on = amplitude("ecn-star", k, False, offset), amplitude("ecn-star", k, True, offset)
    assert abs(off - x / 2) <= 0.3 * x / 2, off
    assert 0.7 * lo <= on <= 1.3 * hi, (on, lo, hi)
    assert on > off


@pytest.mark.parametrize("offset", OFFSETS)
def test_lso_widens_dctcp_oscillation_as_cor3_predicts(offset: str) -> None:
    # Cor. 3 (Eq. 17), N = 2, β = 1/3, K = 65 (DCTCP's 10G setting; no
    # underflow): with LSO A lies in [β(N−1)/(N−β)·(C·d+K),
    # β(N−1)/(N(1−β))·(C·d+K) + N·√((1−β)(C·d+K)/2)] = [29.7, 51.1]
    # packets, O(C·d + K); without batching ½·√(2N(C·d+K)) = 12.2,
    # O(√(C·d + K)) (§III-B remarks). Measured: 13 without; 33 (in phase)
    # and 62 (drifting: 21% over the upper bound) with. Within 30%.
    k = 65
    x = CD + k
    lo = BETA * (N - 1) / (N - BETA) * x
    hi = BETA * (N - 1) / (N * (1 - BETA)) * x + N * math.sqrt((1 - BETA) * x / 2)
    no_batch = 0.5 * math.sqrt(2 * N * x)
    off, on = amplitude("dctcp", k, False, offset), amplitude("dctcp", k, True, offset)
    assert abs(off - no_batch) <= 0.3 * no_batch, off
    assert 0.7 * lo <= on <= 1.3 * hi, (on, lo, hi)
    assert on >= 2 * off


def leaf_spine(marking: dict[str, Any], checked: bool = False) -> dict[str, Any]:
    """CEDM §V's leaf-spine (experiments/cedm-fig11/base.toml: the cedm
    preset, 300 KB ports, DCTCP, LSO at every host, data mining) at load
    0.9 with 1,000 flows; returns the summary's FCT statistics."""
    cfg = ecnlab.load_config(FIG11_BASE)
    cfg["switch"].update(marking)
    cfg["workload"].update({"load": 0.9, "flows": 1000})
    return fct_stats(cfg, checked)


def test_leaf_spine_cedm_keeps_small_flows_fast_without_k10s_throughput_loss() -> None:
    # CEDM §V, Fig. 11, against DCTCP K = 65: CEDM (K1 = 10, K2 = 30)
    # lowers the small-flow mean by 9.2-14.5% and p99 by 17.5-20.8%; K = 10
    # alone stretches large flows by 19.6-20.2%, CEDM's stay "almost the
    # same". At this reduced scale the gaps are smaller (1,000 flows at
    # load 0.9, measured: small mean 0.969, p99 0.928, large 1.013 for
    # CEDM; large 1.029 for K = 10; experiments/cedm-fig11/NOTES.md has
    # 3,000 flows), so the bars are the directions with a margin.
    k65 = leaf_spine({"marking": "per-queue", "threshold": "65pkt"}, checked=True)
    k10 = leaf_spine({"marking": "per-queue", "threshold": "10pkt"})
    cedm = leaf_spine({"marking": "cedm", "threshold": "10pkt", "cedm_k2": "30pkt"})
    assert cedm["small_mean"] <= 0.985 * k65["small_mean"], (cedm, k65)
    assert cedm["small_p99"] <= 0.96 * k65["small_p99"], (cedm, k65)
    assert k10["large_mean"] >= 1.015 * k65["large_mean"], (k10, k65)
    assert cedm["large_mean"] <= 1.03 * k65["large_mean"], (cedm, k65)
    assert cedm["large_mean"] < k10["large_mean"]
