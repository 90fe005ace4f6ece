"""Incast requests spread over time (`request_gap`, `response_jitter`): a
receiver's send loop and its senders' host latency, which a perfectly
synchronised barrier leaves out (see experiments/tuning-ecn-fig9/NOTES.md)."""

from __future__ import annotations

import numpy as np

from scenario_kit import exact, run_checked, star


def rounds(gap: str = "0us", jitter: str = "0us", senders: int = 8, n: int = 100) -> np.ndarray:
    """Round durations (s) of one-segment blocks: each round is the last
    request's arrival plus one packet's trip, so it shows when requests land."""
    cfg = star(
        hosts=senders + 1,
        rate="1Gbps",
        delay="10us",
        duration="10s",
        warmup="0s",
        transport={"cc": "dctcp", "min_rto": "10ms", "init_cwnd": 2},
        incast=[
            {
                "receiver": 0,
                "senders": senders,
                "block": "1460B",
                "rounds": n,
                "request_gap": gap,
                "response_jitter": jitter,
            }
        ],
    )
    # Exact replay: the tests below read request spreads to the microsecond,
    # which the hosts' jitter (100 ns a frame) would blur.
    res = run_checked(exact(cfg))
    inc = res["incast"]
    return np.asarray(inc["finish"]) - np.asarray(inc["start"])


def test_a_gap_between_requests_delays_the_last_sender() -> None:
    base = rounds()
    spread = rounds(gap="50us")
    # Synchronised: every round alike. 8 one-packet blocks queue behind each
    # other at the receiver's port (8 × 12 us); spread 50 us apart, the last
    # request leaves 7 × 50 us later and its block meets an empty port:
    # 7 × 50 - 7 × 12 = 266 us longer (±2 us of packet timing).
    assert np.ptp(base) < 1e-9 and np.ptp(spread) < 1e-9
    assert abs((spread.mean() - base.mean()) - (350e-6 - 7 * 12e-6)) < 2e-6, (base[0], spread[0])


def test_jitter_spreads_each_round_anew_and_follows_the_seed() -> None:
    base = rounds(senders=16, n=300)
    jit = rounds(jitter="400us", senders=16, n=300)
    # Each sender answers after U[0, 400 us): a round ends with the latest of
    # 16 draws, 400 × 16/17 = 376 us after its request on average; the 16
    # one-packet blocks then mostly meet an idle port, so the round grows by
    # about that much less the 16 × 12 us the synchronised burst queued for.
    extra = jit.mean() - base.mean()
    assert 376e-6 - 16 * 12e-6 - 30e-6 < extra < 376e-6 + 30e-6, extra
    assert np.std(jit) > 20e-6  # a new draw every round
    assert np.array_equal(jit, rounds(jitter="400us", senders=16, n=300))  # same seed, same rounds
