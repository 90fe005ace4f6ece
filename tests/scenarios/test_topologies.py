"""Leaf-spine presets, fat-tree routing, and fabric-port settings."""

from __future__ import annotations

import copy

import pytest

import ecnlab
from scenario_kit import exact, port_totals, run_checked


def base(topology: dict, flows: list[dict] | None = None, **extra: object) -> dict:
    cfg = {
        "run": {"seed": 1, "duration": "20ms", "sample_ports": "none"},
        "topology": topology,
        "switch": {"buffer": "300KB", "marking": "per-queue", "threshold": "65pkt"},
        "flows": flows or [],
    }
    cfg.update(extra)
    return cfg


def port_names(res: ecnlab.Result) -> set[tuple[str, str]]:
    return set(port_totals(res))


@pytest.mark.parametrize(
    ("preset", "leaves", "spines", "per_leaf", "up"),
    [
        ("mqecn", 12, 12, 12, 10e9),
        ("cedm", 9, 4, 16, 40e9),
        ("pfabric", 9, 4, 16, 40e9),
        ("fqcodel", 2, 4, 16, 40e9),
    ],
)
def test_presets_build_the_papers_fabrics(
    preset: str, leaves: int, spines: int, per_leaf: int, up: float
) -> None:
    res = ecnlab.run(
        base({"preset": preset}, [{"src": 0, "dst": 1, "size": "10KB"}]), progress=False
    )
    names = port_names(res)
    hosts = leaves * per_leaf
    assert ("host0", "leaf0") in names and (f"host{hosts - 1}", f"leaf{leaves - 1}") in names
    assert (f"leaf{leaves - 1}", f"spine{spines - 1}") in names
    assert f"host{hosts}" not in {n for n, _ in names}
    # Every leaf meets every spine, both ways.
    fabric = {(a, b) for a, b in names if a.startswith("leaf") and b.startswith("spine")}
    assert len(fabric) == leaves * spines


def test_preset_keys_can_be_overridden_one_by_one() -> None:
    # MQ-ECN §5.2's RTT across the spine: 8 link traversals of propagation
    # (2 × (20.2 + 0.2 + 0.2 + 20.2) us = 81.6 us) plus store-and-forward.
    cfg = base(
        {"preset": "mqecn", "leaves": 2, "hosts_per_leaf": 3},
        [{"src": 0, "dst": 5, "size": "1460B"}],
    )
    res = run_checked(exact(cfg))
    assert ("host5", "leaf1") in port_names(res)
    fct = res["flows"]["fct"].to_pylist()[0]
    path = [(10e9, 20.2e-6), (10e9, 0.2e-6), (10e9, 0.2e-6), (10e9, 20.2e-6)]
    ideal = sum(2 * (d + 40 * 8 / r) + (d + 1500 * 8 / r) for r, d in path)
    assert fct == pytest.approx(ideal, rel=1e-6)


@pytest.mark.parametrize("preset", ["fqcodel", "pfabric"])
def test_pfabric_delays(preset: str) -> None:
    """FQ-CoDel in the DCN §IV-B: 12 us of propagation per round trip between
    any two hosts, and 1.2 us per 1500 B packet at 10 Gbps. A one-packet
    flow across the spine takes its handshake (40 B SYN, SYN-ACK) and the
    data packet, each 6 us of propagation one way plus store-and-forward at
    10G, 40G, 40G, 10G (its FCT ends when the last byte arrives)."""
    hosts = 32 if preset == "fqcodel" else 144
    cfg = base({"preset": preset}, [{"src": 0, "dst": hosts - 1, "size": "1460B"}])
    res = run_checked(exact(cfg))
    fct = res["flows"]["fct"].to_pylist()[0]
    rates = (10e9, 40e9, 40e9, 10e9)
    one_way = lambda size: 6e-6 + sum(size * 8 / r for r in rates)  # noqa: E731
    assert fct == pytest.approx(2 * one_way(40) + one_way(1500), rel=1e-6)
    assert 2 * one_way(0) == pytest.approx(12e-6)
    assert one_way(1500) - one_way(0) == pytest.approx(3.0e-6)  # 1.2 + 0.3 + 0.3 + 1.2 us


def test_fat_tree_routes_every_pair() -> None:
    # k = 4: 16 hosts, 8 edge, 8 aggregation, 4 core switches. Every host
    # reaches every other one along a shortest path (2, 4 or 6 links).
    flows = [{"src": s, "dst": d, "size": "3000B"} for s in range(16) for d in range(16) if s != d]
    cfg = base({"kind": "fat-tree", "k": 4, "link_rate": "10Gbps", "link_delay": "1us"}, flows)
    res = run_checked(cfg)
    fl = res["flows"].to_pylist()
    assert all(f["bytes_received"] == 3000 for f in fl)
    names = {n for n, _ in port_names(res)}
    assert {"edge7", "agg7", "core3"} <= names and "core4" not in names
    # Same-edge pairs are fastest, cross-pod slowest (more hops).
    by = {(f["src"], f["dst"]): f["fct"] for f in fl}
    assert by[(0, 1)] < by[(0, 2)] < by[(0, 4)]


def test_fabric_ports_take_their_own_settings() -> None:
    # Host-facing ports keep [switch]; leaf-spine ports use [fabric] on top.
    topo = {
        "kind": "leaf-spine",
        "leaves": 2,
        "spines": 2,
        "hosts_per_leaf": 2,
        "link_rate": "10Gbps",
        "link_delay": "1us",
    }
    cfg = base(
        topo,
        [{"src": 0, "dst": 2}, {"src": 1, "dst": 3}],
        fabric={"marking": "none", "buffer": "2pkt"},
    )
    cfg["run"]["duration"] = "5ms"
    res = run_checked(cfg)
    fab = [
        r
        for (n, p), r in port_totals(res).items()
        if n.startswith("leaf") and p.startswith("spine")
    ]
    assert max(r["max_bytes"] for r in fab) <= 3000
    assert sum(r["marked"] for r in fab) == 0


@pytest.mark.parametrize(
    ("topology", "fragment"),
    [
        (
            {
                "kind": "leaf-spine",
                "leaves": 2,
                "spines": 2,
                "link_rate": "10Gbps",
                "link_delay": "1us",
            },
            "topology.hosts_per_leaf: missing",
        ),
        ({"preset": "mqecn", "hosts": 4}, "topology.hosts: not a key of a leaf-spine"),
        (
            {"preset": "mqecn", "leaves": 2048, "hosts_per_leaf": 1024},
            "leaves × hosts_per_leaf = 2097152 hosts; at most 1048576",
        ),
        (
            {"kind": "fat-tree", "k": 5, "link_rate": "10Gbps", "link_delay": "1us"},
            "topology.k = 5: must be an even number",
        ),
        ({"preset": "mqecn", "kind": "star"}, "topology.preset"),
        ({"preset": "mqecm"}, "topology.preset: unknown variant `mqecm`"),
        ({"link_rate": "10Gbps"}, "topology.kind: missing"),
    ],
)
def test_topology_errors_name_the_key(topology: dict, fragment: str) -> None:
    with pytest.raises(ecnlab.ConfigError) as err:
        ecnlab.run(copy.deepcopy(base(topology)), progress=False)
    assert fragment in str(err.value), str(err.value)


def test_sample_ports_by_name() -> None:
    topo = {"preset": "mqecn", "leaves": 2, "hosts_per_leaf": 2}
    cfg = base(topo, [{"src": 0, "dst": 3}])
    cfg["run"].update(sample_ports=["leaf1:host3", "leaf0:spine5"], duration="2ms")
    res = ecnlab.run(cfg, progress=False)
    ports = set(res["queues"]["port"].to_pylist())
    assert ports == {res.port("leaf1", "host3"), res.port("leaf0", "spine5")}
    cfg["run"]["sample_ports"] = ["leaf9:host3"]
    with pytest.raises(
        ecnlab.ConfigError, match=r"run.sample_ports\[0\] = \"leaf9:host3\": no such switch port"
    ):
        ecnlab.run(cfg, progress=False)
