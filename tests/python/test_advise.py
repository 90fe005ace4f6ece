"""ecnlab advise: each number worked out by hand from the papers' equations."""

from __future__ import annotations

import re
import shlex
from typing import Any

import pytest

from ecnlab.advise import IMPRACTICAL_PKT, advise, format_advice
from ecnlab.cli import main
from ecnlab.errors import ConfigError


def test_ten_gig_hundred_microseconds() -> None:
    # 10 Gbps × 100 us = 1e10 × 1e-4 / 8 = 125,000 B = 83.33 packets of 1500 B.
    a = advise("10Gbps", "100us", buffer="300KB", queues=8)
    assert a.value("C×RTT") == pytest.approx(125_000)
    # DCTCP: K = 0.17 × 125,000 = 21,250 B (14.2 packets), recommended as 15 packets.
    assert a.value("DCTCP K") == pytest.approx(21_250)
    assert a.standard_k == pytest.approx(21_250)
    assert a.recommendation("per-queue").threshold == 15 * 1500
    # ECN*: h ≤ (300,000 − 125,000)/2 = 87,500 B (Eq. 4); B ≥ 3·C×RTT = 375,000 B
    # (Eq. 5), so 300 KB leaves no valid h; but the run is DCTCP, so no ECN* note.
    assert a.value("ECN* h, upper bound (enqueue)") == pytest.approx(87_500)
    assert a.value("buffer for ECN*, enqueue marking") == pytest.approx(375_000)
    assert not any("ECN*" in w for w in a.warnings)
    # Dequeue marking (§4.2): B ≥ h + C×RTT, so h ≤ 175,000 B; B ≥ 2·C×RTT = 250,000.
    assert a.value("ECN* h, upper bound (dequeue)") == pytest.approx(175_000)
    assert a.value("buffer for ECN*, dequeue marking") == pytest.approx(250_000)
    # MQ-ECN Eq. 2 with 8 equal queues: K/8 = 2,656.25 B (1.8 packets: impractical);
    # 8 × 15 packets = 180,000 B fits 300 KB.
    assert a.value("per-queue minimum K_i") == pytest.approx(21_250 / 8)
    assert a.value("N = 8 queues at K") == pytest.approx(180_000)
    assert not any("busy queues" in w for w in a.warnings)


def test_ecn_star_without_room_for_any_threshold() -> None:
    a = advise("10Gbps", "100us", buffer="200KB", queues=2, cc="ecn-star")
    # B = 200,000 < 2·C×RTT = 250,000: not even dequeue marking fits.
    assert any("no ECN* threshold fits" in w for w in a.warnings)
    assert all(("switch.dequeue_marking", "true") not in r.settings for r in a.recommendations)


def test_one_gig_ecn_star_and_buffer_pressure() -> None:
    # Tuning ECN's testbed: 1 Gbps, C×RTT ≈ 20 packets (RTT 240 us → 30,000 B).
    a = advise("1Gbps", "240us", buffer="40pkt", queues=4, cc="ecn-star")
    assert a.value("C×RTT") == pytest.approx(30_000)
    # ECN*'s standard K is C×RTT itself (λ = 1): no second row says it again.
    assert a.standard_k == pytest.approx(30_000)
    assert "DCTCP K" not in [r.name for r in a.rows]
    # The slow-start peak 2h + C×RTT = 90,000 B is the enqueue-marking buffer bound.
    assert a.value("buffer for ECN*, enqueue marking") == pytest.approx(90_000)
    # A 40-packet buffer (60,000 B): Eq. 4 gives h ≤ 15,000 B, below C×RTT; dequeue
    # marking's h ≤ 30,000 B just fits (B = 2·C×RTT), so the static schemes get it.
    assert a.value("ECN* h, upper bound (enqueue)") == pytest.approx(15_000)
    assert a.value("ECN* h, upper bound (dequeue)") == pytest.approx(30_000)
    assert any("dequeue marking" in w and "fits" in w for w in a.warnings)
    assert ("switch.dequeue_marking", "true") in a.recommendation("per-queue").settings
    assert ("switch.dequeue_marking", "true") not in a.recommendation("mq-ecn").settings
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
    argv = ["--rate", "10Gbps", "--rtt", "85.2us", "--buffer", "300KB", "--queues", "8"]
    assert main(["advise", *argv]) == 0
    out = capsys.readouterr().out
    for text in ("h ≥ C×RTT", "h ≤ (B − C×RTT)/2", "= 3·C×RTT", "= 2·C×RTT", "w_i/Σw · K"):
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


# --------------------------------------------------------------------------- 100 Gbps

HUNDRED_GIG = ["--rate", "100Gbps", "--rtt", "10us", "--queues", "8", "--buffer", "16MB"]


def test_hundred_gig_has_one_row_per_quantity() -> None:
    """The issue's case: 100 Gbps, 10 us, 8 queues, 16 MB. DCTCP's K and the
    standard K were one number printed twice; so were the ECN* slow-start
    peak and its buffer bound, and C×RTT and ECN*'s lowest h."""
    a = advise("100Gbps", "10us", buffer="16MB", queues=8)
    names = [r.name for r in a.rows]
    values = [round(r.bytes, 6) for r in a.rows if r.bytes is not None]
    assert len(names) == len(set(names))
    assert len(values) == len(set(values)), names
    assert "standard K" not in names
    # One recommendation per scheme, each its own scheme.
    schemes = [r.scheme for r in a.recommendations]
    assert schemes == ["per-queue", "per-port", "per-queue-min", "mq-ecn"]
    # K = 0.17 × 125,000 B = 21,250 B = 14.2 packets, rounded up to 15.
    assert {r.threshold for r in a.recommendations} == {15 * 1500}


def test_hundred_gig_flags_the_impractical_minimum() -> None:
    a = advise("100Gbps", "10us", buffer="16MB", queues=8)
    minimum = next(r for r in a.rows if r.name == "per-queue minimum K_i")
    assert minimum.bytes is not None and minimum.bytes / 1500 == pytest.approx(1.77, abs=0.01)
    assert minimum.flag == "impractical" and minimum.bytes < IMPRACTICAL_PKT * 1500
    assert a.recommendation("per-queue-min").flag == "impractical"
    assert a.recommendation("mq-ecn").flag.startswith("impractical")  # with every queue busy
    assert a.recommendation("per-queue").flag == "" and a.recommendation("per-port").flag == ""
    assert sum("impractical" in w for w in a.warnings) == 1
    # Only the rows that are a problem carry a flag.
    assert [r.name for r in a.rows if r.flag] == ["per-queue minimum K_i"]
    # At 10 Gbps and 100 us with 4 queues, K/4 = 3.5 packets: practical.
    assert not any(r.flag for r in advise("10Gbps", "100us", queues=4).recommendations)


def test_hundred_gig_notes_only_what_applies(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["advise", *HUNDRED_GIG]) == 0
    out = capsys.readouterr().out
    assert "65 pkt" not in out and "10 Gbps" not in out  # DCTCP's 10 Gbps setting
    assert "no ECN* threshold fits" not in out and "busy queues" not in out  # 16 MB is plenty
    notes = [line for line in out.splitlines() if line.strip().startswith("note:")]
    assert len(notes) == len(set(notes)) == 2  # the impractical minimum; LSO bursts


def table_lines(out: str) -> list[str]:
    """The lines of advise's first table (rows after the header, to the blank line)."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip().startswith("quantity"))
    end = lines.index("", start)
    return lines[start:end]


def test_columns_are_aligned(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (HUNDRED_GIG, ["--rate", "10Gbps", "--rtt", "100us", "--lso"]):
        assert main(["advise", *argv]) == 0
        lines = table_lines(capsys.readouterr().out)
        # The bytes and packets columns are right-aligned: " KB"/" MB" and " pkt"
        # end at one column in every row that has them.
        ends = {m.end() for line in lines[1:] for m in [re.search(r"\d (KB|MB)\b", line)] if m}
        pkts = {m.end() for line in lines[1:] for m in [re.search(r"\d pkt\b", line)] if m}
        assert len(ends) == 1 and len(pkts) == 1, lines
        # Each equation starts where the header's "equation" does.
        column = lines[0].index("equation")
        assert all(line[column - 2 : column] == "  " for line in lines[1:])


def printed_overrides(out: str) -> dict[str, list[str]]:
    """Each scheme's KEY=VALUE overrides, read from the printed --set lines."""
    lines = out.splitlines()
    common_line = next(line for line in lines if "ecnlab run EXPERIMENT.toml" in line)
    common = shlex.split(common_line.split("EXPERIMENT.toml", 1)[1])
    found: dict[str, list[str]] = {}
    for line in lines[lines.index(common_line) + 1 :]:
        if not line.strip():
            break
        scheme, flags = line.strip().split(":", 1)
        words = common + shlex.split(flags)
        assert words[0::2] == ["--set"] * (len(words) // 2), words
        found[scheme] = words[1::2]
    return found


BASE: dict[str, Any] = {
    "run": {"duration": "1ms"},
    "topology": {"kind": "star", "hosts": 2, "link_rate": "100Gbps", "link_delay": "2.5us"},
    "flows": [{"src": 0, "dst": 1}],
}


@pytest.mark.parametrize(
    "argv",
    [
        HUNDRED_GIG,
        [
            "--rate",
            "1Gbps",
            "--rtt",
            "240us",
            "--queues",
            "4",
            "--buffer",
            "40pkt",
            "--cc",
            "ecn-star",
        ],
        ["--rate", "10Gbps", "--rtt", "100us", "--queues", "3", "--weights", "1,2,3", "--lso"],
        ["--rate", "10Gbps", "--rtt", "100us", "--mtu", "9000"],
    ],
)
def test_printed_set_lines_are_accepted_by_the_engine(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """Each scheme's printed flags, applied to an experiment, resolve, and the
    engine then runs the scheme with the printed threshold."""
    pytest.importorskip("ecnlab._engine")
    from ecnlab.runner import resolve

    assert main(["advise", *argv]) == 0
    found = printed_overrides(capsys.readouterr().out)
    assert found, "no --set lines printed"
    for scheme, overrides in found.items():
        resolved = resolve(BASE, overrides)
        switch = resolved["switch"]
        values = dict(o.split("=", 1) for o in overrides)
        assert switch["marking"] == scheme
        assert switch["threshold"] == values["switch.threshold"]
        assert switch["queues"] == int(values["switch.queues"])
        assert resolved["transport"]["cc"] == values["transport.cc"]
        if scheme == "cedm":
            assert switch["cedm_k2"] == values["switch.cedm_k2"]


def test_one_queue_gives_one_answer() -> None:
    a = advise("10Gbps", "100us")
    assert [r.scheme for r in a.recommendations] == ["per-queue"]
    assert "per-queue minimum K_i" not in [r.name for r in a.rows]
    assert "mark the same" in a.recommendation("per-queue").basis
    assert "switch.threshold=22500B" in format_advice(a)
