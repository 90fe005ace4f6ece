"""``ecnlab report DIR``: every reproduced figure in DIR on one page
(Markdown with the PNGs, and the same as HTML), our numbers beside the
paper's, with the verdicts."""

from __future__ import annotations

import html
import json
import math
from pathlib import Path
from typing import Any

from ..results import atomic_write
from .figure import figure_ids

__all__ = ["write_report"]


def _fmt(v: Any) -> str:
    if v is None:
        return "–"
    if isinstance(v, float):
        if math.isnan(v):
            return "–"
        return f"{v:.4g}"
    return str(v)


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
    md.append("| figure | run | points | matches | same direction | differs | runs (one core) |")
    md.append("|---|---|---|---|---|---|---|")
    for d in docs:
        v = d["verdicts"]
        run = "quick" if d.get("quick") else "full"
        md.append(
            f"| [{d['id']}](#{d['id']}) {d['paper']} {d['figure']} | {run} "
            f"| {d['sweep']['points']} | {v['matches']} | {v['same direction']} | {v['differs']} "
            f"| {d.get('cpu_seconds', 0):.0f} s |"
        )
    md.append("")
    for d in docs:
        md += _figure_md(d)
    md_path, html_path = root / "report.md", root / "report.html"
    with atomic_write(md_path, "w") as handle:
        handle.write("\n".join(md) + "\n")
    with atomic_write(html_path, "w") as handle:
        handle.write(_html(docs))
    return md_path, html_path


def _figure_md(d: dict[str, Any]) -> list[str]:
    out = [
        f'<a id="{d["id"]}"></a>',
        f"## {d['id']}: {d['paper']} {d['figure']} — {d['title']}",
        "",
    ]
    out.append(f"{d['description']} Source: {d['source']}.")
    out.append("")
    out.append(f"![{d['id']}]({d.get('png', d['id'] + '.png')})")
    out.append("")
    out.append("| panel | series | x | ours | paper | verdict | claim |")
    out.append("|---|---|---|---|---|---|---|")
    for c in d["points"]:
        title = d["panels"][c["panel"]]["title"]
        paper = _fmt(c["paper"]) if isinstance(c["paper"], (int, float)) else "(trend)"
        out.append(
            f"| {title} | {c['series']} | {_fmt(c['x'])} | {_fmt(c['ours'])} | {paper} "
            f"| {c['verdict']} | {c['claim']} |"
        )
    out.append("")
    return out


def _html(docs: list[dict[str, Any]]) -> str:
    e = html.escape
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'>",
        "<title>ecnlab: reproduced figures</title>",
        "<style>body{font-family:sans-serif;max-width:1200px;margin:auto}"
        "table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:2px 6px;font-size:13px}.matches{background:#dfd}"
        ".same{background:#ffd}.differs{background:#fdd}img{max-width:100%}</style></head><body>",
        "<h1>ecnlab: the papers' figures, reproduced</h1><table><tr><th>figure</th><th>run</th>"
        "<th>points</th><th>matches</th><th>same direction</th><th>differs</th></tr>",
    ]
    for d in docs:
        v = d["verdicts"]
        run = "quick" if d.get("quick") else "full"
        parts.append(
            f"<tr><td><a href='#{e(d['id'])}'>{e(d['id'])}</a></td><td>{run}</td>"
            f"<td>{d['sweep']['points']}</td><td>{v['matches']}</td><td>{v['same direction']}</td>"
            f"<td>{v['differs']}</td></tr>"
        )
    parts.append("</table>")
    for d in docs:
        head = f"{d['id']}: {d['paper']} {d['figure']} — {d['title']}"
        parts.append(f"<h2 id='{e(d['id'])}'>{e(head)}</h2>")
        parts.append(f"<p>{e(d['description'])} Source: {e(d['source'])}.</p>")
        parts.append(f"<img src='{e(d.get('png', d['id'] + '.png'))}'>")
        parts.append(
            "<table><tr><th>panel</th><th>series</th><th>x</th><th>ours</th><th>paper</th>"
            "<th>verdict</th><th>claim</th></tr>"
        )
        for c in d["points"]:
            title = d["panels"][c["panel"]]["title"]
            paper = _fmt(c["paper"]) if isinstance(c["paper"], (int, float)) else "(trend)"
            cls = c["verdict"].split()[0]
            parts.append(
                f"<tr class='{cls}'><td>{e(title)}</td><td>{e(str(c['series']))}</td>"
                f"<td>{e(_fmt(c['x']))}</td>"
                f"<td>{e(_fmt(c['ours']))}</td><td>{e(paper)}</td><td>{e(c['verdict'])}</td>"
                f"<td>{e(c['claim'])}</td></tr>"
            )
        parts.append("</table>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
