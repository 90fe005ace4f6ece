"""The result store of sweeps: a directory of Parquet, one folder per point.

Layout::

    STORE/
      store.json                 marks the directory as a store (format version)
      points.parquet             the index: one row per point (derived, rebuilt)
      points/key=<key>/          a finished point: point.json, summary.json,
                                 config.json and the run's <table>.parquet
      failed/<key>.json          a point that failed, with its error
      .tmp/                      points being written (never read)
      .lock                      held by the sweep writing to the store

Each point's ``point.json`` names the engine build that made it
(:mod:`ecnlab.engine_build`; the index's ``build`` column). A record's sweep
replaces a point another build made: the new folder takes the old one's
place in one step (:func:`_swap`).

A point's folder appears in one ``rename`` once every file in it is written
and synced, so a folder under ``points/`` is always complete, whatever
instant the writer was killed at; ``.tmp/`` leftovers are removed by the
next writer. The folders are the truth: ``points.parquet`` is rebuilt from
them (atomically) as a sweep goes and when it ends, and whenever
:meth:`Store.index` finds it out of date.

The ``key=<key>`` folder names are Hive partitions, so one line reads a
table of every point with its key as a column::

    pd.read_parquet("STORE/points.parquet")                                 # the index
    duckdb.sql("SELECT * FROM read_parquet('STORE/points/*/flows.parquet', hive_partitioning=true)")
    pl.scan_parquet("STORE/points/*/flows.parquet", hive_partitioning=True)
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import json
import math
import os
import shutil
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from .._atomic import atomic_write, sync_dir, write_synced
from ..runner.result import PARQUET_OPTIONS

__all__ = ["BASE_COLUMNS", "INDEX_FILE", "PointRecord", "Store", "StoreError", "summary_row"]

FORMAT = 1
INDEX_FILE = "points.parquet"
MARKER_FILE = "store.json"
POINT_FILE = "point.json"
# Columns every index row has, before the point's parameters and results.
BASE_COLUMNS = ("key", "case", "status", "error", "wall_seconds", "engine", "build", "sweep")
# Point files that are not tables.
_JSON_FILES = ("point.json", "summary.json", "config.json")


class StoreError(Exception):
    """A store that cannot be used: a file in its place, a foreign directory,
    another sweep writing to it."""


@dataclass
class PointRecord:
    """One point as the index shows it."""

    key: str
    case: str
    params: dict[str, Any]
    status: str
    error: str
    wall_seconds: float
    engine: str
    sweep: str
    results: dict[str, Any]
    # Which build made the run (ecnlab.engine_build); "" for a point stored
    # before builds were recorded.
    build: str = ""

    def row(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "key": self.key,
            "case": self.case,
            "status": self.status,
            "error": self.error,
            "wall_seconds": self.wall_seconds,
            "engine": self.engine,
            "build": self.build,
            "sweep": self.sweep,
        }
        out.update(self.params)
        for name, value in self.results.items():
            out.setdefault(name, value)
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "case": self.case,
            "params": self.params,
            "status": self.status,
            "error": self.error,
            "wall_seconds": self.wall_seconds,
            "engine": self.engine,
            "build": self.build,
            "sweep": self.sweep,
            "results": self.results,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> PointRecord:
        return cls(
            key=str(data["key"]),
            case=str(data.get("case", "")),
            params=dict(data.get("params", {})),
            status=str(data.get("status", "ok")),
            error=str(data.get("error", "")),
            wall_seconds=float(data.get("wall_seconds", 0.0)),
            engine=str(data.get("engine", "")),
            sweep=str(data.get("sweep", "")),
            results=dict(data.get("results", {})),
            build=str(data.get("build", "")),
        )


def summary_row(summary: Mapping[str, Any]) -> dict[str, Any]:
    """The scalars of a run's summary, flat: ``goodput_gbps_by_service``
    becomes ``goodput_gbps_s<service>``, ``fct`` becomes ``fct_<stat>`` and
    ``slowdown`` (FCT over ideal FCT) ``slowdown_<stat>``
    (``slowdown_overall_mean``, ``slowdown_small_p99``, ...); lists and other
    nested values are left out."""
    row: dict[str, Any] = {}
    for name, value in summary.items():
        if name == "goodput_gbps_by_service" and isinstance(value, Mapping):
            for service, gbps in sorted(value.items(), key=lambda kv: int(kv[0])):
                row[f"goodput_gbps_s{service}"] = _scalar(gbps)
        elif name in ("fct", "slowdown") and isinstance(value, Mapping):
            for stat, number in value.items():
                row[f"{name}_{stat}"] = _scalar(number)
        elif _is_scalar(value):
            row[name] = _scalar(value)
    return row


def _is_scalar(value: Any) -> bool:
    return value is None or isinstance(value, (bool, int, float, str))


def _scalar(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value if _is_scalar(value) else None


class Store:
    """A sweep result store at ``path`` (see the module docstring).

    ``create=True`` makes the directory (and its parents) when missing.
    Raises :class:`StoreError` when ``path`` is a file, or an existing
    non-empty directory that is not a store.
    """

    def __init__(self, path: str | Path, create: bool = True) -> None:
        self.path = Path(path)
        self.check_path(self.path)
        marker = self.path / MARKER_FILE
        if not self.path.exists() and not create:
            raise StoreError(f"{self.path}: no such store")
        if not marker.is_file():
            if not create:
                raise StoreError(f"{self.path}: not an ecnlab store (no {MARKER_FILE})")
            try:
                self.path.mkdir(parents=True, exist_ok=True)
            except (FileExistsError, NotADirectoryError) as exc:
                raise StoreError(f"{self.path}: cannot create the store ({exc})") from None
            with atomic_write(marker, "w") as handle:
                handle.write(json.dumps({"ecnlab_store": FORMAT}) + "\n")
        try:
            data = json.loads(marker.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise StoreError(f"{marker}: unreadable ({exc})") from None
        if data.get("ecnlab_store") != FORMAT:
            raise StoreError(
                f"{marker}: store format {data.get('ecnlab_store')!r}, expected {FORMAT}"
            )
        self._lock_handle: Any = None

    @staticmethod
    def check_path(path: Path) -> None:
        """Raise :class:`StoreError` unless ``path`` is a store, an empty
        directory or nothing yet (so a store can be made there)."""
        if path.exists() and not path.is_dir():
            raise StoreError(f"{path}: is a file, not a store directory")
        if path.is_dir() and not (path / MARKER_FILE).is_file() and any(path.iterdir()):
            raise StoreError(
                f"{path}: exists and is not an ecnlab store (no {MARKER_FILE}); "
                "give a new or empty directory"
            )

    # ------------------------------------------------------------ paths

    @property
    def points_dir(self) -> Path:
        return self.path / "points"

    @property
    def failed_dir(self) -> Path:
        return self.path / "failed"

    @property
    def tmp_dir(self) -> Path:
        return self.path / ".tmp"

    def point_dir(self, key: str) -> Path:
        return self.points_dir / f"key={key}"

    # ------------------------------------------------------------ reading

    def keys(self) -> set[str]:
        """Keys of the finished points."""
        if not self.points_dir.is_dir():
            return set()
        return {
            p.name[4:]
            for p in self.points_dir.iterdir()
            if p.name.startswith("key=") and (p / POINT_FILE).is_file()
        }

    def failed_keys(self) -> set[str]:
        if not self.failed_dir.is_dir():
            return set()
        return {p.stem for p in self.failed_dir.glob("*.json")}

    def has(self, key: str) -> bool:
        return (self.point_dir(key) / POINT_FILE).is_file()

    def records(self) -> list[PointRecord]:
        """Every point, finished or failed, ordered by key."""
        out = []
        for key in sorted(self.keys()):
            out.append(self._read_record(self.point_dir(key) / POINT_FILE))
        finished = self.keys()
        for key in sorted(self.failed_keys() - finished):
            out.append(self._read_record(self.failed_dir / f"{key}.json"))
        return sorted(out, key=lambda r: r.key)

    @staticmethod
    def _read_record(path: Path) -> PointRecord:
        return PointRecord.from_json(json.loads(path.read_text(encoding="utf-8")))

    def record(self, key: str) -> PointRecord | None:
        path = self.point_dir(key) / POINT_FILE
        return self._read_record(path) if path.is_file() else None

    def table(self, key: str, name: str) -> pa.Table:
        """One table of a finished point."""
        path = self.point_dir(key) / f"{name}.parquet"
        if not path.is_file():
            raise KeyError(f"point {key} has no table {name!r}")
        return pq.read_table(path)

    def summary(self, key: str) -> dict[str, Any]:
        result: dict[str, Any] = json.loads(
            (self.point_dir(key) / "summary.json").read_text(encoding="utf-8")
        )
        return result

    def index(self) -> pa.Table:
        """The index table, rebuilt first when it misses points."""
        path = self.path / INDEX_FILE
        records = self.records()
        if path.is_file():
            table = pq.read_table(path)
            if sorted(table.column("key").to_pylist()) == [r.key for r in records]:
                statuses = dict(
                    zip(table.column("key").to_pylist(), table.column("status").to_pylist())
                )
                if all(statuses.get(r.key) == r.status for r in records):
                    return table
        return self.write_index(records)

    # ------------------------------------------------------------ writing

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the store's writer lock (released on exit, or when the
        process dies); :class:`StoreError` if another process holds it."""
        handle = open(self.path / ".lock", "a+")  # noqa: SIM115 - held open while locked
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "another process"
            handle.close()
            raise StoreError(f"{self.path}: in use by another sweep ({holder})") from None
        handle.seek(0)
        handle.truncate()
        handle.write(f"pid {os.getpid()}")
        handle.flush()
        self._lock_handle = handle
        try:
            shutil.rmtree(self.tmp_dir, ignore_errors=True)  # a killed writer's leftovers
            yield
        finally:
            self._lock_handle = None
            handle.close()

    def commit(
        self, record: PointRecord, files: Mapping[str, bytes], replace: bool = False
    ) -> None:
        """Write a finished point: its files in a temporary folder, synced,
        then renamed into ``points/`` in one step. ``replace``: a point
        already there (a run by another build) gives way to this one,
        swapped in one step where the system can (:func:`_swap`)."""
        self.tmp_dir.mkdir(parents=True, exist_ok=True)
        self.points_dir.mkdir(parents=True, exist_ok=True)
        tmp = self.tmp_dir / f"{record.key}-{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        for name, data in files.items():
            parts = name.split("/")
            if (
                len(parts) > 2
                or any(not p or p.startswith(".") for p in parts)
                or name == POINT_FILE
            ):
                raise ValueError(f"point {record.key}: bad file name {name!r}")
            if len(parts) == 2:  # the run's pcap/ folder
                (tmp / parts[0]).mkdir(exist_ok=True)
            write_synced(tmp / name, data)
        write_synced(tmp / POINT_FILE, _json_bytes(record.to_json()))
        sync_dir(tmp)
        final = self.point_dir(record.key)
        if final.exists() and replace:
            _swap(tmp, final)  # tmp now holds the old run
            sync_dir(self.points_dir)
            shutil.rmtree(tmp)
        elif final.exists():  # the same point finished twice (two stores merged); keep one
            shutil.rmtree(tmp)
        else:
            os.rename(tmp, final)
            sync_dir(self.points_dir)
        with contextlib.suppress(FileNotFoundError):
            (self.failed_dir / f"{record.key}.json").unlink()

    def commit_failure(self, record: PointRecord) -> None:
        """Record a point that failed (a later sweep tries it again)."""
        self.failed_dir.mkdir(parents=True, exist_ok=True)
        with atomic_write(self.failed_dir / f"{record.key}.json", "wb") as handle:
            handle.write(_json_bytes(record.to_json()))

    def write_index(self, records: list[PointRecord] | None = None) -> pa.Table:
        """Rebuild ``points.parquet`` from the point folders; returns it."""
        if records is None:
            records = self.records()
        table = _index_table(records)
        with atomic_write(self.path / INDEX_FILE, "wb") as handle:
            pq.write_table(table, handle, **PARQUET_OPTIONS)
        return table


def _index_table(records: list[PointRecord]) -> pa.Table:
    rows = [r.row() for r in records]
    names: list[str] = list(BASE_COLUMNS)
    for row in rows:
        for name in row:
            if name not in names:
                names.append(name)
    columns = []
    for name in names:
        values = [row.get(name) for row in rows]
        columns.append(_column(values))
    return pa.Table.from_arrays(columns, names=names)


def _column(values: list[Any]) -> pa.Array:
    """A column of mixed Python values: its natural type when there is one,
    else strings (a grid key whose values differ in type)."""
    try:
        return pa.array(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return pa.array(
            [None if v is None else json.dumps(v) if not isinstance(v, str) else v for v in values]
        )


def _json_bytes(data: Any) -> bytes:
    return (json.dumps(data, indent=2, sort_keys=True, allow_nan=False) + "\n").encode("utf-8")


def _swap(new: Path, old: Path) -> None:
    """Put folder ``new`` at ``old``'s path, and the old folder at ``new``'s.

    Linux swaps the two names in one step (``renameat2`` with
    ``RENAME_EXCHANGE``), so no instant shows the point missing. Elsewhere
    (or on a file system without it) two renames: a writer killed between
    them leaves the old run under ``.tmp/`` (removed by the next writer) and
    the point missing, so the next sweep runs it again; no run by the
    current build is lost either way."""
    if _exchange(new, old):
        return
    aside = new.with_name(new.name + "-old")
    shutil.rmtree(aside, ignore_errors=True)
    os.rename(old, aside)
    os.rename(new, old)
    os.rename(aside, new)


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths atomically with Linux's renameat2; False where that is
    not available (other systems, old C libraries, file systems without
    RENAME_EXCHANGE)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p]
    renameat2.argtypes += [ctypes.c_uint]
    done = renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange)
    return bool(done == 0)
