"""The shell commands of a documentation page, as a reader would type them
(used by test_install.py, which runs them from a fresh install).

A shell block is a fenced block marked ``sh``, ``bash``, ``shell`` or
``console``. In a ``console`` block the commands are the lines that start
with ``$ `` (the rest is their output); in the others every line is a
command, comments and blank lines aside; a line ending in a backslash goes
on on the next. A ``text`` block (a usage synopsis with placeholders) is not
a shell block.

A command ``python NAME.py`` runs the page's nearest ``python`` block above
it, saved as NAME.py where the reader is at that point: the page says to
run its Python "in a notebook or a script". A block whose every command
needs the repository's checkout (``make``) is left out: an install has no
Makefile.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

SHELL_FENCES = ("sh", "bash", "shell", "console")
_FENCE = re.compile(r"^```([\w-]*)[^\n]*\n(.*?)^```[ \t]*$", flags=re.M | re.S)
_SCRIPT = re.compile(r"^python3? ([\w.-]+\.py)$")


@dataclass
class Block:
    fence: str
    line: int  # of the opening fence, 1-based
    commands: list[str]


def blocks(text: str) -> list[Block]:
    """Every fenced block's commands (python blocks: the code as one item)."""
    found = []
    for m in _FENCE.finditer(text):
        fence, body = m.group(1), m.group(2)
        line = text.count("\n", 0, m.start()) + 1
        if fence == "python":
            found.append(Block(fence, line, [body]))
        elif fence in SHELL_FENCES:
            found.append(Block(fence, line, _commands(fence, body)))
    return found


def _commands(fence: str, body: str) -> list[str]:
    lines = body.splitlines()
    if fence == "console":
        picked, i = [], 0
        while i < len(lines):
            if lines[i].startswith("$ "):
                cmd = lines[i][2:]
                while cmd.endswith("\\") and i + 1 < len(lines):
                    i += 1
                    cmd = cmd[:-1] + " " + lines[i].strip()
                picked.append(cmd)
            i += 1
        return picked
    joined = re.sub(r"\\\n\s*", " ", body)
    return [c for c in joined.splitlines() if c.strip() and not c.lstrip().startswith("#")]


def checkout_only(block: Block) -> bool:
    """Commands an install cannot run: the Makefile's targets."""
    return bool(block.commands) and all(c.split()[0] == "make" for c in block.commands)


def script(page: Path) -> str:
    """The page's shell commands as one bash script that stops at the first
    failure, each command echoed first (``+ command``) so a failure names
    it; ``python NAME.py`` is preceded by writing NAME.py."""
    parts = ["set -euo pipefail"]
    last_python: str | None = None
    for block in blocks(page.read_text(encoding="utf-8")):
        if block.fence == "python":
            last_python = block.commands[0]
            continue
        if checkout_only(block):
            continue
        for cmd in block.commands:
            m = _SCRIPT.match(cmd.strip())
            if m:
                if last_python is None:
                    raise ValueError(f"{page}:{block.line}: `{cmd}` but no python block above it")
                parts.append(
                    f"cat > {m.group(1)} <<'ECNLAB_DOCS_EOF'\n{last_python}ECNLAB_DOCS_EOF"
                )
            parts.append(f"echo {shlex.quote('+ ' + cmd)}")
            parts.append(cmd)
    return "\n".join(parts) + "\n"
