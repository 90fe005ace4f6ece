"""A [[flows]] entry may run its own congestion control and send ECT(1),
the L4S identifier (RFC 9331), so that Classic and scalable flows share one
network. Each flow behaves as its own transport says: a Reno entry on a
DCTCP network sends Not-ECT packets and sees no marks, DCTCP flows are
marked; an ECT(1) entry's data packets carry ECN bits 01 on the wire."""

from __future__ import annotations

import tempfile
from pathlib import Path

import dpkt

import ecnlab
from scenario_kit import check_conservation, run_checked, star


def mixed(**extra: object) -> dict:
    return star(
        duration="0.2s",
        warmup="0.05s",
        switch={"marking": "per-port", "threshold": "20pkt"},
        transport={"cc": "dctcp"},
        flows=[
            {"src": 0, "dst": 2, "cc": "reno"},
            {"src": 1, "dst": 2, "ect1": True},
        ],
        **extra,
    )


def test_each_entry_runs_its_own_transport() -> None:
    res = run_checked(mixed())
    flows = res["flows"].to_pylist()
    reno, dctcp = flows[0], flows[1]
    # The port marks above 20 packets: DCTCP's packets are ECN-capable and
    # get marks; Reno's are Not-ECT, so it sees none (it meets drops only
    # when the 300 KB buffer overflows).
    assert reno["ce_marks"] == 0 and dctcp["ce_marks"] > 100, (reno, dctcp)
    # Reno, halving only on loss, takes more of the port than DCTCP, which
    # backs off at every mark (per-port ECN with a loss-based flow).
    assert reno["bytes_received"] > dctcp["bytes_received"]
    check_conservation(res.summary)


def test_an_ect1_entry_sends_ect1_on_the_wire() -> None:
    cfg = mixed()
    cfg["run"]["pcap"] = ["switch:host2"]
    with tempfile.TemporaryDirectory() as tmp:
        ecnlab.run(cfg, out=Path(tmp), progress=False)
        with open(Path(tmp) / "pcap" / "switch-host2.pcap", "rb") as fh:
            codepoints: dict[int, set[int]] = {0: set(), 1: set()}
            for _, frame in dpkt.pcap.Reader(fh):
                ip = dpkt.ethernet.Ethernet(frame).data
                # Data packets (the capture keeps headers; the IP length
                # says 1500); host h is 10.0.h.1.
                if ip.len > 100:
                    codepoints[ip.src[2]].add(ip.tos & 3)
    # Reno: Not-ECT (00). ECT(1) is 01, and CE (11) where the port marked.
    assert codepoints[0] == {0}, codepoints
    assert codepoints[1] == {1, 3}, codepoints


def test_flow_transport_keys_are_checked() -> None:
    for flows, want in [
        ([{"src": 0, "dst": 2, "cc": "vegas"}], "flows[0].cc: unknown variant `vegas`"),
        ([{"src": 0, "dst": 2, "cc": "reno", "ect1": True}], 'flows[0].ect1 = true: cc "reno"'),
        ([{"src": 0, "dst": 2, "cc": "pfabric"}], 'flows[0].cc = "pfabric": pFabric\'s transport'),
    ]:
        try:
            ecnlab.validate(star(flows=flows))
        except ecnlab.ConfigError as e:
            assert str(e).startswith(want), (flows, str(e))
        else:
            raise AssertionError(f"{flows} was accepted")
