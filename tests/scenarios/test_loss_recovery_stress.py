"""Loss recovery under every loss pattern (issue 50): each transport stack
(the default, the linux profile, each Linux mechanism on its own) × cc ×
loss pattern × flow count, short runs on issue 50's star (senders on
1 Gbps links, the receiver on 100 Mbps, 5 ms every link: 20 ms of base
RTT, a 1,000-packet buffer at the bottleneck).

Every run must
- deliver at least 90% of the bottleneck: the buffer and each AQM's target
  are at least half the 167-packet BDP (100 Mbps × 20 ms / 1,500 B), so
  even one Reno flow halving its window keeps the link busy (the
  buffer-sizing rule of Villamizar & Song, 1994); only the RTOs a stack
  takes cost goodput;
- account for every retransmission: one the receiver did not already hold
  replaced a lost copy, so retransmissions − spurious ≤ drops + packets
  still in flight;
- keep its packets and its outputs: conservation and determinism (one
  point per stack runs twice).

Stacks that keep their SACK scoreboard across an RTO (RFC 6675 §5.1; the
linux profile, `rto_keeps_sack`) retransmit only what is lost: the kernel
on the testbed's star retransmits exactly what it drops
(docs/tcp-retransmissions.md: 467–539 drops, 467–539 retransmissions),
and a spurious retransmission needs reordering (none here) or a spurious
RTO, or a tail loss probe, which resends the last segment whether or not
it was lost (RFC 8985 §7.3: the probe is spurious when the tail was only
late). So for them retransmissions ≤ 1.1 × drops and spurious ≤ 10% of
retransmissions (the linux profile's worst here, CUBIC's 20 flows under
PIE, is 7.6%: 73 of 965, most after probes and RTOs of flows with a
window of a few segments). Go-back-N stacks (RFC 2018 §8: the scoreboard dropped at
an RTO) resend after each RTO what the receiver holds, so their spurious
share is not bounded here, only their goodput and accounting.

On main a683f4a the linux profile with Reno under PIE's early drops fails
all three (issue 50: 51,661 drops, 11× the default stack's).
"""

from __future__ import annotations

from typing import Any

import pytest

import ecnlab
from scenario_kit import check_conservation, run_checked

BOTTLENECK_PAYLOAD_GBPS = 0.1 * 1460 / 1500

# name: (keys, the cc it applies to or None for every cc, keeps the scoreboard)
STACKS: dict[str, tuple[dict[str, Any], str | None, bool]] = {
    "default": ({}, None, False),
    "linux": ({"profile": "linux"}, None, True),
    "linux_rto": ({"linux_rto": True}, None, False),
    "prr": ({"prr": "linux"}, None, False),
    "linux_delayed_ack": ({"linux_delayed_ack": True}, None, False),
    # lost_retransmit needs prr (transport.lost_retransmit's validation).
    "lost_retransmit": ({"prr": "linux", "lost_retransmit": True}, None, False),
    "rto_keeps_sack": ({"rto_keeps_sack": True}, None, True),
    "sack_blocks": ({"sack_blocks": 3}, None, False),
    "rto_rearm_head": ({"rto_rearm_head": True}, None, False),
    "tlp": ({"tlp": True}, None, False),
    "rack": ({"rack": True}, None, False),
    "linux_cwnd": ({"linux_cwnd": True}, None, False),
    "hystart": ({"hystart": True}, "cubic", False),
    "cubic_linux": ({"cubic_linux": True}, "cubic", False),
    "dctcp_linux": ({"dctcp_linux": True}, "dctcp", False),
    # F-RTO (RFC 5682) is not in the profile yet (it moves its outputs):
    # tried where Linux runs it, beside everything else the profile has.
    "linux_frto": ({"profile": "linux", "frto": True}, None, True),
}

CCS = ["reno", "cubic", "dctcp", "ecn-star"]

# The bottleneck's discipline. RED, PIE and CoDel drop Not-ECT packets
# early (at random, or on sojourn) and mark ECT ones; PIE with ECN off
# drops every flow's packets early.
PATTERNS: dict[str, dict[str, Any]] = {
    "drop-tail": {},
    "red": {
        "marking": "red",
        "red_min": "100pkt",
        "red_max": "300pkt",
        "red_pmax": 0.1,
        "drop_not_ect": True,
    },
    # RFC 8033's defaults, ECN off: issue 50's case.
    "pie": {"marking": "pie", "pie_ecn": False},
    "codel": {
        "marking": "codel",
        "codel_target": "10ms",
        "codel_interval": "100ms",
        "codel_ecn": False,
    },
}

FLOWS = [1, 4, 20]


def config(stack: str, cc: str, pattern: str, flows: int) -> dict[str, Any]:
    keys, _, _ = STACKS[stack]
    transport = {"cc": cc, "mss": 1448, "header": 52, "min_rto": "200ms", "init_cwnd": 10}
    transport.update(keys)
    return {
        "run": {"seed": 1, "duration": "8s", "warmup": "3s", "sample_ports": "none"},
        "topology": {
            "kind": "star",
            "hosts": 3,
            "link_rate": ["1Gbps", "1Gbps", "100Mbps"],
            "link_delay": "5ms",
        },
        "switch": {"buffer": "1000pkt", **PATTERNS[pattern]},
        "host": {"jitter": "0ns"},
        "transport": transport,
        "flows": [
            {"src": 0, "dst": 2, "count": max(1, flows // 2)},
            *([{"src": 1, "dst": 2, "count": flows - flows // 2}] if flows > 1 else []),
        ],
    }


def judge(stack: str, s: dict[str, Any], default: dict[str, Any]) -> list[str]:
    """What this run breaks of the module's bounds (empty: none); `default`
    is the default stack's summary for the same case."""
    keeps = STACKS[stack][2]
    good = sum(s["goodput_gbps_by_service"].values())
    base = sum(default["goodput_gbps_by_service"].values())
    drops, rtx, spur = s["packets_dropped"], s["retransmits"], s["spurious_retransmits"]
    bad = []
    if rtx - spur > drops + s["packets_in_flight"]:
        bad.append(f"{rtx - spur} needed retransmissions for {drops} drops")
    if keeps:
        if good < 0.9 * BOTTLENECK_PAYLOAD_GBPS:
            bad.append(
                f"goodput {good * 1000:.1f} Mbps < 90% of {BOTTLENECK_PAYLOAD_GBPS * 1000:.1f}"
            )
        if rtx > 1.1 * drops + 10:
            bad.append(f"{rtx} retransmissions > 1.1 × {drops} drops")
        if spur > 0.1 * rtx + 10:
            bad.append(f"{spur} spurious of {rtx} retransmissions")
    else:
        # A go-back-N stack: at least 90% of the bottleneck, or where the
        # default stack itself falls short (one flow slow-starting into
        # PIE's 150 ms burst allowance loses hundreds of packets and times
        # out; each RTO costs 200 ms of the 5 measured), no more than 10
        # points below it; and no more than 1.5× its drops (issue 50's
        # collapse was 11×; the slack is the chaos of two stacks that differ
        # in one mechanism).
        if good < min(0.9 * BOTTLENECK_PAYLOAD_GBPS, base - 0.1 * BOTTLENECK_PAYLOAD_GBPS):
            bad.append(f"goodput {good * 1000:.1f} Mbps (default stack {base * 1000:.1f})")
        if drops > 1.5 * default["packets_dropped"] + 50:
            bad.append(f"{drops} drops > 1.5 × the default stack's {default['packets_dropped']}")
    return bad


def cases(stack: str) -> list[tuple[str, str, int]]:
    only = STACKS[stack][1]
    return [
        (cc, pattern, n)
        for cc in CCS
        if only is None or cc == only
        for pattern in PATTERNS
        for n in FLOWS
    ]


# Runs that break a bound today, each an open defect (the closing note of
# issue 50 has them): the test fails when one of them passes, so that it
# is struck off here.
NOT_TRACED = "not traced yet (issue 50's closing note)"
KNOWN_OPEN: dict[tuple[str, str, str, int], str] = {
    ("prr", "cubic", "pie", 1): "PRR alone, one CUBIC flow under PIE: 48 Mbps; " + NOT_TRACED,
    ("linux_delayed_ack", "cubic", "drop-tail", 1): "2× the default's drops; " + NOT_TRACED,
    ("lost_retransmit", "cubic", "codel", 1): "4× the default's drops; " + NOT_TRACED,
    ("linux_cwnd", "cubic", "red", 1): "68 Mbps against the default's 94; " + NOT_TRACED,
    ("cubic_linux", "cubic", "pie", 1): "41 Mbps against the default's 67; " + NOT_TRACED,
    ("cubic_linux", "cubic", "codel", 1): "69 Mbps against the default's 97, 1 RTO; " + NOT_TRACED,
}


def summary(stack: str, cc: str, pattern: str, n: int) -> dict[str, Any]:
    s = ecnlab.run(config(stack, cc, pattern, n), progress=False).summary
    check_conservation(s)
    return s


@pytest.mark.parametrize("stack", list(STACKS))
def test_every_loss_pattern_is_recovered_from(stack: str) -> None:
    failures, mended = [], []
    for cc, pattern, n in cases(stack):
        s = summary(stack, cc, pattern, n)
        default = s if stack == "default" else summary("default", cc, pattern, n)
        why = judge(stack, s, default)
        known = (stack, cc, pattern, n) in KNOWN_OPEN
        if why and not known:
            failures.append(f"{cc}/{pattern}/{n} flows: {'; '.join(why)}")
        elif known and not why:
            mended.append(f"{cc}/{pattern}/{n} flows")
    assert not failures, f"{stack}: {len(failures)} of {len(cases(stack))} runs:\n" + "\n".join(
        failures
    )
    assert not mended, f"{stack}: now within bounds, strike from KNOWN_OPEN: {mended}"
    # Determinism: one point of the stack, twice, byte for byte.
    cc, pattern, n = cases(stack)[-1]
    run_checked(config(stack, cc, pattern, n))
