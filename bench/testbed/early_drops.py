"""Issue 50's two cases, each stack on seeds 1-5: the default stack, the
linux profile, and each Linux mechanism on its own; goodput, drops,
retransmissions, timeouts and spurious retransmissions (the table in
docs/tcp-retransmissions.md, "Early drops").

    .venv/bin/python bench/testbed/early_drops.py [--seeds 5] [--jobs 2]

Case 1 (early_drops_pie.toml): a 100 Mbps receiver behind PIE with RFC
8033's defaults and ECN off, one Reno flow and twenty more. Case 2
(early_drops_cubic.toml): four CUBIC flows into a 100-packet drop-tail
buffer at 1 Gbps; the default stack is RFC 9438's CUBIC (cubic_linux off).
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import ecnlab

HERE = Path(__file__).resolve().parent
MECHANISMS: list[tuple[str, list[str]]] = [
    ("default", []),
    ("linux", ["transport.profile=linux"]),
    ("linux_rto", ["transport.linux_rto=true"]),
    ("prr", ["transport.prr=linux"]),
    ("linux_delayed_ack", ["transport.linux_delayed_ack=true"]),
    ("lost_retransmit", ["transport.prr=linux", "transport.lost_retransmit=true"]),
    ("rto_keeps_sack", ["transport.rto_keeps_sack=true"]),
    ("sack_blocks", ["transport.sack_blocks=3"]),
    ("rto_rearm_head", ["transport.rto_rearm_head=true"]),
    ("tlp", ["transport.tlp=true"]),
    ("rack", ["transport.rack=true"]),
    ("linux_cwnd", ["transport.linux_cwnd=true"]),
]
CUBIC_ONLY = [
    ("cubic_linux", ["transport.cubic_linux=true"]),
    ("hystart", ["transport.hystart=true"]),
]
# case: (file, overrides for every stack, the goodput the issue asks for)
CASES = {
    "pie": ("early_drops_pie.toml", [], 0.095),
    "cubic": ("early_drops_cubic.toml", ["transport.cubic_linux=false"], 0.940),
}


def one(
    job: tuple[str, str, list[str], int],
) -> tuple[str, str, int, tuple[float, int, int, int, int]]:
    case, name, sets, seed = job
    path, base, _ = CASES[case]
    # The linux profile with its own cubic_linux; every other stack from base.
    over = ([] if name == "linux" else base) + sets + [f"run.seed={seed}"]
    s = ecnlab.run(str(HERE / path), overrides=over, progress=False).summary
    good = sum(s["goodput_gbps_by_service"].values())
    return (
        case,
        name,
        seed,
        (good, s["packets_dropped"], s["retransmits"], s["timeouts"], s["spurious_retransmits"]),
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args()
    seeds = range(1, a.seeds + 1)
    jobs = [("pie", n, s, k) for n, s in MECHANISMS for k in seeds]
    jobs += [("cubic", n, s, k) for n, s in MECHANISMS + CUBIC_ONLY for k in seeds]
    with ProcessPoolExecutor(a.jobs) as ex:
        rows = list(ex.map(one, jobs))
    by: dict[tuple[str, str], dict[int, tuple]] = defaultdict(dict)
    for case, name, seed, v in rows:
        by[(case, name)][seed] = v
    print(
        "| case | stack | goodput (Gbps) | drops | retransmissions / drops | timeouts "
        "| spurious | meets issue 50 |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for (case, name), vs in by.items():
        dflt = by[(case, "default")]
        need = CASES[case][2]
        ok = all(v[0] >= need and v[1] <= dflt[k][1] and v[2] <= 1.1 * v[1] for k, v in vs.items())

        def span(i: int, f: str = "{}", vs: dict[int, tuple] = vs) -> str:
            lo, hi = min(v[i] for v in vs.values()), max(v[i] for v in vs.values())
            return f.format(lo) if lo == hi else f"{f.format(lo)}–{f.format(hi)}"

        ratio = [v[2] / max(v[1], 1) for v in vs.values()]
        print(
            f"| {case} | {name} | {span(0, '{:.4f}')} | {span(1)} | "
            f"{min(ratio):.2f}–{max(ratio):.2f} | {span(3)} | {span(4)} | {'yes' if ok else 'no'} |"
        )


if __name__ == "__main__":
    main()
