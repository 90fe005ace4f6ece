"""Why DCTCP with TSO at K = 14 loses 0.57 Gbps here and 1.391 in CEDM's
Fig. 10: the two things the loss depends on, measured (NOTES.md has the
tables).

1. `phase`: the second flow's start offset (0 s: in phase) with and
   without the hosts' 100 ns timing jitter (`host.jitter`), seeds 1-3, at
   the record's LSO model (`lso_defer_in_cwr = true`), plain and CEDM.
2. `lso`: both LSO models (deferral going on in CWR, the paper's analysis;
   Linux's rule, none in CWR) at K = 14, 23 (Cor. 4), 30, 40 and 65.

    .venv/bin/python experiments/cedm-fig10/explore.py [phase] [lso]

About 1.5 min on two cores; every run is deterministic. Loss: 10 Gbps less
the throughput on the wire (goodput × 1500 / 1460), as the figure.
"""

from __future__ import annotations

import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import ecnlab

BASE = Path(__file__).with_name("base.toml")
SEEDS = [1, 2, 3]
CEDM = ["switch.marking=cedm", "switch.cedm_k2=38pkt"]  # K2 for K1 = 14 (figure.toml)


def loss(sets: tuple[str, ...]) -> float:
    over = ["transport.cc=dctcp", *sets]
    s = ecnlab.run(str(BASE), overrides=over, progress=False).summary
    return 10 - sum(s["goodput_gbps_by_service"].values()) * 1500 / 1460


def table(rows: list[tuple[str, list[tuple[str, ...]]]], head: str) -> None:
    jobs = [sets for _, cells in rows for sets in cells]
    with ProcessPoolExecutor(2) as ex:
        got = dict(zip(jobs, ex.map(loss, jobs)))
    print(head)
    for label, cells in rows:
        # A loss of -0.00: the wire's 1500/1460 applied to a link just full.
        print(f"| {label} | " + " | ".join(f"{max(got[c], 0.0):.2f}" for c in cells) + " |")


def phase() -> None:
    rows = []
    for off in ["0s", "1us", "10us", "100us", "0.5ms", "3ms"]:
        for jit in ["0ns", "100ns"]:
            for name, mark in [("plain", []), ("CEDM", CEDM)]:
                base = (
                    f"flows.1.start={off}",
                    f"host.jitter={jit}",
                    "switch.threshold=14pkt",
                    *mark,
                )
                rows.append((f"{off} | {jit} | {name}", [(*base, f"run.seed={s}") for s in SEEDS]))
    table(
        rows, "| offset | jitter | marking | seed 1 | seed 2 | seed 3 |\n|---|---|---|---|---|---|"
    )


def lso() -> None:
    rows = []
    for defer in ["true", "false"]:
        for k in [14, 23, 30, 40, 65]:
            cells = [
                (f"host.lso_defer_in_cwr={defer}", f"switch.threshold={k}pkt", f"run.seed={s}")
                for s in SEEDS
            ]
            rows.append((f"{defer} | {k}", cells))
    table(rows, "| lso_defer_in_cwr | K | seed 1 | seed 2 | seed 3 |\n|---|---|---|---|---|")


if __name__ == "__main__":
    which = sys.argv[1:] or ["phase", "lso"]
    for w in which:
        {"phase": phase, "lso": lso}[w]()
