"""Drawing a reproduced figure: one subplot per panel, shaped like the
paper's (same axes and normalisation), with the paper's numbers overlaid
where it gives them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from ..plots import line_series, new_figure, save_figure
from .figure import Figure

__all__ = ["draw_figure"]


def draw_figure(fig: Figure, doc: dict[str, Any], path: Path, quick: bool = False) -> Path:
    n = len(fig.panels)
    rows, cols = fig.layout or ((n + 2) // 3, min(n, 3))
    figure = new_figure(4.3 * cols, 3.3 * rows + 0.5)
    axes: Any = figure.subplots(rows, cols, squeeze=False)
    for i, (panel, data) in enumerate(zip(fig.panels, doc["panels"])):
        ax = axes[i // cols][i % cols]
        paper = [
            c for c in doc["points"] if c["panel"] == i and isinstance(c["paper"], (int, float))
        ]
        if data["kind"] == "line":
            _lines(ax, data, paper)
        elif data["kind"] == "bar":
            _bars(ax, data, paper)
        else:
            _curves(ax, data)
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
            ax.legend(fontsize="x-small")
        ax.grid(True, alpha=0.3)
    for j in range(n, rows * cols):
        axes[j // cols][j % cols].set_visible(False)
    counts = ", ".join(f"{v} {k}" for k, v in doc["verdicts"].items())
    suffix = " (quick run: fewer flows and seeds than the paper)" if quick else ""
    figure.suptitle(f"{fig.paper} {fig.figure}: {fig.title}{suffix}\n[{counts}]", fontsize="medium")
    return save_figure(figure, path)


def _lines(ax: Any, data: dict[str, Any], paper: list[dict[str, Any]]) -> None:
    num = line_series(
        ax,
        data["series"],
        normalized=bool(data.get("normalize")),
        extra_x=[c["x"] for c in paper],
    )
    if paper:
        ax.scatter(
            [num[str(c["x"])] if num else c["x"] for c in paper],
            [c["paper"] for c in paper],
            facecolors="none",
            edgecolors="black",
            s=60,
            zorder=5,
            label="paper",
        )


def _bars(ax: Any, data: dict[str, Any], paper: list[dict[str, Any]]) -> None:
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
        ax.bar(pos, [r["ours"] for r in rows], width=width, label=name)
        for r, p in zip(rows, pos):
            where[(name, json.dumps(r["x"]))] = p
    ax.set_xticks(
        range(len(xs)), [json.loads(x) if isinstance(json.loads(x), str) else x for x in xs]
    )
    if data.get("normalize"):
        ax.axhline(1.0, color="0.5", linestyle="--", linewidth=0.8)
    pts = [(where.get((c["series"], json.dumps(c["x"]))), c["paper"]) for c in paper]
    pts = [(p, v) for p, v in pts if p is not None]
    if pts:
        ax.scatter(
            *zip(*pts), marker="_", color="black", s=300, linewidths=2, zorder=5, label="paper"
        )


def _curves(ax: Any, data: dict[str, Any]) -> None:
    for name, c in data["curves"].items():
        if not c["x"]:
            continue
        if data["kind"] == "cdf":
            ax.step(np.asarray(c["x"]), np.asarray(c["y"]), where="post", label=name)
        else:
            ax.plot(c["x"], c["y"], linewidth=0.9, label=name)
