"""The partitioned engine (`run.threads`, docs/parallel.md): one run on
several threads, with the same outputs for every thread count."""

from __future__ import annotations

import copy
from typing import Any

import ecnlab
from scenario_kit import assert_same_outputs, run_checked, star


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


def test_one_and_two_threads_write_the_same_files() -> None:
    # Every table and the summary, byte for byte (config.json names the
    # thread count); 2 parts (the default) and 4 (one per pod).
    assert_same_outputs(fat_tree(1), fat_tree(2))
    assert_same_outputs(fat_tree(1, partitions=4), fat_tree(3, partitions=4))
    # Queue samples too: each part samples its own ports (docs/parallel.md).
    sampled = {"sample_ports": "hosts", "sample_interval": "100us"}
    assert_same_outputs(fat_tree(1, **sampled), fat_tree(2, **sampled))


def test_a_partitioned_run_is_deterministic_and_conserves_packets() -> None:
    res = run_checked(fat_tree(2))
    s = res.summary
    assert s["partitions"] == 2
    assert s["lookahead_seconds"] == 2e-6  # the aggregation-core links' delay
    # The run must exercise the hard cases: losses repaired across parts.
    assert s["packets_dropped"] > 0 and s["retransmits"] > 0, s


def test_it_is_the_same_model_as_the_sequential_engine() -> None:
    # Only the order of same-picosecond events from two parts differs, so
    # the run stays close to the sequential engine's at the same seed:
    # within 3% in delivered packets and mean FCT (measured: 0.15% and
    # 1.5%), where seeds 1-3 of the sequential engine span 316-388 k
    # packets and 1.54-2.10 ms.
    seq = ecnlab.run(fat_tree(0), progress=False).summary
    par = ecnlab.run(fat_tree(2), progress=False).summary
    assert abs(par["packets_delivered"] / seq["packets_delivered"] - 1) < 0.03, (par, seq)
    mean = par["fct"]["overall_mean"] / seq["fct"]["overall_mean"]
    assert abs(mean - 1) < 0.03, (par["fct"], seq["fct"])


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

    assert_same_outputs(with_apps(1), with_apps(2))
    par = run_checked(with_apps(2))
    seq = run_checked(with_apps(0))
    for res in (par, seq):
        assert res.summary["incast_rounds_completed"] == 20, res.summary
        assert len(res["incast"]) == 20
    # Round 1 starts when the last connection opens, in both engines at the
    # same picosecond (no load has arrived yet); the rounds' mean goodput
    # within 10% (measured: 5.656 Gbps in both; a same-picosecond tie
    # between parts could reorder the load around them).
    assert par["incast"]["start"][0] == seq["incast"]["start"][0]
    ratio = par.summary["incast_goodput_gbps"] / seq.summary["incast_goodput_gbps"]
    assert abs(ratio - 1) < 0.1, ratio
