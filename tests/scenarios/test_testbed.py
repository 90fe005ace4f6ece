"""`ecnlab testbed`: real Linux TCP between network namespaces through the
engine's own queue disciplines (MQ-ECN §4.2's server-emulated switch).

Needs root, `ip` and a built `ecnlab-switch` (`make test` builds it); the
module is skipped, with the reason, where namespaces cannot be created.

Rates and delays are scaled together: the switch was measured to hold its
token buckets within 1% up to MAX_RATE_BPS = 200 Mbps on this 2-core
machine (README), not the paper's 1 Gbps, so MQ-ECN Fig. 3 runs at 200 Mbps
with its 20 µs link delay made 100 µs: the bandwidth-delay product, and so
how K = 16 packets compares with it, stays the paper's. Real TCP over a
few seconds varies, so each bound below says where its slack comes from.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ecnlab.errors import ConfigError

REPO = Path(__file__).resolve().parents[2]
FIG3 = REPO / "experiments" / "mqecn-fig3" / "base.toml"

# MQ-ECN Fig. 3's star (experiments/mqecn-fig3/base.toml) on the testbed:
# ECN* (the kernel's Reno with ECN) for DCTCP, which this kernel lacks; the
# paper's finding is about the switch's marking, which any ECN TCP obeys.
RATE = "200Mbps"
FIG3_SET = [
    "transport.cc=ecn-star",
    f"topology.link_rate={RATE}",
    "topology.link_delay=100us",
    "run.duration=4s",
    "run.warmup=1s",
    "run.sample_interval=1ms",
]
# Goodput a 1500-byte IP packet can carry on an Ethernet wire: 1448 B of
# TCP payload (20 B IP + 32 B TCP with timestamps) per 1538 B on the wire
# (the switch counts preamble, FCS and gap), 94.1% of the rate.
GOODPUT_CEILING = 1448 / 1538


def _unavailable() -> str | None:
    if sys.platform != "linux":
        return "network namespaces are Linux only"
    if os.geteuid() != 0:
        return "ecnlab testbed needs root (network namespaces)"
    if shutil.which("ip") is None:
        return "no `ip` command (iproute2)"
    probe = f"ecnlab-probe-{uuid.uuid4().hex[:8]}"
    made = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    if made.returncode != 0:
        return f"cannot create a network namespace: {made.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    return None


_WHY = _unavailable()
pytestmark = pytest.mark.skipif(_WHY is not None, reason=_WHY or "")


@pytest.fixture(scope="module", autouse=True)
def switch_built() -> None:
    from ecnlab.testbed.run import switch_binary

    try:
        switch_binary()
    except FileNotFoundError as exc:
        pytest.fail(str(exc))


def _ids() -> set[str]:
    from ecnlab.testbed.netns import run_ids_left

    return run_ids_left()


def _run(tmp_path: Path, name: str, extra: list[str]) -> Any:
    from ecnlab.testbed import run_testbed

    before = _ids()
    # A ping in the 4-flow service's queue, as MQ-ECN Fig. 6(b) (64 B
    # every 2 ms: 0.3 Mbps beside 200).
    cfg = {**_fig3_dict(), "ping": [{"src": 1, "dst": 2, "service": 1, "interval": "2ms"}]}
    result = run_testbed(cfg, tmp_path / name, overrides=FIG3_SET + extra)
    # Nothing of the run is left behind.
    assert _ids() == before
    _check_conservation(result.summary)
    return result


def _check_conservation(summary: dict[str, Any], at_least: int = 10_000) -> None:
    """Every frame the switch took in left, was dropped, went nowhere
    (not IPv4 / unknown address) or is still queued."""
    sw = summary["switch"]
    accounted = (
        sw["frames_out"]
        + sw["dropped_overflow"]
        + sw["dropped_aqm"]
        + sw["not_forwarded"]
        + sw["tx_refused"]
        + sw["queued_at_end"]
    )
    assert sw["frames_in"] == accounted, sw
    assert sw["conserved"] is True
    assert sw["frames_in"] > at_least
    # The kernel dropped nothing before the switch read it: the queue was
    # the qdisc's, not a socket buffer's.
    assert sw["kernel_rx_drops"] == 0


def _shares(result: Any) -> tuple[float, float, float]:
    g = result.summary["goodput_gbps_by_service"]
    one, four = float(g["0"]), float(g["1"])
    return one, four, four / (one + four)


@pytest.fixture(scope="module")
def fig3_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("fig3")
    return {
        scheme: _run(tmp, scheme, [f"switch.marking={scheme}"])
        for scheme in ("per-port", "per-queue", "mq-ecn")
    }


def test_per_port_marking_gives_the_4_flow_service_more(fig3_runs: dict[str, Any]) -> None:
    # MQ-ECN §2.2.3, Fig. 3: 539 vs 403 Mbps, the 4-flow service 57.2%
    # (measured here: 58.7%). Runs of 3 s of real TCP vary by a few points,
    # so "clearly more than half" is taken as over 53%.
    one, four, share = _shares(fig3_runs["per-port"])
    assert share > 0.53, (one, four)
    # Every flow negotiated ECN, and the switch marked.
    assert fig3_runs["per-port"].summary["flows_ecn_negotiated"] == 5
    assert fig3_runs["per-port"].summary["ce_marks"] > 100


@pytest.mark.parametrize("scheme", ["per-queue", "mq-ecn"])
def test_per_queue_and_mq_ecn_split_evenly(fig3_runs: dict[str, Any], scheme: str) -> None:
    # MQ-ECN Fig. 3 and §4.2: with a threshold per queue (or MQ-ECN's
    # per-queue share of it) each service keeps its DWRR half, within 5%
    # (the bound; measured here: 50.0%).
    one, four, share = _shares(fig3_runs[scheme])
    assert abs(share - 0.5) < 0.05, (scheme, one, four)
    # Both queues stay busy: total goodput at least 90% of what the wire
    # can carry (the paper: 936 of ~941 Mbps; measured here 94-95%, the
    # rest lost when the switch's loop wakes late on this shared machine).
    rate = 200e6
    assert (one + four) * 1e9 > 0.90 * GOODPUT_CEILING * rate, (one, four)


def test_mq_ecn_holds_the_4_flow_queue_shorter_than_per_queue(fig3_runs: dict[str, Any]) -> None:
    # MQ-ECN Fig. 6(b): a ping in the 4-flow service's queue sees 651 µs
    # under per-queue K and 441 µs under MQ-ECN (1 Gbps). MQ-ECN's
    # threshold for a queue with half the port is K/2 = 8 packets; each
    # takes 123 µs at the queue's 100 Mbps, so the queueing part of the
    # RTT should fall from about 2 ms to 1 ms (a base RTT of 0.4 ms beside
    # it): measured medians 2.31 and 1.64 ms. Medians, since a ping's
    # answer can wait for the agent's thread on a loaded machine (means
    # were 4 and 8 ms); required: at least 15% lower.
    median = {
        scheme: float(np.median(fig3_runs[scheme]["rtt"].column("rtt").to_numpy()))
        for scheme in ("per-queue", "mq-ecn")
    }
    assert median["mq-ecn"] < 0.85 * median["per-queue"], median
    assert fig3_runs["mq-ecn"]["rtt"].num_rows > 1000


@pytest.mark.parametrize("scheme", ["per-port", "per-queue", "mq-ecn"])
def test_the_simulator_and_the_testbed_agree(
    fig3_runs: dict[str, Any], scheme: str, tmp_path: Path
) -> None:
    # The same file under `ecnlab run`: shares within 5 points (the issue's
    # bound). Measured: per-port 57.3% simulated, 58.7% on the testbed;
    # per-queue and MQ-ECN 50.0% and 50.0-50.1%.
    import ecnlab

    sim = ecnlab.run(FIG3, overrides=[*FIG3_SET, f"switch.marking={scheme}"])
    g = sim.goodput_by_service
    simulated = g[1] / (g[0] + g[1])
    _, _, real = _shares(fig3_runs[scheme])
    assert abs(real - simulated) < 0.05, (scheme, simulated, real)


def test_the_testbed_writes_what_ecnlab_run_writes(fig3_runs: dict[str, Any]) -> None:
    result = fig3_runs["per-port"]
    out = result.out
    for name in ("flows", "goodput", "queues", "rtt", "ports", "summary"):
        suffix = ".json" if name == "summary" else ".parquet"
        assert (out / f"{name}{suffix}").is_file(), name
    flows = result["flows"]
    assert flows.num_rows == 5
    assert flows.column("kind").to_pylist() == ["long"] * 5
    ports = result["ports"]
    # The switch port to host 2 carried the data: its id is the simulator's
    # (host 2's link adds ports 4 and 5), and it sent what it took in.
    rows = [r for r in ports.to_pylist() if r["peer"] == "host2" and r["queue"] == -1]
    assert len(rows) == 1 and rows[0]["port"] == 5
    assert rows[0]["enqueued"] == rows[0]["sent_packets"] + rows[0]["dropped_aqm"]
    # `ecnlab fct` reads a testbed directory.
    proc = subprocess.run(
        [sys.executable, "-m", "ecnlab", "fct", str(out), "--json"], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr


def test_sized_flows_and_pings(tmp_path: Path) -> None:
    # Four 100 KB flows (one from host 0, three from host 1) and a ping.
    from ecnlab.testbed import run_testbed

    flows = [
        "flows.0.size=100KB",
        "flows.0.count=1",
        "flows.1.size=100KB",
        "flows.1.count=3",
        "run.duration=2s",
        "run.warmup=0.2s",
    ]
    cfg = {
        **_fig3_dict(),
        "ping": [{"src": 0, "dst": 2, "service": 0, "interval": "10ms"}],
    }
    result = run_testbed(cfg, tmp_path / "sized", overrides=FIG3_SET + flows)
    # 400 KB is about 280 data frames, as many ACKs, 180 pings each way.
    _check_conservation(result.summary, at_least=500)
    fl = result["flows"].to_pylist()
    assert [f["kind"] for f in fl] == ["sized"] * 4
    # 100 KB at 200 Mbps takes 4 ms on the wire; four at once, under 20 ms
    # each; a loaded 2-core machine's scheduling is the slack up to 200 ms.
    for f in fl:
        assert f["bytes_received"] == 100_000
        assert 0.004 < f["fct"] < 0.2, f
    rtt = result["rtt"].column("rtt").to_numpy()
    # 10 ms apart over 1.8 s: about 180 samples; idle-path RTT of a few
    # tens of µs, under 5 ms even on a loaded machine.
    assert len(rtt) > 100
    assert 0 < float(rtt.mean()) < 5e-3
    proc = subprocess.run(
        [sys.executable, "-m", "ecnlab", "fct", str(result.out), "--json"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    stats = json.loads(proc.stdout)["fct"]
    assert stats["flows"] == 4 and stats["unfinished"] == 0
    assert 0.004 < stats["small_mean"] < 0.2


def _fig3_dict() -> dict[str, Any]:
    from ecnlab.config import load_config

    return load_config(FIG3)


def test_a_terminated_run_leaves_nothing(tmp_path: Path) -> None:
    before = _ids()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "ecnlab",
            "testbed",
            str(FIG3),
            "--out",
            str(tmp_path / "k"),
            *[a for s in FIG3_SET for a in ("--set", s)],
            "--set",
            "run.duration=20s",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    new: set[str] = set()
    deadline = time.monotonic() + 20
    while not new and time.monotonic() < deadline:
        time.sleep(0.1)
        new = _ids() - before
    assert new, "the run never created its namespaces"
    time.sleep(1.5)  # the switch and the agents are up
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "torn down" in err
    (rid,) = new
    assert rid not in _ids()
    links = subprocess.run(["ip", "link"], capture_output=True, text=True).stdout
    assert f"e{rid}" not in links
    # No process of the run is left (their command lines name its files).
    left = [
        cmd
        for pid in os.listdir("/proc")
        if pid.isdigit() and int(pid) != os.getpid()
        for cmd in [_cmdline(pid)]
        if f"ecnlab-tb-{rid}" in cmd
    ]
    assert left == []
    assert not (tmp_path / "k" / "summary.json").exists()


def _cmdline(pid: str) -> str:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return ""
    return raw.replace(b"\0", b" ").decode(errors="replace")


def test_bad_inputs_each_get_one_clear_error() -> None:
    from ecnlab.testbed import run_testbed

    before = _ids()
    cases = [
        (["transport.cc=dctcp"], "transport.cc"),
        (["topology.hosts=12"], "topology.hosts = 12"),
        (["topology.link_rate=1Gbps"], "topology.link_rate"),
    ]
    # A leaf-spine (MQ-ECN Fig. 10's): one switch process serves a star only.
    with pytest.raises(ConfigError, match=r"topology\.kind = 'leaf-spine'.*only \"star\""):
        run_testbed(
            REPO / "experiments" / "mqecn-fig10" / "base.toml", "/nonexistent/never-written"
        )
    for extra, key in cases:
        with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
            run_testbed(FIG3, "/nonexistent/never-written", overrides=FIG3_SET + extra)
    assert _ids() == before


def test_not_root_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    from ecnlab.testbed import TestbedUnavailable, run_testbed

    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(TestbedUnavailable, match="needs root"):
        run_testbed(FIG3, "/nonexistent/never-written", overrides=FIG3_SET)
