"""A sweep's point as a worker process runs it: :func:`run_task` runs one
resolved config into a private temporary folder and sends every file of the
run back in its :class:`Outcome`, for the sweep's own process to store.

This is all of ecnlab a worker loads besides the run itself (the pools
that start workers are :mod:`ecnlab.sweep.pool`'s), so the engine build
identity (:data:`ecnlab.engine_build.RUN_MODULES`) covers what makes a
point's files and nothing of the sweep's bookkeeping.
"""

from __future__ import annotations

import ctypes
import signal
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Outcome", "Task", "run_task", "worker_init"]


@dataclass(frozen=True)
class Task:
    """One point to run: its key, resolved config (JSON) and the engine
    version the key was made with."""

    key: str
    config_json: str
    engine: str


@dataclass
class Outcome:
    """What running one point produced, as sent back by a worker."""

    key: str
    ok: bool
    error: str = ""
    wall_seconds: float = 0.0
    engine: str = ""
    files: dict[str, bytes] = field(default_factory=dict)
    # The worker's engine build identity (ecnlab.engine_build).
    build: str = ""


def run_task(task: Task) -> Outcome:
    """Run one point in this process; never raises for a failed run."""
    import json

    from ..errors import ConfigError
    from .engine import engine_version, run

    start = time.perf_counter()
    version = engine_version() or "not built"
    build = _build()
    with tempfile.TemporaryDirectory(prefix="ecnlab-point-") as tmp:
        try:
            result = run(json.loads(task.config_json), out=Path(tmp), progress=False)
        except ConfigError as exc:
            return Outcome(
                task.key, False, f"config: {exc}", time.perf_counter() - start, version, build=build
            )
        except MemoryError:
            return Outcome(
                task.key, False, "out of memory", time.perf_counter() - start, version, build=build
            )
        except Exception as exc:  # report, never take the sweep down
            error = f"{type(exc).__name__}: {exc}"
            return Outcome(
                task.key, False, error, time.perf_counter() - start, version, build=build
            )
        if result.summary.get("complete") is False:
            return Outcome(
                task.key,
                False,
                "the run stopped early",
                time.perf_counter() - start,
                version,
                build=build,
            )
        # Every file of the run, pcaps in their subfolder included.
        root = Path(tmp)
        files = {
            p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*"))
            if p.is_file()
        }
    return Outcome(task.key, True, "", time.perf_counter() - start, version, files, build)


def _build() -> str:
    """This worker's engine build identity (:mod:`ecnlab.engine_build`), or ""
    without an engine (the run then fails with its own error)."""
    from ..engine_build import build_identity
    from ..errors import EngineNotBuiltError

    try:
        return build_identity()
    except EngineNotBuiltError:
        return ""


def worker_init() -> None:
    """In each local worker: Ctrl-C is the sweep's to handle, and the worker
    dies when the sweep does, even by SIGKILL."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        pr_set_pdeathsig = 1
        libc.prctl(pr_set_pdeathsig, signal.SIGKILL)
    except (OSError, AttributeError):  # not Linux: workers end when they next look
        pass
