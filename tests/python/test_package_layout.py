"""The Python package's house rules, read from its source (no engine needed):
no module imports another module's private (underscore) names, what is
shared being public in the module that owns it, and every relative import,
a function's deferred ones included, names a module that exists (a moved
module leaves none dangling until the one command that reaches it runs)."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "python" / "ecnlab"


def _modules() -> list[tuple[Path, list[str], ast.Module]]:
    """Each source file, the dotted package it is in, and its syntax tree."""
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        package = parts[:-1]  # a package's __init__ is in the package itself
        out.append((path, package, ast.parse(path.read_text(encoding="utf-8"))))
    return out


def _imported(package: list[str], node: ast.ImportFrom) -> str:
    """The absolute name of the module a ``from ... import`` reads."""
    if not node.level:
        return node.module or ""
    base = package[: len(package) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def test_no_module_imports_another_modules_private_names() -> None:
    found = []
    for path, package, tree in _modules():
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom):
                continue
            source = _imported(package, node)
            for alias in node.names:
                # A private module (ecnlab._atomic) is the package's own
                # helper; its public names are for every module.
                if _is_private(alias.name) and f"{source}.{alias.name}" != "ecnlab._engine":
                    found.append(f"{path.relative_to(PACKAGE)}:{node.lineno}: {alias.name}")
    assert found == [], "make these public in the module that owns them"


def test_every_relative_import_names_a_module_that_exists() -> None:
    dangling = []
    for path, package, tree in _modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level:
                name = _imported(package, node)
                if name == "ecnlab._engine":
                    continue  # the compiled engine, which may not be built
                if importlib.util.find_spec(name) is None:
                    dangling.append(f"{path.relative_to(PACKAGE)}:{node.lineno}: {name}")
    assert dangling == []
