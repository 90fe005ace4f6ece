"""Packet-level account of retransmissions and RTOs on the spread star
(docs/tcp-retransmissions.md): for each variant of [transport] keys, runs
bench/testbed/spread.py's drop-tail configs (ecn-star, 4 and 8 flows,
seeds 1-3) with the engine's temporary trace and prints one table row per
variant and flow count.

The trace is not part of the engine: apply bench/testbed/rtx_trace.patch
to a scratch checkout, rebuild the Python engine (it writes one line per
event to the file named by RTXTRACE: S send, A arrival at the receiver,
D drop, T timeout), then

    PYTHONPATH=$PWD/python .venv/bin/python bench/testbed/rtx_trace.py

Not a test: prints numbers.
"""

from __future__ import annotations

import collections
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

VARIANTS: dict[str, dict[str, object]] = {
    "default": {},
    "rto_keeps_sack": {"rto_keeps_sack": True},
    "rto_rearm_head": {"rto_rearm_head": True},
    "keep+rearm": {"rto_keeps_sack": True, "rto_rearm_head": True},
    "linux_rto": {"linux_rto": True},
    "linux_rto+keep+rearm": {"linux_rto": True, "rto_keeps_sack": True, "rto_rearm_head": True},
    "linux profile before": {
        "profile": "linux",
        "min_rto": "5ms",
        "rto_keeps_sack": False,
        "rto_rearm_head": False,
    },
    "linux profile": {"profile": "linux", "min_rto": "5ms"},
}


def analyze(path: str) -> dict[str, int]:
    """Counts from one trace. A retransmission is "held at send" when the
    receiver already had the segment when it left, "duplicate" when it
    had it on arrival (the original was still queued). An RTO's cause is
    judged from the segment at snd_una: held by the receiver (its ACK on
    the way), its last copy dropped, or still queued."""
    got: dict[int, set[int]] = collections.defaultdict(set)
    dropped: dict[tuple[int, int], bool] = {}
    c: collections.Counter[str] = collections.Counter()
    with open(path) as fh:
        for line in fh:
            f = line.split()
            ev, fid = f[0], int(f[2])
            if ev == "S":
                seq, rtx, state = int(f[3]), int(f[5]), f[6]
                dropped[(fid, seq)] = False
                if rtx:
                    c["retransmissions"] += 1
                    c["held at send"] += seq in got[fid]
                    c["after an RTO"] += state == "L"
            elif ev == "A":
                seq, rtx, held = int(f[3]), int(f[5]), int(f[6])
                c["duplicates"] += rtx and held
                got[fid].add(seq)
            elif ev == "D":
                c["drops"] += 1
                dropped[(fid, int(f[3]))] = True
            elif ev == "T":
                una = int(f[7])
                c["RTOs"] += 1
                if una in got[fid]:
                    c["RTO: una held"] += 1
                elif dropped.get((fid, una)):
                    c["RTO: una lost"] += 1
                else:
                    c["RTO: una queued"] += 1
    return c


COLS = [
    "drops",
    "retransmissions",
    "duplicates",
    "held at send",
    "after an RTO",
    "RTOs",
    "RTO: una queued",
    "RTO: una held",
    "RTO: una lost",
]


def one(extra: dict[str, object], flows: int, seed: int) -> dict[str, float]:
    from spread import spread_config

    import ecnlab

    cfg = spread_config("ecn-star", "droptail", flows, seed)
    cfg["transport"].update(extra)
    with tempfile.TemporaryDirectory() as out:
        trace = os.path.join(out, "trace.txt")
        os.environ["RTXTRACE"] = trace
        s = ecnlab.run(cfg, out=out, progress=False).summary
        row: dict[str, float] = dict(analyze(trace))
    row["goodput (Mbps)"] = sum(s["goodput_gbps_by_service"].values()) * 1e3
    return row


def main() -> None:
    if len(sys.argv) == 4:  # one run, in a fresh process (the trace file opens once)
        print(json.dumps(one(json.loads(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]))))
        return
    cols = [*COLS, "goodput (Mbps)"]
    print("| variant | flows | " + " | ".join(cols) + " |")
    print("|---" * (len(cols) + 2) + "|")
    for name, extra in VARIANTS.items():
        for flows in (4, 8):
            rows = []
            for seed in (1, 2, 3):
                args = [sys.executable, __file__, json.dumps(extra), str(flows), str(seed)]
                rows.append(json.loads(subprocess.check_output(args)))
            cells = []
            for col in cols:
                v = [r.get(col, 0) for r in rows]
                fmt = "{:.1f}" if col.startswith("goodput") else "{:.0f}"
                cells.append(f"{fmt.format(min(v))}–{fmt.format(max(v))}")
            print(f"| {name} | {flows} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
