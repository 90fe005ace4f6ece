"""The engine build identity: which code made a stored run.

A store keys a point by its resolved config and the engine's *model
version* (:func:`ecnlab.sweep.spec.model_key`), so a plain sweep reuses runs
across refactors that promise to move no output. A record
(``ecnlab reproduce ID --record``) must not trust that promise blindly: it
is the evidence that the current code gives the recorded numbers, so it
draws only from runs made by this very build, or from another build's runs
carried in the repository once a sample of them ran again identically
(:mod:`ecnlab.reproduce.carry`). The build identity says which build that
is, and every stored point carries the one that made it.

It is a SHA-256 of the bytes of the code that makes a point's files:

- the compiled engine as loaded (``ecnlab._engine``'s shared library: the
  whole Rust model and its dependencies, whatever built it), and
- the Python modules a worker runs a point with (:data:`RUN_MODULES`: the
  config loader, the runner and the summary statistics written into
  ``summary.json``, whose columns the figures read too).

Why a content hash rather than a git commit compiled in: an editable
checkout is often built from uncommitted changes (same commit, other
engine), and a wheel or sdist may be built with no git at all; the loaded
library's bytes are the engine in both cases, with nothing to forget to
list. It errs on the safe side: a rebuild that changes the binary but not
the model (another compiler) reads as another build and a record reruns.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
from pathlib import Path

__all__ = ["RUN_MODULES", "build_identity"]

RUN_MODULES = (
    "ecnlab",
    "ecnlab._atomic",
    "ecnlab._json",
    "ecnlab.config",
    "ecnlab.errors",
    "ecnlab.fct",
    "ecnlab.progress",
    "ecnlab.quantiles",
    "ecnlab.runner",
    "ecnlab.runner.columns",
    "ecnlab.runner.engine",
    "ecnlab.runner.result",
    "ecnlab.runner.worker",
    "ecnlab.runner.writer",
    "ecnlab.slowdown",
    "ecnlab.transport",
)
"""Every ecnlab module a worker imports to run a point
(tests/python/test_engine_build.py checks the list is whole)."""

DIGITS = 16
"""Hex digits kept (64 bits: no two builds a store meets collide)."""


@functools.lru_cache(maxsize=1)
def build_identity() -> str:
    """``model <N>, build <hex>``: the model version and the content hash
    of the loaded engine library and :data:`RUN_MODULES` (computed once per
    process). Raises :class:`ecnlab.errors.EngineNotBuiltError` without an
    engine."""
    from .runner import load_engine

    engine = load_engine()
    digest = hashlib.sha256()
    for name, path in [("ecnlab._engine", engine.__file__)] + [
        (m, importlib.import_module(m).__file__) for m in RUN_MODULES
    ]:
        data = Path(str(path)).read_bytes()
        # Name and length first, so moving bytes between files moves the hash.
        digest.update(f"{name}:{len(data)}:".encode())
        digest.update(data)
    return f"model {int(engine.model_version())}, build {digest.hexdigest()[:DIGITS]}"
