"""A star micro-scenario on both simulators: n senders, one receiver, one
flow each, per-queue marking over DWRR (crosscheck/star_incast.tcl). It
isolates differences the §5.2 comparison shows in aggregate
(docs/validation/ns2.md, difference 8): drops, timeouts and FCT with a
known set of flows.

    .venv/bin/python crosscheck/star_incast.py --flows 32 --size 3000000 --stagger 0.0002
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def ecnlab_config(a: argparse.Namespace, nic: bool) -> dict:
    """The TCL scenario's twin: 20.2 us links (20 us host delay + 0.2 us),
    DCTCP as the authors' patch (alpha 0 at start, g 1/16), 5 ms RTOs, basic
    congestion avoidance, an ACK per segment; with `nic` the hosts' NICs are
    DWRR ports marking like the switch's, as in ns-2."""
    cfg: dict = {
        "run": {"seed": 1, "fct_end": "sender", "sample_ports": "none"},
        "topology": {
            "kind": "star",
            "hosts": a.flows + 1,
            "link_rate": "10Gbps",
            "link_delay": "20.2us",
        },
        "switch": {
            "buffer": "300KB",
            "queues": 8,
            "scheduler": "dwrr",
            "quantum": "1500B",
            "marking": "per-queue",
            "threshold": f"{a.k}pkt",
        },
        "transport": {
            "cc": "dctcp",
            "init_cwnd": 16,
            "min_rto": "5ms",
            "init_rto": "5ms",
            "max_rto": "64s",
            "dctcp_g": 0.0625,
            "dctcp_alpha_init": 0.0,
            "delayed_ack": 1,
            "slow_start_restart": True,
            "clock_granularity": "1us",
            "ca": "basic",
            "rx_window": 1256,
        },
        "flows": [
            {
                "src": i + 1,
                "dst": 0,
                "service": i % a.services,
                "size": f"{a.size}B",
                "start": f"{i * a.stagger * 1e6:.3f}us",
            }
            for i in range(a.flows)
        ],
    }
    if nic:
        cfg["nic"] = {}
        cfg["transport"]["host_queue_limit"] = "1GB"
    return cfg


def run_ecnlab(a: argparse.Namespace, nic: bool) -> dict:
    import ecnlab

    r = ecnlab.run(ecnlab_config(a, nic), progress=False)
    s = r.summary
    return {
        "mean FCT (ms)": s["fct"]["overall_mean"] * 1e3,
        "drops": s["packets_dropped"],
        "timeouts": s["timeouts"],
    }


def run_ns2(a: argparse.Namespace) -> dict | None:
    ns = Path(a.ns2_build) / "ns-2.35" / "ns"
    if not ns.exists():
        return None
    args = [str(a.flows), str(a.size), str(a.k), str(a.stagger), str(a.services)]
    out = subprocess.run(
        [str(ns), str(HERE / "star_incast.tcl"), *args],
        capture_output=True,
        text=True,
        check=True,
        env=os.environ,
    ).stdout
    fcts = [
        (float(m[1]), int(m[2])) for m in re.finditer(r"^fct \d+ (\S+) rexmit (\d+)", out, re.M)
    ]
    drops = re.search(r"pdrops (\d+)", out)
    return {
        "mean FCT (ms)": sum(f for f, _ in fcts) / len(fcts) * 1e3,
        "drops": int(drops[1]) if drops else None,
        "timeouts": sum(t for _, t in fcts),
    }


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--flows", type=int, default=32)
    ap.add_argument("--size", type=int, default=3_000_000, help="bytes per flow")
    ap.add_argument("--k", type=int, default=65, help="marking threshold, packets")
    ap.add_argument("--stagger", type=float, default=0.0002, help="seconds between starts")
    ap.add_argument("--services", type=int, default=8)
    ap.add_argument("--ns2-build", default=os.environ.get("NS2_BUILD", "/tmp/ns2build"))
    a = ap.parse_args()
    if not 1 <= a.services <= 8 or a.flows < 1:
        sys.exit("star_incast: --services must be 1..8 and --flows at least 1")
    rows = {"ecnlab": run_ecnlab(a, False), "ecnlab [nic]": run_ecnlab(a, True)}
    ns2 = run_ns2(a)
    if ns2 is None:
        print(f"(no ns-2 build at {a.ns2_build}: crosscheck/build_ns2.sh makes one)")
    else:
        rows["ns-2"] = ns2
    print("| run | mean FCT (ms) | drops | timeouts |\n|---|---|---|---|")
    for name, r in rows.items():
        print(f"| {name} | {r['mean FCT (ms)']:.3f} | {r['drops']} | {r['timeouts']} |")


if __name__ == "__main__":
    main()
