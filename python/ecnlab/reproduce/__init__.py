"""Reproducing the papers' figures: ``ecnlab reproduce ID``.

A figure is a folder ``experiments/<id>/`` (see :mod:`.figure` and
``experiments/README.md``). Reproducing it runs its sweep into a store
(resumable: a rerun only runs what is missing), computes each panel's
series, judges them against the paper (:mod:`.verdict`), and writes
``<out>/<id>.png`` and ``<out>/<id>.json``.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..plots import normalize_series
from ..results import atomic_write
from ..store import Store
from ..sweep import Point, run_sweep
from .figure import Expect, Figure, Panel, experiments_root, figure_ids, load_figure
from .metrics import PointView, curve, metric
from .verdict import VERDICTS, judge_best, judge_point, judge_trend, rule_text

__all__ = [
    "DEFAULT_OUT",
    "Figure",
    "evaluate",
    "experiments_root",
    "figure_ids",
    "load_figure",
    "reproduce",
]

DEFAULT_OUT = Path("results") / "reproduce"
STORE_NAME = "store"


def reproduce(
    fid: str,
    out: str | Path = DEFAULT_OUT,
    quick: bool = False,
    workers: int | None = None,
    scheduler: str | None = None,
    progress: bool | None = None,
    store: str | Path | None = None,
) -> dict[str, Any]:
    """Run figure ``fid`` and write ``out/<fid>.png`` and ``out/<fid>.json``;
    returns the JSON document. The points go to ``store`` (default
    ``out/store``, shared by every figure reproduced into ``out``)."""
    fig = load_figure(fid)
    spec = fig.sweep.quick() if quick else fig.sweep
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    store_path = Path(store) if store is not None else out / STORE_NAME
    start = time.monotonic()
    report = run_sweep(spec, store_path, workers=workers, scheduler=scheduler, progress=progress)
    st = Store(store_path, create=False)
    doc = evaluate(fig, report.points, st)
    doc["quick"] = quick
    doc["store"] = str(store_path)
    doc["sweep"] = {
        "points": report.total,
        "already_in_store": report.already,
        "ran": report.ran,
        "failed": len(report.failed),
        "errors": sorted({r.error for r in report.failed})[:5],
    }
    doc["wall_seconds"] = round(time.monotonic() - start, 3)
    doc["cpu_seconds"] = round(
        sum(float(r.wall_seconds) for r in st.records() if r.key in {p.key for p in report.points}),
        3,
    )
    from .draw import draw_figure

    png = draw_figure(fig, doc, out / f"{fid}.png", quick=quick)
    doc["png"] = png.name
    with atomic_write(out / f"{fid}.json", "w") as handle:
        handle.write(json.dumps(_clean(doc), indent=2, allow_nan=False) + "\n")
    return doc


def _clean(value: Any) -> Any:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


# --------------------------------------------------------------------------- evaluation


def _label(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _param(p: Point, key: str) -> Any:
    return p.case if key == "case" else p.params.get(key)


def _matches(p: Point, where: Mapping[str, Any]) -> bool:
    return all(_param(p, k) == v for k, v in where.items())


def evaluate(fig: Figure, points: list[Point], store: Store) -> dict[str, Any]:
    """Every panel's data and every expectation's verdicts (no drawing)."""
    index = {r.key: r for r in store.records()}
    views: dict[str, PointView] = {}

    def view(key: str) -> PointView | None:
        rec = index.get(key)
        if rec is None or rec.status != "ok":
            return None
        if key not in views:
            views[key] = PointView(store, key, rec.row())
        return views[key]

    panels = []
    checks: list[dict[str, Any]] = []
    for i, panel in enumerate(fig.panels):
        chosen = [p for p in points if _matches(p, panel.where)]
        if panel.kind in ("line", "bar"):
            series = _panel_values(panel, chosen, view)
            panels.append(
                {
                    "title": panel.title,
                    "kind": panel.kind,
                    "metric": panel.metric,
                    "x": panel.x,
                    "normalize": panel.normalize,
                    "series": series,
                }
            )
            for e in fig.expects:
                if e.panel == i:
                    checks += _judge(e, panel, series)
        else:
            curves = {}
            for label, members in _group(chosen, panel.series).items():
                xs: list[float] = []
                ys: list[float] = []
                used = 0
                for p in members:
                    v = view(p.key)
                    if v is None:
                        continue
                    x, y = curve(v, panel.curve, panel.args)
                    used += 1
                    if panel.kind == "timeseries":  # one run per series: the first seed
                        xs, ys = list(map(float, x)), list(map(float, y))
                        break
                    xs += list(map(float, x))
                if panel.kind == "cdf" and xs:
                    xs.sort()
                    ys = [(k + 1) / len(xs) for k in range(len(xs))]
                curves[label] = {"x": xs, "y": ys, "runs": used}
            panels.append(
                {"title": panel.title, "kind": panel.kind, "curve": panel.curve, "curves": curves}
            )
    covered = {(c["panel"], c["series"], json.dumps(c["x"])) for c in checks}
    unjudged = []
    for i, pdata in enumerate(panels):
        if pdata["kind"] not in ("line", "bar"):
            continue
        for s, pts in pdata["series"].items():
            if s == pdata["normalize"]:
                continue
            for pt in pts:
                if (i, s, json.dumps(pt["x"])) not in covered:
                    unjudged.append({"panel": i, "series": s, "x": pt["x"], "ours": pt["ours"]})
    counts = {v: sum(1 for c in checks if c["verdict"] == v) for v in VERDICTS}
    return {
        "id": fig.id,
        "paper": fig.paper,
        "figure": fig.figure,
        "title": fig.title,
        "description": fig.description,
        "source": fig.source,
        "panels": panels,
        "points": checks,
        "unjudged": unjudged,
        "verdicts": counts,
    }


def _group(points: list[Point], key: str) -> dict[str, list[Point]]:
    groups: dict[str, list[Point]] = {}
    for p in points:
        groups.setdefault(_label(_param(p, key)), []).append(p)
    return groups


def _mean(values: list[float]) -> float:
    good = [v for v in values if not math.isnan(v)]
    return sum(good) / len(good) if good else math.nan


def _panel_values(panel: Panel, points: list[Point], view: Any) -> dict[str, list[dict[str, Any]]]:
    """{series: [{x, ours, n}]} in grid order, averaged over the keys that
    are neither x nor series (seeds), reduced and normalised as asked."""
    raw: dict[str, dict[str, list[tuple[Any, float]]]] = {}
    xs: dict[str, Any] = {}
    # One series per metric when the panel lists several, else per value
    # of the series key.
    measures = [(m["label"], m["metric"], m.get("args", {})) for m in panel.metrics] or [
        (None, panel.metric, panel.args)
    ]
    for p in points:
        xv = _param(p, panel.x)
        xk = json.dumps(xv)
        xs.setdefault(xk, xv)
        v = view(p.key)
        over = _param(p, panel.reduce["over"]) if panel.reduce else None
        for label, name, args in measures:
            s = label if label is not None else _label(_param(p, panel.series))
            value = metric(v, name, args) if v is not None else math.nan
            raw.setdefault(s, {}).setdefault(xk, []).append((over, value))
    out: dict[str, list[dict[str, Any]]] = {}
    for s, by_x in raw.items():
        rows = []
        for xk, pairs in by_x.items():
            if panel.reduce:
                value = _reduce(panel.reduce, pairs)
            else:
                value = _mean([v for _, v in pairs])
            rows.append({"x": xs[xk], "ours": value, "n": len(pairs)})
        out[s] = rows
    if panel.normalize:
        normalize_series(out, panel.normalize)
    return out


def _reduce(spec: Mapping[str, Any], pairs: list[tuple[Any, float]]) -> float:
    """Reduce a sweep over ``spec['over']`` to one number. ``last_above``:
    the largest value of the swept key reached before the metric (mean over
    seeds) first drops below ``floor`` (Tuning ECN Fig. 9's "most senders
    above 600 Mbps")."""
    rule = spec.get("rule", "last_above")
    by_over: dict[Any, list[float]] = {}
    for over, v in pairs:
        by_over.setdefault(over, []).append(v)
    ordered = sorted(by_over.items(), key=lambda kv: kv[0])
    if rule == "last_above":
        floor = float(spec["floor"])
        best = math.nan
        for over, values in ordered:
            if _mean(values) < floor:
                break
            best = float(over)
        return best
    raise ValueError(f"unknown reduce rule {rule!r}")


def _judge(
    e: Expect, panel: Panel, series: dict[str, list[dict[str, Any]]]
) -> list[dict[str, Any]]:
    names = e.series or [s for s in series if s not in (panel.normalize, e.than)]
    normalized = panel.normalize is not None
    text = rule_text(e, normalized)
    out = []
    for s in names:
        rows = series.get(s)
        if rows is None:
            raise ConfigError(
                f"expectation on panel {e.panel + 1} ({e.text!r}): no series {s!r}; "
                f"the panel draws {', '.join(repr(k) for k in series)}"
            )
        chosen = [r for r in rows if e.x is None or r["x"] in e.x]
        trend = None
        if e.rule in ("increasing", "decreasing", "flat"):
            trend = judge_trend(e, [r["ours"] for r in chosen])
        if e.than is not None and e.than not in series:
            raise ConfigError(
                f"expectation on panel {e.panel + 1} ({e.text!r}): than = {e.than!r} is not a "
                f"series; the panel draws {', '.join(repr(k) for k in series)}"
            )
        than_rows = {json.dumps(r["x"]): r["ours"] for r in series.get(e.than or "", [])}
        if e.rule in ("best_below", "best_above"):
            pairs = [(r["ours"], than_rows.get(json.dumps(r["x"]), math.nan)) for r in chosen]
            at, verdict = judge_best(e, pairs)
            chosen = chosen[at : at + 1]
        for r in chosen:
            if e.rule in ("best_below", "best_above"):
                paper = e.paper
            elif trend is not None:
                verdict, paper = trend, e.paper
            else:
                than = than_rows.get(json.dumps(r["x"])) if e.than else None
                verdict, paper = judge_point(e, r["ours"], than, normalized)
            out.append(
                {
                    "panel": e.panel,
                    "series": s,
                    "x": r["x"],
                    "ours": r["ours"],
                    # The paper's number for this point, or its stated trend.
                    "paper": paper if e.rule == "value" else e.text,
                    "kind": e.rule,
                    "claim": e.text,
                    "source": e.source,
                    "verdict": verdict,
                    "rule": text,
                }
            )
    return out
