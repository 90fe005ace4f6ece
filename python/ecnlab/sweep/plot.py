"""One metric of a sweep store against one of its keys (``ecnlab plot``;
its parser is :mod:`ecnlab.cli.sweep`).

The points come from the store's index (``points.parquet``: one row per
point with its grid keys, such as ``workload.load``, and the scalars of its
summary, such as ``fct_small_p99``). A line is drawn per value of the
``series`` key, with the line drawing of ``ecnlab reproduce``
(:func:`ecnlab.plots.line_series`); points that differ only in keys that are
neither ``x`` nor ``series`` (seeds, say) are averaged, with the 95%
interval of the mean over them as error bars (Student's t, the reproduced
figures' :func:`ecnlab.reproduce.noise.mean_interval`), and the figure's
title says over which. ``normalize`` divides every line by the named one at
the same x, as the papers' "normalized to DCTCP" figures do, point by point
(a seed's value by the same seed's), and the interval is the ratios'.

Axis labels come from the key declarations (:mod:`ecnlab.plot_labels`);
``--title``, ``--xlabel`` and ``--ylabel`` replace them. The figure is sized
for a paper's column (3.5 in wide) or its full width (7 in), and written as
PNG, PDF or SVG.
"""

from __future__ import annotations

import difflib
import json
import math
import re
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from ..plot_labels import key_label, metric_label, unit_label
from .store import BASE_COLUMNS, Store

__all__ = ["SIZES", "PlotError", "StorePlot", "keys_and_metrics", "plot_store"]

PLOTS_DIR = "plots"
SIZES = {"column": (3.5, 2.6, 8.0), "double": (7.0, 3.6, 9.0)}
"""Figure sizes: (width, height in inches, font size in points); a
column of a two-column paper is 3.5 in wide, the page's text 7 in."""
# Index columns that are numbers but not results of the run.
_NOT_METRICS = set(BASE_COLUMNS) - {"wall_seconds"}


class PlotError(ValueError):
    """What was asked for is not in the store: a key, a metric or a value."""


@dataclass
class StorePlot:
    """What :func:`plot_store` drew."""

    path: Path
    x: str
    y: str
    series_key: str | None
    series: dict[str, list[dict[str, Any]]]
    normalize: str | None = None
    points: int = 0
    averaged: dict[str, int] = field(default_factory=dict)
    title: str = ""
    xlabel: str = ""
    ylabel: str = ""
    format: str = "png"
    size: str = "double"


def keys_and_metrics(index: pa.Table) -> tuple[list[str], list[str], list[str]]:
    """``(keys, metrics, empty)`` of a store's index: the keys its points
    differ in (``case`` and the dotted grid keys), the numeric result
    columns, and the result columns no point has a value of."""
    rows = index.to_pylist()
    keys = ["case"] if any(r.get("case") for r in rows) else []
    keys += [n for n in index.column_names if "." in n]
    metrics: list[str] = []
    empty: list[str] = []
    for name, column in zip(index.column_names, index.columns):
        if name in keys or name in _NOT_METRICS:
            continue
        kind = column.type
        if pa.types.is_null(kind):
            empty.append(name)
        elif (pa.types.is_integer(kind) or pa.types.is_floating(kind)) and column.null_count < len(
            column
        ):
            metrics.append(name)
    return keys, metrics, empty


def _suggest(name: str, choices: Sequence[str]) -> str:
    """' (did you mean a or b?)' for the choices close to ``name``, or ''."""
    close = difflib.get_close_matches(name, choices, n=3, cutoff=0.6)
    low = name.lower()
    close += [c for c in choices if low and low in c.lower() and c not in close][: 3 - len(close)]
    if not close:
        return ""
    return " (did you mean " + " or ".join(close) + "?)"


def _label(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _matches(value: Any, text: str) -> bool:
    if _label(value) == text or str(value) == text or json.dumps(value) == text:
        return True
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            return float(text) == float(value)
        except ValueError:
            return False
    return False


def _x_value(value: Any) -> Any:
    """The value as line_series takes it: numbers as they are, the rest as text."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    return _label(value)


def _ordered(values: list[Any]) -> list[Any]:
    """Amounts by size, the rest alphabetically."""
    from ..plots import amounts

    found = amounts(values)
    if found:
        return [v for _, v in sorted(zip(found[0], values), key=lambda p: p[0])]
    return sorted(values, key=str)


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else math.nan


def _y_scale(metric: str, values: list[float]) -> tuple[float, str]:
    """(factor, unit) for showing a metric: times in s, ms or us, rates in Gbps."""
    name = metric.lower()
    if "slowdown" in name or "ratio" in name:
        return 1.0, ""
    if name.endswith("_tput") or name.endswith("_bps"):
        return 1e-9, "Gbps"
    if name.endswith("_gbps") or "goodput_gbps" in name:
        return 1.0, "Gbps"
    seconds = name in ("sim_seconds", "wall_seconds") or (
        name.startswith("fct_") and re.search(r"_(mean|p\d+)$", name) is not None
    )
    if not seconds:
        return 1.0, ""
    top = max((abs(v) for v in values if not math.isnan(v)), default=0.0)
    if top < 1e-3:
        return 1e6, "us"
    if top < 1.0:
        return 1e3, "ms"
    return 1.0, "s"


def _parse_where(items: Sequence[str]) -> list[tuple[str, str]]:
    out = []
    for item in items:
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise PlotError(f"--where {item!r}: expected KEY=VALUE, e.g. switch.marking=mq-ecn")
        out.append((key.strip(), value.strip()))
    return out


def _check_key(option: str, name: str, keys: list[str], metrics: list[str]) -> None:
    if name in keys:
        return
    if name in metrics:
        raise PlotError(
            f"{option} {name!r} is a metric, not a key of the store; "
            f"its keys: {', '.join(keys) or '(none)'}"
        )
    raise PlotError(
        f"{option} {name!r}: not a key of this store{_suggest(name, keys)}; "
        f"its keys: {', '.join(keys) or '(none: every point has the same config)'}"
    )


def plot_store(
    store: str | Path,
    x: str,
    y: str,
    series: str | None = None,
    where: Sequence[str] = (),
    normalize: str | None = None,
    out: str | Path | None = None,
    *,
    title: str | None = None,
    xlabel: str | None = None,
    ylabel: str | None = None,
    format: str | None = None,
    size: str = "double",
) -> StorePlot:
    """Draw metric ``y`` of the finished points of ``store`` against key
    ``x``, one line per value of key ``series``, and save it at ``out``
    (default ``STORE/plots/<y>-by-<x>[-per-<series>].<format>``).

    ``where`` (``KEY=VALUE`` strings) keeps only the points with those
    values; ``normalize`` names the series (a value of ``series``) that
    every line is divided by at the same x. ``title``, ``xlabel`` and
    ``ylabel`` replace the defaults (``""``: none); ``format`` is ``png``,
    ``pdf`` or ``svg`` (default: ``out``'s suffix, else PNG); ``size`` is a
    key of :data:`SIZES`. Raises :class:`PlotError` naming what the store
    has when a key, metric or value is not in it, or for a format or size
    it does not know, and :class:`ecnlab.sweep.store.StoreError` when ``store``
    is not a store.
    """
    fmt = _format(format, out)
    if size not in SIZES:
        raise PlotError(f"--size {size!r}: expected one of {', '.join(SIZES)}")
    st = Store(store, create=False)
    index = st.index()
    keys, metrics, empty = keys_and_metrics(index)
    rows = [r for r in index.to_pylist() if r["status"] == "ok"]
    if not rows:
        raise PlotError(f"{st.path}: no finished point to plot")
    if y not in metrics:
        if y in empty:
            raise PlotError(f"--y {y!r}: no point of this store has a value of it")
        if y in keys:
            raise PlotError(f"--y {y!r} is a key, not a metric; metrics: {', '.join(metrics)}")
        raise PlotError(
            f"--y {y!r}: not a metric of this store{_suggest(y, metrics)}; "
            f"metrics: {', '.join(metrics)}"
        )
    _check_key("--x", x, keys, metrics)
    if series is not None:
        _check_key("--series", series, keys, metrics)
        if series == x:
            raise PlotError(f"--series {series!r} is the --x key too; give another key")
    if normalize is not None and series is None:
        raise PlotError("--normalize needs --series (it names one of the series' values)")
    conditions = _parse_where(where)
    for key, value in conditions:
        _check_key("--where", key, keys, metrics)
        values = sorted({_label(r.get(key)) for r in rows})
        rows = [r for r in rows if _matches(r.get(key), value)]
        if not rows:
            raise PlotError(
                f"--where {key}={value}: no point left with that value; "
                f"{key} has {', '.join(values)}"
            )

    def line_of(row: dict[str, Any]) -> str:
        return _label(row.get(series)) if series is not None else y

    if normalize is not None:
        labels = sorted({line_of(r) for r in rows})
        if normalize not in labels:
            raise PlotError(
                f"--normalize {normalize!r}: not a value of {series}{_suggest(normalize, labels)}; "
                f"its values: {', '.join(labels)}"
            )
    # The keys averaged over: those with several values at one x of one line.
    cells: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in rows:
        cells.setdefault((line_of(r), json.dumps(r.get(x), default=str)), []).append(r)
    averaged = {}
    for key in keys:
        if key in (x, series):
            continue
        count = max(len({json.dumps(r.get(key), default=str) for r in c}) for c in cells.values())
        if count > 1:
            averaged[key] = count

    # {line: {x: {the averaged keys' values: value}}}, then the mean at each
    # x with its interval.
    groups: dict[str, dict[str, dict[str, float]]] = {}
    xs: dict[str, Any] = {}
    for r in rows:
        xv = _x_value(r.get(x))
        xk = json.dumps(xv)
        xs.setdefault(xk, xv)
        value = r.get(y)
        bucket = groups.setdefault(line_of(r), {}).setdefault(xk, {})
        if value is not None and not (isinstance(value, float) and math.isnan(value)):
            sig = json.dumps([r.get(k) for k in sorted(averaged)], default=str)
            bucket.setdefault(sig, float(value))
    order = [json.dumps(v) for v in _ordered(list(xs.values()))]
    base = groups.get(normalize, {}) if normalize is not None else {}
    lines: dict[str, list[dict[str, Any]]] = {}
    for name in _ordered(list(groups)):
        by_x = groups[name]
        lines[name] = [_cell(xs[xk], by_x[xk], base.get(xk)) for xk in order if xk in by_x]
    factor, unit = 1.0, ""
    if normalize is None:
        factor, unit = _y_scale(y, [r["ours"] for rows_ in lines.values() for r in rows_])
    for rows_ in lines.values():
        for r in rows_:
            for k in ("ours", "ci_low", "ci_high"):
                if r[k] is not None:
                    r[k] *= factor

    if title is None:
        title = _title(series, normalize, conditions, averaged)
    every_x = [r["x"] for rows_ in lines.values() for r in rows_]
    if xlabel is None:
        xlabel = _sentence(key_label(x, every_x))
    if ylabel is None:
        ylabel = _sentence(metric_label(y)) + (f" ({unit_label(unit)})" if unit else "")
        if normalize is not None:
            ylabel += f", relative to {normalize}"
    target = Path(out) if out is not None else st.path / PLOTS_DIR / _file_name(x, y, series, fmt)
    result = StorePlot(
        path=target,
        x=x,
        y=y,
        series_key=series,
        series=lines,
        normalize=normalize,
        points=len(rows),
        averaged=averaged,
        title=title,
        xlabel=xlabel,
        ylabel=ylabel,
        format=fmt,
        size=size,
    )
    _draw(result)
    return result


def _cell(x: Any, values: dict[str, float], base: dict[str, float] | None) -> dict[str, Any]:
    """One point of a line: the mean over the averaged keys' values and its
    95% interval (None with one value); with ``base`` (the normalizing
    line's values at this x), of the ratios, each value over the base's
    for the same averaged keys (a seed over the same seed)."""
    from ..reproduce.noise import mean_interval

    raw = mean_interval(list(values.values()))
    if base is None:
        iv = raw
    else:
        iv = mean_interval([v / base[k] for k, v in values.items() if base.get(k)])
    return {
        "x": x,
        "ours": iv.mean,
        "ci_low": None if math.isnan(iv.low) else iv.low,
        "ci_high": None if math.isnan(iv.high) else iv.high,
        "n": iv.n,
        **({"raw": raw.mean} if base is not None else {}),
    }


def _format(fmt: str | None, out: str | Path | None) -> str:
    """The file format: ``fmt``, else ``out``'s suffix, else PNG; a suffix
    that says another format than ``fmt`` is an error."""
    from ..plots import FORMATS

    suffix = Path(out).suffix.lower().lstrip(".") if out is not None else ""
    if fmt is not None and fmt not in FORMATS:
        raise PlotError(f"--format {fmt!r}: expected one of {', '.join(FORMATS)}")
    if suffix and suffix not in FORMATS:
        raise PlotError(
            f"--out {out}: a .{suffix} file; give a name ending in "
            + ", ".join(f".{f}" for f in FORMATS)
            + " (or --format)"
        )
    if fmt is not None and suffix and suffix != fmt:
        raise PlotError(f"--out {out} ends in .{suffix} but --format is {fmt}")
    return fmt or suffix or "png"


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]


def _file_name(x: str, y: str, series: str | None, fmt: str = "png") -> str:
    name = f"{y}-by-{x}" + (f"-per-{series}" if series else "")
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name) + f".{fmt}"


def _title(
    series: str | None,
    normalize: str | None,
    conditions: list[tuple[str, str]],
    averaged: dict[str, int],
) -> str:
    """What a reader needs besides the axes: the normalizing line, the
    points kept, what was averaged and what the bars are; "" when nothing."""
    parts = []
    if normalize is not None:
        parts.append(f"normalized to {series} = {normalize}")
    if conditions:
        parts.append("where " + ", ".join(f"{k} = {v}" for k, v in conditions))
    if averaged:
        # No break inside "(2 values)": textwrap splits at ASCII spaces only.
        parts.append(
            "mean over "
            + ", ".join(f"{key_label(k)} ({n}\u00a0values)" for k, n in sorted(averaged.items()))
            + "; bars: 95% intervals"
        )
    text = "; ".join(parts)
    return _sentence("\n".join(textwrap.wrap(text, width=60, break_on_hyphens=False)))


def _draw(plot: StorePlot) -> None:
    import matplotlib

    from ..plots import error_bars, line_series, new_figure, save_figure

    width, height, font = SIZES[plot.size]
    many = len(plot.series) > 6
    with matplotlib.rc_context({"font.size": font, "legend.fontsize": font - 1}):
        fig = new_figure(width * (1.25 if many else 1.0), height)
        ax = fig.subplots()
        colors = {name: f"C{k % 10}" for k, name in enumerate(plot.series)}
        # Lines with intervals spread a little about each x (a tenth of the
        # gap between x values), so that their bars do not overlap.
        bars = any(r.get("ci_low") is not None for rows in plot.series.values() for r in rows)
        dodge = 0.1 if bars else 0.0
        positions = line_series(
            ax, plot.series, normalized=plot.normalize is not None, colors=colors, dodge=dodge
        )
        error_bars(ax, plot.series, positions, colors, dodge=dodge)
        ax.set_xlabel(plot.xlabel)
        ax.set_ylabel(plot.ylabel)
        ax.grid(True, alpha=0.3)
        # A case's label names itself: no legend title for it.
        legend_title = key_label(plot.series_key) if plot.series_key not in (None, "case") else None
        if plot.series_key is None and len(plot.series) == 1:
            pass  # one line, named by the y axis
        elif many:
            fig.legend(loc="outside right upper", title=legend_title)
        else:
            ax.legend(title=legend_title)
        if plot.title:
            ax.set_title(plot.title, fontsize=font)
        save_figure(fig, plot.path, dpi=200, format=plot.format)
