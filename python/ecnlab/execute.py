"""Where a sweep's points run: local processes, or a Dask cluster.

Either way a worker runs one point into a private temporary folder and sends
the files back (:class:`ecnlab.store.Outcome`); only the process that
started the sweep writes to the store. So workers need no shared file
system, two workers never write one folder, and a worker killed mid-run
leaves nothing behind.

Local workers are spawned processes, one point each at a time. They die
with the sweep (Linux: a parent-death signal), so killing the sweep leaves
no orphan simulating for nothing. A worker that crashes (the engine aborts)
breaks the pool; the points that were in flight then run again one at a
time, each in a fresh process, so the one that crashes is recorded as
failed and the others complete.
"""

from __future__ import annotations

import concurrent.futures as cf
import ctypes
import multiprocessing
import os
import signal
import tempfile
import time
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .store import Outcome

__all__ = ["DaskExecutor", "LocalExecutor", "SchedulerError", "Task", "make_executor", "run_task"]


class SchedulerError(Exception):
    """A Dask scheduler address that is malformed or does not answer."""


@dataclass(frozen=True)
class Task:
    """One point to run: its key, resolved config (JSON) and the engine
    version the key was made with."""

    key: str
    config_json: str
    engine: str


def run_task(task: Task) -> Outcome:
    """Run one point in this process; never raises for a failed run."""
    import json

    from .errors import ConfigError
    from .runner import engine_version, run

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
    """This worker's engine build identity (:mod:`.engine_build`), or ""
    without an engine (the run then fails with its own error)."""
    from .engine_build import build_identity
    from .errors import EngineNotBuiltError

    try:
        return build_identity()
    except EngineNotBuiltError:
        return ""


def _worker_init() -> None:
    """In each local worker: Ctrl-C is the sweep's to handle, and the worker
    dies when the sweep does, even by SIGKILL."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        pr_set_pdeathsig = 1
        libc.prctl(pr_set_pdeathsig, signal.SIGKILL)
    except (OSError, AttributeError):  # not Linux: workers end when they next look
        pass


class LocalExecutor:
    """A pool of ``workers`` local processes."""

    def __init__(self, workers: int | None = None) -> None:
        self.workers = max(1, workers or os.cpu_count() or 1)
        self._pool: cf.ProcessPoolExecutor | None = None

    def _new_pool(self, workers: int) -> cf.ProcessPoolExecutor:
        self._pool = cf.ProcessPoolExecutor(
            max_workers=workers,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_worker_init,
        )
        return self._pool

    def run(self, tasks: Sequence[Task]) -> Iterator[Outcome]:
        """Outcomes in the order points finish."""
        queue: deque[Task] = deque(tasks)
        suspects: deque[Task] = deque()
        while queue or suspects:
            if suspects:
                yield self._alone(suspects.popleft())
                continue
            pool = self._new_pool(self.workers)
            order = list(queue)
            queue.clear()
            futures = {pool.submit(run_task, t): i for i, t in enumerate(order)}
            finished: set[int] = set()
            try:
                for fut in cf.as_completed(futures):
                    i = futures[fut]
                    outcome = fut.result()  # BrokenProcessPool when a worker died
                    finished.add(i)
                    yield outcome
            except cf.process.BrokenProcessPool:
                # The pool feeds points in order, a few ahead: the first
                # unfinished ones were in flight, the rest never started.
                left = [order[i] for i in range(len(order)) if i not in finished]
                in_flight = self.workers + 1
                suspects.extend(left[:in_flight])
                queue.extend(left[in_flight:])
            except BaseException:
                # Ctrl-C while waiting here, or the sweep closing this
                # generator: stop the points in flight now rather than let
                # shutdown wait for them (minutes for a full-scale point).
                _terminate(pool)
                raise
            finally:
                pool.shutdown(wait=True, cancel_futures=True)
                self._pool = None

    def _alone(self, task: Task) -> Outcome:
        pool = self._new_pool(1)
        try:
            return pool.submit(run_task, task).result()
        except cf.process.BrokenProcessPool:
            return Outcome(
                task.key, False, "the worker process died running this point (engine crash)"
            )
        except BaseException:
            _terminate(pool)  # Ctrl-C: as in run()
            raise
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def close(self, cancel: bool = False) -> None:
        pool, self._pool = self._pool, None
        if pool is None:
            return
        if cancel:
            _terminate(pool)  # the finished points are stored
        pool.shutdown(wait=not cancel, cancel_futures=True)


def _terminate(pool: cf.ProcessPoolExecutor) -> None:
    """Stop a pool's workers at once (their points are lost, not stored)."""
    for proc in list((getattr(pool, "_processes", None) or {}).values()):
        proc.terminate()


class DaskExecutor:
    """Points as tasks on a Dask cluster: ``"local"`` starts a LocalCluster
    of ``workers`` single-threaded processes, ``"tcp://host:port"`` joins a
    running scheduler. Results come back to this client, which writes them."""

    def __init__(self, address: str, workers: int | None = None, timeout: float = 10.0) -> None:
        try:
            from dask.distributed import Client, LocalCluster
        except ImportError as exc:  # pragma: no cover - dask is a dependency
            raise SchedulerError(f"--scheduler needs dask.distributed ({exc})") from None
        self._cluster: Any = None
        if address == "local":
            self._cluster = LocalCluster(
                n_workers=max(1, workers or os.cpu_count() or 1),
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
            )
            self.client = Client(self._cluster)
        else:
            if "://" not in address or not address.split("://", 1)[1]:
                raise SchedulerError(
                    f'--scheduler {address!r}: expected "local" or an address like tcp://HOST:8786'
                )
            try:
                self.client = Client(address, timeout=timeout)
            except (OSError, TimeoutError) as exc:
                raise SchedulerError(
                    f"--scheduler {address}: no Dask scheduler answers ({exc.__class__.__name__}); "
                    "start one with `dask scheduler` and workers with `dask worker ADDRESS`"
                ) from None
        self._futures: list[Any] = []
        self._closed = False

    def run(self, tasks: Sequence[Task]) -> Iterator[Outcome]:
        from dask.distributed import as_completed

        if not tasks:
            return
        keys = [f"ecnlab-point-{t.key}" for t in tasks]
        self._futures = self.client.map(run_task, list(tasks), key=keys, pure=False)
        by_future = {f.key: t for f, t in zip(self._futures, tasks)}
        for fut in as_completed(self._futures):
            task = by_future[fut.key]
            try:
                yield fut.result()
            except Exception as exc:  # a worker lost, killed by memory limits, ...
                yield Outcome(task.key, False, f"dask: {type(exc).__name__}: {exc}")

    def close(self, cancel: bool = False) -> None:
        if self._closed:
            return
        self._closed = True
        if cancel and self._futures:
            self.client.cancel(self._futures)
        self.client.close()
        if self._cluster is not None:
            self._cluster.close()


def make_executor(workers: int | None, scheduler: str | None) -> LocalExecutor | DaskExecutor:
    """Local processes without a scheduler, else Dask."""
    if workers is not None and workers < 1:
        raise ValueError(f"--workers {workers}: must be at least 1")
    if scheduler is None:
        return LocalExecutor(workers)
    return DaskExecutor(scheduler, workers)
