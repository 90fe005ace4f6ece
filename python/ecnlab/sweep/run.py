"""Running a sweep's points into its result store (:func:`run_sweep`).

A point already in the store is not run again, unless another engine build
made it and the sweep asks for this build's runs only (``same_build``).
The points run in a pool of workers (:mod:`.pool`); only this process
writes to the store, one finished point at a time (:mod:`.store`), and
rewrites the store's index every few seconds and at the end.
"""

from __future__ import annotations

import copy
import json
import sys
import time
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ..config import apply_overrides, unset_value
from ..errors import ConfigError
from ..runner.worker import Outcome, Task
from .pool import make_executor
from .spec import Point, SweepSpec, check_keys_exist, resolve_points
from .store import PointRecord, Store, summary_row

__all__ = ["SweepInterrupted", "SweepReport", "run_sweep", "stderr_notice"]

_INDEX_EVERY_S = 5.0


@dataclass
class SweepReport:
    """What a sweep did."""

    store: Path
    total: int
    already: int = 0
    ran: int = 0
    failed: list[PointRecord] = field(default_factory=list)
    interrupted: bool = False
    points: list[Point] = field(default_factory=list)
    # Points found in the store made by another engine build (same model
    # version): reused as they are, or run again under ``same_build``.
    reused_other_build: int = 0
    rerun_other_build: int = 0

    @property
    def ok(self) -> bool:
        return not self.failed and not self.interrupted

    def line(self) -> str:
        text = (
            f"{self.total} point{'' if self.total == 1 else 's'}: {self.already} already in the "
            f"store, {self.ran} run, "
            f"{len(self.failed)} failed"
        )
        if self.reused_other_build:
            text += f" ({self.reused_other_build} reused from another engine build)"
        if self.rerun_other_build:
            text += f" ({self.rerun_other_build} of the runs replace another engine build's)"
        if self.interrupted:
            text += " (interrupted: finished points are kept; run again to go on)"
        return text


def run_sweep(
    spec: SweepSpec,
    store: str | Path | Store,
    workers: int | None = None,
    scheduler: str | None = None,
    overrides: Sequence[str] = (),
    progress: bool | None = None,
    on_point: Callable[[PointRecord], None] | None = None,
    same_build: bool = False,
    notify: Callable[[str], None] | None = None,
    trusted_builds: Collection[str] = (),
    only: Collection[str] | None = None,
    unset: Sequence[str] = (),
) -> SweepReport:
    """Run every point of ``spec`` not yet in ``store``.

    ``workers``: local processes (default: all cores) or Dask workers for a
    ``scheduler="local"`` cluster; ``scheduler``: None (local processes),
    ``"local"`` (a Dask LocalCluster) or ``"tcp://host:port"`` (an existing
    Dask scheduler). ``overrides`` (``key=value``) apply to the base, then
    ``unset`` removes keys from it.
    A stored point made by another engine build (:mod:`ecnlab.engine_build`) at
    the same model version is reused, with a notice, unless ``same_build``
    (a record): then it runs again, saying so, and replaces the old run, and
    a worker on another build fails the point. ``notify`` gets the notices
    (default: standard error). ``trusted_builds``: other builds whose runs
    a ``same_build`` sweep takes as its own (a record's carried rows, once
    a sample of them ran again identically: :mod:`ecnlab.reproduce.carry`).
    ``only``: run just the points with these keys (that sample).
    Raises :class:`ConfigError` when the sweep itself is wrong (every point
    rejected, unknown keys) before anything is written, and
    :class:`ecnlab.sweep.store.StoreError` for an unusable store.
    """
    from ..runner import load_engine

    engine = load_engine()
    if overrides or unset:
        spec = copy.copy(spec)
        spec.base = apply_overrides(copy.deepcopy(spec.base), overrides)
        for key in unset:
            unset_value(spec.base, key)
    points = spec.points()
    check_keys_exist(spec, engine)
    resolve_points(spec, points, engine)
    bad = [p for p in points if p.error]
    if len(bad) == len(points):
        raise ConfigError(f"{spec.where}: every point is rejected; the first: {bad[0].error}")
    if only is not None:
        wanted = set(only)
        points = [p for p in points if p.key in wanted]
    # Two spellings of one run share a key: run it once.
    unique: dict[str, Point] = {}
    for p in points:
        unique.setdefault(p.key, p)
    if not isinstance(store, Store):
        Store.check_path(Path(store))
    # Reach the workers before the store is touched: a scheduler that does
    # not answer leaves nothing behind.
    executor = make_executor(workers, scheduler)
    try:
        return _run_points(
            spec,
            store,
            unique,
            points,
            executor,
            version=str(engine.version()),
            progress=progress,
            on_point=on_point,
            same_build=same_build,
            notify=notify or stderr_notice,
            trusted=frozenset(trusted_builds),
        )
    finally:
        executor.close()


def _run_points(
    spec: SweepSpec,
    store: str | Path | Store,
    unique: dict[str, Point],
    points: list[Point],
    executor: Any,
    version: str,
    progress: bool | None,
    on_point: Callable[[PointRecord], None] | None,
    same_build: bool = False,
    notify: Callable[[str], None] | None = None,
    trusted: frozenset[str] = frozenset(),
) -> SweepReport:
    from ..engine_build import build_identity

    notify = notify or stderr_notice
    build = build_identity()
    st = store if isinstance(store, Store) else Store(store)
    report = SweepReport(st.path, total=len(unique), points=points)
    with st.locked():
        done = st.keys()
        other = _other_builds(st, [k for k in unique if k in done], build)
        other = {k: b for k, b in other.items() if b not in trusted}
        if same_build:
            done -= set(other)
            report.rerun_other_build = len(other)
        else:
            report.reused_other_build = len(other)
        if other:
            notify(_build_notice(spec.name, len(unique), other, build, same_build))
        todo = [p for p in unique.values() if p.key not in done]
        report.already = len(unique) - len(todo)
        for p in todo:
            if p.error:
                rec = _record(spec, p, "failed", p.error, 0.0, version, {})
                st.commit_failure(rec)
                report.failed.append(rec)
        tasks = [Task(p.key, p.resolved, version) for p in todo if not p.error]
        by_key = {p.key: p for p in todo}
        bar = _bar(spec.name, report.total, report.already, progress)
        bar.update(len(report.failed))
        last_index = time.monotonic()
        try:
            for outcome in executor.run(tasks):
                rec = _commit(
                    st,
                    spec,
                    by_key[outcome.key],
                    outcome,
                    version,
                    build if same_build else None,
                    replace=outcome.key in other,
                )
                if rec.status == "ok":
                    report.ran += 1
                else:
                    report.failed.append(rec)
                if on_point is not None:
                    on_point(rec)
                bar.update(1)
                bar.set_postfix(failed=len(report.failed), refresh=False)
                if time.monotonic() - last_index > _INDEX_EVERY_S:
                    st.write_index()
                    last_index = time.monotonic()
        except KeyboardInterrupt:
            report.interrupted = True
        finally:
            if report.interrupted:
                executor.close(cancel=True)
            bar.close()
            st.write_index()
    if report.interrupted:
        raise SweepInterrupted(report)
    return report


def stderr_notice(text: str) -> None:
    """Where a sweep's notices go unless told otherwise: standard error."""
    print(text, file=sys.stderr, flush=True)


def _other_builds(st: Store, keys: list[str], build: str) -> dict[str, str]:
    """{key: the build that made it} for the stored points among ``keys``
    made by a build other than ``build`` ("unknown": stored before builds
    were recorded)."""
    out: dict[str, str] = {}
    for key in keys:
        rec = st.record(key)
        made = rec.build if rec is not None else ""
        if made != build:
            out[key] = made or "unknown"
    return out


def _build_notice(
    name: str, total: int, other: Mapping[str, str], build: str, same_build: bool
) -> str:
    builds = sorted(set(other.values()))
    shown = "; ".join(builds[:3]) + (f"; and {len(builds) - 3} more" if len(builds) > 3 else "")
    head = (
        f"{name}: {len(other)} of {total} point{'' if total == 1 else 's'} in the store "
        f"{'was' if len(other) == 1 else 'were'} made by another engine build"
    )
    if same_build:
        return (
            f"{head} ({shown}): running them again, so that the record draws only on "
            f"this build ({build})"
        )
    return (
        f"note: {head} at the same model version ({shown}; this is {build}): reusing them; "
        "their numbers are that build's (`ecnlab reproduce ID --record` runs them again)"
    )


class SweepInterrupted(KeyboardInterrupt):
    """Ctrl-C during a sweep; finished points are in the store."""

    def __init__(self, report: SweepReport) -> None:
        super().__init__(report.line())
        self.report = report


def _record(
    spec: SweepSpec,
    p: Point,
    status: str,
    error: str,
    wall: float,
    engine: str,
    results: dict[str, Any],
) -> PointRecord:
    return PointRecord(
        p.key, p.case, dict(p.params), status, error, wall, engine, spec.name, results
    )


def _commit(
    st: Store,
    spec: SweepSpec,
    p: Point,
    outcome: Outcome,
    version: str,
    build: str | None = None,
    replace: bool = False,
) -> PointRecord:
    """Store one outcome. ``build``: the run must come from this engine
    build (a record's sweep), else it is a failed point."""
    if outcome.ok and outcome.engine != version:
        outcome = Outcome(
            outcome.key,
            False,
            f"the worker runs engine {outcome.engine}, not {version} (this client's): "
            "install the same ecnlab build on every worker",
            build=outcome.build,
        )
    elif outcome.ok and build is not None and outcome.build != build:
        outcome = Outcome(
            outcome.key,
            False,
            f"the worker runs engine build {outcome.build or 'unknown'}, not {build} "
            "(this client's): a record takes runs of this build only; install the same "
            "ecnlab build on every worker",
            build=outcome.build,
        )
    if not outcome.ok:
        rec = _record(spec, p, "failed", outcome.error, outcome.wall_seconds, outcome.engine, {})
        rec.build = outcome.build
        st.commit_failure(rec)
        return rec
    summary = json.loads(outcome.files["summary.json"])
    rec = _record(spec, p, "ok", "", outcome.wall_seconds, outcome.engine, summary_row(summary))
    rec.build = outcome.build
    st.commit(rec, outcome.files, replace=replace)
    return rec


def _bar(name: str, total: int, initial: int, progress: bool | None) -> Any:
    from tqdm import tqdm

    disable = progress is False or (progress is None and not sys.stderr.isatty())
    return tqdm(
        total=total,
        initial=initial,
        desc=name,
        unit="pt",
        disable=disable,
        dynamic_ncols=True,
        postfix={"failed": 0},
    )
