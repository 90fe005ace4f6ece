"""Inputs the config fuzzing (test_config_fuzz.py) and issue 14 turned up,
kept as they were found: each now gets one clear line (exit 2) where it
used to abort, hang, or answer with a line that named nothing useful."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("ecnlab._engine")

from ecnlab.cli import main  # noqa: E402
from ecnlab.keys import catalog  # noqa: E402

STAR = """\
[run]
duration = "3ms"
[topology]
kind = "star"
hosts = 3
link_rate = "10Gbps"
link_delay = "25us"
[switch]
queues = 2
marking = "per-port"
threshold = "20pkt"
[[flows]]
src = 0
dst = 2
"""

CASES = [
    # Issue 14: the engine allocated 147 GB of goodput bins and aborted.
    (
        STAR.replace('"3ms"', '"999999999s"'),
        'run.duration: "999999999s": longer than 1000000s (11.6 days), '
        "the longest simulated time ecnlab counts",
    ),
    # Issue 14: 5e9 samples per port; the run never finished.
    (
        STAR.replace('duration = "3ms"', 'duration = "5ms"\nsample_interval = "1ps"'),
        "run.sample_interval = 1ps: must be at least 1ns",
    ),
    # A name given as a list: serde's derive answered "expected value".
    (
        STAR.replace('marking = "per-port"', 'marking = ["per-port"]'),
        # Every registered marking scheme, in registry order (a new scheme
        # joins the list, so it comes from the catalog).
        "switch.marking: invalid type: sequence, expected one of "
        + ", ".join(g["name"] for g in catalog() if g["kind"] == "marking"),
    ),
    (
        STAR.replace('kind = "star"', 'kind = ["star"]'),
        "topology.kind: invalid type: sequence, expected one of star, leaf-spine, fat-tree, ring, "
        "graph",
    ),
    # A section given as a list was read field by field: "transport[0]:
    # unknown variant `cc`".
    (
        'transport = [{cc = "dctcp"}]\n' + STAR,
        "transport: a list; expected a table, [transport] with its keys",
    ),
    (
        'flows = ["x"]\n' + STAR.split("[[flows]]")[0],
        'flows[0]: a string "x"; expected a table, a [[flows]] entry with its keys',
    ),
    # Probes faster than the host link: the NIC queue (hosts never drop)
    # grew by a packet every 100 ps until memory ran out.
    (
        STAR + '[[ping]]\nsrc = 1\ndst = 2\ninterval = "100ps"\n',
        "ping[0].interval = 100ps: 64B every 100ps is faster than host1's 10Gbps link; "
        "its NIC queue would grow without end",
    ),
    # A rate whose packets take no time: simulated time stood still.
    (
        STAR.replace('"10Gbps"', '"1e30Gbps"'),
        'topology.link_rate: "1e30Gbps": faster than 8Tbps (one byte per picosecond), '
        "the fastest link ecnlab models",
    ),
]


@pytest.mark.parametrize(("text", "line"), CASES)
def test_found_case_gets_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, line: str
) -> None:
    path = tmp_path / "case.toml"
    path.write_text(text, encoding="utf-8")
    code = main(["run", str(path), "--out", str(tmp_path / "out"), "-q"])
    assert (code, capsys.readouterr().err) == (2, f"ecnlab: error: {line}\n")
