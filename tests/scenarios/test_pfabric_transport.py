"""pFabric's transport (cc = "pfabric", docs/schemes/pfabric.md) and the
TCP tuning profile of FQ-CoDel in the DCN (Table II), end to end through the
engine: the resolved config, refused input, and loss recovery in a run."""

from __future__ import annotations

import json
from typing import Any

from ecnlab.config import config_to_json
from ecnlab.runner import load_engine
from scenario_kit import assert_refused, port_totals, run_checked, star


def resolved_transport(cfg: dict[str, Any]) -> dict[str, Any]:
    """The [transport] section as the engine runs it."""
    return json.loads(load_engine().resolve(config_to_json(cfg)))["transport"]


def test_profile_fills_table_ii_and_explicit_keys_win() -> None:
    # Table II (FQ-CoDel in the DCN §IV-B): minrto_ 45us, maxrto_ 2s,
    # rtxcur_init_ 45us, tcpTick_ 1us, interval_ 6us, window_ 10^6,
    # windowInit_ 12, maxcwnd_ = queue - 1 (36 KB = 24 packets of 1500 B
    # -> 23), windowOption_ 0 (basic). min_rto given here stays 1 ms.
    cfg = star(switch={"buffer": "36864B"}, transport={"profile": "pfabric"})
    del cfg["transport"]["init_cwnd"], cfg["transport"]["min_rto"]
    t = resolved_transport(cfg)
    assert t["profile"] == "pfabric"
    assert (t["min_rto"], t["max_rto"], t["init_rto"]) == ("45us", "2s", "45us")
    assert (t["clock_granularity"], t["delayed_ack_timeout"]) == ("1us", "6us")
    assert (t["delayed_ack"], t["delayed_ack_bytes"]) == (1, True)
    assert (t["rx_window"], t["init_cwnd"], t["max_cwnd"], t["ca"]) == (10**6, 12, 23, "basic")
    cfg["transport"].update({"min_rto": "1ms", "ca": "standard"})
    t = resolved_transport(cfg)
    assert (t["min_rto"], t["ca"], t["init_rto"]) == ("1ms", "standard", "45us")


def test_bad_transport_tuning_is_refused() -> None:
    cases = [
        (
            {"profile": "windows"},
            "transport.profile: unknown variant `windows`, expected one of `pfabric`, `linux`, "
            "`dcqcn-paper`, `dcqcn-nic`",
        ),
        ({"max_cwnd": 0}, "transport.max_cwnd = 0: must be at least 1 segment"),
        ({"rx_window": 0}, "transport.rx_window = 0: must be at least 1 packet"),
        ({"clock_granularity": "0s"}, "transport.clock_granularity = 0s: must be positive"),
        (
            {"clock_granularity": "-1us"},
            'transport.clock_granularity: "-1us": must not be negative',
        ),
        ({"ca": "cubic"}, "transport.ca: unknown variant `cubic`"),
    ]
    for transport, want in cases:
        assert_refused(star(transport=transport), want, transport)


def test_pfabric_recovers_losses_by_timeout_alone_and_resends_only_what_was_lost() -> None:
    # Two 150-packet flows start together into host 2 through an 8-packet
    # buffer: their IW-12 bursts overflow it. pFabric (docs/schemes/pfabric.md,
    # prediction 4) ignores duplicate ACKs, so every loss waits for the
    # fixed 45 us timer (timeouts >= 1 per flow that lost data), and the
    # resend skips SACKed data: with no ACK lost (the ACK ports are idle)
    # and the RTO far above the ~15 us RTT, each retransmission replaces
    # exactly one drop (retransmits == drops, per flow). Data is Not-ECT,
    # so a 2-packet marking threshold marks nothing.
    size = 150 * 1460
    cfg = star(
        delay="1us",
        duration="20ms",
        warmup="0s",
        switch={"buffer": "8pkt", "marking": "per-queue", "threshold": "2pkt"},
        transport={"cc": "pfabric"},
        flows=[{"src": 0, "dst": 2, "size": f"{size}B"}, {"src": 1, "dst": 2, "size": f"{size}B"}],
    )
    del cfg["transport"]["init_cwnd"], cfg["transport"]["min_rto"]
    res = run_checked(cfg)
    flows = res["flows"].to_pylist()
    assert all(f["bytes_received"] == size for f in flows), flows
    assert sum(f["drops"] for f in flows) > 0, "the set-up must lose packets"
    for f in flows:
        assert (f["timeouts"] >= 1) == (f["drops"] > 0), f
        assert f["retransmits"] == f["drops"], f
    assert res.summary["ce_marks"] == 0
    dropped = port_totals(res)[("switch", "host2")]["dropped_overflow"]
    assert dropped == sum(f["drops"] for f in flows)
