"""Packet captures (run.pcap) read back with dpkt and checked against the
run's own counters: counts, bytes, ECN codepoints, ECE echoes and order."""

from __future__ import annotations

import copy
import io
import math
import struct
from pathlib import Path

import pytest

import ecnlab

dpkt = pytest.importorskip("dpkt")
pytest.importorskip("ecnlab._engine")

SIZE = 2_000_000  # bytes per flow: 1370 full segments and one of 1200 B
MSS = 1460

# Two DCTCP flows into host 2 through a port that marks above 20 packets
# and never drops (1000-packet buffer), each ACKed packet by packet: every
# data packet crosses switch:host2 exactly once, and every ACK to host 0
# crosses switch:host0, echoing the CE mark of the packet it acknowledges
# (DCTCP's receiver with m = 1, DCTCP paper §3.1).
CFG = {
    "run": {"seed": 3, "duration": "1s", "pcap": ["switch:host2", "switch:host0"]},
    "topology": {"kind": "star", "hosts": 3, "link_rate": "10Gbps", "link_delay": "5us"},
    "switch": {
        "buffer": "1000pkt",
        "queues": 2,
        "marking": "per-queue",
        "threshold": "20pkt",
    },
    "transport": {"cc": "dctcp", "delayed_ack": 1, "mss": MSS},
    "flows": [
        {"src": 0, "dst": 2, "service": 0, "size": f"{SIZE}B"},
        {"src": 1, "dst": 2, "service": 1, "size": f"{SIZE}B"},
    ],
}


def records(data: bytes) -> list[tuple[int, int, dpkt.ethernet.Ethernet]]:
    """(timestamp in ns, original length, frame) of every record."""
    magic, _, _, _, _, snaplen, linktype = struct.unpack("<IHHiIII", data[:24])
    assert magic == 0xA1B23C4D  # nanosecond timestamps
    assert linktype == 1 and snaplen == 96
    out = []
    at = 24
    while at < len(data):
        sec, nsec, incl, orig = struct.unpack("<IIII", data[at : at + 16])
        frame = data[at + 16 : at + 16 + incl]
        assert incl <= snaplen and incl <= orig
        out.append((sec * 10**9 + nsec, orig, dpkt.ethernet.Ethernet(frame)))
        at += 16 + incl
    assert at == len(data)
    # dpkt's own reader agrees on the count.
    assert len(list(dpkt.pcap.Reader(io.BytesIO(data)))) == len(out)
    return out


def flow_of(tcp: dpkt.tcp.TCP, from_sender: bool) -> int:
    sport, dport = (tcp.sport, tcp.dport) if from_sender else (tcp.dport, tcp.sport)
    return (sport - 1024) + 64512 * (dport - 5001)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> ecnlab.Result:
    out = tmp_path_factory.mktemp("pcap") / "run"
    return ecnlab.run(copy.deepcopy(CFG), out=out, progress=False).load()


def port_row(res: ecnlab.Result, node: str, peer: str) -> dict:
    rows = res.tables["ports"].to_pylist()
    return next(r for r in rows if (r["node"], r["peer"], r["queue"]) == (node, peer, -1))


def test_every_sent_packet_is_captured_with_its_size(run: ecnlab.Result) -> None:
    assert sorted(run.pcaps) == ["switch:host0", "switch:host2"]
    assert (run.out / "pcap" / "switch-host2.pcap").is_file()
    assert run.summary["retransmits"] == 0 and run.summary["packets_dropped"] == 0
    for port in ("switch:host2", "switch:host0"):
        recs = records(run.pcaps[port])
        row = port_row(run, *port.split(":"))
        assert len(recs) == row["sent_packets"] == run.summary["pcap_packets"][port]
        # Frames are IP packets of the simulated size plus 14 bytes of Ethernet.
        assert sum(orig - 14 for _, orig, _ in recs) == row["sent_bytes"]
        stamps = [t for t, _, _ in recs]
        assert stamps == sorted(stamps)


def test_a_traced_port_captures_only_what_it_sends() -> None:
    """CoDel drops at dequeue: such a packet leaves the queue (the trace's
    -1 event) but never reaches the wire, so the capture of a port that is
    traced too holds exactly its sent packets (it used to hold the dropped
    ones as well), and its -1 events are the sent plus the dropped."""
    cfg = {
        "run": {
            "seed": 1,
            "duration": "50ms",
            "sample_ports": "none",
            "pcap": ["switch:host2"],
            "trace_ports": ["switch:host2"],
            "trace_from": "0s",
        },
        "topology": {"kind": "star", "hosts": 3, "link_rate": "1Gbps", "link_delay": "5us"},
        "switch": {
            "buffer": "1000pkt",
            "marking": "codel",
            "codel_target": "20us",
            "codel_interval": "200us",
        },
        "transport": {"cc": "reno", "min_rto": "5ms"},
        "flows": [{"src": 0, "dst": 2}, {"src": 1, "dst": 2}],
    }
    res = ecnlab.run(cfg, progress=False)
    row = port_row(res, "switch", "host2")
    assert row["dropped_aqm"] > 10, row
    assert res.summary["pcap_packets"]["switch:host2"] == row["sent_packets"]
    assert len(records(res.pcaps["switch:host2"])) == row["sent_packets"]
    trace = res.tables["trace"].to_pylist()
    leaving = sum(1 for t in trace if t["port"] == row["port"] and t["event"] == -1)
    assert leaving == row["sent_packets"] + row["dropped_aqm"]


def test_data_packets_carry_codepoints_seq_and_addresses(run: ecnlab.Result) -> None:
    flows = run.tables["flows"].to_pylist()
    data: dict[int, list[tuple[int, int]]] = {0: [], 1: []}
    ce = 0
    for _, _, eth in records(run.pcaps["switch:host2"]):
        ip = eth.data
        assert isinstance(ip, dpkt.ip.IP) and isinstance(ip.data, dpkt.tcp.TCP)
        tcp = ip.data
        if tcp.flags & dpkt.tcp.TH_SYN:
            assert ip.tos & 3 == 0  # SYNs are Not-ECT
            continue
        f = flow_of(tcp, from_sender=True)
        assert ip.src == bytes([10, 0, f, 1]) and ip.dst == bytes([10, 0, 2, 1])
        assert ip.tos >> 2 == flows[f]["service"]  # DSCP = service class
        codepoint = ip.tos & 3
        assert codepoint in (2, 3)  # ECT(0), or CE where the port marked it
        ce += codepoint == 3
        data[f].append((tcp.seq, ip.len - 40))
    # The port marked exactly the CE packets it sent; the receivers counted them.
    assert ce == port_row(run, "switch", "host2")["marked"] > 0
    assert ce == sum(f["ce_marks"] for f in flows)
    for f, segs in data.items():
        # No loss, so each segment once, in order: byte i is sequence i + 1.
        assert len(segs) == math.ceil(SIZE / MSS)
        assert [s for s, _ in segs] == [1 + i * MSS for i in range(len(segs))]
        assert sum(n for _, n in segs) == SIZE == flows[f]["bytes_received"]


def test_acks_echo_ce_marks(run: ecnlab.Result) -> None:
    """Each ACK to host 0 echoes (ECE) the CE mark of the data packet it
    acknowledges, found by sequence number in the other capture."""
    ce_of_end = {}
    for _, _, eth in records(run.pcaps["switch:host2"]):
        ip, tcp = eth.data, eth.data.data
        if not tcp.flags & dpkt.tcp.TH_SYN and flow_of(tcp, from_sender=True) == 0:
            ce_of_end[tcp.seq + ip.len - 40] = ip.tos & 3 == 3
    acks = []
    for _, _, eth in records(run.pcaps["switch:host0"]):
        tcp = eth.data.data
        assert flow_of(tcp, from_sender=False) == 0
        if tcp.flags & dpkt.tcp.TH_SYN:
            assert tcp.flags & dpkt.tcp.TH_ACK and tcp.ack == 1  # the SYN-ACK
            continue
        acks.append((tcp.ack, bool(tcp.flags & dpkt.tcp.TH_ECE)))
    # The last few ACKs may still be on their way when the run ends.
    assert len(ce_of_end) - 3 <= len(acks) <= len(ce_of_end)
    assert [a for a, _ in acks] == sorted(ce_of_end)[: len(acks)]
    assert all(ece == ce_of_end[a] for a, ece in acks)
    assert sum(ece for _, ece in acks) > 0


def test_captures_in_memory_equal_the_files(run: ecnlab.Result) -> None:
    again = ecnlab.run(copy.deepcopy(CFG), progress=False)
    assert set(again.pcaps) == set(run.pcaps)
    for port, data in again.pcaps.items():
        assert data == run.pcaps[port]


@pytest.mark.parametrize(
    ("value", "fragments"),
    [
        (["switch:host9"], ['run.pcap[0] = "switch:host9": no such switch port', "switch:host0"]),
        (["host0:switch"], ['run.pcap[0] = "host0:switch": no such switch port']),
        (["switch:host1", "switch:host1"], ['run.pcap[1] = "switch:host1": listed twice']),
        ([1], ["run.pcap[0] = 1: must be a string (in quotes)"]),
        ({"a": 1}, ["run.pcap: invalid type: map, expected one value or a list of them"]),
    ],
)
def test_bad_pcap_values_get_one_line(value: object, fragments: list[str]) -> None:
    cfg = copy.deepcopy(CFG)
    cfg["run"]["pcap"] = value
    with pytest.raises(ecnlab.ConfigError) as info:
        ecnlab.run(cfg, progress=False)
    message = str(info.value)
    assert "\n" not in message
    for fragment in fragments:
        assert fragment in message, message


def test_no_capture_without_pcap(tmp_path: Path) -> None:
    cfg = copy.deepcopy(CFG)
    del cfg["run"]["pcap"]
    res = ecnlab.run(cfg, out=tmp_path / "run", progress=False)
    assert not res.pcaps and "pcap_packets" not in res.summary
    assert not (tmp_path / "run" / "pcap").exists()


def test_pings_number_their_echoes() -> None:
    """Issue 55: an echo stream's requests carry sequence numbers 1, 2, 3, ...
    (as ping(8) numbers them), each reply its request's, the identifier is the
    stream's index, and the ICMP checksum is right over the zero payload."""
    # 2 streams from host 0 to host 2 (the second offset by 50 us), one echo every
    # 100 us for 1 ms: the first sends at 0, 100, ..., 900 us, 10 requests; the
    # second at 50, ..., 950 us, also 10. Requests cross switch:host2, replies
    # switch:host0 (the last replies return before 1 ms: RTT 4 x 5 us plus
    # transmission).
    cfg = {
        "run": {"duration": "1ms", "pcap": ["switch:host2", "switch:host0"]},
        "topology": CFG["topology"],
        "ping": [
            {"src": 0, "dst": 2, "interval": "100us"},
            {"src": 0, "dst": 2, "interval": "100us", "start": "50us"},
        ],
    }
    res = ecnlab.run(cfg, progress=False)
    for port, kind in (("switch:host2", dpkt.icmp.ICMP_ECHO), ("switch:host0", 0)):
        echoes = [eth.data.data for _, _, eth in records(res.pcaps[port])]
        assert all(isinstance(e, dpkt.icmp.ICMP) and e.type == kind for e in echoes)
        by_stream: dict[int, list[int]] = {}
        for e in echoes:
            by_stream.setdefault(e.data.id, []).append(e.data.seq)
            # The checksum of the header (the payload, not stored, is zeros).
            header = bytes(e)[:8]
            words = sum(struct.unpack("!4H", header))
            while words > 0xFFFF:
                words = (words & 0xFFFF) + (words >> 16)
            assert words == 0xFFFF, port
        assert by_stream == {0: list(range(1, 11)), 1: list(range(1, 11))}, port
