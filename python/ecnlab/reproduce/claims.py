"""The papers' headline claims, judged from the record: ``ecnlab reproduce --claims``.

A figure's points (:mod:`.verdict`) say how close each plotted number is;
a reader of a paper asks something else: does what the paper *claims*
hold? Each paper's claims are declared in ``experiments/claims/<paper>.toml``
(its abstract, its evaluation's summary sentences, each figure's stated
result, in our words with the paper's numbers and where they are), each
with the quantity of the record that tests it and a tolerance written
beside it before the verdict is computed. The verdict is one of

- ``reproduced``: our mean of the stated quantity lies in the paper's
  stated range (or at its number) widened by the written tolerance; for an
  order claim with no size, the order holds beyond the 95% interval of
  the paired difference over seeds;
- ``direction only``: not that size, but the paper's side of the null
  (0 for a change, 1 for a ratio) holds beyond our 95% interval;
- ``not reproduced``: neither (reversed, or a tie within our noise);
- ``not testable here``: the record cannot say (the claim says why).

A claim with several tests takes the worst of their verdicts.

The quantity is the one the paper states (a loss, a gap, a ratio), taken
seed by seed on the record's per-seed values (the seeds pair the flows of
every scheme), so its interval is the paired one.
"""

from __future__ import annotations

import itertools
import json
import math
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from .noise import mean_interval

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.9/3.10
    import tomli as tomllib

__all__ = [
    "CLAIM_VERDICTS",
    "Claim",
    "claims_root",
    "evaluate_claims",
    "format_claims",
    "load_claims",
]

CLAIM_VERDICTS = ("reproduced", "direction only", "not reproduced", "not testable here")
"""Best first; a claim of several tests takes the worst."""

QUANTITIES = ("value", "ratio", "change", "diff")
"""What a test measures from point a (and reference point b), seed by seed:
a; a / b; a / b - 1 (a negative change: a below b); a - b."""

NULL = {"ratio": 1.0, "change": 0.0, "diff": 0.0}
"""The value meaning "no effect", against which a direction is judged."""

OVER = ("at", "each", "best")
"""How a test with several x is read: ``at`` one x; ``each``: the claim
holds at every x (the worst x decides); ``best``: the paper's "up to":
judged at our most extreme x in the paper's direction."""

PAPERS = ("mqecn", "tuning-ecn", "cedm", "mlecn", "fqcodel")
"""The claims files in the order the table lists them (the gallery's)."""

_CLAIM_KEYS = {"id", "source", "says", "figure", "test", "untestable", "note", "tolerance"}
_TEST_KEYS = {
    "figure",
    "panel",
    "series",
    "x",
    "over",
    "of",
    "than",
    "than_x",
    "loss_from",
    "paper",
    "range",
    "tolerance",
    "tolerance_abs",
    "sense",
    "null",
    "what",
}


@dataclass
class Test:
    """One quantity of one figure's record and what the paper says it is."""

    figure: str
    panel: int  # from 0 (the TOML counts from 1, as figure.toml does)
    series: str
    x: list[Any]
    over: str = "at"
    of: str = "value"
    than: str | None = None  # the reference point's series (default: the same)
    than_x: Any = None  # the reference point's x (default: the same)
    loss_from: float | None = None  # judge C - v (a loss from capacity C), not v
    band: tuple[float, float] | None = None  # the paper's range, before the tolerance
    tolerance: float = 0.0  # relative to the stated bound(s)
    tolerance_abs: float = 0.0
    sense: str | None = None  # "above" / "below" the null: the paper's direction
    null: float | None = None
    what: str = ""


@dataclass
class Claim:
    """A headline claim of a paper and the tests of it."""

    id: str
    paper: str
    source: str
    says: str
    figures: list[str]
    tests: list[Test] = field(default_factory=list)
    untestable: str = ""
    note: str = ""
    tolerance_text: str = ""


def claims_root() -> Path:
    """``experiments/claims/`` (beside the figure folders)."""
    from .figure import experiments_root

    return experiments_root() / "claims"


def _bad(where: str, message: str) -> ConfigError:
    return ConfigError(f"{where}: {message}")


def load_claims(paper: str | None = None, root: Path | None = None) -> list[Claim]:
    """Every declared claim (of one paper: a file stem such as ``mqecn`` or
    the paper's name), in file then declaration order."""
    root = root or claims_root()
    files = sorted(
        root.glob("*.toml"),
        key=lambda f: (PAPERS.index(f.stem) if f.stem in PAPERS else len(PAPERS), f.stem),
    )
    if not files:
        raise ConfigError(f"no claims declared: {root} holds no *.toml")
    chosen = []
    for path in files:
        with path.open("rb") as handle:
            data = tomllib.load(handle)
        name = str(data.get("paper", ""))
        if paper is None or paper.lower() in (path.stem.lower(), name.lower()):
            chosen.append((path, data))
    if not chosen:
        known = ", ".join(p.stem for p in files)
        raise ConfigError(f"--claims {paper!r}: no such paper (papers: {known})")
    out: list[Claim] = []
    for path, data in chosen:
        out += [
            _claim(t, str(data["paper"]), f"{path.name}: claim[{i}]")
            for i, t in enumerate(data.get("claim", []))
        ]
    return out


def _claim(t: Mapping[str, Any], paper: str, where: str) -> Claim:
    unknown = sorted(set(t) - _CLAIM_KEYS)
    if unknown:
        raise _bad(where, f"unknown key {unknown[0]!r} (keys: {', '.join(sorted(_CLAIM_KEYS))})")
    for key in ("id", "source", "says"):
        if not isinstance(t.get(key), str) or not t[key]:
            raise _bad(where, f"{key}: missing; a claim needs a {key} string")
    figures = t.get("figure", [])
    figures = [figures] if isinstance(figures, str) else list(figures)
    tests = [
        test
        for j, raw in enumerate(t.get("test", []))
        for test in _tests(raw, figures, f"{where} ({t['id']}) test[{j}]")
    ]
    untestable = str(t.get("untestable", ""))
    if not tests and not untestable:
        raise _bad(where, f'{t["id"]}: no [[claim.test]]; give one, or untestable = "why"')
    for test in tests:
        if test.figure not in figures:
            figures.append(test.figure)
    return Claim(
        id=t["id"],
        paper=paper,
        source=t["source"],
        says=t["says"],
        figures=figures,
        tests=tests,
        untestable=untestable,
        note=str(t.get("note", "")),
        tolerance_text=str(t.get("tolerance", "")),
    )


def _as_list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else [value]


def _tests(t: Mapping[str, Any], figures: list[str], where: str) -> list[Test]:
    """A declared test, one per combination of its listed panels, series
    and references (a claim "against every other scheme, both schedulers"
    is the worst of them)."""
    unknown = sorted(set(t) - _TEST_KEYS)
    if unknown:
        raise _bad(where, f"unknown key {unknown[0]!r} (keys: {', '.join(sorted(_TEST_KEYS))})")
    figure = t.get("figure", figures[0] if figures else None)
    if not isinstance(figure, str):
        raise _bad(where, "figure: missing (on the test or the claim)")
    of = t.get("of", "value")
    if of not in QUANTITIES:
        raise _bad(where, f"of = {of!r}: expected one of {', '.join(QUANTITIES)}")
    over = t.get("over", "at")
    if over not in OVER:
        raise _bad(where, f"over = {over!r}: expected one of {', '.join(OVER)}")
    band = None
    if "paper" in t and "range" in t:
        raise _bad(where, "paper and range both given; the paper states one or the other")
    if "paper" in t:
        band = (float(t["paper"]), float(t["paper"]))
    elif "range" in t:
        lo, hi = t["range"]
        band = (-math.inf if lo == "-inf" else float(lo), math.inf if hi == "inf" else float(hi))
        if band[0] > band[1]:
            raise _bad(where, f"range = {t['range']!r}: low above high")
    if band is not None and "tolerance" not in t and "tolerance_abs" not in t:
        raise _bad(
            where, "a stated number needs its tolerance written beside it (tolerance = 0.2, ...)"
        )
    null = t.get("null", NULL.get(of))
    sense = t.get("sense")
    if sense is None and band is not None and null is not None:
        if band[0] > null:
            sense = "above"
        elif band[1] < null:
            sense = "below"
    if sense not in (None, "above", "below"):
        raise _bad(where, f"sense = {sense!r}: expected above or below")
    if band is None and sense is None:
        raise _bad(where, 'an order claim needs sense = "above" or "below" (of its null)')
    if over == "best" and sense is None:
        raise _bad(where, "over = \"best\" (the paper's 'up to') needs the paper's direction")
    if "x" not in t:
        raise _bad(where, "x: missing (the point, or the points, the claim is about)")
    xs = _as_list(t["x"])
    if over == "at" and len(xs) != 1:
        raise _bad(where, f'x = {t["x"]!r}: several x need over = "each" or "best"')
    out = []
    combos = list(
        itertools.product(
            _as_list(t.get("panel", 1)), _as_list(t["series"]), _as_list(t.get("than"))
        )
    )
    for panel, series, than in combos:
        what = str(t.get("what", ""))
        if len(combos) > 1:  # say which of the combinations this one is
            what += f" [panel {panel}: {series}" + (f" vs {than}]" if than else "]")
        if of != "value" and than is None and t.get("than_x") is None:
            raise _bad(where, f"of = {of!r} needs than (a series) or than_x (another x)")
        out.append(
            Test(
                figure=figure,
                panel=int(panel) - 1,
                series=str(series),
                x=xs,
                over=over,
                of=of,
                than=than,
                than_x=t.get("than_x"),
                loss_from=t.get("loss_from"),
                band=band,
                tolerance=float(t.get("tolerance", 0.0)),
                tolerance_abs=float(t.get("tolerance_abs", 0.0)),
                sense=sense,
                null=None if null is None else float(null),
                what=what,
            )
        )
    return out


# --------------------------------------------------------------------------- judging


def _same_x(a: Any, b: Any) -> bool:
    return a == b or str(a) == str(b)


def _row(rec: Mapping[str, Any], test: Test, series: str, x: Any) -> Mapping[str, Any]:
    panels = rec.get("panels") or []
    if not 0 <= test.panel < len(panels) or "series" not in panels[test.panel]:
        raise ConfigError(
            f"claim test on {test.figure}: panel {test.panel + 1} is not a line or bar panel "
            f"of its record ({len(panels)} panels)"
        )
    rows = panels[test.panel]["series"].get(series)
    if rows is None:
        names = ", ".join(repr(s) for s in panels[test.panel]["series"])
        raise ConfigError(
            f"claim test on {test.figure} panel {test.panel + 1}: no series {series!r} "
            f"(series: {names})"
        )
    for r in rows:
        if _same_x(r["x"], x):
            return r
    xs = ", ".join(repr(r["x"]) for r in rows)
    raise ConfigError(
        f"claim test on {test.figure} panel {test.panel + 1} series {series!r}: no x {x!r} "
        f"(x: {xs})"
    )


def _per_seed(row: Mapping[str, Any]) -> dict[Any, float]:
    seeds = row.get("seeds") or [None] * len(row.get("per_seed") or [])
    values = row.get("per_seed")
    if values is None:
        return {None: float(row["ours"])}
    return {s: float(v) for s, v in zip(seeds, values) if v is not None and math.isfinite(float(v))}


def _quantity(test: Test, a: dict[Any, float], b: dict[Any, float] | None) -> list[float]:
    def t(v: float) -> float:
        return test.loss_from - v if test.loss_from is not None else v

    if test.of == "value" or b is None:
        return [t(v) for v in a.values()]
    out = []
    for seed, va in a.items():
        if seed not in b:
            continue
        x, y = t(va), t(b[seed])
        if test.of == "diff":
            out.append(x - y)
        elif y:
            out.append(x / y if test.of == "ratio" else x / y - 1.0)
    return out


def _widened(test: Test) -> tuple[float, float] | None:
    if test.band is None:
        return None
    lo, hi = test.band
    return (
        lo - test.tolerance * abs(lo) - test.tolerance_abs,
        hi + test.tolerance * abs(hi) + test.tolerance_abs,
    )


def _judge_one(test: Test, values: list[float]) -> dict[str, Any]:
    iv = mean_interval(values)
    band = _widened(test)
    null = test.null
    # The paper's side of the null, beyond our interval (one run: at the mean).
    side = None
    if test.sense is not None and null is not None and not math.isnan(iv.mean):
        low = iv.low if iv.n >= 2 else iv.mean
        high = iv.high if iv.n >= 2 else iv.mean
        if test.sense == "above":
            side = "holds" if low > null else ("reversed" if iv.mean < null else "noise")
        else:
            side = "holds" if high < null else ("reversed" if iv.mean > null else "noise")
    if math.isnan(iv.mean):
        verdict, why = "not reproduced", "no value in the record"
    elif band is not None and band[0] <= iv.mean <= band[1]:
        verdict, why = "reproduced", "in the paper's range with the tolerance"
    elif band is not None:
        if side == "holds":
            verdict, why = (
                "direction only",
                "the paper's direction beyond our interval, not its size",
            )
        else:
            verdict = "not reproduced"
            why = {"reversed": "the other direction", "noise": "a tie within our noise"}.get(
                side or "", "outside the paper's range"
            )
    elif side == "holds":
        verdict, why = "reproduced", "the order holds beyond our 95% interval"
    else:
        verdict = "not reproduced"
        why = "the other direction" if side == "reversed" else "a tie within our noise"
    return {
        "mean": iv.mean,
        "ci_low": None if math.isnan(iv.low) else iv.low,
        "ci_high": None if math.isnan(iv.high) else iv.high,
        "n": iv.n,
        "band": band,
        "verdict": verdict,
        "why": why,
    }


def _worst(verdicts: list[str]) -> str:
    return max(verdicts, key=CLAIM_VERDICTS.index) if verdicts else "not testable here"


def _margin(test: Test, mean: float) -> float:
    """How far inside its band (or on the paper's side of the null) a mean
    is; negative outside."""
    if math.isnan(mean):
        return -math.inf
    band = _widened(test)
    if band is not None:
        return min(mean - band[0], band[1] - mean)
    if test.null is None:
        return 0.0
    return (mean - test.null) * (1.0 if test.sense == "above" else -1.0)


def judge_test(test: Test, rec: Mapping[str, Any]) -> dict[str, Any]:
    """The test's verdict from a record's JSON, with our number (mean and
    95% interval over seeds of the stated quantity) at the x that decides."""
    at_x = []
    for x in test.x:
        a = _per_seed(_row(rec, test, test.series, x))
        b = None
        if test.of != "value":
            b = _per_seed(
                _row(
                    rec,
                    test,
                    test.than or test.series,
                    test.than_x if test.than_x is not None else x,
                )
            )
        one = _judge_one(test, _quantity(test, a, b))
        one["x"] = x
        at_x.append(one)
    if test.over == "best":
        sign = 1.0 if test.sense == "above" else -1.0
        chosen = max(at_x, key=lambda r: -math.inf if math.isnan(r["mean"]) else sign * r["mean"])
    else:  # the worst x decides; among equals the one nearest to failing
        chosen = max(
            at_x, key=lambda r: (CLAIM_VERDICTS.index(r["verdict"]), -_margin(test, r["mean"]))
        )
    means = [r["mean"] for r in at_x if not math.isnan(r["mean"])]
    return {
        **chosen,
        "figure": test.figure,
        "quantity": describe(test),
        "over": test.over,
        "span": (min(means), max(means)) if len(at_x) > 1 and means else None,
        "stated": test.band,
    }


def describe(test: Test) -> str:
    """The quantity in words: what of which series, at which x."""
    if test.what:
        return test.what
    a = test.series
    if test.loss_from is not None:
        a = f"({test.loss_from:g} - {a})"
    b = test.than or test.series
    if test.loss_from is not None:
        b = f"({test.loss_from:g} - {b})"
    if test.than_x is not None:
        b += f" at {test.than_x}"
    expr = {
        "value": a,
        "ratio": f"{a} / {b}",
        "change": f"{a} / {b} - 1",
        "diff": f"{a} - {b}",
    }[test.of]
    xs = ", ".join(map(str, test.x))
    where = {"at": f"at {xs}", "each": f"at each of {xs}", "best": f"best of {xs}"}[test.over]
    return f"{expr}, panel {test.panel + 1}, {where}"


def evaluate_claims(
    claims: list[Claim], record_root: Path, records: dict[str, Any] | None = None
) -> list[dict[str, Any]]:
    """Each claim with its tests judged from ``record_root/<figure>/``; a
    figure without a record makes its claim not testable here (saying so)."""
    records = records if records is not None else {}
    out = []
    for claim in claims:
        results, missing = [], []
        for test in claim.tests:
            if test.figure not in records:
                path = Path(record_root) / test.figure / f"{test.figure}.json"
                records[test.figure] = (
                    json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None
                )
            rec = records[test.figure]
            if rec is None:
                missing.append(test.figure)
                continue
            results.append(judge_test(test, rec))
        if claim.untestable and not claim.tests:
            verdict, why = "not testable here", claim.untestable
        elif missing:
            verdict = "not testable here"
            why = f"no record of {', '.join(sorted(set(missing)))}"
        else:
            verdict, why = _worst([r["verdict"] for r in results]), ""
        out.append({"claim": claim, "verdict": verdict, "why": why, "tests": results})
    return out


# --------------------------------------------------------------------------- printing


def number(v: float | None) -> str:
    """A number as the table shows it (4 significant digits)."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    if isinstance(v, float) and math.isinf(v):
        return "∞" if v > 0 else "-∞"
    return f"{v:.4g}"


def ours_text(r: Mapping[str, Any]) -> str:
    """Our number: mean [95% interval] n, at the deciding x."""
    text = number(r["mean"])
    if r.get("ci_low") is not None:
        text += f" [{number(r['ci_low'])}, {number(r['ci_high'])}]"
    text += f" n={r['n']}"
    if r.get("span") is not None:
        text += f" (over x: {number(r['span'][0])} .. {number(r['span'][1])}; x = {r['x']})"
    return text


def stated_text(r: Mapping[str, Any]) -> str:
    """The paper's number or range and the band the tolerance makes of it."""
    stated = r.get("stated")
    if stated is None:
        return "order only"
    lo, hi = stated
    paper = number(lo) if lo == hi else f"{number(lo)} .. {number(hi)}"
    band = r.get("band")
    return f"{paper} (reproduced within {number(band[0])} .. {number(band[1])})"


def counts(results: list[dict[str, Any]]) -> dict[str, int]:
    return {v: sum(1 for r in results if r["verdict"] == v) for v in CLAIM_VERDICTS}


def format_claims(results: list[dict[str, Any]]) -> str:
    """The claims table as text, paper by paper."""
    lines: list[str] = []
    by_paper: dict[str, list[dict[str, Any]]] = {}
    for r in results:
        by_paper.setdefault(r["claim"].paper, []).append(r)
    for paper, rows in by_paper.items():
        c = counts(rows)
        lines.append(
            f"{paper}: {len(rows)} claims: " + ", ".join(f"{n} {v}" for v, n in c.items()) + "."
        )
        for r in rows:
            claim: Claim = r["claim"]
            lines.append(
                f"  {claim.id:<14} {r['verdict']:<17} {claim.source} "
                f"({', '.join(claim.figures) or 'no figure'})"
            )
            lines.append(f"      {claim.says}")
            if r["why"]:
                lines.append(f"      {r['why']}")
            for t in r["tests"]:
                lines.append(f"      - {t['figure']}: {t['quantity']}")
                lines.append(
                    f"        ours {ours_text(t)}; paper {stated_text(t)} -> {t['verdict']}"
                )
        lines.append("")
    total = counts(results)
    lines.append(f"{len(results)} claims: " + ", ".join(f"{n} {v}" for v, n in total.items()) + ".")
    return "\n".join(lines)
