"""Carrying a record's finished runs from one machine to the next.

A full-scale figure can take longer than any one machine is kept: the
ML-ECN shared sweep is about 18 core-hours, a development VM has 2 cores
and is wiped between sessions, and the store (``--out DIR/store``) goes
with it. So ``ecnlab reproduce ID --record`` keeps what it has finished in
the repository as it goes, and a later run on a fresh checkout goes on from
there:

- While the sweep runs (every :data:`WRITE_EVERY_S`, and when it is
  interrupted), the index rows of its finished points are written to
  ``record/carry/<id>.jsonl``: one JSON object a line, the same row as a
  record's ``index.json`` (key, case, swept values, the build that made
  it, summary columns). When the record is written, the carry file goes:
  its rows are then in ``record/<id>/index.json``.
- A later ``--record`` run reads the rows of every carry file and every
  record's ``index.json`` (a point's key is a hash of its whole config and
  the model version, so a row serves every figure that makes that point,
  and never a point of another model) and puts those of its sweep into the
  store as *carried* points: the summary columns, no per-flow tables.
  Every figure with a long sweep draws only on summary columns (metrics
  that read a table raise for a carried point, naming it).
- A row made by this very build is taken as it is. A row made by another
  build of the same model version is taken only after
  :data:`VERIFY_PER_BUILD` of that build's points (chosen by a hash of
  their keys, so spread over the sweep) ran again on this build and gave
  the same summary, column for column, apart from the wall-clock columns
  (:data:`WALL_COLUMNS`). If one differs, none of that build's rows is
  taken: the points run again, and the notice names the point and the
  column. That is the model version's promise (no output moves without
  it; the golden corpus checks it at every commit) tested on the figure's
  own points before its numbers are trusted.

The record's JSON says what was carried (``carried``: rows per build, the
points run again and whether they agreed).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from ..results import atomic_write
from ..store import BASE_COLUMNS, PointRecord, Store
from ..sweep import Point, SweepSpec, resolve_points, run_sweep

__all__ = [
    "CARRY_DIR",
    "VERIFY_PER_BUILD",
    "WALL_COLUMNS",
    "CarryWriter",
    "carried_rows",
    "carry_in",
    "carry_path",
    "differences",
    "import_rows",
    "verify_sample",
]

CARRY_DIR = "carry"
"""``record/carry/<id>.jsonl``: a figure's finished rows before its record."""

VERIFY_PER_BUILD = 2
"""Points of each other build run again before its rows are taken. Two
spread points cost two runs (minutes for the longest sweep) and would catch
any change that moves a whole figure; the golden corpus catches the rest."""

WALL_COLUMNS = ("wall_seconds", "events_per_second")
"""Summary columns that time the run rather than describe it (the golden
corpus leaves out the same two: crates/ecnlab/src/golden.rs, WALL_KEYS)."""

WRITE_EVERY_S = 60.0
"""How often a running record rewrites its carry file."""


def carry_path(root: str | Path, fid: str) -> Path:
    return Path(root) / CARRY_DIR / f"{fid}.jsonl"


def carried_rows(root: str | Path) -> dict[str, tuple[dict[str, Any], str]]:
    """{key: (row, where it was read)} for every finished point in the
    carry files and the records' ``index.json`` under ``root``. A key in
    two places is one run (the key holds the config and the model
    version); the first read wins, records before carry files."""
    base = Path(root)
    out: dict[str, tuple[dict[str, Any], str]] = {}
    sources = sorted(base.glob("*/index.json")) + sorted((base / CARRY_DIR).glob("*.jsonl"))
    for path in sources:
        shown = str(path.relative_to(base.parent)) if base.parent in path.parents else str(path)
        for row in _read_rows(path):
            if row.get("status") == "ok" and isinstance(row.get("key"), str):
                out.setdefault(row["key"], (row, shown))
    return out


def _read_rows(path: Path) -> list[dict[str, Any]]:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    rows = json.loads(text)
    return [r for r in rows if isinstance(r, dict)] if isinstance(rows, list) else []


def results_of(row: Mapping[str, Any]) -> dict[str, Any]:
    """A row's summary columns: what is not a base column and not a swept
    key (swept keys are dotted config paths; summary columns never are)."""
    return {k: v for k, v in row.items() if k not in BASE_COLUMNS and "." not in k}


def differences(carried: Mapping[str, Any], fresh: Mapping[str, Any]) -> list[tuple[str, Any, Any]]:
    """(column, carried, fresh) for every summary column that differs,
    the wall-clock columns left out. Both sides go through JSON first, as a
    record stores them (non-finite numbers become null)."""
    from . import _clean

    a = json.loads(json.dumps(_clean(results_of(carried))))
    b = json.loads(json.dumps(_clean(results_of(fresh))))
    names = sorted((set(a) | set(b)) - set(WALL_COLUMNS))
    return [(n, a.get(n), b.get(n)) for n in names if a.get(n) != b.get(n)]


def sample_keys(keys: Iterable[str], n: int = VERIFY_PER_BUILD) -> list[str]:
    """``n`` of ``keys`` chosen by a hash of each key: the same choice on
    every machine, spread over the sweep rather than its first corner."""
    return sorted(keys, key=lambda k: hashlib.sha256(k.encode()).hexdigest())[:n]


def import_rows(
    store: Store, points: Mapping[str, Point], rows: Mapping[str, tuple[dict[str, Any], str]]
) -> int:
    """Put the carried ``rows`` of ``points`` into ``store`` (the caller
    holds its lock); a key the store already has is left alone. Returns
    how many went in."""
    have = store.keys()
    n = 0
    for key, (row, source) in rows.items():
        p = points.get(key)
        if p is None or key in have:
            continue
        rec = PointRecord(
            key=key,
            case=str(row.get("case", p.case)),
            params=dict(p.params),
            status="ok",
            error="",
            wall_seconds=float(row.get("wall_seconds") or 0.0),
            engine=str(row.get("engine", "")),
            sweep=str(row.get("sweep", "")),
            results=results_of(row),
            build=str(row.get("build", "")),
        )
        note = {"carried_from": source, "tables": "none: a carried point keeps its summary only"}
        files = {
            "carried.json": (json.dumps(note) + "\n").encode(),
            "config.json": (json.dumps(json.loads(p.resolved), indent=2) + "\n").encode(),
        }
        store.commit(rec, files)
        n += 1
    return n


def verify_sample(
    fresh: Mapping[str, PointRecord], rows: Mapping[str, tuple[dict[str, Any], str]]
) -> list[dict[str, Any]]:
    """For each point run again (``fresh``), whether it agrees with its
    carried row: ``{key, build, identical, differs}`` (``differs``: the
    first few columns that do not, as ``column: carried -> fresh``)."""
    out = []
    for key, rec in sorted(fresh.items()):
        row = rows[key][0]
        diff = differences(row, rec.row()) if rec.status == "ok" else [("status", "ok", rec.error)]
        out.append(
            {
                "key": key,
                "build": str(row.get("build", "")),
                "identical": not diff,
                "differs": [f"{c}: {a!r} -> {b!r}" for c, a, b in diff[:3]],
            }
        )
    return out


class CarryWriter:
    """Keeps ``record/carry/<id>.jsonl`` up to date while a record's sweep
    runs: the rows it starts with, and each finished point (``add``),
    written at most every :data:`WRITE_EVERY_S` and on ``flush``."""

    def __init__(
        self,
        path: Path,
        rows: Iterable[Mapping[str, Any]],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.path = path
        self.rows = {str(r["key"]): dict(r) for r in rows}
        self.clock = clock
        self.written = clock()
        self.dirty = False

    def add(self, rec: PointRecord) -> None:
        if rec.status != "ok":
            return
        self.rows[rec.key] = rec.row()
        self.dirty = True
        if self.clock() - self.written >= WRITE_EVERY_S:
            self.flush()

    def flush(self) -> None:
        """Write the file now (nothing to write: nothing happens)."""
        from . import _clean

        self.written = self.clock()
        if not self.dirty and self.path.is_file():
            return
        if not self.rows:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        lines = [
            json.dumps(_clean(self.rows[k]), sort_keys=True, allow_nan=False)
            for k in sorted(self.rows)
        ]
        with atomic_write(self.path, "w") as handle:
            handle.write("\n".join(lines) + "\n")
        self.dirty = False

    def drop(self) -> None:
        """The record is written: its rows live in its ``index.json``."""
        self.path.unlink(missing_ok=True)
        parent = self.path.parent
        if parent.is_dir() and not any(parent.iterdir()):
            parent.rmdir()


def carry_in(
    fid: str,
    spec: SweepSpec,
    store_path: Path,
    root: Path,
    *,
    workers: int | None = None,
    scheduler: str | None = None,
    progress: bool | None = None,
    notify: Callable[[str], None] | None = None,
) -> tuple[dict[str, Any], frozenset[str], CarryWriter]:
    """Before a record's sweep: take the carried rows of ``spec``'s points
    into the store at ``store_path`` (a sample of each other build's run
    again first, see the module docstring). Returns what was carried (for
    the record's JSON: ``imported``, ``verified``, ``refused``), the
    builds the sweep may take as its own, and the
    writer that keeps ``root/carry/<fid>.jsonl`` up to date."""
    from ..engine_build import build_identity
    from ..runner import load_engine
    from ..sweep import _to_stderr

    notify = notify or _to_stderr
    build = build_identity()
    points = spec.points()
    resolve_points(spec, points, load_engine())
    unique = {p.key: p for p in points if not p.error}
    rows = {k: v for k, v in carried_rows(root).items() if k in unique}
    st = Store(store_path)
    mine = {r.key for r in st.records() if r.status == "ok" and r.build == build}
    by_build: dict[str, list[str]] = {}
    for key, (row, _) in rows.items():
        if key not in mine:
            by_build.setdefault(str(row.get("build", "")), []).append(key)
    trusted: set[str] = set()
    checks: list[dict[str, Any]] = []
    refused: dict[str, int] = {}
    for other, keys in sorted(by_build.items()):
        if other == build:
            continue
        sample = sample_keys(keys)
        notify(
            f"{fid}: {len(keys)} carried point(s) were made by another build "
            f"({other or 'unknown'}); running {len(sample)} of them again on this one "
            f"({build}) before taking the rest"
        )
        run_sweep(
            spec, st, workers=workers, scheduler=scheduler, progress=progress,
            same_build=True, only=sample, notify=notify,
        )  # fmt: skip
        fresh = {k: r for k in sample if (r := st.record(k)) is not None}
        result = verify_sample(fresh, rows)
        checks += result
        if len(fresh) == len(sample) and all(c["identical"] for c in result):
            trusted.add(other)
            continue
        refused[other] = len(keys)
        bad = next((c for c in result if not c["identical"]), None)
        why = (
            f"point {bad['key']} differs ({'; '.join(bad['differs'])})" if bad else "a rerun failed"
        )
        notify(
            f"{fid}: the carried runs of build {other or 'unknown'} are not taken: {why}; "
            f"their {len(keys)} point(s) run again"
        )
    take = {k: v for k, v in rows.items() if str(v[0].get("build", "")) in trusted | {build}}
    with st.locked():
        n = import_rows(st, unique, take)
    if n:
        notify(f"{fid}: {n} point(s) carried from {root} into the store")
    own = [
        r.row() for r in st.records()
        if r.key in unique and r.status == "ok" and (r.build in trusted or r.build == build)
    ]  # fmt: skip
    info = {"imported": n, "verified": checks, "refused": refused}
    return info, frozenset(trusted), CarryWriter(carry_path(root, fid), own)
