"""ecnlab advise: each number worked out by hand from the papers' equations."""

from __future__ import annotations

import pytest

from ecnlab.advise import advise
from ecnlab.cli import main
from ecnlab.errors import ConfigError


def test_ten_gig_hundred_microseconds() -> None:
    # 10 Gbps × 100 us = 1e10 × 1e-4 / 8 = 125,000 B = 83.33 packets of 1500 B.
    a = advise("10Gbps", "100us", buffer="300KB", queues=8)
    assert a.value("C×RTT") == pytest.approx(125_000)
    # DCTCP: K = 0.17 × 125,000 = 21,250 B (14.2 packets).
    assert a.value("DCTCP K") == pytest.approx(21_250)
    # ECN*: h ≥ C×RTT (Tuning ECN Eq. 1); h ≤ (300,000 − 125,000)/2 = 87,500 B
    # (Eq. 4); B ≥ 3·C×RTT = 375,000 B (Eq. 5), so 300 KB leaves no valid h.
    assert a.value("ECN* h, lower bound") == pytest.approx(125_000)
    assert a.value("ECN* h, upper bound (enqueue)") == pytest.approx(87_500)
    assert a.value("buffer for ECN* (enqueue marking)") == pytest.approx(375_000)
    assert any("no ECN* threshold fits" in w for w in a.warnings)
    # Dequeue marking (§4.2): B ≥ h + C×RTT, so h ≤ 175,000 B; B ≥ 2·C×RTT = 250,000.
    assert a.value("ECN* h, upper bound (dequeue)") == pytest.approx(175_000)
    assert a.value("buffer for ECN* (dequeue marking)") == pytest.approx(250_000)
    # MQ-ECN Eq. 2 with 8 equal queues: K/8 = 2,656.25 B; 8 × K = 170,000 B fits 300 KB.
    assert a.value("per-queue minimum K_i") == pytest.approx(21_250 / 8)
    assert a.value("N = 8 queues at the standard K") == pytest.approx(170_000)
    assert not any("busy queues" in w for w in a.warnings)


def test_one_gig_ecn_star_and_buffer_pressure() -> None:
    # Tuning ECN's testbed: 1 Gbps, C×RTT ≈ 20 packets (RTT 240 us → 30,000 B).
    a = advise("1Gbps", "240us", buffer="40pkt", queues=4, cc="ecn-star")
    assert a.value("C×RTT") == pytest.approx(30_000)
    # ECN*'s standard K is C×RTT itself (λ = 1); slow-start peak 2h + C×RTT = 90,000 B.
    assert a.value("standard K") == pytest.approx(30_000)
    assert a.value("ECN* slow-start peak at h = C×RTT") == pytest.approx(90_000)
    # A 40-packet buffer (60,000 B): Eq. 4 gives h ≤ 15,000 B, below C×RTT; dequeue
    # marking's h ≤ 30,000 B just fits (B = 2·C×RTT).
    assert a.value("ECN* h, upper bound (enqueue)") == pytest.approx(15_000)
    assert a.value("ECN* h, upper bound (dequeue)") == pytest.approx(30_000)
    # 4 queues at K hold 120,000 B, twice the buffer.
    assert any("4 busy queues" in w for w in a.warnings)


def test_weights_split_the_threshold() -> None:
    # MQ-ECN Eq. 2: K_i = w_i/Σw · K with weights 1:2:3 and K = 0.17 · 125,000.
    a = advise("10Gbps", "100us", queues=3, weights=[1, 2, 3])
    k = 0.17 * 125_000
    assert [r.bytes for r in a.rows if r.name.startswith("minimum K_")] == pytest.approx(
        [k / 6, 2 * k / 6, 3 * k / 6]
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--rate", "10Gbs", "--rtt", "1us"], "--rate"),
        (["--rate", "10Gbps", "--rtt", "fast"], "--rtt"),
        (["--rate", "10Gbps", "--rtt", "100us", "--buffer", "3 parsecs"], "--buffer"),
        (["--rate", "10Gbps", "--rtt", "100us", "--cc", "cubic"], "--cc"),
        (["--rate", "10Gbps", "--rtt", "100us", "--queues", "2", "--weights", "1"], "--weights"),
    ],
)
def test_bad_input_is_one_line(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["advise", *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]


def test_cli_prints_each_equation(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["advise", "--rate", "10Gbps", "--rtt", "85.2us", "--buffer", "300KB"]) == 0
    out = capsys.readouterr().out
    for text in ("h ≥ C×RTT", "h ≤ (B − C×RTT)/2", "B ≥ 3·C×RTT", "B ≥ 2·C×RTT", "w_i/Σw · K"):
        assert text in out


def test_config_error_type() -> None:
    with pytest.raises(ConfigError):
        advise("1Gbps", "1us", mtu=10)


def test_lso_bounds_match_cedm_remarks() -> None:
    # CEDM §III remarks, N = 2, β = 1/3, C×RTT = 83.3 packets (10 Gbps, 100 us):
    # ECN* needs K ≥ 3/2·C×RTT = 125 packets (Cor. 2); DCTCP needs
    # K ≥ C×RTT/4 + 25/12 = 22.9 packets (Cor. 4, case 1 since
    # C×RTT + K ≥ 8.3); CEDM's K2 = 5/4·K1 + C×RTT/4 (§IV-C).
    a = advise("10Gbps", "100us", lso=True)
    cd = 125_000 / 1500
    assert a.value("ECN* K with LSO (N = 2 senders, β = 0.333)") / 1500 == pytest.approx(1.5 * cd)
    assert a.value("DCTCP K with LSO (N = 2 senders, β = 0.333)") / 1500 == pytest.approx(
        cd / 4 + 25 / 12
    )
    k1 = 0.17 * cd
    assert a.value("CEDM K2 for K1 = λ·C×RTT (dctcp)") / 1500 == pytest.approx(1.25 * k1 + cd / 4)
    assert not a.warnings
    # One sender: Cor. 2 gives (1+β−2β)/(1−β) = 1, ECN*'s usual h ≥ C×RTT.
    one = advise("10Gbps", "100us", lso=True, senders=1, cc="ecn-star")
    assert one.value("ECN* K with LSO (N = 1 senders, β = 0.333)") == pytest.approx(125_000)
    # 40 Gbps × 1 ms: β·w is far over 64 KB, so the corollaries do not apply.
    big = advise("40Gbps", "1ms", lso=True)
    assert any("reaches the LSO limit" in w for w in big.warnings)
    with pytest.raises(ConfigError, match="--lso-fraction 1.5"):
        advise("10Gbps", "100us", lso=True, lso_fraction=1.5)
