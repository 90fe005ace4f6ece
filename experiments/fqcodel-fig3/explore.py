"""Why FQ-CoDel's mean throughput is below DCTCP's here (Fig. 3 (b); the
paper has it above): which part of FQ-CoDel costs the large flows time.

The figure's base (10,000 data-mining flows at load 0.6, Table II's
tuning), seeds 1-3, four cases: DCTCP over 100-packet FIFOs as recorded;
FQ-CoDel as recorded; its fair queuing with CoDel off (a 1 s target: only
the buffer drops); and the same over 1000-packet buffers (10× fewer
drops). Prints each case's mean throughput (mean size / mean FCT, the
figure's metric), the mean FCT of flows of 10 MB or more, drops and
timeouts. NOTES.md has the table.

    .venv/bin/python experiments/fqcodel-fig3/explore.py

About 5 min on two cores; every run is deterministic.
"""

from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

import ecnlab

BASE = Path(__file__).with_name("base.toml")
FQ = [
    "switch.qdisc=fq-codel",
    "switch.fq_flows=1024",
    "fabric.qdisc=composed",
    "nic.qdisc=fq-codel",
]
NO_CODEL = ["switch.codel_target=1s", "switch.codel_interval=10s"]
CASES = {
    "DCTCP (100 pkt)": ["transport.cc=dctcp", "switch.marking=per-queue", "switch.threshold=65pkt"],
    "FQ-CoDel": [*FQ, "switch.codel_target=5us", "switch.codel_interval=100us"],
    "FQ, CoDel off": [*FQ, *NO_CODEL],
    "FQ, CoDel off, 1000 pkt": [*FQ, *NO_CODEL, "switch.buffer=1000pkt"],
}


def one(job: tuple[str, int]) -> tuple[tuple[str, int], str]:
    name, seed = job
    r = ecnlab.run(str(BASE), overrides=[*CASES[name], f"run.seed={seed}"], progress=False)
    t = r.tables["flows"]
    size = np.asarray(t.column("size").to_numpy(), dtype=float)
    fct = np.asarray(t.column("fct").to_numpy(), dtype=float)
    big = size >= 10e6
    s = r.summary
    cells = [
        f"{size.mean() * 8 / fct.mean() / 1e9:.3f}",
        f"{fct[big].mean() * 1e3:.1f}",
        f"{s['packets_dropped']:,}",
        f"{s['timeouts']:,}",
    ]
    return job, " | ".join(cells)


def main() -> None:
    jobs = [(n, s) for n in CASES for s in [1, 2, 3]]
    with ProcessPoolExecutor(2) as ex:
        got = dict(ex.map(one, jobs))
    head = "| case | seed | mean throughput (Gbps) | flows ≥ 10 MB: mean FCT (ms)"
    print(head + " | drops | timeouts |")
    print("|---|---|---|---|---|---|")
    for name, seed in jobs:
        print(f"| {name} | {seed} | {got[(name, seed)]} |")


if __name__ == "__main__":
    main()
