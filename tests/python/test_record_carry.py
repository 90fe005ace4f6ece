"""Carrying a record's finished runs to a fresh machine (reproduce/carry.py):
an interrupted record leaves its finished rows in record/carry/<id>.jsonl;
a later record on an empty store takes them (this build's as they are,
another build's only after a sample ran again with identical summaries)
and draws the same numbers; a carried row that a rerun contradicts is
refused and its points run again.

The figure is mqecn-fig2 in its quick form (6 points of 3,000 flows, a few
seconds): every panel reads summary columns only, like the long sweeps that
need carrying (ML-ECN's, MQ-ECN Figs. 9-13, CEDM Fig. 11)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ecnlab.engine_build import build_identity
from ecnlab.reproduce import carry, reproduce
from ecnlab.sweep.store import PointRecord, Store

FID = "mqecn-fig2"


def _run(out: Path, root: Path, **kw: Any) -> dict[str, Any]:
    return reproduce(FID, out, quick=True, record=root, record_quick=True, progress=False, **kw)


def _ours(doc: dict[str, Any]) -> list[Any]:
    return [
        (name, pt["x"], pt["ours"], pt.get("raw"), pt["n"])
        for panel in doc["panels"]
        for name, points in panel["series"].items()
        for pt in points
    ]


def _index(root: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = json.loads((root / FID / "index.json").read_text())
    return rows


@pytest.fixture(scope="module")
def first(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    root = tmp_path_factory.mktemp("record")
    doc = _run(tmp_path_factory.mktemp("out"), root)
    return root, doc


def test_a_record_leaves_no_carry_file(first: tuple[Path, dict[str, Any]]) -> None:
    root, doc = first
    assert doc["sweep"]["ran"] == 6 and "carried" not in doc
    assert not carry.carry_path(root, FID).exists() and not (root / carry.CARRY_DIR).exists()


def test_this_builds_rows_are_taken_as_they_are(
    first: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    root, doc = first
    before = _index(root)
    again = _run(tmp_path / "out", root)
    # Nothing runs: the six rows come from the record's index.json.
    assert again["sweep"]["ran"] == 0 and again["sweep"]["already_in_store"] == 6
    assert again["carried"]["imported"] == 6 and again["carried"]["verified"] == []
    assert _ours(again) == _ours(doc)
    st = Store(tmp_path / "out" / "store", create=False)
    some = st.point_dir(before[0]["key"])
    assert (some / "carried.json").is_file() and not (some / "flows.parquet").exists()
    # Recorded again from carried rows, the record's rows come back unchanged.
    assert _index(root) == before


def _copy_record(root: Path, dest: Path, edit: Any) -> list[dict[str, Any]]:
    rows = _index(root)
    for r in rows:
        edit(r)
    (dest / FID).mkdir(parents=True)
    (dest / FID / "index.json").write_text(json.dumps(rows))
    return rows


def test_another_builds_rows_are_taken_after_a_sample_agrees(
    first: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    root, doc = first
    other = "model 0, build 00000000deadbeef"
    rows = _copy_record(root, tmp_path / "rec", lambda r: r.update(build=other))
    seen: list[str] = []
    again = _run(tmp_path / "out", tmp_path / "rec", notify=seen.append)
    sample = carry.sample_keys([r["key"] for r in rows])
    assert len(sample) == carry.VERIFY_PER_BUILD
    checks = again["carried"]["verified"]
    assert sorted(c["key"] for c in checks) == sorted(sample)
    assert all(c["identical"] and c["build"] == other for c in checks)
    # The sample ran on this build (before the sweep); the rest was carried.
    assert again["carried"]["imported"] == 6 - len(sample) and again["sweep"]["ran"] == 0
    assert again["carried"]["builds"] == {other: 4, build_identity(): 2}
    assert _ours(again) == _ours(doc)
    made = {r["key"]: r["build"] for r in _index(tmp_path / "rec")}
    assert {made[k] for k in sample} == {build_identity()}
    assert any("running 2 of them again" in s for s in seen)
    # Again into the same store: this build's two runs of the sample are the
    # evidence now, so nothing runs.
    seen.clear()
    third = _run(tmp_path / "out", tmp_path / "rec", notify=seen.append)
    assert third["sweep"]["ran"] == 0 and not any("running" in s for s in seen)
    assert third["carried"]["verified"] == checks and _ours(third) == _ours(doc)


def test_a_carried_row_that_a_rerun_contradicts_is_refused(
    first: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    root, doc = first
    other = "model 0, build 0000000badc0ffee"
    keys = [r["key"] for r in _index(root)]
    victim = carry.sample_keys(keys)[0]

    def edit(r: dict[str, Any]) -> None:
        r["build"] = other
        if r["key"] == victim:
            r["ce_marks"] += 1  # what a build that moved an output would carry

    _copy_record(root, tmp_path / "rec", edit)
    seen: list[str] = []
    again = _run(tmp_path / "out", tmp_path / "rec", notify=seen.append)
    assert again["carried"]["refused"] == {other: 6} and again["carried"]["imported"] == 0
    bad = [c for c in again["carried"]["verified"] if not c["identical"]]
    assert [c["key"] for c in bad] == [victim] and bad[0]["differs"][0].startswith("ce_marks: ")
    assert any(victim in s and "ce_marks" in s and "run again" in s for s in seen)
    # Every point is this build's run: the two of the sample and the four others.
    assert again["sweep"]["ran"] == 4 and "carried" in again
    assert {r["build"] for r in _index(tmp_path / "rec")} == {build_identity()}
    assert _ours(again) == _ours(doc)


def test_an_interrupted_record_carries_what_finished(
    first: tuple[Path, dict[str, Any]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, doc = first
    rec = tmp_path / "rec"
    added: list[str] = []
    real_add = carry.CarryWriter.add

    def add_then_stop(self: carry.CarryWriter, r: PointRecord) -> None:
        real_add(self, r)
        added.append(r.key)
        if len(added) == 3:
            raise KeyboardInterrupt  # Ctrl-C after three finished points

    monkeypatch.setattr(carry.CarryWriter, "add", add_then_stop)
    with pytest.raises(KeyboardInterrupt):
        _run(tmp_path / "out1", rec, workers=1)
    monkeypatch.undo()
    path = carry.carry_path(rec, FID)
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    assert sorted(r["key"] for r in lines) == sorted(added)
    assert all(r["build"] == build_identity() and r["status"] == "ok" for r in lines)
    # A fresh machine: another --out, the repository's carry file only.
    again = _run(tmp_path / "out2", rec)
    assert again["carried"]["imported"] == 3 and again["sweep"]["ran"] == 3
    assert _ours(again) == _ours(doc)
    assert not path.exists(), "the record holds the rows now"


def test_a_table_metric_on_a_carried_point_names_it(
    first: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    from ecnlab.reproduce.metrics import PointView

    root, _ = first
    _run(tmp_path / "out", root)
    st = Store(tmp_path / "out" / "store", create=False)
    row = _index(root)[0]
    view = PointView(st, row["key"], row)
    with pytest.raises(KeyError, match="carried from the repository's record"):
        view.table("flows")
    assert view.packet_bytes() == 1500  # config.json came with it


def test_rows_differences_leave_out_the_wall_clock() -> None:
    a = {"key": "k", "build": "x", "run.seed": 1, "events": 10, "wall_seconds": 1.0}
    b = dict(a, build="y", wall_seconds=2.0, events_per_second=5.0, **{"run.seed": 2})
    assert carry.differences(a, b) == []
    assert carry.differences(a, dict(b, events=11)) == [("events", 10, 11)]
    assert carry.differences({"x": float("nan")}, {"x": None}) == []
    assert carry.differences({"x": None}, {}) == [("x", None, carry.MISSING)]


def test_a_failed_rerun_does_not_vouch_for_a_build(
    first: tuple[Path, dict[str, Any]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The store already holds the other build's runs (an earlier import);
    # the check's reruns fail. Reading the store back would find that
    # build's own numbers and agree with them: the failure must refuse it.
    from ecnlab.reproduce.figure import load_figure
    from ecnlab.sweep import SweepReport

    root, _ = first
    other = "model 0, build 00000000f00dfeed"
    rows = _copy_record(root, tmp_path / "rec", lambda r: r.update(build=other))
    spec = load_figure(FID).sweep.quick()
    carried = carry.carried_rows(tmp_path / "rec")
    st = Store(tmp_path / "st")
    from ecnlab.runner import load_engine
    from ecnlab.sweep import resolve_points

    points = spec.points()
    resolve_points(spec, points, load_engine())
    with st.locked():
        assert carry.import_rows(st, {p.key: p for p in points}, carried) == 6

    def failing(spec: Any, store: Any, only: Any = (), **_: Any) -> SweepReport:
        failed = [PointRecord(k, "", {}, "failed", "out of memory", 0, "", "", {}) for k in only]
        return SweepReport(Path(store.path), total=len(failed), failed=failed)

    monkeypatch.setattr(carry, "run_sweep", failing)
    seen: list[str] = []
    info, trusted, writer = carry.carry_in(
        FID, spec, tmp_path / "st", tmp_path / "rec", notify=seen.append
    )
    assert trusted == frozenset() and info["refused"] == {other: 6}
    assert any("a rerun failed" in s for s in seen)
    # Its rows are kept for the next machine, not dropped from the repository.
    writer.flush()
    kept = [json.loads(x) for x in carry.carry_path(tmp_path / "rec", FID).read_text().splitlines()]
    assert sorted(r["key"] for r in kept) == sorted(r["key"] for r in rows)


def test_a_figure_that_reads_tables_runs_its_carried_points_again(tmp_path: Path) -> None:
    # mqecn-fig3 reads per-flow goodput tables, which a carried point lacks:
    # its record never takes carried rows, and carried points another
    # figure left in a shared store run again instead of failing.
    from ecnlab.reproduce.figure import load_figure
    from ecnlab.reproduce.metrics import reads_tables
    from ecnlab.runner import load_engine
    from ecnlab.sweep import resolve_points

    fid = "mqecn-fig3"
    assert reads_tables(load_figure(fid).panels) and not reads_tables(load_figure(FID).panels)
    root = tmp_path / "rec"
    kw: dict[str, Any] = {"quick": True, "record": root, "record_quick": True, "progress": False}
    doc = reproduce(fid, tmp_path / "a", **kw)
    spec = load_figure(fid).sweep.quick()
    points = spec.points()
    resolve_points(spec, points, load_engine())
    st = Store(tmp_path / "b" / "store")
    with st.locked():
        n = carry.import_rows(st, {p.key: p for p in points}, carry.carried_rows(root))
    assert n == doc["sweep"]["points"] > 0
    again = reproduce(fid, tmp_path / "b", **kw)
    assert again["sweep"]["ran"] == n and "carried" not in again
    assert not any((st.point_dir(p.key) / "carried.json").exists() for p in points)


def test_a_broken_carry_file_is_named(tmp_path: Path) -> None:
    from ecnlab.errors import ConfigError

    path = carry.carry_path(tmp_path, "x-fig1")
    path.parent.mkdir(parents=True)
    path.write_text('{"key": "a", "status": "ok"}\n<<<<<<< HEAD\n')
    with pytest.raises(ConfigError, match=r"x-fig1.jsonl, line 2: not a JSON row"):
        carry.carried_rows(tmp_path)


Y, B = "model 0, build 000000000000000y", "model 0, build 000000000000000b"


def _chain(root: Path, rec: Path) -> tuple[Path, list[dict[str, Any]]]:
    """A carry file under ``rec`` of the record's rows, 3 made by build Y and 3
    by build B, and the checks of Y by B on 2 points (not written)."""
    rows = _index(root)
    keys = sorted(r["key"] for r in rows)
    made = {k: (Y if i < 3 else B) for i, k in enumerate(keys)}
    path = carry.carry_path(rec, FID)
    path.parent.mkdir(parents=True)
    path.write_text("".join(json.dumps(dict(r, build=made[r["key"]])) + "\n" for r in rows))
    chain = [{"key": k, "build": Y, "by": B, "identical": True, "differs": []} for k in keys[:2]]
    return path, chain


def test_a_chain_of_builds_needs_one_check(
    first: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    # Three sessions: build Y made 3 rows, build B made 3 more and checked
    # Y on 2 points (the carry's checks file). This build checks B only
    # (2 reruns); Y comes in through B, as equal outputs are transitive.
    root, doc = first
    y, b = Y, B
    rec = tmp_path / "rec"
    path, chain = _chain(root, rec)
    carry.checks_path(path).write_text(json.dumps(chain))
    seen: list[str] = []
    again = _run(tmp_path / "out", rec, notify=seen.append)
    assert [s for s in seen if "running" in s] == [
        f"{FID}: 3 carried point(s) were made by another build ({b}); running 2 of them "
        f"again on this one ({build_identity()}) before taking the rest"
    ]
    assert again["carried"]["refused"] == {} and again["sweep"]["ran"] == 0
    assert again["carried"]["imported"] == 4 and _ours(again) == _ours(doc)
    # The record keeps the whole chain: Y by B, and B by this build.
    pairs = {(c["build"], c["by"]) for c in again["carried"]["verified"] if c["identical"]}
    assert pairs == {(y, b), (b, build_identity())}
    assert not path.exists() and not carry.checks_path(path).exists()
    # A disagreement anywhere on the chain breaks it.
    links = {(y, b): 2, (b, "me"): 2}
    checks = [
        {"key": f"k{i}{n}", "build": a, "by": c, "identical": True}
        for (a, c), m in links.items()
        for n, i in enumerate(range(m))
    ]
    assert carry.trusted_builds("me", checks, {}) == {"me", y, b}
    checks.append({"key": "k9", "build": y, "by": b, "identical": False})
    assert carry.trusted_builds("me", checks, {}) == {"me", b}
    # No set holds two builds that differed, whatever the path: X agrees with B
    # (trusted) but differed from this build.
    x = "X"
    via = checks[2:] + [{"key": f"x{i}", "build": x, "by": b, "identical": True} for i in (1, 2)]
    assert carry.trusted_builds("me", via, {}) == {"me", b, x}
    via.append({"key": "x3", "build": x, "by": "me", "identical": False})
    assert carry.trusted_builds("me", via, {}) == {"me", b}
    # The threshold is the joining build's: X (2 needed) does not come in on
    # one agreement with B, however few rows B has.
    one = checks[2:] + [{"key": "x1", "build": b, "by": x, "identical": True}]
    assert carry.trusted_builds("me", one, {b: 1, x: 2}) == {"me", b}
    assert carry.trusted_builds("me", one, {b: 1, x: 1}) == {"me", b, x}
    # One agreement between B and this build is not enough (2 needed), unless
    # B made only one row.
    assert carry.trusted_builds("me", checks[:3], {}) == {"me"}
    assert carry.trusted_builds("me", checks[:3], {b: 1}) == {"me", y, b}


def test_the_stores_copy_of_the_checks_outlives_the_carry_file(
    first: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    # The chain of the test above, but the carry file was restored from git
    # without its checks file: the link Y-B survives in the copy the carry
    # writer kept beside the store, so this build again checks B only.
    root, doc = first
    y, b = Y, B
    rec = tmp_path / "rec"
    _, chain = _chain(root, rec)
    store = tmp_path / "out" / "store"
    Store(store)
    other_figure = {"key": "zz", "build": "p", "by": "q", "identical": True, "differs": []}
    carry.store_checks_path(store).write_text(json.dumps(chain + [other_figure]))
    assert len(carry.earlier_checks(rec, store)) == 3 and carry.earlier_checks(rec) == []
    seen: list[str] = []
    again = _run(tmp_path / "out", rec, notify=seen.append)
    assert [s for s in seen if "running" in s] == [
        f"{FID}: 3 carried point(s) were made by another build ({b}); running 2 of them "
        f"again on this one ({build_identity()}) before taking the rest"
    ]
    assert again["sweep"]["ran"] == 0 and _ours(again) == _ours(doc)
    # The writer added this run's checks (B by this build) to the copy and
    # kept the other figure's.
    kept = json.loads(carry.store_checks_path(store).read_text())
    pairs = {(c["build"], c["by"]) for c in kept}
    assert pairs == {(y, b), (b, build_identity()), ("p", "q")}


def test_status_counts_carried_rows_and_time_left(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from ecnlab.cli import main
    from ecnlab.reproduce.figure import load_figure
    from ecnlab.reproduce.status import record_status
    from ecnlab.runner import load_engine
    from ecnlab.sweep import resolve_points

    spec = load_figure(FID).sweep  # full scale: 9 loads x 2 cases x 3 seeds
    points = spec.points()
    resolve_points(spec, points, load_engine())
    (before,) = record_status(tmp_path, [FID])
    assert (before["points"], before["have"], before["left"]) == (54, 0, 54)
    assert before["core_hours_left"] is None and before["record"] == ""
    path = carry.carry_path(tmp_path, FID)
    path.parent.mkdir()
    rows = [{"key": p.key, "status": "ok", "build": "b", "wall_seconds": 36.0} for p in points[:3]]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    (now,) = record_status(tmp_path, [FID])
    assert (now["have"], now["left"]) == (3, 51)
    assert now["core_hours_left"] == pytest.approx(51 * 36 / 3600)
    assert main(["reproduce", "--status", FID, "--record", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert f"{FID:<18}     54  -                3    51             0.5" in out
    assert "51 distinct points left" in out


def test_status_times_a_figure_by_the_figures_sharing_its_points() -> None:
    from ecnlab.reproduce.status import format_status

    # ML-ECN Fig. 6 has no row of its own; its points are Fig. 4's, whose
    # rows ran 720 s each: 2 points left are 0.4 core-hours, not "?".
    rows = [
        {"id": "big", "points": 4, "record": "", "have": 2, "left": 2,
         "core_hours_left": 0.4, "left_keys": ["a", "b"], "seconds_a_point": 720.0},
        {"id": "slice", "points": 2, "record": "", "have": 0, "left": 2,
         "core_hours_left": None, "left_keys": ["a", "b"], "seconds_a_point": None},
        {"id": "alone", "points": 1, "record": "", "have": 0, "left": 1,
         "core_hours_left": None, "left_keys": ["c"], "seconds_a_point": None},
    ]  # fmt: skip
    out = format_status(rows).splitlines()
    assert out[2].split()[-1] == "0.4"  # slice, timed by big's rows
    assert out[3].split()[-1] == "?"  # nothing times c
    assert "3 distinct points left" in out[-1] and "1 more with no row" in out[-1]
