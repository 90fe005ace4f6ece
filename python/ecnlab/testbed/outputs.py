"""A testbed run's files in `ecnlab run`'s formats: flows, goodput, queues,
rtt and ports tables with the engine's column types, and summary.json with
the keys `ecnlab fct` and the plots read."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pyarrow as pa

from ..fct import fct_stats
from .plan import TestbedPlan

__all__ = ["build_tables", "build_summary"]

_NAN = float("nan")


def _bytes_at(record: dict[str, Any], times: np.ndarray) -> np.ndarray:
    """A flow's payload received in order by each of ``times`` (seconds
    from the start), interpolated between its samples; 0 before the first."""
    samples = record.get("samples") or []
    if not samples:
        return np.zeros(len(times))
    t, b = np.array(samples, dtype=float).T
    return np.interp(times, t, b, left=0.0)


def _table(columns: dict[str, tuple[pa.DataType, list[Any]]]) -> pa.Table:
    return pa.Table.from_arrays(
        [pa.array(values, type=t) for t, values in columns.values()], names=list(columns)
    )


def build_tables(
    plan: TestbedPlan, agents: list[dict[str, Any]], switch: dict[str, Any]
) -> dict[str, pa.Table]:
    sent: dict[int, dict[str, Any]] = {}
    received: dict[int, dict[str, Any]] = {}
    for a in agents:
        sent.update({int(k): v for k, v in a["sent"].items()})
        received.update({int(k): v for k, v in a["received"].items()})
    cols: dict[str, list[Any]] = {
        k: []
        for k in (
            "id",
            "src",
            "dst",
            "service",
            "size",
            "start",
            "finish",
            "fct",
            "bytes_received",
            "retransmits",
        )
    }
    for f in plan.flows:
        s = sent.get(f["id"], {})
        r = received.get(f["id"], {})
        start = s.get("start")
        finish = s.get("finish")
        cols["id"].append(f["id"])
        cols["src"].append(f["src"])
        cols["dst"].append(f["dst"])
        cols["service"].append(f["service"])
        cols["size"].append(f["size"])
        cols["start"].append(_NAN if start is None else start)
        cols["finish"].append(_NAN if finish is None else finish)
        cols["fct"].append(_NAN if finish is None or start is None else finish - start)
        cols["bytes_received"].append(int(r.get("bytes", 0)))
        cols["retransmits"].append(int(s.get("retransmits", 0)))
    n = len(plan.flows)
    # Per-flow marks, drops, timeouts and reordering are not observable from
    # the kernel per flow: zero here (the ports table counts marks and drops).
    flows = _table(
        {
            "id": (pa.uint32(), cols["id"]),
            "src": (pa.uint32(), cols["src"]),
            "dst": (pa.uint32(), cols["dst"]),
            "service": (pa.uint32(), cols["service"]),
            "size": (pa.int64(), cols["size"]),
            "start": (pa.float64(), cols["start"]),
            "finish": (pa.float64(), cols["finish"]),
            "fct": (pa.float64(), cols["fct"]),
            "bytes_received": (pa.uint64(), cols["bytes_received"]),
            "timeouts": (pa.uint32(), [0] * n),
            "retransmits": (pa.uint32(), cols["retransmits"]),
            "ce_marks": (pa.uint32(), [0] * n),
            "drops": (pa.uint32(), [0] * n),
            "reordered": (pa.uint32(), [0] * n),
            "kind": (pa.string(), ["long" if f["size"] < 0 else "sized" for f in plan.flows]),
        }
    )
    # Goodput: bins of goodput_interval, per active service, stamped with
    # the bin's end as the engine stamps them; each flow's in-order bytes
    # at a bin edge are interpolated between the receiver's samples.
    services = sorted({f["service"] for f in plan.flows})
    bins = max(1, math.ceil(plan.duration / plan.goodput_interval - 1e-9))
    edges = np.minimum(np.arange(bins + 1) * plan.goodput_interval, plan.duration)
    per = np.zeros((len(services), bins))
    for fid, r in received.items():
        svc = services.index(plan.flows[fid]["service"])
        per[svc] += np.diff(_bytes_at(r, edges))
    g_time, g_svc, g_gbps = [], [], []
    for k in range(bins):
        width = edges[k + 1] - edges[k]
        for i, s in enumerate(services):
            g_time.append(float(edges[k + 1]))
            g_svc.append(s)
            g_gbps.append(per[i, k] * 8 / width / 1e9 if width > 0 else 0.0)
    goodput = _table(
        {
            "time": (pa.float64(), g_time),
            "service": (pa.uint32(), g_svc),
            "gbps": (pa.float64(), g_gbps),
        }
    )
    rtt_rows = sorted(row for a in agents for row in a["rtt"] if row[0] >= plan.warmup)
    rtt = _table(
        {
            "time": (pa.float64(), [r[0] for r in rtt_rows]),
            "src": (pa.uint32(), [r[1] for r in rtt_rows]),
            "dst": (pa.uint32(), [r[2] for r in rtt_rows]),
            "service": (pa.uint32(), [r[3] for r in rtt_rows]),
            "rtt": (pa.float64(), [r[4] for r in rtt_rows]),
        }
    )
    rows = switch["port_rows"]
    ports = _table(
        {
            "port": (pa.uint32(), [r["port"] for r in rows]),
            "node": (pa.string(), [r["node"] for r in rows]),
            "peer": (pa.string(), [r["peer"] for r in rows]),
            "queue": (pa.int64(), [r["queue"] for r in rows]),
            **{
                k: (pa.uint64(), [r[k] for r in rows])
                for k in (
                    "enqueued",
                    "marked",
                    "unmarked",
                    "dropped_overflow",
                    "dropped_aqm",
                    "max_bytes",
                    "sent_packets",
                    "sent_bytes",
                )
            },
        }
    )
    q = switch["queues"]
    queues = _table(
        {
            "time": (pa.float64(), q["time"]),
            "port": (pa.uint32(), q["port"]),
            "queue": (pa.uint32(), q["queue"]),
            "bytes": (pa.uint64(), q["bytes"]),
            "packets": (pa.uint32(), q["packets"]),
        }
    )
    return {"flows": flows, "goodput": goodput, "queues": queues, "rtt": rtt, "ports": ports}


def build_summary(
    plan: TestbedPlan,
    tables: dict[str, pa.Table],
    agents: list[dict[str, Any]],
    switch: dict[str, Any],
    wall_seconds: float,
    run_id: str,
) -> dict[str, Any]:
    received = {int(k): v for a in agents for k, v in a["received"].items()}
    span = max(plan.duration - plan.warmup, 1e-9)
    by_service: dict[str, float] = {}
    for f in plan.flows:
        r = received.get(f["id"], {})
        at = _bytes_at(r, np.array([plan.warmup, plan.duration]))
        after = float(at[1] - at[0])
        key = str(f["service"])
        by_service[key] = by_service.get(key, 0.0) + after * 8 / span / 1e9
    sw = switch["summary"]
    sent = {int(k): v for a in agents for k, v in a["sent"].items()}
    rtts = tables["rtt"].column("rtt").to_numpy()
    summary: dict[str, Any] = {
        "testbed": True,
        "run_id": run_id,
        "wall_seconds": wall_seconds,
        "sim_seconds": plan.duration,
        "ended_by": "duration",
        "kernel_cc": plan.kernel_cc,
        "rate_bps": plan.rate_bps,
        "goodput_gbps_by_service": dict(sorted(by_service.items(), key=lambda kv: int(kv[0]))),
        "packets_dropped": sw["dropped_overflow"] + sw["dropped_aqm"],
        "drop_rate": (sw["dropped_overflow"] + sw["dropped_aqm"]) / max(1, sw["frames_in"]),
        "ce_marks": int(sum(r["marked"] for r in switch["port_rows"] if r["queue"] == -1)),
        "retransmits": int(sum(int(s.get("retransmits", 0)) for s in sent.values())),
        "flows_completed": int(sum(1 for s in sent.values() if s.get("finish") is not None)),
        "flows_ecn_negotiated": int(sum(1 for s in sent.values() if s.get("ecn"))),
        "rtt_mean": float(rtts.mean()) if len(rtts) else None,
        "switch": sw,
        "switch_ports": switch["ports"],
        "agent_errors": [e for a in agents for e in a["errors"]],
    }
    sized = [f for f in plan.flows if f["size"] >= 0]
    if sized:
        summary["fct"] = fct_stats(tables["flows"])
    return summary
