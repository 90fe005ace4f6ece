"""The partitioned engine (`run.threads`, docs/parallel.md): one run on
several threads, with the sequential engine's outputs for every thread
count and cut."""

from __future__ import annotations

import copy
from typing import Any

from scenario_kit import assert_same_answer, assert_same_outputs, run_checked, star


def fat_tree(threads: int, **run: Any) -> dict[str, Any]:
    """A k = 4 fat-tree (16 hosts, 4 pods) under web-search load with a
    small drop-tail buffer, so that the run has drops, retransmissions and
    timeouts as well as marks to get right across parts."""
    return {
        "run": {"seed": 2, "duration": "30ms", "threads": threads, **run},
        "topology": {
            "kind": "fat-tree",
            "k": 4,
            "link_rate": "10Gbps",
            "link_delay": "2us",
        },
        "switch": {"buffer": "40KB", "marking": "per-queue", "threshold": "15pkt"},
        "transport": {"cc": "dctcp"},
        "workload": {
            "kind": "poisson",
            "load": 0.7,
            "flows": 600,
            "distribution": "web_search",
        },
    }


def test_every_engine_writes_the_same_tables() -> None:
    # Every table byte for byte and the summary but the engine's own keys
    # (config.json names the thread count): the sequential engine, 2 parts
    # on 2 threads, 4 (one per pod) on 1 and on 3.
    assert_same_answer(fat_tree(0), fat_tree(2))
    assert_same_outputs(fat_tree(1, partitions=4), fat_tree(3, partitions=4))
    assert_same_answer(fat_tree(0), fat_tree(3, partitions=4))
    # Queue samples too: each part samples its own ports (docs/parallel.md).
    sampled = {"sample_ports": "hosts", "sample_interval": "100us"}
    assert_same_answer(fat_tree(0, **sampled), fat_tree(2, **sampled))


def test_a_partitioned_run_is_deterministic_and_conserves_packets() -> None:
    res = run_checked(fat_tree(2))
    s = res.summary
    assert s["partitions"] == 2
    assert s["lookahead_seconds"] == 2e-6  # the aggregation-core links' delay
    # The run must exercise the hard cases: losses repaired across parts.
    assert s["packets_dropped"] > 0 and s["retransmits"] > 0, s


def test_a_star_has_nothing_to_cut_and_runs_the_sequential_engine() -> None:
    cfg = star(
        hosts=3, duration="50ms", warmup="10ms", flows=[{"src": 0, "dst": 2}, {"src": 1, "dst": 2}]
    )
    two = copy.deepcopy(cfg)
    two["run"]["threads"] = 2
    assert_same_outputs(cfg, two)


def test_incast_rounds_and_serial_chains_run_across_parts() -> None:
    # An incast group with senders in three other pods and a serial chain
    # from pod 0 to pod 3, under the web-search load: their messages (a
    # round's requests, a connection's opening) cross parts as packets do
    # (docs/parallel.md).
    def with_apps(threads: int) -> dict[str, Any]:
        cfg = fat_tree(threads)
        cfg["incast"] = [{"receiver": 0, "senders": [4, 8, 12, 1], "block": "20KB", "rounds": 20}]
        chain = {"src": 2, "dst": 15, "size": "50KB", "count": 10, "serial": True}
        cfg["flows"] = [{**chain, "serial_gap": "100us"}]
        return cfg

    assert_same_answer(with_apps(0), with_apps(2))
    res = run_checked(with_apps(2))
    assert res.summary["incast_rounds_completed"] == 20, res.summary
    assert len(res["incast"]) == 20
