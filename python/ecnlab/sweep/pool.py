"""Where a sweep's points run: local processes, or a Dask cluster.

Either way a worker runs one point into a private temporary folder and sends
the files back (:func:`ecnlab.runner.worker.run_task`); only the process
that started the sweep writes to the store. So workers need no shared file
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
import multiprocessing
import os
from collections import deque
from collections.abc import Iterator, Sequence
from typing import Any

from ..runner.worker import Outcome, Task, run_task, worker_init

__all__ = ["DaskExecutor", "LocalExecutor", "SchedulerError", "make_executor"]


class SchedulerError(Exception):
    """A Dask scheduler address that is malformed or does not answer."""


class LocalExecutor:
    """A pool of ``workers`` local processes."""

    def __init__(self, workers: int | None = None) -> None:
        self.workers = max(1, workers or os.cpu_count() or 1)
        self._pool: cf.ProcessPoolExecutor | None = None

    def _new_pool(self, workers: int) -> cf.ProcessPoolExecutor:
        self._pool = cf.ProcessPoolExecutor(
            max_workers=workers,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=worker_init,
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
