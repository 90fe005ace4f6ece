"""`topology.kind = "graph"`: a network given link by link runs exactly as
the built-in shape it describes, and the HPCC simulator's 320-host fat-tree
(its mix/fat.txt, imported) routes a cross-pod flow over 5 switches."""

from __future__ import annotations

import copy
from pathlib import Path

import ecnlab
from ecnlab.peers.hpcc import import_hpcc
from scenario_kit import assert_refused, assert_same_outputs, run_checked

DATA = Path(__file__).resolve().parents[1] / "data" / "hpcc"


def leaf_spine_as_graph(topo: dict) -> dict:
    """The links of a leaf-spine in the order ecnlab's builder makes them
    (per leaf: its hosts, then its uplinks), with its switch names."""
    leaves, spines, hpl = topo["leaves"], topo["spines"], topo["hosts_per_leaf"]
    hosts = leaves * hpl
    links = []
    for leaf in range(leaves):
        links += [[leaf * hpl + h, hosts + leaf] for h in range(hpl)]
        links += [[hosts + leaf, hosts + leaves + sp, topo["uplink_rate"]] for sp in range(spines)]
    return {
        "kind": "graph",
        "hosts": hosts,
        "switches": leaves + spines,
        "link_rate": topo["link_rate"],
        "link_delay": topo["link_delay"],
        "links": links,
        "switch_names": [f"leaf{i}" for i in range(leaves)] + [f"spine{i}" for i in range(spines)],
    }


def test_a_graph_of_a_leaf_spine_runs_as_the_leaf_spine() -> None:
    # 3 leaves × 4 hosts, 2 spines, 10G down / 40G up: web-search flows at
    # 60% load over ECMP, RED marking for DCTCP. Every output file (flows and
    # their FCTs, ports, queues, goodput, summary) must be byte-identical:
    # the same ports in the same order, the same routes, the same hashes.
    topo = {
        "kind": "leaf-spine",
        "leaves": 3,
        "spines": 2,
        "hosts_per_leaf": 4,
        "link_rate": "10Gbps",
        "uplink_rate": "40Gbps",
        "link_delay": "2us",
    }
    cfg = {
        "run": {"seed": 3, "duration": "40ms", "sample_interval": "100us"},
        "topology": topo,
        "switch": {"buffer": "300KB", "marking": "per-queue", "threshold": "65pkt"},
        "fabric": {"threshold": "100pkt"},
        "transport": {"cc": "dctcp", "min_rto": "5ms"},
        "workload": {"kind": "poisson", "distribution": "web_search", "load": 0.6, "flows": 150},
    }
    graph = copy.deepcopy(cfg)
    graph["topology"] = leaf_spine_as_graph(topo)
    a = run_checked(graph)
    assert a.summary["flows_completed"] > 80
    # Some flows crossed the spines (both ECMP choices taken).
    spines = {
        r["node"]
        for r in a["ports"].to_pylist()
        if r["sent_packets"] and r["node"].startswith("spine")
    }
    assert spines == {"spine0", "spine1"}
    assert_same_outputs(cfg, graph)


def test_the_hpcc_fat_tree_routes_across_pods_over_five_switches() -> None:
    imp = import_hpcc(DATA / "fat" / "config.txt")
    t = imp.config["topology"]
    # fat.txt: 376 nodes, 56 switches, 480 links (320 host links at 100G).
    assert (t["hosts"], t["switches"], len(t["links"])) == (320, 56, 480)
    assert sum(1 for lk in t["links"] if len(lk) > 2 and lk[2] == "400Gbps") == 160
    paths = ecnlab.flow_paths(imp.config)
    # Flow 0: host 0 (under sw320) to host 319 (under sw339): ToR, aggregation,
    # core, aggregation, ToR. Flow 1 stays under one ToR. Flow 2 too crosses pods.
    assert [len(d) for d, _ in paths] == [5, 1, 5]
    data, acks = paths[0]
    assert (data[0], data[-1], acks[0], acks[-1]) == ("sw320", "sw339", "sw339", "sw320")
    res = run_checked(imp.config)
    f = res["flows"].to_pandas()
    assert f["fct"].notna().all()
    # A queue pair's FCT ends when the receiver has the last byte (as the
    # peer's FCT file does), so on an empty path the 5-switch flow's ideal
    # exceeds the 1-switch flow's by 4 more links' propagation (4 × 1 us)
    # and the store-and-forward of its last 1,048 B frame on them at 400G
    # (4 × 20.96 ns).
    gap = f["ideal_fct"][0] - f["ideal_fct"][1]
    assert abs(gap - (4e-6 + 4 * 1048 * 8 / 400e9)) < 1e-12, gap


def test_graph_mistakes_are_refused_with_the_link() -> None:
    base = {
        "run": {"duration": "1ms"},
        "topology": {
            "kind": "graph",
            "hosts": 2,
            "switches": 1,
            "link_rate": "10Gbps",
            "link_delay": "1us",
            "links": [[0, 2], [1, 2]],
        },
        "flows": [{"src": 0, "dst": 1}],
    }
    for links, want in [
        ([[0, 2], [1, 2], [1, 2]], 'topology.links[2] = [1, 2, "10Gbps", "1us"]: a second link'),
        ([[0, 2], [1, 3]], 'topology.links[1] = [1, 3, "10Gbps", "1us"]: node 3 does not exist'),
        ([[0, 2]], "topology.links: host 1 has no link"),
    ]:
        cfg = copy.deepcopy(base)
        cfg["topology"]["links"] = links
        assert_refused(cfg, want, links)
