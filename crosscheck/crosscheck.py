"""Run the MQ-ECN authors' ns-2 and ecnlab on the same §5.2 points and compare.

``make crosscheck`` runs this. Every point is cached as one JSON file under
``crosscheck/cache/`` (per-flow sizes, FCTs and timeouts, wall time, peak
memory), so an interrupted or partial run resumes where it stopped and a
later run with more points fills in the rest. The tables go to
``crosscheck/results.md``.

The ns-2 side is the authors' own TCL script (``spine_empirical_diffserv.tcl``
from github.com/HKUST-SING/MQ-ECN-NS2) with the arguments of their
``run_simulation_diffserv.py``; only the flow count, load and ECN scheme
change. It is deterministic (its seeds are fixed in the script), so it has
one run per point. ecnlab runs the same scenario over several seeds.

Both simulators' flows go through the same statistics (`stats`): small =
(0, 100 KB], medium = (100 KB, 10 MB], large > 10 MB (decimal, as the
paper's classes and ecnlab's own summary); p99 = the sorted list's element
at floor(0.99·n) (the authors' ``result.py``).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
CACHE = HERE / "cache"
# The authors' ns-2 runs' folder under CACHE (ecnlab's are named by variant).
NS2_DIR = "ns-2"

# ns-2 ECN scheme ids of the authors' script, and ecnlab's marking names.
SCHEMES = {"per-queue": 0, "mq-ecn": 2, "per-queue-min": 3}
LABELS = {"per-queue": "per-queue K=65", "mq-ecn": "MQ-ECN", "per-queue-min": "per-queue K/8"}

# ecnlab variants: each adds options to the one before it (see
# docs/validation/ns2.md). "ns2" is the set that
# mirrors the authors' scenario; the others isolate one difference each.
VARIANTS: dict[str, dict[str, object]] = {
    # The first comparison (issue 15): a connection per flow, services by
    # host pair, Linux's DCTCP alpha = 1 at start, FCT at the receiver.
    "issue15": {},
    # + the authors' TCP details: alpha starts at 0, initial RTO 5 ms, max
    # RTO 64 s, 1 us timer tick, basic congestion avoidance (windowOption_
    # 0), 1256-packet receive window.
    "tcp": {
        "transport.dctcp_alpha_init": 0.0,
        "transport.init_rto": "5ms",
        "transport.max_rto": "64s",
        "transport.clock_granularity": "1us",
        "transport.ca": "basic",
        "transport.rx_window": 1256,
    },
    # + every host sends in one service, (h + 1) mod 8, and offers the load
    # with that service's distribution.
    "by-source": {"workload.service_mapping": "by-source"},
    # + persistent connections per host pair.
    "per-pair": {"workload.connections": "per-pair"},
    # + FCT ends when the sender has the last ACK: the authors' scenario.
    "ns2": {"run.fct_end": "sender"},
    # + host NICs as DWRR ports marking with the scheme, no TCP small
    # queues (ns-2's NICs); see docs/validation/ns2.md for why this is not in "ns2".
    "ns2-nic": {"nic": {}, "transport.host_queue_limit": "1GB"},
}
ORDER = list(VARIANTS)

# One-at-a-time: "ns2" with one option taken back out.
ISOLATE: dict[str, dict[str, object]] = {
    "ns2-minus-per-pair": {"workload.connections": "per-flow"},
    "ns2-minus-fct-sender": {"run.fct_end": "receiver"},
    "ns2-minus-by-source": {"workload.service_mapping": "by-pair"},
    "ns2-minus-tcp": {
        "transport.dctcp_alpha_init": 1.0,
        "transport.ca": "standard",
    },
}


# ns-2's wire load over its nominal one: the script sets λ from a fixed
# mean payload per distribution (913,703 B for cache, ...) while its flows
# carry ceil(CDF draw) × 1460 B of payload plus 40 B per packet; the four
# CDFs give 1.0241–1.0245 (E[ceil(X)] · 1500 / mean, computed from
# CDF_*.tcl). ecnlab's load counts wire bytes.
NS2_WIRE_LOAD = 1.0243

# "ns2" plus the differences tested last (docs/validation/ns2.md, difference 7).
EXTEND: dict[str, dict[str, object]] = {
    # The authors' unsalted ECMP hash of the host pair.
    "ns2-ecmp": {"topology.ecmp": "ns2"},
    # ns-2's wire load: its rate counts payload, ecnlab's the wire.
    "ns2-wire-load": {"load_factor": NS2_WIRE_LOAD},
    # The script's own flows: its per-pair generators, seeded as it seeds
    # them (arrivals = "ns2" counts the load on payload, as the script).
    "ns2-flows": {"workload.arrivals": "ns2"},
    "ns2-flows-nic": {**VARIANTS["ns2-nic"], "workload.arrivals": "ns2"},
    # ... on the script's paths too: nothing is left to a seed, so one run
    # is the whole answer, as for ns-2.
    "ns2-replay": {"workload.arrivals": "ns2", "topology.ecmp": "ns2"},
    "ns2-replay-nic": {**VARIANTS["ns2-nic"], "workload.arrivals": "ns2", "topology.ecmp": "ns2"},
}
# Variants whose runs do not depend on the seed: their first seed only.
SEEDLESS = {"ns2-replay", "ns2-replay-nic"}


def seeds_of(variant: str, seeds: list[int]) -> list[int]:
    return seeds[:1] if variant in SEEDLESS else seeds


ALL_VARIANTS = ORDER + list(ISOLATE) + list(EXTEND)


def variant_options(name: str) -> dict[str, object]:
    """Every option of a variant: the chain up to it, ns2 less one, or ns2
    plus some."""
    if name in ISOLATE or name in EXTEND:
        opts = variant_options("ns2")
        opts.update(ISOLATE.get(name) or EXTEND[name])
        return opts
    opts: dict[str, object] = {}
    for v in ORDER[: ORDER.index(name) + 1]:
        opts.update(VARIANTS[v])
    return opts


def ecnlab_config(
    scheme: str, load: float, flows: int, seed: int, variant: str, perturb_ns: int = 0
) -> dict:
    """The §5.2 scenario as the authors' script sets it (ns-2 README);
    perturb_ns lengthens the host links by that many nanoseconds."""
    cfg: dict = {
        "run": {"seed": seed},
        "topology": {
            "kind": "leaf-spine",
            "leaves": 12,
            "spines": 12,
            "hosts_per_leaf": 12,
            "link_rate": "10Gbps",
            "uplink_rate": "10Gbps",
            "link_delay": "0.2us",
            "host_delay": f"{HOST_DELAY_NS + perturb_ns}ns",
        },
        "switch": {
            # dwrr.cc drops when the port's bytes would pass 200 × 1500 B.
            "buffer": "300KB",
            "queues": 8,
            "scheduler": "dwrr",
            "quantum": "1500B",
            "marking": scheme,
            "threshold": "65pkt",
            "mqecn_beta": 0.75,
            "mqecn_idle": "1.2us",
        },
        "transport": {"cc": "dctcp", "init_cwnd": 16, "min_rto": "5ms", "slow_start_restart": True},
        "workload": {
            "kind": "poisson",
            "load": load,
            "flows": flows,
            "services": 8,
            "service_mapping": "by-pair",
            "distributions": ["cache", "web_search", "hadoop", "data_mining"] * 2,
        },
    }
    for key, value in variant_options(variant).items():
        if key == "load_factor":
            cfg["workload"]["load"] = load * float(value)  # type: ignore[arg-type]
            continue
        if "." not in key:
            cfg[key] = value
            continue
        section, name = key.split(".", 1)
        cfg.setdefault(section, {})[name] = value
    return cfg


# The script's host-link delay (20 us). Both simulators are deterministic on
# the replayed flows, and a drop-heavy run is chaotic: a nanosecond more on
# every host link reorders simultaneous events and gives another sample of
# the same scenario. `--perturb` runs each point so, on both sides, to show
# how far a deterministic run's numbers are from its neighbours'.
HOST_DELAY_NS = 20_000


# ---------------------------------------------------------------- running


def run_measured(cmd: list[str], cwd: Path, stdout) -> tuple[int, float, float]:
    """Run cmd; return (exit code, wall seconds, peak resident MB)."""
    start = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=stdout, stderr=subprocess.STDOUT)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, time.monotonic() - start, usage.ru_maxrss / 1024.0


def ns2_host_delay(perturb_ns: int) -> str:
    """The script's host-delay argument (s); unperturbed, as the authors'
    run_simulation_diffserv.py spells it."""
    return f"{(HOST_DELAY_NS + perturb_ns) * 1e-9:.9f}" if perturb_ns else "0.000020"


def ns2_point(build: Path, scheme: str, load: float, flows: int, perturb_ns: int = 0) -> dict:
    """One run of the authors' script; the flows of its flow.tr."""
    ns = build / "ns-2.35" / "ns"
    scripts = build / "mqecn" / "scripts"
    if not ns.exists() or not scripts.is_dir():
        sys.exit(
            f"crosscheck: no ns-2 build at {build} (expected {ns} and {scripts}); "
            "build one with crosscheck/build_ns2.sh"
        )
    run_dir = build / "runs" / f"{scheme}_load{load}_flows{flows}{perturbed(perturb_ns)}"
    shutil.rmtree(run_dir, ignore_errors=True)
    run_dir.mkdir(parents=True)
    for tcl in scripts.glob("*.tcl"):
        shutil.copy(tcl, run_dir)
    add_drop_monitors(run_dir / "spine_empirical_diffserv.tcl")
    # The order of spine_empirical_diffserv.tcl's 24 arguments; values of
    # the authors' run_simulation_diffserv.py except flows, load, scheme
    # (spelled as that script spells them).
    args = "8 FLOWS 10 0.0000002 HOST 200 LOAD 1 1 1 16 DCTCP-Sack 1 true 0.0625 0.005"
    args += " SCHEME 65.0 DWRR 12 12 12 1 ./flow.tr"
    args = args.replace("FLOWS", str(flows)).replace("LOAD", str(load))
    args = args.replace("HOST", ns2_host_delay(perturb_ns))
    args = args.replace("SCHEME", str(SCHEMES[scheme])).split()
    cmd = ["nice", "-n", "10", str(ns), "spine_empirical_diffserv.tcl", *args]
    with open(run_dir / "log.txt", "wb") as log:
        rc, wall, rss = run_measured(cmd, run_dir, log)
    if rc != 0:
        sys.exit(f"crosscheck: ns-2 exited with {rc}; see {run_dir / 'log.txt'}")
    rows = []
    for line in (run_dir / "flow.tr").read_text().splitlines():
        f = line.split()
        if len(f) >= 3:
            # <packets> <fct s> <timeouts> <src> <dst> <service>; sizes are
            # whole 1460-byte segments.
            rows.append([int(float(f[0])) * 1460, float(f[1]), int(f[2])])
    log_text = (run_dir / "log.txt").read_text(errors="replace")
    found = re.finditer(r"^DROPS (\S+) (\d+)$", log_text, re.M)
    drops_at = {m[1].replace("_", " "): int(m[2]) for m in found}
    return {
        "flows": rows,
        "wall_s": wall,
        "maxrss_mb": rss,
        "drops": sum(drops_at.values()) if drops_at else None,
        "drops_at": drops_at or None,
        "cmd": " ".join(cmd[3:]),
    }


# Where a packet was dropped: the four kinds of port of the leaf-spine.
PLACES = ["nic", "leaf up", "spine down", "leaf down"]

# Queue monitors on every link of the authors' script, summed by place and
# printed when it finishes. Counting does not change what ns-2 does (the
# monitored per-queue K point at load 0.6 wrote the same flow.tr).
NS2_DROP_MONITORS = """
set drop_mons {}
for {set i 0} {$i < $S} {incr i} {
  set j [expr $i / $topology_spt]
  lappend drop_mons [list nic [$ns monitor-queue $s($i) $n($j) ""]]
  lappend drop_mons [list {leaf down} [$ns monitor-queue $n($j) $s($i) ""]]
}
for {set i 0} {$i < $topology_tors} {incr i} {
  for {set j 0} {$j < $topology_spines} {incr j} {
    lappend drop_mons [list {leaf up} [$ns monitor-queue $n($i) $a($j) ""]]
    lappend drop_mons [list {spine down} [$ns monitor-queue $a($j) $n($i) ""]]
  }
}
rename finish finish_unmonitored
proc finish {} {
  global drop_mons
  foreach m $drop_mons {
    set k [lindex $m 0]
    if {![info exists tot($k)]} { set tot($k) 0 }
    set tot($k) [expr $tot($k) + [[lindex $m 1] set pdrops_]]
  }
  foreach k [array names tot] { puts "DROPS [string map {{ } _} $k] $tot($k)" }
  finish_unmonitored
}
"""


def add_drop_monitors(script: Path) -> None:
    """Count drops per place in a copy of the authors' script."""
    text = script.read_text()
    anchor = 'puts "Initial agent creation done"'
    if anchor not in text:
        sys.exit(f"crosscheck: {script} lacks the line {anchor!r}; is it the authors' script?")
    script.write_text(text.replace(anchor, NS2_DROP_MONITORS + anchor, 1))


def drop_place(node: str, peer: str) -> str:
    """The PLACES entry of an ecnlab port named node:peer."""
    kind = lambda name: name.rstrip("0123456789")  # noqa: E731
    return {
        ("host", "leaf"): "nic",
        ("leaf", "spine"): "leaf up",
        ("spine", "leaf"): "spine down",
        ("leaf", "host"): "leaf down",
    }[(kind(node), kind(peer))]


def perturbed(perturb_ns: int) -> str:
    """A run's name suffix for a host-delay perturbation (none for 0)."""
    return f"_hd+{perturb_ns}ns" if perturb_ns else ""


def ecnlab_point(
    scheme: str, load: float, flows: int, seed: int, variant: str, perturb_ns: int = 0
) -> dict:
    """One ecnlab run, in a child process so its peak memory is its own."""
    cfg = ecnlab_config(scheme, load, flows, seed, variant, perturb_ns)
    out = CACHE / f"tmp-{os.getpid()}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, str(Path(__file__)), "--child", json.dumps(cfg), str(out)]
    with open(os.devnull, "wb") as devnull:
        rc, wall, rss = run_measured(cmd, HERE, devnull)
    if rc != 0:
        sys.exit(f"crosscheck: ecnlab child exited with {rc} on {cfg}")
    res = json.loads(out.read_text())
    out.unlink()
    res.update(wall_s=wall, maxrss_mb=rss, config=cfg)
    return res


def child(cfg_json: str, out: str) -> None:
    import ecnlab

    r = ecnlab.run(json.loads(cfg_json), progress=False)
    t = r.tables["flows"].to_pydict()
    rows = [
        [s, f, to]
        for s, f, to, k in zip(t["size"], t["fct"], t["timeouts"], t["kind"], strict=True)
        if k == "sized" and f == f  # finished (NaN is not equal to itself)
    ]
    s = r.summary
    p = r.tables["ports"].to_pydict()
    drops_at = dict.fromkeys(PLACES, 0)
    for node, peer, q, a, b in zip(
        p["node"], p["peer"], p["queue"], p["dropped_overflow"], p["dropped_aqm"], strict=True
    ):
        if q == -1:
            drops_at[drop_place(node, peer)] += a + b
    Path(out).write_text(
        json.dumps(
            {
                "flows": rows,
                "drops": s["packets_dropped"],
                "drops_at": drops_at,
                "engine_wall_s": s["wall_seconds"],
                "unfinished": s["flows_unfinished"],
            }
        )
    )


def cached(path: Path, make, *args) -> dict:
    """The point at `path`, or make(*args) written there first."""
    if path.exists():
        return json.loads(path.read_text())
    res = make(*args)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".part")
    tmp.write_text(json.dumps(res))
    tmp.replace(path)
    return res


# ---------------------------------------------------------------- statistics


def p99(xs: list[float]) -> float | None:
    xs = sorted(xs)
    return xs[99 * len(xs) // 100] if xs else None


def mean(xs: list[float]) -> float | None:
    return sum(xs) / len(xs) if xs else None


def stats(point: dict) -> dict:
    """FCT statistics (ms), timeouts, drops, wall time and memory of one run."""
    rows = point["flows"]
    small_rows = [r for r in rows if r[0] <= 100_000]
    small = [f for _, f, _ in small_rows]
    medium = [f for b, f, _ in rows if 100_000 < b <= 10_000_000]
    large = [f for b, f, _ in rows if b > 10_000_000]
    ms = lambda x: None if x is None else 1e3 * x  # noqa: E731
    drops_at = point.get("drops_at") or {}
    return {
        "overall": ms(mean([f for _, f, _ in rows])),
        "small mean": ms(mean(small)),
        "small p99": ms(p99(small)),
        "medium": ms(mean(medium)),
        "large": ms(mean(large)),
        "timeouts": sum(t for _, _, t in rows),
        "small timeouts": sum(t for _, _, t in small_rows),
        "drops": point.get("drops"),
        **{f"drops: {k}": drops_at.get(k) for k in PLACES},
        "wall s": point["wall_s"],
        "memory MB": point["maxrss_mb"],
        "flows": len(rows),
        "small n": len(small),
        "large n": len(large),
    }


# Two-sided 95% Student t quantiles by degrees of freedom.
T95 = {1: 12.71, 2: 4.30, 3: 3.18, 4: 2.78, 5: 2.57, 6: 2.45, 7: 2.36, 8: 2.31, 9: 2.26}


def ci(values: list[float]) -> tuple[float, float]:
    """Mean and 95% half-width over seeds (0 with one seed)."""
    m = sum(values) / len(values)
    if len(values) < 2:
        return m, 0.0
    sd = math.sqrt(sum((v - m) ** 2 for v in values) / (len(values) - 1))
    return m, T95.get(len(values) - 1, 1.96) * sd / math.sqrt(len(values))


METRICS = [
    "overall",
    "small mean",
    "small p99",
    "medium",
    "large",
    "timeouts",
    "small timeouts",
    "drops",
    "wall s",
    "memory MB",
]
# Drops by place get a table each, not a column of the every-metric tables.
DROP_METRICS = [f"drops: {k}" for k in PLACES]


def is_count(metric: str) -> bool:
    """Timeouts and drops, of any kind or place."""
    return metric.endswith("timeouts") or metric.startswith("drops")


def unit(metric: str) -> str:
    """The heading's unit: none for counts, wall time and memory."""
    return "" if is_count(metric) or metric in ("wall s", "memory MB") else " (ms)"


def fmt(x: float | None, metric: str) -> str:
    if x is None:
        return "n/a"
    if is_count(metric):
        return f"{x:.0f}" if x == int(x) else f"{x:.1f}"
    if metric in ("wall s", "memory MB"):
        return f"{x:.0f}" if x >= 10 else f"{x:.1f}"
    return f"{x:.3f}" if x < 10 else f"{x:.1f}"


def summarise(vals: list, metric: str, how) -> str:
    """One cell: how(vals, metric), or n/a where a run lacks the metric."""
    return "n/a" if any(x is None for x in vals) else how(vals, metric)


def mean_ci(vals: list[float], metric: str) -> str:
    """Mean ± 95% CI over seeds; the value alone for one run."""
    mu, h = ci(vals)
    return fmt(mu, metric) + (f" ± {fmt(h, metric)}" if len(vals) > 1 else "")


def span(vals: list[float], metric: str) -> str:
    """min–max (one value where they print alike)."""
    lo, hi = fmt(min(vals), metric), fmt(max(vals), metric)
    return lo if lo == hi else f"{lo}–{hi}"


def side_by_side(
    load: float, schemes: list[str], seeds: list[int], variants: list[str], have
) -> list[str]:
    """Markdown: one load, every metric in a column; ns-2 then each variant."""
    out = [f"### Load {load}: every metric", ""]
    out.append("| scheme | run | " + " | ".join(m + unit(m) for m in METRICS) + " |")
    out.append("|---|---|" + "---|" * len(METRICS))
    for scheme in schemes:
        ns = have(NS2_DIR, scheme, load, None)
        if ns:
            st = stats(ns)
            cells = " | ".join(fmt(st[m], m) for m in METRICS)
            out.append(f"| {LABELS[scheme]} | ns-2 | {cells} |")
        for v in variants:
            runs = [have(v, scheme, load, s) for s in seeds_of(v, seeds)]
            runs = [stats(r) for r in runs if r]
            if not runs:
                continue
            cells = [summarise([r[m] for r in runs], m, mean_ci) for m in METRICS]
            name = "" if ns else LABELS[scheme]
            count = "one run" if v in SEEDLESS else f"{len(runs)} seeds"
            out.append(f"| {name} | ecnlab `{v}` ({count}) | " + " | ".join(cells) + " |")
    return out + [""]


# What the perturbation table shows: the metrics where one run's luck shows.
SPREAD_METRICS = ["small mean", "small p99", "timeouts", "small timeouts", "drops", "drops: nic"]


def spread(
    points: list[tuple[float, str]],
    seeds: list[int],
    variants: list[str],
    perturbs: list[int],
    have,
) -> list[str]:
    """Markdown: for each deterministic run (ns-2, the seedless variants)
    with perturbed neighbours, the range of each metric over all of them."""
    rows = []
    for load, scheme in points:
        sims = [(NS2_DIR, None)] + [(v, seeds_of(v, seeds)[0]) for v in variants if v in SEEDLESS]
        for sim, seed in sims:
            runs = [have(sim, scheme, load, seed, k) for k in [0, *perturbs]]
            found = [stats(r) for r in runs if r]
            if len(found) < 2:
                continue
            cells = [summarise([r[m] for r in found], m, span) for m in SPREAD_METRICS]
            run = "ns-2" if sim == NS2_DIR else f"ecnlab `{sim}`"
            head = f"| {load} | {LABELS[scheme]} | {run} ({len(found)} runs) | "
            rows.append(head + " | ".join(cells) + " |")
    if not rows:
        return []
    ks = ", ".join(f"+{k}" for k in perturbs)
    return [
        "### Spread of the deterministic runs under host-delay perturbation",
        "",
        f"The unperturbed run and the same run with host links {ks} ns longer: min–max.",
        "",
        "| load | scheme | run | " + " | ".join(m + unit(m) for m in SPREAD_METRICS) + " |",
        "|---|---|---|" + "---|" * len(SPREAD_METRICS),
        *rows,
        "",
    ]


def tables(
    points: list[tuple[float, str]],
    flows: int,
    seeds: list[int],
    variants: list[str],
    have,
    perturbs: list[int] | None = None,
) -> str:
    """Markdown: a table per metric; rows = (load, scheme), ns-2 then each
    variant; then the perturbation spread, where there is one."""
    out = [
        f"Flows per point: {flows}; ecnlab seeds {seeds} (mean ± 95% CI over seeds); "
        "ns-2 one run (deterministic).",
        "",
    ]
    for load in dict.fromkeys(load for load, _ in points):
        out += side_by_side(load, list(dict.fromkeys(s for _, s in points)), seeds, variants, have)
    for metric in METRICS + DROP_METRICS:
        out += [f"### {metric}{unit(metric)}", ""]
        out.append("| load | scheme | ns-2 | " + " | ".join(f"ecnlab {v}" for v in variants) + " |")
        out.append("|---|---|---|" + "---|" * len(variants))
        for load, scheme in points:
            ns = have(NS2_DIR, scheme, load, None)
            cells = [fmt(stats(ns)[metric], metric) if ns else "—"]
            for v in variants:
                runs = [have(v, scheme, load, s) for s in seeds_of(v, seeds)]
                runs = [stats(r)[metric] for r in runs if r]
                if not runs:
                    cells.append("—")
                    continue
                partial = len(runs) != len(seeds_of(v, seeds))
                cells.append(
                    summarise(runs, metric, mean_ci) + (f" ({len(runs)} seeds)" if partial else "")
                )
            out.append(f"| {load} | {LABELS[scheme]} | " + " | ".join(cells) + " |")
        out.append("")
    out += spread(points, seeds, variants, perturbs or [], have)
    return "\n".join(out)


def parse_perturb(text: str) -> list[int]:
    """--perturb's nanoseconds; one clear error for anything else."""
    try:
        ks = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        ks = None
    if ks is None or any(k <= 0 for k in ks):
        sys.exit(
            f"crosscheck: --perturb: {text!r} is not a list of positive whole nanoseconds "
            "(e.g. 1,2,3)"
        )
    return ks


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        return child(sys.argv[2], sys.argv[3])
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--ns2-build", default=os.environ.get("NS2_BUILD", "/tmp/ns2build"), type=Path)
    ap.add_argument("--flows", type=int, default=2000)
    ap.add_argument("--loads", default="0.6,0.3,0.8")
    ap.add_argument("--schemes", default="per-queue,mq-ecn,per-queue-min")
    ap.add_argument("--seeds", default="1,2,3,4,5")
    ap.add_argument(
        "--variants",
        default="issue15,ns2,ns2-replay,ns2-replay-nic",
        help=f"ecnlab variants: {', '.join(ALL_VARIANTS)}",
    )
    ap.add_argument(
        "--no-ns2", action="store_true", help="ecnlab only (tables show cached ns-2 points)"
    )
    ap.add_argument(
        "--perturb",
        default="",
        help="host-delay perturbations in ns (e.g. 1,2,3): ns-2 and the seedless ecnlab "
        "variants run each point again with host links that much longer",
    )
    ap.add_argument("--table-only", action="store_true", help="run nothing; tables from the cache")
    ap.add_argument("--out", default=str(HERE / "results.md"))
    a = ap.parse_args()
    loads = [float(x) for x in a.loads.split(",")]
    schemes = a.schemes.split(",")
    seeds = [int(x) for x in a.seeds.split(",")]
    variants = a.variants.split(",")
    perturbs = parse_perturb(a.perturb)
    for v in variants:
        if v not in ALL_VARIANTS:
            sys.exit(
                f"crosscheck: --variants: unknown variant {v!r}; "
                f"expected one of {', '.join(ALL_VARIANTS)}"
            )
    for s in schemes:
        if s not in SCHEMES:
            sys.exit(
                f"crosscheck: --schemes: unknown scheme {s!r}; expected one of {', '.join(SCHEMES)}"
            )

    def path(sim: str, scheme: str, load: float, seed: int | None, perturb_ns: int = 0) -> Path:
        tail = f"{scheme}_load{load}_flows{a.flows}" + ("" if seed is None else f"_seed{seed}")
        return CACHE / sim / f"{tail}{perturbed(perturb_ns)}.json"

    def have(
        sim: str, scheme: str, load: float, seed: int | None, perturb_ns: int = 0
    ) -> dict | None:
        p = path(sim, scheme, load, seed, perturb_ns)
        return json.loads(p.read_text()) if p.exists() else None

    points = [(load, s) for load in loads for s in schemes]
    if not a.table_only:
        # ecnlab first (seconds per point), then ns-2 (minutes per point),
        # one process at a time; the tables are rewritten after each point.
        def done(what: str, k: int, rewrite: bool) -> None:
            print(what + (f" host delay +{k} ns" if k else "") + ": done", flush=True)
            if rewrite:
                Path(a.out).write_text(tables(points, a.flows, seeds, variants, have, perturbs))

        for load, scheme in points:
            for v in variants:
                # Every seed; the seedless variants' one run also perturbed.
                runs = [(seed, 0) for seed in seeds_of(v, seeds)]
                if v in SEEDLESS:
                    runs += [(seeds_of(v, seeds)[0], k) for k in perturbs]
                for seed, k in runs:
                    args = (scheme, load, a.flows, seed, v, k)
                    cached(path(v, scheme, load, seed, k), ecnlab_point, *args)
                    done(f"ecnlab {v} {scheme} load {load} seed {seed}", k, False)
        Path(a.out).write_text(tables(points, a.flows, seeds, variants, have, perturbs))
        if not a.no_ns2:
            for k in [0, *perturbs]:
                for load, scheme in points:
                    args = (a.ns2_build, scheme, load, a.flows, k)
                    cached(path(NS2_DIR, scheme, load, None, k), ns2_point, *args)
                    done(f"ns-2 {scheme} load {load}", k, True)
    text = tables(points, a.flows, seeds, variants, have, perturbs)
    Path(a.out).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
