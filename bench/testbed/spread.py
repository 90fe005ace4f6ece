"""The testbed's run-to-run spread, and the same experiments in the simulator
(issue 30, "How it is judged"; docs/testbed-uplinks.md has the tables).

Two sets of experiments, each defined here once as the config both tools
run:

- ``lockout``: bench/testbed/lockout.toml (host 0 sends 1 Reno flow, host 1
  four, all to host 2; 200 Mbps, 100 us links, 30-packet drop-tail buffer).
- ``spread``: a 5-host star at 200 Mbps with 100 us links, a 100-packet
  buffer, one queue; host 4 receives 1, 4 or 8 long-lived flows from
  hosts 0-3 (1 flow: host 0; 4: one from each; 8: two from each), so that
  the switch port to host 4 is the bottleneck rather than one sender's
  uplink; Reno with ECN (``ecn-star``) and CUBIC (``cubic``, ECN off in
  both tools), through drop-tail or per-queue ECN marking (K = 20
  packets); 5 s, the first second left out of goodput and queue stats.

Each run appends one row to a CSV: goodput after warm-up, Jain's index of
the flows' bytes, drops, marks, retransmissions and timeouts (counts and
per second of the run), the bottleneck port's mean and p99 queue (packets,
sampled every 100 us after warm-up), and each flow's MB.

    sudo .venv/bin/python bench/testbed/spread.py testbed lockout --csv lockout.csv
    sudo .venv/bin/python bench/testbed/spread.py testbed spread --csv spread.csv
    .venv/bin/python bench/testbed/spread.py sim spread --csv sim.csv   # seeds 1-5
    .venv/bin/python bench/testbed/spread.py summary spread.csv sim.csv  # min-max table
    .venv/bin/python bench/testbed/spread.py compare spread.csv  # issue 30's verdicts

``--transport '{"profile": "linux"}'`` runs either tool with the Linux
stack (on the testbed the kernel's own; ecnlab.testbed.kernel_stack).

``--no-uplinks`` runs the testbed as it was before it emulated the hosts'
uplinks (the "before" column of the lock-out table). Testbed runs need
root and a built ecnlab-switch (`make switch`). Not a test: prints numbers.
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
LOCKOUT = HERE / "lockout.toml"

CCS = ("ecn-star", "cubic")
SWITCHES = ("droptail", "ecn")
FLOWS = (1, 4, 8)
RECEIVER = 4

COLUMNS = [
    "tool",
    "case",
    "cc",
    "switch",
    "flows",
    "run",
    "uplinks",
    "profile",
    "duration_s",
    "goodput_mbps",
    "jain",
    "drops",
    "marks",
    "retransmits",
    "timeouts",
    "drops_per_s",
    "retransmits_per_s",
    "timeouts_per_s",
    "queue_mean_pkt",
    "queue_p99_pkt",
    "flow_mb",
    "sustained",
    "nic_drops",
    "kernel_rx_drops",
    "load_1min",
    "wall_s",
]


def spread_config(cc: str, switch: str, flows: int, seed: int) -> dict[str, Any]:
    """One spread experiment: ``flows`` long-lived flows into host 4."""
    senders = min(flows, 4)
    sw: dict[str, Any] = {"buffer": "100pkt"}
    if switch == "ecn":
        sw |= {"marking": "per-queue", "threshold": "20pkt"}
    return {
        "run": {"seed": seed, "duration": "5s", "warmup": "1s", "sample_interval": "100us"},
        "topology": {"kind": "star", "hosts": 5, "link_rate": "200Mbps", "link_delay": "100us"},
        "switch": sw,
        "transport": {"cc": cc},
        "flows": [{"src": h, "dst": RECEIVER, "count": flows // senders} for h in range(senders)],
    }


def lockout_config(seed: int) -> dict[str, Any]:
    from ecnlab.config import load_config

    cfg = load_config(LOCKOUT)
    cfg["run"]["seed"] = seed
    return cfg


def cases(which: str) -> list[tuple[dict[str, str], Any]]:
    """(labels, config builder taking a seed) for each experiment of ``which``."""
    if which == "lockout":
        return [
            ({"case": "lockout", "cc": "reno", "switch": "droptail", "flows": "5"}, lockout_config)
        ]
    out = []
    for cc in CCS:
        for switch in SWITCHES:
            for n in FLOWS:
                labels = {"case": "spread", "cc": cc, "switch": switch, "flows": str(n)}
                out.append(
                    (labels, lambda seed, cc=cc, sw=switch, n=n: spread_config(cc, sw, n, seed))
                )
    return out


def measure(result: Any, cfg: dict[str, Any]) -> dict[str, Any]:
    """The row's numbers from a result of either tool."""
    s = result.summary
    duration = float(s["sim_seconds"])
    warmup = _seconds(cfg["run"].get("warmup", "0s"))
    flows = result["flows"].to_pandas()
    mb = flows["bytes_received"].to_numpy(dtype=float) / 1e6
    jain = mb.sum() ** 2 / (len(mb) * (mb**2).sum()) if (mb > 0).any() else float("nan")
    receiver = int(cfg["flows"][0]["dst"])
    q = result["queues"].to_pandas()
    q = q[(q.port == 2 * receiver + 1) & (q.time >= warmup)]
    per_time = q.groupby("time")["packets"].sum().to_numpy(dtype=float)
    row = {
        "duration_s": duration,
        "goodput_mbps": sum(s["goodput_gbps_by_service"].values()) * 1e3,
        "jain": jain,
        "drops": int(s["packets_dropped"]),
        "marks": int(s.get("ce_marks") or 0),
        "retransmits": int(s["retransmits"]),
        "timeouts": int(s["timeouts"]),
        "queue_mean_pkt": float(per_time.mean()) if len(per_time) else float("nan"),
        "queue_p99_pkt": float(np.percentile(per_time, 99)) if len(per_time) else float("nan"),
        "flow_mb": ";".join(f"{x:.2f}" for x in mb),
        "wall_s": float(s["wall_seconds"]),
        "load_1min": os.getloadavg()[0],
    }
    for key in ("drops", "retransmits", "timeouts"):
        row[f"{key}_per_s"] = row[key] / duration
    if s.get("testbed"):
        port = max(s["switch_ports"], key=lambda p: p["tx_wire_bytes"])
        row["sustained"] = port["sustained"]
        row["kernel_rx_drops"] = s["switch"]["kernel_rx_drops"]
        nics = s.get("host_nics") or []
        row["nic_drops"] = sum(n["drops"] for n in nics) if nics else ""
    return row


def _seconds(text: str) -> float:
    from ecnlab.units import parse_time

    return parse_time(text)


def summary(paths: list[str]) -> None:
    """A markdown table of CSVs' rows, one line per tool, case and setting:
    each number as min-max over its runs (the table in the docs)."""
    import pandas as pd

    df = pd.concat([pd.read_csv(p) for p in paths])
    keys = ["tool", "uplinks", "profile", "case", "cc", "switch", "flows"]
    df["uplinks"] = df["uplinks"].fillna("")
    df["profile"] = df["profile"].fillna("")
    cols = [
        ("goodput_mbps", "{:.1f}"),
        ("jain", "{:.3f}"),
        ("drops_per_s", "{:.0f}"),
        ("retransmits_per_s", "{:.0f}"),
        ("timeouts_per_s", "{:.1f}"),
        ("queue_mean_pkt", "{:.1f}"),
        ("queue_p99_pkt", "{:.0f}"),
    ]
    print("| " + " | ".join(keys + ["runs"] + [c for c, _ in cols]) + " |")
    print("|" + "---|" * (len(keys) + 1 + len(cols)))
    for labels, g in df.groupby(keys, sort=False):
        cells = [str(x) for x in labels] + [str(len(g))]
        for c, fmt in cols:
            lo, hi = fmt.format(g[c].min()), fmt.format(g[c].max())
            cells.append(lo if lo == hi else f"{lo}–{hi}")
        print("| " + " | ".join(cells) + " |")


# Goodput ceilings at 200 Mbps: the testbed counts 1,448 payload bytes per
# 1,538 on the Ethernet wire, the simulator 1,460 per 1,500-byte packet.
CEILING_MBPS = {"testbed": 200 * 1448 / 1538, "sim": 200 * 1460 / 1500}
# Issue 30's criterion: goodput within 2% (of each tool's ceiling, see
# above), Jain within 0.02, the rest within the testbed's run-to-run range.
RANGED = [
    ("retransmits_per_s", "rtx/s", "{:.0f}"),
    ("timeouts_per_s", "timeouts/s", "{:.1f}"),
    ("queue_mean_pkt", "queue mean", "{:.1f}"),
    ("queue_p99_pkt", "queue p99", "{:.0f}"),
]


def _span(values: Any, fmt: str) -> str:
    lo, hi = fmt.format(values.min()), fmt.format(values.max())
    return lo if lo == hi else f"{lo}–{hi}"


def compare(paths: list[str]) -> None:
    """Issue 30's table: per case, the testbed's runs against the
    simulator's seeds run with the same profile, each cell "testbed /
    simulator" (min–max), and which of the criterion's parts fail."""
    import pandas as pd

    df = pd.concat([pd.read_csv(p) for p in paths])
    df = df[df["case"] == "spread"].copy()
    df["profile"] = df.get("profile", pd.Series("", index=df.index)).fillna("")
    df["util"] = df["goodput_mbps"] / df["tool"].map(CEILING_MBPS)
    # Before (the file as is) then after (the Linux stack), each in the
    # order cases() runs them.
    df["order"] = (
        df["profile"].map({"": 0}).fillna(1) * 1000
        + df["cc"].map(CCS.index) * 100
        + df["switch"].map(SWITCHES.index) * 10
        + df["flows"].map(FLOWS.index)
    )
    df = df.sort_values("order", kind="stable")
    cells = ["goodput Mbps (% of ceiling)", "Jain"] + [label for _, label, _ in RANGED]
    head = ["cc", "switch", "flows", "profile", *cells, "criterion fails on"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for (cc, switch, flows, profile), g in df.groupby(
        ["cc", "switch", "flows", "profile"], sort=False
    ):
        tb, sim = g[g.tool == "testbed"], g[g.tool == "sim"]
        if tb.empty or sim.empty:
            continue
        fails = []
        gp = [
            f"{_span(x.goodput_mbps, '{:.1f}')} ({_span(100 * x.util, '{:.1f}')})"
            for x in (tb, sim)
        ]
        if abs(sim.util.mean() - tb.util.mean()) > 0.02 * tb.util.mean():
            fails.append("goodput")
        row = [" / ".join(gp), f"{_span(tb.jain, '{:.3f}')} / {_span(sim.jain, '{:.3f}')}"]
        if abs(sim.jain.mean() - tb.jain.mean()) > 0.02:
            fails.append("Jain")
        for col, label, fmt in RANGED:
            row.append(f"{_span(tb[col], fmt)} / {_span(sim[col], fmt)}")
            if not tb[col].min() - 1e-9 <= sim[col].mean() <= tb[col].max() + 1e-9:
                fails.append(label)
        name = {"": "default", "linux": "linux"}.get(profile, profile)
        label = [cc, {"ecn": "ECN K=20", "droptail": "drop-tail"}[switch], str(flows), name]
        print("| " + " | ".join(label + row + [", ".join(fails) or "none"]) + " |")


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["summary"]:
        return summary(argv[1:])
    if argv[:1] == ["compare"]:
        return compare(argv[1:])
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("tool", choices=("testbed", "sim"))
    ap.add_argument("which", choices=("lockout", "spread"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--csv", type=Path, required=True, help="rows are appended")
    ap.add_argument("--no-uplinks", action="store_true", help="testbed: no uplink emulation")
    ap.add_argument(
        "--only", default="", help="only cases with all of these labels, e.g. cubic,ecn,8"
    )
    ap.add_argument(
        "--transport",
        default="{}",
        help="[transport] keys (JSON) over each config's in both tools, e.g. "
        '\'{"profile": "linux"}\'',
    )
    ap.add_argument(
        "--host",
        default="{}",
        help='[host] keys (JSON) over each config\'s, e.g. \'{"jitter": "60us"}\' (the '
        "testbed refuses keys it cannot apply)",
    )
    ap.add_argument(
        "--rate",
        help='topology.link_rate over each config\'s, e.g. "50Mbps", or one per host '
        '(star), comma-separated: "200Mbps,200.02Mbps,200Mbps"',
    )
    ap.add_argument("--duration", help='run.duration over each config\'s, e.g. "1s"')
    ap.add_argument("--warmup", help='run.warmup over each config\'s, e.g. "0s"')
    args = ap.parse_args(argv)
    import json

    import ecnlab

    transport = json.loads(args.transport)
    host = json.loads(args.host)

    want = {w for w in args.only.split(",") if w}
    new = not args.csv.exists()
    if not new:
        with args.csv.open(newline="") as fh:
            header = next(csv.reader(fh), [])
        if header != COLUMNS:
            sys.exit(f"{args.csv}: its columns are not this script's (a CSV of an older version?)")
    with args.csv.open("a", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=COLUMNS)
        if new:
            writer.writeheader()
        for labels, build in cases(args.which):
            if want and not want <= {labels["cc"], labels["switch"], labels["flows"]}:
                continue
            for run in range(1, args.runs + 1):
                cfg = build(run)
                cfg["transport"] = {**cfg.get("transport", {}), **transport}
                if host:
                    cfg["host"] = {**cfg.get("host", {}), **host}
                if args.rate:
                    rates = args.rate.split(",")
                    cfg["topology"]["link_rate"] = rates if len(rates) > 1 else rates[0]
                for key in ("duration", "warmup"):
                    if getattr(args, key) is not None:
                        cfg["run"][key] = getattr(args, key)
                with tempfile.TemporaryDirectory() as out:
                    if args.tool == "sim":
                        result = ecnlab.run(cfg, out=out, progress=False)
                    else:
                        from ecnlab.testbed import run_testbed

                        extra = {"uplinks": False} if args.no_uplinks else {}
                        result = run_testbed(cfg, out, **extra)
                    row = {
                        "tool": args.tool,
                        "run": run,
                        "uplinks": "" if args.tool == "sim" else not args.no_uplinks,
                        "profile": cfg["transport"].get("profile") or "",
                        **labels,
                        # The overrides that change the network name the case.
                        "case": labels["case"]
                        + (f"@{args.rate}" if args.rate else "")
                        + "".join(f"+{k}={v}" for k, v in sorted(host.items())),
                        **measure(result, cfg),
                    }
                writer.writerow(row)
                fh.flush()
                print(
                    f"{' '.join(labels.values())} run {run}: "
                    f"{row['goodput_mbps']:.1f} Mbps jain {row['jain']:.3f} drops {row['drops']} "
                    f"rtx {row['retransmits']} to {row['timeouts']} q {row['queue_mean_pkt']:.1f}/"
                    f"{row['queue_p99_pkt']:.0f} MB [{row['flow_mb']}]",
                    flush=True,
                )
                time.sleep(0.5)


if __name__ == "__main__":
    sys.exit(main())
