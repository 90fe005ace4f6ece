"""Make tests/golden/store-reuse/store/ anew from sweep.toml, and record
the model version it was made at. Run it only when the model version has
moved (the test passes either way; a fresh store just makes it test reuse
again rather than invalidation)."""

from __future__ import annotations

import shutil
from pathlib import Path

from ecnlab.runner import load_engine
from ecnlab.sweep import load_sweep, run_sweep

HERE = Path(__file__).resolve().parent

if __name__ == "__main__":
    shutil.rmtree(HERE / "store", ignore_errors=True)
    report = run_sweep(load_sweep(HERE / "sweep.toml"), HERE / "store", workers=1, progress=False)
    assert report.ok and report.ran == report.total, report.line()
    (HERE / "model_version.txt").write_text(f"{int(load_engine().model_version())}\n")
    print(report.line())
