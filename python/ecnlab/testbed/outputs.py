"""A testbed run's files in `ecnlab run`'s formats: the flows, goodput,
queues, rtt, ports and incast tables with the engine's own columns and
types (asked of the engine, not spelled again here), and summary.json
with the keys `ecnlab fct`, the plots and `ecnlab reproduce` read."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pyarrow as pa

from ..fct import fct_stats
from ..runner import table_schemas
from ..slowdown import slowdown_stats
from .plan import TestbedPlan

__all__ = ["build_tables", "build_summary", "engine_table"]

_NAN = float("nan")


def engine_table(name: str, columns: dict[str, list[Any]]) -> pa.Table:
    """Table ``name`` from ``columns``, which must be the engine's columns
    for it, in its order; each column gets the engine's type."""
    schema = table_schemas()[name]
    if list(columns) != schema.names:
        raise ValueError(
            f"table {name!r}: columns {list(columns)} are not the engine's {schema.names}"
        )
    return pa.Table.from_arrays(
        [pa.array(columns[f.name], type=f.type) for f in schema], schema=schema
    )


def _bytes_at(record: dict[str, Any], times: np.ndarray) -> np.ndarray:
    """A flow's payload received in order by each of ``times`` (seconds
    from the start), interpolated between its samples; 0 before the first."""
    samples = record.get("samples") or []
    if not samples:
        return np.zeros(len(times))
    t, b = np.array(samples, dtype=float).T
    return np.interp(times, t, b, left=0.0)


def _gathered(agents: list[dict[str, Any]], key: str) -> dict[int, dict[str, Any]]:
    return {int(k): v for a in agents for k, v in a[key].items()}


def incast_rounds(plan: TestbedPlan, agents: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every completed round of every group, in the order they finished
    (the engine writes them as they complete): group, round, start,
    finish and goodput (all the round's blocks over its time, Gbps)."""
    done = {int(g): r for a in agents for g, r in a.get("incast", {}).items()}
    rows = []
    for g in plan.incasts:
        bits = g["block"] * len(g["senders"]) * 8
        for r, start, finish in done.get(g["group"], []):
            rows.append(
                {
                    "group": g["group"],
                    "round": r,
                    "start": start,
                    "finish": finish,
                    "goodput_gbps": bits / max(finish - start, 1e-12) / 1e9,
                }
            )
    rows.sort(key=lambda row: (row["finish"], row["group"]))
    return rows


def build_tables(
    plan: TestbedPlan,
    agents: list[dict[str, Any]],
    switch: dict[str, Any],
    t0: float,
    ideal: list[float] | None = None,
) -> dict[str, pa.Table]:
    """Every table of the run; ``t0`` is the run's start on CLOCK_MONOTONIC,
    where the agents' times begin. ``ideal``: per flow id, the simulator's
    ideal FCT for the same config (:func:`ecnlab.runner.ideal_fcts`), the
    denominator of ``slowdown``; NaN for every flow without it."""
    sent = _gathered(agents, "sent")
    received = _gathered(agents, "received")
    rounds = incast_rounds(plan, agents)
    # An incast flow ends with its group's last round, as in the simulator;
    # unfinished (NaN) while any round is missing.
    incast_end: dict[int, float] = {}
    for g in plan.incasts:
        mine = [r for r in rounds if r["group"] == g["group"]]
        if len(mine) == g["rounds"]:
            incast_end.update({fid: max(r["finish"] for r in mine) for fid in g["ids"]})
    rows = plan.flow_rows()
    cols: dict[str, list[Any]] = {name: [] for name in table_schemas()["flows"].names}
    for f in rows:
        s = sent.get(f["id"], {})
        r = received.get(f["id"], {})
        start = s.get("start")
        if f["kind"] == "incast":
            finish = incast_end.get(f["id"])
        else:
            # run.fct_end: the receiving agent's time once it has every
            # byte, or the sender's once it has the receiver's answer.
            finish = (r if plan.fct_end == "receiver" else s).get("finish")
        for key in ("id", "src", "dst", "service", "size", "kind"):
            cols[key].append(f[key])
        cols["start"].append(_NAN if start is None else start)
        cols["finish"].append(_NAN if finish is None else finish)
        fct = _NAN if finish is None or start is None else finish - start
        best = ideal[f["id"]] if ideal is not None and f["id"] < len(ideal) else _NAN
        cols["fct"].append(fct)
        # The simulator's lone flow on the same path: the kernel's TCP is not
        # the simulator's, so a lone testbed flow's slowdown is near 1, not 1.
        cols["ideal_fct"].append(best)
        cols["slowdown"].append(fct / best if best > 0 else _NAN)
        cols["bytes_received"].append(int(r.get("bytes", 0)))
        # The sender's kernel counts (tcpi_total_rto, tcpi_total_retrans).
        cols["timeouts"].append(int(s.get("timeouts", 0)))
        cols["retransmits"].append(int(s.get("retransmits", 0)))
        # Marks, drops, reordering and spurious retransmissions per flow are
        # not observable from the kernel's counters this reads: zero here
        # (the ports table counts marks and drops).
        for key in ("spurious_retransmits", "ce_marks", "drops", "reordered"):
            cols[key].append(0)
    flows = engine_table("flows", cols)
    # Goodput: bins of goodput_interval, per active service, stamped with
    # the bin's end as the engine stamps them; each flow's in-order bytes
    # at a bin edge are interpolated between the receiver's samples.
    service_of = {f["id"]: f["service"] for f in rows}
    services = sorted(set(service_of.values()))
    bins = max(1, math.ceil(plan.duration / plan.goodput_interval - 1e-9))
    edges = np.minimum(np.arange(bins + 1) * plan.goodput_interval, plan.duration)
    per = np.zeros((len(services), bins))
    for fid, r in received.items():
        per[services.index(service_of[fid])] += np.diff(_bytes_at(r, edges))
    g_time, g_svc, g_gbps = [], [], []
    for k in range(bins):
        width = edges[k + 1] - edges[k]
        for i, s in enumerate(services):
            g_time.append(float(edges[k + 1]))
            g_svc.append(s)
            g_gbps.append(per[i, k] * 8 / width / 1e9 if width > 0 else 0.0)
    goodput = engine_table("goodput", {"time": g_time, "service": g_svc, "gbps": g_gbps})
    rtt_rows = sorted(row for a in agents for row in a["rtt"] if row[0] >= plan.warmup)
    rtt = engine_table(
        "rtt",
        {
            name: [r[i] for r in rtt_rows]
            for i, name in enumerate(("time", "src", "dst", "service", "rtt"))
        },
    )
    port_rows = switch["port_rows"]
    ports = engine_table(
        "ports", {name: [r[name] for r in port_rows] for name in table_schemas()["ports"].names}
    )
    queues = engine_table("queues", _queue_samples(switch, t0, plan.duration))
    incast = engine_table(
        "incast",
        {name: [r[name] for r in rounds] for name in ("round", "start", "finish", "goodput_gbps")},
    )
    return {
        "flows": flows,
        "goodput": goodput,
        "queues": queues,
        "rtt": rtt,
        "ports": ports,
        "incast": incast,
    }


def _queue_samples(switch: dict[str, Any], t0: float, duration: float) -> dict[str, list[Any]]:
    """The switch's queue samples on the run's time axis (the switch counts
    from its own start, before the agents'), from 0 to the run's end, as
    the simulator writes them."""
    q = switch["queues"]
    shift = switch["summary"]["start_monotonic"] - t0
    times = np.asarray(q["time"], dtype=float) + shift
    keep = (times >= 0) & (times <= duration)
    columns = {name: np.asarray(q[name])[keep].tolist() for name in table_schemas()["queues"].names}
    columns["time"] = times[keep].tolist()
    return columns


def build_summary(
    plan: TestbedPlan,
    tables: dict[str, pa.Table],
    agents: list[dict[str, Any]],
    switch: dict[str, Any],
    wall_seconds: float,
    run_id: str,
    nics: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    received = _gathered(agents, "received")
    span = max(plan.duration - plan.warmup, 1e-9)
    by_service: dict[str, float] = {}
    for f in plan.flow_rows():
        r = received.get(f["id"], {})
        at = _bytes_at(r, np.array([plan.warmup, plan.duration]))
        after = float(at[1] - at[0])
        key = str(f["service"])
        by_service[key] = by_service.get(key, 0.0) + after * 8 / span / 1e9
    sw = switch["summary"]
    sent = _gathered(agents, "sent")
    rtts = tables["rtt"].column("rtt").to_numpy()
    flows = tables["flows"]
    round_gbps = tables["incast"].column("goodput_gbps").to_numpy()
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
        # The engine's incast keys: the mean of the rounds' goodputs, and
        # how many rounds completed.
        "incast_goodput_gbps": float(round_gbps.mean()) if len(round_gbps) else None,
        "incast_rounds_completed": len(round_gbps),
        "timeouts": int(sum(flows.column("timeouts").to_pylist())),
        "retransmits": int(sum(int(s.get("retransmits", 0)) for s in sent.values())),
        "flows_completed": int(np.isfinite(flows.column("finish").to_numpy()).sum()),
        "flows_ecn_negotiated": int(sum(1 for s in sent.values() if s.get("ecn"))),
        "rtt_mean": float(rtts.mean()) if len(rtts) else None,
        "switch": sw,
        "switch_ports": switch["ports"],
        # Each host's uplink (uplink.py): the tbf's frames, bytes, drops and
        # waits for tokens; [] where the uplinks were not emulated.
        "uplinks": plan.uplinks,
        "host_nics": nics or [],
        "agent_errors": [e for a in agents for e in a["errors"]],
    }
    sized = [f for f in plan.flows if f["size"] >= 0]
    summary["fct"] = fct_stats(flows) if sized else None
    summary["slowdown"] = slowdown_stats(flows) if sized else None
    return summary
