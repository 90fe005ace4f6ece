"""The result of one run (:class:`Result`) and its run directory.

A run directory holds one ``<table>.parquet`` per table, ``config.json`` (the
resolved config, when known), ``pcap/<node>-<peer>.pcap`` per captured port
and ``summary.json``. Every file is written atomically, and ``summary.json``
is written last, so its presence means every other file is whole. A run
stopped early (Ctrl-C) has ``"complete": false`` in its summary: its files
are readable and end where the run stopped.
"""

from __future__ import annotations

import contextlib
import json
import shutil
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from .._atomic import atomic_write
from .._json import finite
from .columns import tables_from_raw

__all__ = [
    "CONFIG_FILE",
    "PARQUET_OPTIONS",
    "PCAP_DIR",
    "SUMMARY_FILE",
    "PcapFiles",
    "Result",
    "TableFiles",
    "find_port",
    "pcap_file_name",
]

SUMMARY_FILE = "summary.json"
CONFIG_FILE = "config.json"
PCAP_DIR = "pcap"
PARQUET_OPTIONS: dict[str, Any] = {"compression": "zstd", "write_statistics": True}


def pcap_file_name(port: str) -> str:
    """The capture file of switch port ``"node:peer"``: ``node-peer.pcap``."""
    return port.replace(":", "-") + ".pcap"


def _port_of_pcap(path: Path) -> str:
    return path.stem.replace("-", ":", 1)


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


# --------------------------------------------------------------------------- writing


def _write_parquet(table: pa.Table, path: Path) -> None:
    with atomic_write(path, "wb") as handle:
        pq.write_table(table, handle, **PARQUET_OPTIONS)


def _json_text(data: Any) -> str:
    return json.dumps(finite(data), indent=2, sort_keys=True, allow_nan=False) + "\n"


# --------------------------------------------------------------------------- lazy files


class TableFiles(Mapping[str, pa.Table]):
    """A run directory's tables, each read from its Parquet file when first
    used (a long run's time series need not fit in memory to be written)."""

    def __init__(self, root: Path, names: list[str]) -> None:
        self.root = root
        self._names = list(names)
        self._loaded: dict[str, pa.Table] = {}

    def path(self, name: str) -> Path:
        return self.root / f"{name}.parquet"

    def __getitem__(self, name: str) -> pa.Table:
        if name not in self._names:
            raise KeyError(name)
        if name not in self._loaded:
            self._loaded[name] = pq.read_table(self.path(name), memory_map=True)
        return self._loaded[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)


class PcapFiles(Mapping[str, bytes]):
    """A run directory's captures by port name, read when used."""

    def __init__(self, root: Path) -> None:
        self.root = root
        folder = root / PCAP_DIR
        paths = sorted(folder.glob("*.pcap")) if folder.is_dir() else []
        self.paths = {_port_of_pcap(p): p for p in paths}

    def __getitem__(self, port: str) -> bytes:
        return self.paths[port].read_bytes()

    def __iter__(self) -> Iterator[str]:
        return iter(self.paths)

    def __len__(self) -> int:
        return len(self.paths)


def _rows(tables: Mapping[str, pa.Table], name: str) -> int:
    """Rows of a table, from the file's footer when it is not loaded."""
    if isinstance(tables, TableFiles):
        return int(pq.ParquetFile(tables.path(name)).metadata.num_rows)
    return int(tables[name].num_rows)


def _copy_file(source: Path, target: Path) -> None:
    with atomic_write(target, "wb") as handle, open(source, "rb") as src:
        shutil.copyfileobj(src, handle)


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
    tables: Mapping[str, pa.Table] = field(default_factory=dict)
    out: Path | None = None
    config: dict[str, Any] | None = None
    pcaps: Mapping[str, bytes] = field(default_factory=dict)
    """pcap file bytes per captured switch port (``run.pcap``)."""

    @property
    def complete(self) -> bool:
        """False for a run stopped before its end (its tables end there)."""
        return self.summary.get("complete", True) is not False

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
        names = [path.stem for path in sorted(root.glob("*.parquet"))]
        return cls(
            summary=summary,
            tables=TableFiles(root, names),
            out=root,
            config=config,
            pcaps=PcapFiles(root),
        )

    def write(self, out_dir: str | Path) -> Path:
        """Write every table, ``config.json`` and ``summary.json`` to ``out_dir``.

        Creates the directory if needed and sets :attr:`out`. Identical data
        gives byte-identical files. Returns the directory.
        """
        root = Path(out_dir)
        root.mkdir(parents=True, exist_ok=True)
        same = self.out is not None and root.resolve() == self.out.resolve()
        with contextlib.suppress(FileNotFoundError):
            (root / SUMMARY_FILE).unlink()
        if isinstance(self.tables, TableFiles):
            if not same:
                for name in self.tables:
                    _copy_file(self.tables.path(name), root / f"{name}.parquet")
        else:
            for name, table in self.tables.items():
                _write_parquet(table, root / f"{name}.parquet")
        if self.pcaps and not (same and isinstance(self.pcaps, PcapFiles)):
            (root / PCAP_DIR).mkdir(exist_ok=True)
            for port in self.pcaps:
                target = root / PCAP_DIR / pcap_file_name(port)
                if isinstance(self.pcaps, PcapFiles):
                    _copy_file(self.pcaps.paths[port], target)
                else:
                    with atomic_write(target, "wb") as handle:
                        handle.write(bytes(self.pcaps[port]))
        if self.config is not None:
            with atomic_write(root / CONFIG_FILE, "w") as handle:
                handle.write(_json_text(self.config))
        with atomic_write(root / SUMMARY_FILE, "w") as handle:
            handle.write(_json_text(self.summary))
        self.out = root
        return root

    def load(self) -> Result:
        """Read every table (and capture) still on disk into memory, so the
        result outlives its directory; returns itself."""
        self.tables = {name: self.tables[name] for name in self.tables}
        self.pcaps = {port: self.pcaps[port] for port in self.pcaps}
        return self

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
        shapes = ", ".join(f"{n}[{_rows(self.tables, n)}]" for n in self.tables)
        where = f", out={str(self.out)!r}" if self.out is not None else ""
        return f"Result(tables: {shapes or 'none'}{where})"
