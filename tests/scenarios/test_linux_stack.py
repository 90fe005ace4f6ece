"""The Linux stack profile (`transport.profile = "linux"`, host/linux.rs):
Linux's RTO estimator, PRR, Linux's delayed ACKs and Linux's defaults over
CUBIC. Checks from what each mechanism predicts, on the issue's networks:

- the 200 Mbps star (100 us links, 30-packet drop-tail buffer, one flow
  from host 0 and four from host 1): the five flows fill the bottleneck;
- 1 Gbps through CoDel (target 5 ms, interval 100 ms) with min_rto 5 ms:
  RFC 6298's RTO, srtt + 4·rttvar, hugs srtt while CoDel holds the queue
  steady, and fires spuriously whenever the queue grows past it; Linux's
  is at least srtt + min_rto;
- a sized flow of 17 full segments: Linux's receiver quick-ACKs the first
  16 and holds the 17th's ACK for the 40 ms timer (an odd segment out),
  where one more segment releases it at once.

Every run is checked for determinism and conservation."""

from __future__ import annotations

from typing import Any

import pytest

import ecnlab
import ecnlab.runner
from scenario_kit import PAYLOAD_FRACTION, goodput, run_checked, star


def star200(transport: dict[str, Any]) -> dict[str, Any]:
    cfg = star(
        rate="200Mbps",
        delay="100us",
        duration="3s",
        warmup="0.5s",
        switch={"buffer": "30pkt"},
        flows=[{"src": 0, "dst": 2}, {"src": 1, "dst": 2, "count": 4}],
    )
    cfg["transport"] = transport
    cfg["run"]["sample_ports"] = "none"
    return cfg


def codel_1g(transport: dict[str, Any]) -> dict[str, Any]:
    cfg = star(
        rate="1Gbps",
        delay="25us",
        duration="3s",
        warmup="0.5s",
        switch={
            "marking": "codel",
            "buffer": "1000pkt",
            "codel_target": "5ms",
            "codel_interval": "100ms",
        },
        flows=[{"src": 0, "dst": 2}, {"src": 1, "dst": 2, "count": 4}],
    )
    cfg["transport"] = {"cc": "reno", "min_rto": "5ms", **transport}
    cfg["run"]["sample_ports"] = "none"
    return cfg


def test_the_profile_fills_linux_defaults_and_each_key_can_be_overridden() -> None:
    t = ecnlab.runner.resolve(star200({"profile": "linux", "min_rto": "5ms"}))["transport"]
    assert (t["cc"], t["init_cwnd"], t["init_rto"], t["max_rto"]) == ("cubic", 10, "1s", "120s")
    assert (t["linux_rto"], t["prr"], t["linux_delayed_ack"]) == (True, "linux", True)
    assert (t["lost_retransmit"], t["rto_keeps_sack"], t["rto_rearm_head"]) == (True, True, True)
    assert (t["delayed_ack_timeout"], t["ect_retransmits"]) == ("40ms", False)
    assert t["min_rto"] == "5ms"  # given: the profile's 200ms does not apply
    over = {"profile": "linux", "cc": "reno", "prr": "off", "lost_retransmit": False}
    t = ecnlab.runner.resolve(star200(over))["transport"]
    # prr at its default, "off", is left out of the resolved config.
    assert (t["cc"], t.get("prr"), t["min_rto"], t["linux_rto"]) == ("reno", None, "200ms", True)
    # Without the profile the keys are off and left out of the resolved config.
    t = ecnlab.runner.resolve(star200({"cc": "reno"}))["transport"]
    linux_keys = {"linux_rto", "prr", "linux_delayed_ack", "lost_retransmit"}
    assert not (linux_keys | {"rto_keeps_sack", "rto_rearm_head"}) & t.keys()


def test_the_200mbps_star_is_full_with_the_linux_stack() -> None:
    res = run_checked(star200({"profile": "linux"}))
    # One bottleneck at 200 Mbps: its payload share is the ceiling.
    got = goodput(res)[0]
    assert 0.97 * 0.2 * PAYLOAD_FRACTION < got <= 0.2 * PAYLOAD_FRACTION * 1.001, got


@pytest.fixture(scope="module")
def codel_runs() -> dict[str, ecnlab.Result]:
    return {
        "rfc6298": run_checked(codel_1g({})),
        "linux_rto": run_checked(codel_1g({"linux_rto": True})),
    }


def test_linux_rto_fires_far_less_through_codel(codel_runs: dict[str, ecnlab.Result]) -> None:
    rfc = codel_runs["rfc6298"].summary
    lx = codel_runs["linux_rto"].summary
    # The issue measured 45 RTOs in 3 s here (ns-3, 1 ms clock: none);
    # Linux's estimator keeps RTO ≥ srtt + 5 ms, above CoDel's 5 ms target
    # of standing queue, so most of them go, and with them the go-back-N
    # resends.
    assert rfc["timeouts"] >= 20, rfc["timeouts"]
    assert lx["timeouts"] * 2 <= rfc["timeouts"], (lx["timeouts"], rfc["timeouts"])
    assert lx["retransmits"] * 2 <= rfc["retransmits"], (lx["retransmits"], rfc["retransmits"])
    # Neither loses the link.
    for r in codel_runs.values():
        assert goodput(r)[0] > 0.95 * PAYLOAD_FRACTION


def sized_flow(segments: int) -> dict[str, Any]:
    cfg = star(
        duration="1s", warmup="0s", flows=[{"src": 0, "dst": 2, "size": f"{segments * 1460}B"}]
    )
    cfg["transport"] = {"profile": "linux"}
    cfg["run"]["fct_end"] = "sender"
    cfg["run"]["sample_ports"] = "none"
    return cfg


def test_linux_delayed_ack_holds_an_odd_last_segment_for_40ms() -> None:
    fct = {n: run_checked(sized_flow(n))["flows"].to_pandas()["fct"].iloc[0] for n in (17, 18)}
    # 18 segments: quick ACKs for 16, the 17th and 18th ACKed together:
    # a few round trips of 50 us and the handshake, well under 1 ms.
    assert fct[18] < 1e-3, fct
    # 17: the last ACK waits for the 40 ms delayed-ACK timer (less the
    # 1.2 us the 18th segment's serialisation adds to the other run).
    assert 39.99e-3 <= fct[17] - fct[18] <= 40.01e-3, fct


def test_linux_keys_are_checked() -> None:
    cfg = star200({"cc": "reno", "prr": "fast"})
    with pytest.raises(
        ecnlab.ConfigError,
        match=r"transport\.prr: unknown variant `fast`, expected one of `off`, `crb`, `ssrb`",
    ):
        ecnlab.validate(cfg)
    cfg = star200({"cc": "reno", "linux_rto": "yes"})
    with pytest.raises(ecnlab.ConfigError, match=r"transport\.linux_rto"):
        ecnlab.validate(cfg)
    cfg = star200({"cc": "reno", "lost_retransmit": True})
    with pytest.raises(
        ecnlab.ConfigError, match=r"transport\.lost_retransmit = true: needs transport\.prr"
    ):
        ecnlab.validate(cfg)


def test_lost_retransmissions_through_fq_codel_at_10gbps() -> None:
    """The issue's FQ-CoDel case without ECN at 10 Gbps (target 5 us,
    interval 100 us, min_rto 5 ms): lost fast retransmissions were found
    only by the RTO. With PRR and lost-retransmission detection the
    sender resends them once later data is SACKed: no timeouts."""
    base = {"cc": "reno", "min_rto": "5ms"}
    runs = {}
    for name, extra in [("ns2", {}), ("linux", {"prr": "linux", "lost_retransmit": True})]:
        cfg = star(
            rate="10Gbps",
            duration="0.5s",
            warmup="0.1s",
            switch={"qdisc": "fq-codel", "codel_target": "5us", "codel_interval": "100us"},
            flows=[{"src": 0, "dst": 2}, {"src": 1, "dst": 2, "count": 4}],
        )
        cfg["transport"] = {**base, **extra}
        cfg["run"]["sample_ports"] = "none"
        runs[name] = run_checked(cfg).summary
    assert runs["ns2"]["timeouts"] >= 3, runs["ns2"]
    assert runs["linux"]["timeouts"] == 0, runs["linux"]


def test_a_recovery_behind_a_full_buffer_retransmits_each_loss_once() -> None:
    """docs/tcp-retransmissions.md: 8 Reno flows from 4 hosts into one
    200 Mbps port with a 100-packet drop-tail buffer (about 6 ms of queue)
    and min_rto 5 ms. The queue holds the RTT steady, so RFC 6298's RTO is
    barely above it, and the timer, running from the last ACK that moved
    snd_una, fires while the fast retransmission is still queued: a
    spurious RTO, then a go-back that resends data the receiver holds or
    is about to receive. Restarting the timer at the retransmission of
    snd_una (Linux) gives it a full RTO; with the scoreboard kept and
    Linux's RTO too, each loss is repaired by one retransmission, as the
    kernel does on the testbed (bench/testbed/spread.csv: retransmissions
    equal drops, no timeouts)."""
    runs = {}
    for name, extra in [
        ("default", {}),
        ("linux", {"linux_rto": True, "rto_keeps_sack": True, "rto_rearm_head": True}),
    ]:
        cfg = star(
            rate="200Mbps",
            delay="100us",
            duration="2s",
            warmup="0.5s",
            hosts=5,
            switch={"buffer": "100pkt"},
            flows=[{"src": h, "dst": 4, "count": 2} for h in range(4)],
        )
        cfg["transport"] = {"cc": "ecn-star", "min_rto": "5ms", **extra}
        cfg["run"]["sample_ports"] = "none"
        runs[name] = run_checked(cfg).summary
    d, lx = runs["default"], runs["linux"]
    # Default: spurious RTOs and go-back-N, more than two copies per loss.
    assert d["retransmits"] > 2 * d["packets_dropped"], d
    assert d["timeouts"] > 0.1 * d["packets_dropped"], d
    # With the three keys: one retransmission per loss (a loss near the
    # end may still be unrepaired), RTOs only for lost retransmissions.
    assert abs(lx["retransmits"] - lx["packets_dropped"]) <= 0.02 * lx["packets_dropped"], lx
    assert lx["timeouts"] <= 0.02 * lx["packets_dropped"], lx
