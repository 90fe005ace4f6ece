"""Files that a reader never sees half written.

The bytes go to a temporary file beside the target (``.<name>.<random>.tmp``),
are flushed and synced, and the temporary file then takes the target's name
in one ``os.replace``, which is atomic on POSIX and Windows: a writer killed
at any instant leaves the old file or the new one, never a mixture, and at
worst a hidden temporary file beside it.

Every writer of ecnlab's outputs goes through here: a run's files
(:mod:`ecnlab.runner.result`, and :mod:`ecnlab.runner.writer` for those
streamed while the run goes), the result store (:mod:`ecnlab.sweep.store`,
whose point folders appear whole by a rename of their own: :func:`write_synced`
and :func:`sync_dir`), ``ecnlab reproduce``'s records and reports, figures.
"""

from __future__ import annotations

import contextlib
import functools
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

__all__ = ["atomic_write", "publish", "sync_dir", "temporary_beside", "write_synced"]


@contextlib.contextmanager
def atomic_write(path: str | Path, mode: str = "wb") -> Iterator[IO[Any]]:
    """Open a temporary file beside ``path``; on success move it onto ``path``.

    ``mode`` is ``"wb"`` or ``"w"`` (UTF-8, ``\\n`` line ends). On any
    exception (``KeyboardInterrupt`` included) the temporary file is removed
    and ``path`` is left as it was.
    """
    if mode not in ("wb", "w"):
        raise ValueError("atomic_write mode must be 'wb' or 'w'")
    target = Path(path)
    fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        if mode == "w":
            handle: IO[Any] = os.fdopen(fd, "w", encoding="utf-8", newline="\n")
        else:
            handle = os.fdopen(fd, "wb")
        with handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        _move_into_place(Path(tmp_name), target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp_name)
        raise


def temporary_beside(target: Path) -> Path:
    """A new empty temporary file beside ``target``, for a writer that fills
    it over time (a Parquet file written row group by row group); finish it
    with :func:`publish`, or unlink it."""
    fd, name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    os.close(fd)
    return Path(name)


def publish(tmp: Path, target: Path) -> None:
    """Sync the closed file ``tmp`` (from :func:`temporary_beside`) and move
    it onto ``target`` in one step."""
    fd = os.open(tmp, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    _move_into_place(tmp, target)


def write_synced(path: Path, data: bytes) -> None:
    """Write ``path`` in place and sync it: for a file in a folder that is
    itself moved into place whole once every file in it is written."""
    with open(path, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())


def sync_dir(path: Path) -> None:
    """Sync a folder, so that the names just renamed into it last."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _move_into_place(tmp: Path, target: Path) -> None:
    # mkstemp makes the file private (0600); give it the usual permissions.
    os.chmod(tmp, 0o666 & ~_umask())
    os.replace(tmp, target)


@functools.cache
def _umask() -> int:
    mask = os.umask(0o022)  # reading the umask means setting it; put it straight back
    os.umask(mask)
    return mask
