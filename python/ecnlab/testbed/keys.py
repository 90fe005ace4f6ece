"""What `ecnlab testbed` does with every key of an experiment file: each
key the engine accepts (declared in crates/ecnlab/src/config/ and in the
schemes' own files; `ecnlab keys` lists them all) is honoured (the
testbed builds what it says), irrelevant (it changes nothing on a star of
real hosts, nor in the simulator's star), or refused when it differs from
the engine's default — the testbed's kernel TCP or switch does not do what
it asks, and silently running something else would pass for a result.

Values are compared in the engine's resolved form, so a key filled in by a
profile counts as set, and a default spelt out in the file does not. Every
key of a port scheme (a marking scheme's, a scheduler's, a discipline's) is
honoured unless listed otherwise below: the switch builds each port with
the engine's own queue discipline, so a scheme added to the engine's
registry runs here too. Any other key not listed here (one added to the
engine later) is refused whenever it is not at its default, until someone
decides what the testbed does with it.

`transport.profile = "linux"` and the Linux stack's keys are honoured where
their value is the kernel's own (or a namespace sysctl makes it so) and
refused otherwise: kernel_stack.py judges them.
"""

from __future__ import annotations

import functools
from typing import Any

from ..errors import ConfigError
from ..runner import resolve
from ..units import parse_time
from . import kernel_stack

__all__ = ["HONOURED", "IRRELEVANT", "REFUSED", "check_keys", "engine_defaults"]

HONOURED: dict[str, str] = {
    "run.seed": "serial flows' exponential gaps, incast jitter and the switch's random markers "
    "draw from it (with their own generators, not the simulator's draws)",
    "run.duration": "the agents stop sending at its end; required",
    "run.warmup": "left out of goodput and RTT statistics",
    "run.sample_interval": "the switch samples its queues this often (100us or more)",
    "run.goodput_interval": "the agents read the kernel's in-order byte count this often "
    "(1ms or more)",
    "run.sample_ports": '"auto", "all" and "hosts" sample every switch port (all face hosts '
    'in a star), "none" none; a list of ports is refused',
    "run.fct_end": '"receiver": the receiving agent has read the last byte; "sender": the '
    "sender has the receiver's one-byte answer to it",
    "topology.kind": 'only "star" (one switch process)',
    "topology.hosts": "one namespace and agent each, at most MAX_HOSTS",
    "topology.link_rate": "every switch port's token bucket and every host's uplink (a tbf on "
    "its veth, uplink.py); one rate for all links",
    "topology.link_delay": "added at every switch port after the bucket, twice: the frame's "
    "uplink and downlink",
    "topology.host_delay": "added to link_delay",
    "transport.cc": '"ecn-star": the kernel\'s reno (or cubic) with net.ipv4.tcp_ecn = 1; '
    '"reno": ECN off; "cubic": the kernel\'s cubic, ECN off; '
    '"dctcp": the kernel\'s, where it has it',
    "transport.init_cwnd": "the route's initcwnd",
    "transport.min_rto": "the route's rto_min",
    "transport.delayed_ack": "1 only: the route's quickack (an ACK per segment)",
    "transport.linux_delayed_ack": "the routes leave quickack out: the kernel's own delayed "
    "ACKs, the rules the key models (quick ACKs at the start and after idle, every second "
    "full segment, a short segment at once, a 40 ms timer)",
    "transport.slow_start_restart": "net.ipv4.tcp_slow_start_after_idle",
    "transport.host_queue_limit": "each host's net.ipv4.tcp_limit_output_bytes: the kernel's "
    "TCP small queues hold a connection back while that many bytes of its frames wait in its "
    "host's emulated NIC queue (the kernel counts a frame's buffer, not its wire bytes)",
    "transport.ect_retransmits": "the kernel's reno and cubic send retransmissions Not-ECT "
    "(RFC 3168), its dctcp ECT; a value other than the kernel's is refused where the switch "
    "drops Not-ECT packets (drop_not_ect, red, codel)",
}
HONOURED["transport.max_rto"] = (
    f"{kernel_stack.RTO_MAX_SYSCTL} in each namespace (Linux 6.15 and later; 1s to 120s); "
    "a kernel without it keeps TCP_RTO_MAX (120s) and refuses other values than it and the "
    "default"
)
HONOURED["transport.tlp_delack"] = (
    "only at min_rto: the kernel adds the route's rto_min to a lone segment's probe timeout"
)
for _key, _kernel in kernel_stack.KERNEL.items():
    HONOURED[f"transport.{_key}"] = (
        f"at {_kernel.value!r}, what the kernel does ({_kernel.how}); left out, the kernel's "
        "own anyway" + ("; false turns it off" if _kernel.off else "; other values refused")
    )
for _key in "src dst service count size start stop serial serial_gap serial_gap_kind".split():
    HONOURED[f"flows.{_key}"] = "the sending host's agent"
for _key in "src dst service interval start size".split():
    HONOURED[f"ping.{_key}"] = "ICMP echoes with the service's DSCP, kernel timestamps"
for _key in "receiver senders block rounds service start request_gap response_jitter".split():
    HONOURED[f"incast.{_key}"] = "the receiver's and senders' agents"

IRRELEVANT: dict[str, str] = {
    "run.lazy_departures": "the simulator's bookkeeping of departures; the switch's are real",
    "run.max_output": "a budget on the simulator's outputs; a testbed run writes a few MB",
    "run.threads": "the simulator's threads; the testbed's kernels and switch run in real time",
    "run.partitions": "how the simulator cuts a fabric for its threads; a star has one part",
    "host.jitter": "the simulator's stand-in for real hosts' timing noise; the testbed's hosts "
    "have their own",
    "topology.preset": "leaf-spine presets; the engine refuses them on a star",
    "topology.uplink_rate": "no switch-to-switch links in a star (the engine refuses it there)",
    "topology.leaves": "leaf-spine's (the engine refuses it on a star)",
    "topology.spines": "leaf-spine's (the engine refuses it on a star)",
    "topology.hosts_per_leaf": "leaf-spine's (the engine refuses it on a star)",
    "topology.k": "fat-tree's (the engine refuses it on a star)",
    "topology.ecmp": "a star has one path between two hosts",
    "transport.delayed_ack_timeout": "with delayed_ack = 1 no ACK waits for it; with "
    "linux_delayed_ack the kernel's timer, which starts at TCP_ATO_MIN (40 ms): another "
    "value is refused",
    "switch.mlecn_levels": "ML-ECN's (marking ml-ecn is refused; the engine refuses it otherwise)",
    "fabric": "overrides for switch-to-switch ports, which a star has none of",
    "switch.recipe": "a name for the values it fills in, each judged here as its own key "
    "(values are compared in the resolved form)",
}

_KERNEL_TCP = "the testbed runs the kernel's TCP, which"
_HOSTS = (
    "the simulator's host batching and ML-ECN tags; the testbed's hosts are kernel stacks "
    "with their own (TSO off on the veths, the kernel's GSO and GRO), not set per run"
)
_STAGES = (
    "ML-ECN's classes by stage tag (host.stages), which the kernel's TCP does not set: "
    "the switch classifies by DSCP (the flow's service) only"
)
REFUSED: dict[str, str] = {
    "run.pcap": "the testbed's switch writes no packet captures",
    "run.trace_ports": "the testbed's switch writes no trace table",
    "run.trace_from": "the testbed's switch writes no trace table",
    "run.trace_to": "the testbed's switch writes no trace table",
    "run.trace_cwnd": "the testbed's hosts run the kernel's TCP, whose windows it does not record",
    "switch.small_queues": _STAGES,
    "switch.medium_queues": _STAGES,
    "switch.large_queues": _STAGES,
    "switch.small_stages": _STAGES,
    "switch.medium_stages": _STAGES,
    "switch.large_stages": _STAGES,
    "switch.fq_flows": 'FQ-CoDel\'s (switch.qdisc = "fq-codel" is refused)',
    "switch.fq_quantum": 'FQ-CoDel\'s (switch.qdisc = "fq-codel" is refused)',
    "switch.fq_limit": 'FQ-CoDel\'s (switch.qdisc = "fq-codel" is refused)',
    "transport.clock_granularity": f"{_KERNEL_TCP} times in its own jiffies",
    "transport.rx_window": "the agents' 8 MB socket buffers: the kernel's receive window "
    "never limits a flow, and no per-run cap is set",
    "transport.max_cwnd": f"{_KERNEL_TCP} gets no per-run cwnd cap",
    "transport.ca": f"{_KERNEL_TCP} grows cwnd its own way (reno: RFC 5681's standard)",
    "transport.mss": "the veths' MTU is 1500 bytes: the kernel sends 1448-byte payloads with "
    "52 bytes of IP and TCP headers (timestamps), the same 1500-byte packets as the default",
    "transport.header": "the veths' MTU is 1500 bytes: the kernel sends 1448-byte payloads "
    "with 52 bytes of IP and TCP headers (timestamps), the same 1500-byte packets as the "
    "default",
    "transport.delayed_ack_bytes": f"{_KERNEL_TCP} acknowledges every segment (quickack)",
    "transport.dctcp_g": "Linux's dctcp takes g from a module parameter of the whole machine "
    "(dctcp_shift_g, default 4: g = 1/16), not per run",
    "transport.dctcp_alpha_init": "Linux's dctcp takes its initial alpha from a module "
    "parameter of the whole machine (dctcp_alpha_on_init, default 1), not per run",
    "transport.cubic_beta": "Linux's cubic takes beta from a module parameter of the whole "
    "machine (beta, default 717/1024 = 0.7), not per run",
    "transport.cubic_c": "Linux's cubic takes C from a module parameter of the whole machine "
    "(bic_scale, default 41: C = 0.4), not per run",
    "transport.cubic_fast_convergence": "Linux's cubic takes it from a module parameter of the "
    "whole machine (fast_convergence, default on), not per run",
    "workload": "workloads are not in the testbed yet (one agent per host runs [[flows]], "
    "[[incast]] and [[ping]])",
    "nic": "each host's NIC queue is the kernel's token bucket filter on its veth, one FIFO at "
    "the link rate that marks nothing (uplink.py): the engine's NIC disciplines do not run there",
    "flows.rate": "rate-limited flows are not in the testbed yet",
    "switch.buffer_policy": "the testbed's switch gives each port its own buffer; the shared "
    "buffer and PFC run in the simulator only",
    "switch.pfc": "the testbed's switch sends no PAUSE frames and veth ignores them; PFC runs "
    "in the simulator only",
    "flows.cc": "a congestion control per [[flows]] entry is not in the testbed yet (the hosts "
    "run transport.cc)",
    "flows.ect1": "the kernel's TCP sends ECT(0); ECT(1) (L4S) needs a scalable congestion "
    "control the testbed's kernel lacks",
    "transport.ect1": "the kernel's TCP sends ECT(0); ECT(1) (L4S) needs a scalable congestion "
    "control the testbed's kernel lacks",
}
_RDMA = "RoCEv2 queue pairs need RDMA NICs, which network namespaces and veth do not have"
for _key in (
    "dcqcn_g dcqcn_alpha_timer dcqcn_increase_timer dcqcn_byte_counter dcqcn_f dcqcn_rai "
    "dcqcn_rhai dcqcn_min_rate dcqcn_cnp_interval dcqcn_decrease_interval dcqcn_clamp_target "
    "dcqcn_hyper_grows dcqcn_alpha_init rdma_ack_bytes rdma_nack_gap rdma_go_back "
    "rdma_timeout rdma_window rdma_bdp_window rdma_var_window rdma_base_rtt rdma_ack_service "
    "hpcc_eta hpcc_max_stage hpcc_rai hpcc_min_rate hpcc_fast_react hpcc_sample_feedback "
    "hpcc_int_multi hpcc_int_bytes timely_t_low timely_t_high timely_alpha timely_beta "
    "timely_min_rtt timely_rai timely_rhai timely_hai_after timely_min_rate rdma_dctcp_g "
    "rdma_dctcp_rai rdma_dctcp_min_rate"
).split():
    REFUSED[f"transport.{_key}"] = _RDMA
for _key in ("switches", "hosts_per_switch"):
    REFUSED[f"topology.{_key}"] = "the testbed builds stars (a ring is in the simulator only)"
for _key in ("links", "switch_names"):
    REFUSED[f"topology.{_key}"] = "the testbed builds stars (a graph is in the simulator only)"
for _key in (
    "lso lso_max lso_fraction lso_defer_limit lso_defer_in_cwr interrupt_coalescing "
    "interrupt_frames gro gro_max stages stage_by ect_stages"
).split():
    REFUSED[f"host.{_key}"] = _HOSTS

_SWITCH = "the engine's own queue discipline on every switch port"

KERNEL_CUBIC: dict[str, Any] = {
    "cubic_beta": 0.7,
    "cubic_c": 0.4,
    "cubic_fast_convergence": True,
}
"""Linux's cubic module parameters at their defaults (beta 717/1024, bic_scale
41, fast_convergence 1), as the engine's CUBIC keys: a run at these values
runs the kernel's cubic as it is."""


def _port_keys() -> list[str]:
    """Every key of [switch] and of every port scheme, from the engine's
    declarations (`ecnlab keys switch`)."""
    from ..keys import catalog

    return [
        f"switch.{p['key']}" for g in catalog() if g["section"] == "switch" for p in g["params"]
    ]


# Every [switch] key the engine declares (its own and its schemes'): the
# switch process builds each port's queue discipline with the engine's own
# registry (`topology::switch_qdisc`), so each is honoured unless a table
# above says otherwise.
for _key in _port_keys():
    if _key not in IRRELEVANT and _key not in REFUSED:
        HONOURED.setdefault(_key, _SWITCH)

_SECTIONS = ("run", "topology", "switch", "transport", "host")
_ENTRIES = ("flows", "ping", "incast")
_WHOLE = ("workload", "fabric", "nic")

_MISSING = object()

_BASELINE: dict[str, Any] = {
    "run": {"duration": "1s"},
    "topology": {"kind": "star", "hosts": 3, "link_rate": "1Gbps", "link_delay": "1us"},
    "flows": [{"src": 0, "dst": 1}],
    "ping": [{"src": 0, "dst": 1, "interval": "1ms"}],
    "incast": [{"receiver": 2, "senders": 1, "block": "1KB", "rounds": 1}],
}


@functools.cache
def engine_defaults() -> dict[str, Any]:
    """A minimal star with one entry of each list, as the engine resolves
    it: every key at the engine's default."""
    return resolve(_BASELINE)


def _show(value: Any) -> str:
    """A value as the error spells it (TOML's booleans)."""
    if isinstance(value, bool):
        return str(value).lower()
    return repr(value)


def _allowed(value: Any) -> str:
    return "left out" if value is None or value is _MISSING else _show(value)


def _refuse(key: str, value: Any, why: str, allowed: str) -> ConfigError:
    return ConfigError(f"{key} = {_show(value)}: {why}; allowed: {allowed}")


def _check(key: str, pattern: str, value: Any, default: Any) -> None:
    """Refuse ``value`` of ``key`` (``pattern``: its name in the tables, no
    index) unless the key is honoured, irrelevant or at its default."""
    if pattern in HONOURED or pattern in IRRELEVANT or value == default:
        return
    why = REFUSED.get(pattern, "a key ecnlab testbed does not act on")
    if pattern in _WHOLE:
        raise ConfigError(f"[{key}] is given: {why}; allowed: no [{key}] section")
    shown = None if value is _MISSING else value
    raise _refuse(key, shown, why, _allowed(default))


KERNEL_ATO_MIN = 40e-3
"""Linux's TCP_ATO_MIN: where its delayed-ACK timer starts (seconds)."""
MIN_SAMPLE_INTERVAL = 100e-6
"""The switch samples its queues no more often (its report is JSON)."""
MIN_GOODPUT_INTERVAL = 1e-3
"""The agents read the kernel's byte counts no more often."""
SAMPLE_PORTS = ("auto", "all", "hosts", "none")
_DROPS_NOT_ECT = ("red", "codel")
"""Markings that drop a Not-ECT packet where they would mark an ECT one."""


def _check_values(cfg: dict[str, Any], kernel_cc: str) -> None:
    """The honoured keys whose every value the testbed cannot take."""
    run, switch, transport = cfg["run"], cfg["switch"], cfg["transport"]
    for key, least, text, why in (
        ("sample_interval", MIN_SAMPLE_INTERVAL, "100us", "the switch samples its queues"),
        (
            "goodput_interval",
            MIN_GOODPUT_INTERVAL,
            "1ms",
            "the agents read the kernel's byte counts",
        ),
    ):
        if parse_time(run[key]) < least - 1e-12:
            raise _refuse(f"run.{key}", run[key], f"{why} no more often", f"{text} or more")
    ports = run["sample_ports"]
    if not isinstance(ports, str) or ports not in SAMPLE_PORTS:
        raise _refuse(
            "run.sample_ports",
            ports,
            "the switch samples all its ports or none",
            ", ".join(f'"{p}"' for p in SAMPLE_PORTS),
        )
    qdisc = switch.get("qdisc", "composed")
    if qdisc != "composed":
        why = {
            "fq-codel": "the switch does not tell one host pair's connections apart (its "
            "frames carry no flow id), so FQ-CoDel's per-flow queues would be per host pair",
            "pfabric": "pFabric's priorities are the bytes a flow has left, which the "
            "kernel's TCP does not carry in its packets",
        }.get(qdisc, "a discipline the testbed does not know")
        raise _refuse("switch.qdisc", qdisc, why, "'composed' (left out)")
    if switch["marking"] == "ml-ecn":
        raise _refuse("switch.marking", "ml-ecn", _STAGES, "any other marking")
    if (
        transport.get("linux_delayed_ack")
        and abs(parse_time(transport["delayed_ack_timeout"]) - KERNEL_ATO_MIN) > 1e-9
    ):
        raise _refuse(
            "transport.delayed_ack_timeout",
            transport["delayed_ack_timeout"],
            "with linux_delayed_ack the kernel's own delayed-ACK timer runs, which starts at "
            "TCP_ATO_MIN and is not set per route",
            '"40ms"',
        )
    if int(transport["delayed_ack"]) != 1:
        raise _refuse(
            "transport.delayed_ack",
            transport["delayed_ack"],
            f"{_KERNEL_TCP} delays ACKs by its own rules (about every second segment, a "
            "40 ms timer), not every n-th packet",
            "1 (quickack: an ACK per segment, the papers' setting)",
        )
    # Linux sends a retransmission ECT only under a congestion control that
    # asks for ECN (tcp_ca_needs_ecn: dctcp); reno and cubic follow RFC
    # 3168. Where the switch treats the two alike but for the CE mark
    # itself (a mark on a retransmission the kernel would not carry), the
    # difference is one echo; where it drops Not-ECT packets it is a loss.
    if transport["cc"] != "reno":
        kernel_ect = kernel_cc == "dctcp"
        drops = bool(switch["drop_not_ect"]) or switch["marking"] in _DROPS_NOT_ECT
        drops = drops or (switch["marking"] == "mq-ecn" and switch.get("red_min") is not None)
        if drops and bool(transport["ect_retransmits"]) != kernel_ect:
            raise _refuse(
                "transport.ect_retransmits",
                transport["ect_retransmits"],
                f"the kernel's {kernel_cc} sends retransmissions "
                + ("ECT" if kernel_ect else "Not-ECT (RFC 3168)")
                + ", and this switch drops Not-ECT packets where it marks ECT ones",
                _show(kernel_ect),
            )


def check_keys(
    cfg: dict[str, Any],
    kernel_cc: str = "reno",
    *,
    uplinks: bool = True,
    rto_max: bool | None = None,
) -> dict[str, str]:
    """Raise :class:`ConfigError` for the first key of resolved config
    ``cfg`` that the testbed would not honour: its name, its value, why
    and what is allowed. ``kernel_cc``: the kernel congestion control the
    hosts will run; ``uplinks``: whether the hosts' uplinks are emulated
    (without them no NIC queue exists for host_queue_limit to bound);
    ``rto_max``: whether the kernel has net.ipv4.tcp_rto_max_ms (None: look).
    Returns the namespace sysctls the Linux stack's keys ask for
    (kernel_stack.py)."""
    _check_values(cfg, kernel_cc)
    base = engine_defaults()
    if rto_max is None:
        rto_max = kernel_stack.rto_max_settable()
    sysctls = kernel_stack.check(cfg["transport"], base["transport"]["max_rto"], rto_max=rto_max)
    if not uplinks:
        key = "transport.host_queue_limit"
        value, default = (
            cfg["transport"].get("host_queue_limit"),
            base["transport"]["host_queue_limit"],
        )
        if value != default:
            raise _refuse(
                key,
                value,
                "with the uplinks not emulated a veth hands each frame to "
                "the switch at once: no NIC queue to bound",
                _allowed(default),
            )
    for whole in _WHOLE:
        _check(whole, whole, cfg.get(whole), base.get(whole))
    for section in _SECTIONS:
        given, default = cfg.get(section) or {}, base.get(section) or {}
        for name in sorted(set(given) | set(default)):
            value = given.get(name, _MISSING)
            expected = default.get(name, _MISSING)
            if section == "transport" and name in KERNEL_CUBIC:
                # Resolved only for cc = "cubic", at RFC 9438's values,
                # which are the kernel module's defaults.
                expected = KERNEL_CUBIC[name]
            _check(f"{section}.{name}", f"{section}.{name}", value, expected)
    for section in _ENTRIES:
        (default,) = base[section]
        for i, entry in enumerate(cfg.get(section) or []):
            for name in sorted(set(entry) | set(default)):
                value = entry.get(name, _MISSING)
                _check(
                    f"{section}[{i}].{name}",
                    f"{section}.{name}",
                    value,
                    default.get(name, _MISSING),
                )
    return sysctls
