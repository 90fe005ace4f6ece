"""Incast rounds (Tuning ECN §2.1): a receiver asks N senders for 64 KB each
over pre-opened DCTCP connections; the next round starts when all arrive.
1 Gbps star, 10 us links (base RTT ≈ 64 us with serialisation, C×RTT ≈ 5
packets), K = 20 packets, RTOmin 10 ms.

Why this RTT: with 25 us or 50 us links (C×RTT ≈ 9 or 17 packets) our model
shows dequeue marking's gain only for 16-22 senders, and both schemes first
drop below 600 Mbps at 12-14 senders, unlike Tuning ECN Fig. 9. That gap is
open (see the closing note of the engine issue); these tests pin the regime
where the paper's effect does appear, and would catch it vanishing."""

from __future__ import annotations

import ecnlab
from scenario_kit import run_checked, star

GRID = list(range(4, 41, 2))  # every second sender count: no gaps to hide a dip


def incast_cfg(n: int, buffer: str, dequeue: bool, rounds: int = 20) -> dict:
    return star(
        hosts=n + 1,
        rate="1Gbps",
        delay="10us",
        duration="3s",
        warmup="0s",
        switch={
            "buffer": buffer,
            "marking": "per-queue",
            "threshold": "20pkt",
            "dequeue_marking": dequeue,
        },
        transport={"cc": "dctcp", "min_rto": "10ms"},
        incast=[{"receiver": 0, "senders": n, "block": "64KB", "rounds": rounds}],
    )


def goodputs(buffer: str, dequeue: bool) -> dict[int, float]:
    out = {}
    for n in GRID:
        s = ecnlab.run(incast_cfg(n, buffer, dequeue), progress=False).summary
        assert s["incast_rounds_completed"] == 20, (n, s)
        out[n] = s["incast_goodput_gbps"]
    return out


def max_senders_above(g: dict[int, float], floor: float = 0.6) -> int:
    """Most senders before goodput first falls below `floor` (Tuning ECN
    Fig. 9's metric, 600 Mbps)."""
    best = 0
    for n in GRID:
        if g[n] < floor:
            break
        best = n
    return best


def test_dequeue_marking_rescues_incast_with_small_buffer() -> None:
    # Tuning ECN §5.1 and Fig. 9 (DCTCP, h = 20, 40 MTU buffer): goodput
    # collapses past ~10 senders with enqueue marking; marking at dequeue
    # moves that to 24 senders (+140%). We expect the collapse (below 600
    # Mbps within 8-16 senders) and at least twice as many senders with
    # dequeue marking, which also stays near line rate where enqueue
    # marking has collapsed.
    enq = goodputs("40pkt", dequeue=False)
    deq = goodputs("40pkt", dequeue=True)
    n_enq, n_deq = max_senders_above(enq), max_senders_above(deq)
    assert 8 <= n_enq <= 16, enq
    assert n_deq >= 2 * n_enq, (enq, deq)
    assert min(deq[n] for n in GRID if n <= n_enq + 6) > 0.85, deq


def test_gain_shrinks_as_buffer_grows() -> None:
    # With 100 MTU of buffer (B >= 2h + C×RTT, Tuning ECN Eq. 5) enqueue
    # marking alone already holds 600 Mbps across the grid, as in Fig. 9
    # where the dequeue gain drops from +140% at 40 MTU to +16% at 100 MTU.
    enq = goodputs("100pkt", dequeue=False)
    assert max_senders_above(enq) == GRID[-1], enq


def test_incast_round_accounting() -> None:
    # Every round moves N × 64 KB; goodput per round is that over the round
    # time, never above the 1 Gbps payload rate (0.973 Gbps).
    res = run_checked(incast_cfg(8, "100pkt", dequeue=True, rounds=10))
    inc = res["incast"].to_pylist()
    assert [r["round"] for r in inc] == list(range(1, 11))
    for r in inc:
        dt = r["finish"] - r["start"]
        assert r["goodput_gbps"] == __import__("pytest").approx(8 * 64e3 * 8 / dt / 1e9)
        assert r["goodput_gbps"] < 0.9734
    flows = res["flows"].to_pylist()
    assert all(f["kind"] == "incast" and f["bytes_received"] == 10 * 64_000 for f in flows)
