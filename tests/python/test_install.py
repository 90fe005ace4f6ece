"""ecnlab works from an install, not only from its checkout (issue 29).

`make wheel` builds a wheel that carries the figure folders (experiments/,
as ``ecnlab/figures``) and the testbed's ``ecnlab-switch`` (as
``ecnlab/_bin``). Installed into a fresh virtualenv and run from an empty
folder outside the checkout, ``ecnlab reproduce`` finds every figure and
reproduces one, and the testbed finds its switch inside the virtualenv.

The wheel is $ECNLAB_WHEEL when set (`make test-install` builds one and
sets it); otherwise this test builds one with `make wheel` into a temporary
folder: about 30 s on 2 cores after `make build` (cargo rebuilds only the
small ecnlab-py crate), a few seconds more for the rest.

The virtualenv gets the wheel with ``--no-deps``, and a ``.pth`` line that
puts the site-packages of the interpreter running these tests (which holds
ecnlab's dependencies) after its own: no package registry is needed and
nothing is downloaded. The venv's own site-packages comes first, so the
installed ecnlab, not the checkout's, is the one imported (checked below).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from ecnlab.testbed.netns import unavailable

ROOT = Path(__file__).resolve().parents[2]
EXPERIMENTS = ROOT / "experiments"
TIMEOUT = 600

# Settings that would point the installed ecnlab back at the checkout.
SCRUBBED = ("PYTHONPATH", "PYTHONHOME", "ECNLAB_EXPERIMENTS", "ECNLAB_SWITCH", "VIRTUAL_ENV")

# Run by the installed interpreter: where the package, its figures and its
# switch are, and whether the engine loads.
WHERE_PROBE = """
import json, os, ecnlab
from ecnlab.reproduce import experiments_root
from ecnlab.runner import engine_version
from ecnlab.testbed.run import switch_binary
switch = switch_binary()
print(json.dumps({
    "package": ecnlab.__file__,
    "figures": str(experiments_root()),
    "switch": str(switch),
    "runnable": os.access(switch, os.X_OK),
    "engine": engine_version(),
}))
"""

# Every figure's full sweep resolved by the engine (nothing runs), and the
# flow-size CSV tuning-ecn-fig10/spaced.toml names beside itself.
RESOLVE_PROBE = """
import json
from ecnlab.config import load_config
from ecnlab.reproduce import experiments_root, figure_ids, load_figure
from ecnlab.runner import load_engine
from ecnlab.sweep import resolve_points
engine = load_engine()
errors, n = [], 0
for fid in figure_ids():
    fig = load_figure(fid)
    points = fig.sweep.points()
    resolve_points(fig.sweep, points, engine)
    n += len(points)
    errors += [f"{fid}: {p.error}" for p in points if p.error]
spaced = load_config(experiments_root() / "tuning-ecn-fig10" / "spaced.toml")
print(json.dumps({"points": n, "errors": errors[:5], "csv": spaced["workload"]["distribution"]}))
"""


def _source_figures() -> set[str]:
    return {p.parent.name for p in EXPERIMENTS.glob("*/figure.toml")}


def _maturin() -> str | None:
    beside = Path(sys.executable).parent / "maturin"
    return str(beside) if beside.is_file() else shutil.which("maturin")


def _run(cmd: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT, check=False
    )
    if done.returncode != 0:
        pytest.fail(
            f"{' '.join(cmd)} exited {done.returncode}\n"
            f"stdout:\n{done.stdout[-4000:]}\nstderr:\n{done.stderr[-4000:]}"
        )
    return done.stdout


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    given = os.environ.get("ECNLAB_WHEEL")
    if given:
        return Path(given)
    maturin = _maturin()
    missing = [name for name in ("make", "cargo") if shutil.which(name) is None]
    if maturin is None:
        missing.append("maturin")
    if missing:
        pytest.skip(f"cannot build a wheel: no {', '.join(missing)} (or set ECNLAB_WHEEL)")
    out = tmp_path_factory.mktemp("wheels")
    # -o: the interpreter running the tests already has the dependencies;
    # `make wheel` must not set up .venv for them.
    _run(
        ["make", "--no-print-directory", "wheel", f"WHEELS={out}", f"MATURIN={maturin}"]
        + ["-o", ".venv/.deps-stamp"],
        cwd=ROOT,
    )
    (built,) = out.glob("ecnlab-*.whl")
    return built


@pytest.fixture(scope="module")
def venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("install") / "venv"
    _run([sys.executable, "-m", "venv", str(where)], cwd=ROOT)
    python = str(where / "bin" / "python")
    _run(
        [
            python,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-index",
            "--disable-pip-version-check",
            str(wheel),
        ],
        cwd=ROOT,
    )
    own = _run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], ROOT)
    deps = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (Path(own.strip()) / "ecnlab-test-deps.pth").write_text("\n".join(sorted(deps)) + "\n")
    return where


@pytest.fixture(scope="module")
def elsewhere(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An empty folder outside the checkout, the commands' working folder."""
    return tmp_path_factory.mktemp("elsewhere")


@pytest.fixture(scope="module")
def env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in SCRUBBED}


def test_wheel_carries_every_figure_file_and_the_switch(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        switch = zf.getinfo("ecnlab/_bin/ecnlab-switch")
        assert (switch.external_attr >> 16) & 0o111, "ecnlab-switch is not executable"
        expected = {
            "ecnlab/figures/" + p.relative_to(EXPERIMENTS).as_posix()
            for p in EXPERIMENTS.rglob("*")
            if p.is_file() and "__pycache__" not in p.parts
        }
        assert expected <= names, sorted(expected - names)[:5]
        readme = zf.read("ecnlab/figures/README.md")
    assert readme == (EXPERIMENTS / "README.md").read_bytes()


def test_installed_package_finds_its_figures_and_switch(
    venv: Path, elsewhere: Path, env: dict[str, str]
) -> None:
    found = json.loads(_run([str(venv / "bin" / "python"), "-c", WHERE_PROBE], elsewhere, env))
    for what in ("package", "figures", "switch"):
        assert Path(found[what]).resolve().is_relative_to(venv.resolve()), (what, found[what])
    assert found["runnable"], found["switch"]
    assert found["engine"], "the installed engine does not load"


def test_reproduce_list_from_an_install(venv: Path, elsewhere: Path, env: dict[str, str]) -> None:
    out = _run([str(venv / "bin" / "ecnlab"), "reproduce", "--list"], elsewhere, env)
    listed = {line.split()[0] for line in out.splitlines() if line.strip()}
    assert listed == _source_figures()
    assert len(listed) >= 40


def test_every_figure_resolves_from_an_install(
    venv: Path, elsewhere: Path, env: dict[str, str]
) -> None:
    """Every point of every figure's full sweep resolves (bases in other
    folders, such as ../mlecn-fig4/base.toml, included), and a flow-size CSV
    named beside a figure's config is found inside the install."""
    found = json.loads(_run([str(venv / "bin" / "python"), "-c", RESOLVE_PROBE], elsewhere, env))
    assert found["points"] > 0 and not found["errors"], found
    csv = Path(found["csv"])
    assert csv.is_file() and csv.resolve().is_relative_to(venv.resolve()), csv


def test_quick_reproduction_from_an_install(
    venv: Path, elsewhere: Path, env: dict[str, str]
) -> None:
    out = elsewhere / "out"
    cmd = [str(venv / "bin" / "ecnlab"), "reproduce", "mqecn-fig3", "--quick", "--out", str(out)]
    _run(cmd, elsewhere, env)
    assert (out / "mqecn-fig3.png").stat().st_size > 10_000
    doc = json.loads((out / "mqecn-fig3.json").read_text(encoding="utf-8"))
    assert doc["id"] == "mqecn-fig3" and doc["quick"] is True
    assert doc["sweep"]["failed"] == 0, doc["sweep"]


def test_testbed_runs_the_installed_switch(
    venv: Path, elsewhere: Path, env: dict[str, str]
) -> None:
    """One short testbed run of the installed Fig. 3 config (where the
    machine allows one): the switch process is the wheel's."""
    why = unavailable()
    if why is not None:
        pytest.skip(why)
    python = str(venv / "bin" / "python")
    code = "from ecnlab.reproduce import experiments_root; print(experiments_root())"
    base = Path(_run([python, "-c", code], elsewhere, env).strip()) / "mqecn-fig3" / "base.toml"
    out = elsewhere / "testbed"
    sets = [
        "transport.cc=ecn-star",
        "topology.link_rate=200Mbps",
        "topology.link_delay=100us",
        "run.duration=1s",
        "run.warmup=0.2s",
    ]
    cmd = [str(venv / "bin" / "ecnlab"), "testbed", str(base), "--out", str(out), "--quiet"]
    _run(cmd + [arg for s in sets for arg in ("--set", s)], elsewhere, env)
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["ended_by"] == "duration" and not summary["agent_errors"], summary
    assert summary["switch"]["conserved"] and summary["switch"]["frames_out"] > 0
