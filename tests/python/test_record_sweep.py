"""Every committed record (record/<id>/) was drawn from the sweep its figure
makes now: the point keys in its index.json (a hash of each point's resolved
config at the record's model version) are exactly the keys the figure's
sweep gives today. A figure whose sweep changed after its record was made
fails here, naming the points (issue 29). The check itself is shown to fail
on a figure folder edited after the fact."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("ecnlab._engine")

from ecnlab.reproduce.drift import current_keys, sweep_drift  # noqa: E402
from ecnlab.reproduce.figure import experiments_root, load_figure  # noqa: E402
from ecnlab.reproduce.record import read_record, record_ids, remaking  # noqa: E402
from ecnlab.runner import load_engine  # noqa: E402

RECORD = Path(__file__).resolve().parents[2] / "record"
ENGINE = load_engine()
MODEL = int(ENGINE.model_version())
REMAKING = remaking(RECORD, MODEL)


@pytest.mark.parametrize("fid", record_ids(RECORD))
def test_record_was_drawn_from_the_figures_current_sweep(fid: str) -> None:
    doc = read_record(RECORD, fid)
    drift = sweep_drift(load_figure(fid), doc["index"], doc["record"]["model_version"], ENGINE)
    if fid in REMAKING:
        # A record the model bump left stale (record/remaking.json) is remade at
        # the new model, whose keys differ from the ones it was stored under (a
        # model 5 record keyed some points at model 4, as model 5's `model_of`
        # named them unmoved); until it is remade, check the sweep's size only.
        now = current_keys(load_figure(fid), MODEL, ENGINE)
        assert len(now) == len({r["key"] for r in doc["index"]}), (
            f"record/{fid}: the sweep has {len(now)} points, the record "
            f"{len(doc['index'])}; {drift.text()}"
        )
        return
    assert not drift, (
        f"record/{fid} was drawn from another sweep than experiments/{fid} makes now: "
        f"{drift.text()}; rerun `ecnlab reproduce {fid} --record`"
    )


def _rows_of_now(fid: str) -> list[dict[str, Any]]:
    """Index rows as a record of the figure's sweep today would hold them."""
    now = current_keys(load_figure(fid), MODEL, ENGINE)
    return [{"key": k, "case": p.case, "status": "ok", **p.params} for k, p in now.items()]


def _edited_copy(tmp_path: Path, fid: str, file: str, old: str, new: str) -> Path:
    root = tmp_path / "experiments"
    shutil.copytree(experiments_root() / fid, root / fid)
    path = root / fid / file
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, f"{file} no longer has {old!r}: update this test"
    path.write_text(text.replace(old, new), encoding="utf-8")
    return root


def test_a_record_of_the_sweep_as_it_is_has_no_drift() -> None:
    assert not sweep_drift(load_figure("mqecn-fig3"), _rows_of_now("mqecn-fig3"), MODEL, ENGINE)


def test_a_changed_base_experiment_names_every_point_as_changed(tmp_path: Path) -> None:
    rows = _rows_of_now("mqecn-fig3")
    root = _edited_copy(
        tmp_path, "mqecn-fig3", "base.toml", 'threshold = "16pkt"', 'threshold = "20pkt"'
    )
    drift = sweep_drift(load_figure("mqecn-fig3", root), rows, MODEL, ENGINE)
    # 2 cases x 3 seeds, every one with the same swept values and a new config.
    assert (len(drift.changed), drift.gone, drift.new) == (6, [], [])
    assert any(
        c.startswith("1 vs 8: flows.1.count=8, run.seed=3 (recorded ") for c in drift.changed
    )
    assert "6 changed config" in drift.text()


def test_changed_seeds_and_case_values_name_the_points_gone_and_new(tmp_path: Path) -> None:
    rows = _rows_of_now("mqecn-fig3")
    root = _edited_copy(
        tmp_path, "mqecn-fig3", "figure.toml", "seeds = [1, 2, 3]", "seeds = [1, 2, 4]"
    )
    path = root / "mqecn-fig3" / "figure.toml"
    path.write_text(path.read_text().replace('"flows.1.count" = 8', '"flows.1.count" = 6'))
    drift = sweep_drift(load_figure("mqecn-fig3", root), rows, MODEL, ENGINE)
    gone = [g.split(" (")[0] for g in drift.gone]
    new = [n.split(" (")[0] for n in drift.new]
    # Seed 3 left both cases; "1 vs 8" now runs 6 flows (its old 8-flow points
    # are gone, its 6-flow points new); seed 4 is new in both.
    assert gone == [
        "1 vs 4: flows.1.count=4, run.seed=3",
        "1 vs 8: flows.1.count=8, run.seed=1",
        "1 vs 8: flows.1.count=8, run.seed=2",
        "1 vs 8: flows.1.count=8, run.seed=3",
    ]
    assert new == [
        "1 vs 4: flows.1.count=4, run.seed=4",
        "1 vs 8: flows.1.count=6, run.seed=1",
        "1 vs 8: flows.1.count=6, run.seed=2",
        "1 vs 8: flows.1.count=6, run.seed=4",
    ]
    assert drift.changed == []
