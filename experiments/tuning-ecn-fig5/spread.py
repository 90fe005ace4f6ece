"""Why every DCTCP threshold in ecnlab's Tuning ECN Fig. 5 stops at about
50 senders, and what a spread round start does to the threshold trend.

The figure's set-up (base.toml: 1 GbE, C×RTT = 20 packets, 100-MTU buffer,
64 KB blocks over persistent connections, IW 2, RTO 300 ms) with the sender
axis extended to 96 and each sender answering a round's request after a
seeded delay uniform in [0, response_jitter) (host latency), seeds 1-3, 20
rounds, goodput over rounds 3-20. Prints, per jitter, the most senders with
goodput >= 600 Mbps (from 8 senders on, every count below it also >= 600)
for h = 0, 10, 20, 30, 40, one list per seed. NOTES.md has the table.

    .venv/bin/python experiments/tuning-ecn-fig5/spread.py [JITTER ...]

JITTER: durations (default: 0s 20us 50us 100us 200us 500us). About 20 s on
two cores; every run is deterministic.
"""

from __future__ import annotations

import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

import ecnlab

BASE = Path(__file__).with_name("base.toml")
SENDERS = list(range(8, 100, 4))
THRESHOLDS = [0, 10, 20, 30, 40]
SEEDS = [1, 2, 3]
FLOOR = 0.6  # Gbps: the figure's panel (b)
SKIP = 2  # warm-up rounds left out, as the figure's metric


def goodput(job: tuple[str, int, int, int]) -> tuple[tuple[str, int, int, int], float]:
    """All the blocks of rounds after SKIP over the time they took, Gbps."""
    jitter, h, n, seed = job
    over = [
        "topology.hosts=101",
        f"incast.0.senders={n}",
        "incast.0.rounds=20",
        f"run.seed={seed}",
        f"switch.threshold={h}pkt",
        f"incast.0.response_jitter={jitter}",
    ]
    t = ecnlab.run(str(BASE), overrides=over, progress=False).tables["incast"]
    rounds = np.asarray(t.column("round").to_numpy())
    span = np.asarray(t.column("finish").to_numpy()) - np.asarray(t.column("start").to_numpy())
    rate = np.asarray(t.column("goodput_gbps").to_numpy(), dtype=float)
    keep = rounds > SKIP
    return job, float((rate[keep] * span[keep]).sum() / span[keep].sum())


def most(res: dict[tuple[str, int, int, int], float], jitter: str, h: int, seed: int) -> int:
    """The most senders before the first count below FLOOR."""
    best = 0
    for n in SENDERS:
        if res[(jitter, h, n, seed)] < FLOOR:
            break
        best = n
    return best


def main() -> None:
    jitters = sys.argv[1:] or ["0s", "20us", "50us", "100us", "200us", "500us"]
    jobs = [(j, h, n, s) for j in jitters for h in THRESHOLDS for n in SENDERS for s in SEEDS]
    with ProcessPoolExecutor(2) as ex:
        res = dict(ex.map(goodput, jobs))
    print("| response_jitter | " + " | ".join(f"h = {h}" for h in THRESHOLDS) + " |")
    print("|---|" + "---|" * len(THRESHOLDS))
    for j in jitters:
        cells = [", ".join(str(most(res, j, h, s)) for s in SEEDS) for h in THRESHOLDS]
        print(f"| {j} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
