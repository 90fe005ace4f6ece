"""CUBIC (RFC 9438) against Reno: one long flow into a 1 Gbps bottleneck
(the receiver's link; the sender's is 10 Gbps, so the queue builds at the
switch) with 4 ms of base RTT, a BDP of about 333 full packets, and a
20-packet drop-tail buffer. Each loss cuts Reno to half and CUBIC to 0.7 of
the window, and at this RTT CUBIC grows as its Reno estimate W_est (RFC 9438
§4.3: 3(1 − β)/(1 + β) = 0.53 segments per RTT), since its cubic curve
(K = ∛(353·0.3/0.4) = 6.4 s) is far slower. The utilisation of each
sawtooth follows from that. Every run is checked for determinism and
conservation."""

from __future__ import annotations

from typing import Any

import pytest

import ecnlab
from scenario_kit import PAYLOAD_FRACTION, goodput, run_checked, star

LINE = 1.0 * PAYLOAD_FRACTION  # Gbps of payload at 1 Gbps
BDP = 333.0  # packets: 1 Gbps × 4 ms / 12,000 bits
W_MAX = BDP + 20  # the window that overflows the buffer


def one_flow(cc: str) -> dict[str, Any]:
    cfg = star(
        rate=["10Gbps", "10Gbps", "1Gbps"],
        delay="1ms",
        duration="20s",
        warmup="5s",
        switch={"buffer": "20pkt"},
        transport={"cc": cc, "min_rto": "200ms"},
        flows=[{"src": 0, "dst": 2}],
    )
    cfg["run"]["sample_ports"] = "none"
    return cfg


def sawtooth_utilisation(beta: float, per_rtt: float) -> float:
    """Mean of min(W, BDP)/BDP over one cycle from β·W_max to W_max, the
    window growing `per_rtt` segments an RTT (linear AIMD)."""
    low = beta * W_MAX
    below = (BDP - low) / per_rtt  # RTTs under the BDP
    above = (W_MAX - BDP) / per_rtt  # RTTs with the link full
    return (below * (low + BDP) / 2 / BDP + above) / (below + above)


@pytest.fixture(scope="module")
def runs() -> dict[str, ecnlab.Result]:
    return {cc: run_checked(one_flow(cc)) for cc in ("reno", "cubic")}


def test_reno_fills_its_sawtooth(runs: dict[str, ecnlab.Result]) -> None:
    # Halving from 353 and adding one per RTT: 0.79 of the line.
    want = sawtooth_utilisation(0.5, 1.0)
    assert abs(want - 0.79) < 0.01
    got = goodput(runs["reno"])[0] / LINE
    assert abs(got - want) < 0.03, (got, want)


def test_cubic_cuts_less_and_uses_more_of_the_link(runs: dict[str, ecnlab.Result]) -> None:
    # Cut to 0.7 of 353 and growing 0.53 per RTT: 0.895 of the line.
    alpha = 3 * (1 - 0.7) / (1 + 0.7)
    want = sawtooth_utilisation(0.7, alpha)
    assert abs(want - 0.895) < 0.01
    got = goodput(runs["cubic"])[0] / LINE
    assert abs(got - want) < 0.03, (got, want)
    assert got > goodput(runs["reno"])[0] / LINE + 0.05
    # Losses, but no timeouts: fast recovery handles each one.
    f = runs["cubic"]["flows"].to_pandas()
    assert f["retransmits"].iloc[0] > 10 and f["timeouts"].iloc[0] == 0


def test_cubic_keys_are_checked() -> None:
    cfg = one_flow("cubic")
    cfg["transport"]["cubic_beta"] = 1.5
    with pytest.raises(ecnlab.ConfigError, match=r"transport\.cubic_beta.*\(0, 1\)"):
        ecnlab.validate(cfg)
