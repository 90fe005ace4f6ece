"""``ecnlab report DIR``: every reproduced figure in DIR on one page
(Markdown with the PNGs, and the same as HTML), our numbers beside the
paper's, with the verdicts."""

from __future__ import annotations

import html
import json
import math
import os
from pathlib import Path
from typing import Any

from .._atomic import atomic_write
from .figure import figure_ids
from .verdict import VERDICTS

__all__ = ["write_report"]


def _fmt(v: Any) -> str:
    if v is None:
        return "–"
    if isinstance(v, float):
        if math.isnan(v):
            return "–"
        return f"{v:.4g}"
    return str(v)


def _ours(c: dict[str, Any]) -> str:
    """Our value, with its interval and the number of seeds where there is one."""
    text = _fmt(c["ours"])
    if c.get("ci_low") is not None and c.get("ci_high") is not None:
        text += f" [{_fmt(c['ci_low'])}, {_fmt(c['ci_high'])}] n={c.get('n')}"
    return text


def _rows(d: dict[str, Any]) -> list[dict[str, Any]]:
    """The verdicts by panel, series, then x by value (JSON written before
    the figure sorted them included)."""
    from . import x_order

    order: dict[tuple[int, str], int] = {}
    for i, panel in enumerate(d["panels"]):
        for k, name in enumerate(panel.get("series", {})):
            order[(i, name)] = k
    return sorted(
        d["points"],
        key=lambda c: (c["panel"], order.get((c["panel"], c["series"]), 1 << 30), x_order(c["x"])),
    )


def _notes_link(d: dict[str, Any], root: Path) -> str | None:
    """The figure's notes page relative to the report's folder (where it is
    on this machine), else as the repository names it."""
    path = d.get("notes_path")
    if path and Path(path).is_file():
        return os.path.relpath(path, root.resolve())
    return d.get("notes")


def _counts(d: dict[str, Any]) -> list[int]:
    return [d["verdicts"].get(v, 0) for v in VERDICTS]


def _docs(directory: Path) -> list[dict[str, Any]]:
    docs = []
    for path in directory.glob("*.json"):
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(doc, dict) and "id" in doc and "verdicts" in doc:
            docs.append(doc)
    try:
        order = {fid: i for i, fid in enumerate(figure_ids())}
    except Exception:  # no experiments folder: keep name order
        order = {}
    return sorted(docs, key=lambda d: (order.get(d["id"], len(order)), d["id"]))


def write_report(directory: str | Path) -> tuple[Path, Path]:
    """Write ``report.md`` and ``report.html`` into ``directory`` from the
    ``<id>.json`` files there; returns both paths."""
    root = Path(directory)
    docs = _docs(root)
    if not docs:
        raise FileNotFoundError(
            f"{root}: no reproduced figures (<id>.json) here; run `ecnlab reproduce` first"
        )
    md = ["# ecnlab: the papers' figures, reproduced", ""]
    md.append("| figure | run | seeds | points | " + " | ".join(VERDICTS) + " | runs (one core) |")
    md.append("|---|---|---|---|" + "---|" * len(VERDICTS) + "---|")
    for d in docs:
        run = "quick" if d.get("quick") else "full"
        counts = " | ".join(str(n) for n in _counts(d))
        md.append(
            f"| [{d['id']}](#{d['id']}) {d['paper']} {d['figure']} | {run} | {_seed_text(d)} "
            f"| {d['sweep']['points']} | {counts} | {d.get('cpu_seconds', 0):.0f} s |"
        )
    md.append("")
    for d in docs:
        md += _figure_md(d, root)
    md_path, html_path = root / "report.md", root / "report.html"
    with atomic_write(md_path, "w") as handle:
        handle.write("\n".join(md) + "\n")
    with atomic_write(html_path, "w") as handle:
        handle.write(_html(docs, root))
    return md_path, html_path


def _seed_text(d: dict[str, Any]) -> str:
    if d.get("seedless"):
        return "seedless"
    seeds = d.get("seeds") or []
    return str(len(seeds)) if seeds else "–"


def _figure_md(d: dict[str, Any], root: Path) -> list[str]:
    out = [
        f'<a id="{d["id"]}"></a>',
        f"## {d['id']}: {d['paper']} {d['figure']} — {d['title']}",
        "",
    ]
    out.append(f"{d['description']} Source: {d['source']}.")
    notes = _notes_link(d, root)
    if notes:
        out.append(f"Notes: [{d['id']}/NOTES.md]({notes}).")
    if d.get("seedless"):
        out.append(f"Seedless: {d['seedless']}.")
    out.append("")
    out.append(f"![{d['id']}]({d.get('png', d['id'] + '.png')})")
    out.append("")
    out.append("| panel | series | x | ours [95% CI] | paper | verdict | claim |")
    out.append("|---|---|---|---|---|---|---|")
    for c in _rows(d):
        title = d["panels"][c["panel"]]["title"]
        paper = _fmt(c["paper"]) if isinstance(c["paper"], (int, float)) else "(trend)"
        out.append(
            f"| {title} | {c['series']} | {_fmt(c['x'])} | {_ours(c)} | {paper} "
            f"| {c['verdict']} | {c['claim']} |"
        )
    out.append("")
    return out


def _html(docs: list[dict[str, Any]], root: Path) -> str:
    e = html.escape
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'>",
        "<title>ecnlab: reproduced figures</title>",
        "<style>body{font-family:sans-serif;max-width:1200px;margin:auto}"
        "table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:2px 6px;font-size:13px}.matches{background:#dfd}"
        ".within{background:#def}.same{background:#ffd}.differs{background:#fdd}"
        "img{max-width:100%}</style></head><body>",
        "<h1>ecnlab: the papers' figures, reproduced</h1><table><tr><th>figure</th><th>run</th>"
        "<th>seeds</th><th>points</th>" + "".join(f"<th>{v}</th>" for v in VERDICTS) + "</tr>",
    ]
    for d in docs:
        run = "quick" if d.get("quick") else "full"
        parts.append(
            f"<tr><td><a href='#{e(d['id'])}'>{e(d['id'])}</a></td><td>{run}</td>"
            f"<td>{_seed_text(d)}</td><td>{d['sweep']['points']}</td>"
            + "".join(f"<td>{n}</td>" for n in _counts(d))
            + "</tr>"
        )
    parts.append("</table>")
    for d in docs:
        head = f"{d['id']}: {d['paper']} {d['figure']} — {d['title']}"
        parts.append(f"<h2 id='{e(d['id'])}'>{e(head)}</h2>")
        notes = _notes_link(d, root)
        link = f" <a href='{e(notes)}'>Notes</a>." if notes else ""
        parts.append(f"<p>{e(d['description'])} Source: {e(d['source'])}.{link}</p>")
        parts.append(f"<img src='{e(d.get('png', d['id'] + '.png'))}'>")
        parts.append(
            "<table><tr><th>panel</th><th>series</th><th>x</th><th>ours [95% CI]</th><th>paper</th>"
            "<th>verdict</th><th>claim</th></tr>"
        )
        for c in _rows(d):
            title = d["panels"][c["panel"]]["title"]
            paper = _fmt(c["paper"]) if isinstance(c["paper"], (int, float)) else "(trend)"
            cls = c["verdict"].split()[0]
            parts.append(
                f"<tr class='{cls}'><td>{e(title)}</td><td>{e(str(c['series']))}</td>"
                f"<td>{e(_fmt(c['x']))}</td>"
                f"<td>{e(_ours(c))}</td><td>{e(paper)}</td><td>{e(c['verdict'])}</td>"
                f"<td>{e(c['claim'])}</td></tr>"
            )
        parts.append("</table>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
