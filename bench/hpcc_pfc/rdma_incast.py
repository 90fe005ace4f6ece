"""ecnlab's side of the RDMA comparison with the HPCC simulator
(docs/validation/rdma.md): its N:1 incasts through one switch at 100 Gb/s,
1 µs links, 32 MiB, PFC, RED at dequeue (K 400/1,600 KB, Pmax 0.2), long
queue pairs from t = 0 for 20 ms, steady = 5-20 ms; HPCC, TIMELY and DCTCP
on a rate as the simulator's run.py sets them, and the sensitivity runs
that change one key.

    .venv/bin/python bench/hpcc_pfc/rdma_incast.py       # prints the table
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

import ecnlab

RUNS: list[tuple[str, str, int, dict[str, Any]]] = [
    ("incast8_hpcc", "hpcc", 8, {}),
    ("incast2_hpcc", "hpcc", 2, {}),
    ("incast8_timely", "timely", 8, {}),
    ("sens_hpcc_ai400", "hpcc", 8, {"hpcc_rai": "400Mbps"}),
    ("sens_hpcc_mi5", "hpcc", 8, {"hpcc_max_stage": 5}),
    ("sens_hpcc_eta90", "hpcc", 8, {"hpcc_eta": 0.9}),
    ("sens_hpcc_intmulti1", "hpcc", 8, {"hpcc_int_multi": 1}),
    ("sens_hpcc_fastreact0", "hpcc", 8, {"hpcc_fast_react": False}),
    ("int_exact", "hpcc", 8, {"hpcc_int_multi": 0}),
    ("incast8_dctcp", "rdma-dctcp", 8, {}),
]

# The simulator's DCTCP marks at one threshold (run.py: 30 KB per 10 Gb/s).
SWITCH = {"rdma-dctcp": {"red_min": "300KB", "red_max": "300KB", "red_pmax": 1.0}}


def config(cc: str, n: int, transport: dict[str, Any]) -> dict[str, Any]:
    return {
        "run": {"seed": 1, "duration": "20ms", "warmup": "5ms", "sample_interval": "1us"},
        "topology": {"kind": "star", "hosts": n + 1, "link_rate": "100Gbps", "link_delay": "1us"},
        "host": {"jitter": "0ns"},
        "switch": {
            "buffer": "1MB",
            "buffer_policy": "dynamic",
            "shared_buffer": "32MiB",
            "pfc": True,
            "pfc_priorities": [0],
            "marking": "red",
            "red_min": "400KB",
            "red_max": "1600KB",
            "red_pmax": 0.2,
            "red_wq": 1.0,
            "red_spacing": False,
            "red_at_dequeue": True,
            **SWITCH.get(cc, {}),
        },
        "transport": {"cc": cc, "mss": 1000, "header": 48, **transport},
        "flows": [{"src": h, "dst": n} for h in range(n)],
    }


def measure(cc: str, n: int, transport: dict[str, Any]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        res = ecnlab.run(config(cc, n, transport), out=Path(tmp), progress=False).load()
        wall = time.perf_counter() - t0
        s = res.summary
        q = res["queues"].to_pandas()
        b = q[q["port"] == res.port("switch", f"host{n}")]
        steady = b[b["time"] >= 5e-3]["bytes"]
        peak = b.loc[b["bytes"].idxmax()]
        g = res["goodput"].to_pandas()
        f = res["flows"].to_pandas()["bytes_received"] * 8 / 20e-3 / 1e9
        jain = f.sum() ** 2 / (len(f) * (f**2).sum())
        return {
            "goodput": sum(s["goodput_gbps_by_service"].values()),
            "flows": f"{f.min():.2f} / {f.max():.2f}",
            "jain": jain,
            "peak": f"{peak['bytes'] / 1e3:.0f} ({peak['time'] * 1e6:.0f})",
            "steady": f"{steady.mean() / 1e3:.1f} / {steady.quantile(0.99) / 1e3:.1f}",
            "pauses": s.get("pfc_pause_frames", 0),
            "wall": wall,
            "events": s.get("events"),
            "samples": len(g),
        }


def main() -> None:
    print(
        "| run | goodput Gb/s (steady) | per-flow min / max (0-20 ms) | Jain | peak KB (µs) "
        "| steady mean / p99 KB | pauses | wall s |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for name, cc, n, transport in RUNS:
        m = measure(cc, n, transport)
        print(
            f"| {name} | {m['goodput']:.2f} | {m['flows']} | {m['jain']:.3f} | {m['peak']} "
            f"| {m['steady']} | {m['pauses']} | {m['wall']:.2f} |"
        )


if __name__ == "__main__":
    main()
