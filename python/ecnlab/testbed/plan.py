"""What a testbed run will build, from a resolved experiment config: the
hosts and their addresses, the kernel TCP each host runs, the flows,
incast groups and pings each host's agent starts — or one clear error for
what the testbed cannot (yet) do with it."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from typing import Any

from ..errors import ConfigError
from ..units import parse_time
from .keys import check_keys

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
bucket's rate on this project's 2-core machine (docs/testbed.md, "How fast the switch keeps up")."""

MAX_HOSTS = 8
"""Hosts a testbed serves: each is a namespace with an agent process, and
the switch's one loop polls every port; on 2 cores more would starve it."""

KERNEL_CCS = ("reno", "cubic")
"""Kernel congestion controls that stand for the simulator's Reno and ECN*
(`--kernel-cc`): both react to an ECN echo as to a loss (RFC 3168)."""

MTU = 1500
"""The veths' MTU: the largest IP packet a host sends unfragmented."""

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
    """The switch's queue sampling period; 0: no samples."""
    fct_end: str
    """"receiver" or "sender" (run.fct_end): which side's time ends a
    sized flow."""
    services: int
    link_delay: float
    """One-way propagation delay of a host's link (link_delay + host_delay)."""
    sysctls: dict[str, str]
    kernel_cc: str
    route_options: list[str]
    uplinks: bool = True
    """Each host's uplink is emulated (uplink.py): a tbf at the link rate on
    its veth, TSQ bounded by transport.host_queue_limit. False: the
    testbed as it was before, for comparisons only (a veth hands every
    frame to the switch at once)."""
    flows: list[dict[str, Any]] = field(default_factory=list)
    incasts: list[dict[str, Any]] = field(default_factory=list)
    """Incast groups: receiver, senders, their flow ids (the simulator's:
    after every [[flows]] entry's), block, rounds, service, start,
    request_gap and each round's response jitter per sender."""
    pings: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def ip(self, host: int) -> str:
        return f"{SUBNET}.{host + 1}"

    def flow_rows(self) -> list[dict[str, Any]]:
        """Every flow in id order, as the flows table lists them: the
        [[flows]] entries', then each incast group's, one per sender."""
        rows = [{**f, "kind": "long" if f["size"] < 0 else "sized"} for f in self.flows]
        for g in self.incasts:
            for fid, src in zip(g["ids"], g["senders"]):
                rows.append(
                    {
                        "id": fid,
                        "src": src,
                        "dst": g["receiver"],
                        "service": g["service"],
                        "size": -1,
                        "kind": "incast",
                    }
                )
        return rows


def _unsupported(key: str, value: Any, why: str) -> ConfigError:
    return ConfigError(f"{key} = {value!r}: {why}")


def make_plan(
    cfg: dict[str, Any],
    *,
    kernel_cc: str = "reno",
    available_ccs: tuple[str, ...] = KERNEL_CCS,
    allow_fast: bool = False,
    uplinks: bool = True,
    rto_max: bool | None = None,
) -> TestbedPlan:
    """The plan for resolved config ``cfg``; raises :class:`ConfigError`
    naming the key, the value and what the testbed allows. ``uplinks``:
    emulate each host's uplink (see :attr:`TestbedPlan.uplinks`); ``rto_max``:
    whether the kernel has net.ipv4.tcp_rto_max_ms (None: look)."""
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
            'on this machine (docs/testbed.md, "How fast the switch keeps up")'
        )
        if not allow_fast:
            raise _unsupported(
                "topology.link_rate", rates[0], text + "; --allow-fast runs it anyway"
            )
        warnings.append(f"topology.link_rate = {rates[0]}: {text}")
    transport = cfg.get("transport", {})
    cc = transport.get("cc")
    if kernel_cc not in KERNEL_CCS:
        raise _unsupported("--kernel-cc", kernel_cc, f"allowed: {', '.join(KERNEL_CCS)}")
    if cc == "ecn-star":
        sysctls = {"net.ipv4.tcp_ecn": "1", "net.ipv4.tcp_congestion_control": kernel_cc}
    elif cc == "reno":
        sysctls = {"net.ipv4.tcp_ecn": "0", "net.ipv4.tcp_congestion_control": kernel_cc}
    elif cc == "cubic":
        # The kernel's own CUBIC (RFC 9438, with HyStart), ECN off as ours.
        kernel_cc = "cubic"
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
    elif cc in ("dcqcn", "hpcc", "timely", "rdma-dctcp"):
        raise _unsupported(
            "transport.cc",
            cc,
            "RoCEv2 queue pairs need RDMA NICs, which network namespaces and veth do not have; "
            'the testbed runs the kernel\'s TCP; allowed: "ecn-star", "reno", "cubic" or "dctcp"',
        )
    else:
        raise _unsupported(
            "transport.cc",
            cc,
            'the testbed runs the kernel\'s TCP; allowed: "ecn-star", "reno", "cubic" or "dctcp"',
        )
    if kernel_cc not in available_ccs:
        raise _unsupported(
            "--kernel-cc", kernel_cc, "this kernel offers " + ", ".join(available_ccs)
        )
    # Every other key: honoured, irrelevant, or refused unless at the
    # engine's default (keys.py).
    # (The Linux stack's keys may ask for namespace sysctls: kernel_stack.py.)
    sysctls |= check_keys(cfg, kernel_cc, uplinks=uplinks, rto_max=rto_max)
    # Linux's route metrics carry the transport's RTO floor and initial
    # window; `quickack` acknowledges every segment, as the simulator does
    # with transport.delayed_ack = 1 (the papers' setting, and the only
    # value check_keys lets through), unless the run asks for Linux's
    # delayed-ACK rules (transport.linux_delayed_ack), which are then the
    # kernel's own. Linux's own delayed ACKs hold an odd
    # last segment back for its delayed-ACK timer, which stalled a single
    # Reno flow for milliseconds after each ECN cut and cost it its share
    # of a queue (docs/testbed.md).
    min_rto_ms = max(1, round(parse_time(transport["min_rto"]) * 1e3))
    route_options = ["rto_min", f"{min_rto_ms}ms", "initcwnd", str(int(transport["init_cwnd"]))]
    # The congestion control too, as the route's `congctl`: a namespace
    # other than the machine's first may set its default (the sysctl
    # net.ipv4.tcp_congestion_control) only to one the machine lists in
    # tcp_allowed_congestion_control, and this machine's lists reno and
    # bbr, not cubic (EPERM); a route's choice applies to every connection
    # on it, both ways, with no such list.
    route_options += ["congctl", sysctls.pop("net.ipv4.tcp_congestion_control")]
    if not transport.get("linux_delayed_ack"):
        route_options += ["quickack", "1"]
    # The simulator's slow-start restart (RFC 5681 §4.1) is off unless
    # asked for; Linux's is on by default and would shrink an incast
    # connection's window between rounds, which the simulator does not.
    restart = "1" if transport.get("slow_start_restart") else "0"
    sysctls["net.ipv4.tcp_slow_start_after_idle"] = restart
    if uplinks:
        # TCP small queues: a connection pauses while more than this many
        # bytes of its frames wait below TCP, here in its host's emulated
        # NIC queue (uplink.py), and resumes as they leave, as the
        # simulator's connections do at transport.host_queue_limit. The
        # kernel counts a frame's buffer memory (its truesize: between 1.5
        # and 3 KB for a full frame) rather than its wire bytes, and sends
        # a frame whenever what waits is not above the limit: the default
        # 3000 B lets a connection have two full frames waiting, as the
        # simulator's (measured: two, never three; tests/scenarios).
        limit = parse_bytes(str(transport["host_queue_limit"]))
        sysctls["net.ipv4.tcp_limit_output_bytes"] = str(limit)
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
        # "none": the switch takes no samples (check_keys allows only
        # "none" or every port).
        sample_interval=0.0
        if run["sample_ports"] == "none"
        else parse_time(run["sample_interval"]),
        fct_end=run.get("fct_end", "receiver"),
        services=services,
        link_delay=parse_time(topo.get("link_delay") or "0s")
        + parse_time(topo.get("host_delay") or "0s"),
        sysctls=sysctls,
        kernel_cc=kernel_cc,
        route_options=route_options,
        uplinks=uplinks,
        warnings=warnings,
    )
    fid = 0
    seed = int(run.get("seed", 1))
    # Serial flows' pauses, in the order of the entries and their flows;
    # Python's generator seeded by run.seed (not the simulator's draws).
    pauses = random.Random(f"ecnlab-serial-{seed}")
    for i, f in enumerate(cfg.get("flows", [])):
        where = f"flows[{i}]"
        for end in ("src", "dst"):
            if not 0 <= int(f[end]) < hosts:
                raise _unsupported(f"{where}.{end}", f[end], f"a host 0..{hosts - 1}")
        size = -1 if f["size"] == "infinite" else parse_bytes(f["size"])
        stop = parse_time(f["stop"]) if f.get("stop") is not None else duration
        serial = bool(f.get("serial"))
        gap = parse_time(f.get("serial_gap") or "0s")
        exponential = f.get("serial_gap_kind") == "exponential"
        for k in range(int(f.get("count", 1))):
            flow = {
                "id": fid,
                "src": int(f["src"]),
                "dst": int(f["dst"]),
                "service": int(f.get("service", 0)),
                "size": size,
                "start": parse_time(f.get("start", "0s")),
                "stop": min(stop, duration),
            }
            if serial:
                # One after another, as the simulator's: the entry's first
                # flow at its start, each next one a pause after the one
                # before it has completed.
                flow["chain"] = i
                if k == 0:
                    flow["pause"] = 0.0
                else:
                    flow["pause"] = pauses.expovariate(1 / gap) if exponential else gap
            plan.flows.append(flow)
            fid += 1
    for g, c in enumerate(cfg.get("incast", [])):
        plan.incasts.append(_incast_group(g, c, hosts, fid, seed))
        fid += len(plan.incasts[-1]["ids"])
    for i, p in enumerate(cfg.get("ping", [])):
        size = parse_bytes(p.get("size", "64B"))
        if size > MTU:
            raise _unsupported(
                f"ping[{i}].size",
                p["size"],
                f"the testbed's links carry packets of at most {MTU} bytes (no fragments); "
                f"allowed: 28B to {MTU}B",
            )
        plan.pings.append(
            {
                "index": i,
                "src": int(p["src"]),
                "dst": int(p["dst"]),
                "service": int(p.get("service", 0)),
                "interval": parse_time(p["interval"]),
                "start": parse_time(p.get("start", "0s")),
                "size": size,
            }
        )
    return plan


def _incast_group(
    g: int, c: dict[str, Any], hosts: int, first_id: int, seed: int
) -> dict[str, Any]:
    """Incast group ``g`` (the engine has checked its keys): senders as the
    simulator picks them (a count: the first hosts other than the
    receiver), flow ids from ``first_id``, and every round's response
    jitter per sender drawn in advance from the run's seed."""
    receiver = int(c["receiver"])
    given = c["senders"]
    if isinstance(given, list):
        senders = [int(h) for h in given]
    else:
        senders = [h for h in range(hosts) if h != receiver][: int(given)]
    rounds = int(c["rounds"])
    jitter = parse_time(c.get("response_jitter") or "0s")
    # Uniform in [0, response_jitter), a new draw per sender per round, as
    # the simulator's; Python's generator, seeded by (run.seed, group), so
    # the same seed gives the same delays (not the simulator's own draws).
    rng = random.Random(f"ecnlab-incast-{seed}-{g}")
    delays = [[rng.random() * jitter for _ in senders] for _ in range(rounds)] if jitter else []
    return {
        "group": g,
        "receiver": receiver,
        "senders": senders,
        "ids": list(range(first_id, first_id + len(senders))),
        "service": int(c.get("service", 0)),
        "block": parse_bytes(c["block"]),
        "rounds": rounds,
        "start": parse_time(c.get("start") or "0s"),
        "request_gap": parse_time(c.get("request_gap") or "0s"),
        "jitter": delays,
    }
