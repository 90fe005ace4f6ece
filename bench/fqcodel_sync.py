"""The chaotic FQ-CoDel regime of issue 53, as far as it is found: five
long flows (one from host 0, four from host 1) into one 10 Gbps port under
FQ-CoDel (target 5 us, interval 100 us, ECN marks), 20 us links (base RTT
about 84 us, a BDP of about 70 packets). Not the issue's own file, which the
repository does not hold: a reconstruction that shows its picture.

Prints, per transport, host jitter and seed: the link's utilisation (goodput
over the payload rate) and the share of the flows' window cuts that come as
all five within 40 us (global synchronisation), by quarter of the run.

    .venv/bin/python bench/fqcodel_sync.py [--duration 1s]

At 0.3 s, ecn-star spreads 0.87-0.97 over jitter 50/100/300 ns and seeds 1-3,
and Reno (CoDel drops instead) 0.945-0.963. The low runs are those whose five
flows halve together; over 1 s that phase ends within the first quarter or
two. Whether ns-3 shows it on the same set-up is the open question.
"""

from __future__ import annotations

import argparse
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import numpy as np

import ecnlab

STAR: dict[str, Any] = {
    "run": {"warmup": "0.05s", "sample_ports": "none"},
    "topology": {"kind": "star", "hosts": 3, "link_rate": "10Gbps", "link_delay": "20us"},
    "switch": {
        "qdisc": "fq-codel",
        "codel_target": "5us",
        "codel_interval": "100us",
        "codel_ecn": True,
        "buffer": "1000pkt",
    },
    "flows": [{"src": 0, "dst": 2}, {"src": 1, "dst": 2, "count": 4}],
}
PAYLOAD_GBPS = 10 * 1460 / 1500


def one(job: tuple[str, str, int, str]) -> tuple[tuple[str, str, int], str]:
    cc, jitter, seed, duration = job
    over = [
        f"transport.cc={cc}",
        f"host.jitter={jitter}",
        f"run.seed={seed}",
        f"run.duration={duration}",
        "run.trace_cwnd=[0,1,2,3,4]",
    ]
    r = ecnlab.run(STAR, overrides=over, progress=False)
    util = sum(r.summary["goodput_gbps_by_service"].values()) / PAYLOAD_GBPS
    c = r.tables["cwnd"]
    t = np.asarray(c.column("time").to_numpy())
    fid = np.asarray(c.column("flow").to_numpy())
    cw = np.asarray(c.column("cwnd").to_numpy(), dtype=float)
    cuts = []
    for k in range(5):
        tk, ck = t[fid == k], cw[fid == k]
        cuts.append(tk[1:][np.diff(ck) < -0.3 * ck[:-1]])
    times = np.sort(np.concatenate(cuts))
    # An episode: cuts each within 40 us of the one before (start, count, last).
    episodes: list[tuple[float, int, float]] = []
    for x in times:
        if episodes and x - episodes[-1][2] < 40e-6:
            episodes[-1] = (episodes[-1][0], episodes[-1][1] + 1, x)
        else:
            episodes.append((x, 1, x))
    end = max(t.max(), 1e-9)
    shares = []
    for q in range(4):
        lo, hi = end * q / 4, end * (q + 1) / 4
        inq = [n for a, n, _ in episodes if lo <= a < hi]
        shares.append(sum(n >= 5 for n in inq) / max(1, len(inq)))
    return (cc, jitter, seed), f"{util:.3f} | " + " / ".join(f"{s:.2f}" for s in shares)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--duration", default="0.3s")
    a = ap.parse_args()
    jobs = [
        (cc, j, s, a.duration)
        for cc in ["ecn-star", "reno"]
        for j in ["50ns", "100ns", "300ns"]
        for s in [1, 2, 3]
    ]
    with ProcessPoolExecutor(2) as ex:
        rows = list(ex.map(one, jobs))
    print("| cc | jitter | seed | utilisation | all-five cut episodes, by quarter |")
    print("|---|---|---|---|---|")
    for (cc, j, s), cells in rows:
        print(f"| {cc} | {j} | {s} | {cells} |")


if __name__ == "__main__":
    main()
