"""The gallery's claims tables and verdict summaries (issue 53, issue 55
item 5): the papers' headline claims judged from record/
(``ecnlab.reproduce.claims``), and each figure's point verdicts recomputed
by today's rules (``ecnlab.reproduce.rejudge``) beside the counts its
record stored when it was made. Tables here have at most four columns of
wrapping text, so that they fit the content column of a laptop screen."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from ecnlab.reproduce import load_figure, rejudge
from ecnlab.reproduce.claims import (
    CLAIM_VERDICTS,
    counts,
    evaluate_claims,
    load_claims,
    number,
)
from ecnlab.reproduce.verdict import VERDICTS

BADGE = {v: f"**{v}**" for v in CLAIM_VERDICTS}
"""The verdict as the table shows it (plain words: no emoji font needed)."""


def _cell(value: Any) -> str:
    return "" if value is None else str(value).replace("|", "\\|").replace("\n", " ")


def claim_results(root: Path) -> list[dict[str, Any]]:
    """Every declared claim judged from ``root/record`` (none where the tree
    declares none)."""
    if not any((root / "experiments" / "claims").glob("*.toml")):
        return []
    return evaluate_claims(load_claims(root=root / "experiments" / "claims"), root / "record")


def _amount(v: float | None, of: str) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    if of == "change" and not math.isinf(v):
        return f"{v:+.1%}"
    return number(v)


def _ours(t: dict[str, Any]) -> str:
    of = t.get("of", "value")
    text = f"**{_amount(t['mean'], of)}**"
    if t.get("ci_low") is not None:
        text += f" [{_amount(t['ci_low'], of)}, {_amount(t['ci_high'], of)}]"
    stated = t.get("stated")
    if stated is None:
        paper = "an order, no size"
    else:
        lo, hi = stated
        paper = _amount(lo, of) if lo == hi else f"{_amount(lo, of)} to {_amount(hi, of)}"
        band = t["band"]
        paper += f" (reproduced within {_amount(band[0], of)} to {_amount(band[1], of)})"
    return f"{text} against the paper's {paper}; {_cell(t['quantity'])}"


def _deciding(r: dict[str, Any]) -> dict[str, Any] | None:
    """The test that decides a claim's verdict (the first with the worst)."""
    tests = r["tests"]
    for t in tests:
        if t["verdict"] == r["verdict"]:
            return t
    return tests[0] if tests else None


def claim_row(r: dict[str, Any], link: bool = True) -> str:
    claim = r["claim"]
    figures = ", ".join(f"[{f}]({f}.md)" if link else f for f in claim.figures)
    what = f"{_cell(claim.says)} <br>*{_cell(claim.source)}*" + (f"; {figures}" if figures else "")
    t = _deciding(r)
    if t is None:
        ours = _cell(r["why"])
    else:
        ours = _ours(t)
        if len(r["tests"]) > 1:
            c = counts(r["tests"])
            ours += (
                f" <br>({len(r['tests'])} tests: "
                + ", ".join(f"{n} {v}" for v, n in c.items() if n)
                + ")"
            )
    tol = f" <br>Tolerance: {_cell(claim.tolerance_text)}" if claim.tolerance_text else ""
    return f"| {what}{tol} | {ours} | {BADGE[r['verdict']]} |"


HEAD = (
    "| The paper's claim (our words, its numbers) | Ours [95% interval] | Verdict |\n|---|---|---|"
)


def claims_tables(root: Path) -> str:
    """The claims table, one per paper, with the totals first."""
    results = claim_results(root)
    total = counts(results)
    out = [
        f"{len(results)} headline claims of the five papers: "
        + ", ".join(f"**{n} {v}**" for v, n in total.items())
        + ". Each claim's tolerance was written beside it before its verdict was computed "
        "(`experiments/claims/*.toml`); `ecnlab reproduce --claims [PAPER]` prints the same "
        "from `record/`, every test of every claim included.\n"
    ]
    by_paper: dict[str, list[dict[str, Any]]] = {}
    for r in results:
        by_paper.setdefault(r["claim"].paper, []).append(r)
    for paper, rows in by_paper.items():
        c = counts(rows)
        out.append(f"### {paper}\n")
        out.append(", ".join(f"{n} {v}" for v, n in c.items() if n) + ".\n")
        out.append(HEAD)
        out += [claim_row(r) for r in rows]
        out.append("")
    return "\n".join(out)


def figure_claims(root: Path, fid: str, results: list[dict[str, Any]] | None = None) -> str:
    """The headline claims one figure tests, as a table (or a line saying
    there are none)."""
    results = results if results is not None else claim_results(root)
    mine = [r for r in results if fid in r["claim"].figures]
    if not mine:
        return "No headline claim of the paper rests on this figure alone.\n"
    return "\n".join([HEAD, *[claim_row(r, link=False) for r in mine], ""])


def point_counts(
    root: Path, fid: str
) -> tuple[dict[str, int], dict[str, int], dict[str, int]] | None:
    """(today's counts, counts of claims the paper does not make, the counts
    the record stored when it was made) for a recorded figure."""
    path = root / "record" / fid / f"{fid}.json"
    if not path.is_file():
        return None
    rec = json.loads(path.read_text(encoding="utf-8"))
    fig = load_figure(fid, root / "experiments")
    now = rejudge(fig, rec)
    return now["verdicts"], now["verdicts_implied"], dict(rec.get("verdicts") or {})


def counts_text(c: dict[str, int]) -> str:
    return " / ".join(str(c.get(v, 0)) for v in VERDICTS)


def rejudged_points(root: Path, fid: str) -> list[dict[str, Any]]:
    path = root / "record" / fid / f"{fid}.json"
    rec = json.loads(path.read_text(encoding="utf-8"))
    return rejudge(load_figure(fid, root / "experiments"), rec)["points"]


__all__ = [
    "BADGE",
    "CLAIM_VERDICTS",
    "claim_results",
    "claims_tables",
    "counts_text",
    "figure_claims",
    "point_counts",
    "rejudged_points",
]
