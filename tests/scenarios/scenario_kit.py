"""Shared helpers for scenario tests: config builders, the conservation and
determinism checks every scenario makes, and queue statistics."""

from __future__ import annotations

import copy
import json
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

import ecnlab

# Summary keys that measure the host machine, not the simulation.
WALL_CLOCK_KEYS = {"wall_seconds", "events_per_second"}

PKT = 1500  # bytes on the wire per full segment: 1460 payload + 40 header (ns-2)
PAYLOAD_FRACTION = 1460 / 1500


def star(
    hosts: int = 3,
    rate: str = "10Gbps",
    delay: str = "25us",
    duration: str = "0.3s",
    warmup: str = "0.1s",
    switch: dict[str, Any] | None = None,
    transport: dict[str, Any] | None = None,
    flows: list[dict[str, Any]] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    cfg: dict[str, Any] = {
        "run": {"seed": 1, "duration": duration, "warmup": warmup, "sample_interval": "20us"},
        "topology": {"kind": "star", "hosts": hosts, "link_rate": rate, "link_delay": delay},
        "switch": {"buffer": "300KB", **(switch or {})},
        "transport": {"cc": "dctcp", "init_cwnd": 10, "min_rto": "5ms", **(transport or {})},
        "flows": flows or [],
    }
    cfg.update(extra)
    return cfg


def cedm_two_flows(
    cc: str, switch: dict[str, Any], host: dict[str, Any], offset: str
) -> dict[str, Any]:
    """CEDM Figs. 4 and 10's set-up (CEDM §II-C 3, §V): two long flows into
    host 2 of a 3-host 10 Gbps star with 100 us of base RTT, the second
    `offset` after the first, behind a 1000-packet buffer that never
    overflows (the paper's losses are all underflows); 0.3 s, goodput after
    0.1 s, no periodic queue samples."""
    cfg = star(
        duration="0.3s",
        warmup="0.1s",
        switch={"buffer": "1000pkt", **switch},
        transport={"cc": cc},
        flows=[{"src": 0, "dst": 2}, {"src": 1, "dst": 2, "start": offset}],
        host=host,
    )
    cfg["run"]["sample_ports"] = "none"
    return cfg


def mqecn_point(marking: str, load: float, flows: int, seed: int = 1) -> dict[str, Any]:
    """A point of MQ-ECN §5.2's large-scale runs: the mqecn preset, 8 DWRR
    queues, 300 KB per port (a byte limit, as the authors' ns-2 DWRR queue
    counts), DCTCP with K = 65 packets, IW 16, RTOmin 5 ms,
    web search on all 8 services with host pairs spread evenly over them."""
    return {
        "run": {"seed": seed, "duration": "2s", "sample_ports": "none"},
        "topology": {"preset": "mqecn"},
        "switch": {
            "buffer": "300KB",
            "queues": 8,
            "scheduler": "dwrr",
            "marking": marking,
            "threshold": "65pkt",
        },
        "transport": {"cc": "dctcp", "init_cwnd": 16, "min_rto": "5ms"},
        "workload": {
            "kind": "poisson",
            "load": load,
            "flows": flows,
            "services": 8,
            "distribution": "web_search",
        },
    }


def output_files(d: Path) -> dict[str, bytes]:
    """Every file a run wrote (captures under pcap/ too), by relative path."""
    out = {}
    for p in sorted(f for f in d.rglob("*") if f.is_file()):
        data = p.read_bytes()
        if p.name == "summary.json":
            s = json.loads(data)
            for k in WALL_CLOCK_KEYS:
                s.pop(k, None)
            data = json.dumps(s, sort_keys=True).encode()
        out[str(p.relative_to(d))] = data
    return out


def exact(cfg: dict[str, Any]) -> dict[str, Any]:
    """`cfg` as an exact replay: the hosts' timing jitter (`host.jitter`,
    on by default) off, for tests that check packet timing to the
    picosecond against hand arithmetic, or two runs' decisions one by one."""
    cfg.setdefault("host", {})["jitter"] = "0us"
    return cfg


def run_checked(cfg: dict[str, Any]) -> ecnlab.Result:
    """Run twice; assert byte-identical outputs and packet conservation."""
    with tempfile.TemporaryDirectory() as tmp:
        # Read into memory: the tables are otherwise read from the files when used.
        a = ecnlab.run(copy.deepcopy(cfg), out=Path(tmp) / "a", progress=False).load()
        ecnlab.run(copy.deepcopy(cfg), out=Path(tmp) / "b", progress=False)
        fa, fb = output_files(Path(tmp) / "a"), output_files(Path(tmp) / "b")
        assert fa.keys() == fb.keys()
        for name in fa:
            assert fa[name] == fb[name], f"{name} differs between two runs of the same config"
    check_conservation(a.summary)
    return a


def assert_same_outputs(a: dict[str, Any], b: dict[str, Any]) -> None:
    """Both configs write byte-identical outputs (config.json aside)."""
    with tempfile.TemporaryDirectory() as tmp:
        ecnlab.run(a, out=Path(tmp) / "a", progress=False)
        ecnlab.run(b, out=Path(tmp) / "b", progress=False)
        fa, fb = output_files(Path(tmp) / "a"), output_files(Path(tmp) / "b")
    assert fa.keys() == fb.keys()
    for name in fa:
        if name != "config.json":
            assert fa[name] == fb[name], name


# Summary keys that say how the engine ran, not what the run did
# (crates/ecnlab/src/golden.rs, ENGINE_KEYS).
ENGINE_KEYS = ("events", "peak_pending_events", "partitions", "lookahead_seconds", "partition_cut")


def assert_same_answer(a: dict[str, Any], b: dict[str, Any]) -> None:
    """Both configs give the same run on whatever engine each names: every
    table and capture byte-identical, and the summary equal but for the
    engine's own keys (docs/parallel.md)."""
    with tempfile.TemporaryDirectory() as tmp:
        ra = ecnlab.run(a, out=Path(tmp) / "a", progress=False)
        rb = ecnlab.run(b, out=Path(tmp) / "b", progress=False)
        fa, fb = output_files(Path(tmp) / "a"), output_files(Path(tmp) / "b")
    assert fa.keys() == fb.keys()
    for name in fa:
        if name not in ("config.json", "summary.json"):
            assert fa[name] == fb[name], name
    skip = set(ENGINE_KEYS) | {"wall_seconds", "events_per_second"}
    sa = {k: v for k, v in ra.summary.items() if k not in skip}
    sb = {k: v for k, v in rb.summary.items() if k not in skip}
    assert sa == sb, {k for k in sa.keys() | sb.keys() if sa.get(k) != sb.get(k)}


def assert_refused(cfg: dict[str, Any], want: str, what: Any, check: Any = None) -> None:
    """The config is refused (by ``check``, default ``ecnlab.validate``) with
    an error that starts with ``want``; ``what`` names the case in failures."""
    try:
        (check or ecnlab.validate)(cfg)
    except ecnlab.ConfigError as e:
        assert str(e).startswith(want), (what, str(e))
    else:
        raise AssertionError(f"{what} was accepted")


def fct_stats(cfg: dict[str, Any], checked: bool = False) -> dict[str, Any]:
    """Run a workload to its end (`checked`: twice, for determinism) and
    return the summary's FCT statistics, with every packet accounted for and
    every flow finished."""
    res = run_checked(cfg) if checked else ecnlab.run(cfg, progress=False)
    check_conservation(res.summary)
    fct = res.summary["fct"]
    assert fct["unfinished"] == 0
    return fct


def check_conservation(s: dict[str, Any]) -> None:
    """sent = delivered + dropped + in flight, and the in-flight count (queues
    walked plus packets on links) matches the packet arena's live slots."""
    assert (
        s["packets_sent"] == s["packets_delivered"] + s["packets_dropped"] + s["packets_in_flight"]
    ), s
    assert s["packets_in_flight"] == s["arena_live"], s


def port_totals(res: ecnlab.Result) -> dict[tuple[str, str], dict[str, Any]]:
    """Whole-port counter rows of the ports table, keyed by (node, peer)."""
    return {(r["node"], r["peer"]): r for r in res["ports"].to_pylist() if r["queue"] == -1}


def uplink_bytes(res: ecnlab.Result) -> list[int]:
    """Bytes sent on every leaf-to-spine port, in port order."""
    return [
        r["sent_bytes"]
        for (n, p), r in port_totals(res).items()
        if n.startswith("leaf") and p.startswith("spine")
    ]


def port_queue(
    res: ecnlab.Result, node: str, peer: str, warmup: float, queue: int | None = None
) -> np.ndarray:
    """Samples (after warmup) of a port's occupancy in packets: the sum of its
    queues, or one queue."""
    port = res.port(node, peer)
    q = res["queues"]
    t = q["time"].to_numpy()
    p = q["port"].to_numpy()
    qi = q["queue"].to_numpy()
    n = q["packets"].to_numpy().astype(float)
    sel = (p == port) & (t >= warmup)
    if queue is not None:
        sel &= qi == queue
        return n[sel]
    times = t[sel]
    _, idx = np.unique(times, return_inverse=True)
    return np.bincount(idx, weights=n[sel])


def goodput(res: ecnlab.Result) -> dict[int, float]:
    return {int(k): float(v) for k, v in res.summary["goodput_gbps_by_service"].items()}


def recording_testbed_runs(monkeypatch: Any) -> list[Any]:
    """The Network of every testbed run started from now on (its own
    namespaces, never another run's on a shared machine)."""
    from ecnlab.testbed import run as run_module

    made: list[Any] = []

    class Recording(run_module.Network):  # type: ignore[misc, valid-type]
        def create(self, python: str) -> None:
            made.append(self)
            super().create(python)

    monkeypatch.setattr(run_module, "Network", Recording)
    return made
