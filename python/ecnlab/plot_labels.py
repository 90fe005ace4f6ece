"""Axis labels for ``ecnlab plot``: a store's keys named from the engine's
key declarations (``ecnlab keys``: the first clause of a key's doc, with
the unit its values carry), and its index columns (``fct_small_p99``,
``slowdown_overall_mean``, ``goodput_gbps_s0``, ...) spelled out as a
paper's axis would name them.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from typing import Any

__all__ = ["key_label", "metric_label", "unit_label"]

_CLASSES = {
    "overall": "all flows'",
    "small": "small flows'",
    "medium": "medium flows'",
    "large": "large flows'",
    "one_packet": "1-packet flows'",
}
_STATS = {
    "mean": "mean",
    "p50": "median",
    "p99": "99th-percentile",
    "p999": "99.9th-percentile",
}
_UNITS = {"pkt": "packets", "B": "bytes", "us": "µs"}
_LONGEST = 48
"""A doc's head longer than this is not a label: the key's own name is."""
_KEYS = {
    # Where a doc's head does not name the key as an axis would.
    "workload.load": "load (mean utilisation of each host link)",
    "incast.senders": "incast senders",
    "switch.marking": "marking scheme",
    "switch.qdisc": "queue discipline",
    "run.seed": "seed",
}

_SUMMARY = {
    "drop_rate": "drop rate (packets dropped / sent)",
    "ce_marks": "CE-marked packets",
    "packets_dropped": "packets dropped",
    "packets_delivered": "packets delivered",
    "packets_sent": "packets sent",
    "retransmits": "retransmissions",
    "spurious_retransmits": "spurious retransmissions",
    "timeouts": "retransmission timeouts",
    "incast_goodput_gbps": "incast goodput, mean over rounds",
    "flows_unfinished": "unfinished flows",
    "flows_completed": "completed flows",
    "sim_seconds": "simulated time",
    "wall_seconds": "wall-clock time a run",
    "events": "events",
    "events_per_second": "events per second",
    "fct_mean_tput": "mean throughput (mean size / mean FCT)",
    "fct_timeouts": "timeouts of sized flows",
    "fct_unfinished": "unfinished sized flows",
    "fct_flows": "sized flows",
}


def metric_label(name: str) -> str:
    """A store index column as an axis label, without its unit
    (``fct_small_p99`` → "small flows' 99th-percentile FCT"); an unknown
    column comes back as it is, underscores as spaces."""
    if name in _SUMMARY:
        return _SUMMARY[name]
    service = re.fullmatch(r"goodput_gbps_s(\d+)", name)
    if service:
        return f"goodput of service {service.group(1)}"
    for prefix, what in (("fct_", "FCT"), ("slowdown_", "slowdown")):
        if not name.startswith(prefix):
            continue
        rest = name[len(prefix) :]
        for cls, whose in _CLASSES.items():
            if not rest.startswith(cls + "_"):
                continue
            stat = rest[len(cls) + 1 :]
            if stat in _STATS:
                return f"{whose} {_STATS[stat]} {what}"
            if stat == "tput":
                return f"{whose} throughput (mean of size / FCT)"
            if stat == "marks":
                return f"CE marks on {whose[:-1]}"
            if stat == "flows":
                return f"{whose[:-1]} count"
    return name.replace("_", " ")


@functools.cache
def _docs() -> dict[tuple[str, str], str]:
    from .keys import catalog

    out: dict[tuple[str, str], str] = {}
    for group in catalog():
        for p in group["params"]:
            out.setdefault((str(group["section"]), str(p["key"])), str(p["doc"]))
    return out


def _first_clause(doc: str) -> str:
    """The doc's head: up to its first ':', ';', ',', ' (' or '.'; a
    leading article dropped."""
    head = re.split(r"[:;,.]| \(", doc, maxsplit=1)[0].strip()
    head = re.sub(r"^(The|A|An) ", "", head)
    return head[:1].lower() + head[1:] if head[1:2].islower() else head


def unit_label(unit: str) -> str:
    """A unit as an axis shows it (``pkt`` → "packets", ``us`` → "µs")."""
    return _UNITS.get(unit, unit)


def key_label(key: str, values: Sequence[Any] = ()) -> str:
    """A store key (``workload.load``, ``switch.threshold``, ``case``) as an
    axis or legend label: its declaration's doc, shortened, and the unit its
    ``values`` carry (``["5pkt", "40pkt"]``: packets); the key itself when
    the engine does not declare it."""
    from .plots import amounts

    if key == "case":
        return "case"
    parts = [p for p in key.split(".") if not p.isdigit()]
    doc = _docs().get((parts[0], parts[-1])) if len(parts) >= 2 else None
    label = _KEYS.get(".".join(parts)) or (_first_clause(doc) if doc else key)
    if len(label) > _LONGEST:
        label = parts[-1].replace("_", " ")
    found = amounts(list(values)) if values else None
    if found and found[1]:
        label += f" ({unit_label(found[1])})"
    return label
