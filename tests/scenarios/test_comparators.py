"""The ML-ECN paper's comparators (MM-ECN, A-ECN, DemePro, PMSB; ML-ECN
§IV, §VI; reconstructions: each scheme's page in docs/schemes/ says what
it rests on) on MQ-ECN §2.2.3's set-up scaled to 10 Gbps: two services in
two equal-quantum DWRR queues of one port, one long DCTCP flow in service
0 against four in service 1, standard threshold K = 65 packets (MQ-ECN
§5.2 at 10 Gbps), a 10 Gbps, 100 us star."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ecnlab
from scenario_kit import (
    PAYLOAD_FRACTION,
    assert_refused,
    assert_same_outputs,
    goodput,
    port_queue,
    run_checked,
    star,
)

LINE = 10.0 * PAYLOAD_FRACTION  # 9.733 Gbps of payload on a 10G link
K = 65  # packets
WARMUP = 0.05

# Service 0: host 0's one flow; service 1: hosts 1-4, one flow each.
FLOWS = [{"src": 0, "dst": 5, "service": 0}] + [
    {"src": i, "dst": 5, "service": 1} for i in range(1, 5)
]


def one_vs_four(
    marking: dict[str, Any], duration: str = "0.15s", queues: int = 2
) -> dict[str, Any]:
    """The set-up with `marking`'s keys; with one queue every flow shares it."""
    sw = {"queues": queues, "scheduler": "dwrr", "threshold": f"{K}pkt", **marking}
    flows = FLOWS if queues == 2 else [{**f, "service": 0} for f in FLOWS]
    return star(hosts=6, duration=duration, warmup=f"{WARMUP}s", flows=flows, switch=sw)


def queues(res: ecnlab.Result) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Occupancy samples (packets) of queue 0, queue 1 and the whole port."""
    q0, q1 = (port_queue(res, "switch", "host5", WARMUP, queue=q) for q in (0, 1))
    return q0, q1, port_queue(res, "switch", "host5", WARMUP)


@pytest.fixture(scope="module")
def runs() -> dict[str, ecnlab.Result]:
    schemes = {
        "per-queue": {"marking": "per-queue"},
        "per-port": {"marking": "per-port"},
        "mm-ecn": {"marking": "mm-ecn"},
        "a-ecn": {"marking": "a-ecn"},
        "deme-pro": {"marking": "deme-pro"},
        "pmsb": {"marking": "pmsb"},
    }
    return {name: run_checked(one_vs_four(m)) for name, m in schemes.items()}


def test_references_per_queue_holds_2k_and_per_port_starves_the_lone_flow(runs) -> None:
    # The two references the comparators sit between (MQ-ECN §2.2): per-queue
    # K lets each backlogged queue hold about K, so the port about 2K
    # (measured 123 packets); per-port K holds the port near K (measured
    # 59.6) but the one-flow service's packets are marked for the other
    # queue's backlog and it falls below its half (MQ-ECN Fig. 3, 1 vs 4
    # flows: 403 vs 539 Mbps, 43%; measured here 3.36 of 9.73 Gbps, 35%).
    _, _, port = queues(runs["per-queue"])
    assert 1.7 * K <= port.mean() <= 2.1 * K, port.mean()
    g = goodput(runs["per-port"])
    assert g[0] <= 0.45 * sum(g.values()), g
    _, _, port = queues(runs["per-port"])
    assert 0.8 * K <= port.mean() <= 1.15 * K, port.mean()


@pytest.mark.parametrize("scheme", ["deme-pro", "pmsb"])
def test_port_schemes_keep_the_port_near_k_without_a_victim(runs, scheme) -> None:
    # DemePro and PMSB test the port total against K like per-port
    # marking, so the port stays near K (measured 62.4 and 61.3 packets),
    # but neither marks a queue that is not over its share:
    # DemePro marks the head of the queue furthest above its fair share,
    # PMSB is blind to queues below K/2 (equal quanta). Each queue is held
    # near its share of K, K/2 = 32.5 packets (measured 30.9/31.5 and
    # 30.5/30.8), the one-flow queue never runs dry, and DWRR splits the full
    # link evenly (measured 4.87/4.87 Gbps for both), unlike per-port's
    # 35%.
    res = runs[scheme]
    g = goodput(res)
    assert g[0] + g[1] >= 0.95 * LINE, g
    assert abs(g[0] - g[1]) <= 0.05 * LINE, g
    q0, q1, port = queues(res)
    assert 0.8 * K <= port.mean() <= 1.15 * K, port.mean()
    for q in (q0, q1):
        assert 0.75 * K / 2 <= q.mean() <= 1.15 * K / 2, (q0.mean(), q1.mean())
    assert q0.min() > 0


def test_mm_ecn_holds_each_queue_near_the_start_of_its_random_band(runs) -> None:
    # MM-ECN-like: per queue, marks begin at
    # K_low = K/2 with a probability rising to 1 at K_high = K. DCTCP holds a
    # queue where marking begins (DCTCP §3: the queue oscillates around the
    # threshold), so each queue's mean sits near K_low = 32.5 packets, about
    # half of per-queue K's (measured 32.1 and 34.2 against 61.9 and 61.1),
    # with the link full and shared evenly.
    res = runs["mm-ecn"]
    g = goodput(res)
    assert g[0] + g[1] >= 0.95 * LINE and abs(g[0] - g[1]) <= 0.05 * LINE, g
    q0, q1, _ = queues(res)
    for q in (q0, q1):
        assert 0.8 * K / 2 <= q.mean() <= 1.25 * K / 2, (q0.mean(), q1.mean())


def test_a_ecn_lowers_its_thresholds_until_the_standing_queue_is_gone(runs) -> None:
    # A-ECN-like: each queue's threshold falls by a
    # packet every 64 arrivals while the queue never drains and rises after
    # an underflow, so it settles where the queue just touches empty: the
    # standing queue is gone (mean per queue at most K/4 = 16 packets;
    # measured 2.3 and 4.0, against per-queue K's 62) while the link stays
    # full (A-ECN's claim: short queues without throughput loss; measured
    # 9.71 of 9.73 Gbps) and evenly shared.
    res = runs["a-ecn"]
    g = goodput(res)
    assert g[0] + g[1] >= 0.95 * LINE and abs(g[0] - g[1]) <= 0.05 * LINE, g
    q0, q1, _ = queues(res)
    assert q0.mean() <= K / 4 and q1.mean() <= K / 4, (q0.mean(), q1.mean())
    # Each queue does run dry now and then (the underflows that stop the fall).
    assert q0.min() == 0 and q1.min() == 0


def test_degenerate_settings_reduce_to_the_static_schemes() -> None:
    # Byte-identical runs where a comparator's rule collapses to a static
    # one: MM-ECN with K_low = K_high has no random band and is per-queue
    # marking with K, at dequeue in front position and at enqueue in tail
    # position; A-ECN whose epoch never ends keeps K; PMSB on a one-queue
    # port has K_blind = K and the queue is the port: per-port marking.
    def run(queues: int = 2, **marking: Any) -> dict[str, Any]:
        return one_vs_four(marking, duration="0.06s", queues=queues)

    no_band = {"marking": "mm-ecn", "mmecn_k_low": f"{K}pkt"}
    pairs = [
        (run(marking="per-queue", dequeue_marking=True), run(**no_band)),
        (run(marking="per-queue"), run(**no_band, mmecn_position="tail")),
        (run(marking="per-queue"), run(marking="a-ecn", aecn_epoch=2**32 - 1)),
        (run(1, marking="per-port"), run(1, marking="pmsb")),
    ]
    for a, b in pairs:
        assert_same_outputs(a, b)
        # The runs marked, or the comparison shows nothing.
        assert run_checked(a).summary["ce_marks"] > 1000


def test_bad_comparator_keys_get_one_clear_error() -> None:
    k = {"threshold": f"{K}pkt"}
    cases = [
        ({"marking": "per-queue", **k, "mmecn_pmax": 0.5}, "switch.mmecn_pmax = 0.5: set, but"),
        (
            {"marking": "pmsb", **k, "demepro_share": "threshold"},
            'switch.demepro_share = "threshold": set, but marking "pmsb" does not use it '
            '(only "deme-pro" does)',
        ),
        ({"marking": "mm-ecn", **k, "aecn_epoch": 32}, "switch.aecn_epoch = 32: set, but"),
        ({"marking": "a-ecn", **k, "pmsb_share": "active"}, 'switch.pmsb_share = "active"'),
        ({"marking": "mm-ecn", **k, "mmecn_k_low": "80pkt"}, "switch.mmecn_k_low = 80pkt"),
        ({"marking": "mm-ecn", **k, "mmecn_pmax": 1.5}, "switch.mmecn_pmax = 1.5"),
        ({"marking": "mm-ecn", **k, "mmecn_position": "middle"}, "switch.mmecn_position"),
        ({"marking": "mm-ecn", **k, "dequeue_marking": True}, "switch.dequeue_marking = true"),
        ({"marking": "a-ecn", **k, "aecn_epoch": 0}, "switch.aecn_epoch = 0"),
        ({"marking": "a-ecn", **k, "aecn_down": "0B"}, "switch.aecn_down = 0B"),
        ({"marking": "a-ecn", **k, "aecn_k_min": "70pkt"}, "switch.aecn_k_min = 70pkt"),
        ({"marking": "deme-pro", **k, "demepro_share": "weights"}, "switch.demepro_share"),
        ({"marking": "deme-pro"}, "switch.threshold: missing"),
        ({"marking": "pmsb", "threshold": [f"{K}pkt"] * 2}, "switch.threshold = a list"),
    ]
    for sw, want in cases:
        cfg = one_vs_four({})
        cfg["switch"] = {"queues": 2, "scheduler": "dwrr", **sw}
        assert_refused(cfg, want, sw)
