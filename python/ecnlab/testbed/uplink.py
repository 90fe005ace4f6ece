"""Each host's uplink, as the simulator has it: the host's NIC sends at the
link rate, one frame after another, from a queue of its own, and TCP small
queues bound how much of each connection waits there
(`transport.host_queue_limit`; docs/testbed-uplinks.md).

Where it is emulated, and why there: in the host's own kernel, by a token
bucket filter (tbf) on the host's veth, not in the switch process. A
veth hands a frame to its peer at once, and the kernel frees the frame
(and with it the sending socket's claim on it) as soon as the switch's raw
socket has a copy. A serialiser in the switch would therefore hold frames
the kernel's TCP believes gone: TCP small queues (TSQ), which stop a
connection while its frames wait below TCP, would never see them, and a
connection whose host's uplink is its bottleneck would keep growing its
window into the emulated NIC queue, never losing a frame. A tbf holds
the frames inside the host's kernel, still charged to their sockets, and
releases them at the rate: TSQ pauses a connection exactly as on a real
NIC, and nothing is dropped, as a NIC ring that stops its qdisc when full
drops nothing. The uplink's propagation delay is added by the switch, with
the downlink's, after the output queue: every frame crosses one uplink and
one downlink, so where the constant delay sits changes no frame's arrival
at its host.
"""

from __future__ import annotations

import json
import subprocess
from typing import Any

__all__ = [
    "BUCKET_BYTES",
    "WIRE_OVERHEAD",
    "NIC_LIMIT_BYTES",
    "nic_commands",
    "nic_stats",
]

BUCKET_BYTES = 2_500
"""Token bucket size: about 1.67 MTU, as MQ-ECN §4.2's rate limiter (the
switch's output ports and the hosts' uplinks alike)."""

WIRE_OVERHEAD = 24
"""Preamble and delimiter (8), FCS (4) and inter-frame gap (12): the emulated
link carries frames as a real Ethernet wire does, so at 1 Gbps full-sized
TCP segments give the 941 Mbps of goodput a GbE testbed sees."""

NIC_LIMIT_BYTES = 1000 * 1514
"""Bytes the host's NIC queue may hold before it drops: the 1,000 frames of
a Linux NIC's default txqueuelen. TSQ keeps each connection to a couple of
frames there, so only a host with hundreds of connections could reach it;
its drops are reported (summary `host_nics`)."""


def nic_commands(ns: str, ifname: str, rate_bps: int) -> list[list[str]]:
    """The commands that make ``ifname`` (in namespace ``ns``) a NIC of
    ``rate_bps``: one segment per frame, then the tbf."""
    return [
        # One TCP segment per buffer the kernel queues, as the simulator's
        # hosts send without segmentation offload (`host.lso` off): TSQ then
        # counts frames, not 64 KB GSO bursts (Linux sizes those at up to
        # 64 KB when the path's RTT is under about 0.5 ms, tcp_tso_rtt_log).
        ["ip", "-n", ns, "link", "set", "dev", ifname, "gso_max_segs", "1"],
        [
            "tc",
            "-n",
            ns,
            "qdisc",
            "replace",
            "dev",
            ifname,
            "root",
            "tbf",
            "rate",
            f"{rate_bps}bit",
            "burst",
            str(BUCKET_BYTES),
            "limit",
            str(NIC_LIMIT_BYTES),
            # Tokens are charged for the frame plus the Ethernet framing,
            # as at the switch's outputs.
            "overhead",
            str(WIRE_OVERHEAD),
        ],
    ]


def nic_stats(ns: str, ifname: str) -> dict[str, Any]:
    """The tbf's counters on ``ifname``: frames and bytes sent (bytes as the
    kernel counts them, without the framing), drops, the times a frame had
    to wait for tokens (overlimits), and what was still queued."""
    proc = subprocess.run(
        ["tc", "-n", ns, "-s", "-j", "qdisc", "show", "dev", ifname],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        return {"error": proc.stderr.strip() or "tc failed"}
    for q in json.loads(proc.stdout or "[]"):
        if q.get("kind") == "tbf":
            return {
                "packets": int(q.get("packets", 0)),
                "bytes": int(q.get("bytes", 0)),
                "drops": int(q.get("drops", 0)),
                "overlimits": int(q.get("overlimits", 0)),
                "backlog_packets": int(q.get("qlen", 0)),
            }
    return {"error": f"no tbf on {ifname}"}
