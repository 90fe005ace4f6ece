"""`ecnlab import-hpcc` without the engine: what each of the HPCC
simulator's keys becomes in the experiment, what is refused, what is warned
about, the renumbering of nodes, and the peer's FCT format both ways. The
runs of converted experiments are in tests/scenarios/test_hpcc_import_runs.py.
The input files are the peer's (tests/data/hpcc/README.md)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow as pa
import pytest
import tomllib

from ecnlab.cli import main
from ecnlab.errors import ConfigError
from ecnlab.peers.hpcc import import_hpcc, peer_headroom
from ecnlab.peers.hpcc_fct import compare_fct, peer_ip, read_fct, write_fct

DATA = Path(__file__).resolve().parents[1] / "data" / "hpcc"


def scenario(tmp_path: Path, name: str, **changes: str) -> Path:
    """A copy of a peer scenario with config keys changed (or added)."""
    d = tmp_path / name
    shutil.copytree(DATA / name, d)
    cfg = d / "config.txt"
    lines = cfg.read_text().splitlines()
    for key, value in changes.items():
        lines = [ln for ln in lines if ln.split()[:1] != [key]] + [f"{key} {value}"]
    cfg.write_text("\n".join(lines) + "\n")
    return cfg


def test_incast8_dcqcn_maps_every_key() -> None:
    imp = import_hpcc(DATA / "incast8_dcqcn" / "config.txt")
    c = imp.config
    # The text written is the config.
    assert tomllib.loads(imp.toml) == c
    assert c["run"] == {"seed": 1, "duration": "20ms"}
    t = c["topology"]
    assert (t["kind"], t["hosts"], t["switches"], t["switch_names"]) == ("graph", 9, 1, ["sw9"])
    assert (t["link_rate"], t["link_delay"]) == ("100Gbps", "1us")
    assert t["links"] == [[h, 9] for h in range(9)]
    # SIMULATOR_STOP_TIME 0.02; flows: 1 GB each from t = 0, pg 3 -> service 1
    # (ACK_HIGH_PRIO 1: service 0 carries the ACKs, NACKs and CNPs).
    assert c["flows"] == [
        {"src": h, "dst": 8, "size": "1000000000B", "start": "0s", "service": 1} for h in range(8)
    ]
    tr = c["transport"]
    # config.txt: ALPHA_RESUME_INTERVAL 1, RATE_DECREASE_INTERVAL 4, RP_TIMER 300 (us),
    # EWMA_GAIN 1/256, FAST_RECOVERY_TIMES 1, RATE_AI 20Mb/s, RATE_HAI 200Mb/s,
    # MIN_RATE 1000Mb/s, CLAMP_TARGET_RATE 0, PACKET_PAYLOAD_SIZE 1000, L2_ACK_INTERVAL 1.
    assert tr == {
        "mss": 1000,
        "header": 48,
        "cc": "dcqcn",
        "profile": "dcqcn-nic",
        "dcqcn_alpha_timer": "1us",
        "dcqcn_decrease_interval": "4us",
        "dcqcn_increase_timer": "300us",
        "dcqcn_g": 0.00390625,
        "dcqcn_f": 1,
        "dcqcn_rai": "20Mbps",
        "dcqcn_rhai": "200Mbps",
        "dcqcn_min_rate": "1Gbps",
        "dcqcn_clamp_target": False,
        "rdma_ack_bytes": "1B",
        "rdma_go_back": "n",
        "rdma_ack_service": 0,
    }
    sw = c["switch"]
    # ACK_HIGH_PRIO 1: the peer's switches serve priority 0 strictly first.
    assert (sw["queues"], sw["scheduler"]) == (2, "sp")
    # KMIN_MAP / KMAX_MAP / PMAX_MAP at 100 Gb/s: 400 KB, 1600 KB (x 1000), 0.2.
    assert (sw["marking"], sw["red_min"], sw["red_max"], sw["red_pmax"]) == (
        "red",
        "400000B",
        "1600000B",
        0.2,
    )
    assert (sw["red_wq"], sw["red_spacing"], sw["red_at_dequeue"]) == (1.0, False, True)
    # BUFFER_SIZE 32768 KiB less one set of the peer's headroom (it reserves two
    # per port, for priorities 0 and 3; ecnlab one, for the one lossless
    # service): 2·1048 + 3860 + 2·100G·1us/8 = 30,956 B per port, 9 ports.
    assert peer_headroom(1000, 100 * 10**9, 10**6) == 30956
    assert sw["shared_buffer"] == f"{32768 * 1024 - 9 * 30956}B"
    assert (sw["buffer_policy"], sw["buffer_accounting"], sw["dt_alpha"]) == (
        "dynamic",
        "hpcc",
        1.0,
    )
    assert (sw["pfc"], sw["pfc_priorities"], sw["pfc_xon_offset"]) == (True, [1], "2496B")
    # ecnlab's auto headroom 2·1048 + 64 + response + 25,000 is the peer's with 3,796 B.
    assert sw["pfc_response"] == "3796B"
    assert c["host"] == {"jitter": "0ns"}
    # ACK_HIGH_PRIO 1: the NIC sends ACKs first, as the peer's; it marks nothing.
    assert c["nic"] == {"scheduler": "sp", "marking": "none"}
    assert "fabric" not in c
    # The retransmission timer is the one difference.
    assert [w.split(":")[0] for w in imp.warnings] == ["(no key)"]
    assert imp.unknown == [] and imp.peer_ids == list(range(10))


def test_hpcc_mode_writes_the_hpcc_keys(tmp_path: Path) -> None:
    # The peer's HPCC incast: U_TARGET 0.95, MI_THRESH 0, RATE_AI 40Mb/s,
    # BASE_RTT 4184 ns, FAST_REACT 1, INT_MULTI 4, MULTI_RATE 0, SAMPLE_FEEDBACK 0,
    # HAS_WIN 1, FIXED_WIN 52300, VAR_WIN 1, ACK_HIGH_PRIO 0.
    cfg = scenario(tmp_path, "incast8_hpcc")
    text = cfg.read_text()
    assert "CC_MODE 3" in text and "FIXED_WIN 52300" in text
    imp = import_hpcc(cfg)
    tr = tomllib.loads(imp.toml)["transport"]
    assert tr["cc"] == "hpcc"
    want = {
        "hpcc_eta": 0.95,
        "hpcc_max_stage": 0,
        "hpcc_rai": "40Mbps",
        "rdma_base_rtt": "4184ns",
        "hpcc_fast_react": True,
        "hpcc_min_rate": "1Gbps",
        "hpcc_int_multi": 4,
        "hpcc_sample_feedback": False,
        "rdma_window": "52300B",
        "rdma_var_window": True,
    }
    assert {k: tr[k] for k in want} == want
    assert not any(k.startswith("dcqcn") for k in tr)
    assert not any(w.startswith("ACK_HIGH_PRIO") for w in imp.warnings)
    # MULTI_RATE 0 here: nothing to warn of, and no key ecnlab lacks.
    assert "hpcc_multi_rate" not in tr and not any(w.startswith("MULTI_RATE") for w in imp.warnings)


def test_timely_mode_writes_the_timely_keys(tmp_path: Path) -> None:
    cfg = scenario(
        tmp_path,
        "incast8_dcqcn",
        CC_MODE="7",
        TIMELY_T_LOW="40000",
        TIMELY_T_HIGH="400000",
        TIMELY_BETA="0.6",
    )
    tr = tomllib.loads(import_hpcc(cfg).toml)["transport"]
    # TIMELY_T_* in ns; alpha 0.875 and min RTT 20 us are rdma-hw.cc's fixed values.
    want = {
        "cc": "timely",
        "timely_t_low": "40us",
        "timely_t_high": "400us",
        "timely_alpha": 0.875,
        "timely_beta": 0.6,
        "timely_min_rtt": "20us",
        "timely_rai": "20Mbps",
        "timely_rhai": "200Mbps",
        "timely_min_rate": "1Gbps",
    }
    assert {k: tr[k] for k in want} == want


def test_dctcp_mode_writes_the_rate_dctcp_keys(tmp_path: Path) -> None:
    cfg = scenario(
        tmp_path, "incast8_dcqcn", CC_MODE="8", EWMA_GAIN="0.0625", DCTCP_RATE_AI="615Mb/s"
    )
    tr = tomllib.loads(import_hpcc(cfg).toml)["transport"]
    # g is EWMA_GAIN and R_AI is DCTCP_RATE_AI (rdma-hw.cc, UpdateRateDctcp).
    want = {"cc": "rdma-dctcp", "rdma_dctcp_g": 0.0625, "rdma_dctcp_rai": "615Mbps"}
    assert {k: tr[k] for k in want} == want
    assert not any(k.startswith("dcqcn") for k in tr)


def test_dctcp_mode_needs_ewma_gain(tmp_path: Path) -> None:
    # third.cc's default is `1 / 16` in integer arithmetic (0): refuse, not guess.
    cfg = scenario(tmp_path, "incast8_dcqcn", CC_MODE="8")
    text = cfg.read_text()
    cfg.write_text(
        "\n".join(ln for ln in text.splitlines() if not ln.startswith("EWMA_GAIN")) + "\n"
    )
    with pytest.raises(ConfigError, match="EWMA_GAIN missing"):
        import_hpcc(cfg)


@pytest.mark.parametrize(("mode", "name"), [(2, "PowerTCP"), (17, "an ns-3 TCP")])
def test_other_cc_modes_are_refused_by_name(tmp_path: Path, mode: int, name: str) -> None:
    with pytest.raises(ConfigError, match=rf"^CC_MODE {mode} \({name}\): ecnlab imports CC_MODE 1"):
        import_hpcc(scenario(tmp_path, "incast8_dcqcn", CC_MODE=str(mode)))


def test_keys_ecnlab_lacks_get_one_warning_each(tmp_path: Path) -> None:
    cfg = scenario(
        tmp_path,
        "incast8_dcqcn",
        ERROR_RATE_PER_LINK="0.001",
        LINK_DOWN="1000 0 9",
        RATE_BOUND="0",
        L2_BACK_TO_ZERO="1",
        USE_DYNAMIC_PFC_THRESHOLD="0",
        KMIN_MAPP="1 100000000000 400",
        MY_KEY="1",
    )
    imp = import_hpcc(cfg)
    keys = [w.split(":")[0] for w in imp.warnings]
    for k in (
        "ERROR_RATE_PER_LINK",
        "LINK_DOWN",
        "RATE_BOUND",
        "L2_CHUNK_SIZE",
        "USE_DYNAMIC_PFC_THRESHOLD",
    ):
        assert keys.count(k) == 1, (k, imp.warnings)
    assert imp.unknown == ["KMIN_MAPP", "MY_KEY"]
    assert imp.warnings[-1].endswith("KMIN_MAPP, MY_KEY")
    assert imp.config["transport"]["rdma_go_back"] == "0"
    # The warnings head the TOML as comments.
    assert "#   LINK_DOWN: 1000 0 9: ecnlab has no link failure" in imp.toml


def test_a_rate_missing_from_the_marking_maps_is_refused(tmp_path: Path) -> None:
    cfg = scenario(tmp_path, "incast8_dcqcn", KMIN_MAP="1 25000000000 100")
    with pytest.raises(ConfigError, match=r"^KMIN_MAP has no entry for 100Gbps \(toward hosts\)"):
        import_hpcc(cfg)


def test_nodes_are_renumbered_hosts_first(tmp_path: Path) -> None:
    # The peer's switches 0 and 3, hosts 1, 2, 4: host 4 is behind switch 3
    # over a 25G, 2us link; flows 4 -> 1 (an id column) and 2 -> 4.
    d = tmp_path / "t"
    d.mkdir()
    (d / "topo.txt").write_text(
        "5 2 4\n0 3\n1 0 100Gbps 1000ns 0\n2 0 100Gbps 1000ns 0\n"
        "0 3 400Gbps 1000ns 0\n4 3 25Gbps 2us 0\n"
    )
    (d / "flow.txt").write_text("2\n0 4 1 3 100 5000 0.000001\n1 2 4 3 100 7000 0.0000025\n")
    src = (DATA / "incast8_dcqcn" / "config.txt").read_text()
    src = src.replace("TOPOLOGY_FILE topology.txt", "TOPOLOGY_FILE topo.txt").replace(
        "FLOW_FILE flows.txt", "FLOW_FILE flow.txt"
    )
    src = src.replace(
        "KMIN_MAP 1 100000000000 400",
        "KMIN_MAP 3 100000000000 400 400000000000 1600 25000000000 100",
    )
    src = src.replace(
        "KMAX_MAP 1 100000000000 1600",
        "KMAX_MAP 3 100000000000 1600 400000000000 6400 25000000000 400",
    )
    src = src.replace(
        "PMAX_MAP 1 100000000000 0.20",
        "PMAX_MAP 3 100000000000 0.2 400000000000 0.2 25000000000 0.2",
    )
    (d / "config.txt").write_text(src)
    imp = import_hpcc(d / "config.txt")
    assert imp.peer_ids == [1, 2, 4, 0, 3]
    t = imp.config["topology"]
    assert t["switch_names"] == ["sw0", "sw3"]
    assert t["links"] == [[0, 3], [1, 3], [3, 4, "400Gbps"], [2, 4, "25Gbps", "2us"]]
    # (Service 1: the config's ACK_HIGH_PRIO 1 puts the ACKs in service 0.)
    assert imp.config["flows"] == [
        {"src": 2, "dst": 0, "size": "5000B", "start": "1us", "service": 1},
        {"src": 1, "dst": 2, "size": "7000B", "start": "2500ns", "service": 1},
    ]
    assert "ecnlab host i is the peer's node (by i):\n#   0=1 1=2 2=4" in imp.toml
    # Host-facing ports at 100G (2) and 25G (1) with different K: one value,
    # the commoner rate's, and a warning per map that differs.
    assert imp.config["switch"]["red_min"] == "400000B"
    assert [w.split(":")[0] for w in imp.warnings].count("KMIN_MAP") == 1
    assert imp.config["fabric"] == {"red_min": "1600000B", "red_max": "6400000B"}


def test_fct_files_both_ways(tmp_path: Path) -> None:
    # third.cc's node_id_to_ip: 0x0b000001 + (id / 256) << 16 + (id % 256) << 8.
    assert (peer_ip(4), peer_ip(300)) == ("0b000401", "0b012c01")
    peer = read_fct(DATA / "incast8_1MB_dcqcn" / "peer_fct.txt")
    assert peer.num_rows == 8 and sorted(peer["src"].to_pylist()) == list(range(8))
    # Its first line: flow 4, 1 MB from t = 0, FCT 1,039,951 ns, ideal 85,083 ns.
    row = peer.slice(0, 1).to_pylist()[0]
    assert row["src"] == 4 and row["dst"] == 8 and row["size"] == 1_000_000
    assert row["fct"] == pytest.approx(1039951e-9) and row["slowdown"] == pytest.approx(
        1039951 / 85083
    )
    ours = pa.table(
        {
            "src": [0, 1, 2],
            "dst": [8, 8, 8],
            "size": [1_000_000, 5_000, 1_000_000],
            "start": [0.0, 1e-6, 0.0],
            "fct": [1.0e-3, 2e-5, float("nan")],
            "ideal_fct": [8.5e-5, 2e-6, 8.5e-5],
            "slowdown": [1e-3 / 8.5e-5, 10.0, float("nan")],
            "kind": ["sized", "sized", "sized"],
        }
    )
    n = write_fct(ours, tmp_path / "fct.txt")
    assert n == 2  # the unfinished flow is left out, as the peer does
    lines = (tmp_path / "fct.txt").read_text().splitlines()
    assert lines[1] == "0b000101 0b000801 10000 100 5000 1000 20000 2000"
    back = read_fct(tmp_path / "fct.txt")
    assert back["slowdown"].to_pylist() == pytest.approx([1e-3 / 8.5e-5, 10.0])
    rows = {r["bin"]: r for r in compare_fct(ours, peer)}
    assert rows["100KB-1MB"]["flows_peer"] == 8 and rows["100KB-1MB"]["flows_ecnlab"] == 1
    assert rows["0B-10KB"]["p50_ecnlab"] == 10.0 and rows["0B-10KB"]["p50_peer"] is None


def test_cli_writes_the_toml_and_warns_on_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "exp.toml"
    assert main(["import-hpcc", str(DATA / "incast8_dcqcn" / "config.txt"), "--out", str(out)]) == 0
    cap = capsys.readouterr()
    assert cap.err.splitlines()[0].startswith("warning: (no key): the peer has no retransmission")
    assert tomllib.loads(out.read_text())["transport"]["cc"] == "dcqcn"
    assert main(["import-hpcc", str(tmp_path / "none.txt")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_a_buffer_smaller_than_the_headroom_is_refused(tmp_path: Path) -> None:
    # master's run.py writes BUFFER_SIZE 32 (MB); the port reads KiB, so 32 KiB
    # is below one switch's headroom: refuse with the unit, never a negative pool.
    cfg = scenario(tmp_path, "incast8_dcqcn", BUFFER_SIZE="32")
    with pytest.raises(ConfigError, match=r"^BUFFER_SIZE 32: 32768 B is less than switch .* KiB"):
        import_hpcc(cfg)
