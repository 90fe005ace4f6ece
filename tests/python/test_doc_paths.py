"""Every file, folder and module the documentation names exists: in the
pages of docs/ and the README, the figure folders' notes (the gallery's
pages) and the other Markdown files, and the docstrings and comments of the
Python package, the docs' tools, bench/ and crosscheck/. A path counts when
it is the repository's (from its root, from the page's folder, or as the
end of one: `switch/marker/pie.rs` for crates/ecnlab/src/switch/marker/pie.rs),
or one of the pages the gallery makes; a dotted `ecnlab.x.y` when it
imports (a module, or a name in one). A rename that leaves a page or a
comment behind fails here, naming the file and what it names.

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
PLACEHOLDERS = {"EXPERIMENT", "experiment", "X", "DIR", "STORE", "OUT", "ID", "SPEC", "NAME"}

# Names that are not the repository's to fix here, each with why.
ALLOWED = {
    # Made from the engine's declaration of run.threads (a Rust doc string;
    # the module is world/parallel/ now): the Rust side's to change.
    "docs/reference.md: world/parallel.rs",
}
# Cited, not the repository's: the design notes the project keeps beside it
# (shared/), which the engine's declarations and the tests cite as sources
# and the generated pages quote, and the MQ-ECN authors' ns-2 script (in
# their repository, which the sentences name).
CITED_OUTSIDE = (
    "shared/",
    "comparators.md",
    "run_simulation_diffserv.py",
    "scripts/run_simulation_diffserv.py",
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


def _exists(name: str, page: Path) -> bool:
    files, folders = repository()
    files = files | generated_pages()
    known = folders if name.endswith("/") else files
    name = name.removeprefix("./")
    if (page.parent / name).exists() or (ROOT / name).exists() or (ROOT / "docs" / name).exists():
        return True
    # The end of a path the page shortens (`host/cc/cubic.rs`).
    return any(k == name or k.endswith("/" + name) for k in known)


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
    for folder in ("docs", "experiments", "record", "bench", "tests", "crosscheck"):
        pages += sorted((ROOT / folder).rglob("*.md"))
    for folder in ("python/ecnlab", "docs/tools", "bench", "crosscheck"):
        pages += sorted((ROOT / folder).rglob("*.py"))
    return pages


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
    return path.read_text(encoding="utf-8")


def _where(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def test_every_path_a_document_names_exists() -> None:
    missing = []
    for doc in _documents():
        for name in sorted(_names(_text(doc))):
            if _not_the_repositorys(name) or f"{_where(doc)}: {name}" in ALLOWED:
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


@pytest.mark.parametrize(
    ("name", "exists"),
    [
        ("switch/marker/pie.rs", True),  # the end of a path
        ("world/parallel/", True),
        ("world/parallel.rs", False),
        ("DESIGN.md", False),
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
