"""What a testbed run will build, from a resolved experiment config: the
hosts and their addresses, the kernel TCP each host runs, the flows and
pings each host's agent starts — or one clear error for what the testbed
cannot (yet) do with it."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..errors import ConfigError
from ..units import parse_time

__all__ = [
    "MAX_HOSTS",
    "MAX_RATE_BPS",
    "KERNEL_CCS",
    "TestbedPlan",
    "make_plan",
    "parse_rate",
    "parse_bytes",
]

MAX_RATE_BPS = 200_000_000
"""The fastest emulated link rate `ecnlab testbed` runs without --allow-fast:
the highest rate at which the switch held its ports within 1% of the token
bucket's rate on this project's 2-core machine (README, "ecnlab testbed")."""

MAX_HOSTS = 8
"""Hosts a testbed serves: each is a namespace with an agent process, and
the switch's one loop polls every port; on 2 cores more would starve it."""

KERNEL_CCS = ("reno", "cubic")
"""Kernel congestion controls that stand for the simulator's Reno and ECN*
(`--kernel-cc`): both react to an ECN echo as to a loss (RFC 3168)."""

SUBNET = "10.213.0"
"""Private addresses, inside the run's namespaces only: host h is .(h+1)."""

_UNITS_RATE = {"bps": 1, "Kbps": 10**3, "kbps": 10**3, "Mbps": 10**6, "Gbps": 10**9, "Tbps": 10**12}
_UNITS_BYTES = {"B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "KiB": 1024, "MiB": 1024**2}
_NUMBER_UNIT = re.compile(r"^\s*(\d+(?:\.\d*)?)\s*([A-Za-z]+)\s*$")


def parse_rate(text: str) -> int:
    """Bits per second of a rate string as the resolved config spells it."""
    m = _NUMBER_UNIT.match(str(text))
    if not m or m.group(2) not in _UNITS_RATE:
        raise ValueError(f"not a rate: {text!r}")
    return round(float(m.group(1)) * _UNITS_RATE[m.group(2)])


def parse_bytes(text: str) -> int:
    """Bytes of a size string as the resolved config spells it ("64000B")."""
    m = _NUMBER_UNIT.match(str(text))
    if not m or m.group(2) not in _UNITS_BYTES:
        raise ValueError(f"not a size: {text!r}")
    return round(float(m.group(1)) * _UNITS_BYTES[m.group(2)])


@dataclass
class TestbedPlan:
    """Everything the orchestrator needs, all in plain values."""

    hosts: int
    rate_bps: int
    duration: float
    warmup: float
    goodput_interval: float
    sample_interval: float
    services: int
    link_delay: float
    """One-way propagation delay of a host's link (link_delay + host_delay)."""
    sysctls: dict[str, str]
    kernel_cc: str
    route_options: list[str]
    flows: list[dict[str, Any]] = field(default_factory=list)
    pings: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def ip(self, host: int) -> str:
        return f"{SUBNET}.{host + 1}"


def _unsupported(key: str, value: Any, why: str) -> ConfigError:
    return ConfigError(f"{key} = {value!r}: {why}")


def make_plan(
    cfg: dict[str, Any],
    *,
    kernel_cc: str = "reno",
    available_ccs: tuple[str, ...] = KERNEL_CCS,
    allow_fast: bool = False,
) -> TestbedPlan:
    """The plan for resolved config ``cfg``; raises :class:`ConfigError`
    naming the key, the value and what the testbed allows."""
    topo = cfg.get("topology", {})
    if topo.get("kind") != "star":
        raise _unsupported(
            "topology.kind",
            topo.get("kind"),
            'ecnlab testbed runs one switch: only "star" is allowed '
            "(leaf-spine and fat-tree need several switch processes: not done yet)",
        )
    hosts = int(topo["hosts"])
    if hosts > MAX_HOSTS:
        raise _unsupported(
            "topology.hosts",
            hosts,
            f"the testbed's switch serves at most {MAX_HOSTS} hosts on this machine",
        )
    rates = topo["link_rate"] if isinstance(topo["link_rate"], list) else [topo["link_rate"]]
    if len(set(rates)) != 1:
        raise _unsupported("topology.link_rate", rates, "one rate for every port in the testbed")
    rate = parse_rate(rates[0])
    warnings = []
    if rate > MAX_RATE_BPS:
        text = (
            f"the switch was measured to hold at most {MAX_RATE_BPS / 1e6:g} Mbps within 1% "
            'on this machine (README, "ecnlab testbed")'
        )
        if not allow_fast:
            raise _unsupported(
                "topology.link_rate", rates[0], text + "; --allow-fast runs it anyway"
            )
        warnings.append(f"topology.link_rate = {rates[0]}: {text}")
    for key in ("incast",):
        if cfg.get(key):
            raise _unsupported(
                key,
                f"{len(cfg[key])} entries",
                "incast rounds are not in the testbed yet (flows and pings are)",
            )
    for key in ("workload", "fabric", "nic"):
        if cfg.get(key):
            raise _unsupported(f"[{key}]", "given", "not supported by ecnlab testbed yet")
    transport = cfg.get("transport", {})
    cc = transport.get("cc")
    if kernel_cc not in KERNEL_CCS:
        raise _unsupported("--kernel-cc", kernel_cc, f"allowed: {', '.join(KERNEL_CCS)}")
    if cc == "ecn-star":
        sysctls = {"net.ipv4.tcp_ecn": "1", "net.ipv4.tcp_congestion_control": kernel_cc}
    elif cc == "reno":
        sysctls = {"net.ipv4.tcp_ecn": "0", "net.ipv4.tcp_congestion_control": kernel_cc}
    elif cc == "dctcp":
        if "dctcp" not in available_ccs:
            raise _unsupported(
                "transport.cc",
                cc,
                "this kernel's TCP offers " + ", ".join(available_ccs) + " (no dctcp module); "
                'use cc = "ecn-star" (the kernel\'s reno or cubic with ECN) or "reno"',
            )
        sysctls = {"net.ipv4.tcp_ecn": "1", "net.ipv4.tcp_congestion_control": "dctcp"}
        kernel_cc = "dctcp"
    else:
        raise _unsupported(
            "transport.cc", cc, 'the testbed runs the kernel\'s TCP: "ecn-star", "reno" or "dctcp"'
        )
    if kernel_cc not in available_ccs:
        raise _unsupported(
            "--kernel-cc", kernel_cc, "this kernel offers " + ", ".join(available_ccs)
        )
    # Linux's route metrics carry the transport's RTO floor and initial
    # window; `quickack` acknowledges every segment, as the simulator does
    # with transport.delayed_ack = 1 (the papers' setting). Linux's own
    # delayed ACKs hold an odd last segment back for its delayed-ACK timer,
    # which stalled a single Reno flow for milliseconds after each ECN cut
    # and cost it its share of a queue (README).
    min_rto_ms = max(1, round(parse_time(transport["min_rto"]) * 1e3))
    route_options = ["rto_min", f"{min_rto_ms}ms", "initcwnd", str(int(transport["init_cwnd"]))]
    if int(transport.get("delayed_ack", 1)) == 1:
        route_options += ["quickack", "1"]
    run = cfg["run"]
    if run.get("duration") is None:
        raise _unsupported("run.duration", None, "the testbed needs a duration")
    duration = parse_time(run["duration"])
    services = int(cfg["switch"]["queues"])
    plan = TestbedPlan(
        hosts=hosts,
        rate_bps=rate,
        duration=duration,
        warmup=parse_time(run["warmup"]),
        goodput_interval=parse_time(run["goodput_interval"]),
        sample_interval=parse_time(run["sample_interval"]),
        services=services,
        link_delay=parse_time(topo.get("link_delay") or "0s")
        + parse_time(topo.get("host_delay") or "0s"),
        sysctls=sysctls,
        kernel_cc=kernel_cc,
        route_options=route_options,
        warnings=warnings,
    )
    fid = 0
    for i, f in enumerate(cfg.get("flows", [])):
        where = f"flows[{i}]"
        for key in ("serial", "rate"):
            if f.get(key):
                raise _unsupported(f"{where}.{key}", f[key], "not supported by ecnlab testbed yet")
        for end in ("src", "dst"):
            if not 0 <= int(f[end]) < hosts:
                raise _unsupported(f"{where}.{end}", f[end], f"a host 0..{hosts - 1}")
        size = -1 if f["size"] == "infinite" else parse_bytes(f["size"])
        stop = parse_time(f["stop"]) if f.get("stop") is not None else duration
        for _ in range(int(f.get("count", 1))):
            plan.flows.append(
                {
                    "id": fid,
                    "src": int(f["src"]),
                    "dst": int(f["dst"]),
                    "service": int(f.get("service", 0)),
                    "size": size,
                    "start": parse_time(f.get("start", "0s")),
                    "stop": min(stop, duration),
                }
            )
            fid += 1
    for i, p in enumerate(cfg.get("ping", [])):
        plan.pings.append(
            {
                "index": i,
                "src": int(p["src"]),
                "dst": int(p["dst"]),
                "service": int(p.get("service", 0)),
                "interval": parse_time(p["interval"]),
                "start": parse_time(p.get("start", "0s")),
                "size": parse_bytes(p.get("size", "64B")),
            }
        )
    return plan
