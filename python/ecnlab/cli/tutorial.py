"""``ecnlab tutorial DIR``: the tutorial's experiment files, copied into a
folder of the reader's own, so that the tutorial's commands run from any
install (a wheel, ``pip install .``) without a checkout.

The files are the repository's ``docs/tutorial/*.toml``; the package holds
them as ``ecnlab/tutorial`` (a symlink in the source tree, plain files in a
wheel or sdist: pyproject.toml's ``[tool.maturin] include``)."""

from __future__ import annotations

import argparse
from importlib import resources
from importlib.abc import Traversable
from pathlib import Path
from typing import Any

from .common import EXIT_OK, InputError

__all__ = ["add_commands", "copy_tutorial", "tutorial_files"]


def tutorial_files() -> list[Traversable]:
    """The tutorial's experiment files the package carries, by name."""
    folder = resources.files("ecnlab") / "tutorial"
    found = [f for f in folder.iterdir() if f.name.endswith(".toml") and f.is_file()]
    if not found:
        # A package built without its data (an install that skipped the
        # include list) cannot run the tutorial: say so, not "copied 0".
        raise InputError(f"this install of ecnlab has no tutorial files (looked in {folder})")
    return sorted(found, key=lambda f: f.name)


def copy_tutorial(dest: str | Path) -> list[Path]:
    """Copy the tutorial's files into ``dest`` (made if missing) and return
    their paths. A file already there with other content is not
    overwritten: InputError names it, and nothing is copied."""
    folder = Path(dest)
    if folder.exists() and not folder.is_dir():
        raise InputError(f"{folder}: exists and is not a folder")
    sources = tutorial_files()
    clashes = [
        folder / f.name
        for f in sources
        if (folder / f.name).exists() and (folder / f.name).read_bytes() != f.read_bytes()
    ]
    if clashes:
        names = ", ".join(str(p) for p in clashes)
        raise InputError(f"{names}: already there with other content; not overwritten")
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for f in sources:
        target = folder / f.name
        target.write_bytes(f.read_bytes())
        written.append(target)
    return written


def _cmd_tutorial(args: argparse.Namespace) -> int:
    written = copy_tutorial(args.dir)
    names = ", ".join(p.name for p in written)
    print(f"wrote {names} to {args.dir}: `cd {args.dir}` and follow the tutorial from there")
    return EXIT_OK


def add_commands(commands: Any) -> None:
    """Register ``ecnlab tutorial`` with the CLI's subcommands."""
    p = commands.add_parser(
        "tutorial",
        help="copy the tutorial's experiment files into a folder",
        description=(
            "Copy the tutorial's experiment files (first.toml, leafspine.toml, sweep.toml) "
            "into DIR, made if missing; a file there with other content is left alone and "
            "reported."
        ),
    )
    p.add_argument("dir", metavar="DIR", help="the folder to copy them into")
    p.set_defaults(handler=_cmd_tutorial)
