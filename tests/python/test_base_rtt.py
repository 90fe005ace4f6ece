"""``ecnlab rtt FILE``: the base RTT ``ecnlab advise --rtt`` takes, measured
by pings across the longest path of the empty network (issue 55, item 10)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ecnlab.base_rtt import base_rtt
from ecnlab.cli import main

STAR = """\
[run]
duration = "1s"
[topology]
kind = "star"
hosts = 3
link_rate = "10Gbps"
link_delay = "25us"
[[flows]]
src = 0
dst = 2
size = "infinite"
"""


def test_star_base_rtt_is_four_link_delays_plus_serialisation(tmp_path: Path) -> None:
    exp = tmp_path / "star.toml"
    exp.write_text(STAR, encoding="utf-8")
    r = base_rtt(exp)
    assert (r.src, r.dst, r.path) == (0, 2, ["switch"])
    # Four 25 us links in a round trip (tutorial's first.toml: base RTT 100 us).
    assert r.fixed == pytest.approx(100e-6, abs=0.5e-6)
    # Each extra byte crosses four 10 Gbps links: 0.8 ns a link (to a few
    # ns over the 1460 bytes: the probes' timing at the hosts varies a little).
    per_byte = (r.large_rtt - r.small_rtt) / (r.large - r.small)
    assert per_byte == pytest.approx(4 * 8 / 10e9, rel=0.01)
    assert (r.small, r.large) == (40, 1500)  # transport.header, mss + header


def test_leaf_spine_path_crosses_a_spine_and_cli_gives_advise_flags(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    exp = tmp_path / "ls.toml"
    exp.write_text(
        '[run]\nseed = 1\n[topology]\nkind = "leaf-spine"\nleaves = 2\nspines = 2\n'
        'hosts_per_leaf = 2\nlink_rate = "10Gbps"\nlink_delay = "1us"\nhost_delay = "20us"\n',
        encoding="utf-8",
    )
    assert main(["rtt", str(exp)]) == 0
    out = capsys.readouterr().out
    assert "host 0 to host 3" in out and "-> leaf0 -> spine" in out and "-> leaf1 -> host3" in out
    # Two host links (21 us) and two fabric links (1 us) each way: 88 us fixed.
    fixed = next(line for line in out.splitlines() if "fixed part" in line)
    assert float(fixed.split()[2]) == pytest.approx(88.0, abs=0.5)
    assert "for advise: ecnlab advise --rate 10Gbps --rtt " in out
