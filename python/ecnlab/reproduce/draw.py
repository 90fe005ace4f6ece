"""Drawing a reproduced figure: one subplot per panel, shaped like the
paper's (same axes and normalisation), with the paper's numbers overlaid
where it gives them.

Readability rules: a series keeps one colour in every panel, and the
paper's number for it is drawn in that colour (a hollow star over our
line's marker, a black-edged bar over our bar); our mean over seeds
carries its 95% interval as error bars; a point whose verdict is
``differs`` is ringed in red and one that holds only the paper's
direction (``same direction``) is boxed in dashed black; panels that share
their series share one key, under them, where it covers no point.
"""

from __future__ import annotations

import json
import math
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib import patheffects
from matplotlib.collections import PathCollection
from matplotlib.figure import Figure as MplFigure
from matplotlib.lines import Line2D
from matplotlib.markers import MarkerStyle
from matplotlib.transforms import IdentityTransform

from ..plots import line_series, new_figure, save_figure
from .figure import Figure

__all__ = [
    "DIFFERS_COLOR",
    "PAPER_MARKER",
    "SAME_DIRECTION_COLOR",
    "draw_figure",
    "render_figure",
    "series_colors",
]

PAPER_MARKER = "*"
"""The paper's numbers on a line panel: a hollow star in the series' colour."""
DIFFERS_COLOR = "red"
"""The ring around a point whose verdict is ``differs``."""
SAME_DIRECTION_COLOR = "black"
"""The box around a point whose verdict is ``same direction``: the paper's
trend holds, its size does not (or the paper gives no size)."""

# Verdict -> (marker, colour, edge style, edge width) of the outline drawn
# around our point. Black is in no series' colour cycle, and a dashed square
# reads apart from a series' filled square marker and from the red ring in
# grey too.
_OUTLINES = {
    "differs": ("o", DIFFERS_COLOR, "solid", 1.5),
    "same direction": ("s", SAME_DIRECTION_COLOR, (0, (2, 1.5)), 1.0),
}


def series_colors(doc: dict[str, Any]) -> dict[str, str]:
    """One colour per series name over the whole figure, in order of first
    appearance ("C0", "C1", ...: matplotlib's default cycle)."""
    names: list[str] = []
    for panel in doc["panels"]:
        for name in list(panel.get("series", {})) + list(panel.get("curves", {})):
            if name not in names:
                names.append(name)
    return {name: f"C{k % 10}" for k, name in enumerate(names)}


def draw_figure(fig: Figure, doc: dict[str, Any], path: Path, quick: bool = False) -> Path:
    return save_figure(render_figure(fig, doc, quick), path)


def render_figure(fig: Figure, doc: dict[str, Any], quick: bool = False) -> MplFigure:
    n = len(fig.panels)
    rows, cols = fig.layout or ((n + 2) // 3, min(n, 3))
    width = 4.3 * cols
    figure = new_figure(width, 3.3 * rows + 0.7)
    axes: Any = figure.subplots(rows, cols, squeeze=False)
    colors = series_colors(doc)
    keys: list[tuple[Any, list[Any], list[str]]] = []
    for i, (panel, data) in enumerate(zip(fig.panels, doc["panels"])):
        ax = axes[i // cols][i % cols]
        checks = _per_point([c for c in doc["points"] if c["panel"] == i])
        paper = [c for c in checks if isinstance(c["paper"], (int, float))]
        extra: list[Any] = []
        if data["kind"] == "line":
            extra = _lines(ax, data, paper, checks, colors)
        elif data["kind"] == "bar":
            extra = _bars(ax, data, paper, checks, colors)
        else:
            _curves(ax, data, colors)
        ax.set_title(panel.title, fontsize="medium")
        ax.set_xlabel(panel.xlabel or panel.x)
        ax.set_ylabel(panel.ylabel or panel.metric)
        if panel.xscale != "linear":
            ax.set_xscale(panel.xscale)
        if panel.yscale != "linear":
            ax.set_yscale(panel.yscale)
        if panel.ylim:
            ax.set_ylim(*panel.ylim)
        if panel.legend:
            handles, labels = ax.get_legend_handles_labels()
            keys.append((ax, handles + extra, labels + [h.get_label() for h in extra]))
        ax.grid(True, alpha=0.3)
    for j in range(n, rows * cols):
        axes[j // cols][j % cols].set_visible(False)
    _legends(figure, keys, width)
    counts = ", ".join(f"{v} {k}" for k, v in doc["verdicts"].items())
    suffix = " (quick run: fewer flows and seeds than the paper)" if quick else ""
    seeds = _seeds_text(fig, quick)
    # Wrapped to the figure's width (about 11 characters an inch at this
    # size), so a long title is not clipped at both edges.
    head = textwrap.fill(f"{fig.paper} {fig.figure}: {fig.title}{suffix}", int(width * 11))
    figure.suptitle(f"{head}\n{seeds} [{counts}]", fontsize="medium")
    return figure


def _legends(figure: MplFigure, keys: list[tuple[Any, list[Any], list[str]]], width: float) -> None:
    """One legend under the panels when the panels share their series and
    draw each alike (a legend inside a panel hides whichever points sit
    under it); a key per panel when they do not (a panel's markers follow
    its own series order, a bar's paper tick is not a line's star)."""
    if not keys:
        return
    merged: dict[str, Any] = {}
    alike = True
    uses: dict[str, int] = {}
    for _, handles, labels in keys:
        for h, label in zip(handles, labels):
            alike = alike and _look(merged.setdefault(label, h)) == _look(h)
            uses[label] = uses.get(label, 0) + 1
    # A series only one panel draws is read with that panel (Tuning ECN
    # Fig. 10's "True"/"False" bars): keep the keys there.
    generic = {_paper_proxy().get_label()} | {_outline_label(v) for v in _OUTLINES}
    alike = alike and all(n > 1 for label, n in uses.items() if label not in generic)
    # Past ten series the colours repeat (FQ-CoDel Fig. 1: "DCTCP: default"
    # and "FQ-CoDel: rx" are both C0, in different panels): one key would
    # show two entries alike.
    alike = alike and len({_look(h) for h in merged.values()}) == len(merged)
    if len(keys) < 2 or not alike:
        for ax, handles, labels in keys:
            ax.legend(handles, labels, fontsize="x-small")
        return
    labels = list(merged)
    figure.legend(
        list(merged.values()),
        labels,
        loc="outside lower center",
        ncols=_columns(labels, width),
        fontsize="small",
    )


def _columns(labels: list[str], width: float) -> int:
    """As many legend columns as fit the figure's width, so a long legend
    wraps instead of being clipped. An entry takes about 0.55 inch for its
    handle and gaps plus 0.06 inch a character of its label (the "small"
    font); matplotlib splits the entries into columns as evenly as it can,
    the first columns one longer."""
    n = len(labels)
    for k in range(min(n, 8), 1, -1):
        ends = [sum(n // k + (j < n % k) for j in range(i + 1)) for i in range(k)]
        cols = [labels[a:b] for a, b in zip([0] + ends, ends)]
        if sum(0.55 + 0.06 * max(map(len, c)) for c in cols) <= 0.95 * width:
            return k
    return 1


def _look(h: Any) -> tuple[Any, ...]:
    """What a legend entry shows: colour and marker of a line, face of a bar."""
    if isinstance(h, Line2D):
        return (
            "line",
            h.get_marker(),
            str(h.get_color()),
            str(h.get_markeredgecolor()),
            h.get_linestyle(),
        )
    patches = getattr(h, "patches", None)
    if patches:
        return ("bar", tuple(patches[0].get_facecolor()))
    return (type(h).__name__,)


def _seeds_text(fig: Figure, quick: bool) -> str:
    if fig.seedless:
        return "seedless (one run a point);"
    seeds = fig.quick_seeds if quick else fig.seeds
    if len(seeds) < 2:
        return f"{len(seeds)} seed, no interval;"
    return f"mean of {len(seeds)} seeds, 95% t interval;"


def _paper_proxy() -> Line2D:
    return Line2D(
        [],
        [],
        linestyle="none",
        marker=PAPER_MARKER,
        markersize=10,
        markerfacecolor="none",
        markeredgecolor="black",
        label="paper (in the series' colour)",
    )


def _outline_label(verdict: str) -> str:
    return f"verdict: {verdict}"


def _outline_proxy(verdict: str) -> Any:
    marker, color, style, width = _OUTLINES[verdict]
    if style != "solid":
        # A line's marker edge is always solid: the key shows the dashes
        # only from a collection of the drawn outline's own kind.
        shape = MarkerStyle(marker)
        proxy = PathCollection(
            [shape.get_path().transformed(shape.get_transform())],
            sizes=[120],
            facecolors="none",
            edgecolors=color,
            linewidths=width,
            linestyles=style,
            label=_outline_label(verdict),
        )
        # As scatter does: marker sizes are in points, not in the key's
        # coordinates (unset, the key would move the square twice).
        proxy.set_transform(IdentityTransform())
        return proxy
    return Line2D(
        [],
        [],
        linestyle="none",
        marker=marker,
        markersize=11,
        markerfacecolor="none",
        markeredgecolor=color,
        markeredgewidth=width,
        label=_outline_label(verdict),
    )


def _outline(ax: Any, verdict: str, at: list[tuple[Any, float]]) -> list[Any]:
    """Outlines the points ``at`` (x, our value) of one verdict; the
    legend entry for it, or nothing when there is no such point."""
    at = [(x, y) for x, y in at if x is not None and _finite(y)]
    if not at:
        return []
    marker, color, style, width = _OUTLINES[verdict]
    ax.scatter(
        [x for x, _ in at],
        [y for _, y in at],
        s=180,
        marker=marker,
        facecolors="none",
        edgecolors=color,
        linewidths=width,
        linestyles=style,
        zorder=6,
        gid=verdict.replace(" ", "-"),
    )
    return [_outline_proxy(verdict)]


def _bounds(r: dict[str, Any]) -> tuple[float, float] | None:
    lo, hi = r.get("ci_low"), r.get("ci_high")
    if lo is None or hi is None or r["ours"] is None or math.isnan(r["ours"]):
        return None
    return float(lo), float(hi)


def _lines(
    ax: Any,
    data: dict[str, Any],
    paper: list[dict[str, Any]],
    checks: list[dict[str, Any]],
    colors: dict[str, str],
) -> list[Any]:
    num = line_series(
        ax,
        data["series"],
        normalized=bool(data.get("normalize")),
        extra_x=[c["x"] for c in paper],
        colors=colors,
    )

    def at(x: Any) -> Any:
        return num[str(x)] if num else x

    for name, rows in data["series"].items():
        bars = [(at(r["x"]), r["ours"], b) for r in rows if (b := _bounds(r)) is not None]
        if bars:
            x, y, b = zip(*bars)
            ax.errorbar(
                x,
                y,
                yerr=np.abs(
                    np.array(
                        [
                            [yy - lo for yy, (lo, _) in zip(y, b)],
                            [hi - yy for yy, (_, hi) in zip(y, b)],
                        ]
                    )
                ),
                fmt="none",
                ecolor=colors.get(name, "black"),
                capsize=3,
                linewidth=1,
                zorder=4,
            )
    extra: list[Any] = []
    if paper:
        ax.scatter(
            [at(c["x"]) for c in paper],
            [c["paper"] for c in paper],
            marker=PAPER_MARKER,
            facecolors="none",
            edgecolors=[colors.get(c["series"], "black") for c in paper],
            s=140,
            linewidths=1.4,
            zorder=5,
            gid="paper",
        )
        extra.append(_paper_proxy())
    for verdict in _OUTLINES:
        extra += _outline(
            ax, verdict, [(at(c["x"]), c["ours"]) for c in checks if c["verdict"] == verdict]
        )
    return extra


def _per_point(checks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The checks as points to outline: a trend's one verdict marks every
    point it was read from."""
    out = []
    for c in checks:
        if "xs" in c:
            out += [{**c, "x": x, "ours": v} for x, v in zip(c["xs"], c["values"])]
        else:
            out.append(c)
    return out


def _finite(v: Any) -> bool:
    return isinstance(v, (int, float)) and math.isfinite(v)


def _bars(
    ax: Any,
    data: dict[str, Any],
    paper: list[dict[str, Any]],
    checks: list[dict[str, Any]],
    colors: dict[str, str],
) -> list[Any]:
    series = list(data["series"].items())
    xs: list[str] = []
    for _, rows in series:
        for r in rows:
            if json.dumps(r["x"]) not in xs:
                xs.append(json.dumps(r["x"]))
    width = 0.8 / max(len(series), 1)
    where = {}
    for k, (name, rows) in enumerate(series):
        pos = [xs.index(json.dumps(r["x"])) + (k - (len(series) - 1) / 2) * width for r in rows]
        ax.bar(pos, [r["ours"] for r in rows], width=width, label=name, color=colors.get(name))
        for r, p in zip(rows, pos):
            where[(name, json.dumps(r["x"]))] = p
            b = _bounds(r)
            if b is not None:
                ax.errorbar(
                    [p],
                    [r["ours"]],
                    yerr=[[r["ours"] - b[0]], [b[1] - r["ours"]]],
                    fmt="none",
                    ecolor="black",
                    capsize=3,
                    linewidth=1,
                    zorder=4,
                )
    ax.set_xticks(
        range(len(xs)), [json.loads(x) if isinstance(json.loads(x), str) else x for x in xs]
    )
    if data.get("normalize"):
        ax.axhline(1.0, color="0.5", linestyle="--", linewidth=0.8)
    extra: list[Any] = []
    pts = [
        (where.get((c["series"], json.dumps(c["x"]))), c["paper"], colors.get(c["series"], "black"))
        for c in paper
    ]
    pts = [t for t in pts if t[0] is not None]
    if pts:
        # A bar-wide tick in the series' colour, outlined in black so it
        # shows on its own bar.
        ax.scatter(
            [t[0] for t in pts],
            [t[1] for t in pts],
            marker="_",
            color=[t[2] for t in pts],
            s=300 * min(1.0, width / 0.4),
            linewidths=3,
            zorder=5,
            gid="paper",
            path_effects=[patheffects.withStroke(linewidth=5, foreground="black")],
        )
        extra.append(
            Line2D(
                [],
                [],
                linestyle="none",
                marker="_",
                markersize=12,
                markeredgewidth=3,
                color="0.5",
                label="paper (in the series' colour)",
                path_effects=[patheffects.withStroke(linewidth=5, foreground="black")],
            )
        )
    for verdict in _OUTLINES:
        extra += _outline(
            ax,
            verdict,
            [
                (where.get((c["series"], json.dumps(c["x"]))), c["ours"])
                for c in checks
                if c["verdict"] == verdict
            ],
        )
    return extra


def _curves(ax: Any, data: dict[str, Any], colors: dict[str, str]) -> None:
    for name, c in data["curves"].items():
        if not c["x"]:
            continue
        if data["kind"] == "cdf":
            ax.step(
                np.asarray(c["x"]),
                np.asarray(c["y"]),
                where="post",
                label=name,
                color=colors.get(name),
            )
        else:
            ax.plot(c["x"], c["y"], linewidth=0.9, label=name, color=colors.get(name))
