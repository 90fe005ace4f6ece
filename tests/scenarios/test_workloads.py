"""Flow-size distributions and Poisson workloads (the papers' traffic)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ecnlab
from ecnlab import _engine
from scenario_kit import assert_refused, mqecn_point, run_checked, star, uplink_bytes

WORKLOADS = Path(__file__).resolve().parents[2] / "crates" / "ecnlab" / "workloads"

# Means of the interpolated CDFs quoted in ML-ECN §IV (crates/ecnlab/workloads/README.md).
PAPER_MEAN = {"web_search": 1.67e6, "data_mining": 7.47e6, "cache": 0.91e6, "hadoop": 4.14e6}


def samples(dist: str, n: int, seed: int = 11) -> np.ndarray:
    _, raw = _engine.sample_flow_sizes(dist, n, seed)
    return np.frombuffer(raw, dtype="<u8").astype(float)


def cdf_points(name: str) -> np.ndarray:
    return np.loadtxt(WORKLOADS / f"{name}.csv", delimiter=",", skiprows=1)


@pytest.mark.parametrize("name", sorted(PAPER_MEAN))
def test_sizes_follow_the_cdf_and_its_mean(name: str) -> None:
    n = 1_000_000
    x = np.sort(samples(name, n))
    pts = cdf_points(name)

    # Goodness of fit at every CDF point and at every segment's midpoint
    # (linear interpolation, as ns-2's empirical RV): the empirical CDF
    # stays within 0.003 of the target; the Kolmogorov-Smirnov 1% critical
    # value for n = 1e6 is 1.63/sqrt(n) = 0.0016.
    def at(s: float) -> float:
        # Right-continuous: where a size is listed twice (an atom), the upper value.
        return float(pts[pts[:, 0] <= s][:, 1].max())

    for (s0, c0), (s1, c1) in zip(pts, pts[1:]):
        if s1 == s0:
            continue
        for s, c in ((s1, at(s1)), ((s0 + s1) / 2, (c0 + c1) / 2)):
            emp = np.searchsorted(x, s, side="right") / n
            assert abs(emp - c) < 0.003, (name, s, emp, c)
    # Mean within 3% of the paper's (heavy tails: 1e6 samples keep the
    # standard error below 1% even for data mining).
    assert x.mean() == pytest.approx(PAPER_MEAN[name], rel=0.03)


def test_mix_draws_each_distribution_equally() -> None:
    want = np.mean(list(PAPER_MEAN.values()))
    assert _engine.distribution_mean("mix") == pytest.approx(want, rel=0.01)
    assert samples("mix", 1_000_000).mean() == pytest.approx(want, rel=0.03)


def test_unknown_distribution_is_a_config_error(tmp_path: Path) -> None:
    cfg = leaf_spine_cfg(load=0.3, flows=10, distribution="websearch")
    with pytest.raises(ecnlab.ConfigError, match=r"workload.distribution: unknown distribution"):
        ecnlab.run(cfg, progress=False)
    bad = tmp_path / "bad.csv"
    bad.write_text("size_bytes,cdf\n100,0.5\n50,1\n")
    cfg = leaf_spine_cfg(load=0.3, flows=10, distribution=str(bad))
    with pytest.raises(ecnlab.ConfigError, match="must not decrease"):
        ecnlab.run(cfg, progress=False)


def leaf_spine_cfg(load: float, flows: int, distribution: str, **topo: object) -> dict:
    """The MQ-ECN §5.2 set-up (MQ-ECN marking) with the given flow sizes,
    seed 3, and a 5 s cap; `topo` overrides preset keys."""
    cfg = mqecn_point("mq-ecn", load, flows, seed=3)
    cfg["run"]["duration"] = "5s"
    cfg["topology"].update(topo)
    cfg["workload"]["distribution"] = distribution
    return cfg


@pytest.mark.parametrize("load", [0.3, 0.7])
def test_access_links_carry_the_target_load(load: float, tmp_path: Path) -> None:
    # Sizes uniform on [10 KB, 1 MB] (a user's own CDF file), so the check
    # is about arrivals and header accounting, not heavy-tail noise.
    cdf = tmp_path / "uniform.csv"
    cdf.write_text("size_bytes,cdf\n10000,0\n1000000,1\n")
    res = ecnlab.run(leaf_spine_cfg(load, 10_000, str(cdf)), progress=False)
    fl = res["flows"]
    assert res.summary["fct"]["unfinished"] == 0
    start = fl["start"].to_numpy()
    # Utilisation of the 144 host links while arrivals last, from the goodput
    # each receiver got in the middle 60% of that span (payload → wire:
    # 1500/1460). Expected: the target load within 5% (the bar).
    g = res["goodput"]
    t = g["time"].to_numpy()
    lo, hi = np.quantile(start, 0.2), np.quantile(start, 0.8)
    sel = (t > lo + 0.001) & (t <= hi)
    bins = np.unique(t[sel])
    gbps = g["gbps"].to_numpy()[sel].sum() / len(bins)
    util = gbps * 1500 / 1460 / (144 * 10.0)
    assert util == pytest.approx(load, rel=0.05), util


def test_ecmp_spreads_uplink_bytes_and_never_reorders(tmp_path: Path) -> None:
    # 4 leaves × 4 hosts, 4 spines; 8000 flows of 20 KB. Per-flow ECMP over
    # 4 spines: each leaf uplink should carry its 1/4 (issue: each within
    # 20% of the mean); a flow's packets share one path, so none arrive
    # reordered.
    cdf = tmp_path / "fixed.csv"
    cdf.write_text("size_bytes,cdf\n20000,0\n20000,1\n")
    cfg = {
        "run": {"seed": 5, "duration": "5s", "sample_ports": "none"},
        "topology": {
            "kind": "leaf-spine",
            "leaves": 4,
            "spines": 4,
            "hosts_per_leaf": 4,
            "link_rate": "10Gbps",
            "uplink_rate": "10Gbps",
            "link_delay": "1us",
            "host_delay": "10us",
        },
        "switch": {"buffer": "300KB", "marking": "per-queue", "threshold": "65pkt"},
        "workload": {"kind": "poisson", "load": 0.3, "flows": 8000, "distribution": str(cdf)},
    }
    res = run_checked(cfg)
    up = np.array(uplink_bytes(res))
    assert len(up) == 16
    assert np.all(np.abs(up / up.mean() - 1) < 0.2), up / up.mean()
    assert sum(res["flows"]["reordered"].to_pylist()) == 0
    assert res.summary["fct"]["unfinished"] == 0
    # A different seed hashes flows onto other paths.
    other = ecnlab.run({**cfg, "run": {**cfg["run"], "seed": 6}}, progress=False)
    assert uplink_bytes(other) != list(up)


def one_way(links: list[tuple[float, float]], size: int) -> float:
    """Propagation plus store-and-forward serialisation over (rate, delay) links."""
    return sum(d + size * 8 / r for r, d in links)


def test_one_packet_flows_finish_near_ideal_at_low_load() -> None:
    # Cache (Roy et al.): 35% of all flows are one 1460 B segment. At load 0.1 a
    # one-packet flow should take about the ideal: SYN and SYN-ACK (40 B)
    # one way each, then the data packet (1500 B) one way (issue: within
    # 20% on average; no flow may beat the ideal).
    res = run_checked(leaf_spine_cfg(0.1, 3000, "cache"))
    host = (10e9, 20.2e-6)
    fabric = (10e9, 0.2e-6)
    ratios = []
    for f in res["flows"].to_pylist():
        if f["size"] > 1460:
            continue
        same_leaf = f["src"] // 12 == f["dst"] // 12
        path = [host, host] if same_leaf else [host, fabric, fabric, host]
        ideal = 2 * one_way(path, 40) + one_way(path, 1500)
        ratios.append(f["fct"] / ideal)
    ratios = np.array(ratios)
    assert len(ratios) > 1000
    assert ratios.min() >= 0.999, ratios.min()
    assert ratios.mean() <= 1.2, ratios.mean()
    assert res.summary["fct"]["one_packet_mean"] > 0


# ----------------------------------------------------- FQ-CoDel in the DCN §III-B, §IV-C


def test_rate_limited_flow_sends_at_its_rate() -> None:
    """A 10-segment flow whose application writes at 10 Mbps (FQ-CoDel in
    the DCN §III-B's stream) sends one 1460 B segment every 1.168 ms: its
    last segment is written 9 × 1.168 = 10.512 ms after the flow opens and
    lands about a one-way delay (50 us here) later, whatever its window (IW
    10 would allow all ten at once), while a long flow shares the link."""
    cfg = star(
        duration="0.05s",
        warmup="0s",
        flows=[
            {"src": 0, "dst": 2, "size": "14600B", "rate": "10Mbps"},
            {"src": 1, "dst": 2},
        ],
    )
    res = run_checked(cfg)
    flows = res["flows"].to_pandas()
    stream = flows[flows["kind"] == "rate-limited"].iloc[0]
    assert stream["bytes_received"] == 14_600
    assert 10.512e-3 < stream["fct"] < 10.512e-3 + 0.3e-3, stream["fct"]
    # The stream is not a sized flow: FCT statistics leave it out.
    assert res.summary["fct"] is None


def test_one_packet_share_and_size_cap() -> None:
    """FQ-CoDel in the DCN §IV-C's tweaked workload on a small star: data
    mining capped at 10^5 packets (146 MB) plus extra one-packet flows
    carrying 5% of the offered bytes. No flow exceeds the cap; the extra
    flows (one full segment each) outnumber the 400 sized ones, whose own
    one-packet flows are about half of them (50%, pFabric's data mining)."""
    cap = 100_000 * 1460
    cfg = star(hosts=4, duration="2s", warmup="0s", flows=[])
    cfg["transport"]["min_rto"] = "1ms"
    cfg["workload"] = {
        "kind": "poisson",
        "load": 0.3,
        "flows": 400,
        "distribution": "data_mining",
        "max_size": f"{cap}B",
        "one_packet_share": 0.05,
    }
    res = run_checked(cfg)
    flows = res["flows"].to_pandas()
    assert flows["size"].max() <= cap
    one = int((flows["size"] == 1460).sum())
    # Sized flows: 400, about 200 of them one packet. Extra one-packet flows:
    # 5% of the bytes of flows whose mean is 3.56 MB (capped): 0.05/0.95 ×
    # 3.56 MB / 1500 B ≈ 125 per sized flow, tens of thousands in all.
    assert len(flows) > 400 + 10_000, len(flows)
    assert one > len(flows) - 400, one
    assert res.summary["fct"]["one_packet_flows"] == one
    assert res.summary["fct"]["unfinished"] == 0


@pytest.mark.parametrize(
    "workload, want",
    [
        ({"one_packet_share": 1.0}, "workload.one_packet_share = 1: must lie in [0, 1)"),
        ({"one_packet_share": -0.1}, "workload.one_packet_share = -0.1: must lie in [0, 1)"),
        (
            {"rate_limited_share": 0.1},
            "workload.rate_limited_rate: is needed when rate_limited_share > 0",
        ),
        (
            {"rate_limited_size": "1MB"},
            "workload.rate_limited_size: is only used with rate_limited_share > 0",
        ),
        (
            {
                "one_packet_share": 0.5,
                "rate_limited_share": 0.5,
                "rate_limited_rate": "1Mbps",
                "rate_limited_size": "1MB",
            },
            "workload.rate_limited_share = 0.5: with one_packet_share = 0.5 leaves no load",
        ),
        ({"max_size": "1000B"}, "workload.max_size = 1000: must be at least one segment"),
    ],
)
def test_bad_workload_shares_are_refused(workload: dict, want: str) -> None:
    cfg = leaf_spine_cfg(load=0.3, flows=10, distribution="data_mining")
    cfg["workload"].update(workload)
    assert_refused(cfg, want, workload)
    cfg = star(flows=[{"src": 0, "dst": 2, "rate": "0bps"}])
    assert_refused(cfg, 'flows[0].rate: "0bps": must be positive', "zero rate")
