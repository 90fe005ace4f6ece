"""How many flows a stable p99 FCT needs on the MQ-ECN leaf-spine (a measurement, not a test).

Runs MQ-ECN's §5.2 fabric (the ``mqecn`` preset: 144 hosts, 12 leaves,
12 spines, 10 Gbps, 85.2 us RTT; 8 DWRR queues, MQ-ECN, DCTCP,
K = 65 packets, 300 KB a port; the same set-up as
``bench/mqecn_leafspine.toml``) with web-search flow sizes at load 0.5, for
each flow count and several seeds, and prints, per flow count, how far the
p99 FCT (small flows, and all flows) moves from seed to seed next to the
width of each run's bootstrap interval (``ecnlab.fct.fct_estimates``).

    .venv/bin/python bench/p99_flows.py                     # the docs' table (~6 min, 1 core)
    .venv/bin/python bench/p99_flows.py --flows 500 2000 --seeds 3   # a quick look

Each run's flows (size, fct) are kept in ``--cache`` (default
``results/p99-flows``), so a second call only prints; ``--markdown`` prints
the table as docs/statistics.md has it.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

import ecnlab
from ecnlab.fct import fct_estimates
from ecnlab.quantiles import bootstrap_quantile

FLOWS = (500, 1000, 2000, 5000, 10000, 20000)
LOAD = 0.5

# bench/mqecn_leafspine.toml at load 0.5, written out so that this table
# does not move when the bench point does.
CONFIG: dict[str, Any] = {
    "run": {"seed": 1, "duration": "60s", "sample_ports": "none"},
    "topology": {"preset": "mqecn"},
    "switch": {
        "buffer": "300KB",
        "queues": 8,
        "scheduler": "dwrr",
        "quantum": "1500B",
        "marking": "mq-ecn",
        "threshold": "65pkt",
    },
    "transport": {"cc": "dctcp", "init_cwnd": 16, "min_rto": "5ms"},
    "workload": {
        "kind": "poisson",
        "load": LOAD,
        "flows": 1000,
        "services": 8,
        "service_mapping": "by-pair",
        "distribution": "web_search",
    },
}

STATS = (("small", "p99"), ("all", "p99"), ("small", "p99.9"))


def run_one(flows: int, seed: int, cache: Path) -> Path:
    """Run one point (unless cached) and keep its sized flows' size and FCT."""
    path = cache / f"flows{flows}-seed{seed}.parquet"
    if path.exists():
        return path
    overrides = [f"workload.flows={flows}", f"run.seed={seed}"]
    started = time.perf_counter()
    result = ecnlab.run(CONFIG, overrides=overrides, progress=False)
    wall = time.perf_counter() - started
    table = result["flows"].select(["size", "fct", "kind"])
    meta = {b"wall_seconds": str(wall).encode(), b"events": str(result.summary["events"]).encode()}
    table = table.replace_schema_metadata(meta)
    tmp = path.with_suffix(".tmp")
    pq.write_table(table, tmp)
    tmp.rename(path)
    return path


def point_stats(path: Path, resamples: int) -> dict[str, Any]:
    table = pq.read_table(path)
    wall = float((table.schema.metadata or {}).get(b"wall_seconds", b"nan"))
    rows = {
        (e.size_class, e.stat): e
        for e in fct_estimates(table, resamples=resamples)
        if e.metric == "fct"
    }
    out: dict[str, Any] = {"wall": wall}
    for cls, stat in STATS:
        e = rows[(cls, stat)]
        out[f"{cls} {stat}"] = {
            "value": e.value,
            "ci": (e.ci_low, e.ci_high),
            "flows": e.flows,
            "above": e.above,
        }
    return out


def summarise(points: dict[int, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Per flow count and statistic: seed-to-seed spread and interval width."""
    rows = []
    for flows in sorted(points):
        runs = points[flows]
        for cls, stat in STATS:
            name = f"{cls} {stat}"
            values = np.array([r[name]["value"] for r in runs])
            widths = np.array(
                [(r[name]["ci"][1] - r[name]["ci"][0]) / r[name]["value"] for r in runs]
            )
            mean = float(values.mean())
            rows.append(
                {
                    "flows": flows,
                    "stat": name,
                    "seeds": len(runs),
                    "class_flows": float(np.mean([r[name]["flows"] for r in runs])),
                    "above": float(np.mean([r[name]["above"] for r in runs])),
                    "mean_s": mean,
                    "cv": float(values.std(ddof=1) / mean) if len(runs) > 1 else math.nan,
                    "range": float((values.max() - values.min()) / mean),
                    "ci_width": float(np.median(widths)),
                    "wall": float(np.mean([r["wall"] for r in runs])),
                }
            )
    return rows


def _print(head: list[str], body: list[list[str]], markdown: bool) -> None:
    if markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for cells in body:
            print("| " + " | ".join(cells) + " |")
        return
    widths = [max(len(c[i]) for c in [head, *body]) for i in range(len(head))]
    for cells in [head, *body]:
        print("  ".join(c.rjust(w) for c, w in zip(cells, widths)))


def print_table(rows: list[dict[str, Any]], markdown: bool) -> None:
    head = [
        "flows",
        "statistic",
        "flows in class",
        "above it",
        "mean over seeds",
        "seed CV",
        "seed range",
        "median CI width",
    ]
    body = [
        [
            f"{r['flows']:,}",
            r["stat"],
            f"{r['class_flows']:,.0f}",
            f"{r['above']:.1f}",
            f"{r['mean_s'] * 1e3:.3f} ms",
            f"{r['cv'] * 100:.1f}%",
            f"{r['range'] * 100:.0f}%",
            f"{r['ci_width'] * 100:.0f}%",
        ]
        for r in rows
    ]
    _print(head, body, markdown)


def decompose(cache: Path, counts: list[int], seeds: int, markdown: bool) -> None:
    """Split the small-flow p99's movement into warm-up bias and sampling noise,
    from the runs with the most flows: the first N flows of each (a run of N
    flows sees the same arrivals, so its small flows fare alike) against N
    flows drawn at random from after the first 2,000 (steady state: noise only)."""
    biggest = max(counts)
    runs = [pq.read_table(cache / f"flows{biggest}-seed{s}.parquet") for s in range(1, seeds + 1)]

    def small_p99(table: pa.Table, small: bool = True) -> float:
        size = table.column("size").to_numpy()
        fct = table.column("fct").to_numpy(zero_copy_only=False)
        keep = (size > 0) & ((size <= 100_000) | (not small)) & ~np.isnan(fct)
        return float(np.quantile(fct[keep], 0.99))

    rng = np.random.default_rng(0)
    head = [
        "flows",
        f"first N of the {biggest:,}-flow runs",
        "CV",
        "N at random after 2,000",
        "CV",
        "all flows' p99, first N",
    ]
    body = []
    for n in sorted(c for c in counts if c <= biggest):
        first = np.array([small_p99(t.slice(0, n)) for t in runs])
        every = np.mean([small_p99(t.slice(0, n), small=False) for t in runs])
        if n > runs[0].num_rows - 2000:
            cv = f"{first.std(ddof=1) / first.mean() * 100:.1f}%"
            body.append([f"{n:,}", f"{first.mean() * 1e3:.3f} ms", cv, "-", "-"])
            body[-1].append(f"{every * 1e3:.1f} ms")
            continue
        drawn = []
        for t in runs:
            steady = t.slice(2000)
            for _ in range(3):
                pick = np.sort(
                    rng.choice(steady.num_rows, size=min(n, steady.num_rows), replace=False)
                )
                drawn.append(small_p99(steady.take(pick)))
        sample = np.array(drawn)
        body.append(
            [
                f"{n:,}",
                f"{first.mean() * 1e3:.3f} ms",
                f"{first.std(ddof=1) / first.mean() * 100:.1f}%",
                f"{sample.mean() * 1e3:.3f} ms",
                f"{sample.std(ddof=1) / sample.mean() * 100:.1f}%",
                f"{every * 1e3:.1f} ms",
            ]
        )
    print(f"\nsmall-flow p99: warm-up against sampling noise ({seeds} seeds; 3 draws each)")
    _print(head, body, markdown)


def coverage(markdown: bool, samples: int = 400) -> None:
    """How often the 95% interval covers the true p99 of an exponential sample,
    by how many values lie above it (n = 100 · above; seeds 0 .. samples-1)."""
    truth = np.log(100.0)
    body = []
    for above in (1, 3, 5, 10, 30, 100):
        n = 100 * above
        hits = 0
        for seed in range(samples):
            rng = np.random.default_rng(seed)
            low, high = bootstrap_quantile(rng.exponential(size=n), 0.99, rng)
            hits += low <= truth <= high
        body.append([f"{above}", f"{n:,}", f"{hits / samples * 100:.1f}%"])
    print(f"\n95% bootstrap interval of p99, exponential samples: coverage over {samples} seeds")
    _print(["flows above p99", "n", "coverage"], body, markdown)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--flows", type=int, nargs="+", default=list(FLOWS))
    parser.add_argument("--seeds", type=int, default=10, help="seeds 1..N per flow count")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--resamples", type=int, default=2000)
    parser.add_argument("--cache", type=Path, default=Path("results/p99-flows"))
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--json", type=Path, help="also write the summary rows here")
    parser.add_argument(
        "--no-extra", action="store_true", help="skip the warm-up and coverage tables"
    )
    args = parser.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)
    jobs = [(n, s) for n in args.flows for s in range(1, args.seeds + 1)]
    started = time.perf_counter()
    with ProcessPoolExecutor(max_workers=args.workers) as pool:
        paths = list(pool.map(run_one, *zip(*jobs), [args.cache] * len(jobs)))
    points: dict[int, list[dict[str, Any]]] = {}
    for (n, _), path in zip(jobs, paths):
        points.setdefault(n, []).append(point_stats(path, args.resamples))
    rows = summarise(points)
    print_table(rows, args.markdown)
    run_wall = sum(r["wall"] for runs in points.values() for r in runs)
    print(
        f"\n{len(jobs)} runs, {run_wall:.0f} s of run wall time "
        f"({time.perf_counter() - started:.0f} s this call)"
    )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2), encoding="utf-8")
    if not args.no_extra:
        decompose(args.cache, args.flows, args.seeds, args.markdown)
        coverage(args.markdown)


if __name__ == "__main__":
    main()
