"""The transport a run used is named in its printout and the sweep table:
cc, profile and what the profile filled; a key the experiment sets that a
profile would have filled otherwise (cc = "reno" under the linux profile)
is a warning (issue 55, item 2). The engine lets an explicit key beat the
profile (crates/ecnlab/src/host/profile.rs), so Reno runs: what must change
is that the user is told."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ecnlab.cli import main
from ecnlab.table import points_table
from ecnlab.transport import describe, kept_over_profile, profile_fills

RENO = """\
[run]
sample_ports = "none"
[topology]
kind = "star"
hosts = 2
link_rate = "10Gbps"
link_delay = "5us"
[transport]
cc = "reno"
[[flows]]
src = 0
dst = 1
size = "50KB"
"""


def test_the_linux_profile_fills_cubic() -> None:
    # host/linux.rs: the profile's first fill is cc = "cubic" (Linux's default cc).
    assert ("cc", "cubic") in profile_fills("linux")
    assert profile_fills("no-such-profile") == ()


def test_describe_names_cc_profile_and_the_keys_it_filled() -> None:
    fills = dict(profile_fills("linux"))
    resolved = {"transport": {**fills, "profile": "linux", "cc": "reno"}}
    text = describe(resolved)
    assert text.startswith("cc reno, profile linux (filled ")
    assert f"filled {len(fills) - 1} keys" in text and "cc," not in text
    assert kept_over_profile(resolved) == [("cc", "reno", "cubic")]
    assert describe({"transport": {"cc": "dctcp", "profile": None}}) == "cc dctcp, no profile"


def test_a_profile_that_cannot_set_the_files_cc_is_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    exp = tmp_path / "reno.toml"
    exp.write_text(RENO, encoding="utf-8")
    out = tmp_path / "run"
    argv = ["run", str(exp), "--out", str(out), "--set", "transport.profile=linux"]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "transport  cc reno, profile linux (filled" in printed
    warning = 'transport.cc = "reno", set in the experiment, beats profile linux\'s "cubic"'
    assert f"warning    {warning}" in printed
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert any(w.startswith(warning) for w in summary["warnings"])
    # What the warning suggests runs the profile's cc and warns no more.
    assert main([*argv, "--unset", "transport.cc"]) == 0
    printed = capsys.readouterr().out
    assert "transport  cc cubic, profile linux (filled" in printed and "warning" not in printed
    assert "warnings" not in json.loads((out / "summary.json").read_text(encoding="utf-8"))


def test_sweep_table_names_the_transport() -> None:
    rows = {k: {"status": "ok", "fct_overall_mean": 1e-3} for k in ("a", "b")}
    points = [("a", {"case": "dctcp"}), ("b", {"case": "linux"})]
    same = points_table(points, rows, transports=dict.fromkeys("ab", "cc dctcp, no profile"))
    assert "transport: cc dctcp, no profile (every point)" in same
    differ = points_table(
        points, rows, transports={"a": "cc dctcp, no profile", "b": "cc cubic, profile linux"}
    )
    header, first, second = differ.splitlines()[:3]
    assert "transport" in header
    assert "cc dctcp, no profile" in first
    assert "cc cubic, profile linux" in second
