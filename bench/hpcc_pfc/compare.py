"""ecnlab's side of the PFC comparison with the HPCC simulator
(docs/validation/pfc.md): the peer's N:1 incasts through one switch at
100 Gb/s, senders at line rate and PFC alone holding the queue, set up as the
peer's MMU is (its ingress pool, headroom, XON offset; no response delay, no
landing jitter, 1,048-byte frames), over the same three start-time variants.

    .venv/bin/python bench/hpcc_pfc/compare.py        # prints the tables

twice: with ecnlab's PFC rules (egress accounting) and with the peer's
(`buffer_accounting = "hpcc"`: XOFF once a packet goes to the headroom,
XON also below 1,248 B, pauses that never expire).
"""

from __future__ import annotations

import random
import tempfile
from pathlib import Path
from typing import Any

import ecnlab

HEADROOM = 30_955  # the peer's per (port, priority) headroom at 100 Gb/s, 1 µs
FRAME = 1048  # the peer's data frame: 14 + 20 + 8 + 6 + 1,000 B


def offsets(n: int, variant: int) -> list[int]:
    """The peer runs' start offsets in ns: all at 0, 100·i, uniform 0-400 (seed 2)."""
    if variant == 0:
        return [0] * n
    if variant == 1:
        return [100 * i for i in range(n)]
    r = random.Random(2)
    return [int(r.uniform(0, 400)) for _ in range(n)]


def config(n: int, kib: int, variant: int, accounting: str = "egress") -> dict[str, Any]:
    ports = n + 1
    # The peer reserves headroom for two lossless priorities per port, one
    # of which (0) it never uses; ecnlab's pool is made the same size.
    buffer = kib * 1024 - ports * HEADROOM
    return {
        "run": {
            "seed": 1,
            "duration": "10ms",
            "warmup": "1ms",
            "sample_interval": "10us",
            "sample_ports": "hosts",
        },
        "topology": {"kind": "star", "hosts": ports, "link_rate": "100Gbps", "link_delay": "1us"},
        "switch": {
            "buffer": "100KB",
            "buffer_policy": "dynamic",
            "shared_buffer": f"{buffer}B",
            "pfc": True,
            "pfc_priorities": [0],
            "pfc_headroom": f"{HEADROOM}B",
            "pfc_response": "0B",
            "pfc_xon_offset": "2496B",
            "buffer_accounting": accounting,
        },
        "host": {"jitter": "0ns"},
        "transport": {"cc": "reno", "mss": 1000, "header": 48, "init_cwnd": 1000},
        "flows": [
            {"src": h, "dst": n, "start": f"{o}ns"} for h, o in enumerate(offsets(n, variant))
        ],
    }


def measure(n: int, kib: int, variant: int, accounting: str) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        cfg = config(n, kib, variant, accounting)
        res = ecnlab.run(cfg, out=Path(tmp), progress=False).load()
        pfc = res["pfc"].to_pandas()
        sent = pfc[(pfc["node"] == "switch") & (pfc["peer"] != f"host{n}")]["pause_sent"]
        paused = pfc.query("peer == 'switch'")["paused_seconds"]
        q = res["queues"].to_pandas()
        port = res.port("switch", f"host{n}")
        b = q[(q["port"] == port) & (q["time"] >= 1e-3)]["bytes"]
        ports = {(r["node"], r["peer"]): r for r in res["ports"].to_pylist() if r["queue"] == -1}
        s = res.summary
        return {
            "pause_per_port": float(sent.mean()),
            "paused_us": float(paused.mean() * 1e6),
            "egress_peak_kb": ports[("switch", f"host{n}")]["max_bytes"] / 1e3,
            "egress_mean_kb": float(b.mean() / 1e3),
            "ingress_peak_kb": float(
                pfc.query("node == 'switch'")["peak_ingress_bytes"].max() / 1e3
            ),
            "headroom_peak_b": float(pfc["peak_headroom_bytes"].max()),
            "gbps": sum(s["goodput_gbps_by_service"].values()),
            "drops": s["packets_dropped"],
        }


def main() -> None:
    for accounting in ("egress", "hpcc"):
        print(f"\nbuffer_accounting = {accounting!r}")
        table(accounting)


def table(accounting: str) -> None:
    cols = [
        "pause_per_port",
        "paused_us",
        "egress_peak_kb",
        "egress_mean_kb",
        "ingress_peak_kb",
        "headroom_peak_b",
        "gbps",
        "drops",
    ]
    print("| run | " + " | ".join(cols) + " |")
    print("|---" * (len(cols) + 1) + "|")
    for kib in (2048, 1024):
        for n in (2, 8, 16):
            if kib == 1024 and n == 16:
                continue  # the peer's pool wraps around there (its bug): no reference
            runs = [measure(n, kib, v, accounting) for v in range(3)]
            cells = []
            for c in cols:
                lo, hi = min(r[c] for r in runs), max(r[c] for r in runs)
                cells.append(f"{lo:.0f}" if abs(hi - lo) < 0.5 else f"{lo:.0f}–{hi:.0f}")
                if c == "gbps":
                    cells[-1] = f"{lo:.2f}" if hi - lo < 0.005 else f"{lo:.2f}–{hi:.2f}"
            print(f"| incast{n} {kib // 1024}M | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
