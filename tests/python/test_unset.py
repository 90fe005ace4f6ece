"""``--unset KEY`` (ecnlab run, ecnlab sweep) and a sweep case's ``unset``:
one base file compares per-queue ECN, PIE and DualPI2 although PIE and
DualPI2 refuse the file's ``switch.threshold`` (issue 55, item 6)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ecnlab.cli import main
from ecnlab.config import unset_value
from ecnlab.errors import ConfigError
from ecnlab.runner import load_engine
from ecnlab.sweep import load_sweep, resolve_points

BASE = """\
[run]
sample_ports = "none"
[topology]
kind = "star"
hosts = 3
link_rate = "10Gbps"
link_delay = "5us"
[switch]
queues = 2
marking = "per-queue"
threshold = "20pkt"
[[flows]]
src = 0
dst = 2
size = "100KB"
[[flows]]
src = 1
dst = 2
size = "100KB"
service = 1
"""


def base_file(tmp_path: Path) -> Path:
    path = tmp_path / "base.toml"
    path.write_text(BASE, encoding="utf-8")
    return path


def error_line(err: str) -> str:
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("ecnlab: error: "), err
    return lines[0]


def test_unset_removes_a_key_and_only_that() -> None:
    cfg = {"switch": {"marking": "per-queue", "threshold": "20pkt"}, "flows": [{"src": 0}]}
    unset_value(cfg, "switch.threshold")
    unset_value(cfg, "flows.0.src")
    assert cfg == {"switch": {"marking": "per-queue"}, "flows": [{}]}


def test_unset_lets_pie_run_on_a_file_with_a_threshold(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = base_file(tmp_path)
    # Without --unset the engine refuses the file's threshold under PIE.
    assert main(["run", str(base), "-q", "--set", "switch.marking=pie"]) == 2
    assert "switch.threshold" in error_line(capsys.readouterr().err)
    out = tmp_path / "pie"
    argv = ["run", str(base), "-q", "--out", str(out), "--set", "switch.marking=pie"]
    assert main([*argv, "--unset", "switch.threshold"]) == 0
    config = json.loads((out / "config.json").read_text(encoding="utf-8"))
    assert config["switch"]["marking"] == "pie"


def test_unset_of_a_key_the_file_does_not_set_is_one_error_with_did_you_mean(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = base_file(tmp_path)
    assert main(["run", str(base), "--unset", "switch.treshold"]) == 2
    line = error_line(capsys.readouterr().err)
    assert "--unset switch.treshold" in line and "did you mean switch.threshold?" in line


SWEEP = """\
base = "base.toml"
[[case]]
label = "per-queue"
[[case]]
label = "PIE"
"switch.marking" = "pie"
unset = ["switch.threshold"]
[[case]]
label = "DualPI2"
"switch.qdisc" = "dualpi2"
unset = ["switch.marking", "switch.threshold"]
"""


def test_sweep_cases_unset_the_keys_their_scheme_refuses(tmp_path: Path) -> None:
    base_file(tmp_path)
    path = tmp_path / "sweep.toml"
    # The per-queue case sets nothing of its own: it needs a key to be a case.
    path.write_text(SWEEP.replace('label = "per-queue"', 'label = "per-queue"\n"run.seed" = 1'))
    spec = load_sweep(path)
    points = spec.points()
    resolve_points(spec, points, load_engine())
    assert [p.error for p in points] == ["", "", ""]
    assert "threshold" in points[0].config["switch"]
    assert "threshold" not in points[1].config["switch"]
    assert set(points[2].config["switch"]) == {"queues", "qdisc"}


def test_a_sweep_case_that_unsets_what_it_sets_or_a_missing_key_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base_file(tmp_path)
    path = tmp_path / "sweep.toml"
    path.write_text(
        'base = "base.toml"\n[[case]]\n"switch.threshold" = "9pkt"\nunset = ["switch.threshold"]\n'
    )
    with pytest.raises(ConfigError, match="unsets 'switch.threshold', which is set by the case"):
        load_sweep(path)
    path.write_text('base = "base.toml"\n[[case]]\nunset = ["switch.treshold"]\n')
    assert main(["sweep", str(path), "--out", str(tmp_path / "store")]) == 2
    assert "did you mean switch.threshold?" in error_line(capsys.readouterr().err)
    assert not (tmp_path / "store").exists()


def test_sweep_unset_flag_applies_to_the_base(tmp_path: Path) -> None:
    base_file(tmp_path)
    path = tmp_path / "sweep.toml"
    path.write_text('base = "base.toml"\n[grid]\n"switch.marking" = ["pie"]\n')
    store = tmp_path / "store"
    argv = ["sweep", str(path), "--out", str(store), "-q", "--workers", "1"]
    assert main([*argv, "--unset", "switch.threshold"]) == 0
    (point,) = (store / "points").iterdir()
    config = json.loads((point / "config.json").read_text(encoding="utf-8"))
    assert config["switch"]["marking"] == "pie"
