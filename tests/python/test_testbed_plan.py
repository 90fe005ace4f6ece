"""`ecnlab testbed`'s plan and output tables, without building anything:
these run everywhere (the runs themselves are in
tests/scenarios/test_testbed.py, which needs root)."""

from __future__ import annotations

from typing import Any

import pytest

import ecnlab
from ecnlab.runner import resolve, table_schemas
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
