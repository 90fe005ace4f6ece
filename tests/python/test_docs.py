"""The documentation: the README stays a short first page, every page of
docs/ is in the site's nav, the generated parts match the code, and the
outputs pasted into the README and the tutorial are what the engine gives.

`make docs` (part of `make test`) builds the site with `mkdocs build
--strict`, which catches broken links and anchors; these tests hold what
does not need MkDocs installed."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
TOOLS = DOCS / "tools"
sys.path.insert(0, str(TOOLS))

import gallery  # noqa: E402
import schemes  # noqa: E402

# Issue 29: the README is what a newcomer needs first, under ~200 lines;
# everything else is a page of the site.
README_MAX_LINES = 200


def nav_pages() -> list[str]:
    """Every page path the nav of mkdocs.yml names (read as text: the nav's
    entries are "- Title: path.md" or "- path.md")."""
    text = (ROOT / "mkdocs.yml").read_text()
    nav = text[text.index("\nnav:") :]
    return re.findall(r"^\s*- (?:[^:\n]+: )?([\w./-]+\.md)\s*$", nav, flags=re.M)


def test_readme_is_short() -> None:
    lines = (ROOT / "README.md").read_text().splitlines()
    assert len(lines) < README_MAX_LINES, f"README.md has {len(lines)} lines: move text to docs/"


def test_every_page_is_in_the_nav_and_every_nav_entry_exists() -> None:
    pages = {
        str(p.relative_to(DOCS))
        for p in DOCS.rglob("*.md")
        if TOOLS not in p.parents  # the hooks' folder is excluded from the site
    }
    nav = nav_pages()
    assert len(nav) == len(set(nav)), "a page is in the nav twice"
    assert sorted(pages - set(nav)) == [], "pages missing from mkdocs.yml's nav"
    assert sorted(set(nav) - pages) == [], "nav entries with no page"


def test_the_readme_links_only_to_pages_that_exist() -> None:
    text = (ROOT / "README.md").read_text()
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text)
    assert links, "the README links to the docs"
    missing = [link for link in links if not (ROOT / link).exists()]
    assert missing == []


def test_gallery_has_a_page_per_figure_folder() -> None:
    folders = sorted(p.parent.name for p in (ROOT / "experiments").glob("*/figure.toml"))
    pages = gallery.gallery_pages(ROOT)
    # The five papers' figures (issue 29) and four of issue 52: mqecn-dcqcn
    # (MQ-ECN §3.4 has no figure), dcqcn-fairness, acc-static-ecn, hpcc-fig11.
    assert len(folders) == 44
    assert sorted(p[len("gallery/") : -3] for p in pages if p != "gallery/figure-folders.md") == (
        folders
    )
    # The nav's gallery section is where the hook adds them.
    assert "gallery/index.md" in nav_pages()
    text = (ROOT / "mkdocs.yml").read_text()
    assert f"  - {gallery.NAV_TITLE}:\n      - gallery/index.md\n" in text


def test_gallery_pages_carry_the_papers_numbers_and_the_full_scale_row() -> None:
    pages = gallery.gallery_pages(ROOT)
    fig3 = pages["gallery/mqecn-fig3.md"][1]
    # MQ-ECN §2.2.3: 403 and 539 Mbps with 1 vs 4 flows (its figure.toml).
    assert "403" in fig3 and "539" in fig3
    # The full-scale table's row for the figure, and the notes' own sections.
    assert "| 5 / 0 / 3 |" in fig3 and "### Set-up and what we chose" in fig3
    # The range row "mlecn-fig4 to fig15" covers each of its figures.
    _, rows = gallery.full_scale_rows(ROOT)
    assert all(f"mlecn-fig{n}" in rows for n in range(4, 16))
    # A figure without a record (issue 29) says so on its page.
    for fid, _ in gallery.figures(ROOT):
        text = pages[f"gallery/{fid}.md"][1]
        has_record = gallery.load_record(ROOT, fid) is not None
        assert ("## The record" in text) == has_record, fid
        assert ("No full-scale record yet" in text) != has_record, fid


try:
    import ecnlab._engine  # noqa: F401

    HAVE_ENGINE = True
except ImportError:
    HAVE_ENGINE = False
needs_engine = pytest.mark.skipif(not HAVE_ENGINE, reason="the engine is not built")


def _env() -> dict[str, str]:
    """The environment for a child Python that imports this ecnlab."""
    import os

    import ecnlab

    env = dict(os.environ)
    src = str(Path(ecnlab.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [src, env.get("PYTHONPATH")]))
    return env


@needs_engine
def test_scheme_pages_match_the_declarations_and_tests() -> None:
    stale = schemes.stale()
    assert stale == [], f"run `make reference`: {[str(p.relative_to(ROOT)) for p in stale]}"


@needs_engine
def test_every_scheme_has_a_page() -> None:
    from ecnlab.keys import catalog

    declared = {
        g["name"]
        for g in catalog()
        if g["kind"] in ("marking", "qdisc") and g["name"] not in ("none", "composed")
    }
    assert sorted(declared - set(schemes.SCHEMES)) == [], "schemes with no docs/schemes/ page"
    assert sorted(set(schemes.SCHEMES) - declared) == [], "pages of schemes the engine lacks"
    for name in schemes.SCHEMES:
        assert f"schemes/{name}.md" in nav_pages(), name


@needs_engine
def test_readme_example_prints_what_it_says(tmp_path: Path) -> None:
    from ecnlab.cli.tutorial import copy_tutorial

    # The example runs where `ecnlab tutorial tutorial` left the files.
    copy_tutorial(tmp_path / "tutorial")
    text = (ROOT / "README.md").read_text()
    code = re.search(r"```python\n(import ecnlab\n.*?)```", text, flags=re.S)
    assert code, "the README's example"
    said = [line[2:] for line in code.group(1).splitlines() if re.match(r"# [a-z-]+ \{", line)]
    assert len(said) == 3
    out = subprocess.run(
        [sys.executable, "-c", code.group(1)],
        cwd=tmp_path,
        env=_env(),
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert out.splitlines() == said


def _tutorial_block(command: str) -> list[str]:
    """The output the tutorial shows under `$ command`."""
    text = (DOCS / "tutorial.md").read_text()
    i = text.index(f"$ {command}\n") + len(command) + 3
    block = text[i : text.index("\n```", i)]
    return block.split("\n$ ")[0].splitlines()


@needs_engine
@pytest.mark.parametrize("marking", [None, "per-queue", "mq-ecn"])
def test_tutorial_first_runs_print_what_the_tutorial_shows(
    marking: str | None, tmp_path: Path
) -> None:
    # The tutorial's outputs are pasted from real runs: rerun the first
    # experiment's and compare every line but the wall-clock one.
    out = tmp_path / "out"
    args = ["run", "first.toml", "--out", str(out)]
    if marking:
        command = f"ecnlab run first.toml --out out/{marking} --set switch.marking={marking}"
        args += ["--set", f"switch.marking={marking}"]
    else:
        command = "ecnlab run first.toml --out out/per-port"
    shown = _tutorial_block(command)
    got = subprocess.run(
        [sys.executable, "-m", "ecnlab", *args],
        cwd=DOCS / "tutorial",
        env=_env(),
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()

    def stable(lines: list[str]) -> list[str]:
        return [
            line for line in lines if "wall (" not in line and not line.startswith("  written to")
        ]

    assert stable(got) == stable(shown)


@needs_engine
def test_tutorial_sweep_files_are_valid_experiments() -> None:
    import ecnlab
    from ecnlab.sweep import load_sweep

    ecnlab.validate(DOCS / "tutorial" / "leafspine.toml")
    sweep = load_sweep(DOCS / "tutorial" / "sweep.toml")
    assert sweep is not None


def test_gallery_rewrites_the_notes_links_for_the_site(tmp_path: Path) -> None:
    # A figure's notes link to other figures' notes, to the folder format, to
    # docs pages, to images and to files the site does not carry: each must
    # become a link that exists on the site (or plain text), or strict
    # `make docs` fails on a note's link.
    exp = tmp_path / "experiments"
    for fid in ("x-fig1", "x-fig2"):
        (exp / fid).mkdir(parents=True)
        (exp / fid / "figure.toml").write_text(f'id = "{fid}"\npaper = "X"\nfigure = "Fig. 1"\n')
    (exp / "README.md").write_text("# experiments/\n")
    (exp / "x-fig1" / "plot.png").write_bytes(b"\x89PNG")
    (exp / "x-fig1" / "NOTES.md").write_text(
        "# X Fig. 1: a title\n\n## Found\n\n"
        "[two](../x-fig2/NOTES.md#found), [format](../README.md), [base](base.toml), "
        "[stats](../../docs/statistics.md#which-quantile), [web](https://example.org), "
        "![ours](plot.png)\n"
    )
    (tmp_path / "docs" / "gallery").mkdir(parents=True)
    (tmp_path / "docs" / "gallery" / "index.md").write_text("# Gallery\n")
    assets: dict[str, Path] = {}
    pages = gallery.gallery_pages(tmp_path, assets)
    page = pages["gallery/x-fig1.md"][1]
    # The notes sit in a collapsed block, one heading level down.
    assert page.startswith("# X Fig. 1: a title\n") and "\n    ### Found\n" in page
    assert "[two](x-fig2.md#found)" in page
    assert "[format](figure-folders.md)" in page
    assert "base (`experiments/x-fig1/base.toml`)" in page
    assert "[stats](../statistics.md#which-quantile)" in page
    assert "[web](https://example.org)" in page
    assert "![ours](x-fig1/plot.png)" in page
    assert assets == {"gallery/x-fig1/plot.png": (exp / "x-fig1" / "plot.png").resolve()}
    assert "no full-scale run yet" in page


def test_gallery_shows_a_figures_record(tmp_path: Path) -> None:
    # `ecnlab reproduce ID --record` writes record/<id>/<id>.json and its
    # PNG; the figure's page shows both, each point with its interval, and
    # the gallery's index lists the figure. Points count panels from 0.
    exp = tmp_path / "experiments"
    for fid in ("x-fig1", "x-fig2"):
        (exp / fid).mkdir(parents=True)
        (exp / fid / "figure.toml").write_text(f'id = "{fid}"\npaper = "X"\nfigure = "Fig. 1"\n')
    (exp / "README.md").write_text("# experiments/\n")
    (tmp_path / "docs" / "gallery").mkdir(parents=True)
    (tmp_path / "docs" / "gallery" / "index.md").write_text("# Gallery\n")
    rec = tmp_path / "record" / "x-fig2"
    rec.mkdir(parents=True)
    (rec / "x-fig2.png").write_bytes(b"\x89PNG")
    (rec / "x-fig2.json").write_text(
        json.dumps(
            {
                "record": {"model_version": 3, "engine": "0.1.0 (model 3)", "date": "2026-11-27"},
                "seeds": [1, 2, 3],
                "png": "x-fig2.png",
                "verdicts": {"matches": 0, "within noise": 1, "differs": 0},
                "panels": [{"title": "(a) goodput"}, {"title": "(b) mean FCT"}],
                "points": [
                    {
                        "panel": 1,
                        "series": "MQ-ECN",
                        "x": 0.5,
                        "ours": 1.23456,
                        "ci_low": 1.1,
                        "ci_high": 1.4,
                        "n": 3,
                        "paper": 1.35,
                        "verdict": "within noise",
                        "verdict_point": "differs",
                        "claim": "MQ-ECN's FCT at load 0.5",
                    }
                ],
            }
        )
    )
    assets: dict[str, Path] = {}
    pages = gallery.gallery_pages(tmp_path, assets)
    page = pages["gallery/x-fig2.md"][1]
    assert "Recorded 2026-11-27 with engine 0.1.0 (model 3)" in page
    assert "Seeds: 1, 2, 3" in page and "![x-fig2](record/x-fig2/x-fig2.png)" in page
    # Every point, grouped under its claim, in a narrow table (issue 55, item 5).
    assert "**The paper:** MQ-ECN's FCT at load 0.5" in page
    row = (
        "| (b) mean FCT · MQ-ECN · 0.5 | 1.235 [1.1, 1.4] | 1.35 "
        "| within noise (at the mean: differs) |"
    )
    assert row in page
    # The verdict before the figure, the figure before the collapsed details.
    assert page.index("## The verdict") < page.index("![x-fig2]") < page.index("??? note")
    assert "No full-scale record yet" not in page
    assert "No full-scale record yet" in pages["gallery/x-fig1.md"][1]
    assert assets == {"gallery/record/x-fig2/x-fig2.png": (rec / "x-fig2.png").resolve()}
    assert gallery.records_line(tmp_path) == (
        "Figures with a record (1 of 2): [x-fig2](x-fig2.md)."
    )


def test_gallery_table_of_records_is_read_from_record(tmp_path: Path) -> None:
    # The index's table of the records is made from record/<id>/<id>.json at
    # build time, so it shows the committed record's counts; a figure with no
    # record at the engine's model version says so, with its earlier
    # single-seed verdicts (the hand-kept table) labelled as such.
    exp = tmp_path / "experiments"
    for fid in ("x-fig1", "x-fig2", "x-fig3"):
        (exp / fid).mkdir(parents=True)
        (exp / fid / "figure.toml").write_text(f'id = "{fid}"\npaper = "X"\nfigure = "Fig. 1"\n')
    (tmp_path / "docs" / "gallery").mkdir(parents=True)
    (tmp_path / "docs" / "gallery" / "index.md").write_text(
        "| figure | verdicts | the paper's numbers → ours | one core |\n|---|---|---|---|\n"
        "| [x-fig1](x-fig1.md) | 7 / 2 / 1 | ... | 1 s |\n"
        "| [x-fig3](x-fig3.md) | quick: 3 / 1 / 0 | ... | 1 s |\n"
    )
    lib = tmp_path / "crates" / "ecnlab" / "src"
    lib.mkdir(parents=True)
    (lib / "lib.rs").write_text("pub const MODEL_VERSION: u32 = 4;\n")
    rec = tmp_path / "record" / "x-fig2"
    rec.mkdir(parents=True)
    points = [
        {"verdict": "within noise", "verdict_point": "differs"},
        {"verdict": "matches", "verdict_point": "matches"},
    ]
    body = {
        "record": {"model_version": 4, "date": "2026-11-27"},
        "seeds": [1, 2, 3],
        "verdicts": {"matches": 1, "within noise": 1, "same direction": 0, "differs": 0},
        "points": points,
    }
    (rec / "x-fig2.json").write_text(json.dumps(body))
    assert gallery.engine_model_version(tmp_path) == 4
    table = gallery.record_table(tmp_path)
    # The fake folder cannot be judged again (no sweep): today's counts are
    # "–", the stored ones stay.
    row = (
        "| [x-fig2](x-fig2.md) | – | – | 1 / 1 / 0 / 0 (1 changed by the interval) "
        "| model 4, 2026-11-27, seeds 1, 2, 3 |"
    )
    assert row in table
    assert (
        "| [x-fig1](x-fig1.md) | **not recorded at model 4** |" in table
        and "| 7 / 2 / 1 (matches / same direction / differs) |" in table
    )
    assert "quick form only: 3 / 1 / 0" in table
    # A record made by an older model version is not shown as current.
    body["record"]["model_version"] = 3
    (rec / "x-fig2.json").write_text(json.dumps(body))
    assert "(record at model 3: rerun)" in gallery.record_table(tmp_path)
    # A run under way shows its carried points (record/carry/<id>.jsonl)
    # against the sweep's size: 2 seeds x 2 cases x 3 x 2 grid values = 24.
    (exp / "x-fig3" / "figure.toml").write_text(
        'id = "x-fig3"\npaper = "X"\nfigure = "Fig. 3"\nseeds = [1, 2]\n'
        '[sweep.grid]\n"a.b" = [1, 2, 3]\n"c.d" = ["x", "y"]\n'
        '[[sweep.case]]\nlabel = "A"\n[[sweep.case]]\nlabel = "B"\n'
    )
    (tmp_path / "record" / "carry").mkdir()
    (tmp_path / "record" / "carry" / "x-fig3.jsonl").write_text('{"key": "a"}\n{"key": "b"}\n\n')
    (exp / "README.md").write_text("# Figure folders\n")
    assert "(under way: 2 of 24 points run)" in gallery.record_table(tmp_path)
    page = gallery.gallery_pages(tmp_path)["gallery/x-fig3.md"][1]
    assert "under way: 2 of 24 points run" in page and "record/carry/x-fig3.jsonl" in page
    # The real index keeps the marker the hook replaces.
    assert gallery.RECORD_TABLE_MARKER in (DOCS / "gallery" / "index.md").read_text()


def test_every_recorded_figure_says_what_the_seeds_changed() -> None:
    # Issue 29: each figure's page says which verdicts changed with seeds and
    # intervals. A figure recorded without that paragraph is named here.
    missing = [
        fid
        for fid, _ in gallery.figures(ROOT)
        if gallery.load_record(ROOT, fid) is not None
        and "\n## Seeds and noise" not in (ROOT / "experiments" / fid / "NOTES.md").read_text()
    ]
    assert missing == [], f"add a 'Seeds and noise' section to these figures' NOTES.md: {missing}"


def test_every_figure_says_which_set_up_choices_it_uses() -> None:
    # Issue 29 left three modelling choices open (delayed ACKs on the Linux
    # testbeds, serial_gap, the MQ-ECN authors' set-up options); each figure's
    # notes say which it uses and why (docs/gallery/set-up-choices.md).
    missing = [
        fid
        for fid, _ in gallery.figures(ROOT)
        if "\n## Set-up choice" not in (ROOT / "experiments" / fid / "NOTES.md").read_text()
    ]
    assert missing == [], f"add a 'Set-up choice' section to these figures' NOTES.md: {missing}"
    assert "gallery/set-up-choices.md" in nav_pages()
