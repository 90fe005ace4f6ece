"""ecnlab's side of the two-tier PFC comparison with the HPCC simulator
(docs/validation/pfc.md): 2 leaves × 1 spine, 4 hosts per leaf at
100 Gb/s, leaf-spine links at 100 or 400 Gb/s, all 1 µs; hosts 0, 1 (leaf 0)
and 4, 5 (leaf 1) send to host 6 at line rate, and the victim host 3 → host 7
shares leaf 0's uplink and the spine's port into leaf 1 but not the
congested port. Set up as the peer's MMU is (its headroom formula, XON
offset and rules; the leaves' pool is the peer's, the spine's a little
smaller: ecnlab has one shared_buffer for every switch).

    .venv/bin/python bench/hpcc_pfc/fabric.py
"""

from __future__ import annotations

from typing import Any

from compare import offsets  # the peer runs' start-time variants (this folder)

import ecnlab

FRAME = 1048


def headroom(rate_gbps: int) -> int:
    """The peer's headroom: 2·(MTU + 48) + 3,860 + 2·rate·delay (1 µs)."""
    return 2 * FRAME + 3860 + 2 * rate_gbps * 1000 // 8


def config(up: int, kib: int, variant: int, duration: str) -> dict[str, Any]:
    # The peer reserves headroom twice per port (two lossless priorities);
    # with one here, the leaves' pool is the peer's when the buffer is
    # its buffer less one set of headroom.
    buffer = kib * 1024 - (4 * headroom(100) + headroom(up))
    pairs = [(0, 6), (1, 6), (4, 6), (5, 6), (3, 7)]
    starts = offsets(len(pairs), variant)
    return {
        "run": {"seed": 1, "duration": duration, "sample_ports": "none"},
        "topology": {
            "kind": "leaf-spine",
            "leaves": 2,
            "spines": 1,
            "hosts_per_leaf": 4,
            "link_rate": "100Gbps",
            "uplink_rate": f"{up}Gbps",
            "link_delay": "1us",
        },
        "switch": {
            "buffer": "100KB",
            "buffer_policy": "dynamic",
            "shared_buffer": f"{buffer}B",
            "pfc": True,
            "pfc_priorities": [0],
            "pfc_response": "3796B",  # makes "auto" the peer's formula
            "pfc_xon_offset": "2496B",
            "buffer_accounting": "hpcc",
        },
        "host": {"jitter": "0ns"},
        "transport": {"cc": "reno", "mss": 1000, "header": 48, "init_cwnd": 1000},
        "flows": [{"src": s, "dst": d, "start": f"{o}ns"} for (s, d), o in zip(pairs, starts)],
    }


def measure(up: int, kib: int, variant: int) -> dict[str, float]:
    early = ecnlab.run(config(up, kib, variant, "1ms"), progress=False)
    res = ecnlab.run(config(up, kib, variant, "10ms"), progress=False)
    b0 = early["flows"].to_pandas()["bytes_received"].to_numpy()
    f = res["flows"].to_pandas()
    gbps = (f["bytes_received"].to_numpy() - b0) * 8 / 9e-3 / 1e9
    pfc = res["pfc"].to_pandas()

    def paused(node: str, peer: str) -> float:
        return float(pfc.query("node == @node and peer == @peer")["paused_seconds"].sum() * 1e6)

    def sent(node: str, peer: str) -> float:
        return float(pfc.query("node == @node and peer == @peer")["pause_sent"].sum())

    return {
        "victim": float(gbps[4]),
        "incast": float(gbps[:4].sum()),
        "h0": float(gbps[0]),
        "h4": float(gbps[2]),
        "pause_leaf1_to_spine": sent("leaf1", "spine0"),
        "pause_spine_to_leaf0": sent("spine0", "leaf0"),
        "paused_uplink_us": paused("leaf0", "spine0"),
        "paused_spine_us": paused("spine0", "leaf1"),
        "drops": res.summary["packets_dropped"],
    }


def main() -> None:
    cols = [
        "victim",
        "incast",
        "h0",
        "h4",
        "pause_leaf1_to_spine",
        "pause_spine_to_leaf0",
        "paused_uplink_us",
        "paused_spine_us",
        "drops",
    ]
    print("| run | " + " | ".join(cols) + " |")
    print("|---" * (len(cols) + 1) + "|")
    for up in (100, 400):
        for kib in (1024, 2048):
            runs = [measure(up, kib, v) for v in range(3)]
            cells = []
            for c in cols:
                lo, hi = min(r[c] for r in runs), max(r[c] for r in runs)
                digits = 2 if c in ("victim", "incast", "h0", "h4") else 0
                cells.append(
                    f"{lo:.{digits}f}"
                    if hi - lo < 10**-digits
                    else f"{lo:.{digits}f}–{hi:.{digits}f}"
                )
            print(f"| fabric{up} {kib // 1024}M | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
