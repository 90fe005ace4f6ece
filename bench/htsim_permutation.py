"""Same scenario in ecnlab and in htsim: a DCTCP permutation on a k = 8 fat-tree.

128 long-lived DCTCP flows, each host sending to one other host and receiving
from one (a random derangement drawn from the seed), on a k = 8 fat-tree with
10 Gbps links, 1 us per link, 150 KB per switch port, and DCTCP marking at
dequeue above K = 15 packets (htsim's ECN queue, whose K is fixed at 15).
Each flow takes one path. ecnlab hashes it with per-switch salted ECMP;
by default htsim is then given the very same paths (--paths ecnlab: the
script reads them with ecnlab.flow_paths and names them to the driver), so
the two runs differ only in their models of TCP, DCTCP and queues. With
--paths htsim, htsim draws its own, by rand() over the shortest paths at the
source as its example mains do; which flows collide then differs, and goodput
moves by up to about 10% from one seed to the next with the paths alone.

Goodput is data delivered in order at the receivers, in 1500-byte packets per
second: htsim has no headers (its 1500-byte packet is all segment), ecnlab's
1500-byte packet carries 1460 bytes of payload, so ecnlab's payload goodput is
scaled by 1500/1460 for the comparison.

htsim runs twice per seed. Once with its own DCTCPSrc, which at the end of
every window cuts cwnd by alpha/2 whenever alpha > 0, marks in that window or
not (alpha decays but stays above 0 once a flow has seen a mark, so it keeps
cutting a little every window). Once ("h-paper") with the driver's
PaperDctcp, which cuts only in a window that saw ECN-Echo, as the DCTCP paper
(§3.1) and ecnlab do; that one rule is the only difference. On the same
paths, most of ecnlab's few percent more goodput than htsim's DCTCPSrc is that
rule. What is left: htsim's host queue serves ACKs before data (strict
priority), ecnlab's NIC is one FIFO; htsim's RTO floor is 250 ms and its
timers are scanned every 10 ms (no timeouts happen here either way).

Speed: wall-clock seconds of each event loop (setup excluded), per simulated
second and per delivered data packet, measured in one invocation with the two
simulators run one after the other on the same machine (htsim's time is its
own DCTCPSrc run).

htsim build (tested at Broadcom/csg-htsim 841d9e7, g++ 12.2):

    git clone https://github.com/Broadcom/csg-htsim
    cd csg-htsim/sim && make        # libhtsim.a, then tests/ and datacenter/

Only `libhtsim.a` and four objects of `sim/datacenter` are needed; to build
just those: `make libhtsim.a && make -C datacenter fat_tree_topology.o
fat_tree_switch.o firstfit.o connection_matrix.o`. This script compiles its own
driver, `bench/htsim/dctcp_permutation.cpp`, against that build (into
--work, default a temporary folder); nothing of htsim is kept in this repo.

Usage (from the repository root, after `make build`):

    .venv/bin/python bench/htsim_permutation.py --htsim /path/to/csg-htsim/sim
        [--seeds 1 2 3 4 5] [--end 50ms] [--paths ecnlab|htsim] [--set KEY=VALUE ...]

or `make bench-htsim HTSIM=/path/to/csg-htsim/sim`.
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import ecnlab

HERE = Path(__file__).resolve().parent
DRIVER = HERE / "htsim" / "dctcp_permutation.cpp"
HTSIM_OBJECTS = ["fat_tree_topology.o", "fat_tree_switch.o", "firstfit.o", "connection_matrix.o"]
PKT, PAYLOAD = 1500, 1460


def derangement(n: int, seed: int) -> list[int]:
    """A uniformly random permutation without fixed points: host i sends to perm[i]."""
    rng = random.Random(seed)
    while True:
        perm = list(range(n))
        rng.shuffle(perm)
        if all(i != d for i, d in enumerate(perm)):
            return perm


def ecnlab_config(k: int, perm: list[int], seed: int, end: str) -> dict[str, Any]:
    return {
        "run": {"seed": seed, "duration": end, "sample_ports": "none"},
        "topology": {"kind": "fat-tree", "k": k, "link_rate": "10Gbps", "link_delay": "1us"},
        "switch": {
            # htsim sizes queues in bytes: 100 packets of 1500 bytes.
            "buffer": "100pkt",
            "marking": "per-queue",
            "threshold": "15pkt",
            "dequeue_marking": True,
        },
        "transport": {
            "cc": "dctcp",
            "init_cwnd": 10,
            # htsim's DCTCP: alpha starts at 0; RTO 10 ms until the first RTT
            # sample, then at least 250 ms (TcpSrc's floor).
            "dctcp_alpha_init": 0.0,
            "init_rto": "10ms",
            "min_rto": "250ms",
            # htsim's source puts its whole window into a 1000-packet NIC queue.
            "host_queue_limit": "1500KB",
        },
        "flows": [{"src": s, "dst": d} for s, d in enumerate(perm)],
    }


def htsim_path_index(hops: list[str], k: int) -> int:
    """The index, among htsim's FatTreeTopology::get_bidir_paths for the same
    host pair, of the path through the switches `hops` (ecnlab's names).

    Both fat-trees number pods, edge (ToR) switches and hosts alike, and
    aggregation switches by their position a in the pod. They wire cores
    differently: ecnlab's core a·h + l and htsim's core a + h·l (h = k/2) are
    both the l-th core of the aggregation switches at position a, which is
    the isomorphism used here. htsim lists a pair's paths by position a, then
    l: index a (within a pod) or a·h + l (across pods)."""
    h = k // 2
    if len(hops) == 1:
        return 0
    a = int(hops[1].removeprefix("agg")) % h
    if len(hops) == 3:
        return a
    core = int(hops[2].removeprefix("core"))
    assert core // h == a, hops
    return a * h + core % h


def build_driver(sim: Path, work: Path) -> Path:
    missing = [
        p
        for p in ["libhtsim.a", *(f"datacenter/{o}" for o in HTSIM_OBJECTS)]
        if not (sim / p).exists()
    ]
    if missing:
        gone = ", ".join(missing)
        sys.exit(f"htsim_permutation: {sim} is not a built htsim sim/ folder (missing {gone})")
    exe = work / "dctcp_permutation"
    cmd = [
        "g++", "-O2", "-std=c++11", "-w", f"-I{sim}", f"-I{sim / 'datacenter'}", str(DRIVER),
        *(str(sim / "datacenter" / o) for o in HTSIM_OBJECTS),
        f"-L{sim}", "-lhtsim", "-o", str(exe),
    ]  # fmt: skip
    subprocess.run(cmd, check=True)
    return exe


def run_htsim(
    exe: Path, perm: list[int], paths: list[str], seed: int, end_ms: float, work: Path, cut: str
) -> dict[str, float]:
    """`paths`: per flow, "" (htsim draws) or " path P ack Q"; `cut`: the
    driver's DCTCP reaction (every-window: htsim's DCTCPSrc; marked: the paper's)."""
    cm = work / f"perm{seed}.cm"
    lines = [
        f"Nodes {len(perm)}",
        f"Connections {len(perm)}",
        *(f"{s}->{d}{p}" for (s, d), p in zip(enumerate(perm), paths)),
    ]
    cm.write_text("\n".join(lines) + "\n")
    # ssthresh: ecnlab starts without one; htsim's example main's is 15 packets.
    # (Its rand() is drawn per flow either way, so its own paths follow the seed.)
    cmd = [str(exe), "-perm", str(cm), "-end", str(end_ms), "-seed", str(seed), "-q", "100"]
    cmd += ["-ssthresh", "100000", "-cut", cut]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    summary = [line for line in out.splitlines() if line.startswith("htsim ")][-1]
    return {k: float(v) for k, v in (f.split("=") for f in summary.split()[1:])}


def run_ecnlab(cfg: dict[str, Any], overrides: list[str]) -> dict[str, float]:
    res = ecnlab.run(cfg, overrides=overrides, progress=False)
    s = res.summary
    payload = sum(res["flows"]["bytes_received"].to_pylist())
    return {
        "payload_gbps": sum(s["goodput_gbps_by_service"].values()),
        "data_packets_delivered": payload / PAYLOAD,
        "events": s["events"],
        "wall_s": s["wall_seconds"],
        "sim_s": s["sim_seconds"],
        "timeouts": s["timeouts"],
        "drops": s["packets_dropped"],
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--htsim", type=Path, required=True, help="a built htsim sim/ folder")
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3, 4, 5])
    ap.add_argument("--end", default="50ms", help="simulated time, e.g. 50ms")
    ap.add_argument("--k", type=int, default=8)
    ap.add_argument(
        "--paths",
        choices=["ecnlab", "htsim"],
        default="ecnlab",
        help="ecnlab: htsim takes ecnlab's per-flow ECMP paths; htsim: it draws its own",
    )
    ap.add_argument("--set", dest="overrides", action="append", default=[], help="ecnlab override")
    ap.add_argument("--work", type=Path, help="folder for the driver and permutation files")
    args = ap.parse_args(argv)
    if not args.end.endswith("ms"):
        ap.error("--end takes milliseconds, e.g. 50ms")
    end_ms = float(args.end[:-2])
    work = args.work or Path(tempfile.mkdtemp(prefix="htsim-perm-"))
    work.mkdir(parents=True, exist_ok=True)
    exe = build_driver(args.htsim.resolve(), work)
    hosts = args.k**3 // 4

    print(f"{hosts}-flow DCTCP permutation, k = {args.k} fat-tree, {args.end}, paths: {args.paths}")
    print(
        "Gbps: in-order data in 1500-byte packets (ecnlab's 1460-byte payload scaled by 1500/1460)"
    )
    print("htsim: its DCTCPSrc (cuts every window while alpha > 0); htsim-paper: cuts only in")
    print("windows with ECN-Echo, as ecnlab and the DCTCP paper do. diff: ecnlab against each.")
    print(
        f"{'seed':>4} {'htsim':>7} {'h-paper':>7} {'ecnlab':>7} {'diff':>7} {'diff-p':>7}"
        f" {'htsim s':>8} {'ecnlab s':>8} {'x/sim s':>8} {'x/pkt':>6}"
    )
    rows = []
    for seed in args.seeds:
        perm = derangement(hosts, seed)
        cfg = ecnlab_config(args.k, perm, seed, args.end)
        paths = [""] * hosts
        if args.paths == "ecnlab":
            flow_paths = ecnlab.flow_paths(cfg, args.overrides)
            if any(not data for data, _ in flow_paths):
                ap.error("--paths ecnlab needs per-flow ECMP (use --paths htsim with per-packet)")
            paths = [
                f" path {htsim_path_index(data, args.k)} ack {htsim_path_index(acks, args.k)}"
                for data, acks in flow_paths
            ]
        h = run_htsim(exe, perm, paths, seed, end_ms, work, "every-window")
        hp = run_htsim(exe, perm, paths, seed, end_ms, work, "marked")
        e = run_ecnlab(cfg, args.overrides)
        e_gbps = e["payload_gbps"] * PKT / PAYLOAD
        per_sim = h["wall_s"] / e["wall_s"]
        per_pkt = (h["wall_s"] / h["data_packets_delivered"]) / (
            e["wall_s"] / e["data_packets_delivered"]
        )
        row = (h["goodput_gbps"], hp["goodput_gbps"], e_gbps, h["wall_s"], e["wall_s"])
        rows.append(row + (per_sim, per_pkt))
        print(
            f"{seed:>4} {row[0]:>7.1f} {row[1]:>7.1f} {e_gbps:>7.1f}"
            f" {e_gbps / row[0] - 1:>+7.1%} {e_gbps / row[1] - 1:>+7.1%}"
            f" {row[3]:>8.2f} {row[4]:>8.2f} {per_sim:>7.2f}x {per_pkt:>5.2f}x",
            flush=True,
        )
    m = [statistics.fmean(c) for c in zip(*rows)]
    print(
        f"mean {m[0]:>7.1f} {m[1]:>7.1f} {m[2]:>7.1f}"
        f" {m[2] / m[0] - 1:>+7.1%} {m[2] / m[1] - 1:>+7.1%}"
        f" {m[3]:>8.2f} {m[4]:>8.2f} {m[5]:>7.2f}x {m[6]:>5.2f}x"
    )
    print(
        "x/sim s: htsim's event-loop wall time over ecnlab's for the same simulated time;"
        " x/pkt: the same per delivered data packet (above 1: ecnlab is faster)"
    )
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
