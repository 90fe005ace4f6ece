"""HPCC Fig. 11 on both simulators from the same files: the HPCC simulator's
320-host fat-tree (100 Gb/s hosts, 400 Gb/s fabric, 1 µs links, 32 MB
buffers), FB_Hadoop flows (the HPCC repository's traffic_gen CDF, Poisson
arrivals per host as its traffic_gen.py draws them) at 30% load with incasts
(60 senders → 1 receiver, 500 KB each, 2% of the bytes) or at 50%; DCQCN,
HPCC, TIMELY and DCTCP set as the simulator's run.py sets them at 100 Gb/s.
The 95th-percentile slowdown per flow-size bin (20 bins of equal flow
count, as the repository's analysis/fct_analysis.py bins them).

    python bench/hpcc_fig11/fig11.py gen DIR [--load 0.3] [--incast] [--ms 2] [--seed 1]
    python bench/hpcc_fig11/fig11.py peer DIR --ns3-dir /tmp/hpcc-peer/simulation [--cc ...]
    python bench/hpcc_fig11/fig11.py ecnlab DIR [--cc ...]
    python bench/hpcc_fig11/fig11.py table DIR [DIR ...]

`gen` writes the peer's inputs (fat.txt, flow.txt, trace.txt, one
config_<cc>.txt per scheme); `peer` runs the simulator's third program on
each (fct_<cc>.txt, cost_<cc>.json); `ecnlab` imports each config with
`ecnlab import-hpcc` and runs it (ecnlab_<cc>.toml, ecnlab_<cc>/,
cost_ecnlab_<cc>.json); `table` prints both side by side. Costs are the
child processes' CPU seconds (user + system), which a loaded machine moves
less than wall time; both are written.
"""

from __future__ import annotations

import argparse
import bisect
import json
import math
import random
import resource
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
HOSTS, TORS, AGGS, CORES, PODS = 320, 20, 20, 16, 5
BW = 100  # Gb/s, host links; the fabric is 4 × BW
SCHEMES = ("dcqcn", "hpcc", "timely", "dctcp")
SHORT = {"dcqcn": "DQ", "hpcc": "HP", "timely": "TI", "dctcp": "DT"}
# FB_Hadoop flow sizes (bytes, CDF in %): the HPCC repository's
# traffic_gen/FbHdp_distribution.txt, sampled with linear interpolation as
# its custom_rand.py does.
FB_HADOOP = [
    (0, 0),
    (100, 1),
    (200, 2),
    (300, 5),
    (350, 15),
    (400, 20),
    (500, 30),
    (600, 40),
    (700, 50),
    (1000, 60),
    (2000, 67),
    (7000, 70),
    (30000, 72),
    (50000, 82),
    (80000, 87),
    (120000, 90),
    (300000, 95),
    (1000000, 97.5),
    (2000000, 99),
    (10000000, 100),
]
INCAST_SENDERS, INCAST_BYTES, INCAST_SHARE = 60, 500_000, 0.02
NORMAL_PORT, INCAST_PORT = 100, 200


def fat_tree() -> list[tuple[int, int, int]]:
    """The repository's mix/fat.txt: 5 pods of 4 ToRs (16 hosts each) and 4
    aggregation switches, every ToR to every aggregation switch of its pod,
    aggregation switch j of each pod to cores 4j..4j+3. (a, b, Gb/s)."""
    tor0, agg0, core0 = HOSTS, HOSTS + TORS, HOSTS + TORS + AGGS
    links = [(h, tor0 + h // 16, BW) for h in range(HOSTS)]
    for t in range(TORS):
        pod = t // 4
        links += [(tor0 + t, agg0 + 4 * pod + a, 4 * BW) for a in range(4)]
    for a in range(AGGS):
        links += [(agg0 + a, core0 + 4 * (a % 4) + c, 4 * BW) for c in range(4)]
    return links


def write_topology(path: Path) -> None:
    links = fat_tree()
    switches = range(HOSTS, HOSTS + TORS + AGGS + CORES)
    lines = [f"{HOSTS + len(switches)} {len(switches)} {len(links)}", " ".join(map(str, switches))]
    lines += [f"{a} {b} {r}Gbps 1000ns 0.000000" for a, b, r in links]
    path.write_text("\n".join(lines) + "\n")


def fb_hadoop(rng: random.Random) -> int:
    u = rng.random() * 100
    cdf = [c for _, c in FB_HADOOP]
    i = max(1, bisect.bisect_left(cdf, u))
    (x0, c0), (x1, c1) = FB_HADOOP[i - 1], FB_HADOOP[i]
    return max(1, int(x0 + (x1 - x0) * (u - c0) / (c1 - c0)) if c1 > c0 else x1)


def mean_size() -> float:
    return sum(
        (c1 - c0) / 100 * (x0 + x1) / 2 for (x0, c0), (x1, c1) in zip(FB_HADOOP, FB_HADOOP[1:])
    )


def flows(
    load: float, ms: float, incast: bool, seed: int
) -> list[tuple[int, int, int, int, float]]:
    """(src, dst, dport, size, start_s): per host, Poisson arrivals of mean
    gap mean_size·8/(BW·load); destination uniform over the other hosts.
    Incasts (dport 200) evenly spaced, as many as make 2% of the bytes."""
    rng = random.Random(seed)
    gap_ns = mean_size() * 8 / (BW * load)  # ns, BW in Gb/s
    end_ns = ms * 1e6
    out = []
    for src in range(HOSTS):
        t = -math.log(1 - rng.random()) * gap_ns
        while t < end_ns:
            dst = rng.randrange(HOSTS - 1)
            dst += dst >= src
            out.append((src, dst, NORMAL_PORT, fb_hadoop(rng), int(t) * 1e-9))
            t += -math.log(1 - rng.random()) * gap_ns
    if incast:
        background = sum(f[3] for f in out)
        events = max(
            1,
            round(background * INCAST_SHARE / (1 - INCAST_SHARE) / (INCAST_SENDERS * INCAST_BYTES)),
        )
        for k in range(events):
            dst = rng.randrange(HOSTS)
            senders = rng.sample([h for h in range(HOSTS) if h != dst], INCAST_SENDERS)
            start = int((k + 0.5) * end_ns / events) * 1e-9
            out += [(s, dst, INCAST_PORT, INCAST_BYTES, start) for s in senders]
    out.sort(key=lambda f: (f[4], f[0]))
    return out


def base_rtt_ns() -> int:
    """The longest path (host, ToR, agg, core, agg, ToR, host: 6 links of
    1 µs) both ways, with one data frame (1,000 B + 48 B + 42 B of INT) per
    hop and one 60 B ACK per hop back serialised."""
    rates = [BW, 4 * BW, 4 * BW, 4 * BW, 4 * BW, BW]
    ser = sum((1090 + 60) * 8 / r for r in rates)
    return int(round(12_000 + ser))


def cc_keys(cc: str) -> tuple[dict[str, object], int, int, float]:
    """run.py's settings at 100 Gb/s (its --cc dcqcn, hp, timely, dctcp), and
    its marking at the host rate: Kmin, Kmax (KB), Pmax; ×4 at 400 Gb/s."""
    common = {
        "ALPHA_RESUME_INTERVAL": 1,
        "RATE_DECREASE_INTERVAL": 4,
        "RP_TIMER": 300,
        "EWMA_GAIN": 0.00390625,
        "DCTCP_RATE_AI": "1000Mb/s",
        "MI_THRESH": 0,
        "U_TARGET": 0.95,
        "INT_MULTI": 1,
        "FAST_REACT": 0,
    }
    kmin, kmax, pmax = 100 * BW // 25, 400 * BW // 25, 0.2
    if cc == "dcqcn":
        p = {
            **common,
            "CC_MODE": 1,
            "RATE_AI": f"{5 * BW // 25}Mb/s",
            "RATE_HAI": f"{50 * BW // 25}Mb/s",
            "HAS_WIN": 0,
            "VAR_WIN": 0,
            "ACK_HIGH_PRIO": 1,
        }
    elif cc == "hpcc":
        ai = 10 * BW // 25
        p = {
            **common,
            "CC_MODE": 3,
            "RATE_AI": f"{ai}Mb/s",
            "RATE_HAI": f"{ai}Mb/s",
            "HAS_WIN": 1,
            "VAR_WIN": 1,
            "FAST_REACT": 1,
            "INT_MULTI": BW // 25,
            "ACK_HIGH_PRIO": 0,
        }
    elif cc == "timely":
        p = {
            **common,
            "CC_MODE": 7,
            "RATE_AI": f"{BW}Mb/s",
            "RATE_HAI": f"{5 * BW}Mb/s",
            "HAS_WIN": 0,
            "VAR_WIN": 0,
            "ACK_HIGH_PRIO": 1,
        }
    elif cc == "dctcp":
        kmin = kmax = 30 * BW // 10
        pmax = 1.0
        p = {
            **common,
            "CC_MODE": 8,
            "EWMA_GAIN": 0.0625,
            "RATE_AI": "10Mb/s",
            "RATE_HAI": "10Mb/s",
            "DCTCP_RATE_AI": "615Mb/s",
            "HAS_WIN": 1,
            "VAR_WIN": 1,
            "ACK_HIGH_PRIO": 1,
        }
    else:
        raise SystemExit(f"--cc {cc}: one of {', '.join(SCHEMES)}")
    return p, kmin, kmax, pmax


def write_config(d: Path, cc: str, stop_s: float) -> None:
    p, kmin, kmax, pmax = cc_keys(cc)
    rtt = base_rtt_ns()
    bps, fab = BW * 10**9, 4 * BW * 10**9
    cfg = [
        ("ENABLE_QCN", 1),
        ("ENABLE_PFC", 1),
        ("USE_DYNAMIC_PFC_THRESHOLD", 1),
        ("PACKET_PAYLOAD_SIZE", 1000),
        ("TOPOLOGY_FILE", "fat.txt"),
        ("FLOW_FILE", "flow.txt"),
        ("TRACE_FILE", "trace.txt"),
        ("TRACE_OUTPUT_FILE", f"mix_{cc}.tr"),
        ("FCT_OUTPUT_FILE", f"fct_{cc}.txt"),
        ("PFC_OUTPUT_FILE", f"pfc_{cc}.txt"),
        ("SIMULATOR_STOP_TIME", f"{stop_s:.6f}"),
        *((k, p[k]) for k in ("CC_MODE", "ALPHA_RESUME_INTERVAL", "RATE_DECREASE_INTERVAL")),
        ("CLAMP_TARGET_RATE", 0),
        ("RP_TIMER", p["RP_TIMER"]),
        ("EWMA_GAIN", p["EWMA_GAIN"]),
        ("FAST_RECOVERY_TIMES", 1),
        ("RATE_AI", p["RATE_AI"]),
        ("RATE_HAI", p["RATE_HAI"]),
        ("MIN_RATE", "1000Mb/s"),
        ("DCTCP_RATE_AI", p["DCTCP_RATE_AI"]),
        ("ERROR_RATE_PER_LINK", "0.0000"),
        ("L2_CHUNK_SIZE", 4000),
        ("L2_ACK_INTERVAL", 1),
        ("L2_BACK_TO_ZERO", 0),
        ("HAS_WIN", p["HAS_WIN"]),
        ("GLOBAL_T", 1),
        ("VAR_WIN", p["VAR_WIN"]),
        *((k, p[k]) for k in ("FAST_REACT", "U_TARGET", "MI_THRESH", "INT_MULTI")),
        ("MULTI_RATE", 0),
        ("SAMPLE_FEEDBACK", 0),
        ("PINT_LOG_BASE", 1.01),
        ("PINT_PROB", 1.0),
        ("RATE_BOUND", 1),
        ("ACK_HIGH_PRIO", p["ACK_HIGH_PRIO"]),
        ("LINK_DOWN", "0 0 0"),
        ("ENABLE_TRACE", 0),
        ("KMAX_MAP", f"2 {bps} {kmax} {fab} {4 * kmax}"),
        ("KMIN_MAP", f"2 {bps} {kmin} {fab} {4 * kmin}"),
        ("PMAX_MAP", f"2 {bps} {pmax:.2f} {fab} {pmax:.2f}"),
        # KiB in this port (third.cc multiplies by 1024; master's run.py writes 32 for MB).
        ("BUFFER_SIZE", 32 * 1024),
        ("QLEN_MON_FILE", f"qlen_{cc}.txt"),
        ("QLEN_MON_START", 0),
        ("QLEN_MON_END", 0),
        ("FIXED_WIN", BW * rtt // 8),
        ("BASE_RTT", rtt),
    ]
    (d / f"config_{cc}.txt").write_text("".join(f"{k} {v}\n" for k, v in cfg))


def gen(a: argparse.Namespace) -> None:
    d = Path(a.dir)
    d.mkdir(parents=True, exist_ok=True)
    write_topology(d / "fat.txt")
    fl = flows(a.load, a.ms, a.incast, a.seed)
    lines = [str(len(fl))] + [
        f"{i} {s} {t} 3 {port} {size} {start:.9f}" for i, (s, t, port, size, start) in enumerate(fl)
    ]
    (d / "flow.txt").write_text("\n".join(lines) + "\n")
    (d / "trace.txt").write_text("0\n")
    stop = a.ms * 1e-3 + a.drain_ms * 1e-3
    for cc in SCHEMES:
        write_config(d, cc, stop)
    meta = {
        "load": a.load,
        "incast": a.incast,
        "ms": a.ms,
        "drain_ms": a.drain_ms,
        "seed": a.seed,
        "flows": len(fl),
        "incast_flows": sum(f[2] == INCAST_PORT for f in fl),
        "bytes": sum(f[3] for f in fl),
        "base_rtt_ns": base_rtt_ns(),
    }
    (d / "scenario.json").write_text(json.dumps(meta, indent=1) + "\n")
    print(json.dumps(meta))


def timed(cmd: list[str], cwd: Path, log: Path) -> dict[str, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    with open(log, "w") as out:
        rc = subprocess.call(cmd, cwd=cwd, stdout=out, stderr=subprocess.STDOUT)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if rc:
        sys.exit(f"{cmd[0]} exited {rc}: see {log}")
    return {"wall_s": round(wall, 2), "cpu_s": round(cpu, 2)}


def peer(a: argparse.Namespace) -> None:
    d = Path(a.dir)
    binary = Path(a.ns3_dir) / "build" / "scratch" / "ns3.39-third"
    for cc in a.cc:
        cost = timed([str(binary), f"config_{cc}.txt"], d, d / f"peer_{cc}.log")
        (d / f"cost_{cc}.json").write_text(json.dumps(cost) + "\n")
        print(cc, cost, flush=True)


def run_ecnlab(a: argparse.Namespace) -> None:
    from ecnlab.peers.hpcc import import_hpcc

    d = Path(a.dir)
    exe = str(Path(sys.executable).parent / "ecnlab")
    for cc in a.cc:
        imp = import_hpcc(d / f"config_{cc}.txt")
        toml = d / f"ecnlab_{cc}.toml"
        toml.write_text(imp.toml)
        out = d / f"ecnlab_{cc}"
        cost = timed(
            [exe, "run", str(toml), "--out", str(out), "--quiet"], d, d / f"ecnlab_{cc}.log"
        )
        summary = json.loads((out / "summary.json").read_text())
        cost["events"] = summary.get("events")
        (d / f"cost_ecnlab_{cc}.json").write_text(json.dumps(cost) + "\n")
        print(cc, cost, flush=True)


def slowdowns(d: Path, cc: str) -> tuple[dict, dict]:
    """Per normal (dport 100) flow of the flow file: (peer, ecnlab)
    slowdown, keyed by (src, dst, start_ns, size). Both divide by the peer's
    standalone FCT, so the two differ in FCT alone; below 1 counts as 1, as
    fct_analysis.py does."""
    import numpy as np
    import pyarrow.parquet as pq

    from ecnlab.peers.hpcc_fct import read_fct
    from ecnlab.peers.hpcc_files import read_flows

    def key(src: int, dst: int, start_s: float, size: int) -> tuple[int, int, int, int]:
        return (int(src), int(dst), round(start_s * 1e9), int(size))

    normal = {
        key(f.src, f.dst, f.start_ps * 1e-12, f.size)
        for f in read_flows(d / "flow.txt")
        if f.dport == NORMAL_PORT
    }
    peer = read_fct(d / f"fct_{cc}.txt").to_pydict()  # hosts keep the peer's ids here
    peer_fct, ideal = {}, {}
    for src, dst, start, size, fct, best in zip(
        peer["src"], peer["dst"], peer["start"], peer["size"], peer["fct"], peer["ideal_fct"]
    ):
        k = key(src, dst, start, size)
        if k in normal:
            peer_fct[k], ideal[k] = fct, best
    t = pq.read_table(d / f"ecnlab_{cc}" / "flows.parquet").to_pydict()
    ours = {
        k: fct
        for src, dst, start, size, fct in zip(t["src"], t["dst"], t["start"], t["size"], t["fct"])
        if (k := key(src, dst, start, size)) in normal and np.isfinite(fct)
    }
    peer_sl = {k: max(1.0, v / ideal[k]) for k, v in peer_fct.items()}
    ours_sl = {k: max(1.0, v / ideal[k]) for k, v in ours.items() if k in ideal}
    return peer_sl, ours_sl


def bins(keys: list, step: int = 5) -> list[list]:
    """fct_analysis.py's bins: flows sorted by size, 100/step bins of equal count."""
    keys = sorted(keys, key=lambda k: (k[3], k))
    n = len(keys)
    return [keys[i * n // 100 : (i + step) * n // 100] for i in range(0, 100, step)]


def table(a: argparse.Namespace) -> None:
    import numpy as np

    for dd in a.dir:
        d = Path(dd)
        meta = json.loads((d / "scenario.json").read_text())
        print(
            f"\n## {d.name}: load {meta['load']}{' + incast' if meta['incast'] else ''}, "
            f"{meta['ms']} ms of arrivals, {meta['flows']} flows\n"
        )
        per = {cc: slowdowns(d, cc) for cc in SCHEMES if (d / f"fct_{cc}.txt").exists()}
        common = set.intersection(*(set(p) & set(o) for p, o in per.values()))
        groups = bins(list(common))
        head = (
            "| size ≤ | "
            + " | ".join(f"{cc} peer | {cc} ecnlab" for cc in per)
            + " | order peer | order ecnlab |"
        )
        print(head)
        print("|" + "---|" * (head.count("|") - 1))
        for g in groups:
            cells, order = [], {}
            for cc, (p, o) in per.items():
                pv = float(np.percentile([p[k] for k in g], 95))
                ov = float(np.percentile([o[k] for k in g], 95))
                cells += [f"{pv:.2f}", f"{ov:.2f} ({(ov / pv - 1) * 100:+.0f}%)"]
                order.setdefault("peer", []).append((pv, cc))
                order.setdefault("ours", []).append((ov, cc))
            op = "<".join(SHORT[cc] for _, cc in sorted(order["peer"]))
            oo = "<".join(SHORT[cc] for _, cc in sorted(order["ours"]))
            print(f"| {g[-1][3]} | " + " | ".join(cells) + f" | {op} | {oo} |")
        for cc, (p, o) in per.items():
            costs = [
                json.loads((d / f).read_text())
                for f in (f"cost_{cc}.json", f"cost_ecnlab_{cc}.json")
                if (d / f).exists()
            ]
            lost = (len(p), len(o))
            print(
                f"\n{cc}: finished normal flows peer/ecnlab {lost[0]}/{lost[1]}; "
                f"cost peer/ecnlab {costs}",
                end="",
            )
        print()


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("gen")
    g.add_argument("dir")
    g.add_argument("--load", type=float, default=0.3)
    g.add_argument("--incast", action="store_true")
    g.add_argument("--ms", type=float, default=2.0, help="arrivals window (ms)")
    g.add_argument(
        "--drain-ms", type=float, default=30.0, help="run this long after the last arrival"
    )
    g.add_argument("--seed", type=int, default=1)
    for name in ("peer", "ecnlab"):
        s = sub.add_parser(name)
        s.add_argument("dir")
        s.add_argument("--cc", nargs="+", default=list(SCHEMES), choices=SCHEMES)
        if name == "peer":
            s.add_argument("--ns3-dir", required=True)
    t = sub.add_parser("table")
    t.add_argument("dir", nargs="+")
    a = ap.parse_args()
    {"gen": gen, "peer": peer, "ecnlab": run_ecnlab, "table": table}[a.cmd](a)


if __name__ == "__main__":
    main()
