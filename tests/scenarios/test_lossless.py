"""The lossless switch: a shared buffer under dynamic thresholds
(Choudhury & Hahne 1998) and PFC (IEEE 802.1Qbb) with headroom. Each test
states the number theory or the standard predicts; every run is checked for
determinism and packet conservation (`run_checked`)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ecnlab
from scenario_kit import assert_refused, port_totals, run_checked

FRAME = 1036  # 1,000 B of payload + 36 B of headers: the HPCC simulator's data frame


def incast(
    senders: int,
    buffer: str = "2MB",
    rate: str = "100Gbps",
    duration: str = "1ms",
    switch: dict[str, Any] | None = None,
    **run: Any,
) -> dict[str, Any]:
    """N long-lived Reno flows (no ECN) into the last host of a star: the
    queue is held only by PFC (lossless) or the buffer's threshold (lossy)."""
    return {
        "run": {"seed": 1, "duration": duration, "sample_ports": "none", **run},
        "topology": {"kind": "star", "hosts": senders + 1, "link_rate": rate, "link_delay": "1us"},
        "switch": {
            "buffer": "100KB",
            "buffer_policy": "dynamic",
            "shared_buffer": buffer,
            "pfc": True,
            "pfc_priorities": [0],
            **(switch or {}),
        },
        "transport": {"cc": "reno", "mss": 1000, "header": 36},
        "flows": [{"src": h, "dst": senders} for h in range(senders)],
    }


# ---------------- dynamic thresholds ----------------


@pytest.mark.parametrize("alpha", [0.5, 1.0, 2.0])
def test_one_congested_queue_settles_at_alpha_over_one_plus_alpha(alpha: float) -> None:
    """Choudhury & Hahne 1998 §III: a queue admitted while it holds less than
    α × the free buffer peaks at α/(1+α) of it (1 MB: 333 KB at α = 0.5,
    500 KB at 1, 667 KB at 2), within a packet. Lossy (no PFC): TCP fills it
    and the threshold drops."""
    cfg = incast(
        4, buffer="1MB", rate="10Gbps", duration="20ms", switch={"pfc": False, "dt_alpha": alpha}
    )
    del cfg["switch"]["pfc_priorities"]
    res = run_checked(cfg)
    peak = port_totals(res)[("switch", "host4")]["max_bytes"]
    want = alpha / (1 + alpha) * 1_000_000
    assert abs(peak - want) <= 2 * FRAME, (alpha, peak, want)
    assert res.summary["buffer_threshold_drops"] > 0


def test_n_congested_queues_each_hold_alpha_over_one_plus_n_alpha() -> None:
    """N queues congested together each settle at α/(1+Nα) of the buffer
    (Choudhury & Hahne 1998 §III): 4 receivers, each behind 4 senders, α = 1:
    200 KB of 1 MB each. The buffer's samples show the sum never above
    N·α/(1+Nα) = 800 KB (plus a packet per queue), and every queue, when all
    four are full together, within 3% of 200 KB."""
    n, per = 4, 4
    flows = [{"src": r * per + s, "dst": n * per + r} for r in range(n) for s in range(per)]
    cfg = {
        "run": {"seed": 1, "duration": "20ms", "sample_interval": "20us", "sample_ports": "hosts"},
        "topology": {
            "kind": "star",
            "hosts": n * per + n,
            "link_rate": "10Gbps",
            "link_delay": "1us",
        },
        "switch": {"buffer": "100KB", "buffer_policy": "dynamic", "shared_buffer": "1MB"},
        "transport": {"cc": "reno", "mss": 1000, "header": 36},
        "flows": flows,
    }
    res = run_checked(cfg)
    q = res["queues"].to_pandas()
    ports = [res.port("switch", f"host{n * per + r}") for r in range(n)]
    wide = q[q["port"].isin(ports)].pivot_table(index="time", columns="port", values="bytes")
    full_together = wide.min(axis=1).max()
    assert abs(full_together - 200_000) <= 0.03 * 200_000, full_together
    buf = res["buffer"].to_pandas()
    assert buf["shared_bytes"].max() <= 800_000 + n * FRAME + 20 * 40, buf["shared_bytes"].max()


# ---------------- PFC ----------------


@pytest.mark.parametrize("senders", [2, 8, 32, 128])
@pytest.mark.parametrize("shared", [500_000, 4_000_000])
def test_incast_at_100g_with_auto_headroom_drops_nothing(senders: int, shared: int) -> None:
    """An N → 1 incast at 100 Gb/s into a shared buffer with PFC and "auto"
    headroom (2 frames + the PAUSE + the response + twice the wire, + the
    hosts' landing jitter: IEEE 802.1Qbb Annex N's terms; 32,226 B per host
    port here) drops nothing: not one packet, and no lossless drop. The
    buffer is the headroom of its N + 1 ports plus 0.5 or 4 MB shared. Past
    the buffer the senders are paused: the receiver's link stays busy (above
    90% of its 96.5 Gb/s of payload)."""
    buffer = f"{(senders + 1) * 32_226 + shared}B"
    res = run_checked(incast(senders, buffer=buffer))
    s = res.summary
    assert s["packets_dropped"] == 0 and s["lossless_drops"] == 0, s
    assert s["retransmits"] == 0
    if senders >= 8:
        assert s["pfc_pause_frames"] > 0
        assert s["headroom_peak_bytes"] > 0
    gbps = sum(s["goodput_gbps_by_service"].values())
    assert gbps > 0.9 * 100 * 1000 / FRAME, gbps


def test_headroom_below_the_formula_drops_and_says_so() -> None:
    """Headroom of 4 frames is far below the 30 KB a 100 Gb/s, 1 µs link
    needs: lossless packets are dropped, counted as lossless drops (in the
    summary, the pfc table and the port's overflow drops) and the run's
    warnings say so."""
    res = run_checked(incast(8, buffer="1MB", switch={"pfc_headroom": "4pkt"}))
    s = res.summary
    assert s["lossless_drops"] > 0 and s["lossless_drops"] == s["packets_dropped"]
    assert any("lossless_drops" in w and "pfc_headroom" in w for w in s["warnings"]), s["warnings"]
    pfc = res["pfc"].to_pandas()
    assert pfc["headroom_drops"].sum() == s["lossless_drops"]
    assert (pfc["peak_headroom_bytes"] <= 4 * FRAME).all()


def test_pause_frames_are_on_the_wire_and_in_the_capture() -> None:
    """PAUSE and RESUME are 64-byte MAC control frames (EtherType 0x8808,
    opcode 0x0101) sent back to the upstream: each one the switch sends to a
    sender is in that port's capture, with its priority's bit in the
    class-enable vector and 65,535 quanta (RESUME: 0)."""
    cfg = incast(8, buffer="1MB")
    cfg["run"]["pcap"] = ["switch:host0"]
    res = run_checked(cfg)
    raw = res.pcaps["switch:host0"]
    frames = []
    at = 24
    while at < len(raw):
        caplen = int.from_bytes(raw[at + 8 : at + 12], "little")
        body = raw[at + 16 : at + 16 + caplen]
        if body[12:14] == b"\x88\x08":
            frames.append(body)
        at += 16 + caplen
    row = (
        res["pfc"]
        .to_pandas()
        .query("node == 'switch' and peer == 'host0' and priority == 0")
        .iloc[0]
    )
    assert len(frames) == row["pause_sent"] + row["resume_sent"] > 0
    for f in frames:
        assert f[14:16] == b"\x01\x01" and f[16:18] == b"\x00\x01"
        assert int.from_bytes(f[18:20], "big") in (0, 65535)


def test_victim_flow_is_paused_through_a_shared_upstream() -> None:
    """Head-of-line blocking: three flows congest leaf1's port to host3; a
    fourth, host2 → host5, never crosses it, but shares leaf0's uplink and
    the spine's port into leaf1 (40 Gb/s each: room for all), which PFC
    pauses for all of them. Lossless, and the victim gets less than half
    the goodput it gets when the buffer drops instead (no PFC), where its
    path has 30 Gb/s to spare (the HPCC simulator's 400 G fabric shows the
    same: 17 of 100 Gb/s for its victim)."""

    def cfg(pfc: bool) -> dict[str, Any]:
        return {
            "run": {"seed": 1, "duration": "10ms", "sample_ports": "none"},
            "topology": {
                "kind": "leaf-spine",
                "leaves": 2,
                "spines": 1,
                "hosts_per_leaf": 3,
                "link_rate": "10Gbps",
                "uplink_rate": "40Gbps",
                "link_delay": "1us",
            },
            "switch": {"buffer": "100KB", "buffer_policy": "dynamic", "pfc": pfc}
            | ({"pfc_priorities": [0]} if pfc else {}),
            "transport": {"cc": "reno"},
            "flows": [
                {"src": 0, "dst": 3},
                {"src": 1, "dst": 3},
                {"src": 4, "dst": 3},
                {"src": 2, "dst": 5},
            ],
        }

    def victim(res: ecnlab.Result) -> int:
        return int(res["flows"].to_pandas().query("src == 2")["bytes_received"].iloc[0])

    lossless, lossy = run_checked(cfg(True)), run_checked(cfg(False))
    assert lossless.summary["packets_dropped"] == 0
    assert lossy.summary["packets_dropped"] > 0
    assert victim(lossless) < 0.5 * victim(lossy), (victim(lossless), victim(lossy))
    pfc = lossless["pfc"].to_pandas()
    spine_paused = pfc.query("node == 'spine0' and peer == 'leaf1'")["paused_seconds"].sum()
    assert spine_paused > 1e-3, spine_paused


def ring(hop: int, **switch: Any) -> dict[str, Any]:
    """5 switches in a ring, a host on each; host i sends to host i + hop."""
    return {
        "run": {"seed": 1, "duration": "5ms", "sample_ports": "none"},
        "topology": {
            "kind": "ring",
            "switches": 5,
            "hosts_per_switch": 1,
            "link_rate": "10Gbps",
            "link_delay": "1us",
        },
        "switch": {
            "buffer": "100KB",
            "buffer_policy": "dynamic",
            "pfc": True,
            "pfc_priorities": [0],
            **switch,
        },
        "transport": {"cc": "reno"},
        "flows": [{"src": i, "dst": (i + hop) % 5} for i in range(5)],
    }


def test_cyclic_buffer_dependency_deadlocks_and_the_run_says_where() -> None:
    """Every flow crosses two ring links clockwise (i → i + 2, the shortest
    path on 5 switches), so each ring port's ingress queue waits on the next
    one's: a cyclic buffer dependency. PFC pauses all five ring ports on
    each other; the run finds the cycle within a millisecond of simulated
    time after it formed (checks every 100 µs), ends there and names the
    ports. One hop (i → i + 1) has no cycle: it runs to its end."""
    res = run_checked(ring(2))
    s = res.summary
    assert s["ended_by"] == "deadlock", s
    msg = s["deadlock"]
    for i in range(5):
        assert f"ring{i}:ring{(i + 1) % 5}" in msg, msg
    formed = float(msg.rsplit("since ", 1)[1].split(" s")[0])
    assert 0 < s["sim_seconds"] - formed <= 1e-3, (s["sim_seconds"], formed)
    assert any("deadlock" in w for w in s["warnings"])
    assert s["packets_dropped"] == 0
    ok = run_checked(ring(1)).summary
    assert ok["ended_by"] == "duration" and "deadlock" not in ok, ok


def test_tcp_marking_schemes_run_on_shared_buffer_ports() -> None:
    """DCTCP with per-queue and MQ-ECN marking on DWRR over the shared buffer:
    marks, keeps the queue near K (K = 65 packets at 10G, 25 µs: the queue's
    peak stays below the threshold's dynamic limit), no PFC needed."""
    for marking in ["per-queue", "mq-ecn"]:
        cfg = incast(4, buffer="1MB", rate="10Gbps", duration="20ms", switch={"pfc": False})
        del cfg["switch"]["pfc_priorities"]
        cfg["switch"] |= {"marking": marking, "threshold": "65pkt", "queues": 2}
        cfg["transport"] = {"cc": "dctcp"}
        res = run_checked(cfg)
        row = port_totals(res)[("switch", "host4")]
        assert row["marked"] > 0, marking
        assert res.summary["packets_dropped"] == 0, marking


def _run(cfg: dict[str, Any]) -> None:
    ecnlab.run(cfg, progress=False)


def test_bad_lossless_keys_get_one_line_naming_the_key() -> None:
    base = incast(2)
    cases: list[tuple[dict[str, Any], str]] = [
        ({"dt_alpha": 0}, "switch.dt_alpha = 0"),
        ({"buffer_policy": "shared"}, "switch.buffer_policy"),
        ({"pfc_priorities": [9]}, "switch.pfc_priorities[0] = 9"),
        ({"buffer_policy": "port"}, "switch.pfc = true"),
        ({"pfc_headroom": "lots"}, "switch.pfc_headroom"),
        ({"shared_buffer": "10KB"}, "switch.shared_buffer = 10000B"),
        ({"pfc_quanta": 0}, "switch.pfc_quanta = 0"),
    ]
    for change, want in cases:
        cfg = incast(2)
        cfg["switch"] |= change
        # A buffer too small for its headroom is found when the network is built.
        built = "shared_buffer" in change
        assert_refused(cfg, want, change, check=_run if built else None)
    threads = dict(base, run={**base["run"], "threads": 2})
    assert_refused(threads, "switch.pfc = true: runs on the sequential engine only", "threads")
    fq = incast(2)
    fq["switch"]["qdisc"] = "fq-codel"
    assert_refused(fq, 'switch.qdisc = "fq-codel"', "fq-codel")


def test_lossless_outputs_are_only_in_lossless_runs() -> None:
    """A run without a shared buffer or PFC writes no pfc or buffer table and
    no PFC keys in its summary: the outputs every other run had are as before."""
    cfg = incast(2, switch={"pfc": False, "buffer_policy": "port"})
    del cfg["switch"]["pfc_priorities"]
    res = ecnlab.run(cfg, progress=False)
    assert "pfc_pause_frames" not in res.summary
    assert not {"pfc", "buffer"} & set(res.tables), list(res.tables)
    assert np.isfinite(res.summary["sim_seconds"])


def stuck(watchdog: str | None) -> dict[str, Any]:
    """Host 3 stops taking packets from its NIC from 1 to 5 ms while hosts 0
    and 1 send to it; host 0 also sends to host 2, which is healthy."""
    sw: dict[str, Any] = {
        "buffer": "100KB",
        "buffer_policy": "dynamic",
        "pfc": True,
        "pfc_priorities": [0],
        "pfc_stuck_hosts": [3],
        "pfc_stuck_from": "1ms",
        "pfc_stuck_until": "5ms",
    }
    if watchdog:
        sw["pfc_watchdog"] = watchdog
    return {
        "run": {"seed": 1, "duration": "6ms", "sample_ports": "none"},
        "topology": {"kind": "star", "hosts": 4, "link_rate": "10Gbps", "link_delay": "1us"},
        "switch": sw,
        "transport": {"cc": "reno"},
        "flows": [{"src": 0, "dst": 3}, {"src": 1, "dst": 3}, {"src": 0, "dst": 2}],
    }


def test_a_stuck_receiver_storms_and_the_watchdog_breaks_it() -> None:
    """A stuck receiver's NIC PAUSEs its switch port for the whole 4 ms; the
    switch's ingress queues from hosts 0 and 1 fill and pause their NICs in
    turn, so host 0's flow to the healthy host 2 stalls too (one NIC queue):
    the storm spreads, and nothing is dropped. With a 200 µs watchdog the
    switch stops obeying the stuck host's PAUSEs, the stuck host's NIC drops
    what it cannot hold (counted apart from lossless drops), the senders
    resume, and the victim flow gets more than three times the goodput."""
    storm, guarded = run_checked(stuck(None)), run_checked(stuck("200us"))
    s, g = storm.summary, guarded.summary
    assert s["packets_dropped"] == 0 and s["lossless_drops"] == 0, s
    pfc = storm["pfc"].to_pandas()
    to_stuck = pfc.query("node == 'switch' and peer == 'host3'")["paused_seconds"].sum()
    assert to_stuck > 3.5e-3, to_stuck
    assert pfc.query("node == 'host0' and peer == 'switch'")["paused_seconds"].sum() > 3e-3
    assert g["pfc_watchdog_trips"] > 0 and g["stuck_receiver_drops"] > 0, g
    assert g["lossless_drops"] == 0, g
    assert g["packets_dropped"] == g["stuck_receiver_drops"]

    def victim(res: ecnlab.Result) -> int:
        f = res["flows"].to_pandas()
        return int(f.query("src == 0 and dst == 2")["bytes_received"].iloc[0])

    assert victim(guarded) > 3 * victim(storm), (victim(guarded), victim(storm))
