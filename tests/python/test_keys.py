"""`ecnlab keys`: every section's and scheme's keys, from the engine's
declarations (as ns-3's --PrintAttributes)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("ecnlab._engine")

from ecnlab.cli import main  # noqa: E402
from ecnlab.keys import KINDS, catalog  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def test_keys_lists_every_section_and_every_scheme(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["keys"]) == 0
    out = capsys.readouterr().out
    groups = catalog()
    kinds = {g["kind"] for g in groups}
    assert kinds == {"section", *KINDS}
    for g in groups:
        head = g["name"] if g["kind"] == "section" else f'{g["kind"]} = "{g["name"]}"'
        assert head in out, head
        for p in g["params"]:
            assert f"  {p['key']}: " in out, (g["name"], p["key"])
            assert p["doc"], (g["name"], p["key"])
    # Every marking scheme of the papers is there, with its keys.
    markings = {g["name"] for g in groups if g["kind"] == "marking"}
    assert {"per-queue", "mq-ecn", "cedm", "tcn", "ml-ecn", "codel", "red"} <= markings


def test_one_name_selects_a_section_a_kind_a_scheme_or_a_key(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["keys", "mq-ecn"]) == 0
    out = capsys.readouterr().out
    assert out.startswith('switch.marking = "mq-ecn"') and "mqecn_beta: number; default 0.75" in out
    assert "[MQ-ECN" in out
    assert main(["keys", "cc"]) == 0
    out = capsys.readouterr().out
    assert 'transport.cc = "dctcp"' in out and "dctcp_g" in out and "[run]" not in out
    assert main(["keys", "codel_target"]) == 0
    out = capsys.readouterr().out
    # A shared key shows under every scheme that uses it.
    assert 'qdisc = "fq-codel"' in out and 'marking = "codel"' in out and "fq_flows" not in out


def test_an_unknown_name_names_the_nearest(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["keys", "mqecn"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ecnlab: error: 'mqecn': no section, scheme or key of that name")
    assert "'mq-ecn'" in err


def test_markdown_is_the_reference_in_the_docs(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["keys", "--markdown"]) == 0
    assert capsys.readouterr().out == (ROOT / "docs" / "reference.md").read_text()


def test_recipes_are_listed_with_each_value_and_its_source(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Issue 28: `ecnlab keys recipe` lists every recipe, each key it fills
    # with the value and the paper's section; a scheme's name shows the
    # scheme and its recipe.
    assert main(["keys", "recipe"]) == 0
    out = capsys.readouterr().out
    for name in ("ml-ecn", "cedm", "pfabric", "fq-codel"):
        assert f'switch.recipe = "{name}"' in out, name
    assert 'switch.scheduler = "wrr" [ML-ECN §III-B-2-c]' in out
    assert "host.stages = " in out and "switch.codel_target = " in out
    assert "5/4·K1 + C·d/4" in out
    assert main(["keys", "ml-ecn"]) == 0
    out = capsys.readouterr().out
    assert 'switch.marking = "ml-ecn"' in out and 'switch.recipe = "ml-ecn"' in out
    recipes = [g for g in catalog() if g["kind"] == "recipe"]
    assert all(len(g["fills"]) == len(g["fill_sources"]) > 0 for g in recipes)
