"""``ecnlab reproduce --status`` from an installed package, which carries the
figures (``ecnlab/figures``) but not the source tree's record/: it says so
and gives the figures' points instead of demanding ``--record DIR``
(issue 55, item 9)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ecnlab.cli import main
from ecnlab.reproduce.figure import experiments_root
from ecnlab.reproduce.record import default_record_root
from ecnlab.reproduce.status import record_status

FID = "mqecn-fig3"


def test_status_without_the_record_says_why_and_counts_points(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The checkout's count, from its record (what --status shows there).
    (checkout,) = record_status(default_record_root(), [FID])
    # An install's layout: the figure folders under a folder not named
    # experiments/, with no record/ beside them.
    figures = tmp_path / "site-packages" / "ecnlab" / "figures"
    figures.mkdir(parents=True)
    source = experiments_root()
    shutil.copy(source / "README.md", figures / "README.md")
    shutil.copytree(source / FID, figures / FID)
    monkeypatch.setenv("ECNLAB_EXPERIMENTS", str(figures))
    assert main(["reproduce", "--status", FID]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "but not their record" in out[0] and "--status --record DIR" in out[0]
    assert out[-1].split() == [FID, str(checkout["points"])]
