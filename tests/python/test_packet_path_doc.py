"""docs/architecture/packet-path.md names the engine's functions with their
files: each table row gives `function` (or several) and then `file.rs`, and
the prose writes `function` (`file.rs`). Every such name must be a `fn` of
that file, so the page cannot drift from the code without this failing."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "architecture" / "packet-path.md"
SRC = ROOT / "crates" / "ecnlab" / "src"

IDENT = r"[A-Za-z_][A-Za-z0-9_]*(?:::[A-Za-z_][A-Za-z0-9_]*)*"
RS_FILE = r"[\w/]+\.rs"
# Prose: `name` (`file.rs`
PROSE = re.compile(rf"`({IDENT})` \(`({RS_FILE})`")

# The steps the page exists to show, each of which must be on it.
REQUIRED = {
    "host_send",
    "enqueue",
    "enqueue_plain",
    "enqueue_hooked",
    "enqueue_lossless",
    "pass_through",
    "start_tx",
    "start_tx_at",
    "start_tx_hooked",
    "start_tx_dropping",
    "start_tx_lossless",
    "dequeue",
    "dequeue_plain",
    "dequeue_composed",
    "dequeue_pausable",
    "transmit",
    "run",
    "dispatch",
    "catch_up",
    "switch_arrive",
    "route",
    "host_arrive",
    "send_ack",
}


def references(text: str) -> list[tuple[str, str]]:
    """(function, file) for each function the page names with its file: a
    table row's first cell against its second, and `name` (`file.rs`)."""
    out: list[tuple[str, str]] = []
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.lstrip().startswith("|") and len(cells) >= 3:
            file = re.fullmatch(rf"`({RS_FILE})`", cells[1])
            if file:
                names = re.findall(rf"`({IDENT})`", cells[0])
                assert names, f"a row without a function: {line}"
                out += [(n, file.group(1)) for n in names]
                continue
        out += PROSE.findall(line)
    return out


def defines(file: str, name: str) -> bool:
    """`file` (under crates/ecnlab/src) has `fn name` (a method's last segment)."""
    path = SRC / file
    short = name.rsplit("::", 1)[-1]
    return path.is_file() and re.search(rf"\bfn {short}\b", path.read_text()) is not None


def test_every_function_the_page_names_is_defined_in_its_file() -> None:
    refs = references(PAGE.read_text())
    assert len(refs) > 80, "the page names its functions with their files"
    missing = sorted({f"{n} ({f})" for n, f in refs if not defines(f, n)})
    assert missing == [], f"not a fn of the file the page gives: {missing}"


def test_the_page_walks_every_step() -> None:
    named = {n.rsplit("::", 1)[-1] for n, _ in references(PAGE.read_text())}
    assert sorted(REQUIRED - named) == []


def test_the_reader_of_the_page_catches_a_wrong_file() -> None:
    text = (
        "| `host_send` | `world/fabric.rs` | ok |\n"
        "| `host_send`, `route` | `switch/qdisc.rs` | wrong file |\n"
        "prose names `catch_up` (`world/fabric.rs`), and `nowhere` (`world/nothing.rs`).\n"
        "| function | file | what it does |\n|---|---|---|\n"
    )
    refs = references(text)
    assert refs == [
        ("host_send", "world/fabric.rs"),
        ("host_send", "switch/qdisc.rs"),
        ("route", "switch/qdisc.rs"),
        ("catch_up", "world/fabric.rs"),
        ("nowhere", "world/nothing.rs"),
    ]
    assert [defines(f, n) for n, f in refs] == [True, False, False, True, False]


def test_the_page_is_in_the_nav_and_linked_from_the_architecture() -> None:
    assert "architecture/packet-path.md" in (ROOT / "mkdocs.yml").read_text()
    assert "(packet-path.md)" in (ROOT / "docs" / "architecture" / "index.md").read_text()
