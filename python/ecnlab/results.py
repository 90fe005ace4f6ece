"""Results of one run: the engine's columnar tables as pyarrow, and their storage.

A run directory holds one ``<table>.parquet`` per table, ``config.json`` (the
resolved config, when known) and ``summary.json``. Every file is written
atomically, and ``summary.json`` is written last, so its presence means the
directory is complete.
"""

from __future__ import annotations

import contextlib
import functools
import json
import math
import os
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

__all__ = [
    "ENGINE_DTYPES",
    "Result",
    "atomic_write",
    "column_to_arrow",
    "find_port",
    "table_from_raw",
    "tables_from_raw",
]

ENGINE_DTYPES: dict[str, np.dtype[Any]] = {
    "u8": np.dtype("<u1"),
    "u32": np.dtype("<u4"),
    "u64": np.dtype("<u8"),
    "i64": np.dtype("<i8"),
    "f64": np.dtype("<f8"),
}
"""Numeric column type codes used by the engine, as little-endian numpy dtypes."""

SUMMARY_FILE = "summary.json"
CONFIG_FILE = "config.json"
PARQUET_OPTIONS: dict[str, Any] = {"compression": "zstd", "write_statistics": True}


# --------------------------------------------------------------------------- conversion


def column_to_arrow(column: Any, name: str = "?") -> pa.Array:
    """Convert one raw engine column to a pyarrow array.

    A numeric column is ``(dtype, data)`` with ``dtype`` a key of
    :data:`ENGINE_DTYPES` and ``data`` little-endian contiguous bytes; a
    string column is a list of ``str``.
    """
    if (
        isinstance(column, tuple)
        and len(column) == 2
        and isinstance(column[0], str)
        and isinstance(column[1], (bytes, bytearray, memoryview))
    ):
        code, data = column
        dtype = ENGINE_DTYPES.get(code)
        if dtype is None:
            known = ", ".join(ENGINE_DTYPES)
            raise ValueError(f"column {name!r}: unknown dtype {code!r}; expected one of {known}")
        if len(data) % dtype.itemsize:
            raise ValueError(
                f"column {name!r}: {len(data)} bytes is not a whole number of {code} values"
            )
        values = np.frombuffer(data, dtype=dtype)
        return pa.array(values.astype(values.dtype.newbyteorder("="), copy=False))
    if isinstance(column, (list, tuple)):
        if not all(isinstance(item, str) for item in column):
            raise ValueError(f"column {name!r}: a list column must hold only strings")
        return pa.array(column, type=pa.string())
    raise ValueError(
        f"column {name!r}: expected (dtype, bytes) or a list of strings, "
        f"got {type(column).__name__}"
    )


def table_from_raw(columns: Mapping[str, Any], name: str = "?") -> pa.Table:
    """Build a pyarrow table from ``{column_name: raw_column}``, keeping column order."""
    arrays = [column_to_arrow(col, f"{name}.{col_name}") for col_name, col in columns.items()]
    lengths = {len(array) for array in arrays}
    if len(lengths) > 1:
        sizes = ", ".join(f"{c}={len(a)}" for c, a in zip(columns, arrays))
        raise ValueError(f"table {name!r}: columns differ in length ({sizes})")
    return pa.Table.from_arrays(arrays, names=list(columns))


def tables_from_raw(tables: Mapping[str, Mapping[str, Any]]) -> dict[str, pa.Table]:
    """Convert the engine's ``{"table": {"column": raw}}`` mapping to pyarrow tables."""
    return {name: table_from_raw(columns, name) for name, columns in tables.items()}


def find_port(ports: pa.Table, node: str, peer: str) -> int:
    """Return the id of the port on ``node`` whose link leads to ``peer``.

    Looks in a ``ports`` table. Raises ``LookupError`` when there is no such
    port or more than one.
    """
    nodes = ports.column("node").to_pylist()
    peers = ports.column("peer").to_pylist()
    ids = ports.column("port").to_pylist()
    found = sorted({p for p, n, q in zip(ids, nodes, peers) if n == node and q == peer})
    if not found:
        raise LookupError(f"no port on {node!r} leads to {peer!r}")
    if len(found) > 1:
        raise LookupError(f"several ports on {node!r} lead to {peer!r}: {found}")
    return int(found[0])


# --------------------------------------------------------------------------- atomic files


@contextlib.contextmanager
def atomic_write(path: str | Path, mode: str = "wb") -> Iterator[IO[Any]]:
    """Open a temporary file beside ``path``; on success move it onto ``path``.

    The file is flushed and fsynced before ``os.replace``, which is atomic on
    POSIX and Windows. On any exception (``KeyboardInterrupt`` included) the
    temporary file is removed and ``path`` is left as it was.
    """
    if mode not in ("wb", "w"):
        raise ValueError("atomic_write mode must be 'wb' or 'w'")
    target = Path(path)
    fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        # mkstemp makes the file private (0600); give it the usual permissions instead
        os.chmod(tmp_name, 0o666 & ~_umask())
        if mode == "w":
            handle: IO[Any] = os.fdopen(fd, "w", encoding="utf-8", newline="\n")
        else:
            handle = os.fdopen(fd, "wb")
        with handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp_name)
        raise


@functools.cache
def _umask() -> int:
    mask = os.umask(0o022)  # reading the umask means setting it; put it straight back
    os.umask(mask)
    return mask


def _write_parquet(table: pa.Table, path: Path) -> None:
    with atomic_write(path, "wb") as handle:
        pq.write_table(table, handle, **PARQUET_OPTIONS)


def _json_text(data: Any) -> str:
    return json.dumps(_strict_json(data), indent=2, sort_keys=True, allow_nan=False) + "\n"


def _strict_json(value: Any) -> Any:
    """Replace NaN and infinities (which JSON cannot hold) by ``None``."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {str(k): _strict_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_strict_json(v) for v in value]
    if isinstance(value, np.generic):
        return _strict_json(value.item())
    return value


# --------------------------------------------------------------------------- Result


@dataclass
class Result:
    """The outcome of one run.

    ``summary`` holds the engine's scalar results (events, goodput by service,
    marks, ...); ``tables`` its columnar outputs (``flows``, ``goodput``,
    ``queues``, ``rtt``, ``ports``, ``incast``); ``out`` the directory it was
    written to, if any; ``config`` the resolved config it ran, when known.
    """

    summary: dict[str, Any]
    tables: dict[str, pa.Table] = field(default_factory=dict)
    out: Path | None = None
    config: dict[str, Any] | None = None

    @classmethod
    def from_raw(cls, raw: Mapping[str, Any], config: dict[str, Any] | None = None) -> Result:
        """Build a result from the dict returned by ``ecnlab._engine.run``."""
        return cls(
            summary=dict(raw.get("summary", {})),
            tables=tables_from_raw(raw.get("tables", {})),
            config=config,
        )

    @classmethod
    def read(cls, directory: str | Path) -> Result:
        """Load a result previously saved with :meth:`write`."""
        root = Path(directory)
        summary_path = root / SUMMARY_FILE
        if not summary_path.is_file():
            raise FileNotFoundError(f"{summary_path}: no such file (incomplete or missing run)")
        summary = json.loads(summary_path.read_text(encoding="utf-8"))
        config_path = root / CONFIG_FILE
        config = (
            json.loads(config_path.read_text(encoding="utf-8")) if config_path.is_file() else None
        )
        tables = {path.stem: pq.read_table(path) for path in sorted(root.glob("*.parquet"))}
        return cls(summary=summary, tables=tables, out=root, config=config)

    def write(self, out_dir: str | Path) -> Path:
        """Write every table, ``config.json`` and ``summary.json`` to ``out_dir``.

        Creates the directory if needed and sets :attr:`out`. Identical data
        gives byte-identical files. Returns the directory.
        """
        root = Path(out_dir)
        root.mkdir(parents=True, exist_ok=True)
        for name, table in self.tables.items():
            _write_parquet(table, root / f"{name}.parquet")
        if self.config is not None:
            with atomic_write(root / CONFIG_FILE, "w") as handle:
                handle.write(_json_text(self.config))
        with atomic_write(root / SUMMARY_FILE, "w") as handle:
            handle.write(_json_text(self.summary))
        self.out = root
        return root

    # ----------------------------------------------------------------- helpers

    def __getitem__(self, name: str) -> pa.Table:
        return self.table(name)

    def table(self, name: str) -> pa.Table:
        """Return a table by name, with a helpful error when it is absent."""
        try:
            return self.tables[name]
        except KeyError:
            known = ", ".join(sorted(self.tables)) or "none"
            raise KeyError(f"no table {name!r} in this result (tables: {known})") from None

    def column(self, table: str, column: str) -> np.ndarray:
        """Return one column as a numpy array (strings give an object array)."""
        values = self.table(table).column(column)
        if pa.types.is_string(values.type) or pa.types.is_large_string(values.type):
            return np.array(values.to_pylist(), dtype=object)
        return values.to_numpy()

    @property
    def goodput_by_service(self) -> dict[int, float]:
        """Mean goodput (Gbps) per service over ``[warmup, duration]``."""
        raw = self.summary.get("goodput_gbps_by_service") or {}
        return {int(k): float(v) for k, v in sorted(raw.items(), key=lambda kv: int(kv[0]))}

    def port(self, node: str, peer: str) -> int:
        """Return the id of the port on ``node`` facing ``peer`` (see :func:`find_port`)."""
        return find_port(self.table("ports"), node, peer)

    def to_pandas(self, name: str) -> Any:
        """Return a table as a pandas DataFrame (needs pandas installed)."""
        return self.table(name).to_pandas()

    def __repr__(self) -> str:
        shapes = ", ".join(f"{n}[{t.num_rows}]" for n, t in self.tables.items())
        where = f", out={str(self.out)!r}" if self.out is not None else ""
        return f"Result(tables: {shapes or 'none'}{where})"
