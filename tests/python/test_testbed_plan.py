"""`ecnlab testbed`'s plan and output tables, without building anything:
these run everywhere (the runs themselves are in
tests/scenarios/test_testbed.py, which needs root)."""

from __future__ import annotations

from typing import Any

import pytest

import ecnlab
from ecnlab.keys import catalog
from ecnlab.runner import resolve, table_schemas
from ecnlab.testbed.keys import HONOURED, IRRELEVANT, REFUSED, check_keys, engine_defaults
from ecnlab.testbed.outputs import engine_table
from ecnlab.testbed.plan import make_plan


def _config(**incast: Any) -> dict[str, Any]:
    return {
        "run": {"duration": "1s", "seed": 3},
        "topology": {"kind": "star", "hosts": 5, "link_rate": "200Mbps", "link_delay": "10us"},
        "switch": {"buffer": "1MB", "queues": 2},
        "transport": {"cc": "ecn-star"},
        "flows": [{"src": 0, "dst": 1, "size": "10KB", "count": 2}],
        "incast": [{"receiver": 2, "senders": 3, "block": "8KB", "rounds": 4, **incast}],
    }


def _plan(cfg: dict[str, Any]) -> Any:
    return make_plan(resolve(cfg))


def test_an_incast_group_has_the_simulators_senders_and_flow_ids() -> None:
    plan = _plan(_config(service=1, start="2ms", request_gap="5us"))
    (g,) = plan.incasts
    # A count of senders: the first hosts other than the receiver (as the
    # engine's Config::incast_senders), flow ids after the two [[flows]].
    assert g["senders"] == [0, 1, 3] and g["ids"] == [2, 3, 4]
    assert (g["block"], g["rounds"], g["service"]) == (8000, 4, 1)
    assert g["start"] == pytest.approx(2e-3) and g["request_gap"] == pytest.approx(5e-6)
    assert g["jitter"] == []  # no response_jitter: none drawn
    kinds = [(r["id"], r["src"], r["dst"], r["kind"]) for r in plan.flow_rows()]
    assert kinds == [
        (0, 0, 1, "sized"),
        (1, 0, 1, "sized"),
        (2, 0, 2, "incast"),
        (3, 1, 2, "incast"),
        (4, 3, 2, "incast"),
    ]
    # The simulator numbers the same flows the same way.
    sim = ecnlab.run(_config())
    rows = sim["flows"].to_pylist()
    assert [(r["id"], r["src"], r["dst"], r["kind"]) for r in rows] == kinds


def test_response_jitter_is_drawn_per_sender_and_round_from_the_seed() -> None:
    jitter = 100e-6
    a = _plan(_config(response_jitter="100us")).incasts[0]["jitter"]
    b = _plan(_config(response_jitter="100us")).incasts[0]["jitter"]
    other = _config(response_jitter="100us")
    other["run"]["seed"] = 4
    c = _plan(other).incasts[0]["jitter"]
    assert len(a) == 4 and all(len(row) == 3 for row in a)
    # Uniform in [0, response_jitter), a new draw for each sender each
    # round, the same for one seed and not for another.
    flat = [x for row in a for x in row]
    assert all(0 <= x < jitter for x in flat) and len(set(flat)) == 12
    assert a == b and a != c


def test_an_explicit_sender_list_is_kept_in_its_order() -> None:
    g = _plan(_config(senders=[4, 0])).incasts[0]
    assert g["senders"] == [4, 0] and g["ids"] == [2, 3]


def test_slow_start_restart_follows_the_transport_key() -> None:
    # Off in the simulator unless asked for; Linux's default is on.
    assert _plan(_config()).sysctls["net.ipv4.tcp_slow_start_after_idle"] == "0"
    on = _config()
    on["transport"]["slow_start_restart"] = True
    assert _plan(on).sysctls["net.ipv4.tcp_slow_start_after_idle"] == "1"


def test_testbed_tables_take_the_engines_columns_and_types() -> None:
    schemas = table_schemas()
    assert {"flows", "goodput", "queues", "rtt", "ports", "incast"} <= set(schemas)
    rows = {"round": [1], "start": [0.0], "finish": [0.02], "goodput_gbps": [0.18]}
    t = engine_table("incast", rows)
    assert t.schema == schemas["incast"]
    # The simulator's own incast table has that schema.
    sim = ecnlab.run(_config())
    assert sim["incast"].schema == schemas["incast"]
    with pytest.raises(ValueError, match=r"table 'incast': columns \['round', 'start'\]"):
        engine_table("incast", {"round": [1], "start": [0.0]})


def test_serial_flows_form_a_chain_with_the_entrys_pauses() -> None:
    cfg = _config()
    cfg["flows"] = [
        {"src": 0, "dst": 1, "size": "10KB", "count": 3, "serial": True, "serial_gap": "2ms"},
        {"src": 1, "dst": 0, "size": "10KB", "count": 400, "serial": True, "serial_gap": "1ms"},
    ]
    cfg["flows"][1]["serial_gap_kind"] = "exponential"
    plan = _plan(cfg)
    fixed = [f for f in plan.flows if f["chain"] == 0]
    # The first opens at the entry's start, each next one 2 ms after the
    # one before it completed.
    assert [f["pause"] for f in fixed] == pytest.approx([0.0, 2e-3, 2e-3])
    # Exponential pauses with mean serial_gap: 399 draws, mean within 15%
    # (the standard error of the mean is 1/sqrt(399) = 5%).
    drawn = [f["pause"] for f in plan.flows if f["chain"] == 1][1:]
    assert abs(sum(drawn) / len(drawn) - 1e-3) < 0.15e-3
    assert drawn == [f["pause"] for f in _plan(cfg).flows if f["chain"] == 1][1:]


def test_rate_limited_flows_are_refused_naming_the_key() -> None:
    cfg = _config()
    cfg["flows"][0]["rate"] = "10Mbps"
    with pytest.raises(ecnlab.ConfigError, match=r"flows\[0\]\.rate = '10Mbps': rate-limited"):
        _plan(cfg)


# ------------------------------------------------------------ config keys

# One clear line per key the testbed cannot honour: the key, its value, why
# and what is allowed (tests/scenarios/test_testbed.py checks the topology,
# cc and host-count refusals on a real run).
REFUSALS = [
    (("transport", "max_cwnd", 100), "transport.max_cwnd = 100: ", "allowed: left out"),
    (("transport", "rx_window", 50), "transport.rx_window = 50: ", "allowed: left out"),
    (("transport", "dctcp_g", 0.1), "transport.dctcp_g = 0.1: ", "allowed: 0.0625"),
    (("transport", "dctcp_alpha_init", 0.0), "transport.dctcp_alpha_init = 0.0: ", "1.0"),
    (("transport", "delayed_ack", 2), "transport.delayed_ack = 2: ", "allowed: 1 "),
    (("transport", "delayed_ack_bytes", True), "transport.delayed_ack_bytes = true: ", "false"),
    (("transport", "clock_granularity", "1us"), "transport.clock_granularity = '1us': ", ""),
    (("transport", "ca", "basic"), "transport.ca = 'basic': ", "allowed: 'standard'"),
    (("transport", "mss", 9000), "transport.mss = 9000: the veths' MTU", "allowed: 1460"),
    # Beyond what the kernel's sysctl takes (or, on a kernel without it,
    # other than its TCP_RTO_MAX): refused either way.
    (("transport", "max_rto", "200s"), "transport.max_rto = '200s': ", '"120s"'),
    # The kernel's TCP_TIMEOUT_INIT, or the default (min_rto, 10ms here).
    (("transport", "init_rto", "1ms"), "transport.init_rto = '1ms': ", "'1s' (the kernel's)"),
    (("transport", "init_rto", "1ms"), "transport.init_rto = '1ms': ", "'10ms' (left out)"),
    # A profile other than the kernel's own is named.
    (("transport", "profile", "pfabric"), "transport.profile = 'pfabric': ", "'linux'"),
    (("host", "lso", True), "host.lso = true: ", "allowed: false"),
    # RDMA transports need RoCE NICs, which veth is not.
    (("transport", "cc", "hpcc"), "transport.cc = 'hpcc': RoCEv2 queue pairs need RDMA", "reno"),
    (("transport", "cc", "timely"), "transport.cc = 'timely': RoCEv2", "dctcp"),
    # (GRO needs receive batching: the engine's own rule.)
    (("host", None, {"gro": True, "interrupt_coalescing": "1us"}), "host.gro = true: ", "false"),
    (("host", "interrupt_coalescing", "10us"), "host.interrupt_coalescing = '10us': ", "'0s'"),
    (("host", "stages", ["100KB"]), "host.stages = ['100000B']: ", "allowed: []"),
    (("switch", None, {"qdisc": "fq-codel"}), "switch.qdisc = 'fq-codel': ", "'composed'"),
    (("run", "pcap", ["switch:host1"]), "run.pcap = ['switch:host1']: ", "left out"),
    (("run", "trace_ports", ["switch:host1"]), "run.trace_ports = ", ""),
    (("run", "sample_interval", "10us"), "run.sample_interval = '10us': ", "100us or more"),
    (("run", "goodput_interval", "100us"), "run.goodput_interval = '100us': ", "1ms or more"),
    (("run", "sample_ports", ["switch:host1"]), "run.sample_ports = ['switch:host1']: ", '"none"'),
    (
        ("workload", None, {"kind": "poisson", "load": 0.3, "flows": 10}),
        "[workload] is given: ",
        "",
    ),
    (("nic", None, {}), "[nic] is given: each host's NIC queue is the kernel's token", ""),
]


def _star(**sections: Any) -> dict[str, Any]:
    cfg: dict[str, Any] = {
        "run": {"duration": "1s"},
        "topology": {"kind": "star", "hosts": 3, "link_rate": "200Mbps", "link_delay": "10us"},
        "switch": {"queues": 2, "marking": "per-queue", "threshold": "16pkt"},
        "transport": {"cc": "ecn-star", "min_rto": "10ms"},
        "flows": [{"src": 0, "dst": 2}],
    }
    for name, keys in sections.items():
        cfg[name] = {**cfg.get(name, {}), **keys} if isinstance(keys, dict) else keys
    return cfg


def _set(section: str, key: str | None, value: Any) -> dict[str, Any]:
    """The star with one key set, or (key None) one whole section."""
    cfg = _star()
    if key is None:
        cfg[section] = value
    else:
        cfg.setdefault(section, {})[key] = value
    return cfg


@pytest.mark.parametrize(("setting", "starts", "allowed"), REFUSALS)
def test_an_unhonoured_key_is_refused_naming_key_value_and_what_is_allowed(
    setting: tuple[str, str | None, Any], starts: str, allowed: str
) -> None:
    with pytest.raises(ecnlab.ConfigError) as err:
        _plan(_set(*setting))
    text = str(err.value)
    assert text.startswith(starts), text
    assert "\n" not in text and "allowed: " in text and allowed in text, text


def test_keys_at_their_defaults_or_honoured_are_accepted() -> None:
    # Defaults spelt out are not "set"; honoured keys take their values;
    # irrelevant ones ([fabric] in a star, delayed_ack_timeout with an ACK
    # per segment) change nothing and are let through.
    cfg = _star(
        transport={"mss": 1460, "max_rto": "60s", "init_rto": "10ms", "delayed_ack": 1},
        host={"lso": False, "gro_max": "64KB"},
        run={"sample_ports": "none", "fct_end": "sender", "lazy_departures": False},
        fabric={"marking": "per-port", "threshold": "16pkt"},
    )
    cfg["transport"]["delayed_ack_timeout"] = "40ms"
    plan = _plan(cfg)
    assert plan.sample_interval == 0.0 and plan.fct_end == "sender"
    assert plan.route_options[-2:] == ["quickack", "1"]
    # The congestion control is the route's (congctl): a namespace may set
    # the sysctl default only to one the machine allows there.
    assert plan.route_options[-4:-2] == ["congctl", "reno"]
    assert "net.ipv4.tcp_congestion_control" not in plan.sysctls
    cubic = _plan(_star(transport={"cc": "cubic"}))
    assert cubic.route_options[-4:-2] == ["congctl", "cubic"] and cubic.kernel_cc == "cubic"


def test_linux_delayed_acks_are_the_kernels_own() -> None:
    # transport.linux_delayed_ack models the kernel's receive rules, so the
    # testbed runs them by leaving the routes' quickack out; its timer
    # starts at TCP_ATO_MIN (40 ms) and cannot be set per route.
    plan = _plan(_star(transport={"linux_delayed_ack": True, "delayed_ack_timeout": "40ms"}))
    assert "quickack" not in plan.route_options
    assert _plan(_star()).route_options[-2:] == ["quickack", "1"]
    with pytest.raises(ecnlab.ConfigError) as e:
        _plan(_star(transport={"linux_delayed_ack": True, "delayed_ack_timeout": "1ms"}))
    text = str(e.value)
    assert "transport.delayed_ack_timeout" in text and '"40ms"' in text, text


def test_host_queue_limit_bounds_the_kernels_tcp_small_queues() -> None:
    # The hosts' uplinks are emulated (uplink.py): each connection may have
    # host_queue_limit bytes waiting in its host's NIC queue, which the
    # kernel's TSQ enforces with net.ipv4.tcp_limit_output_bytes (the
    # behaviour itself: tests/scenarios/test_testbed.py).
    assert _plan(_star()).sysctls["net.ipv4.tcp_limit_output_bytes"] == "3000"
    plan = _plan(_star(transport={"host_queue_limit": "30KB"}))
    assert plan.uplinks and plan.sysctls["net.ipv4.tcp_limit_output_bytes"] == "30000"
    # Without the uplinks (a comparison run) there is no NIC queue to bound:
    # the default is let through, another value refused.
    bare = make_plan(resolve(_star()), uplinks=False)
    assert not bare.uplinks and "net.ipv4.tcp_limit_output_bytes" not in bare.sysctls
    with pytest.raises(ecnlab.ConfigError) as err:
        make_plan(resolve(_star(transport={"host_queue_limit": "30KB"})), uplinks=False)
    text = str(err.value)
    assert text.startswith("transport.host_queue_limit = '30000B': with the uplinks not"), text
    assert text.endswith("allowed: '3000B'"), text


def test_ect_retransmits_is_refused_only_where_the_switch_drops_not_ect() -> None:
    # The kernel's reno sends retransmissions Not-ECT (RFC 3168); the
    # engine's default is ECT. Threshold marking treats the two alike but
    # for the mark itself: accepted. drop_not_ect drops what the simulator
    # would have marked: refused, naming the kernel's value.
    _plan(_star())
    with pytest.raises(ecnlab.ConfigError) as err:
        _plan(_star(switch={"drop_not_ect": True}))
    text = str(err.value)
    assert text.startswith("transport.ect_retransmits = true: the kernel's reno sends"), text
    assert text.endswith("allowed: false"), text
    _plan(_star(switch={"drop_not_ect": True}, transport={"ect_retransmits": False}))


def test_ml_ecn_and_ping_sizes_beyond_the_mtu_are_refused() -> None:
    mlecn = _star(
        switch={
            "queues": 3,
            "marking": "ml-ecn",
            "small_queues": [0],
            "medium_queues": [1],
            "large_queues": [2],
        },
        host={"stages": ["100KB", "10MB"]},
    )
    with pytest.raises(ecnlab.ConfigError, match=r"^switch\.marking = 'ml-ecn': ML-ECN's classes"):
        _plan(mlecn)
    big = _star(ping=[{"src": 0, "dst": 1, "interval": "1ms", "size": "9000B"}])
    with pytest.raises(ecnlab.ConfigError, match=r"^ping\[0\]\.size = '9000B': .*28B to 1500B"):
        _plan(big)


def test_every_engine_key_is_classified_once() -> None:
    # Every key the engine declares (each section's and each scheme's, as
    # `ecnlab keys` lists them) is honoured, irrelevant or refused-unless-
    # default; a key the engine gains later shows up here until it is
    # classified (a port scheme's keys are honoured by construction).
    honoured, irrelevant, refused = set(HONOURED), set(IRRELEVANT), set(REFUSED)
    assert not (honoured & irrelevant or honoured & refused or irrelevant & refused)
    declared = {"workload", "fabric", "nic"}
    for g in catalog():
        if g["section"] in ("workload",):
            continue
        declared |= {f"{g['section']}.{p['key']}" for p in g["params"]}
    assert declared == honoured | irrelevant | refused, (
        sorted(declared - (honoured | irrelevant | refused)),
        sorted((honoured | irrelevant | refused) - declared),
    )
    # The resolved form shows no key the declarations lack.
    base = engine_defaults()
    for section in ("run", "topology", "switch", "transport", "host"):
        assert {f"{section}.{k}" for k in base[section]} <= declared, section


def test_a_key_the_testbed_does_not_know_is_refused_unless_at_its_default() -> None:
    cfg = resolve(_star())
    check_keys(cfg)
    cfg["transport"]["future_knob"] = 3
    with pytest.raises(ecnlab.ConfigError, match=r"^transport\.future_knob = 3: a key ecnlab"):
        check_keys(cfg)


# ------------------------------------------------- the linux profile's keys

# The testbed's hosts run Linux's TCP, so `transport.profile = "linux"` and
# the keys it fills describe the kernel's own stack (kernel_stack.py): the
# kernel's value is taken, a value a namespace sysctl can give is set, any
# other is refused naming what the kernel does.


def _linux(rto_max: bool = True, **transport: Any) -> Any:
    """The star (ecn-star) with the profile, its min_rto the profile's."""
    cfg = _star()
    cfg["transport"] = {"cc": "ecn-star", "profile": "linux", **transport}
    return make_plan(resolve(cfg), rto_max=rto_max)


def test_the_linux_profile_runs_the_kernels_own_stack() -> None:
    plan = _linux()
    # Linux's TCP_RTO_MIN 200 ms and TCP_INIT_CWND 10 on the route; its
    # delayed ACKs (no quickack); the ECN reno asked for (cc given).
    assert plan.route_options == [
        *("rto_min", "200ms", "initcwnd", "10", "congctl", "reno"),
    ], plan.route_options
    # TCP_RTO_MAX, 120 s, set as the namespace's ceiling; TLP left as the
    # namespace's default (tcp_early_retrans 3).
    assert plan.sysctls["net.ipv4.tcp_rto_max_ms"] == "120000"
    assert "net.ipv4.tcp_early_retrans" not in plan.sysctls
    # The profile's own cc (cubic) where none is given over it.
    cfg = _star()
    cfg["transport"] = {"profile": "linux"}
    assert make_plan(resolve(cfg), rto_max=True).route_options[-2:] == ["congctl", "cubic"]
    # Its keys spelt out at the kernel's values are the same run.
    same = _linux(tlp_slack="2ms", tlp_delack="200ms", init_rto="1000ms", prr="linux", rack=True)
    assert (same.route_options, same.sysctls) == (plan.route_options, plan.sysctls)


def test_tlp_false_turns_the_kernels_tail_loss_probes_off() -> None:
    # tcp_schedule_loss_probe sends probes only with tcp_early_retrans 3 or
    # 4 (Linux tcp_output.c); 0 is the namespace's way to say tlp = false.
    assert _linux(tlp=False).sysctls["net.ipv4.tcp_early_retrans"] == "0"
    # Without the profile a key left out keeps the kernel as it is.
    assert "net.ipv4.tcp_early_retrans" not in _plan(_star()).sysctls


def test_max_rto_is_the_namespaces_rto_ceiling_where_the_kernel_has_one() -> None:
    assert _linux(max_rto="30s").sysctls["net.ipv4.tcp_rto_max_ms"] == "30000"
    # The engine's default (60 s) is set too; a kernel before 6.15 has no
    # such sysctl: its TCP_RTO_MAX (120 s) or the default runs, nothing else.
    assert make_plan(resolve(_star()), rto_max=True).sysctls["net.ipv4.tcp_rto_max_ms"] == "60000"
    for value in ("60s", "120s"):
        old = make_plan(resolve(_star(transport={"max_rto": value})), rto_max=False)
        assert "net.ipv4.tcp_rto_max_ms" not in old.sysctls
    with pytest.raises(ecnlab.ConfigError, match=r"^transport\.max_rto = '30s': this kernel"):
        make_plan(resolve(_star(transport={"max_rto": "30s"})), rto_max=False)


LINUX_REFUSALS = [
    # Values the kernel does not have (and cannot be told to have).
    ({"prr": "crb"}, "transport.prr = 'crb': the kernel always runs PRR", "'linux' (the kernel"),
    ({"tlp_slack": "8ms"}, "transport.tlp_slack = '8ms': ", "'2ms' (the kernel's)"),
    ({"init_rto": "3s"}, "transport.init_rto = '3s': ", "'1s' (the kernel's)"),
    # Turned off over the profile: the resolved form leaves the key out, and
    # the kernel cannot turn RACK or its RTO estimator off per namespace.
    ({"rack": False}, "transport.rack = false: ", "over the linux profile's value"),
    ({"linux_rto": False}, "transport.linux_rto = false: ", "true (the kernel's)"),
    # A lone segment's probe waits the kernel's minimum RTO (the route's
    # rto_min): the engine's 200 ms default does not match a 5 ms min_rto.
    ({"min_rto": "5ms"}, "transport.tlp_delack = '200ms': ", "'5ms' (transport.min_rto)"),
    ({"max_rto": "500ms"}, "transport.max_rto = '500ms': ", '"1s" to "120s"'),
]


@pytest.mark.parametrize(("keys", "starts", "allowed"), LINUX_REFUSALS)
def test_a_linux_key_the_kernel_does_not_do_is_refused(
    keys: dict[str, Any], starts: str, allowed: str
) -> None:
    with pytest.raises(ecnlab.ConfigError) as err:
        _linux(**keys)
    text = str(err.value)
    assert text.startswith(starts), text
    assert "\n" not in text and "allowed: " in text and allowed in text, text


def test_linux_keys_without_the_profile_are_judged_alike() -> None:
    # Set without the profile, the same keys: the kernel's value passes...
    plan = make_plan(
        resolve(_star(transport={"tlp": True, "tlp_delack": "10ms", "rack": True})), rto_max=True
    )
    assert plan.route_options[:2] == ["rto_min", "10ms"]
    # ...another is refused, and left out they are the kernel's as before.
    with pytest.raises(ecnlab.ConfigError, match=r"^transport\.tlp_slack = '0s': "):
        make_plan(resolve(_star(transport={"tlp_slack": "0s"})), rto_max=True)
