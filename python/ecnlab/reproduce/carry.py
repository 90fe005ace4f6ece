"""Carrying a record's finished runs from one machine to the next.

A full-scale figure can take longer than any one machine is kept: the
ML-ECN shared sweep is about 38 core-hours, a development VM has 2 cores
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
  store as *carried* points: the summary columns and the config, no
  per-flow tables. Only a figure drawn from summary columns takes them
  (:func:`ecnlab.reproduce.metrics.reads_tables`); one that reads tables
  runs its points, and carried points left in its store run again.
- A row made by this very build is taken as it is; a row without a build
  (stored before builds were stamped) is not. A row made by another build
  of the same model version is taken once that build is linked to this
  one (:func:`trusted_builds`): directly, by :data:`VERIFY_PER_BUILD` of its
  points agreeing with runs of this build, summary column for column apart
  from the wall-clock columns (:data:`WALL_COLUMNS`), or through builds that
  agreed pairwise the same way, no two builds of the chain having ever
  differed. The evidence: runs in the store, the checks carry files and
  records keep, and a copy of every check beside the store
  (:func:`earlier_checks`; the copy survives a carry file restored from
  git, which would otherwise drop the links of the builds that ran into
  this store), and for the shortfall points
  chosen by a hash of their keys (spread over the sweep) and run again
  now. A build that differs from a linked one is not taken: its points run
  again, and the notice names the point and the column. If a rerun fails,
  the build is not taken either, and its rows stay in the carry file. A
  chain of sessions' builds so costs one new check a session. That is the
  model version's promise (no output moves without it; the golden corpus
  checks it at every commit) tested on the figure's own points before its
  numbers are trusted.

The record's JSON says what was carried (``carried``: rows taken, the
checks and their outcome, refused builds, drawn points per build).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from .._atomic import atomic_write
from .._json import finite
from ..errors import ConfigError
from ..sweep import Point, SweepSpec, resolve_points, run_sweep
from ..sweep.store import BASE_COLUMNS, PointRecord, Store

__all__ = [
    "CARRIED_FILE",
    "CARRY_DIR",
    "STORE_CHECKS",
    "VERIFY_PER_BUILD",
    "WALL_COLUMNS",
    "CarryWriter",
    "carried_rows",
    "carry_in",
    "carry_path",
    "checks_path",
    "store_checks_path",
    "compare",
    "differences",
    "drop_carried",
    "earlier_checks",
    "import_rows",
    "is_carried",
    "sample_keys",
    "trusted_builds",
]

CARRY_DIR = "carry"
"""``record/carry/<id>.jsonl``: a figure's finished rows before its record."""

STORE_CHECKS = "carry-checks.json"
"""Beside a record's store: every check its carry writers wrote."""

VERIFY_PER_BUILD = 2
"""Points of each other build run again before its rows are taken. Two
spread points cost two runs (minutes for the longest sweep) and would catch
any change that moves a whole figure; the golden corpus catches the rest."""

WALL_COLUMNS = ("wall_seconds", "events_per_second")
"""Summary columns that time the run rather than describe it (the golden
corpus leaves out the same two: crates/ecnlab/src/golden.rs, WALL_KEYS)."""

CARRIED_FILE = "carried.json"
"""The file that marks a store point as carried (summary only, no tables)."""

MISSING = "(missing)"
"""How :func:`differences` shows a column one side does not have."""

WRITE_EVERY_S = 60.0
"""How often a running record rewrites its carry file."""


def is_carried(store: Store, key: str) -> bool:
    """Whether the store's point ``key`` was carried, not run here."""
    return (store.point_dir(key) / CARRIED_FILE).is_file()


def carry_path(root: str | Path, fid: str) -> Path:
    return Path(root) / CARRY_DIR / f"{fid}.jsonl"


def checks_path(carry: Path) -> Path:
    """Beside ``<id>.jsonl``, ``<id>.checks.json``: the checks its rows of
    other builds were taken on (a JSON list, so the rows' glob skips it)."""
    return carry.with_name(carry.name.removesuffix(".jsonl") + ".checks.json")


def store_checks_path(store: str | Path) -> Path:
    """``<store>/carry-checks.json``: the checks every record's carry writer
    kept while it ran into this store (:data:`STORE_CHECKS`)."""
    return Path(store) / STORE_CHECKS


def _write_if_changed(path: Path, text: str) -> None:
    if path.is_file() and path.read_text(encoding="utf-8") == text:
        return
    with atomic_write(path, "w") as handle:
        handle.write(text)


def carried_rows(root: str | Path) -> dict[str, tuple[dict[str, Any], str]]:
    """{key: (row, where it was read)} for every finished point with a
    build in the carry files and the records' ``index.json`` under
    ``root``. A key in two places is one run (the key holds the config and
    the model version); the first read wins, records before carry files."""
    base = Path(root)
    out: dict[str, tuple[dict[str, Any], str]] = {}
    sources = sorted(base.glob("*/index.json")) + sorted((base / CARRY_DIR).glob("*.jsonl"))
    for path in sources:
        shown = str(path.relative_to(base.parent)) if base.parent in path.parents else str(path)
        for row in _read_rows(path):
            # A row without a build (stored before builds were stamped)
            # cannot be checked against one: never carried.
            if row.get("status") == "ok" and isinstance(row.get("key"), str) and row.get("build"):
                out.setdefault(row["key"], (row, shown))
    return out


def _read_rows(path: Path) -> list[dict[str, Any]]:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        out = []
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except ValueError as exc:
                # Two machines' commits of one carry file can meet in a merge.
                raise ConfigError(
                    f"{path}, line {n}: not a JSON row ({exc}); a carry file holds one "
                    "index row a line (resolve a merge by keeping every distinct row)"
                ) from None
            if isinstance(row, dict):
                out.append(row)
        return out
    try:
        rows = json.loads(text)
    except ValueError as exc:
        raise ConfigError(f"{path}: not a JSON list of index rows ({exc})") from None
    return [r for r in rows if isinstance(r, dict)] if isinstance(rows, list) else []


def results_of(row: Mapping[str, Any]) -> dict[str, Any]:
    """A row's summary columns: what is not a base column and not a swept
    key (swept keys are dotted config paths; summary columns never are)."""
    return {k: v for k, v in row.items() if k not in BASE_COLUMNS and "." not in k}


def differences(carried: Mapping[str, Any], fresh: Mapping[str, Any]) -> list[tuple[str, Any, Any]]:
    """(column, carried, fresh) for every summary column that differs,
    the wall-clock columns left out. Both sides go through JSON first, as a
    record stores them (non-finite numbers become null)."""
    a = json.loads(json.dumps(finite(results_of(carried))))
    b = json.loads(json.dumps(finite(results_of(fresh))))
    names = sorted((set(a) | set(b)) - set(WALL_COLUMNS))
    # A column one side lacks is a difference, not a null.
    return [
        (n, a.get(n, MISSING), b.get(n, MISSING))
        for n in names
        if n not in a or n not in b or a[n] != b[n]
    ]


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
            CARRIED_FILE: (json.dumps(note) + "\n").encode(),
            "config.json": (json.dumps(json.loads(p.resolved), indent=2) + "\n").encode(),
        }
        store.commit(rec, files)
        n += 1
    return n


def compare(
    rows: Mapping[str, tuple[dict[str, Any], str]], runs: Mapping[str, PointRecord]
) -> list[dict[str, Any]]:
    """For each point run by this build (``runs``), whether it agrees with
    its carried row: ``{key, build, by, identical, differs}`` (``build``
    made the row, ``by`` the run; ``differs``: the first few columns that
    do not, as ``column: carried -> ours``)."""
    out = []
    for key, rec in sorted(runs.items()):
        row = rows[key][0]
        diff = differences(row, rec.row())
        out.append(
            {
                "key": key,
                "build": str(row.get("build", "")),
                "by": rec.build,
                "identical": not diff,
                "differs": [f"{c}: {a!r} -> {b!r}" for c, a, b in diff[:3]],
            }
        )
    return out


def earlier_checks(root: str | Path, store: str | Path | None = None) -> list[dict[str, Any]]:
    """The checks made when rows were carried before: the records' JSON
    (``carried.verified``), the carry files' ``<id>.checks.json`` and, with
    ``store``, the copy kept beside that store. A record (or carry file)
    replaces a checked row with the run that checked it, so a later run
    finds the evidence here rather than in the rows."""
    base = Path(root)
    paths = sorted((base / CARRY_DIR).glob("*.checks.json"))
    if store is not None:
        paths.append(store_checks_path(store))
    out = [c for path in paths for c in _read_checks(path)]
    for path in sorted(base.glob("*/*.json")):
        if path.name != f"{path.parent.name}.json":
            continue
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except ValueError:
            continue  # a broken record is test_record.py's to report
        carried = doc.get("carried") if isinstance(doc, dict) else None
        if isinstance(carried, dict):
            out += [c for c in carried.get("verified", []) if isinstance(c, dict)]
    return out


def _read_checks(path: Path) -> list[dict[str, Any]]:
    """The checks of a JSON list file (none if it does not exist)."""
    if not path.is_file():
        return []
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise ConfigError(
            f"{path}: not a JSON list of checks ({exc}); resolve a merge by keeping "
            "every distinct check of both sides in one list"
        ) from None
    return [c for c in data if isinstance(c, dict)] if isinstance(data, list) else []


class CarryWriter:
    """Keeps ``record/carry/<id>.jsonl`` up to date while a record's sweep
    runs. Each write is made from the store: the rows of the sweep's
    ``keys`` made by one of ``builds`` (this build and the trusted ones), so
    a point stored just before an interrupt is not left out, plus ``keep``
    (rows of a build whose check could not be made this time, kept for the
    next machine). Written at most every :data:`WRITE_EVERY_S` as points
    finish (``add``), and on ``flush``; only when the text changed."""

    def __init__(
        self,
        path: Path,
        store: Store,
        keys: Iterable[str],
        builds: Iterable[str],
        keep: Iterable[Mapping[str, Any]] = (),
        clock: Callable[[], float] = time.monotonic,
        checks: Iterable[Mapping[str, Any]] = (),
    ) -> None:
        self.path = path
        self.store = store
        self.keys = frozenset(keys)
        self.builds = frozenset(builds)
        self.keep = {str(r["key"]): dict(r) for r in keep}
        self.clock = clock
        self.written = clock()
        self.checks = [dict(c) for c in checks]
        self.checks_path = checks_path(path)

    def add(self, rec: PointRecord) -> None:
        if rec.status == "ok" and self.clock() - self.written >= WRITE_EVERY_S:
            self.flush()

    def rows(self) -> dict[str, dict[str, Any]]:
        out = dict(self.keep)
        for r in self.store.records():
            if r.key in self.keys and r.status == "ok" and r.build in self.builds:
                out[r.key] = r.row()
        return out

    def flush(self) -> None:
        """Write the file now, if there is anything and it changed."""
        self.written = self.clock()
        rows = self.rows()
        if not rows:
            return
        text = "".join(
            json.dumps(finite(rows[k]), sort_keys=True, allow_nan=False) + "\n"
            for k in sorted(rows)
        )
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if self.checks:
            # The checks that link other builds' rows to this build: the
            # next machine's build needs only to be linked to one of them.
            checks = json.dumps(self.checks, indent=1, sort_keys=True) + "\n"
            _write_if_changed(self.checks_path, checks)
            self._keep_beside_store()
        else:
            self.checks_path.unlink(missing_ok=True)
        _write_if_changed(self.path, text)

    def _keep_beside_store(self) -> None:
        """Add this writer's checks to the store's copy (every figure's
        that ran into it), so that they outlive the carry file."""
        path = store_checks_path(self.store.path)
        merged = _unique_checks(_read_checks(path) + self.checks)
        _write_if_changed(path, json.dumps(merged, indent=1, sort_keys=True) + "\n")

    def drop(self) -> None:
        """The record is written: its rows live in its ``index.json``, its
        checks in its JSON (``carried.verified``)."""
        self.path.unlink(missing_ok=True)
        self.checks_path.unlink(missing_ok=True)
        parent = self.path.parent
        if parent.is_dir() and not any(parent.iterdir()):
            parent.rmdir()


def drop_carried(store: Store, keys: Iterable[str]) -> int:
    """Remove the carried points among ``keys`` from ``store`` (the caller
    holds its lock): a figure that reads per-flow tables runs them again.
    Their rows stay where they were carried from. Returns how many."""
    n = 0
    for key in keys:
        if is_carried(store, key):
            shutil.rmtree(store.point_dir(key))
            n += 1
    return n


def carry_in(
    fid: str,
    spec: SweepSpec,
    store_path: Path,
    root: Path,
    *,
    import_points: bool = True,
    workers: int | None = None,
    scheduler: str | None = None,
    progress: bool | None = None,
    notify: Callable[[str], None] | None = None,
) -> tuple[dict[str, Any], frozenset[str], CarryWriter | None]:
    """Before a record's sweep: take the carried rows of ``spec``'s points
    into the store at ``store_path`` (another build's after a check, see
    the module docstring). Returns what was carried (for the record's JSON:
    ``imported``, ``verified``, ``refused``), the builds the sweep may take
    as its own, and the writer that keeps ``root/carry/<fid>.jsonl``.

    ``import_points=False`` (a figure that reads per-flow tables, which a
    carried point lacks): nothing is checked or imported, carried points
    already in the store are removed so that they run again, and there is
    no writer (rows it could not take are not worth carrying)."""
    from ..engine_build import build_identity
    from ..runner import load_engine
    from ..sweep.run import stderr_notice

    notify = notify or stderr_notice
    build = build_identity()
    points = spec.points()
    resolve_points(spec, points, load_engine())
    unique = {p.key: p for p in points if not p.error}
    st = Store(store_path)
    info: dict[str, Any] = {"imported": 0, "verified": [], "refused": {}}
    if not import_points:
        with st.locked():
            drop_carried(st, unique)
        return info, frozenset(), None
    rows = {k: v for k, v in carried_rows(root).items() if k in unique}
    mine = {
        r.key: r
        for r in st.records()
        if r.key in unique and r.status == "ok" and r.build == build
        and not is_carried(st, r.key)
    }  # fmt: skip
    by_build: dict[str, list[str]] = {}
    for key, (row, _) in rows.items():
        by_build.setdefault(str(row["build"]), []).append(key)
    # The evidence: checks made before (records, carry files), then this
    # build's own runs of carried points, which cost nothing.
    checks = earlier_checks(root, store_path)
    checks += compare(
        rows, {k: r for k, r in mine.items() if k in rows and rows[k][0]["build"] != build}
    )
    need = {b: min(VERIFY_PER_BUILD, len(keys)) for b, keys in by_build.items()}
    trusted = trusted_builds(build, checks, need)
    keep: list[dict[str, Any]] = []
    refused: dict[str, int] = {}
    # Check directly the builds that vouch for the most others first: a
    # chain of sessions' builds then costs one check per session.
    order = sorted(
        (b for b in by_build if b not in trusted),
        key=lambda b: (-len(trusted_builds(b, checks, need)), -len(by_build[b]), b),
    )
    for other in order:
        if other in trusted:
            continue
        keys = by_build[other]
        wrong = _disagreement(other, trusted | {build}, checks)
        failed = False
        if wrong is None:
            agreed = _agreed(other, build, checks)
            short = need[other] - len(agreed)
            if short > 0:
                sample = sample_keys([k for k in keys if k not in agreed and k not in mine], short)
                notify(
                    f"{fid}: {len(keys)} carried point(s) were made by another build "
                    f"({other}); running {len(sample)} of them again on this one ({build}) "
                    "before taking the rest"
                )
                # (Quiet: the notice above says why these run; run_sweep's
                # own would say they replace another build's runs.)
                report = run_sweep(
                    spec, st, workers=workers, scheduler=scheduler, progress=progress,
                    same_build=True, only=sample, notify=lambda _: None,
                )  # fmt: skip
                # Only this build's fresh runs count: a failed rerun leaves
                # the store's old folder (maybe that build's own run) in place.
                bad = {r.key for r in report.failed}
                ran = {
                    k: r
                    for k in sample
                    if k not in bad and (r := st.record(k)) is not None and r.build == build
                }
                failed = len(ran) < len(sample)
                fresh = compare(rows, ran)
                checks += fresh
                wrong = next((c for c in fresh if not c["identical"]), None)
        if wrong is None and not failed:
            trusted = trusted_builds(build, checks, need)
            if other in trusted:
                continue
        refused[other] = len(keys)
        if wrong is not None:
            why = f"point {wrong['key']} differs ({'; '.join(wrong['differs'])})"
        else:
            why = "a rerun failed, so they could not be checked (kept for the next run)"
            keep += [rows[k][0] for k in keys if k not in mine]
        notify(
            f"{fid}: the carried runs of build {other} are not taken: {why}; "
            f"their {len(keys)} point(s) run again"
        )
    # A build refused for a failed rerun may have come in later through
    # another's check (one refused for a difference cannot: see
    # trusted_builds).
    refused = {b: n for b, n in refused.items() if b not in trusted}
    keep = [r for r in keep if r.get("build") not in trusted]
    info["refused"] = refused
    # Every check that links (or bars) a build of these rows, intermediate
    # builds without rows of their own included.
    involved = _linked(set(by_build) | trusted | {build}, checks)
    info["verified"] = _unique_checks(
        c for c in checks if c.get("build") in involved and c.get("by") in involved
    )
    take = {k: v for k, v in rows.items() if str(v[0]["build"]) in trusted | {build}}
    with st.locked():
        info["imported"] = import_rows(st, unique, take)
    if info["imported"]:
        notify(f"{fid}: {info['imported']} point(s) carried from {root} into the store")
    writer = CarryWriter(
        carry_path(root, fid), st, unique, trusted | {build}, keep, checks=info["verified"]
    )
    return info, frozenset(trusted - {build}), writer


def _pair(c: Mapping[str, Any]) -> frozenset[str]:
    return frozenset((str(c.get("build")), str(c.get("by"))))


def _agreed(a: str, b: str, checks: Iterable[Mapping[str, Any]]) -> set[str]:
    """The keys on which builds ``a`` and ``b`` were checked and agreed."""
    return {str(c["key"]) for c in checks if c.get("identical") and _pair(c) == {a, b}}


def _disagreement(
    a: str, others: Iterable[str], checks: Iterable[Mapping[str, Any]]
) -> Mapping[str, Any] | None:
    """A check on which build ``a`` and one of ``others`` differed."""
    want = {frozenset((a, o)) for o in others}
    return next((c for c in checks if not c.get("identical") and _pair(c) in want), None)


def trusted_builds(
    start: str, checks: Iterable[Mapping[str, Any]], need: Mapping[str, int]
) -> set[str]:
    """The builds linked to ``start`` by a chain of builds in which each
    one joined on enough agreements with a build already in (``need`` of
    the joining build; otherwise :data:`VERIFY_PER_BUILD`), and no two
    builds in the set ever differed on a point. Equal outputs are
    transitive, so a carry that several sessions' builds wrote needs one
    new check a session, not one per build it holds."""
    agreed: dict[frozenset[str], set[str]] = {}
    differed: set[frozenset[str]] = set()
    for c in checks:
        if not c.get("by") or not c.get("build") or c.get("build") == c.get("by"):
            continue
        pair = _pair(c)
        if c.get("identical"):
            agreed.setdefault(pair, set()).add(str(c["key"]))
        else:
            differed.add(pair)
    out = {start}
    grew = True
    while grew:
        grew = False
        for pair, keys in sorted(agreed.items(), key=lambda kv: sorted(kv[0])):
            inside = pair & out
            if len(inside) != 1:
                continue
            (new,) = pair - out
            if len(keys) < need.get(new, VERIFY_PER_BUILD):
                continue
            if any(frozenset((new, b)) in differed for b in out):
                continue
            out.add(new)
            grew = True
    return out


def _unique_checks(checks: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One check per (point, row build, run build); a disagreement wins."""
    seen: dict[tuple[str, str, str], dict[str, Any]] = {}
    for c in checks:
        k = (str(c.get("key")), str(c.get("build")), str(c.get("by")))
        if k not in seen or not c.get("identical"):
            seen[k] = dict(c)
    return [seen[k] for k in sorted(seen)]


def _linked(builds: set[str], checks: Iterable[Mapping[str, Any]]) -> set[str]:
    """``builds`` and every build reachable from them through checks of
    any outcome: the checks worth keeping for the next machine."""
    pairs = [_pair(c) for c in checks if c.get("build") and c.get("by")]
    out = set(builds)
    grew = True
    while grew:
        grew = False
        for pair in pairs:
            if len(pair & out) == 1:
                out |= pair
                grew = True
    return out
