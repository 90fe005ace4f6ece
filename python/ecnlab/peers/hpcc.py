"""The HPCC simulator's runs as ecnlab experiments (``ecnlab import-hpcc``).

The peer (the HPCC authors' ns-3 RDMA simulator, github
kwzhao/High-Precision-Congestion-Control, branch parsimon-ns3.39, commit
0e2b031) reads one ``config.txt`` of ``KEY value`` lines naming a topology
file (``nodes switches links``, the switch ids, then ``a b rate delay loss``
per link) and a flow file (a count, then ``[id] src dst pg dport size
start_s``). :func:`import_hpcc` turns the three into one ecnlab experiment:
a ``graph`` topology (hosts renumbered first; the switches keep the peer's
ids as their names), the flows, the transport from ``CC_MODE`` and the
switches' marking, shared buffer and PFC set up as the peer's MMU is (the
mapping of ``bench/hpcc_pfc``). A key ecnlab cannot follow gets one warning
line saying what ecnlab does instead; keys the peer does not know are
listed. docs/guide/hpcc-import.md has the table of what maps to what.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from .hpcc_files import (
    Link,
    fmt_ps,
    fmt_rate,
    parse_rate,
    rate_map,
    read_config_txt,
    read_flows,
    read_topology,
)

__all__ = ["HEADER", "HpccImport", "import_hpcc", "peer_headroom", "to_toml"]

# The peer's data frame less its payload: 14 B of Ethernet-sized L2 header
# as its qbb device counts it, IPv4 20, UDP 8, the sequence/priority tag 6
# (the header bench/dcqcn_incast.toml and bench/hpcc_pfc use).
HEADER = 48

# Headroom of one (ingress port, lossless priority) in the peer's third.cc:
# 2·(MTU + 48) + 3,860 + 2·rate·delay/8 bytes. ecnlab's "auto" headroom is
# 2·(mss + header) + 64 (the PAUSE) + pfc_response + 2·rate·delay/8, so a
# response of 3,860 − 64 + 2·(MTU + 48 − mss − header) makes the two equal.
PEER_HEADROOM_FIXED = 3860
PAUSE_FRAME = 64

# The peer's lossless priorities (third.cc: qu == 3 || qu == 0) and the
# number of headroom reservations it makes per port.
PEER_LOSSLESS = (0, 3)

# TIMELY's constants the peer's config.txt cannot set (rdma-hw.cc defaults).
TIMELY_ALPHA = 0.875
TIMELY_MIN_RTT_NS = 20000

CC_NAMES = {
    1: "DCQCN",
    2: "PowerTCP",
    3: "HPCC",
    7: "TIMELY",
    8: "DCTCP over RDMA",
    10: "HPCC-PINT",
}

# Keys that name the peer's output files and monitors: ecnlab writes its
# own tables (flows, queues, pfc, buffer; `ecnlab hpcc-fct` writes the
# peer's FCT file from a run).
OUTPUT_KEYS = {
    "TRACE_FILE",
    "TRACE_OUTPUT_FILE",
    "FCT_OUTPUT_FILE",
    "PFC_OUTPUT_FILE",
    "QLEN_MON_FILE",
    "QLEN_MON_START",
    "QLEN_MON_END",
    "QLEN_MON_INTERVAL",
    "QLEN_DUMP_INTERVAL",
    "QLEN_TS_FILE",
    "QLEN_TS_INTERVAL",
    "FLOW_MON_FILE",
    "FLOW_MON_INTERVAL",
    "ENABLE_TRACE",
}
# Parsed by third.cc and never used.
UNUSED_KEYS = {"GLOBAL_T", "DATA_RATE", "LINK_DELAY"}
# Each congestion control's own keys; under another CC_MODE the peer reads
# and ignores them, and so does the converter.
CC_KEYS = {
    1: {
        "ALPHA_RESUME_INTERVAL",
        "RATE_DECREASE_INTERVAL",
        "CLAMP_TARGET_RATE",
        "RP_TIMER",
        "EWMA_GAIN",
        "FAST_RECOVERY_TIMES",
        "RATE_HAI",
    },
    3: {
        "U_TARGET",
        "MI_THRESH",
        "FAST_REACT",
        "INT_MULTI",
        "MULTI_RATE",
        "SAMPLE_FEEDBACK",
        "BASE_RTT",
    },
    7: {"TIMELY_T_HIGH", "TIMELY_T_LOW", "TIMELY_BETA", "RATE_HAI"},
    8: {"DCTCP_RATE_AI", "EWMA_GAIN"},
    10: {"PINT_LOG_BASE", "PINT_PROB"},
}
# Every key the peer reads (third.cc at 0e2b031, the comparison patch's
# monitors, and master's USE_DYNAMIC_PFC_THRESHOLD); others are unknown.
KNOWN_KEYS = (
    OUTPUT_KEYS
    | UNUSED_KEYS
    | set().union(*CC_KEYS.values())
    | {
        "ENABLE_QCN",
        "ENABLE_PFC",
        "USE_DYNAMIC_PFC_THRESHOLD",
        "PAUSE_TIME",
        "PACKET_PAYLOAD_SIZE",
        "L2_CHUNK_SIZE",
        "L2_ACK_INTERVAL",
        "L2_BACK_TO_ZERO",
        "TOPOLOGY_FILE",
        "FLOW_FILE",
        "SIMULATOR_STOP_TIME",
        "RATE_AI",
        "MIN_RATE",
        "ERROR_RATE_PER_LINK",
        "CC_MODE",
        "HAS_WIN",
        "VAR_WIN",
        "FIXED_WIN",
        "RATE_BOUND",
        "ACK_HIGH_PRIO",
        "LINK_DOWN",
        "KMAX_MAP",
        "KMIN_MAP",
        "PMAX_MAP",
        "BUFFER_SIZE",
    }
)


@dataclass
class HpccImport:
    """An imported run: the experiment (a config dict, and as TOML text),
    one line per setting ecnlab follows differently, the keys the peer
    does not know, and the peer's node id of every ecnlab node."""

    config: dict[str, Any]
    toml: str
    warnings: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    peer_ids: list[int] = field(default_factory=list)


def peer_headroom(mtu: int, rate: int, delay_ps: int) -> int:
    """The peer's headroom per (ingress port, lossless priority), in bytes,
    in its own arithmetic (a double, truncated)."""
    return int((mtu + 48) * 2 + PEER_HEADROOM_FIXED + (2 * rate * (delay_ps / 1e12) / 8))


# ---------- the conversion ----------


class _Conv:
    def __init__(self, path: Path, header: int) -> None:
        self.path = path
        self.cfg = read_config_txt(path)
        self.header = header
        self.warnings: list[str] = []
        self.used: set[str] = set()

    def has(self, key: str) -> bool:
        return key in self.cfg

    def raw(self, key: str, default: str | None = None) -> str:
        self.used.add(key)
        words = self.cfg.get(key)
        if not words:
            if default is None:
                raise ConfigError(f"{self.path.name}: {key} missing; the peer needs it")
            return default
        return words[0]

    def num(self, key: str, default: str | None = None) -> float:
        text = self.raw(key, default)
        try:
            return float(text)
        except ValueError:
            raise ConfigError(f"{key} = {text}: not a number") from None

    def int_(self, key: str, default: str | None = None) -> int:
        x = self.num(key, default)
        if x != int(x):
            raise ConfigError(f"{key} = {self.raw(key, default)}: not a whole number")
        return int(x)

    def rate(self, key: str, default: str | None = None) -> str:
        return fmt_rate(parse_rate(self.raw(key, default), key))

    def us(self, key: str, default: str | None = None) -> str:
        """A key in microseconds, as a duration."""
        return fmt_ps(int(Decimal(self.raw(key, default)) * 10**6))

    def warn(self, key: str, text: str) -> None:
        self.warnings.append(f"{key}: {text}")

    def file(self, key: str) -> Path:
        return self.path.parent / self.raw(key)


def import_hpcc(config_path: str | Path, header: int = HEADER) -> HpccImport:
    """Read the peer's config.txt (paths in it relative to its folder) and
    its topology and flow files; return the ecnlab experiment. Raises
    :class:`ecnlab.ConfigError` for what cannot be converted (a CC_MODE
    ecnlab does not model, a link rate missing from the marking maps, files
    that do not parse)."""
    c = _Conv(Path(config_path), header)
    mode = c.int_("CC_MODE")
    if mode not in (1, 3, 7, 8):
        name = CC_NAMES.get(mode, "an ns-3 TCP" if mode >= 15 else "unknown")
        raise ConfigError(
            f"CC_MODE {mode} ({name}): ecnlab imports CC_MODE 1 (DCQCN), 3 (HPCC), "
            "7 (TIMELY) and 8 (DCTCP on a rate) only"
        )
    nodes, switch_ids, links = read_topology(c.file("TOPOLOGY_FILE"))
    flows = read_flows(c.file("FLOW_FILE"))

    # Hosts first, in the peer's order, then the switches in the order listed.
    is_switch = set(switch_ids)
    peer_ids = [n for n in range(nodes) if n not in is_switch] + list(switch_ids)
    new = {p: i for i, p in enumerate(peer_ids)}
    hosts = nodes - len(switch_ids)

    mtu = c.int_("PACKET_PAYLOAD_SIZE")
    out: dict[str, Any] = {}
    out["run"] = {
        "seed": 1,
        "duration": fmt_ps(int(Decimal(c.raw("SIMULATOR_STOP_TIME")) * 10**12)),
    }
    out["topology"] = _topology(c, hosts, len(switch_ids), links, new, switch_ids)
    services = sorted({f.pg for f in flows})
    # ACK_HIGH_PRIO 1: the peer's switches send ACKs, NACKs and CNPs in
    # priority 0, strictly first; here service 0, the data's after it.
    ack_high = bool(c.int_("ACK_HIGH_PRIO", "0"))
    first = int(ack_high)
    service_of = {pg: i + first for i, pg in enumerate(services)}
    out["switch"], fabric = _switch(c, hosts, links, new, mtu, services, ack_high)
    if fabric:
        out["fabric"] = fabric
    out["host"] = {"jitter": "0ns"}  # the peer's frames land on time
    if ack_high:
        # The peer's NIC sends its ACK queue first; marking as its NIC: none.
        out["nic"] = {"scheduler": "sp", "marking": "none"}
    out["transport"] = _transport(c, mode, mtu)
    if ack_high:
        out["transport"]["rdma_ack_service"] = 0
    out["flows"] = [
        {
            "src": new[f.src],
            "dst": new[f.dst],
            "size": f"{f.size}B",
            "start": fmt_ps(f.start_ps),
            **({"service": service_of[f.pg]} if len(services) > 1 or ack_high else {}),
        }
        for f in flows
    ]
    for f in flows:
        for x in (f.src, f.dst):
            if x in is_switch or not 0 <= x < nodes:
                raise ConfigError(f"FLOW_FILE: flow {f.src} -> {f.dst}: node {x} is not a host")
    _misc(c, links, _multipath(hosts, links, new))
    unknown = sorted(k for k in c.cfg if k not in KNOWN_KEYS)
    if unknown:
        c.warnings.append(
            "unknown keys (the peer skips them too, so a typo there is silent): "
            + ", ".join(unknown)
        )
    head = _head(c, peer_ids, hosts, mode)
    return HpccImport(out, to_toml(out, head), c.warnings, unknown, peer_ids)


def _topology(
    c: _Conv,
    hosts: int,
    switches: int,
    links: list[Link],
    new: dict[int, int],
    switch_ids: list[int],
) -> dict[str, Any]:
    rate = Counter(lk.rate for lk in links).most_common(1)[0][0]
    delay = Counter(lk.delay_ps for lk in links).most_common(1)[0][0]
    entries = []
    for lk in links:
        e: list[Any] = [new[lk.a], new[lk.b]]
        if lk.rate != rate or lk.delay_ps != delay:
            e.append(fmt_rate(lk.rate))
        if lk.delay_ps != delay:
            e.append(fmt_ps(lk.delay_ps))
        entries.append(e)
    return {
        "kind": "graph",
        "hosts": hosts,
        "switches": switches,
        "link_rate": fmt_rate(rate),
        "link_delay": fmt_ps(delay),
        "switch_names": [f"sw{s}" for s in switch_ids],
        "links": entries,
    }


def _port_rates(
    hosts: int, links: list[Link], new: dict[int, int]
) -> tuple[Counter[int], Counter[int]]:
    """Rates of the switches' host-facing ports and of their fabric ports."""
    down: Counter[int] = Counter()
    fabric: Counter[int] = Counter()
    for lk in links:
        a, b = new[lk.a], new[lk.b]
        if a < hosts or b < hosts:
            down[lk.rate] += 1
        else:
            fabric[lk.rate] += 2  # a port at each end
    return down, fabric


def _red(
    c: _Conv, rates: Counter[int], where: str, maps: dict[str, dict[int, float]]
) -> dict[str, Any]:
    """RED thresholds for ports of `rates` from the peer's per-rate maps."""
    for key, m in maps.items():
        for r in rates:
            if r not in m:
                raise ConfigError(
                    f"{key} has no entry for {fmt_rate(r)} ({where}): the peer would mark "
                    "every packet "
                    f"there (K = 0); add '{r} value' to {key}"
                )
    rate = rates.most_common(1)[0][0]
    if len(rates) > 1:
        for key, m in maps.items():
            if len({m[r] for r in rates}) > 1:
                listed = ", ".join(f"{fmt_rate(r)}: {m[r]:g}" for r in sorted(rates))
                c.warn(
                    key,
                    f"ports {where} run at {len(rates)} rates ({listed}); ecnlab sets one "
                    "value per "
                    f"kind of port, not per rate: it takes {fmt_rate(rate)}'s ({rates[rate]} of "
                    f"{sum(rates.values())} ports)",
                )
    return {
        "red_min": f"{round(maps['KMIN_MAP'][rate] * 1000)}B",
        "red_max": f"{round(maps['KMAX_MAP'][rate] * 1000)}B",
        "red_pmax": maps["PMAX_MAP"][rate],
    }


def _switch(
    c: _Conv,
    hosts: int,
    links: list[Link],
    new: dict[int, int],
    mtu: int,
    services: list[int],
    ack_high: bool,
) -> tuple[dict[str, Any], dict[str, Any]]:
    sw: dict[str, Any] = {}
    fabric: dict[str, Any] = {}
    # The peer serves priorities 1-7 packet by packet in turn: DWRR with
    # equal weights and one packet of quantum comes closest. With
    # ACK_HIGH_PRIO 1, service 0 (the ACKs, NACKs and CNPs) goes strictly
    # first, above them.
    first = int(ack_high)
    if len(services) + first > 1:
        sw["queues"] = len(services) + first
        sw["scheduler"] = ("sp" if len(services) == 1 else "sp-dwrr") if ack_high else "dwrr"
        if ack_high and len(services) > 1:
            sw["sp_queues"] = 1
    if len(services) > 1:
        c.warn(
            "FLOW_FILE pg",
            f"flows use priorities {services}: services {first} to "
            f"{len(services) - 1 + first} in that "
            "order, served "
            "by DWRR with equal weights (the peer: priority 0 strictly first, the others in turn "
            "packet by packet)",
        )
    down, fab = _port_rates(hosts, links, new)
    if c.int_("ENABLE_QCN", "1"):
        maps = {k: rate_map(c.cfg, k) for k in ("KMIN_MAP", "KMAX_MAP", "PMAX_MAP")}
        c.used |= set(maps)
        sw["marking"] = "red"
        sw.update(_red(c, down, "toward hosts", maps))
        # The peer marks on the instantaneous queue a packet leaves behind.
        sw.update({"red_wq": 1.0, "red_spacing": False, "red_at_dequeue": True})
        if fab:
            f = _red(c, fab, "between switches", maps)
            fabric = {k: v for k, v in f.items() if v != sw[k]}
    # The peer's MMU: one shared buffer per switch with dynamic thresholds
    # (alpha 1), lossless traffic charged at ingress with headroom, lossy
    # traffic on an egress pool, pauses that hold until RESUME.
    kib = c.int_("BUFFER_SIZE", "16")
    buffer = kib * 1024
    sw["buffer_policy"] = "dynamic"
    sw["buffer_accounting"] = "hpcc"
    sw["dt_alpha"] = 1.0
    lossless = [i + first for i, pg in enumerate(services) if pg in PEER_LOSSLESS]
    pfc = bool(c.int_("ENABLE_PFC", "1"))
    if pfc and not lossless:
        c.warn(
            "ENABLE_PFC",
            f"no flow uses a lossless priority (0 or 3; flows use {services}): no PFC acts",
        )
    # Each switch's headroom, as the peer reserves it: one per lossless
    # priority (0 and 3) on every port, whatever the flows use.
    per_switch: Counter[int] = Counter()
    for lk in links:
        for end in (lk.a, lk.b):
            if new[end] >= hosts:
                per_switch[end] += peer_headroom(mtu, lk.rate, lk.delay_ps)
    # ecnlab reserves headroom only for the priorities it makes lossless:
    # its shared buffer is the peer's less the reservations it does not make,
    # so that the pools agree. One value for every switch: the smallest pool's.
    n_lossless = len(lossless) if pfc else 0
    pools = {s: buffer - (len(PEER_LOSSLESS) - n_lossless) * h for s, h in per_switch.items()}
    shared = min(pools.values())
    if shared <= 0:
        worst = min(pools, key=lambda s: pools[s])
        raise ConfigError(
            f"BUFFER_SIZE {kib}: {buffer} B is less than switch {worst}'s headroom "
            f"({buffer - shared} B); the port reads KiB (master's run.py writes MB: "
            f"32 MB is BUFFER_SIZE 32768 here)"
        )
    if len(set(pools.values())) > 1:
        c.warn(
            "BUFFER_SIZE",
            "the peer's pool is each switch's buffer less its own headroom "
            f"({len(set(pools.values()))} "
            f"sizes); ecnlab has one switch.shared_buffer for all: {shared} B, the smallest "
            f"switch's (sw{min(pools, key=lambda s: pools[s])}); larger switches get less room",
        )
    sw["shared_buffer"] = f"{shared}B"
    # A port's own limit does not apply under the dynamic policy; set to the
    # pool so that checks against it (marking thresholds) see the real room.
    sw["buffer"] = f"{shared}B"
    if pfc:
        sw["pfc"] = True
        sw["pfc_priorities"] = lossless
        sw["pfc_xon_offset"] = "2496B"  # the peer's RESUME offset
        response = PEER_HEADROOM_FIXED - PAUSE_FRAME + 2 * (mtu + 48 - mtu - c.header)
        sw["pfc_response"] = f"{response}B"  # so that "auto" headroom is the peer's formula
    else:
        sw["pfc"] = False
    if c.has("PAUSE_TIME"):
        c.used.add("PAUSE_TIME")  # pauses hold until RESUME in this port: so does "hpcc" accounting
    if c.has("USE_DYNAMIC_PFC_THRESHOLD"):
        if c.int_("USE_DYNAMIC_PFC_THRESHOLD") == 0:
            c.warn(
                "USE_DYNAMIC_PFC_THRESHOLD",
                "0 (a static PFC threshold) is read by the repository's master only, "
                "not by this port; "
                "ecnlab keeps the dynamic threshold as this port does",
            )
    return sw, fabric


def _transport(c: _Conv, mode: int, mtu: int) -> dict[str, Any]:
    t: dict[str, Any] = {}
    t["mss"] = mtu
    t["header"] = c.header
    min_rate = c.rate("MIN_RATE", "100Mb/s")
    if mode == 1:
        t["cc"] = "dcqcn"
        t["profile"] = "dcqcn-nic"  # no byte counter, CNP flags on ACKs, constant R_HAI
        t["dcqcn_alpha_timer"] = c.us("ALPHA_RESUME_INTERVAL", "55")
        t["dcqcn_decrease_interval"] = c.us("RATE_DECREASE_INTERVAL", "4")
        t["dcqcn_increase_timer"] = c.us("RP_TIMER")
        t["dcqcn_g"] = c.num("EWMA_GAIN")
        t["dcqcn_f"] = c.int_("FAST_RECOVERY_TIMES", "5")
        t["dcqcn_rai"] = c.rate("RATE_AI")
        t["dcqcn_rhai"] = c.rate("RATE_HAI")
        t["dcqcn_min_rate"] = min_rate
        t["dcqcn_clamp_target"] = bool(c.int_("CLAMP_TARGET_RATE", "0"))
    elif mode == 3:
        t["cc"] = "hpcc"
        t["hpcc_eta"] = c.num("U_TARGET", "0.95")
        t["hpcc_max_stage"] = c.int_("MI_THRESH", "5")
        t["hpcc_rai"] = c.rate("RATE_AI")
        t["rdma_base_rtt"] = fmt_ps(c.int_("BASE_RTT") * 1000)
        t["hpcc_fast_react"] = bool(c.int_("FAST_REACT", "1"))
        t["hpcc_min_rate"] = min_rate
        t["hpcc_int_multi"] = c.int_("INT_MULTI", "1")
        if c.int_("MULTI_RATE", "1"):
            c.warn("MULTI_RATE", "1: ecnlab's HPCC keeps one reference rate, not one per hop")
        t["hpcc_sample_feedback"] = bool(c.int_("SAMPLE_FEEDBACK", "0"))
    elif mode == 8:
        # The peer's DCTCP paces a rate: α from EWMA_GAIN, cut by α/2 per
        # window with a mark, DCTCP_RATE_AI per window without.
        t["cc"] = "rdma-dctcp"
        # No default: third.cc's own is `1 / 16` in integer arithmetic, 0.
        t["rdma_dctcp_g"] = c.num("EWMA_GAIN")
        t["rdma_dctcp_rai"] = c.rate("DCTCP_RATE_AI", "1000Mb/s")
        t["rdma_dctcp_min_rate"] = min_rate
    else:
        t["cc"] = "timely"
        t["timely_t_low"] = fmt_ps(c.int_("TIMELY_T_LOW", "50000") * 1000)
        t["timely_t_high"] = fmt_ps(c.int_("TIMELY_T_HIGH", "500000") * 1000)
        t["timely_alpha"] = TIMELY_ALPHA
        t["timely_beta"] = c.num("TIMELY_BETA", "0.8")
        t["timely_min_rtt"] = fmt_ps(TIMELY_MIN_RTT_NS * 1000)
        t["timely_rai"] = c.rate("RATE_AI")
        t["timely_rhai"] = c.rate("RATE_HAI")
        t["timely_min_rate"] = min_rate
    t["rdma_ack_bytes"] = f"{c.int_('L2_ACK_INTERVAL', '0') or 1}B"
    back0 = bool(c.int_("L2_BACK_TO_ZERO", "0"))
    t["rdma_go_back"] = "0" if back0 else "n"
    chunk = c.raw("L2_CHUNK_SIZE", "0")
    if back0 and chunk != "0":
        c.warn(
            "L2_CHUNK_SIZE",
            f"{chunk}: the peer goes back to the start of the {chunk} B chunk; ecnlab's "
            'rdma_go_back = "0" goes back to the message\'s start',
        )
    has_win = bool(c.int_("HAS_WIN", "1"))
    var_win = bool(c.int_("VAR_WIN", "0"))
    fixed = c.int_("FIXED_WIN") if has_win or mode == 3 else 0
    if has_win:
        t["rdma_window"] = f"{fixed}B"
        t["rdma_var_window"] = var_win
    elif mode == 3 and fixed:
        c.warn(
            "FIXED_WIN",
            f"{fixed} with HAS_WIN 0: the peer's HPCC still uses it as W in its utilisation; "
            "ecnlab's hpcc then has no window (rdma_window unset)",
        )
    if not c.int_("RATE_BOUND", "1"):
        c.warn(
            "RATE_BOUND",
            "0: the peer does not pace; ecnlab's queue pairs always pace at their rate",
        )
    return t


def _misc(c: _Conv, links: list[Link], multipath: bool) -> None:
    if c.num("ERROR_RATE_PER_LINK", "0"):
        c.warn(
            "ERROR_RATE_PER_LINK",
            f"{c.raw('ERROR_RATE_PER_LINK')}: ecnlab has no random link loss; "
            "its links lose nothing",
        )
    lossy = [lk for lk in links if lk.loss]
    if lossy:
        c.warn(
            "TOPOLOGY_FILE loss",
            f"{len(lossy)} links with a loss rate (e.g. {lossy[0].a}-{lossy[0].b}: "
            f"{lossy[0].loss:g}); "
            "ecnlab has no random link loss",
        )
    down = c.cfg.get("LINK_DOWN", ["0"])
    c.used.add("LINK_DOWN")
    if down and down[0] != "0":
        c.warn("LINK_DOWN", f"{' '.join(down)}: ecnlab has no link failure; every link stays up")
    c.warn(
        "(no key)",
        "the peer has no retransmission timer; ecnlab's queue pairs keep theirs "
        "(transport.rdma_timeout, 4 ms), which a lossless run never fires",
    )
    if multipath:
        c.warn(
            "(ECMP)",
            "the peer hashes addresses and ports (Murmur3, seeded per switch) to pick "
            "among equal-cost next hops, ecnlab its own per-flow hash: flows may take "
            "other paths of the same length",
        )


def _multipath(hosts: int, links: list[Link], new: dict[int, int]) -> bool:
    """Some switch has several links to switches: ECMP may have a choice."""
    ends: Counter[int] = Counter()
    for lk in links:
        if new[lk.a] >= hosts and new[lk.b] >= hosts:
            ends[lk.a] += 1
            ends[lk.b] += 1
    return any(n > 1 for n in ends.values())


def _head(c: _Conv, peer_ids: list[int], hosts: int, mode: int) -> list[str]:
    lines = [
        f"Converted by `ecnlab import-hpcc` from the HPCC simulator's {c.path.name}",
        f"(CC_MODE {mode}, {CC_NAMES[mode]}; see docs/guide/hpcc-import.md).",
    ]
    host_ids = peer_ids[:hosts]
    if host_ids == list(range(hosts)):
        lines.append(
            f"Nodes: hosts 0-{hosts - 1} keep the peer's ids; switches are named sw<peer id>."
        )
    else:
        lines.append("Nodes: ecnlab host i is the peer's node (by i):")
        for i in range(0, hosts, 16):
            lines.append(
                "  " + " ".join(f"{j}={p}" for j, p in enumerate(host_ids[i : i + 16], start=i))
            )
        lines.append("Switches are named sw<peer id>.")
    if c.warnings:
        lines.append("What ecnlab does differently:")
        lines += [f"  {w}" for w in c.warnings]
    return lines


# ---------- TOML ----------


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{k} = {_value(x)}" for k, x in v.items()) + " }"
    raise TypeError(type(v))


MANY_FLOWS = 64


def to_toml(cfg: dict[str, Any], comments: list[str]) -> str:
    """The experiment as TOML: the comment lines first, flows one per line,
    links eight per line."""
    out = [f"# {c}".rstrip() for c in comments]
    for name, sec in cfg.items():
        if name == "flows":
            continue
        out.append(f"\n[{name}]")
        for k, v in sec.items():
            if isinstance(v, list) and len(v) > 8:
                out.append(f"{k} = [")
                for i in range(0, len(v), 8):
                    out.append("  " + ", ".join(_value(x) for x in v[i : i + 8]) + ",")
                out.append("]")
            else:
                out.append(f"{k} = {_value(v)}")
    out.append("")
    flows = cfg.get("flows", [])
    if len(flows) <= MANY_FLOWS:
        for f in flows:
            out.append("[[flows]]\n" + "\n".join(f"{k} = {_value(v)}" for k, v in f.items()) + "\n")
        return "\n".join(out)
    # Many flows: one line each, as a list at the top (TOML puts a file's
    # own keys before its first table).
    listed = ["flows = ["] + [f"  {_value(f)}," for f in flows] + ["]"]
    return "\n".join(out[: len(comments)] + listed + out[len(comments) :])
