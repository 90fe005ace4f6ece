"""The engine build identity (ecnlab.engine_build): it covers every module a
worker runs a point with, moves when any byte of that code moves, and is
the same for the same bytes wherever they are installed."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("ecnlab._engine")

from ecnlab.engine_build import RUN_MODULES, build_identity  # noqa: E402
from ecnlab.runner import load_engine  # noqa: E402

PACKAGE = Path(__file__).resolve().parents[2] / "python" / "ecnlab"

# A run of two short flows, through run_task as a sweep's worker runs it.
_RUN_A_POINT = """
import json, sys
from ecnlab.runner.worker import Task, run_task
cfg = {
    "run": {"seed": 1, "sample_ports": "none"},
    "topology": {"kind": "star", "hosts": 3, "link_rate": "10Gbps", "link_delay": "5us"},
    "flows": [{"src": 0, "dst": 2, "size": "20KB"}, {"src": 1, "dst": 2, "size": "20KB"}],
}
out = run_task(Task("k", json.dumps(cfg), ""))
assert out.ok, out.error
print(json.dumps(sorted(m for m in sys.modules if m == "ecnlab" or m.startswith("ecnlab."))))
"""


def _python(code: str, package_parent: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code],
        env={"PYTHONPATH": str(package_parent), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


def test_run_modules_are_every_module_a_worker_runs_a_point_with() -> None:
    import json

    loaded = set(json.loads(_python(_RUN_A_POINT, PACKAGE.parent)))
    # The engine is hashed as a library; engine_build is what hashes.
    missing = loaded - set(RUN_MODULES) - {"ecnlab._engine", "ecnlab.engine_build"}
    assert not missing, f"add to RUN_MODULES (their code shapes a stored point): {missing}"


def test_identity_names_the_model_version() -> None:
    model = int(load_engine().model_version())
    assert build_identity().startswith(f"model {model}, build ")
    assert len(build_identity().rsplit(" ", 1)[1]) == 16


def _copy_package(dest: Path) -> Path:
    """A copy of the package (the engine library included) under dest."""
    target = dest / "ecnlab"
    shutil.copytree(
        PACKAGE, target, symlinks=True, ignore=shutil.ignore_patterns("__pycache__", "figures")
    )
    return target


_IDENTITY = "from ecnlab.engine_build import build_identity; print(build_identity())"


def test_same_bytes_elsewhere_are_the_same_build(tmp_path: Path) -> None:
    # An installed copy of this very checkout (a wheel of it) is this build.
    _copy_package(tmp_path)
    assert _python(_IDENTITY, tmp_path) == _python(_IDENTITY, PACKAGE.parent)


def test_identity_moves_with_the_engine_library_and_the_run_code(tmp_path: Path) -> None:
    ours = _python(_IDENTITY, PACKAGE.parent)
    engine_copy = _copy_package(tmp_path / "a")
    # A rebuilt engine at the same model version (bytes appended after the
    # ELF image load as before): another build.
    library = next(engine_copy.glob("_engine*.so"))
    library.write_bytes(library.read_bytes() + b"\0")
    rebuilt = _python(_IDENTITY, tmp_path / "a")
    # A change to the Python summary statistics (written into summary.json).
    code_copy = _copy_package(tmp_path / "b")
    fct = code_copy / "fct.py"
    fct.write_text(fct.read_text() + "\n# changed\n")
    edited = _python(_IDENTITY, tmp_path / "b")
    assert len({ours, rebuilt, edited}) == 3
    # Model version and build hash: only the hash moved.
    assert ours.split(", ")[0] == rebuilt.split(", ")[0] == edited.split(", ")[0]
