"""A result store outlives refactors: points are keyed by the resolved
config and the engine's model version (not a digest of its sources), so a
store made by an earlier build is reused as long as the model version is
the same, and wholly set aside once it moves (tests/golden/store-reuse/:
a store made once and committed, with the version it was made at)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

pytest.importorskip("ecnlab._engine")

from ecnlab.runner import load_engine  # noqa: E402
from ecnlab.store import Store  # noqa: E402
from ecnlab.sweep import load_sweep, resolve_points  # noqa: E402

HERE = Path(__file__).resolve().parents[1] / "golden" / "store-reuse"


def test_a_store_from_an_earlier_build_is_reused_at_the_same_model_version(tmp_path: Path) -> None:
    made_at = int((HERE / "model_version.txt").read_text())
    engine = load_engine()
    store = tmp_path / "store"
    shutil.copytree(HERE / "store", store)
    spec = load_sweep(HERE / "sweep.toml")
    points = spec.points()
    resolve_points(spec, points, engine)
    stored = Store(store, create=False).keys()
    assert len(stored) == len(points) == 4
    found = [p.key in stored for p in points]
    if int(engine.model_version()) == made_at:
        # Nothing would run again: every key the sweep computes now is the
        # one the earlier build stored its point under.
        assert all(found), "a key moved without a new model version (did the resolved form change?)"
    else:
        # Outputs have moved since: no stored point may pass for a current one.
        assert not any(found), "a point made at another model version would be reused"
