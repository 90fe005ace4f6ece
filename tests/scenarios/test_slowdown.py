"""FCT slowdown: each sized flow's FCT over its ideal FCT alone in the empty
network (the flows table's ``ideal_fct`` and ``slowdown``)."""

from __future__ import annotations

import json
import math
import tempfile
from pathlib import Path

import numpy as np

import ecnlab
from ecnlab.runner import resolve
from scenario_kit import check_conservation, exact, run_checked, star

# A lone flow takes exactly its ideal: the engine replays it with the run's
# own TCP, so the two agree to the picosecond (crates/ecnlab/tests/ideal.rs).
# The tolerance covers only the float division of two integer times.
LONE = 1e-9


def leaf_spine(**extra: object) -> dict:
    """2 leaves × 2 hosts, 2 spines: 10 Gbps host links (2 + 1 us), 40 Gbps
    uplinks (2 us); host 0 to host 3 crosses a spine (4 links each way)."""
    return {
        "run": {"seed": 1, "duration": "1s", "sample_ports": "none"},
        "topology": {
            "kind": "leaf-spine",
            "leaves": 2,
            "spines": 2,
            "hosts_per_leaf": 2,
            "link_rate": "10Gbps",
            "uplink_rate": "40Gbps",
            "link_delay": "2us",
            "host_delay": "1us",
        },
        "transport": {"cc": "dctcp", "init_cwnd": 10},
        **extra,
    }


def lone_flow(net: dict, src: int, dst: int, size: str) -> dict:
    # Exact replay: the ideal leaves out the hosts' jitter.
    cfg = exact(json.loads(json.dumps(net)))
    cfg["flows"] = [{"src": src, "dst": dst, "size": size}]
    return run_checked(cfg)["flows"].to_pylist()[0]


def test_a_lone_flow_has_slowdown_one() -> None:
    net_star = star(hosts=3, duration="1s", warmup="0s")
    net_star["run"]["sample_ports"] = "none"
    # One packet, a 10 KB flow (one initial window), 1 MB (slow start over
    # several round trips, then the link's rate), on a star and across a
    # leaf-spine's spine.
    for net, (src, dst) in ((net_star, (0, 2)), (leaf_spine(), (0, 3))):
        for size in ("1460B", "10KB", "1MB"):
            row = lone_flow(net, src, dst, size)
            assert row["kind"] == "sized" and math.isfinite(row["fct"]), row
            assert abs(row["slowdown"] - 1.0) < LONE, (size, row)
            assert row["ideal_fct"] == row["fct"], (size, row)


def test_the_ideal_of_one_packet_by_hand() -> None:
    # star(): 10 Gbps links of 25 us. The SYN (40 B header, 32 ns a link)
    # crosses two links: 2 × 25.032 = 50.064 us, and the SYN-ACK as much
    # back; the one 1500-byte packet (1.2 us a link) then 2 × 26.2 = 52.4 us.
    # FCT from the SYN to the last byte: 152.528 us.
    net = star(hosts=3, duration="1s", warmup="0s")
    row = lone_flow(net, 0, 2, "1460B")
    assert abs(row["ideal_fct"] - 152.528e-6) < 1e-12, row
    # Ended at the sender: plus the ACK's way back, 50.064 us.
    net["run"]["fct_end"] = "sender"
    row = lone_flow(net, 0, 2, "1460B")
    assert abs(row["ideal_fct"] - 202.592e-6) < 1e-12, row


def workload(load: float) -> dict:
    """Web search (DCTCP paper) among 8 hosts of a 10 Gbps star, 400 flows."""
    cfg = star(hosts=8, duration="10s", warmup="0s")
    cfg["run"]["sample_ports"] = "none"
    cfg["workload"] = {"kind": "poisson", "load": load, "flows": 400, "distribution": "web_search"}
    return cfg


def test_slowdown_grows_with_load() -> None:
    stats = {}
    for load in (0.3, 0.7):
        # The 0.7 run twice: byte-identical outputs and every packet counted.
        cfg = workload(load)
        res = run_checked(cfg) if load == 0.7 else ecnlab.run(cfg, progress=False)
        check_conservation(res.summary)
        slowdown = res["flows"].column("slowdown").to_numpy()
        # Every flow finished and has an ideal; none beat it, since other
        # traffic only adds waiting (with an ACK for every packet, no timer
        # interplay can speed a flow up).
        assert np.isfinite(slowdown).all()
        assert slowdown.min() >= 1 - LONE, slowdown.min()
        stats[load] = res.summary["slowdown"]
        assert stats[load]["flows"] == 400
    # Measured: mean 1.77 at 0.3, 2.88 at 0.7; small flows 1.76 and 2.49.
    assert stats[0.7]["overall_mean"] > 1.3 * stats[0.3]["overall_mean"], stats
    assert stats[0.7]["small_mean"] > 1.2 * stats[0.3]["small_mean"], stats
    assert stats[0.7]["overall_p50"] > stats[0.3]["overall_p50"], stats


def test_flows_without_an_ideal() -> None:
    # Long-lived, incast and rate-limited flows have no ideal: NaN.
    cfg = star(
        hosts=4,
        duration="20ms",
        warmup="0s",
        flows=[
            {"src": 0, "dst": 1},
            {"src": 2, "dst": 1, "size": "100KB", "rate": "100Mbps"},
            {"src": 3, "dst": 1, "size": "20KB"},
        ],
        incast=[{"receiver": 0, "senders": [1, 2], "block": "16KB", "rounds": 2}],
    )
    rows = run_checked(cfg)["flows"].to_pylist()
    kinds = {r["kind"]: r for r in rows}
    assert set(kinds) == {"long", "rate-limited", "sized", "incast"}
    for r in rows:
        if r["kind"] == "sized":
            assert r["ideal_fct"] > 0 and r["slowdown"] >= 1 - LONE, r
        else:
            assert math.isnan(r["ideal_fct"]) and math.isnan(r["slowdown"]), r


def test_config_json_is_the_resolved_config() -> None:
    # A preset and left-out keys: config.json has what the engine ran.
    cfg = {
        "run": {"duration": "5ms", "sample_ports": "none"},
        "topology": {"preset": "mqecn"},
        "flows": [{"src": 0, "dst": 1, "size": "10KB"}],
    }
    with tempfile.TemporaryDirectory() as tmp:
        res = ecnlab.run(cfg, out=Path(tmp), progress=False).load()
        written = json.loads((Path(tmp) / "config.json").read_text(encoding="utf-8"))
    assert written == resolve(cfg) == res.config
    assert written["topology"]["kind"] == "leaf-spine" and written["transport"]["mss"] == 1460
    # And it runs to the same outputs as the config it came from.
    again = ecnlab.run(written, progress=False)
    assert again["flows"].equals(res["flows"].combine_chunks())
