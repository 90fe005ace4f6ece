"""The linux profile's congestion controls as the kernel runs them:
CUBIC's HyStart (host/recovery/hystart.rs, `transport.hystart`) and DCTCP as
tcp_dctcp.c (host/cc/dctcp_linux.rs, `transport.dctcp_linux`).

- One CUBIC flow from a 1 Gbps host into a 100 Mbps port (0.12 ms per
  packet) with 5 ms links (20 ms of base RTT, a BDP of about 167 packets)
  and a 150-packet buffer. Standard slow start doubles the window until
  the buffer overflows near BDP + buffer = 317 and loses hundreds. With
  HyStart: slow start's ACK trains are separated by gaps over 2 ms and a
  round starts mid-train, so the train test goes idle for the rest of each
  round; the delay test ends slow start instead, at the 9th ACK of the
  first round whose samples all see more than 4 ms (clamp(20.1/8, 4, 16)
  ms) of queue, about 34 packets. Until a first loss Linux's CUBIC then
  grows 5% a round trip (cnt at most 20 while W_max is 0, tcp_cubic.c;
  `host/cc/cubic_linux.rs`), which fills the buffer some 250 ms in and
  loses a few packets, against hundreds lost by slow start without
  HyStart.
- Two DCTCP flows on the linux profile through a 10 Gbps port marking at
  K = 65 packets: the queue stays near K and the link full (DCTCP paper
  §3.3), as with ecnlab's own DCTCP.

Every run is checked for determinism and conservation."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ecnlab
import ecnlab.runner
from scenario_kit import PAYLOAD_FRACTION, goodput, port_queue, run_checked, star

K = 65


def cubic_lone_flow(transport: dict[str, Any]) -> dict[str, Any]:
    cfg = star(
        hosts=2,
        rate=["1Gbps", "100Mbps"],
        delay="5ms",
        duration="1s",
        warmup="0s",
        switch={"buffer": "150pkt"},
        flows=[{"src": 0, "dst": 1}],
    )
    cfg["transport"] = {"profile": "linux", **transport}
    cfg["run"]["sample_interval"] = "1ms"
    return cfg


def test_hystart_ends_slow_start_before_the_buffer_overflows() -> None:
    on = run_checked(cubic_lone_flow({}))
    off = run_checked(cubic_lone_flow({"hystart": False}))
    # Without HyStart the slow start's overshoot is lost at the switch.
    assert off.summary["packets_dropped"] > 100, off.summary
    # With it slow start ends before the buffer fills: nothing is lost in
    # the first 200 ms (the buffer's 150 packets not reached), and in the
    # whole second only what the 5%-a-round-trip growth after the exit
    # overflows (measured 16 against 416 without HyStart).
    q = port_queue(on, "switch", "host1", warmup=0.0)
    assert q[:200].max() < 150, q[:200].max()
    assert on.summary["packets_dropped"] < off.summary["packets_dropped"] / 10, (
        on.summary,
        off.summary,
    )
    # The delay test fired, not the train: slow start went on until the
    # queue held 4 ms (33.3 packets), which it reaches in slow start's
    # fifth round, before 0.2 s (an exit on the ACK train near the BDP/2
    # would have left it nearly empty then).
    early = port_queue(on, "switch", "host1", warmup=0.0)[:200]
    assert early.max() >= 34, early.max()


def two_dctcp_flows(transport: dict[str, Any]) -> dict[str, Any]:
    cfg = star(
        switch={"marking": "per-queue", "threshold": f"{K}pkt"},
        flows=[{"src": i, "dst": 2} for i in range(2)],
    )
    cfg["transport"] = {"cc": "dctcp", "profile": "linux", "min_rto": "5ms", **transport}
    return cfg


@pytest.fixture(scope="module")
def dctcp_runs() -> dict[str, ecnlab.Result]:
    return {
        "linux": run_checked(two_dctcp_flows({})),
        "ecnlab": run_checked(two_dctcp_flows({"dctcp_linux": False})),
    }


def test_linux_dctcp_holds_the_queue_near_k_at_line_rate(
    dctcp_runs: dict[str, ecnlab.Result],
) -> None:
    # DCTCP paper §3.3: the queue oscillates around K with an amplitude of
    # a few packets per flow (Q_max = K + N), and K = 65 > C·RTT/7 keeps
    # the link full. Linux's delayed ACKs (two segments per ACK) double the
    # bursts each ACK releases, hence the wider band than in
    # test_dctcp_ecnstar.py.
    res = dctcp_runs["linux"]
    assert goodput(res)[0] >= 0.95 * 10.0 * PAYLOAD_FRACTION, goodput(res)
    q = port_queue(res, "switch", "host2", warmup=0.1)
    assert 0.75 * K <= q.mean() <= 1.15 * K, q.mean()
    assert np.percentile(q, 99) <= K + 20, np.percentile(q, 99)
    assert np.percentile(q, 1) >= 0.5 * K, np.percentile(q, 1)
    # The only losses are the two slow starts' overshoot at the start
    # (both at IW 10 into 200 packets of buffer, in the first ms), each
    # repaired by one retransmission; after the warm-up the queue never
    # comes near the buffer.
    s = res.summary
    assert s["timeouts"] == 0 and s["retransmits"] == s["packets_dropped"] <= 10, s
    assert q.max() < 100, q.max()
    # ecnlab's own DCTCP on the same stack behaves alike: the differences
    # are in α's arithmetic and the loss response, not the control loop.
    ref = dctcp_runs["ecnlab"]
    assert abs(port_queue(ref, "switch", "host2", warmup=0.1).mean() - q.mean()) < 0.15 * K


def test_the_profile_turns_both_on_and_each_can_be_set_otherwise() -> None:
    t = ecnlab.runner.resolve(two_dctcp_flows({}))["transport"]
    assert (t["hystart"], t["dctcp_linux"]) == (True, True)
    plain = two_dctcp_flows({})
    del plain["transport"]["profile"]
    t = ecnlab.runner.resolve(plain)["transport"]
    assert not {"hystart", "dctcp_linux"} & t.keys()
    cfg = two_dctcp_flows({"dctcp_g": 0.1})
    with pytest.raises(
        ecnlab.ConfigError,
        match=r"transport\.dctcp_g = 0\.1: must be 1/2\^k for k in 0\.\.=10 with dctcp_linux",
    ):
        ecnlab.validate(cfg)
    with pytest.raises(ecnlab.ConfigError, match=r"transport\.hystart"):
        ecnlab.validate(cubic_lone_flow({"hystart": "yes"}))
