"""ecnlab works from an install, not only from its checkout (issues 29, 55).

Two installs, each into a fresh virtualenv: ``pip install .`` from the
checkout, and the wheel `make wheel` builds. Each carries every feature:
the engine with the testbed's switch built in (``python -m
ecnlab.switch``), the figure folders (experiments/, as ``ecnlab/figures``)
and the tutorial's files (docs/tutorial/*.toml, as ``ecnlab/tutorial``).
Run from an empty folder outside the checkout, ``ecnlab reproduce`` finds
every figure and reproduces one, ``ecnlab tutorial`` copies the tutorial's
files, the testbed runs its switch, and the shell commands of the pages in
DOCS_RUN run as written (a new reader's first session, from the wheel).

The wheel is $ECNLAB_WHEEL when set (`make test-install` builds one and
sets it); otherwise this test builds one with `make wheel` into a temporary
folder. Each build takes about 30-60 s on 2 cores after `make build`
(cargo rebuilds only the small ecnlab-py crate and pyo3 for the new
interpreter); the docs' commands about a minute more.

The virtualenvs get ecnlab with ``--no-deps`` (and ``pip install .`` with
``--no-build-isolation``, its build backend maturin taken from the
interpreter running these tests), and a ``.pth`` line that puts the
site-packages of the interpreter running these tests (which holds ecnlab's
dependencies) after their own: no package registry is needed and nothing is
downloaded. A venv's own site-packages comes first, so the installed
ecnlab, not the checkout's, is the one imported (checked below); that the
dependencies an install needs are declared is checked against the package's
metadata instead.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from ecnlab.testbed.netns import unavailable

sys.path.insert(0, str(Path(__file__).resolve().parent))
import docs_shell  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
EXPERIMENTS = ROOT / "experiments"
TUTORIAL = ROOT / "docs" / "tutorial"
TIMEOUT = 600
INSTALLS = ("pip-install-dot", "wheel")

# Pages whose every shell block runs, as written, from an empty folder with
# the wheel installed (docs_shell.py says what a shell block is; blocks of
# `make` targets are the checkout's and left out). Not listed: pages whose
# commands are synopses (``text`` blocks, placeholders such as DIR), need
# files the page does not make (docs/guide/running.md's `ecnlab rtt
# first.toml`) or root (docs/testbed.md).
DOCS_RUN = (
    "README.md",
    "docs/index.md",
    "docs/tutorial.md",
    "docs/guide/experiment-file.md",
    "docs/guide/advisor.md",
)

# Settings that would point the installed ecnlab back at the checkout.
SCRUBBED = ("PYTHONPATH", "PYTHONHOME", "ECNLAB_EXPERIMENTS", "ECNLAB_SWITCH", "VIRTUAL_ENV")

# Run by the installed interpreter: where the package, its figures, its
# tutorial files and its switch are, and whether the engine loads.
WHERE_PROBE = """
import json, ecnlab
from ecnlab.reproduce import experiments_root
from ecnlab.runner import engine_version
from ecnlab.testbed.run import switch_command
from ecnlab.cli.tutorial import tutorial_files
print(json.dumps({
    "package": ecnlab.__file__,
    "figures": str(experiments_root()),
    "tutorial": sorted(f.name for f in tutorial_files()),
    "tutorial_at": str(tutorial_files()[0]),
    "switch": switch_command(),
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


def _run(
    cmd: list[str], cwd: Path, env: dict[str, str] | None = None, timeout: int = TIMEOUT
) -> str:
    done = subprocess.run(
        cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    if done.returncode != 0:
        pytest.fail(
            f"{' '.join(cmd)} exited {done.returncode}\n"
            f"stdout:\n{done.stdout[-4000:]}\nstderr:\n{done.stderr[-4000:]}"
        )
    return done.stdout


def _build_tools() -> str:
    maturin = _maturin()
    missing = [name for name in ("make", "cargo") if shutil.which(name) is None]
    if maturin is None:
        missing.append("maturin")
    if missing:
        pytest.skip(f"cannot build ecnlab: no {', '.join(missing)} (or set ECNLAB_WHEEL)")
    assert maturin is not None
    return maturin


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    given = os.environ.get("ECNLAB_WHEEL")
    if given:
        return Path(given)
    maturin = _build_tools()
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


_VENVS: dict[str, Path] = {}


def _venv(kind: str, request: pytest.FixtureRequest) -> Path:
    """A fresh virtualenv with ecnlab installed the ``kind`` way (made once)."""
    if kind in _VENVS:
        return _VENVS[kind]
    factory: pytest.TempPathFactory = request.getfixturevalue("tmp_path_factory")
    where = factory.mktemp(f"install-{kind}") / "venv"
    _run([sys.executable, "-m", "venv", str(where)], cwd=ROOT)
    python = str(where / "bin" / "python")
    own = _run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], ROOT)
    deps = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (Path(own.strip()) / "ecnlab-test-deps.pth").write_text("\n".join(sorted(deps)) + "\n")
    pip = [python, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index"]
    pip.append("--disable-pip-version-check")
    if kind == "wheel":
        _run([*pip, str(request.getfixturevalue("wheel"))], cwd=ROOT)
    else:
        # What a reader does in a checkout: `pip install .` (maturin, the
        # build backend, is the tests' own; the build needs its binary).
        maturin = _build_tools()
        env = dict(os.environ, PATH=f"{Path(maturin).parent}{os.pathsep}{os.environ['PATH']}")
        _run([*pip, "--no-build-isolation", "."], cwd=ROOT, env=env)
    _VENVS[kind] = where
    return where


@pytest.fixture(scope="module", params=INSTALLS)
def venv(request: pytest.FixtureRequest) -> Path:
    return _venv(request.param, request)


@pytest.fixture(scope="module")
def wheel_venv(request: pytest.FixtureRequest) -> Path:
    return _venv("wheel", request)


@pytest.fixture()
def elsewhere(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An empty folder outside the checkout, the commands' working folder."""
    return tmp_path_factory.mktemp("elsewhere")


@pytest.fixture(scope="module")
def env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in SCRUBBED}


def _on_path(venv: Path, env: dict[str, str]) -> dict[str, str]:
    """``env`` with the venv's bin first on PATH, as after ``activate``."""
    return dict(env, PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}")


def test_wheel_carries_every_figure_and_tutorial_file(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        expected = {
            "ecnlab/figures/" + p.relative_to(EXPERIMENTS).as_posix()
            for p in EXPERIMENTS.rglob("*")
            if p.is_file() and "__pycache__" not in p.parts
        }
        assert expected <= names, sorted(expected - names)[:5]
        readme = zf.read("ecnlab/figures/README.md")
        tutorial = {n for n in names if n.startswith("ecnlab/tutorial/")}
        first = zf.read("ecnlab/tutorial/first.toml")
        metadata = next(n for n in names if n.endswith(".dist-info/METADATA"))
        requires = re.findall(r"^Requires-Dist: ([\w-]+)(.*)$", zf.read(metadata).decode(), re.M)
        entry_points = zf.read(metadata.replace("METADATA", "entry_points.txt")).decode()
    assert readme == (EXPERIMENTS / "README.md").read_bytes()
    # Only the tutorial's experiment files, not what a tutorial run left
    # beside them in a checkout.
    assert tutorial == {f"ecnlab/tutorial/{p.name}" for p in TUTORIAL.glob("*.toml")}
    assert first == (TUTORIAL / "first.toml").read_bytes()
    # The tutorial's steps 2 and 4 read Parquet with pandas: a dependency,
    # not an extra.
    plain = {name for name, extra in requires if "extra ==" not in extra}
    assert {"numpy", "pyarrow", "matplotlib", "pandas"} <= plain, plain
    assert "ecnlab-switch=ecnlab.switch:main" in entry_points.replace(" ", "")


def test_installed_package_finds_its_figures_tutorial_and_switch(
    venv: Path, elsewhere: Path, env: dict[str, str]
) -> None:
    found = json.loads(_run([str(venv / "bin" / "python"), "-c", WHERE_PROBE], elsewhere, env))
    for what in ("package", "figures", "tutorial_at"):
        assert Path(found[what]).resolve().is_relative_to(venv.resolve()), (what, found[what])
    assert found["tutorial"] == sorted(p.name for p in TUTORIAL.glob("*.toml"))
    assert found["engine"], "the installed engine does not load"
    # The switch is the installed interpreter running the installed
    # package's module: nothing from the checkout's target/.
    assert found["switch"] == [str(venv / "bin" / "python"), "-m", "ecnlab.switch"]


def test_the_installed_switch_runs(venv: Path, elsewhere: Path, env: dict[str, str]) -> None:
    """Both ways in: ``python -m ecnlab.switch`` and the ``ecnlab-switch``
    command, each the engine's switch (a spec it cannot read: exit 2 and
    the switch's own message, without namespaces or root)."""
    for cmd in (
        [str(venv / "bin" / "python"), "-m", "ecnlab.switch"],
        [str(venv / "bin" / "ecnlab-switch")],
    ):
        done = subprocess.run(
            [*cmd, str(elsewhere / "missing.json")],
            cwd=elsewhere,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 2, (cmd, done.stderr)
        assert done.stderr.startswith("ecnlab-switch: ") and "missing.json" in done.stderr, cmd


def test_reproduce_list_from_an_install(venv: Path, elsewhere: Path, env: dict[str, str]) -> None:
    out = _run([str(venv / "bin" / "ecnlab"), "reproduce", "--list"], elsewhere, env)
    listed = {line.split()[0] for line in out.splitlines() if line.strip()}
    assert listed == _source_figures()
    assert len(listed) >= 40


def test_tutorial_command_copies_the_tutorials_files(
    venv: Path, elsewhere: Path, env: dict[str, str]
) -> None:
    target = elsewhere / "mine"
    out = _run([str(venv / "bin" / "ecnlab"), "tutorial", str(target)], elsewhere, env)
    assert "first.toml" in out
    copied = {p.name: p.read_bytes() for p in target.iterdir()}
    assert copied == {p.name: p.read_bytes() for p in TUTORIAL.glob("*.toml")}
    # A file of the reader's own is never overwritten.
    (target / "first.toml").write_text("# mine\n", encoding="utf-8")
    done = subprocess.run(
        [str(venv / "bin" / "ecnlab"), "tutorial", str(target)],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2 and "first.toml" in done.stderr, done.stderr
    assert (target / "first.toml").read_text(encoding="utf-8") == "# mine\n"


def test_every_figure_resolves_from_an_install(
    wheel_venv: Path, elsewhere: Path, env: dict[str, str]
) -> None:
    """Every point of every figure's full sweep resolves (bases in other
    folders, such as ../mlecn-fig4/base.toml, included), and a flow-size CSV
    named beside a figure's config is found inside the install."""
    python = str(wheel_venv / "bin" / "python")
    found = json.loads(_run([python, "-c", RESOLVE_PROBE], elsewhere, env))
    assert found["points"] > 0 and not found["errors"], found
    csv = Path(found["csv"])
    assert csv.is_file() and csv.resolve().is_relative_to(wheel_venv.resolve()), csv


def test_quick_reproduction_from_an_install(
    wheel_venv: Path, elsewhere: Path, env: dict[str, str]
) -> None:
    out = elsewhere / "out"
    cmd = ["reproduce", "mqecn-fig3", "--quick", "--out", str(out)]
    _run([str(wheel_venv / "bin" / "ecnlab"), *cmd], elsewhere, env)
    assert (out / "mqecn-fig3.png").stat().st_size > 10_000
    doc = json.loads((out / "mqecn-fig3.json").read_text(encoding="utf-8"))
    assert doc["id"] == "mqecn-fig3" and doc["quick"] is True
    assert doc["sweep"]["failed"] == 0, doc["sweep"]


def test_testbed_runs_the_installed_switch(
    venv: Path, elsewhere: Path, env: dict[str, str]
) -> None:
    """One short testbed run of the installed Fig. 3 config (where the
    machine allows one), from either install: the switch process is the
    install's engine."""
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


@pytest.mark.parametrize("page", DOCS_RUN)
def test_the_docs_shell_commands_run_as_written_from_an_install(
    page: str, wheel_venv: Path, elsewhere: Path, env: dict[str, str]
) -> None:
    """The page's shell commands, in order, in one shell, from an empty
    folder with the wheel's virtualenv activated (its ``ecnlab`` and
    ``python`` first on PATH): each must exit 0."""
    script = docs_shell.script(ROOT / page)
    (elsewhere / ".commands.sh").write_text(script, encoding="utf-8")
    _run(["bash", ".commands.sh"], elsewhere, _on_path(wheel_venv, env))


def test_the_makefile_venv_has_every_declared_dependency() -> None:
    """`make build`'s .venv (the Makefile's list, no registry lookup at
    build time beyond it) holds what pyproject.toml declares, dev extras
    included."""
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    line = next(x for x in makefile.splitlines() if '"numpy' in x and "pip" in x.lower())
    listed = set(re.findall(r'"([^"]+)"', line))
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    deps = re.search(r"^dependencies = \[(.*?)\]$", pyproject, re.M)
    dev = re.search(r"^dev = \[(.*?)\]$", pyproject, re.M)
    assert deps and dev
    declared = set(re.findall(r'"([^"]+)"', deps.group(1) + dev.group(1)))
    assert declared <= listed, sorted(declared - listed)
