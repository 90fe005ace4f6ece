"""Statements of the first pages that the code can check, kept true
(issue 55: the README's demo table had gone stale, and the experiment-file
guide left PIE and DualPI2 out):

- the demo table the README and the home page show is what `ecnlab demo`
  prints now (a few seconds of runs);
- the figure count they give is the number of the papers' figure folders;
- the annotated experiment file of docs/guide/experiment-file.md names
  every value of every named kind (qdisc, scheduler, marking, cc, profile,
  recipe) and every key of every marking scheme and discipline, from the
  engine's declarations.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.9/3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
PAGES_WITH_DEMO = ("README.md", "docs/index.md")

try:
    import ecnlab._engine  # noqa: F401

    HAVE_ENGINE = True
except ImportError:
    HAVE_ENGINE = False
needs_engine = pytest.mark.skipif(not HAVE_ENGINE, reason="the engine is not built")


def _demo_table(page: str) -> str:
    text = (ROOT / page).read_text(encoding="utf-8")
    m = re.search(r"^```\n(scheme +service 0 .*?)\n```", text, flags=re.M | re.S)
    assert m, f"{page}: no demo table"
    return m.group(1)


@needs_engine
def test_the_demo_table_shown_is_what_the_demo_prints(tmp_path: Path) -> None:
    from ecnlab.demo import run_demo

    # The same runs as `ecnlab demo` (and `make run`): its table, to the
    # digit. A run is a pure function of its config and seed, so this
    # moves only when the engine's outputs move.
    printed = run_demo(out=tmp_path, progress=False).table()
    for page in PAGES_WITH_DEMO:
        assert _demo_table(page) == printed, f"{page}: paste the table `ecnlab demo` prints"


def test_the_figure_count_given_is_the_number_of_figure_folders() -> None:
    # The five papers' figures: a folder of ecnlab's own (figure.toml's figure
    # without "Fig.", e.g. mqecn-dcqcn's "§3.4 (no figure)") is not one, nor
    # one of another paper's (HPCC's Fig. 11).
    five = {"MQ-ECN", "Tuning ECN", "CEDM", "ML-ECN", "FQ-CoDel in the DCN"}
    figures = 0
    for p in (ROOT / "experiments").glob("*/figure.toml"):
        fig = tomllib.loads(p.read_text(encoding="utf-8"))
        figures += fig.get("paper") in five and fig.get("figure", "").startswith("Fig")
    for page in PAGES_WITH_DEMO:
        text = (ROOT / page).read_text(encoding="utf-8")
        said = {int(n) for n in re.findall(r"reproduces (\d+) of their\s+figures", text)}
        assert said == {figures}, f"{page}: says {said} figures, experiments/ has {figures}"


def _annotated_file() -> str:
    text = (ROOT / "docs" / "guide" / "experiment-file.md").read_text(encoding="utf-8")
    m = re.search(r"^```toml\n(\[run\].*?)^```", text, flags=re.M | re.S)
    assert m, "experiment-file.md: the annotated experiment file"
    return m.group(1)


@needs_engine
def test_the_annotated_experiment_file_names_every_scheme_and_its_keys() -> None:
    from ecnlab.keys import catalog

    block = _annotated_file()
    words = set(re.findall(r"[\w-]+", block))
    missing = []
    for entry in catalog():
        kind, name = entry["kind"], entry["name"]
        if kind == "section":
            continue
        if name not in words:
            missing.append(f"{kind} {name}")
        if kind in ("marking", "qdisc"):
            missing += [f"{name}: {p['key']}" for p in entry["params"] if p["key"] not in words]
    assert not missing, f"experiment-file.md's annotated file leaves out: {missing}"


@needs_engine
def test_the_error_messages_the_guide_quotes_are_the_engines() -> None:
    import ecnlab

    text = (ROOT / "docs" / "guide" / "experiment-file.md").read_text(encoding="utf-8")
    intro = text[: text.index("```toml")]
    quoted = re.findall(r"``([^`].*?)``|`(workload\.load = .*?)`", intro, flags=re.S)
    messages = [" ".join((a or b).split()) for a, b in quoted]
    assert len(messages) == 3, messages
    # Each quoted message from the mistake it shows, on the tutorial's
    # leaf-spine file (which has every section the keys live in).
    base = ROOT / "docs" / "tutorial" / "leafspine.toml"
    mistakes = ["switch.scheduler=dwr", "switch.stages=1", "workload.load=60%"]
    for mistake, message in zip(mistakes, messages):
        with pytest.raises(ecnlab.ConfigError) as err:
            ecnlab.validate(base, [mistake])
        assert str(err.value) == message, mistake
