"""Every file, folder and module the documentation names exists: in the
pages of docs/ and the README, the figure folders' notes (the gallery's
pages) and the other Markdown files, the docstrings and comments of the
Python package, the docs' tools, bench/ and crosscheck/, and the comments
of the Rust crates. A path counts when it is the repository's (from its
root, from the file's folder, or as the end of one: `switch/marker/pie.rs`
for crates/ecnlab/src/switch/marker/pie.rs), or one of the pages the
gallery makes; a dotted `ecnlab.x.y` when it imports (a module, or a name
in one). A rename that leaves a page or a comment behind fails here,
naming the file and what it names.

Nothing may lean on a file a clone does not have: no file of the checkout
names the team's notes beside it (their folder, "shared", from the
checkout or from `..`). What a reconstruction rests on is written on the
scheme's page instead; the few files of other projects that comments
name (an authors' script, a peer simulator's tools) are listed below.

What a run or a command writes (summary.json, a store's points.parquet)
and the placeholders pages use (EXPERIMENT.toml, STORE/...) are not the
repository's; the lists below say so, each with why."""

from __future__ import annotations

import importlib
import os
import re
import sys
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "docs" / "tools"))

import gallery  # noqa: E402  (the gallery's pages are made at build time)

# Folders that hold no file a document names: builds, caches, outputs.
SKIPPED_DIRS = {".git", "target", ".venv", "site", "results", "__pycache__", "node_modules"}
SKIPPED_DIRS |= {".pytest_cache", ".ruff_cache"}

CHECKED_SUFFIXES = (".py", ".rs", ".toml", ".md", ".yml", ".csv", ".sh", ".json")

# Files a run, a sweep, a record or a command writes, never the repository's.
OUTPUTS = {
    "summary.json",
    "config.json",
    "point.json",
    "store.json",
    "report.md",
    "rates.csv",  # docs/testbed-uplinks.md's commands write it (--csv rates.csv)
    "sim.csv",  # bench/testbed/spread.py's default output
}
# Folders the same write: the site, a tutorial's outputs, a run's captures,
# a record's carried rows.
OUTPUT_FOLDERS = ("site/", "out/", "repro/", "results/", "pcap/", "record/carry/")

# Words the pages put where the reader's own name goes.
PLACEHOLDERS = {"EXPERIMENT", "experiment", "X", "x", "DIR", "STORE", "OUT", "ID", "SPEC", "NAME"}
PLACEHOLDERS |= {"CONFIG"}  # the bench binary's usage line: [CONFIG.toml ...]

# Files of other projects, which the sentences naming them cite as theirs
# (each in its own repository, named beside it); nothing else is allowed.
CITED_OUTSIDE = (
    # The MQ-ECN authors' ns-2 script (github.com/HKUST-SING/MQ-ECN-NS2).
    "run_simulation_diffserv.py",
    "scripts/run_simulation_diffserv.py",
    # The HPCC simulator's folders and tools (kwzhao/High-Precision-
    # Congestion-Control: its runner, FCT binning, traffic generator and
    # input files), which the HPCC figure's metrics, its notes and
    # bench/hpcc_fig11 follow; a name here is the start of a path.
    "simulation/",
    "analysis/",
    "traffic_gen/",
    "mix/",
    "fct_analysis.py",
    "traffic_gen.py",
    "custom_rand.py",
)

_SUFFIXES = "|".join(re.escape(s) for s in CHECKED_SUFFIXES)
# A path: folders and a file with one of those suffixes, not part of a URL,
# a glob (`bench/*.toml`) or a template (`test_<scheme>.py`).
PATH = re.compile(rf"(?<![\w./<>*{{$-])((?:[\w.-]+/)*[\w-][\w.-]*(?:{_SUFFIXES}))(?![\w/-])")
# A folder, in code spans only: `world/parallel/`, `crates/ecnlab/src/host/`.
FOLDER = re.compile(r"`((?:[\w.-]+/)+)`")
MODULE = re.compile(r"(?<![\w.])ecnlab(?:\.[A-Za-z_]\w*)+")
URL = re.compile(r"[a-z][a-z0-9+.-]*://\S+")


@cache
def repository() -> tuple[frozenset[str], frozenset[str]]:
    """Every file and folder of the checkout, relative to its root."""
    files: set[str] = set()
    folders: set[str] = set()
    for here, dirs, names in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d not in SKIPPED_DIRS]
        rel = Path(here).relative_to(ROOT).as_posix()
        prefix = "" if rel == "." else rel + "/"
        if prefix:
            folders.add(prefix)
        files.update(prefix + n for n in names)
    return frozenset(files), frozenset(folders)


def _ends(paths: frozenset[str]) -> frozenset[str]:
    """Every path and every end of one (`a/b/c.rs`, `b/c.rs`, `c.rs`)."""
    out = set()
    for p in paths:
        parts = p.rstrip("/").split("/")
        tail = "/" if p.endswith("/") else ""
        out.update("/".join(parts[i:]) + tail for i in range(len(parts)))
    return frozenset(out)


@cache
def known_ends() -> tuple[frozenset[str], frozenset[str]]:
    files, folders = repository()
    return _ends(files | generated_pages()), _ends(folders)


def _exists(name: str, page: Path) -> bool:
    files, folders = known_ends()
    name = name.removeprefix("./")
    if (page.parent / name).exists() or (ROOT / name).exists() or (ROOT / "docs" / name).exists():
        return True
    # The end of a path the page shortens (`host/cc/cubic.rs`).
    return name in (folders if name.endswith("/") else files)


@cache
def generated_pages() -> frozenset[str]:
    """The site's pages made at build time (the gallery's), as files."""
    return frozenset(f"docs/{page}" for page in gallery.gallery_pages(ROOT))


def _not_the_repositorys(name: str) -> bool:
    parts = name.rstrip("/").split("/")
    if parts[-1] in OUTPUTS or name.startswith(OUTPUT_FOLDERS + CITED_OUTSIDE):
        return True
    return any(p.split(".")[0] in PLACEHOLDERS for p in parts)


def _names(text: str) -> set[str]:
    text = URL.sub(" ", text)
    found = {m.group(1) for m in PATH.finditer(text)}
    found |= {m.group(1) for m in FOLDER.finditer(text)}
    return {n for n in found if not n.startswith(".")}


def _documents() -> list[Path]:
    pages = [ROOT / "README.md"]
    for folder in ("docs", "experiments", "record", "bench", "tests", "crosscheck", "crates"):
        pages += sorted(_walk(ROOT / folder, ".md"))
    for folder in ("python/ecnlab", "docs/tools", "bench", "crosscheck"):
        pages += sorted(_walk(ROOT / folder, ".py"))
    pages += sorted(_walk(ROOT / "crates", ".rs"))
    return pages


def _walk(folder: Path, suffix: str) -> list[Path]:
    """The files of a folder with that suffix, outside builds and caches."""
    out = []
    for here, dirs, names in os.walk(folder):
        dirs[:] = [d for d in dirs if d not in SKIPPED_DIRS]
        out += [Path(here) / n for n in names if n.endswith(suffix)]
    return out


# A Rust comment: `//`, `///` or `//!` to the end of the line, where the
# code before it has no open string (an even number of quotes).
RUST_COMMENT = re.compile(r"//[/!]?(.*)$")


def _rust_comments(path: Path) -> str:
    """A Rust file's comments and doc comments, where its prose is."""
    parts = []
    for line in path.read_text(encoding="utf-8").splitlines():
        at = line.find("//")
        while at >= 0 and line[:at].count('"') % 2:
            at = line.find("//", at + 2)
        if at >= 0:
            parts.append(RUST_COMMENT.match(line, at).group(1))
    return "\n".join(parts)


def _python_comments(path: Path) -> str:
    """A Python file's docstrings and comments, where its prose is."""
    import ast
    import io
    import tokenize

    source = path.read_text(encoding="utf-8")
    parts = [
        tok.string
        for tok in tokenize.generate_tokens(io.StringIO(source).readline)
        if tok.type == tokenize.COMMENT
    ]
    # Docstrings, the module's, classes', functions' and attributes' (a
    # bare string after an assignment) alike: every string statement.
    parts += [
        node.value.value
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    ]
    return "\n".join(parts)


def _text(path: Path) -> str:
    if path.suffix == ".py":
        return _python_comments(path)
    if path.suffix == ".rs":
        return _rust_comments(path)
    return path.read_text(encoding="utf-8")


def _where(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def test_every_path_a_document_names_exists() -> None:
    missing = []
    for doc in _documents():
        for name in sorted(_names(_text(doc))):
            if _not_the_repositorys(name):
                continue
            if not _exists(name, doc):
                missing.append(f"{_where(doc)}: {name}")
    assert missing == [], "paths that are not in the repository: " + "; ".join(missing)


def _imports(dotted: str) -> bool | None:
    """Whether ``dotted`` is a module, or a name reached from one; None when
    that cannot be told without the engine (a module that asks it for its
    key catalog as it is imported)."""
    from ecnlab.errors import EngineNotBuiltError

    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except EngineNotBuiltError:
            return None
        except ImportError as exc:
            if exc.name == "ecnlab._engine":
                return None
            continue
        for attr in parts[cut:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


def test_every_module_a_document_names_imports() -> None:
    missing = []
    for doc in _documents():
        for name in sorted({m.group(0).rstrip(".") for m in MODULE.finditer(_text(doc))}):
            if name.startswith("ecnlab._engine"):
                continue  # the compiled engine, checked by its own tests
            if _imports(name) is False:
                missing.append(f"{_where(doc)}: {name}")
    assert missing == [], "names that do not import: " + "; ".join(missing)


# The notes folder beside the checkout, however it is reached: NOTES + "/",
# "../" + NOTES + "/", and so on (not "un" + NOTES + "/"). Spelt in parts so
# that this file does not name it.
NOTES = "shared"
OUTSIDE = re.compile(r"(?<![\w-])(?:\.\./)*" + NOTES + "/")
# Files of these kinds are read whole for it; others (Parquet, images) are data.
TEXT_SUFFIXES = (*CHECKED_SUFFIXES, ".txt", ".tcl", ".cfg", ".ini", ".patch", ".in")
TEXT_NAMES = {"Makefile", "Dockerfile", ".gitignore"}


def _outside(text: str) -> list[str]:
    """Each line of ``text`` that names the folder beside the checkout."""
    return [line.strip() for line in text.splitlines() if OUTSIDE.search(line)]


def test_no_file_leans_on_the_notes_beside_the_checkout() -> None:
    found = []
    for here, dirs, names in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d not in SKIPPED_DIRS]
        for n in names:
            if not (n.endswith(TEXT_SUFFIXES) or n in TEXT_NAMES):
                continue
            path = Path(here) / n
            raw = path.read_bytes()
            if NOTES.encode() in raw:  # most files do not say it at all
                text = raw.decode("utf-8", errors="replace")
                found += [f"{_where(path)}: {line}" for line in _outside(text)]
    assert found == [], "files that name what a clone does not have: " + "; ".join(found)


@pytest.mark.parametrize(
    ("text", "outside"),
    [
        (f"see {NOTES}/schemes/comparators.md §3", True),
        (f"as ../../../{NOTES}/peers/ns2/README.md documents", True),
        (f"`../{NOTES}/peers/hpcc/` builds it", True),
        ("switch/shared_buffer.rs and docs/shared-buffer.md", False),
        (f"an un{NOTES}/ folder", False),
    ],
)
def test_a_reference_to_the_notes_is_found(text: str, outside: bool) -> None:
    assert bool(_outside(text)) is outside


@pytest.mark.parametrize(
    ("line", "comment"),
    [
        ("/// See `world/parallel/`.", " See `world/parallel/`."),
        ('let url = "http://x"; // world/a.rs', " world/a.rs"),
        ('let s = "a // b";', None),
    ],
)
def test_a_rust_comment_is_read_and_a_string_is_not(tmp_path: Path, line: str, comment) -> None:
    f = tmp_path / "x.rs"
    f.write_text(line + "\n")
    assert _rust_comments(f) == (comment or "")


@pytest.mark.parametrize(
    ("name", "exists"),
    [
        ("switch/marker/pie.rs", True),  # the end of a path
        ("world/parallel/", True),
        ("world/parallel.rs", False),
        ("parallel/signals.rs", True),
        ("DESIGN.md", False),
        ("comparators.md", False),
        ("crates/ecnlab/src/switch/marker/a_ecn.rs", True),
        ("switch/marker/b_ecn.rs", False),
        ("python/ecnlab/stream.py", False),
        ("gallery/mqecn-fig3.md", True),  # made by the gallery's hook
    ],
)
def test_a_name_is_found_as_the_repository_has_it(name: str, exists: bool) -> None:
    assert _exists(name, ROOT / "docs" / "index.md") is exists


@pytest.mark.parametrize(
    ("name", "imports"),
    [
        ("ecnlab.sweep.store.StoreError", True),
        ("ecnlab.runner.resolve", True),
        ("ecnlab.store", False),
        ("ecnlab.results.Result", False),  # it is ecnlab.runner.result's
    ],
)
def test_a_dotted_name_is_checked_by_importing_it(name: str, imports: bool) -> None:
    assert _imports(name) is imports
