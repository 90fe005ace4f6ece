"""The reproduction record (record/<id>/): every recorded figure is a
full-scale run on the engine's model version, the staleness check itself
can fail, and a record round-trips (written from a reproduction, read back
with the same numbers, verdicts and index rows)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ecnlab.errors import ConfigError
from ecnlab.reproduce.record import read_record, record_ids, remaking, stale_records, write_record
from ecnlab.runner import load_engine

RECORD = Path(__file__).resolve().parents[2] / "record"
MODEL = int(load_engine().model_version())
# Records from this model on stay current: no figure's runs moved since
# (test_record_sweep checks each figure's points against the engine's model_of).
SINCE = int(load_engine().unmoved_since())


REMAKING = remaking(RECORD, MODEL)


@pytest.mark.parametrize("fid", record_ids(RECORD))
def test_recorded_figure_is_current(fid: str) -> None:
    why = stale_records(RECORD, MODEL, SINCE).get(fid)
    if why is not None and fid in REMAKING:
        pytest.skip(f"record/{fid}: {why}; being remade (record/remaking.json: {REMAKING[fid]})")
    assert why is None, f"record/{fid}: {why}; rerun `ecnlab reproduce {fid} --record`"


def test_no_record_is_stale() -> None:
    # Stale records only where record/remaking.json lists them, and every
    # listed one still stale: a remade figure leaves the list.
    stale = stale_records(RECORD, MODEL, SINCE)
    unlisted = {fid: why for fid, why in stale.items() if fid not in REMAKING}
    assert not unlisted, "figures to rerun with `ecnlab reproduce ID --record`: " + ", ".join(
        f"{fid} ({why})" for fid, why in sorted(unlisted.items())
    )
    remade = sorted(set(REMAKING) - set(stale))
    assert not remade, f"record/remaking.json lists current figures: {remade}; take them out"


def test_the_remaking_list_names_only_its_model(tmp_path: Path) -> None:
    (tmp_path / "remaking.json").write_text(
        json.dumps({"model": 6, "why": "issue 54", "figures": ["a-fig1"]}), encoding="utf-8"
    )
    assert remaking(tmp_path, 6) == {"a-fig1": "issue 54"}
    assert remaking(tmp_path, 7) == {}
    assert remaking(tmp_path / "none", 6) == {}


def test_a_record_from_an_unmoved_model_is_current(tmp_path: Path) -> None:
    # Made at model 4, the engine at 5 with every figure's runs unmoved
    # since 4: current. Made at 3: stale.
    _fabricate(tmp_path, "a-fig1", 4)
    _fabricate(tmp_path, "b-fig1", 3)
    stale = stale_records(tmp_path, 5, 4)
    assert set(stale) == {"b-fig1"} and "model 3" in stale["b-fig1"]
    assert set(stale_records(tmp_path, 5)) == {"a-fig1", "b-fig1"}


def _fabricate(root: Path, fid: str, model: int, quick: bool = False) -> None:
    folder = root / fid
    folder.mkdir(parents=True)
    stamp = {"format": 1, "model_version": model, "engine": "x", "date": "2026-01-01"}
    doc = {"record": {**stamp, "quick": quick}, "id": fid, "points": []}
    (folder / f"{fid}.json").write_text(json.dumps(doc))
    (folder / f"{fid}.png").write_bytes(b"png")
    (folder / "index.json").write_text("[]")


def test_staleness_check_names_old_and_quick_records(tmp_path: Path) -> None:
    _fabricate(tmp_path, "old-fig1", MODEL - 1)
    _fabricate(tmp_path, "new-fig2", MODEL)
    _fabricate(tmp_path, "quick-fig3", MODEL, quick=True)
    _fabricate(tmp_path, "broken-fig4", MODEL)
    (tmp_path / "broken-fig4" / "index.json").unlink()
    (tmp_path / "README.md").write_text("not a figure\n")
    stale = stale_records(tmp_path, MODEL)
    assert set(stale) == {"old-fig1", "quick-fig3", "broken-fig4"}
    assert f"model {MODEL - 1}" in stale["old-fig1"]
    assert record_ids(tmp_path) == ["broken-fig4", "new-fig2", "old-fig1", "quick-fig3"]
    assert stale_records(tmp_path / "none", MODEL) == {}


def test_write_record_refuses_a_quick_run(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="full-scale runs only"):
        write_record({"id": "x", "quick": True}, tmp_path / "x.png", [], tmp_path,
                     model_version=MODEL, engine="e")  # fmt: skip


def test_write_record_refuses_a_figure_with_failed_points(tmp_path: Path) -> None:
    doc = {"id": "x", "quick": False, "sweep": {"failed": 2, "errors": ["boom"]}}
    with pytest.raises(ConfigError, match="2 point"):
        write_record(doc, tmp_path / "x.png", [], tmp_path, model_version=MODEL, engine="e")
    assert not (tmp_path / "x").exists()


def test_reproduce_refuses_quick_record(tmp_path: Path) -> None:
    from ecnlab.cli import main
    from ecnlab.reproduce import reproduce

    with pytest.raises(ConfigError, match="full-scale runs only"):
        reproduce("mqecn-fig3", tmp_path / "out", quick=True, record=tmp_path / "rec")
    assert main(["reproduce", "mqecn-fig3", "--quick", "--record", str(tmp_path / "r")]) == 2
    assert not (tmp_path / "rec").exists() and not (tmp_path / "r").exists()


def test_record_round_trip(tmp_path: Path) -> None:
    from ecnlab.reproduce import reproduce

    # A quick run, allowed here only to look at the format: stamped quick.
    doc = reproduce(
        "mqecn-fig3",
        tmp_path / "out",
        quick=True,
        workers=1,
        progress=False,
        record=tmp_path / "record",
        record_quick=True,
    )
    back = read_record(tmp_path / "record", "mqecn-fig3")
    assert back["record"]["model_version"] == MODEL and back["record"]["quick"] is True
    assert back["record"]["date"] and back["record"]["engine"] == str(load_engine().version())
    assert (
        back["points"] == json.loads((tmp_path / "out" / "mqecn-fig3.json").read_text())["points"]
    )
    assert back["verdicts"] == doc["verdicts"] and back["seedless"] == doc["seedless"]
    assert back["notes"] == "experiments/mqecn-fig3/NOTES.md"
    assert "store" not in back and "notes_path" not in back  # nothing of this machine
    # One index row per point of the sweep, with its summary, no flows.
    assert len(back["index"]) == doc["sweep"]["points"]
    assert all(r["status"] == "ok" and "goodput_gbps_s0" in r for r in back["index"])
    folder = tmp_path / "record" / "mqecn-fig3"
    assert (folder / "mqecn-fig3.png").read_bytes() == (
        tmp_path / "out" / "mqecn-fig3.png"
    ).read_bytes()
    assert sorted(p.name for p in folder.iterdir()) == [
        "index.json",
        "mqecn-fig3.json",
        "mqecn-fig3.png",
    ]
    assert stale_records(tmp_path / "record", MODEL) == {
        "mqecn-fig3": "a quick run (the record is full scale)"
    }


def test_carried_rows_are_of_the_engines_model() -> None:
    # record/carry/<id>.jsonl keeps a record's finished points between
    # machines (reproduce/carry.py). A row of another model version can never
    # be taken (its key holds the model), so a stale file is dead weight that
    # the gallery would still show as progress: delete it and rerun.
    stale = []
    for path in sorted((RECORD / "carry").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip() and f"(model {MODEL})" not in json.loads(line).get("engine", ""):
                stale.append(path.name)
                break
    assert not stale, f"record/carry: rows of another model version in {', '.join(stale)}"
