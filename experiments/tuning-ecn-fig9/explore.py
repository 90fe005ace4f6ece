"""Why ecnlab does not give Tuning ECN Fig. 9's dequeue-marking gain at 40 MTU.

Runs that isolate one modelling choice at a time around this folder's
base.toml (1 GbE, C×RTT = 20 packets, h = 20, 64 KB blocks over persistent
connections, IW 2, RTO 300 ms). Each table is pasted into NOTES.md.

    .venv/bin/python experiments/tuning-ecn-fig9/explore.py [TABLE ...]

TABLE: variants burst fresh rtt long metric seeds (default: all). The whole
script takes about four minutes on one core; every run is deterministic.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

import ecnlab

BASE = Path(__file__).with_name("base.toml")
SENDERS = list(range(2, 65, 2))
FLOOR = 0.6  # Gbps: Fig. 9's "600 Mbps"
SKIP = 2  # warm-up rounds left out of the goodput (as the figure's metric)

SCHEMES = {
    "enq": [],
    "dq": ["switch.dequeue_marking=true"],
    "h=0": ["switch.threshold=0pkt"],
}


def run(n: int, overrides: list[str], rounds: int = 30) -> ecnlab.Result:
    sets = [f"incast.0.senders={n}", f"incast.0.rounds={rounds}", *overrides]
    return ecnlab.run(BASE, overrides=sets, progress=False)


def aggregate(res: ecnlab.Result, skip: int = SKIP) -> float:
    """All blocks of the rounds after `skip` over the time they took, Gbps."""
    inc = res["incast"].to_pydict()
    span = (np.asarray(inc["finish"]) - np.asarray(inc["start"]))[skip:]
    rate = np.asarray(inc["goodput_gbps"])[skip:]
    return float((rate * span).sum() / span.sum()) if span.size else float("nan")


def max_senders(
    overrides: list[str], pipe_limited_ok: bool = False, rounds: int = 30, skip: int = SKIP
) -> int:
    """Most senders before the goodput first drops below 600 Mbps; with
    `pipe_limited_ok` a low goodput before it has once reached 600 Mbps is
    passed over (h = 0 cannot fill the link with few senders)."""
    best, reached = 0, False
    for n in SENDERS:
        if aggregate(run(n, overrides, rounds), skip) >= FLOOR:
            best, reached = n, True
        elif reached or not pipe_limited_ok:
            break
    return best


def three(overrides: list[str], **kw: Any) -> list[Any]:
    return [
        "—"
        if s == "h=0" and "switch.drop_not_ect=true" in overrides
        else max_senders(overrides + SCHEMES[s], pipe_limited_ok=(s == "h=0"), **kw)
        for s in SCHEMES
    ]


def table(title: str, header: list[str], rows: list[list[Any]]) -> None:
    print(f"\n### {title}\n")
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for r in rows:
        print("| " + " | ".join(str(c) for c in r) + " |", flush=True)


# --------------------------------------------------------------------------- tables

VARIANTS = [
    ("paper set-up (base.toml)", []),
    ("RTO 10 ms", ["transport.min_rto=10ms"]),
    (
        "delayed ACK, every 2nd, 200 ms timer (Windows)",
        ["transport.delayed_ack=2", "transport.delayed_ack_timeout=200ms"],
    ),
    (
        "delayed ACK, every 2nd, 1 ms timer",
        ["transport.delayed_ack=2", "transport.delayed_ack_timeout=1ms"],
    ),
    ("slow-start restart after idle", ["transport.slow_start_restart=true"]),
    (
        "slow-start restart, RTO 10 ms",
        ["transport.slow_start_restart=true", "transport.min_rto=10ms"],
    ),
    ("DCTCP α starts at 0", ["transport.dctcp_alpha_init=0"]),
    ("DCTCP g = 1/8", ["transport.dctcp_g=0.125"]),
    ("initial window 10", ["transport.init_cwnd=10"]),
    # SYNs are Not-ECT too: with h = 0 the switch drops every one and no
    # connection opens, so that column is left out for this row.
    (
        "retransmissions Not-ECT, dropped above h (Broadcom, §6)",
        ["transport.ect_retransmits=false", "switch.drop_not_ect=true"],
    ),
    ("Ethernet framing (78 B header, 1538 B frames)", ["transport.header=78"]),
]


def t_variants() -> None:
    for buf in ("40pkt", "100pkt"):
        rows = []
        for label, ov in VARIANTS:
            rows.append([label, *three([f"switch.buffer={buf}", *ov])])
        table(
            f"One change at a time: DCTCP, h = 20, buffer {buf}: most senders ≥ 600 Mbps",
            ["variant", "enqueue marking", "dequeue marking", "h = 0"],
            rows,
        )


def t_burst() -> None:
    rows = []
    for n in (6, 8, 10, 12, 14, 16, 20, 24):
        row: list[Any] = [n]
        for scheme in ("enq", "dq"):
            res = run(n, SCHEMES[scheme])
            row.append(f"{aggregate(res):.2f} ({res.summary['timeouts']})")
        for scheme in ("enq", "dq", "h=0"):
            res = run(
                n,
                SCHEMES[scheme]
                + [
                    "switch.buffer=1000pkt",
                    'run.sample_ports=["switch:host0"]',
                    "run.sample_interval=2us",
                    "run.duration=4s",
                ],
                rounds=12,
            )
            inc = res["incast"].to_pydict()
            q = res["queues"].to_pydict()
            t, pk = np.asarray(q["time"]), np.asarray(q["packets"])
            first, whole = [], []
            for s, f in list(zip(inc["start"], inc["finish"]))[SKIP:]:
                sel = (t >= s) & (t < f)
                first.append(pk[sel][t[sel] - s < 300e-6].max())
                whole.append(pk[sel].max())
            row.append(f"{np.mean(first):.0f} / {np.mean(whole):.0f}")
        rows.append(row)
    table(
        "The round-start burst (rounds 3–12)",
        [
            "senders",
            "40 MTU enq: Gbps (timeouts)",
            "40 MTU dq",
            "1000-pkt buffer enq: queue peak in the first 300 µs / in the whole round",
            "dq",
            "h = 0",
        ],
        rows,
    )


def t_fresh() -> None:
    """Every round as the first one: one round per run."""
    rows = []
    for label, ov in [
        ("ACK every packet", []),
        (
            "delayed ACK 2, 200 ms",
            ["transport.delayed_ack=2", "transport.delayed_ack_timeout=200ms"],
        ),
    ]:
        for buf in ("40pkt", "100pkt"):
            row: list[Any] = [label, buf]
            for scheme in SCHEMES:
                good = [
                    (n, aggregate(run(n, [f"switch.buffer={buf}", *ov, *SCHEMES[scheme]], 1), 0))
                    for n in SENDERS
                ]
                start = next((i for i, (_, g) in enumerate(good) if g >= FLOOR), len(good))
                below = [n for n, g in good[start:] if g < FLOOR]
                row.append(_ranges(below))
            rows.append(row)
    table(
        "Fresh windows every round (one round per run: cwnd 2, ssthresh ∞, α = 1): "
        "sender counts below 600 Mbps, once 600 Mbps was reached",
        ["receiver", "buffer", "enq", "dq", "h = 0"],
        rows,
    )


def _ranges(ns: list[int]) -> str:
    """[4, 8, 10, 12, 22, 24, ..., 64] -> '4, 8–12, 22–64' (steps of 2)."""
    out: list[str] = []
    for n in ns:
        if out and out[-1][1] == n - 2:
            out[-1] = (out[-1][0], n)
        else:
            out.append((n, n))
    return ", ".join(f"{a}" if a == b else f"{a}–{b}" for a, b in out) or "none"


def t_rtt() -> None:
    rows = []
    for delay, bdp in (("10us", 5), ("24us", 10), ("39us", 15), ("54us", 20)):
        rows.append([bdp, delay, *three([f"topology.link_delay={delay}"])])
    table(
        "The RTT: most senders ≥ 600 Mbps at 40 MTU",
        ["C×RTT (packets)", "link delay", "enq", "dq", "h = 0"],
        rows,
    )


def t_long() -> None:
    """N long-lived DCTCP flows (no rounds): drops per second in steady state."""

    def drops(n: int, dur: str, ov: list[str]) -> int:
        cfg = {
            "run": {"duration": dur, "sample_ports": "none"},
            "topology": {
                "kind": "star",
                "hosts": n + 1,
                "link_rate": "1Gbps",
                "link_delay": "54us",
            },
            "switch": {"buffer": "40pkt", "marking": "per-queue", "threshold": "20pkt"},
            "transport": {"cc": "dctcp", "init_cwnd": 2, "min_rto": "300ms"},
            "flows": [{"src": i, "dst": 0} for i in range(1, n + 1)],
        }
        return int(ecnlab.run(cfg, overrides=ov, progress=False).summary["packets_dropped"])

    rows = []
    for n in (8, 12, 16, 20, 24, 28, 30, 32, 36):
        row: list[Any] = [n]
        for scheme in ("enq", "dq", "h=0"):
            ov = SCHEMES[scheme]
            row.append((drops(n, "3s", ov) - drops(n, "1s", ov)) // 2)
        rows.append(row)
    table(
        "Long-lived flows, 40 MTU: drops per second over [1 s, 3 s]",
        ["flows", "enq", "dq", "h = 0"],
        rows,
    )


def t_metric() -> None:
    rows = []
    for n in (4, 8, 10, 12):
        res = run(n, [], rounds=50)
        rows.append(
            [
                n,
                f"{res.summary['incast_goodput_gbps']:.2f}",
                f"{aggregate(res, 0):.2f}",
                f"{aggregate(res, SKIP):.2f}",
                res.summary["timeouts"],
            ]
        )
    table(
        "Goodput measures, DCTCP enq, 40 MTU, 50 rounds",
        [
            "senders",
            "mean of round rates",
            "all blocks / all time",
            "same, rounds 3–50",
            "timeouts",
        ],
        rows,
    )


def t_seeds() -> None:
    rows = []
    for n in (12, 30):
        rows.append([n, *(f"{aggregate(run(n, [f'run.seed={s}'])):.4f}" for s in (1, 2, 3))])
    table("Seeds (DCTCP enq, 40 MTU)", ["senders", "seed 1", "seed 2", "seed 3"], rows)


TABLES = {
    "variants": t_variants,
    "burst": t_burst,
    "fresh": t_fresh,
    "rtt": t_rtt,
    "long": t_long,
    "metric": t_metric,
    "seeds": t_seeds,
}

if __name__ == "__main__":
    names = sys.argv[1:] or list(TABLES)
    for name in names:
        t0 = time.monotonic()
        TABLES[name]()
        print(f"\n({name}: {time.monotonic() - t0:.0f} s)", flush=True)
