"""The figures that run on the MQ-ECN authors' ns-2 set-up carry its transport and NIC.

MQ-ECN Figs. 9-13 use the authors' scripts, and ML-ECN §IV ran every scheme on
"the exact code and the same settings" (its shared base.toml serves mlecn-fig2
and mlecn-fig4 to fig15). docs/validation/ns2.md lists what the scripts set;
each value below is the script's variable named beside it. A NIC that marks
(`[nic]`) is the scripts' NIC only with no TCP small queues in front of it: a
FullTcp agent hands its link queue all that cwnd allows. The ML-ECN set-up once
had `[nic]` with the default 3 KB limit, so its NICs seldom held a queue; this
test keeps the pair together, and makes every new set-up with `[nic]` say which it is
(FQ-CoDel's figures follow pFabric's line of scripts, whose NICs fill the same way).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python < 3.11
    import tomli as tomllib

EXPERIMENTS = Path(__file__).resolve().parents[2] / "experiments"

# The authors' scripts (docs/validation/ns2.md, "The options that mirror the
# authors' set-up"): transport key -> value.
SCRIPT_TRANSPORT = {
    "init_cwnd": 16,  # init_window 16 (MQ-ECN §5.2; ML-ECN §IV: IW 16)
    "min_rto": "5ms",  # minrto_
    "init_rto": "5ms",  # rtxcur_init_
    "max_rto": "64s",  # maxrto_
    "delayed_ack": 1,  # segsperack_ 1
    "clock_granularity": "1us",  # tcpTick_
    "ca": "basic",  # windowOption_ 0
    "rx_window": 1256,  # window_
    "host_queue_limit": "1GB",  # FullTcp: no TCP small queues
}
# Where the sender is DCTCP (mqecn-fig12 runs ECN*, the scripts' Sack with ECN).
SCRIPT_DCTCP = {
    "dctcp_g": 0.0625,  # dctcp_g_ = 1/16
    "dctcp_alpha_init": 0.0,  # the authors' DCTCP patch starts alpha at 0
}

AUTHORS_SET_UP = [
    "mqecn-fig9/base.toml",
    "mqecn-fig10/base.toml",
    "mqecn-fig11/base.toml",
    "mqecn-fig12/base.toml",
    "mqecn-fig13/base.toml",
    "mlecn-fig4/base.toml",
]


@pytest.mark.parametrize("base", AUTHORS_SET_UP)
def test_authors_set_up_has_the_scripts_transport_and_nic(base: str) -> None:
    cfg = tomllib.loads((EXPERIMENTS / base).read_text())
    transport = cfg.get("transport", {})
    want = SCRIPT_TRANSPORT | (SCRIPT_DCTCP if transport.get("cc") == "dctcp" else {})
    wrong = {k: (transport.get(k), v) for k, v in want.items() if transport.get(k) != v}
    assert not wrong, (
        f"{base}: transport keys that differ from the authors' scripts (ours, theirs): {wrong}"
    )
    # Every host link in the scripts is a switch port with the scheme's
    # queues and marking: an empty [nic] takes the switch's.
    assert cfg.get("nic") == {}, f"{base}: [nic] must be present and empty (the switch's port)"
    assert cfg.get("workload", {}).get("service_mapping") == "by-source", base


# Set-ups with `[nic]` that are not the MQ-ECN authors': FQ-CoDel in the DCN ran
# pFabric's line of ns-2 scripts, which build both ends of a host link with the
# fabric's queue ($switchAlg) and FullTcp agents (fqcodel-fig3/NOTES.md, "How much
# a host's NIC holds"). Their NIC is the switch's port with no small queues in
# front of it, but their transport is Table II's, not the MQ-ECN scripts'.
PFABRIC_LINE_SET_UP = ["fqcodel-fig3/base.toml"]
# The HPCC simulator's set-up (docs/guide/hpcc-import.md, ACK_HIGH_PRIO 1).
HPCC_SIMULATOR_SET_UP = ["hpcc-fig11/base.toml"]


@pytest.mark.parametrize("base", HPCC_SIMULATOR_SET_UP)
def test_hpcc_simulator_set_up_has_a_nic_that_sends_acks_first(base: str) -> None:
    cfg = tomllib.loads((EXPERIMENTS / base).read_text())
    # Its NIC sends the ACK queue first and marks nothing: service 0 strictly
    # first, as the switches' priority 0 (switch.scheduler = "sp").
    assert cfg.get("nic") == {"scheduler": "sp", "marking": "none"}, base
    assert cfg["switch"]["scheduler"] == "sp" and cfg["switch"]["pfc_priorities"] == [1], base


@pytest.mark.parametrize("base", PFABRIC_LINE_SET_UP)
def test_pfabric_line_set_up_has_a_nic_that_fills(base: str) -> None:
    cfg = tomllib.loads((EXPERIMENTS / base).read_text())
    assert cfg.get("nic") == {}, f"{base}: [nic] must be present and empty (the switch's port)"
    # FullTcp knows no TCP small queues: without this the NIC never holds a window.
    assert cfg.get("transport", {}).get("host_queue_limit") == "1GB", base
    assert cfg.get("transport", {}).get("profile") == "pfabric", base  # Table II


def test_every_base_with_a_nic_is_classified() -> None:
    # A new shared set-up with `[nic]` must say whose scripts it follows (and
    # then carry their keys, above).
    with_nic = {
        str(p.relative_to(EXPERIMENTS))
        for p in EXPERIMENTS.glob("*/*.toml")
        if "nic" in tomllib.loads(p.read_text())
    }
    want = set(AUTHORS_SET_UP) | set(PFABRIC_LINE_SET_UP) | set(HPCC_SIMULATOR_SET_UP)
    assert with_nic == want, sorted(with_nic ^ want)


def test_the_limit_is_what_lets_a_marking_nic_fill() -> None:
    # Why the pair matters, in the engine: one sender behind a NIC that marks
    # at K = 20 packets (30,000 B). With Linux's small queues (3 KB) the NIC
    # never holds more than two of the flow's 1,500 B packets, so it never
    # marks; without them (ns-2) the flow's window waits there and the NIC
    # marks.
    import ecnlab

    def nic(limit: str) -> dict:
        cfg = {
            "run": {"seed": 1},
            "topology": {"kind": "star", "hosts": 2, "link_rate": "10Gbps", "link_delay": "20us"},
            "switch": {"buffer": "300KB", "marking": "per-queue", "threshold": "20pkt"},
            "nic": {},
            "transport": {"cc": "dctcp", "host_queue_limit": limit},
            "flows": [{"src": 0, "dst": 1, "size": "5MB"}],
        }
        res = ecnlab.run(cfg, progress=False)
        s = res.summary
        assert s["flows_completed"] == 1
        # Packet conservation: every packet sent was delivered, dropped or is in flight.
        accounted = s["packets_delivered"] + s["packets_dropped"] + s["packets_in_flight"]
        assert s["packets_sent"] == accounted
        rows = [r for r in res["ports"].to_pylist() if r["node"] == "host0" and r["queue"] == -1]
        assert len(rows) == 1, rows
        return rows[0]

    small = nic("3KB")
    assert small["max_bytes"] <= 3000 and small["marked"] == 0, small
    full = nic("1GB")
    assert full["max_bytes"] > 30_000 and full["marked"] > 0, full
