"""The cross-check's drop accounting (crosscheck/crosscheck.py): ecnlab ports
and ns-2 queue monitors are sorted into the same four places of the
leaf-spine, and the ns-2 script gets its monitors exactly once."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


def load_crosscheck() -> ModuleType:
    path = ROOT / "crosscheck" / "crosscheck.py"
    spec = importlib.util.spec_from_file_location("crosscheck", path)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_ecnlab_ports_map_to_the_four_places() -> None:
    cc = load_crosscheck()
    # Port names as ecnlab writes them (node:peer, index appended).
    assert cc.drop_place("host17", "leaf1") == "nic"
    assert cc.drop_place("leaf1", "spine11") == "leaf up"
    assert cc.drop_place("spine0", "leaf9") == "spine down"
    assert cc.drop_place("leaf9", "host112") == "leaf down"
    with pytest.raises(KeyError):
        cc.drop_place("host1", "host2")


def test_monitors_go_in_once_before_the_run(tmp_path: Path) -> None:
    cc = load_crosscheck()
    script = tmp_path / "spine_empirical_diffserv.tcl"
    script.write_text('set x 1\nputs "Initial agent creation done";flush stdout\n$ns run\n')
    cc.add_drop_monitors(script)
    text = script.read_text()
    assert text.count("monitor-queue") == 4  # NIC, leaf down, leaf up, spine down
    assert text.index("rename finish") < text.index('puts "Initial agent creation done"')
    # Every place the monitors print is one the tables know, spelled with _.
    printed = set(re.findall(r"list \{?([a-z ]+?)\}? \[\$ns monitor-queue", text))
    assert printed == set(cc.PLACES)


def test_a_script_without_the_anchor_is_refused(tmp_path: Path) -> None:
    cc = load_crosscheck()
    script = tmp_path / "other.tcl"
    script.write_text("$ns run\n")
    with pytest.raises(SystemExit, match="Initial agent creation done"):
        cc.add_drop_monitors(script)
