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
  where one more segment releases it at once;
- a sized flow from a 10 Gbps host into a 1 Gbps port with a few packets
  of buffer: its first window overflows the buffer and loses its tail,
  which RACK-TLP (RFC 8985) repairs in milliseconds instead of an RTO.

Every run is checked for determinism and conservation."""

from __future__ import annotations

from typing import Any

import pytest

import ecnlab
import ecnlab.runner
from scenario_kit import PAYLOAD_FRACTION, assert_same_outputs, goodput, run_checked, star


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
    assert (t["tlp"], t["rack"], t["sack_blocks"], t["cubic_linux"]) == (True, True, 3, True)
    assert (t["delayed_ack_timeout"], t["ect_retransmits"]) == ("40ms", False)
    assert t["min_rto"] == "5ms"  # given: the profile's 200ms does not apply
    over = {"profile": "linux", "cc": "reno", "prr": "off", "lost_retransmit": False}
    t = ecnlab.runner.resolve(star200(over))["transport"]
    # prr at its default, "off", is left out of the resolved config.
    assert (t["cc"], t.get("prr"), t["min_rto"], t["linux_rto"]) == ("reno", None, "200ms", True)
    # Without the profile the keys are off and left out of the resolved config.
    t = ecnlab.runner.resolve(star200({"cc": "reno"}))["transport"]
    linux_keys = {"linux_rto", "prr", "linux_delayed_ack", "lost_retransmit"}
    assert not (linux_keys | {"rto_keeps_sack", "rto_rearm_head", "tlp", "rack"}) & t.keys()


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
    cfg = star200({"profile": "linux", "tlp_slack": "soon"})
    with pytest.raises(ecnlab.ConfigError, match=r"transport\.tlp_slack"):
        ecnlab.validate(cfg)
    cfg = star200({"profile": "linux", "sack_blocks": 4})
    with pytest.raises(ecnlab.ConfigError, match=r"transport\.sack_blocks = 4: must be 1 to 3"):
        ecnlab.validate(cfg)
    cfg = star200({"cc": "pfabric", "tlp": True})
    with pytest.raises(
        ecnlab.ConfigError, match=r"transport\.tlp = true: is not for cc = \"pfabric\""
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


def tail_loss(segments: int, buffer: int, transport: dict[str, Any]) -> dict[str, Any]:
    """One sized flow from host 0 (10 Gbps) to host 1 (1 Gbps, 25 us
    links): its initial window of 10 segments reaches the 1 Gbps port ten
    times faster than it drains, so the buffer (`buffer` packets, plus the
    one being sent) keeps the head of the window and drops the rest."""
    cfg = star(
        hosts=2,
        rate=["10Gbps", "1Gbps"],
        duration="1s",
        warmup="0s",
        switch={"buffer": f"{buffer}pkt"},
        flows=[{"src": 0, "dst": 1, "size": f"{segments * 1460}B"}],
    )
    cfg["transport"] = {"profile": "linux", **transport}
    cfg["run"]["fct_end"] = "sender"
    cfg["run"]["sample_ports"] = "none"
    return cfg


def flow0(res: ecnlab.Result) -> dict[str, Any]:
    return res["flows"].to_pandas().iloc[0].to_dict()


def test_a_lost_tail_is_repaired_by_a_loss_probe_not_the_rto() -> None:
    """RFC 8985 §7 (host/recovery/tlp.rs). 10 segments into a 5-packet buffer: the
    last 4 are dropped and nothing after them arrives, so no duplicate ACK
    comes. The linux profile without TLP waits for the RTO (srtt + 200
    ms): the flow ends after 200 ms. With TLP the probe, the last segment
    again, goes a PTO = 2·srtt + 2 ms (Linux's slack) after the last ACK;
    its SACK starts recovery (RACK's verdict: everything below it went a
    PTO earlier) and the three other holes follow in two round trips of
    about 0.15 ms: done within 2 ms + a few srtt, no timeout, each loss
    resent once."""
    off = flow0(run_checked(tail_loss(10, 5, {"tlp": False, "rack": False})))
    on = flow0(run_checked(tail_loss(10, 5, {})))
    assert (off["drops"], off["timeouts"]) == (4, 1), off
    assert off["fct"] > 200e-3, off
    assert (on["drops"], on["retransmits"], on["timeouts"]) == (4, 4, 0), on
    assert 2e-3 < on["fct"] < 3.5e-3, on


def test_a_lone_lost_segment_is_probed_at_the_rto_time() -> None:
    """RFC 8985 §7.2: with one segment in flight the PTO adds the
    receiver's worst-case delayed ACK (200 ms), and the RTO caps it. 10
    segments into an 8-packet buffer lose only the last; once the other 9
    are ACKed it is alone in flight, so the probe (a retransmission of it)
    comes when the RTO would have fired, about 200 ms, and no RTO is
    counted: cwnd is not collapsed to one segment."""
    off = flow0(run_checked(tail_loss(10, 8, {"tlp": False, "rack": False})))
    on = flow0(run_checked(tail_loss(10, 8, {})))
    assert (off["drops"], off["timeouts"], on["drops"], on["timeouts"]) == (1, 1, 1, 0)
    assert abs(on["fct"] - off["fct"]) < 1e-6 and 200e-3 < on["fct"] < 201e-3, (on, off)


def test_rack_resends_holes_below_too_few_sacks() -> None:
    """RFC 8985 §6 (host/recovery/rack.rs). 11 segments into a 5-packet buffer: the
    window of 10 loses segments 6-9; the 11th, sent on the first ACKs, gets
    through and is SACKed. One duplicate ACK is too few for fast
    retransmit, and no probe goes while data is SACKed, so TLP alone waits
    for the RTO. RACK's timer starts recovery a quarter of min_rtt after
    the SACK: the flow is done in about five round trips, well under 1 ms."""
    runs = {
        name: flow0(run_checked(tail_loss(11, 5, t)))
        for name, t in [("tlp", {"rack": False}), ("rack-tlp", {})]
    }
    assert runs["tlp"]["timeouts"] == 1 and runs["tlp"]["fct"] > 200e-3, runs
    assert runs["rack-tlp"]["timeouts"] == 0 and runs["rack-tlp"]["fct"] < 1e-3, runs
    assert runs["rack-tlp"]["retransmits"] == runs["rack-tlp"]["drops"] == 4, runs


def test_two_senders_into_a_small_buffer_finish_without_an_rto() -> None:
    """A two-sender incast: 10 segments each from two 1 Gbps hosts into a
    5-packet buffer at the receiver's 1 Gbps port. Arriving at twice the
    drain rate, the windows interleave until the buffer is full, then
    every other packet is lost: flow 0 loses its 9th segment (the 10th is
    SACKed: one duplicate ACK), flow 1 its 6th to 8th and its 10th (the
    9th SACKed). Too few duplicate ACKs for fast retransmit, and no probe
    while data is SACKed: without RACK both wait for the RTO (about 200
    ms). With it (RFC 8985 §6.2-6.3) recovery starts a quarter of min_rtt
    after the SACK, and flow 1's recovery resends its lost last segment
    once a retransmission sent after it is delivered: both are done
    within 1 ms (a few round trips of 0.1-0.2 ms), each loss resent
    once."""

    def incast(transport: dict[str, Any]) -> list[dict[str, Any]]:
        cfg = star(
            rate="1Gbps",
            duration="1s",
            warmup="0s",
            switch={"buffer": "5pkt"},
            flows=[{"src": h, "dst": 2, "size": f"{10 * 1460}B"} for h in (0, 1)],
        )
        cfg["transport"] = {"profile": "linux", **transport}
        cfg["run"]["fct_end"] = "sender"
        cfg["run"]["sample_ports"] = "none"
        return run_checked(cfg)["flows"].to_pandas().to_dict("records")

    off = incast({"tlp": False, "rack": False})
    on = incast({})
    assert all(f["timeouts"] == 1 and f["fct"] > 200e-3 for f in off), off
    assert all(f["timeouts"] == 0 and f["fct"] < 1e-3 for f in on), on
    assert [f["retransmits"] for f in on] == [f["drops"] for f in on] == [1, 4], on


def test_three_sack_blocks_matter_only_where_acks_are_lost() -> None:
    """host/sack_blocks.rs: Linux's ACKs repeat the newest three SACK
    blocks (RFC 2018 §4). That tells a sender nothing it did not know
    unless an ACK was lost. On the 200 Mbps star, where only data queues,
    three blocks and one give byte-identical outputs. With data and ACKs
    sharing both directions' queues under a CoDel that drops (target 20 us,
    interval 500 us), ACKs are lost and the runs differ; each run is
    deterministic and conserves packets."""
    lone = star200({"profile": "linux", "sack_blocks": 1})
    assert_same_outputs(lone, star200({"profile": "linux", "sack_blocks": 3}))
    runs = {}
    for n in (1, 3):
        cfg = star(
            rate="200Mbps",
            delay="100us",
            duration="1s",
            warmup="0.2s",
            switch={
                "buffer": "100pkt",
                "marking": "codel",
                "codel_target": "20us",
                "codel_interval": "500us",
            },
            flows=[
                {"src": 0, "dst": 1, "count": 2},
                {"src": 1, "dst": 0, "count": 2},
                {"src": 2, "dst": 1},
                {"src": 2, "dst": 0},
            ],
        )
        cfg["transport"] = {"profile": "linux", "sack_blocks": n}
        cfg["run"]["sample_ports"] = "none"
        runs[n] = run_checked(cfg).summary
    assert runs[1]["packets_dropped"] > 1000, runs[1]
    assert runs[1]["packets_sent"] != runs[3]["packets_sent"], (runs[1], runs[3])
