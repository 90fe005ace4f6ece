"""The reproduction record: each figure at full scale, kept in the
repository in compact form (``ecnlab reproduce ID --record``).

``record/<id>/`` holds

- ``<id>.png``: the figure as drawn;
- ``<id>.json``: ours (mean over seeds, 95% interval, seeds), the paper's
  numbers and the verdicts, without the per-flow curves (the PNG has them),
  stamped with the engine's model version, its build identity
  (:mod:`ecnlab.engine_build`: every run it draws on was made by that
  build, or carried from another one after a sample of them ran again
  identically, :mod:`.carry`) and the date;
- ``index.json``: the store index rows the figure was drawn from (one per
  point: its key, case, swept values and summary columns; no per-flow
  table).

A record made by an older model version than the engine's is stale:
:func:`stale_records` names the figures to rerun, and
``tests/python/test_record.py`` fails on them, unless ``record/remaking.json``
lists them (:func:`remaking`): a bump that moved figures whose full-scale
runs take longer than one session lands with its stale figures listed, and
each leaves the list when it is remade (the test fails on a listed figure
that is current, and on a stale one not listed).
"""

from __future__ import annotations

import datetime as _dt
import json
import shutil
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from .._atomic import atomic_write
from .._json import finite
from ..errors import ConfigError

__all__ = [
    "RECORD_FORMAT",
    "default_record_root",
    "read_record",
    "record_ids",
    "stale_records",
    "write_record",
]

RECORD_FORMAT = 1
"""The layout version of a record folder."""

_DROP = {"store", "notes_path", "png", "wall_seconds"}
"""Fields of a reproduction's JSON that name this machine or this run's
timing, not the result."""


def default_record_root() -> Path:
    """``record/`` beside the source tree's ``experiments/``; a figure
    folder elsewhere (an installed wheel) has no repository to record into."""
    from .figure import experiments_root

    root = experiments_root()
    if root.name != "experiments":
        raise ConfigError(
            f"--record: the figures come from {root}, not a source checkout's experiments/; "
            "give the record folder: --record DIR"
        )
    return root.parent / "record"


def _compact(doc: Mapping[str, Any]) -> dict[str, Any]:
    """The reproduction's JSON without machine paths and without the
    distributions and time series (thousands of numbers a curve; drawn in
    the PNG): a curve keeps how many runs it pooled."""
    out = {k: v for k, v in doc.items() if k not in _DROP}
    panels = []
    for panel in doc.get("panels", []):
        p = dict(panel)
        if "curves" in p:
            p["curves"] = {name: {"runs": c.get("runs", 0)} for name, c in p["curves"].items()}
        panels.append(p)
    out["panels"] = panels
    return out


def write_record(
    doc: Mapping[str, Any],
    png: Path,
    rows: Iterable[Mapping[str, Any]],
    root: str | Path,
    *,
    model_version: int,
    engine: str,
    build: str = "",
    date: _dt.date | None = None,
    quick_ok: bool = False,
) -> Path:
    """Write ``root/<id>/`` from a reproduction's JSON document, its PNG and
    its store index rows; returns the folder. A quick run is refused (the
    record is full scale) unless ``quick_ok`` (tests, a look at the format):
    its stamp then says quick and :func:`stale_records` rejects it."""
    if doc.get("quick") and not quick_ok:
        raise ConfigError(
            "--record keeps full-scale runs only: a --quick reproduction is not recorded "
            "(drop --quick, or write it elsewhere with --out)"
        )
    failed = int(doc.get("sweep", {}).get("failed", 0))
    if failed:
        raise ConfigError(
            f"--record: {failed} point(s) of {doc['id']} failed ({doc['sweep'].get('errors')}); "
            "the record holds whole figures: rerun to retry them (the store keeps the rest)"
        )
    fid = str(doc["id"])
    folder = Path(root) / fid
    folder.mkdir(parents=True, exist_ok=True)
    stamp = {
        "format": RECORD_FORMAT,
        "model_version": int(model_version),
        "engine": engine,
        "build": build,
        "date": (date or _dt.datetime.now(_dt.timezone.utc).date()).isoformat(),
        "quick": bool(doc.get("quick")),
    }
    body = {"record": stamp, **_compact(doc), "png": f"{fid}.png", "index": "index.json"}
    index = sorted((finite(dict(r)) for r in rows), key=lambda r: str(r.get("key")))
    with atomic_write(folder / "index.json", "w") as handle:
        handle.write(json.dumps(index, indent=1, allow_nan=False) + "\n")
    with atomic_write(folder / f"{fid}.json", "w") as handle:
        handle.write(json.dumps(finite(body), indent=1, allow_nan=False) + "\n")
    if Path(png).resolve() != (folder / f"{fid}.png").resolve():
        shutil.copyfile(png, folder / f"{fid}.png")
    return folder


def record_ids(root: str | Path) -> list[str]:
    """The figures recorded under ``root`` (folders with an ``<id>.json``)."""
    base = Path(root)
    if not base.is_dir():
        return []
    return sorted(p.name for p in base.iterdir() if (p / f"{p.name}.json").is_file())


def read_record(root: str | Path, fid: str) -> dict[str, Any]:
    """A figure's record: its JSON, with ``index`` replaced by the rows."""
    folder = Path(root) / fid
    doc = json.loads((folder / f"{fid}.json").read_text(encoding="utf-8"))
    doc["index"] = json.loads((folder / "index.json").read_text(encoding="utf-8"))
    return doc


REMAKING = "remaking.json"


def remaking(root: str | Path, model_version: int) -> dict[str, str]:
    """{figure: why} of the stale records that ``remaking.json`` in ``root`` says are
    being remade at ``model_version`` (none when the file is absent or
    names another model)."""
    path = Path(root) / REMAKING
    if not path.is_file():
        return {}
    doc = json.loads(path.read_text(encoding="utf-8"))
    if int(doc["model"]) != model_version:
        return {}
    return {fid: str(doc["why"]) for fid in doc["figures"]}


def stale_records(root: str | Path, model_version: int, since: int | None = None) -> dict[str, str]:
    """{figure: why it must be rerun} for every record under ``root`` that
    is not a full-scale run on ``model_version`` or a model from ``since``
    on (the engine's ``unmoved_since``: no figure's runs moved since; a
    test holds every figure to it): an older (or newer) model, a quick run,
    a missing PNG or index."""
    since = model_version if since is None else since
    out: dict[str, str] = {}
    for fid in record_ids(root):
        folder = Path(root) / fid
        try:
            stamp = json.loads((folder / f"{fid}.json").read_text(encoding="utf-8"))["record"]
            made = int(stamp["model_version"])
        except (OSError, ValueError, KeyError, TypeError) as exc:
            out[fid] = f"unreadable stamp ({exc})"
            continue
        if not since <= made <= model_version:
            out[fid] = f"made with model {made}, the engine is model {model_version}"
        elif stamp.get("quick"):
            out[fid] = "a quick run (the record is full scale)"
        elif not (folder / f"{fid}.png").is_file() or not (folder / "index.json").is_file():
            out[fid] = "its PNG or index.json is missing"
    return out
