"""A paper figure as ecnlab reproduces it: ``experiments/<id>/figure.toml``.

One folder per figure holds ``figure.toml`` (what to run, what to draw, what
the paper says), the base experiment it names, and ``NOTES.md`` (how the
set-up was chosen where the paper is silent, and what we found). The format
is described in ``experiments/README.md``; this module parses and checks it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..config import read_toml_file
from ..errors import ConfigError
from ..sweep import SweepSpec, load_sweep

__all__ = [
    "MIN_SEEDS",
    "SEED_KEY",
    "Expect",
    "Figure",
    "Panel",
    "experiments_root",
    "figure_ids",
    "load_figure",
]

PANEL_KINDS = ("line", "bar", "cdf", "timeseries")
RULES = (
    "value",
    "below",
    "above",
    "within",
    "increasing",
    "decreasing",
    "flat",
    "best_below",
    "best_above",
)
_FIGURE_KEYS = {
    "id",
    "paper",
    "figure",
    "title",
    "description",
    "source",
    "sweep",
    "panel",
    "expect",
    "layout",
    "seeds",
    "quick_seeds",
    "seedless",
}
_PANEL_KEYS = {
    "title",
    "kind",
    "metric",
    "args",
    "x",
    "series",
    "normalize",
    "where",
    "xlabel",
    "ylabel",
    "xscale",
    "yscale",
    "ylim",
    "reduce",
    "curve",
    "legend",
    "metrics",
}
_EXPECT_KEYS = {
    "panel",
    "series",
    "x",
    "rule",
    "paper",
    "than",
    "tolerance",
    "text",
    "source",
    "slack",
    "loss_from",
    "implied",
}


@dataclass
class Panel:
    """One subplot: a metric against a grid key, one line or bar group per
    series (``line``, ``bar``), a distribution (``cdf``) or a time series
    (``timeseries``) per series."""

    title: str
    kind: str = "line"
    metric: str = ""
    args: dict[str, Any] = field(default_factory=dict)
    x: str = ""
    series: str = "case"
    normalize: str | None = None
    where: dict[str, Any] = field(default_factory=dict)
    xlabel: str = ""
    ylabel: str = ""
    xscale: str = "linear"
    yscale: str = "linear"
    ylim: list[float] | None = None
    reduce: dict[str, Any] | None = None
    curve: str = ""
    legend: bool = True
    # Several metrics on one panel, each its own series (then points are
    # grouped by x only): [{label, metric, args}].
    metrics: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class Expect:
    """What the paper says about some plotted points, and how we judge ours."""

    panel: int
    rule: str
    series: list[str] | None = None
    x: list[Any] | None = None
    paper: float | None = None
    than: str | None = None
    tolerance: float = 0.1
    slack: float = 0.0
    text: str = ""
    source: str = ""
    # Judge ``loss_from - value`` (a throughput loss from capacity C), so
    # the tolerance applies to the loss the paper states, not the total.
    loss_from: float | None = None
    # Why the paper does not make this claim itself (inferred, implied, a
    # design property): shown apart, never counted among the verdicts.
    implied: str = ""


IMPLIED_MARKERS = (
    "(implied",
    "(inferred",
    "(issue 12's bar",
    "design, not measured",
    "not in the paper",
)
"""Words with which an expectation's text says the paper does not state it."""


def implied_reason(text: str) -> str:
    """The marker that shows a claim is ours, not the paper's ('' if none)."""
    low = text.lower()
    for marker in IMPLIED_MARKERS:
        if marker in low:
            return marker.strip("(")
    return ""


@dataclass
class Figure:
    """A parsed ``figure.toml``."""

    id: str
    paper: str
    figure: str
    title: str
    description: str
    source: str
    folder: Path
    sweep: SweepSpec
    panels: list[Panel]
    expects: list[Expect]
    layout: list[int] | None = None
    # The seeds of a full run and of --quick (empty for a seedless figure),
    # or why the set-up has no random element (seedless).
    seeds: list[int] = field(default_factory=list)
    quick_seeds: list[int] = field(default_factory=list)
    seedless: str = ""


MIN_SEEDS = 3
"""The fewest seeds of a seeded figure's full run: two give a 95% interval
12.7 standard errors wide (t with 1 dof), three 4.3."""

SEED_KEY = "run.seed"


def experiments_root() -> Path:
    """The folder of figure folders: ``$ECNLAB_EXPERIMENTS``; else the one
    the package carries, ``ecnlab/figures`` (in a source checkout a symlink
    to the repository's ``experiments/``, in an installed wheel the folders
    themselves); else the ``experiments/`` folder of a source tree above this
    package (a checkout where the symlink is not one, e.g. on Windows)."""
    env = os.environ.get("ECNLAB_EXPERIMENTS")
    if env:
        return Path(env)
    here = Path(__file__).resolve()
    packaged = here.parent.parent / "figures"
    if _holds_figures(packaged):
        return packaged.resolve()
    for parent in here.parents:
        candidate = parent / "experiments"
        if _holds_figures(candidate):
            return candidate
    raise ConfigError(
        "no figure folders found: this ecnlab carries no ecnlab/figures and has no "
        "experiments/ folder beside it; set ECNLAB_EXPERIMENTS to the experiments/ folder "
        "of an ecnlab source tree"
    )


def _holds_figures(folder: Path) -> bool:
    return (folder / "README.md").is_file() and any(folder.glob("*/figure.toml"))


def figure_ids(root: Path | None = None) -> list[str]:
    """Every figure id, in paper then figure-number order."""
    root = root or experiments_root()
    ids = [p.parent.name for p in root.glob("*/figure.toml")]
    return sorted(ids, key=_figure_order)


def _figure_order(fid: str) -> tuple[str, int, str]:
    paper, _, rest = fid.rpartition("-")
    digits = "".join(c for c in rest if c.isdigit())
    return (paper, int(digits) if digits else 0, rest)


def load_figure(fid: str, root: Path | None = None) -> Figure:
    """Parse and check ``experiments/<fid>/figure.toml``."""
    root = root or experiments_root()
    folder = root / fid
    path = folder / "figure.toml"
    if not path.is_file():
        known = ", ".join(figure_ids(root)) or "none"
        raise ConfigError(f"no figure {fid!r} (figures: {known}; see `ecnlab reproduce --list`)")
    data = read_toml_file(path, str(path))
    where = f"{fid}/figure.toml"
    unknown = sorted(set(data) - _FIGURE_KEYS)
    if unknown:
        raise ConfigError(f"{where}: unknown key {unknown[0]!r}")
    if data.get("id") != fid:
        raise ConfigError(f"{where}: id = {data.get('id')!r}, but the folder is {fid!r}")
    for key in ("paper", "figure", "title", "description", "source"):
        if not isinstance(data.get(key), str) or not data[key]:
            raise ConfigError(f"{where}: {key}: missing; a figure needs a {key} string")
    sweep_table = data.get("sweep")
    if not isinstance(sweep_table, Mapping):
        raise ConfigError(f"{where}: [sweep] missing")
    sweep = load_sweep(sweep_table, base_dir=folder, name=fid, where=f"{where} [sweep]")
    seeds, quick_seeds, seedless = _seeds(data, where, sweep)
    panels = [_panel(p, i, where, sweep) for i, p in enumerate(_tables(data, "panel", where))]
    if not panels:
        raise ConfigError(f"{where}: no [[panel]]; a figure draws at least one")
    expects = [_expect(e, i, where, panels) for i, e in enumerate(_tables(data, "expect", where))]
    if not expects:
        raise ConfigError(f"{where}: no [[expect]]; say what the paper reports")
    layout = data.get("layout")
    return Figure(
        id=fid,
        paper=data["paper"],
        figure=data["figure"],
        title=data["title"],
        description=data["description"],
        source=data["source"],
        folder=folder,
        sweep=sweep,
        panels=panels,
        expects=expects,
        layout=list(layout) if isinstance(layout, list) else None,
        seeds=seeds,
        quick_seeds=quick_seeds,
        seedless=seedless,
    )


def _seed_list(value: Any, at: str) -> list[int]:
    if (
        not isinstance(value, list)
        or not value
        or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in value)
        or len(set(value)) != len(value)
    ):
        raise ConfigError(
            f"{at} = {value!r}: expected a list of distinct whole numbers, e.g. [1, 2, 3]"
        )
    return list(value)


def _seeds(
    data: Mapping[str, Any], where: str, sweep: SweepSpec
) -> tuple[list[int], list[int], str]:
    """A figure says how it is seeded: ``seeds`` (full run, at least
    MIN_SEEDS) and optionally ``quick_seeds`` (default: the first seed), or
    ``seedless = "why"`` for a set-up the seed does not reach (it runs once;
    tests/scenarios/test_seedless.py checks the claim). The seeds become the
    sweep's ``run.seed`` grid key, set here and nowhere else."""
    if SEED_KEY in sweep.grid or SEED_KEY in sweep.quick_grid:
        raise ConfigError(
            f"{where}: [sweep] sets {SEED_KEY!r}: declare a figure's seeds with the top-level "
            'seeds = [...] (and quick_seeds), or seedless = "why"'
        )
    seedless = data.get("seedless")
    if seedless is not None:
        if not isinstance(seedless, str) or not seedless.strip():
            raise ConfigError(
                f"{where}: seedless = {seedless!r}: expected a string saying why no run depends "
                "on the seed"
            )
        if "seeds" in data or "quick_seeds" in data:
            raise ConfigError(
                f"{where}: seedless and seeds both given; a figure has one or the other"
            )
        return [], [], seedless.strip()
    if "seeds" not in data:
        raise ConfigError(
            f"{where}: seeds: missing; give seeds = [1, 2, 3] (at least {MIN_SEEDS}), or "
            'seedless = "why" for a set-up with no random element'
        )
    seeds = _seed_list(data["seeds"], f"{where}: seeds")
    if len(seeds) < MIN_SEEDS:
        raise ConfigError(
            f"{where}: seeds = {seeds!r}: a full run needs at least {MIN_SEEDS} seeds for its "
            "95% intervals"
        )
    quick = _seed_list(data.get("quick_seeds", seeds[:1]), f"{where}: quick_seeds")
    sweep.grid[SEED_KEY] = seeds
    sweep.quick_grid[SEED_KEY] = quick
    return seeds, quick, ""


def _tables(data: Mapping[str, Any], key: str, where: str) -> list[Mapping[str, Any]]:
    value = data.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, Mapping) for v in value):
        raise ConfigError(f"{where}: {key} must be an array of tables ([[{key}]])")
    return value


def _panel(t: Mapping[str, Any], i: int, where: str, sweep: SweepSpec) -> Panel:
    at = f"{where}: panel[{i}]"
    unknown = sorted(set(t) - _PANEL_KEYS)
    if unknown:
        raise ConfigError(f"{at}: unknown key {unknown[0]!r}")
    kind = t.get("kind", "line")
    if kind not in PANEL_KINDS:
        raise ConfigError(f"{at}.kind = {kind!r}: expected one of {', '.join(PANEL_KINDS)}")
    p = Panel(
        title=str(t.get("title", "")),
        kind=kind,
        metric=str(t.get("metric", "")),
        args=dict(t.get("args", {})),
        x=str(t.get("x", "")),
        series=str(t.get("series", "case")),
        normalize=t.get("normalize"),
        where=dict(t.get("where", {})),
        xlabel=str(t.get("xlabel", "")),
        ylabel=str(t.get("ylabel", "")),
        xscale=str(t.get("xscale", "linear")),
        yscale=str(t.get("yscale", "linear")),
        ylim=list(t["ylim"]) if "ylim" in t else None,
        reduce=dict(t["reduce"]) if "reduce" in t else None,
        curve=str(t.get("curve", "")),
        legend=bool(t.get("legend", True)),
        metrics=[dict(m) for m in t.get("metrics", [])],
    )
    for j, m in enumerate(p.metrics):
        if not isinstance(m.get("label"), str) or not isinstance(m.get("metric"), str):
            raise ConfigError(f"{at}.metrics[{j}]: needs a label and a metric")
    keys = set(sweep.param_keys()) | {"case"}
    if kind in ("line", "bar"):
        if not p.metric and not p.metrics:
            raise ConfigError(f"{at}: metric: missing (or give [[panel.metrics]])")
        if p.x not in keys:
            raise ConfigError(
                f"{at}.x = {p.x!r}: not a grid or case key ({', '.join(sorted(keys))})"
            )
    else:
        if not p.curve:
            raise ConfigError(f"{at}: curve: missing (a {kind} panel draws a curve per series)")
    if p.series not in keys:
        raise ConfigError(f"{at}.series = {p.series!r}: not a grid or case key")
    for key in p.where:
        if key not in keys:
            raise ConfigError(f"{at}.where: {key!r} is not a grid or case key")
    if p.reduce is not None and p.reduce.get("over") not in keys:
        raise ConfigError(f"{at}.reduce.over = {p.reduce.get('over')!r}: not a grid key")
    return p


def _expect(t: Mapping[str, Any], i: int, where: str, panels: list[Panel]) -> Expect:
    at = f"{where}: expect[{i}]"
    unknown = sorted(set(t) - _EXPECT_KEYS)
    if unknown:
        raise ConfigError(f"{at}: unknown key {unknown[0]!r}")
    panel = t.get("panel", 1)
    if not isinstance(panel, int) or not 1 <= panel <= len(panels):
        raise ConfigError(f"{at}.panel = {panel!r}: expected 1..{len(panels)}")
    rule = t.get("rule")
    if rule not in RULES:
        raise ConfigError(f"{at}.rule = {rule!r}: expected one of {', '.join(RULES)}")
    if rule in ("below", "above", "within") and t.get("than") is None and t.get("paper") is None:
        raise ConfigError(f"{at}: rule {rule!r} needs than (a series) or paper (a value)")
    if rule in ("best_below", "best_above") and (
        t.get("than") is None or not isinstance(t.get("paper"), (int, float))
    ):
        raise ConfigError(
            f"{at}: rule {rule!r} (the paper's 'up to X%') needs than (a series) "
            "and paper (X as a fraction)"
        )
    if "loss_from" in t and (rule != "value" or not isinstance(t["loss_from"], (int, float))):
        raise ConfigError(
            f"{at}.loss_from = {t['loss_from']!r}: a capacity (a number) for rule 'value' only"
        )
    if rule == "value" and not isinstance(t.get("paper"), (int, float)):
        raise ConfigError(f"{at}: rule 'value' needs paper = <the paper's number>")
    if not t.get("text"):
        raise ConfigError(f"{at}: text: missing; say what the paper reports, in our words")
    series = t.get("series")
    x = t.get("x")
    return Expect(
        panel=panel - 1,
        rule=rule,
        series=[series] if isinstance(series, str) else series,
        x=None if x is None or x == "all" else (x if isinstance(x, list) else [x]),
        paper=float(t["paper"]) if isinstance(t.get("paper"), (int, float)) else None,
        than=t.get("than"),
        tolerance=float(t.get("tolerance", 0.1)),
        slack=float(t.get("slack", 0.0)),
        text=str(t["text"]),
        source=str(t.get("source", "")),
        loss_from=float(t["loss_from"]) if isinstance(t.get("loss_from"), (int, float)) else None,
        implied=str(t.get("implied") or implied_reason(str(t["text"]))),
    )
