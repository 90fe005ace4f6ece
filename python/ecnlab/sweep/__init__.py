"""Sweeps: one base experiment, many points, run into a resumable result store.

- :mod:`.spec`: the sweep file (:func:`load_sweep`), its points and their
  store keys (:func:`resolve_points`, :func:`point_key`);
- :mod:`.run`: running the points not yet stored (:func:`run_sweep`);
- :mod:`.pool`: where points run, local processes or a Dask cluster (each
  point itself runs in :mod:`ecnlab.runner.worker`);
- :mod:`.store`: the result store, a directory of Parquet with one folder
  per point (:class:`Store`);
- :mod:`.plot`: one metric of a store against one of its keys
  (``ecnlab plot``).
"""

from __future__ import annotations

from .run import SweepInterrupted, SweepReport, run_sweep
from .spec import KEY_LENGTH, Case, Point, SweepSpec, load_sweep, point_key, resolve_points
from .store import PointRecord, Store, StoreError

__all__ = [
    "KEY_LENGTH",
    "Case",
    "Point",
    "PointRecord",
    "Store",
    "StoreError",
    "SweepInterrupted",
    "SweepReport",
    "SweepSpec",
    "load_sweep",
    "point_key",
    "resolve_points",
    "run_sweep",
]
