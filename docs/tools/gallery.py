"""MkDocs hook: the reproduction gallery, one page per figure folder of
``experiments/``, made at build time from the folder itself (``figure.toml``
and ``NOTES.md``), so the site never holds a second copy that can go stale.

Each page gets the figure's title and source, its record (``record/<id>/``,
issue 29) where there is one, the row of the earlier single-seed table in
``docs/gallery/index.md`` that covers it, the paper's numbers and trends as
``figure.toml`` states them, and the figure's notes. The index's table of
the records is made from ``record/`` too (``record_table``).
``experiments/README.md`` (the folder format) becomes one more page.

``gallery_pages(root)`` is the whole mapping (page path -> Markdown, in nav
order); the tests call it without MkDocs."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.9/3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))
import gallery_claims  # noqa: E402  (the claims tables, beside this hook)

NAV_TITLE = "Reproduction gallery"
# The papers in the order the full-scale table (and the nav) lists them.
PAPER_ORDER = ["MQ-ECN", "Tuning ECN", "CEDM", "ML-ECN", "FQ-CoDel in the DCN"]


def _figure_number(fig: dict[str, Any]) -> int:
    m = re.search(r"\d+", str(fig.get("figure", "")))
    return int(m.group()) if m else 0


def figures(root: Path = ROOT) -> list[tuple[str, dict[str, Any]]]:
    """(folder id, parsed figure.toml) for every figure folder, in nav order."""
    out = []
    for toml in sorted((root / "experiments").glob("*/figure.toml")):
        with toml.open("rb") as f:
            out.append((toml.parent.name, tomllib.load(f)))

    def order(item: tuple[str, dict[str, Any]]) -> tuple[int, int, str]:
        paper = item[1].get("paper", "")
        rank = PAPER_ORDER.index(paper) if paper in PAPER_ORDER else len(PAPER_ORDER)
        return rank, _figure_number(item[1]), item[0]

    return sorted(out, key=order)


def full_scale_rows(root: Path = ROOT) -> tuple[str, dict[str, str]]:
    """The full-scale table's header and its row for each figure id, from
    docs/gallery/index.md (a row "mlecn-fig4 to fig15" covers the range)."""
    header, rows = "", {}
    lines = (root / "docs" / "gallery" / "index.md").read_text().splitlines()
    for i, line in enumerate(lines):
        if line.startswith("| figure | verdicts |"):
            header = line + "\n" + lines[i + 1]
            continue
        m = re.match(
            r"\| \[?([a-z-]+)fig(\d+)(?:\]\([^)]*\))?(?: to \[?fig(\d+)(?:\]\([^)]*\))?)? \|", line
        )
        if header and m:
            first, last = int(m.group(2)), int(m.group(3) or m.group(2))
            for n in range(first, last + 1):
                rows[f"{m.group(1)}fig{n}"] = line
    return header, rows


def _cell(value: Any) -> str:
    return "" if value is None else str(value).replace("|", "\\|").replace("\n", " ")


def _expectations(fig: dict[str, Any]) -> str:
    """What figure.toml says the paper reports: the statement, then where
    and by which rule it is judged (three columns: it fits a laptop)."""
    expects = fig.get("expect", [])
    if not expects:
        return "The figure states no numbers of the paper's to compare with.\n"
    panels = fig.get("panel", [])
    out = [
        "| what the paper says (source) | judged where, by which rule | paper |",
        "|---|---|---|",
    ]
    for e in expects:
        p = e.get("panel")
        title = panels[p - 1].get("title", p) if isinstance(p, int) and 0 < p <= len(panels) else p
        rule = e.get("rule", "")
        if e.get("than") is not None:
            rule = f"{rule} {e['than']}"
        where = f"{title}; {e.get('series') or 'every series'}; x = {e.get('x', 'all')}; {rule}"
        out.append(
            f"| {_cell(e.get('text'))} ({_cell(e.get('source'))}) | {_cell(where)} "
            f"| {_cell(e.get('paper'))} |"
        )
    return "\n".join(out) + "\n"


def _shift_headings(text: str) -> tuple[str, str]:
    """The notes' first-level title, and the rest one level down."""
    title, out, fence = "", [], False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fence = not fence
        if not fence and re.match(r"#+ ", line):
            if line.startswith("# ") and not title:
                title = line[2:].strip()
                continue
            line = "#" + line
        out.append(line)
    return title, "\n".join(out).strip("\n") + "\n"


IMAGES = (".png", ".svg", ".jpg", ".jpeg", ".gif")
LINK = re.compile(r"(!?)\[([^\]]*)\]\(([^)\s]+)((?:\s+\"[^\"]*\")?)\)")


def rewrite_links(text: str, folder: Path, root: Path, assets: dict[str, Path]) -> str:
    """Links of a figure's notes as the site needs them: another figure's
    notes or folder -> its gallery page, experiments/README.md -> the folder
    format's page, a page of docs/ -> that page, an image in a figure folder
    -> a copy beside the gallery (added to ``assets``); any other file of the
    repository -> its path as code (the site does not carry it)."""
    experiments = (root / "experiments").resolve()
    docs = (root / "docs").resolve()

    def one(m: re.Match[str]) -> str:
        bang, label, target, title = m.groups()
        if re.match(r"[a-z]+:|#", target):
            return m.group(0)
        path_part, _, anchor = target.partition("#")
        anchor = f"#{anchor}" if anchor else ""
        path = (folder / path_part).resolve()
        if path == experiments / "README.md":
            return f"{bang}[{label}](figure-folders.md{anchor}{title})"
        if path.parent == experiments and path.is_dir():
            return f"{bang}[{label}]({path.name}.md{anchor}{title})"
        if path.parent.parent == experiments and path.name == "NOTES.md":
            return f"{bang}[{label}]({path.parent.name}.md{anchor}{title})"
        if experiments in path.parents and path.suffix.lower() in IMAGES and path.is_file():
            rel = path.relative_to(experiments).as_posix()
            assets[f"gallery/{rel}"] = path
            return f"{bang}[{label}]({rel}{title})"
        if docs in path.parents and path.suffix == ".md":
            return f"{bang}[{label}](../{path.relative_to(docs).as_posix()}{anchor}{title})"
        try:
            shown = path.relative_to(root.resolve()).as_posix()
        except ValueError:
            shown = target
        return f"{label} (`{shown}`)"

    return LINK.sub(one, text)


NO_RECORD = (
    '!!! warning "No full-scale record yet"\n'
    "    This figure has no record yet: the run at the paper's scale with its seeds and "
    "95% intervals, kept in the repository under `record/` (issue 29), so this page cannot "
    "show our plot or interval verdicts. What exists is the single-seed run below, if any "
    "(the [earlier single-seed table](index.md#before-the-record), run by an engine "
    "older than model 4).\n"
)


def load_record(root: Path, fid: str) -> dict[str, Any] | None:
    """The figure's record (``record/<id>/<id>.json``, written by
    ``ecnlab reproduce ID --record``), or None."""
    path = root / "record" / fid / f"{fid}.json"
    if not path.is_file():
        return None
    rec: dict[str, Any] = json.loads(path.read_text())
    return rec


def _number(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return "" if v is None else str(v)


def carry_progress(root: Path, fid: str, fig: dict[str, Any]) -> tuple[int, int] | None:
    """(points finished, points in the sweep) of a record under way: the
    rows of ``record/carry/<id>.jsonl`` (reproduce/carry.py) against the
    sweep's size as ``figure.toml`` gives it (seeds x cases x grid; the
    site builds without the engine, so two spellings of one point count
    twice). None when no carry file exists."""
    path = root / "record" / "carry" / f"{fid}.jsonl"
    if not path.is_file():
        return None
    done = sum(1 for line in path.read_text(encoding="utf-8").splitlines() if line.strip())
    sweep = fig.get("sweep", {})
    total = max(1, len(fig.get("seeds") or [1])) * max(1, len(sweep.get("case") or []))
    for values in (sweep.get("grid") or {}).values():
        total *= len(values) if isinstance(values, list) else 1
    return done, total


def _progress_text(progress: tuple[int, int]) -> str:
    done, total = progress
    return f"{done} of {total} points run"


def _indent(text: str) -> str:
    return "\n".join("    " + line if line else "" for line in text.splitlines())


def _collapsed(title: str, body: str, kind: str = "note") -> str:
    """A collapsed block (MkDocs Material's ``???``), shut until clicked."""
    return f'??? {kind} "{title}"\n\n{_indent(body)}\n'


def points_tables(rec: dict[str, Any], points: list[dict[str, Any]]) -> str:
    """Every judged point, one narrow table per statement of the paper's
    (the statement once above its points, not on every row); statements
    the paper does not make come last, marked as ours."""
    panels = rec.get("panels") or []
    groups: dict[tuple[bool, str], list[dict[str, Any]]] = {}
    for p in points:
        groups.setdefault((bool(p.get("implied")), str(p.get("claim", ""))), []).append(p)
    out = []
    for (implied, claim), rows in sorted(groups.items(), key=lambda kv: kv[0][0]):
        label = "Ours, not the paper's" if implied else "The paper"
        src = rows[0].get("source")
        out.append(f"**{label}:** {_cell(claim)}" + (f" ({_cell(src)})" if src else "") + "\n")
        out.append("| point (panel · series · x) | ours [95% interval] | paper | verdict |")
        out.append("|---|---|---|---|")
        for p in rows:
            i = p.get("panel")
            # Points count panels from 0 (figure.toml's [[expect]] from 1).
            title = panels[i].get("title", i) if isinstance(i, int) and 0 <= i < len(panels) else i
            if "xs" in p:  # a trend: one verdict for the series
                ours = ", ".join(_number(v) for v in p.get("values") or [])
            else:
                ours = _number(p.get("ours"))
                if p.get("ci_low") is not None:
                    ours += f" [{_number(p.get('ci_low'))}, {_number(p.get('ci_high'))}]"
            paper = _number(p["paper"]) if isinstance(p.get("paper"), (int, float)) else "trend"
            verdict = str(p.get("verdict"))
            if p.get("verdict_point") not in (None, verdict):
                verdict += f" (at the mean: {p['verdict_point']})"
            point = f"{title} · {p.get('series')} · {p.get('x')}"
            out.append(f"| {_cell(point)} | {_cell(ours)} | {_cell(paper)} | {_cell(verdict)} |")
        out.append("")
    return "\n".join(out)


def record_section(
    fid: str,
    rec: dict[str, Any],
    root: Path,
    assets: dict[str, Path],
    points: list[dict[str, Any]] | None = None,
) -> str:
    """Our plot, the stamp and seeds in a line, then every judged point
    (today's rules where ``points`` are given) collapsed."""
    stamp = rec.get("record", {})
    out = ["## The record\n"]
    engine = str(stamp.get("engine", "?"))
    model = stamp.get("model_version", rec.get("model_version", "?"))
    if "model" not in engine:
        engine += f" (model version {model})"
    png = root / "record" / fid / str(rec.get("png", f"{fid}.png"))
    if png.is_file():
        assets[f"gallery/record/{fid}/{png.name}"] = png.resolve()
        out.append(f"![{fid}](record/{fid}/{png.name})\n")
    line = f"Recorded {stamp.get('date', '?')} with engine {engine}, in `record/{fid}/`."
    seeds = rec.get("seeds") or []
    if seeds:
        line += f" Seeds: {', '.join(map(str, seeds))} (95% Student-t intervals over them)."
    elif rec.get("seedless"):
        line += f" Seedless, run once: {_cell(rec['seedless'])}."
    out.append(line + "\n")
    points = points if points is not None else list(rec.get("points") or [])
    if points:
        out.append(_collapsed(f"Every judged point ({len(points)})", points_tables(rec, points)))
    return "\n".join(out)


def _verdict_section(fid: str, root: Path, rec: dict[str, Any] | None) -> tuple[str, Any]:
    """The claims this figure tests and its point verdicts by today's
    rules beside the counts its record stored (the old rules)."""
    out = ["## The verdict\n"]
    try:
        out.append(gallery_claims.figure_claims(root, fid, _claims(root)))
    except Exception as exc:  # a page still builds if a claim file is broken
        out.append(f"The claims could not be judged: {_cell(exc)}\n")
    points = None
    if rec is not None:
        try:
            now = gallery_claims.point_counts(root, fid)
            points = gallery_claims.rejudged_points(root, fid)
        except Exception:  # a figure folder the package cannot load: stored counts
            now = None
        order = " / ".join(VERDICTS)
        if now is not None:
            stated, implied, old = now
            text = f"Points, by today's rules ({order}): **{gallery_claims.counts_text(stated)}**"
            if sum(implied.values()):
                text += (
                    f"; statements the paper does not make (shown apart, never counted): "
                    f"{gallery_claims.counts_text(implied)}"
                )
            text += f". When recorded, by the older rules: {gallery_claims.counts_text(old)}."
        else:
            text = f"Points ({order}): {gallery_claims.counts_text(rec.get('verdicts') or {})}."
        out.append(text + "\n")
    return "\n".join(out), points


_CLAIMS_CACHE: dict[Path, Any] = {}


def _claims(root: Path) -> Any:
    if root not in _CLAIMS_CACHE:
        _CLAIMS_CACHE[root] = gallery_claims.claim_results(root)
    return _CLAIMS_CACHE[root]


def figure_page(
    fid: str,
    fig: dict[str, Any],
    header: str,
    row: str | None,
    root: Path,
    assets: dict[str, Path] | None = None,
) -> str:
    """The claim and verdict first, then the figure, then the details
    collapsed (issue 55, item 5): the points, how to reproduce it, the
    paper's numbers, the earlier run, the notes."""
    assets = assets if assets is not None else {}
    folder = root / "experiments" / fid
    notes_path = folder / "NOTES.md"
    title, notes = _shift_headings(notes_path.read_text()) if notes_path.is_file() else ("", "")
    notes = rewrite_links(notes, folder, root, assets)
    title = title or f"{fig.get('paper', '')} {fig.get('figure', '')}: {fig.get('title', '')}"
    files = sorted(p.name for p in folder.iterdir() if p.is_file())
    rec = load_record(root, fid)
    verdict, points = _verdict_section(fid, root, rec)
    parts = [f"# {title}\n", f"*{_cell(fig.get('description'))}*\n", verdict]
    if rec is not None:
        parts.append(record_section(fid, rec, root, assets, points))
    else:
        parts.append("## Full-scale results\n")
        parts.append(NO_RECORD)
        progress = carry_progress(root, fid, fig)
        if progress is not None:
            parts.append(
                f"The full-scale run is under way: {_progress_text(progress)}, their rows kept "
                f"in `record/carry/{fid}.jsonl` so that the run goes on from any machine "
                "(`record/README.md`, carried runs).\n"
            )
    parts.append("## Details\n")
    parts.append(
        _collapsed(
            "Reproduce it",
            f"**Source:** {_cell(fig.get('source'))}. **Folder:** `experiments/{fid}/` "
            f"({', '.join(f'`{f}`' for f in files)}).\n\n"
            "```sh\n"
            f"ecnlab reproduce {fid} --quick            # under a minute: PNG, JSON, report\n"
            f"ecnlab reproduce {fid} --out results/full  # the paper's scale\n"
            "```\n",
        )
    )
    n = len(fig.get("expect", []))
    parts.append(
        _collapsed(
            f"The paper's numbers as figure.toml states them ({n})",
            "Each row is judged against our number by its rule (`matches`, `within noise`, "
            "`same direction` or `differs`).\n\n" + _expectations(fig),
        )
    )
    if row:
        before = (
            "The earlier single-seed run, by an engine older than model 4 "
            "([the table](index.md#before-the-record)):\n\n"
        )
        parts.append(_collapsed("Before the record", f"{before}{header}\n{row}\n"))
    elif rec is None:
        parts.append("This figure has no full-scale run yet; only its `--quick` form runs.\n")
    if notes:
        parts.append(
            _collapsed("Notes: the set-up, the choices, what was found", notes, kind="info")
        )
    return "\n".join(parts)


def gallery_pages(
    root: Path = ROOT, assets: dict[str, Path] | None = None
) -> dict[str, tuple[str, str]]:
    """Page path -> (nav title, Markdown), in nav order; the images the
    pages link to go into ``assets`` (site path -> file)."""
    assets = assets if assets is not None else {}
    header, rows = full_scale_rows(root)
    folders = root / "experiments"
    pages = {
        "gallery/figure-folders.md": (
            "Figure folders",
            rewrite_links((folders / "README.md").read_text(), folders, root, assets),
        )
    }
    for fid, fig in figures(root):
        nav = f"{fig.get('paper', fid)} {fig.get('figure', '')}".strip()
        page = figure_page(fid, fig, header, rows.get(fid), root, assets)
        pages[f"gallery/{fid}.md"] = (nav, page)
    return pages


# MkDocs entry points -------------------------------------------------------

_PAGES: dict[str, tuple[str, str]] = {}
_ASSETS: dict[str, Path] = {}


GALLERY_CSS = "gallery/gallery.css"
# Tables in the gallery's collapsed details (the notes' numeric tables: a
# column per load or per sender count) in a smaller type with less padding,
# so that ten numeric columns fit the content column of a 1,366 px screen
# (tests/python/test_gallery_layout.py); long words may break.
CSS = """
.md-typeset details table:not([class]) { font-size: .62rem; }
.md-typeset details table:not([class]) th,
.md-typeset details table:not([class]) td { padding: .35em .5em; overflow-wrap: anywhere; }
.md-typeset details table:not([class]) th { min-width: 2rem; }
.md-typeset table:not([class]) td { overflow-wrap: anywhere; }
"""


def on_config(config: Any) -> Any:
    _PAGES.clear()
    _ASSETS.clear()
    if GALLERY_CSS not in config["extra_css"]:
        config["extra_css"].append(GALLERY_CSS)
    _PAGES.update(gallery_pages(ROOT, _ASSETS))
    for entry in config["nav"] or []:
        if isinstance(entry, dict) and NAV_TITLE in entry:
            section = entry[NAV_TITLE]
            by_paper: dict[str, list[dict[str, str]]] = {}
            for path, (title, _) in _PAGES.items():
                if path == "gallery/figure-folders.md":
                    section.append({title: path})
                    continue
                paper, _, fig = title.partition(" Fig")
                by_paper.setdefault(paper, []).append({("Fig" + fig) if fig else title: path})
            section.extend({paper: pages} for paper, pages in by_paper.items())
    return config


RECORDS_MARKER = "<!-- records: the hook lists the figures with a record here -->"
RECORD_TABLE_MARKER = "<!-- record-table: the hook writes the table of the records here -->"
VERDICTS = ("matches", "within noise", "same direction", "differs")


def engine_model_version(root: Path = ROOT) -> int | None:
    """The engine's MODEL_VERSION, read from its source (the site builds
    without the engine), or None where it cannot be found."""
    lib = root / "crates" / "ecnlab" / "src" / "lib.rs"
    if not lib.is_file():
        return None
    m = re.search(r"pub const MODEL_VERSION: u32 = (\d+);", lib.read_text())
    return int(m.group(1)) if m else None


def unmoved_since(root: Path = ROOT) -> int | None:
    """The engine's UNMOVED_SINCE: records from that model on are current
    (every figure's runs are unmoved since; a test holds them to it)."""
    lib = root / "crates" / "ecnlab" / "src" / "lib.rs"
    if not lib.is_file():
        return None
    m = re.search(r"pub const UNMOVED_SINCE: u32 = (\d+);", lib.read_text())
    return int(m.group(1)) if m else None


def _earlier(row: str | None) -> str:
    """The verdicts cell of the earlier single-seed table's row, labelled."""
    if not row:
        return "no full-scale run"
    cell = row.split(" | ")[1].strip()
    counts = "(matches / same direction / differs)"
    if cell.startswith("quick:"):
        return f"quick form only: {cell[len('quick:') :].strip()} {counts}; no full-scale run"
    if cell.startswith("quick"):
        return "quick form, and one slice at full scale (see the notes); no full run"
    return f"{cell} {counts}"


def record_table(root: Path = ROOT) -> str:
    """One row per figure from its record's JSON (so the table cannot go
    stale): its point verdicts by today's rules (recomputed from the
    record's per-seed values), those of statements the paper does not make,
    the counts the record stored when made (the older rules), and its
    stamp. A figure with no record at the engine's model version says so
    and gives the earlier single-seed verdicts, labelled."""
    model = engine_model_version(root)
    since = unmoved_since(root)
    at = f"model {model}" if model is not None else "the engine's model version"
    _, earlier = full_scale_rows(root)
    order = " / ".join(VERDICTS)
    out = [
        f"| figure | points today ({order}) | not the paper's claims | when recorded "
        "(older rules) | record |",
        "|---|---|---|---|---|",
    ]
    for fid, fig in figures(root):
        rec = load_record(root, fid)
        link = f"[{fid}]({fid}.md)"
        stamp = (rec or {}).get("record", {})
        version = stamp.get("model_version", (rec or {}).get("model_version"))
        current = version == model or (
            since is not None
            and model is not None
            and isinstance(version, int)
            and since <= version <= model
        )
        if rec is None or (model is not None and not current):
            what = f"**not recorded at {at}**"
            if rec is not None:
                what += f" (record at model {version}: rerun)"
            progress = carry_progress(root, fid, fig)
            if progress is not None:
                what += f" (under way: {_progress_text(progress)})"
            out.append(f"| {link} | {what} |  | {_earlier(earlier.get(fid))} |  |")
            continue
        old = rec.get("verdicts") or {}
        try:
            now = gallery_claims.point_counts(root, fid)
        except Exception:  # a folder the package cannot load: the stored counts only
            now = None
        today, implied = (
            ("–", "–")
            if now is None
            else (
                gallery_claims.counts_text(now[0]),
                gallery_claims.counts_text(now[1]),
            )
        )
        changed = sum(
            1 for p in rec.get("points") or [] if p.get("verdict") != p.get("verdict_point")
        )
        seeds = rec.get("seeds") or []
        seeds_cell = f"seeds {', '.join(map(str, seeds))}" if seeds else "seedless, run once"
        stamp_cell = f"model {version}, {_cell(stamp.get('date', '?'))}, {seeds_cell}"
        old_cell = f"{gallery_claims.counts_text(old)} ({changed} changed by the interval)"
        out.append(f"| {link} | {today} | {implied} | {old_cell} | {stamp_cell} |")
    return "\n".join(out)


def records_line(root: Path = ROOT) -> str:
    """Which figures have a record, linked to their pages."""
    have = [fid for fid, _ in figures(root) if load_record(root, fid) is not None]
    if not have:
        return "No figure has a record yet."
    links = ", ".join(f"[{fid}]({fid}.md)" for fid in have)
    return f"Figures with a record ({len(have)} of {len(figures(root))}): {links}."


CLAIMS_MARKER = "<!-- claims: the hook writes the papers' claims tables here -->"


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    if page.file.src_uri == "gallery/index.md":
        markdown = markdown.replace(CLAIMS_MARKER, gallery_claims.claims_tables(ROOT))
        markdown = markdown.replace(RECORDS_MARKER, records_line(ROOT))
        return markdown.replace(RECORD_TABLE_MARKER, record_table(ROOT))
    return markdown


def on_files(files: Any, config: Any) -> Any:
    from mkdocs.structure.files import File

    for path, (_, text) in _PAGES.items():
        files.append(File.generated(config, path, content=text))
    for path, source in _ASSETS.items():
        files.append(File.generated(config, path, content=source.read_bytes()))
    files.append(File.generated(config, GALLERY_CSS, content=CSS))
    return files
