"""DualPI2 (RFC 9332), the DualQ Coupled AQM of L4S, on a 100 Mbps
bottleneck shared by a Classic flow (Reno, Not-ECT) and an L4S one (DCTCP
sending ECT(1)). The coupling p_CL = k·p' against Classic's p_C = p'² gives
the two about the same rate (RFC 9332 §2.1), where one queue under one
probability lets the scalable flow take nearly all of it; the L queue
stays near its native threshold (under 1 ms), the Classic queue at the PI
target (15 ms). Every run is checked for determinism and conservation."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ecnlab
from scenario_kit import assert_refused, port_queue, run_checked, star

RATE = 100e6
WARMUP = 10.0


def shared(switch: dict[str, Any], classic: int = 1, l4s: int = 1) -> dict[str, Any]:
    """`classic` Reno flows from host 0 and `l4s` DCTCP flows with ECT(1)
    from host 1 into host 2, 100 Mbps, 20 ms of base RTT, 40 s; one
    service, so a composed port holds them in one queue."""
    cfg = star(
        rate="100Mbps",
        delay="5ms",
        duration="40s",
        warmup=f"{WARMUP}s",
        switch={"buffer": "4MB", **switch},
        transport={"cc": "dctcp", "min_rto": "200ms"},
        flows=[
            {"src": 0, "dst": 2, "count": classic, "cc": "reno"},
            {"src": 1, "dst": 2, "count": l4s, "ect1": True},
        ],
    )
    cfg["run"]["sample_interval"] = "1ms"
    return cfg


def rates(res: ecnlab.Result) -> tuple[float, float]:
    """Goodput of the Classic and of the L4S flows, bits/s, after warmup."""
    f = res["flows"].to_pandas()
    span = float(res.summary["sim_seconds"])
    got = f.groupby("src")["bytes_received"].sum()
    # The flows' bytes over the whole run (their start-up is short next to 40 s).
    return float(got[0]) * 8 / span, float(got[1]) * 8 / span


def delay_ms(res: ecnlab.Result, queue: int) -> np.ndarray:
    return port_queue(res, "switch", "host2", WARMUP, queue=queue) * 1500 * 8 / RATE * 1e3


@pytest.fixture(scope="module")
def dual() -> ecnlab.Result:
    return run_checked(shared({"qdisc": "dualpi2"}, classic=4, l4s=4))


@pytest.fixture(scope="module")
def pie() -> ecnlab.Result:
    return ecnlab.run(shared({"marking": "pie"}, classic=4, l4s=4), progress=False)


def test_classic_and_l4s_flows_get_about_the_same_rate(dual: ecnlab.Result) -> None:
    classic, l4s = rates(dual)
    # RFC 9332 §2.1: with k = 2 the coupled probabilities balance a Reno
    # and a scalable flow's rates within a small factor (Reno's 1.22/√p_C
    # against DCTCP's about 2/p_L gives about 1.2:1). Measured, per flow:
    # 12.8 against 11.5 Mbps (1.12); 0.87 with one flow each, 1.19 with 2
    # Classic against 6 L4S.
    assert 0.67 < classic / l4s < 1.5, (classic, l4s)
    # The link stays full: 100 Mbps × 1460/1500 of payload, less 2%.
    assert classic + l4s > 0.95 * RATE * 1460 / 1500


def test_without_the_coupling_the_scalable_flows_take_the_link(pie: ecnlab.Result) -> None:
    # The same flows in one PIE queue (one probability for all: marks for
    # DCTCP, drops for Reno): DCTCP's rate goes as 1/p and Reno's as 1/√p,
    # so the L4S flows take most of the link (measured 20.8 against 3.0
    # Mbps per flow), the starvation DualQ's coupling prevents (RFC 9332
    # §1.1).
    classic, l4s = rates(pie)
    assert l4s > 3 * classic, (classic, l4s)


def test_each_queue_keeps_its_own_delay(dual: ecnlab.Result, pie: ecnlab.Result) -> None:
    # Queue samples show the L queue (0) and the Classic queue (1) apart.
    # L: DCTCP, marked early (the coupled p_CL, the ramp from 800 us),
    # keeps it nearly empty (measured 0.03 ms) ...
    assert delay_ms(dual, 0).mean() < 0.5, delay_ms(dual, 0).mean()
    # ... where in one PIE queue the same flows wait its 15 ms target.
    assert delay_ms(pie, 0).mean() > 10.0, delay_ms(pie, 0).mean()
    # Classic: PI2 holds its sojourn at the 15 ms target. The queue drains
    # at the Classic flows' own rate, about half the link, so its sojourn
    # is its bytes over that rate (measured 15.3 ms).
    classic, _ = rates(dual)
    sojourn = delay_ms(dual, 1).mean() * RATE / classic
    assert abs(sojourn - 15.0) < 3.0, sojourn


def test_bad_dualpi2_keys_and_flows_get_one_clear_error() -> None:
    dp = {"qdisc": "dualpi2"}
    cases: list[tuple[dict[str, Any], list[dict[str, Any]], str]] = [
        ({**dp, "dualpi2_k": 0.0}, [], "switch.dualpi2_k = 0: must be positive"),
        ({**dp, "dualpi2_c_weight": 1.0}, [], "switch.dualpi2_c_weight = 1: must lie in (0, 1)"),
        (
            {**dp, "marking": "per-port"},
            [],
            'switch.marking = "per-port": switch.qdisc "dualpi2" is',
        ),
        (
            {"dualpi2_target": "5ms"},
            [],
            'switch.dualpi2_target = 5ms: set, but qdisc "composed" with marking "none" '
            "does not use it",
        ),
        (dp, [{"src": 0, "dst": 2, "cc": "vegas"}], "flows[0].cc: unknown variant `vegas`"),
        (dp, [{"src": 0, "dst": 2, "cc": "reno", "ect1": True}], 'flows[0].ect1 = true: cc "reno"'),
        (
            dp,
            [{"src": 0, "dst": 2, "cc": "pfabric"}],
            'flows[0].cc = "pfabric": pFabric\'s transport',
        ),
    ]
    for sw, flows, want in cases:
        cfg = star(switch=sw, flows=flows or [{"src": 0, "dst": 2}])
        assert_refused(cfg, want, (sw, flows))
