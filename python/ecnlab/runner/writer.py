"""Writing a run's outputs while the engine produces them.

The engine hands every table over in batches of rows (:meth:`RunWriter.rows`)
and every packet capture in chunks of bytes (:meth:`RunWriter.capture`) as
the run goes. With an output directory, each table is appended to its
Parquet file one row group (:data:`ROW_GROUP_ROWS` rows) at a time and each
capture to its pcap file, all under temporary names beside their final
ones, so a run holds at most one row group per table however long it is.

:meth:`RunWriter.close` closes the files and moves them into place; the
caller then writes ``summary.json`` last, which marks the directory
complete (an interrupted run's summary says ``"complete": false``).
:meth:`RunWriter.discard` removes every temporary file instead, so a run
that fails leaves nothing behind. Without a directory the tables are kept
in memory.

Row groups hold :data:`ROW_GROUP_ROWS` rows, pyarrow's default, and each
is written from contiguous columns (the Parquet writer decides when a column
falls back from dictionary encoding chunk by chunk), so a file written batch
by batch is byte for byte the file ``pyarrow.parquet.write_table`` writes
from the whole table, as ecnlab did before it streamed.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from .._atomic import publish, temporary_beside
from .columns import column_rows, table_from_raw
from .result import PARQUET_OPTIONS, PCAP_DIR, SUMMARY_FILE, pcap_file_name

__all__ = ["ROW_GROUP_ROWS", "TABLE_ORDER", "RunWriter"]

ROW_GROUP_ROWS = 1024 * 1024
"""Rows per Parquet row group: pyarrow's default for ``write_table``."""

TABLE_ORDER = ("flows", "goodput", "queues", "rtt", "ports", "incast")
"""The engine's tables, in the order results list them."""

_SYSTEM = pa.system_memory_pool()


class _ParquetTable:
    """One table's Parquet file, written a row group at a time.

    Rows gather in one preallocated buffer per column (an arrow buffer for
    numbers, a list for strings), reused for every row group; a full group
    goes to the writer without a copy. A table's memory is thus one row
    group, whatever the length of the run.
    """

    def __init__(self, final: Path, first: Mapping[str, Any], name: str) -> None:
        self.final = final
        self.name = name
        self.schema = table_from_raw(first, name).schema
        self.tmp = temporary_beside(final)
        self.writer = pq.ParquetWriter(self.tmp, self.schema, **PARQUET_OPTIONS)
        self.buffers: dict[str, Any] = {}
        for field in self.schema:
            if pa.types.is_string(field.type):
                self.buffers[field.name] = []
            else:
                width = field.type.bit_width // 8
                # From the system allocator: its pages are touched only as
                # rows arrive, and returned when the table is closed.
                buffer = pa.allocate_buffer(ROW_GROUP_ROWS * width, memory_pool=_SYSTEM)
                self.buffers[field.name] = (buffer, memoryview(buffer).cast("B"), width)
        self.rows = 0
        self.groups = 0

    def append(self, columns: Mapping[str, Any]) -> None:
        total = column_rows(next(iter(columns.values()))) if columns else 0
        done = 0
        while done < total:
            take = min(ROW_GROUP_ROWS - self.rows, total - done)
            for name, column in columns.items():
                buffer = self.buffers[name]
                if isinstance(buffer, list):
                    buffer.extend(column[done : done + take])
                else:
                    _, view, width = buffer
                    data = memoryview(column[1])
                    view[self.rows * width : (self.rows + take) * width] = data[
                        done * width : (done + take) * width
                    ]
            self.rows += take
            done += take
            if self.rows == ROW_GROUP_ROWS:
                self._write()

    def _write(self) -> None:
        arrays = []
        for field in self.schema:
            buffer = self.buffers[field.name]
            if isinstance(buffer, list):
                arrays.append(pa.array(buffer, type=pa.string()))
                buffer.clear()
            else:
                data, _, width = buffer
                arrays.append(
                    pa.Array.from_buffers(
                        field.type, self.rows, [None, data.slice(0, self.rows * width)]
                    )
                )
        self.writer.write_table(pa.Table.from_arrays(arrays, schema=self.schema))
        # The encoders' memory (tens of MiB for a row group of samples) goes
        # back to the system now rather than stay cached in arrow's pool.
        pa.default_memory_pool().release_unused()
        self.rows = 0
        self.groups += 1

    def close(self) -> None:
        if self.rows or not self.groups:
            self._write()
        self.buffers.clear()
        self.writer.close()
        publish(self.tmp, self.final)

    def discard(self) -> None:
        with contextlib.suppress(Exception):
            self.writer.close()
        self.buffers.clear()
        with contextlib.suppress(OSError):
            self.tmp.unlink()


class _Capture:
    """One port's pcap file, appended as the engine hands bytes over."""

    def __init__(self, final: Path) -> None:
        self.final = final
        self.tmp = temporary_beside(final)
        self.handle = open(self.tmp, "wb")  # noqa: SIM115 - closed in close/discard

    def append(self, data: bytes) -> None:
        self.handle.write(data)

    def close(self) -> None:
        self.handle.close()
        publish(self.tmp, self.final)

    def discard(self) -> None:
        with contextlib.suppress(OSError):
            self.handle.close()
        with contextlib.suppress(OSError):
            self.tmp.unlink()


class RunWriter:
    """The engine's sink for one run: files under ``out``, or memory.

    With ``out``, nothing is touched until the first batch arrives (so a
    config error leaves the directory as it was); then the directory is
    created if needed and a previous run's ``summary.json`` there is
    removed first, so the directory never looks complete while it holds a
    mixture of two runs.
    """

    def __init__(self, out: str | Path | None = None) -> None:
        self.out = Path(out) if out is not None else None
        self._files: dict[str, _ParquetTable] = {}
        self._captures: dict[str, _Capture] = {}
        self._memory: dict[str, list[pa.Table]] = {}
        self.pcaps: dict[str, bytearray] = {}
        self._started = False
        self._created_dir = False
        self.closed = False

    # ----------------------------------------------------------- engine side

    def rows(self, name: str, columns: Mapping[str, Any]) -> None:
        """More rows of table ``name`` (raw engine columns)."""
        if self.out is None:
            self._memory.setdefault(name, []).append(table_from_raw(columns, name))
            return
        table = self._files.get(name)
        if table is None:
            self._start()
            table = self._files[name] = _ParquetTable(self.out / f"{name}.parquet", columns, name)
        table.append(columns)

    def capture(self, port: str, data: bytes) -> None:
        """More bytes of the pcap file of switch port ``port``."""
        if self.out is None:
            self.pcaps.setdefault(port, bytearray()).extend(data)
            return
        capture = self._captures.get(port)
        if capture is None:
            self._start()
            (self.out / PCAP_DIR).mkdir(exist_ok=True)
            capture = self._captures[port] = _Capture(self.out / PCAP_DIR / pcap_file_name(port))
        capture.append(data)

    def _start(self) -> None:
        if self._started:
            return
        assert self.out is not None
        self._started = True
        if not self.out.is_dir():
            self.out.mkdir(parents=True)
            self._created_dir = True
        with contextlib.suppress(FileNotFoundError):
            (self.out / SUMMARY_FILE).unlink()
        for old in (self.out / PCAP_DIR).glob("*.pcap"):
            with contextlib.suppress(OSError):
                old.unlink()

    # ----------------------------------------------------------- caller side

    def close(self) -> dict[str, pa.Table] | None:
        """Close every file and move it into place; return the in-memory
        tables when there is no output directory."""
        self.closed = True
        for table in self._files.values():
            table.close()
        for capture in self._captures.values():
            capture.close()
        if self.out is not None:
            return None
        tables = {
            name: pa.concat_tables(self._memory[name]).combine_chunks()
            for name in sorted(self._memory, key=_table_rank)
        }
        self._memory.clear()
        return tables

    def discard(self) -> None:
        """Remove every temporary file (a run that failed leaves nothing)."""
        self.closed = True
        for table in self._files.values():
            table.discard()
        for capture in self._captures.values():
            capture.discard()
        self._memory.clear()
        if self._created_dir and self.out is not None:
            with contextlib.suppress(OSError):
                (self.out / PCAP_DIR).rmdir()
            with contextlib.suppress(OSError):
                self.out.rmdir()

    @property
    def table_names(self) -> list[str]:
        return sorted(self._files, key=_table_rank)


def _table_rank(name: str) -> tuple[int, str]:
    return (TABLE_ORDER.index(name) if name in TABLE_ORDER else len(TABLE_ORDER), name)
