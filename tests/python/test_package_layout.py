"""The Python package's house rules, read from its source, nothing imported
(so no engine is needed): no module imports another module's private
(underscore) names, what is shared being public in the module that owns it,
and every relative import, a function's deferred ones included, names a
module that exists and a name it has (a moved module or a renamed function
leaves none dangling until the one command that reaches it runs)."""

from __future__ import annotations

import ast
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


def _source(module: str) -> Path | None:
    """The file of an ``ecnlab`` module or package, or None."""
    base = PACKAGE.parent.joinpath(*module.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def _defined(tree: ast.Module) -> set[str] | None:
    """The names a module defines at its top level (inside top-level ``if``
    and ``try`` blocks too); None when it has ``__getattr__``, which may
    answer any name."""
    names: set[str] = set()
    body = list(tree.body)
    while body:
        node = body.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {t.id for t in targets if isinstance(t, ast.Name)}
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, (ast.If, ast.Try)):
            body += node.body + node.orelse + getattr(node, "finalbody", [])
            body += [s for h in getattr(node, "handlers", []) for s in h.body]
    return None if "__getattr__" in names else names


def test_every_relative_import_names_a_module_and_a_name_it_has() -> None:
    dangling = []
    for path, package, tree in _modules():
        for node in ast.walk(tree):
            if not (isinstance(node, ast.ImportFrom) and node.level):
                continue
            name = _imported(package, node)
            if name == "ecnlab._engine":
                continue  # the compiled engine, checked by its own tests
            where = f"{path.relative_to(PACKAGE)}:{node.lineno}"
            source = _source(name)
            if source is None:
                dangling.append(f"{where}: no module {name}")
                continue
            defined = _defined(ast.parse(source.read_text(encoding="utf-8")))
            for alias in node.names:
                submodule = _source(f"{name}.{alias.name}")
                if f"{name}.{alias.name}" == "ecnlab._engine" or submodule is not None:
                    continue  # the engine, or a module of the package
                if defined is not None and alias.name not in defined:
                    dangling.append(f"{where}: {name} has no {alias.name}")
    assert dangling == []
