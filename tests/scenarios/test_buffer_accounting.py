"""Byte and packet-count buffers with 40-byte ACKs queued among data.

`buffer = "20pkt"` is 20 full packets' worth of bytes (30,000 B): an ACK takes
40 of them. `buffer = "20 packets"` is 20 slots, one per packet whatever its
size (ns-2's DropTail, and switches that keep packets in fixed slots): an ACK
takes a slot a data segment could have used."""

from __future__ import annotations

import numpy as np
import pytest

from scenario_kit import port_totals, run_checked, star

FULL = 20 * 1500  # bytes in "20pkt"


def mixed_port(buffer: str) -> dict:
    # Hosts 0 and 1 send to host 2 while host 2 sends to host 0, so the
    # switch port to host 2 queues the data of two flows and the ACKs of the
    # third. Reno ignores ECN and there is no marking, so the port fills to
    # its limit and tail-drops.
    cfg = star(
        hosts=3,
        delay="5us",
        duration="20ms",
        warmup="2ms",
        switch={"buffer": buffer},
        transport={"cc": "reno"},
        flows=[{"src": 0, "dst": 2}, {"src": 1, "dst": 2}, {"src": 2, "dst": 0}],
    )
    cfg["run"].update(sample_interval="1us", sample_ports=["switch:host2"])
    return cfg


@pytest.fixture(scope="module")
def runs() -> dict:
    return {b: run_checked(mixed_port(b)) for b in ("20pkt", "20 packets")}


def samples(res) -> tuple[np.ndarray, np.ndarray]:
    q = res["queues"]
    return q["packets"].to_numpy(), q["bytes"].to_numpy()


def test_byte_buffer_counts_acks_by_their_size(runs: dict) -> None:
    res = runs["20pkt"]
    packets, queued = samples(res)
    port = port_totals(res)[("switch", "host2")]
    # Never more than 30,000 bytes, and it fills to the last segment.
    assert port["max_bytes"] == FULL
    assert queued.max() <= FULL
    # ACKs ride in the room segments leave: more than 20 packets queued at
    # once (19 segments leave 1,500 bytes, room for 37 ACKs).
    assert packets.max() > 20


def test_packet_count_buffer_gives_acks_a_whole_slot(runs: dict) -> None:
    res = runs["20 packets"]
    packets, queued = samples(res)
    # Never more than 20 packets, of any size ...
    assert packets.max() == 20
    # ... so when ACKs hold slots a full buffer holds less than 20 segments'
    # bytes: at most 19 × 1500 + 40 = 28,540 with one ACK among them.
    full = queued[packets == 20]
    assert full.size > 0 and full.min() <= 19 * 1500 + 40


def test_acks_are_tail_dropped_far_more_often_in_a_packet_count(runs: dict) -> None:
    # The third flow's packets at this port are its ACKs. A count drops an
    # arriving ACK whenever the 20 slots are full; bytes only when fewer than
    # 40 bytes are left, so its ACKs are dropped several times less often
    # (measured 293 against 24).
    ack_drops = {b: r["flows"].to_pylist()[2]["drops"] for b, r in runs.items()}
    assert ack_drops["20 packets"] > 4 * max(ack_drops["20pkt"], 1), ack_drops
