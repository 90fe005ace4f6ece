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
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from .._atomic import atomic_write
from .._json import finite
from ..errors import ConfigError
from ..plots import amounts
from ..sweep import Point, run_sweep
from ..sweep.store import Store
from .figure import (
    SEED_KEY,
    Expect,
    Figure,
    Panel,
    experiments_root,
    figure_ids,
    load_figure,
)
from .metrics import PointView, curve, metric
from .noise import mean_interval
from .verdict import (
    VERDICTS,
    is_order,
    judge_best,
    judge_point,
    judge_trend,
    noise_check,
    rule_text,
)

__all__ = [
    "DEFAULT_OUT",
    "Figure",
    "evaluate",
    "experiments_root",
    "figure_ids",
    "load_figure",
    "rejudge",
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
    record: str | Path | None = None,
    record_quick: bool = False,
    notify: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Run figure ``fid`` and write ``out/<fid>.png`` and ``out/<fid>.json``;
    returns the JSON document. The points go to ``store`` (default
    ``out/store``, shared by every figure reproduced into ``out``).
    ``record``: also write the figure's record into ``record/<fid>/``
    (:mod:`.record`; refused for a quick run unless ``record_quick``, for
    tests and a look at the format). ``notify``: the sweep's notices
    (default: standard error)."""
    fig = load_figure(fid)
    if record is not None and quick and not record_quick:
        raise ConfigError(
            "--record keeps full-scale runs only: a --quick reproduction is not recorded "
            "(drop --quick, or drop --record)"
        )
    spec = fig.sweep.quick() if quick else fig.sweep
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    store_path = Path(store) if store is not None else out / STORE_NAME
    start = time.monotonic()
    # A record draws only on runs by this engine build, or by another build
    # of the same model version whose runs were carried in the repository
    # and a sample of them ran again identically (.carry; figures drawn
    # from summary columns only); any other stored run runs again.
    carried: dict[str, Any] | None = None
    trusted: frozenset[str] = frozenset()
    writer = None
    if record is not None:
        from .carry import carry_in
        from .metrics import reads_tables

        carried, trusted, writer = carry_in(
            fid, spec, store_path, Path(record),
            import_points=not reads_tables(fig.panels),
            workers=workers, scheduler=scheduler, progress=progress, notify=notify,
        )  # fmt: skip
    try:
        report = run_sweep(
            spec,
            store_path,
            workers=workers,
            scheduler=scheduler,
            progress=progress,
            same_build=record is not None,
            trusted_builds=trusted,
            on_point=writer.add if writer is not None else None,
            notify=notify,
        )
    finally:
        # Interrupted or not, what finished is in the carry file.
        if writer is not None:
            writer.flush()
    st = Store(store_path, create=False)
    doc = evaluate(fig, report.points, st)
    doc["quick"] = quick
    doc["seeds"] = fig.quick_seeds if quick else fig.seeds
    doc["seedless"] = fig.seedless or None
    notes = fig.folder / "NOTES.md"
    # The figure's notes page: as the repository names it (stable, what the
    # record keeps) and where it is on this machine (what a report links).
    doc["notes"] = f"experiments/{fid}/NOTES.md"
    doc["notes_path"] = str(notes.resolve()) if notes.is_file() else None
    doc["model_version"] = _model_version()
    doc["store"] = str(store_path)
    doc["sweep"] = {
        "points": report.total,
        "already_in_store": report.already,
        "ran": report.ran,
        "reused_other_build": report.reused_other_build,
        "rerun_other_build": report.rerun_other_build,
        "failed": len(report.failed),
        "errors": sorted({r.error for r in report.failed})[:5],
    }
    # The stored points the figure is drawn from (read once: a point.json each).
    keys = {p.key for p in report.points}
    drawn = [r for r in st.records() if r.key in keys]
    if carried is not None and (carried["imported"] or carried["verified"]):
        # Which builds made them.
        made: dict[str, int] = {}
        for r in drawn:
            if r.status == "ok":
                made[r.build] = made.get(r.build, 0) + 1
        doc["carried"] = {**carried, "builds": dict(sorted(made.items()))}
    doc["wall_seconds"] = round(time.monotonic() - start, 3)
    doc["cpu_seconds"] = round(sum(float(r.wall_seconds) for r in drawn), 3)
    from .draw import draw_figure

    png = draw_figure(fig, doc, out / f"{fid}.png", quick=quick)
    doc["png"] = png.name
    with atomic_write(out / f"{fid}.json", "w") as handle:
        handle.write(json.dumps(finite(doc), indent=2, allow_nan=False) + "\n")
    if record is not None:
        from ..engine_build import build_identity
        from ..runner import load_engine
        from .record import write_record

        rows = [r.row() for r in drawn]
        build = build_identity()
        foreign = sorted(
            r["key"]
            for r in rows
            if r["status"] == "ok" and r["build"] != build and r["build"] not in trusted
        )
        # run_sweep(same_build=True) reran them: a guard, never expected (a
        # rerun that failed keeps the old run; write_record refuses it).
        if foreign and not report.failed:
            raise ConfigError(
                f"--record: {len(foreign)} point(s) of {fid} in {store_path} were made by "
                f"another engine build than {build} (first {foreign[0]}); not recorded"
            )
        folder = write_record(
            doc,
            png,
            rows,
            record,
            model_version=doc["model_version"],
            engine=str(load_engine().version()),
            build=build,
            quick_ok=record_quick,
        )
        doc["record"] = str(folder)
        if writer is not None:
            writer.drop()
    return doc


def _model_version() -> int:
    from ..runner import load_engine

    return int(load_engine().model_version())


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
    checks = _sorted_checks(checks, panels)
    covered = {
        (c["panel"], c["series"], json.dumps(x)) for c in checks for x in c.get("xs", [c["x"]])
    }
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
    counts, implied = verdict_counts(checks)
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
        "verdicts_implied": implied,
    }


def verdict_counts(checks: list[dict[str, Any]]) -> tuple[dict[str, int], dict[str, int]]:
    """The verdict counts of the paper's own claims, and apart from them
    those of claims the paper does not make (``implied``: never matches)."""
    stated = [c for c in checks if not c.get("implied")]
    ours = [c for c in checks if c.get("implied")]
    return (
        {v: sum(1 for c in stated if c["verdict"] == v) for v in VERDICTS},
        {v: sum(1 for c in ours if c["verdict"] == v) for v in VERDICTS},
    )


def rejudge(fig: Figure, rec: Mapping[str, Any]) -> dict[str, Any]:
    """The figure's verdicts by today's rules from a record's panels (each
    point's per-seed values are kept there), without running anything:
    ``points``, ``verdicts`` and ``verdicts_implied`` as :func:`evaluate`
    would write them."""
    panels = list(rec.get("panels") or [])
    checks: list[dict[str, Any]] = []
    for i, panel in enumerate(fig.panels):
        if i >= len(panels) or panels[i].get("kind") not in ("line", "bar"):
            continue
        for e in fig.expects:
            if e.panel == i:
                checks += _judge(e, panel, panels[i]["series"])
    checks = _sorted_checks(checks, panels)
    counts, implied = verdict_counts(checks)
    return {"points": checks, "verdicts": counts, "verdicts_implied": implied}


def x_order(x: Any) -> tuple[int, float, str]:
    """Sort key of an x value: amounts by value ("8pkt" before "83pkt"),
    then anything else as text."""
    found = amounts([x])
    if found is not None:
        return (0, found[0][0], "")
    return (1, 0.0, str(x))


def _sorted_checks(
    checks: list[dict[str, Any]], panels: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Verdicts by panel, then series (in the panel's order), then x by value
    (a stable sort: one point's several claims keep their order)."""

    def series_rank(c: dict[str, Any]) -> int:
        names = list(panels[c["panel"]].get("series", {}))
        return names.index(c["series"]) if c["series"] in names else len(names)

    return sorted(checks, key=lambda c: (c["panel"], series_rank(c), x_order(c["x"])))


def _group(points: list[Point], key: str) -> dict[str, list[Point]]:
    groups: dict[str, list[Point]] = {}
    for p in points:
        groups.setdefault(_label(_param(p, key)), []).append(p)
    return groups


def _mean(values: list[float]) -> float:
    good = [v for v in values if not math.isnan(v)]
    return sum(good) / len(good) if good else math.nan


def _panel_values(panel: Panel, points: list[Point], view: Any) -> dict[str, list[dict[str, Any]]]:
    """{series: [{x, ours, ci_low, ci_high, n, seeds, per_seed}]} in grid order.

    Each seed's value first (averaged over the keys that are neither x,
    series nor the seed; reduced over ``reduce.over``; normalised by the
    ``normalize`` series' value at the same x and seed, so a ratio is paired
    on the flows that seed draws), then ``ours``: the mean over the seeds,
    with its 95% interval (``ci_low``, ``ci_high``; null for one seed) and ``n``,
    the seeds with a value (:mod:`.noise`)."""
    raw: dict[str, dict[str, dict[Any, list[tuple[Any, float]]]]] = {}
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
        seed = p.params.get(SEED_KEY)
        for label, name, args in measures:
            s = label if label is not None else _label(_param(p, panel.series))
            value = metric(v, name, args) if v is not None else math.nan
            by_seed = raw.setdefault(s, {}).setdefault(xk, {})
            by_seed.setdefault(seed, []).append((over, value))
    per_seed: dict[str, dict[str, dict[Any, float]]] = {}
    for s, by_x in raw.items():
        for xk, by_seed in by_x.items():
            per_seed.setdefault(s, {})[xk] = {
                seed: _reduce(panel.reduce, pairs) if panel.reduce else _mean([v for _, v in pairs])
                for seed, pairs in by_seed.items()
            }
    if panel.normalize:
        base = per_seed.get(panel.normalize, {})
        normalized: dict[str, dict[str, dict[Any, float]]] = {}
        for s, by_x in per_seed.items():
            for xk, values in by_x.items():
                ref = base.get(xk, {})
                normalized.setdefault(s, {})[xk] = {
                    seed: _ratio(v, ref.get(seed, math.nan)) for seed, v in values.items()
                }
    out: dict[str, list[dict[str, Any]]] = {}
    for s, by_x in per_seed.items():
        rows = []
        for xk, values in by_x.items():
            seeds = sorted(values, key=lambda k: (k is None, k))
            shown = normalized[s][xk] if panel.normalize else values
            iv = mean_interval([shown[k] for k in seeds])
            row: dict[str, Any] = {
                "x": xs[xk],
                "ours": iv.mean,
                "ci_low": None if math.isnan(iv.low) else iv.low,
                "ci_high": None if math.isnan(iv.high) else iv.high,
                "n": iv.n,
                "seeds": [k for k in seeds if k is not None],
                "per_seed": [shown[k] for k in seeds],
            }
            if panel.normalize:
                row["raw"] = mean_interval([values[k] for k in seeds]).mean
            rows.append(row)
        out[s] = rows
    return out


def _ratio(value: float, ref: float) -> float:
    return value / ref if ref and not math.isnan(ref) else math.nan


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
        than_by_x = {json.dumps(r["x"]): r for r in series.get(e.than or "", [])}
        if e.rule in ("best_below", "best_above"):
            pairs = [
                (r["ours"], than_by_x.get(json.dumps(r["x"]), {}).get("ours", math.nan))
                for r in chosen
            ]
            at, verdict = judge_best(e, pairs)
            chosen = chosen[at : at + 1]
        if trend is not None:
            # One verdict per series, counted once (issue 53: not copied
            # onto every point of the series).
            if chosen:
                out.append(_trend_check(e, s, chosen, trend, text))
            continue
        for r in chosen:
            than_row = than_by_x.get(json.dumps(r["x"])) if e.than else None
            if e.rule in ("best_below", "best_above"):
                paper = e.paper
            else:
                than = than_row["ours"] if than_row is not None else None
                verdict, paper = judge_point(e, r["ours"], than, normalized)
            noise = noise_check(e, r, than_row)
            final = verdict
            if noise is not None and noise["holds"] and verdict != "matches":
                final = "within noise"
            if (
                verdict == "matches"
                and is_order(e)
                and noise is not None
                and noise["ci_low"] <= noise["target"] <= noise["ci_high"]
            ):
                # An order holds at the mean but the seeds cannot tell it
                # from its boundary: not a match.
                final = "within noise"
            check = {
                "panel": e.panel,
                "series": s,
                "x": r["x"],
                "ours": r["ours"],
                "ci_low": r.get("ci_low"),
                "ci_high": r.get("ci_high"),
                "n": r.get("n", 1),
                # The paper's number for this point, or its stated trend.
                "paper": paper if e.rule == "value" else e.text,
                "kind": e.rule,
                "claim": e.text,
                "source": e.source,
                "verdict": final,
                "verdict_point": verdict,
                "rule": text,
            }
            if noise is not None:
                check["noise"] = {k: v for k, v in noise.items() if k != "holds"}
            if e.implied:
                check["implied"] = e.implied
            out.append(check)
    return out


def _trend_check(
    e: Expect, series: str, rows: list[dict[str, Any]], verdict: str, text: str
) -> dict[str, Any]:
    """A trend's one verdict for a series: x names the span, ``xs`` and
    ``values`` the points it was read from."""
    xs = [r["x"] for r in rows]
    check: dict[str, Any] = {
        "panel": e.panel,
        "series": series,
        "x": f"{_label(xs[0])} .. {_label(xs[-1])}" if len(xs) > 1 else xs[0],
        "xs": xs,
        "values": [r["ours"] for r in rows],
        "ours": None,
        "ci_low": None,
        "ci_high": None,
        "n": min((r.get("n", 1) for r in rows), default=0),
        "paper": e.text,
        "kind": e.rule,
        "claim": e.text,
        "source": e.source,
        "verdict": verdict,
        "verdict_point": verdict,
        "rule": text,
    }
    if e.implied:
        check["implied"] = e.implied
    return check
