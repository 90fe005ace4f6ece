"""A result store outlives refactors: points are keyed by the resolved
config and the engine's model version (not a digest of its sources), so a
store made by an earlier build is reused as long as the model version is
the same, and wholly set aside once it moves (tests/golden/store-reuse/:
a store made once and committed, with the version it was made at)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

pytest.importorskip("ecnlab._engine")

from ecnlab.runner import load_engine  # noqa: E402
from ecnlab.sweep import load_sweep, resolve_points  # noqa: E402
from ecnlab.sweep.store import Store  # noqa: E402

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


# ------------------------------------------------------------------ engine builds
#
# The model version promises that a refactor moves no output; a record must
# not rest on that promise (issue 29: a re-record after an engine change
# reused 6 runs of the older engine). Every stored point carries the build
# that made it (ecnlab.engine_build); a record's sweep (same_build) runs
# again any point another build made, a plain sweep reuses it and says so.

TINY = {
    "base": {
        "run": {"seed": 1, "sample_ports": "none"},
        "topology": {"kind": "star", "hosts": 3, "link_rate": "10Gbps", "link_delay": "5us"},
        "flows": [{"src": 0, "dst": 2, "size": "50KB"}, {"src": 1, "dst": 2, "size": "50KB"}],
    },
    "grid": {"run.seed": [1, 2]},
}
OLD_BUILD = "model 0, build 0123456789abcdef"


def _as_if_made_by(store: Path, key: str, build: str) -> None:
    """Stamp a stored point as another build's run, and mark its files so
    a test can tell whether it was replaced."""
    folder = store / "points" / f"key={key}"
    data = json.loads((folder / "point.json").read_text())
    data["build"] = build
    (folder / "point.json").write_text(json.dumps(data))
    (folder / "old-run.marker").write_text("made by the old build\n")


def test_a_record_sweep_reruns_a_point_made_by_another_build(tmp_path: Path) -> None:
    from ecnlab.engine_build import build_identity
    from ecnlab.sweep import run_sweep

    spec = load_sweep(TINY)
    store = tmp_path / "store"
    first = run_sweep(spec, store, workers=1, progress=False)
    assert first.ran == 2
    keys = sorted(Store(store).keys())
    _as_if_made_by(store, keys[0], OLD_BUILD)
    _as_if_made_by(store, keys[1], "")  # stored before builds were recorded
    notices: list[str] = []
    ran: list[str] = []
    again = run_sweep(
        spec,
        store,
        workers=1,
        progress=False,
        same_build=True,
        notify=notices.append,
        on_point=lambda r: ran.append(r.key),
    )
    # Both points ran again, under their old keys, by this build.
    assert (again.already, again.ran, again.rerun_other_build) == (0, 2, 2)
    assert sorted(ran) == keys
    st = Store(store)
    assert sorted(st.keys()) == keys
    for key in keys:
        assert st.record(key).build == build_identity()
        assert not (store / "points" / f"key={key}" / "old-run.marker").exists()
    assert not any((store / ".tmp").glob("*"))
    assert len(notices) == 1 and "2 of 2 points" in notices[0]
    assert (
        OLD_BUILD in notices[0] and "unknown" in notices[0] and "running them again" in notices[0]
    )
    # The index shows the build of each row.
    assert set(st.index().column("build").to_pylist()) == {build_identity()}
    # Now all this build's: nothing runs again, nothing is said.
    third = run_sweep(
        spec, store, workers=1, progress=False, same_build=True, notify=notices.append
    )
    assert (third.already, third.ran, len(notices)) == (2, 0, 1)


def test_a_plain_sweep_reuses_another_builds_point_and_says_so(tmp_path: Path) -> None:
    from ecnlab.sweep import run_sweep

    spec = load_sweep(TINY)
    store = tmp_path / "store"
    run_sweep(spec, store, workers=1, progress=False)
    key = sorted(Store(store).keys())[0]
    _as_if_made_by(store, key, OLD_BUILD)
    notices: list[str] = []
    again = run_sweep(spec, store, workers=1, progress=False, notify=notices.append)
    assert (again.already, again.ran, again.reused_other_build) == (2, 0, 1)
    assert (store / "points" / f"key={key}" / "old-run.marker").exists()
    assert len(notices) == 1 and notices[0].startswith("note: ")
    assert "1 of 2 points" in notices[0] and OLD_BUILD in notices[0]
    assert "1 reused from another engine build" in again.line()


def test_a_record_is_never_drawn_from_another_builds_runs(tmp_path: Path) -> None:
    from ecnlab.engine_build import build_identity
    from ecnlab.reproduce import reproduce
    from ecnlab.reproduce.record import read_record

    out = tmp_path / "out"
    plain = reproduce("mqecn-fig3", out, quick=True, workers=1, progress=False)
    store = out / "store"
    keys = sorted(Store(store).keys())
    assert len(keys) == 2  # the quick sweep: one made by another build, one by this
    _as_if_made_by(store, keys[0], OLD_BUILD)
    # A plain reproduction draws on them (and counts them) ...
    again = reproduce("mqecn-fig3", out, quick=True, workers=1, progress=False)
    assert again["sweep"]["reused_other_build"] == 1 and again["sweep"]["ran"] == 0
    # ... a record runs them again first.
    doc = reproduce(
        "mqecn-fig3",
        out,
        quick=True,
        workers=1,
        progress=False,
        record=tmp_path / "record",
        record_quick=True,
    )
    assert doc["sweep"]["rerun_other_build"] == 1 and doc["sweep"]["ran"] == 1
    assert doc["sweep"]["already_in_store"] == 1
    back = read_record(tmp_path / "record", "mqecn-fig3")
    assert back["record"]["build"] == build_identity()
    assert len(back["index"]) == plain["sweep"]["points"]
    assert {r["build"] for r in back["index"]} == {build_identity()}
    # Same engine, same runs: the rerun points give the same verdicts.
    assert back["verdicts"] == plain["verdicts"]


@pytest.mark.parametrize("atomic", [True, False])
def test_replacing_a_point_swaps_its_folder_whole(
    tmp_path: Path, atomic: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ecnlab.sweep import store as store_module
    from ecnlab.sweep.store import PointRecord

    if not atomic:  # the two-rename path of systems without renameat2
        monkeypatch.setattr(store_module, "_exchange", lambda a, b: False)
    st = Store(tmp_path / "store")

    def rec(build: str) -> PointRecord:
        return PointRecord("k1", "", {}, "ok", "", 0.0, "e", "s", {}, build)

    st.commit(rec("old"), {"summary.json": b"{}", "a.parquet": b"old"})
    st.commit(rec("new"), {"summary.json": b"{}", "a.parquet": b"new"})  # kept: no replace
    assert st.record("k1").build == "old"
    st.commit(rec("new"), {"summary.json": b"{}", "b.parquet": b"new"}, replace=True)
    folder = st.point_dir("k1")
    assert st.record("k1").build == "new"
    assert sorted(p.name for p in folder.iterdir()) == ["b.parquet", "point.json", "summary.json"]
    assert sorted(p.name for p in st.points_dir.iterdir()) == ["key=k1"]
    assert not any(st.tmp_dir.iterdir())


def test_the_reproduce_line_says_which_points_another_build_made() -> None:
    from ecnlab.cli.reproduce import _build_counts

    assert _build_counts({"rerun_other_build": 6, "reused_other_build": 0}) == (
        ", 6 rerun: another engine build had made them"
    )
    assert _build_counts({"rerun_other_build": 0, "reused_other_build": 2}) == (
        ", 2 reused from another engine build"
    )
    assert _build_counts({"rerun_other_build": 0, "reused_other_build": 0}) == ""


def test_a_record_refuses_a_run_from_a_worker_on_another_build(tmp_path: Path) -> None:
    from ecnlab.engine_build import build_identity
    from ecnlab.runner.worker import Outcome
    from ecnlab.sweep.run import _commit

    spec = load_sweep(TINY)
    point = spec.points()[0]
    point.key = "k1"
    version = str(load_engine().version())
    files = {"summary.json": b"{}"}
    st = Store(tmp_path / "store")
    foreign = Outcome("k1", True, "", 1.0, version, files, build=OLD_BUILD)
    rec = _commit(st, spec, point, foreign, version, build_identity())
    assert rec.status == "failed" and OLD_BUILD in rec.error and "record" in rec.error
    assert not st.has("k1") and st.failed_keys() == {"k1"}
    # A plain sweep takes it (same model version), naming its build.
    rec = _commit(st, spec, point, foreign, version, None)
    assert rec.status == "ok" and st.record("k1").build == OLD_BUILD
