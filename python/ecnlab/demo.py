"""The default experiment: MQ-ECN's motivating example, under three markings.

One long-lived DCTCP flow in service 0 and four in service 1 share a 10 Gbps
bottleneck port with two DWRR queues of equal quantum. The same experiment
runs with per-port ECN, per-queue ECN and MQ-ECN; the figure shows goodput by
service and the bottleneck queue for each, and the table the share each
service got, the mean queue and the number of CE marks.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Callable

from .config import parse_toml
from .errors import ConfigError
from .plots import queue_series, save_figure, scheme_comparison
from .runner import run
from .runner.result import Result
from .units import format_time, parse_time

__all__ = [
    "BOTTLENECK",
    "DEFAULT_OUT",
    "EXPERIMENT",
    "FIGURE_NAME",
    "SCHEMES",
    "DemoOutcome",
    "SchemeRow",
    "experiment_names",
    "load_experiment",
    "run_demo",
    "summarize",
]

EXPERIMENT = "mqecn_motivation.toml"
SCHEMES: tuple[str, ...] = ("per-port", "per-queue", "mq-ecn")
BOTTLENECK = ("switch", "host2")
"""(node, peer) of the bottleneck port: the switch's port towards host 2."""
DEFAULT_OUT = Path("results") / "demo"
FIGURE_NAME = "mqecn_motivation.png"


def experiment_names() -> list[str]:
    """Names of the experiment files bundled with the package."""
    folder = resources.files("ecnlab") / "experiments"
    return sorted(item.name for item in folder.iterdir() if item.name.endswith(".toml"))


def load_experiment(name: str = EXPERIMENT) -> dict[str, Any]:
    """Load an experiment bundled in ``ecnlab/experiments`` as a config dict."""
    resource = resources.files("ecnlab") / "experiments" / name
    if not resource.is_file():
        known = ", ".join(experiment_names()) or "none"
        raise ConfigError(f"no bundled experiment {name!r} (bundled: {known})")
    return parse_toml(resource.read_text(encoding="utf-8"), f"ecnlab/experiments/{name}")


@dataclass
class SchemeRow:
    """One line of the demo's table."""

    scheme: str
    gbps: dict[int, float]
    mean_queue_pkt: float
    ce_marks: int | None

    @property
    def shares(self) -> dict[int, float]:
        """Each service's fraction of the total goodput after warm-up."""
        total = sum(self.gbps.values())
        return {s: (g / total if total > 0 else math.nan) for s, g in self.gbps.items()}


@dataclass
class DemoOutcome:
    """What :func:`run_demo` produced."""

    out: Path
    figure: Path
    results: dict[str, Result] = field(default_factory=dict)
    rows: list[SchemeRow] = field(default_factory=list)

    def table(self) -> str:
        """The summary table as aligned text."""
        return format_table(self.rows)


def _warmup_seconds(result: Result) -> float:
    run_section = (result.config or {}).get("run", {})
    try:
        return parse_time(run_section.get("warmup", 0.0))
    except ValueError:
        return 0.0


def summarize(scheme: str, result: Result, port: int, warmup: float) -> SchemeRow:
    """Reduce one run to a table row; ``port`` is the bottleneck port id."""
    times, total, _ = queue_series(result.table("queues"), port, "packets")
    after = total[times >= warmup]
    mean_queue = float(after.mean()) if after.size else math.nan
    marks = result.summary.get("ce_marks")
    return SchemeRow(
        scheme=scheme,
        gbps=result.goodput_by_service,
        mean_queue_pkt=mean_queue,
        ce_marks=None if marks is None else int(marks),
    )


def format_table(rows: Sequence[SchemeRow], services: Sequence[int] = (0, 1)) -> str:
    """Align rows as: scheme, each service's share (and Gbps), mean queue, CE marks."""
    header = ["scheme", *(f"service {s}" for s in services), "mean queue", "CE marks"]
    body: list[list[str]] = []
    for row in rows:
        shares = row.shares
        cells = [row.scheme]
        for s in services:
            if s in row.gbps:
                cells.append(f"{shares[s] * 100:5.1f}% ({row.gbps[s]:.2f} Gbps)")
            else:
                cells.append("-")
        queue = "-" if math.isnan(row.mean_queue_pkt) else f"{row.mean_queue_pkt:.1f} pkt"
        cells.append(queue)
        cells.append("-" if row.ce_marks is None else f"{row.ce_marks:,}")
        body.append(cells)
    widths = [max(len(r[i]) for r in [header, *body]) for i in range(len(header))]
    lines = []
    for cells in [header, *body]:
        first = cells[0].ljust(widths[0])
        rest = [c.rjust(w) for c, w in zip(cells[1:], widths[1:])]
        lines.append("  ".join([first, *rest]))
    return "\n".join(lines)


def duration_overrides(duration: str | float) -> list[str]:
    """Overrides that set the run length, with warm-up at a fifth of it."""
    try:
        seconds = parse_time(duration)
    except ValueError as exc:
        raise ConfigError(f"duration: {exc}") from None
    if seconds <= 0:
        raise ConfigError(f"duration {duration!r}: must be positive")
    return [f"run.duration={format_time(seconds)}", f"run.warmup={format_time(seconds / 5)}"]


def run_demo(
    out: str | Path = DEFAULT_OUT,
    duration: str | float | None = None,
    overrides: Sequence[str] = (),
    progress: bool | None = None,
    on_run: Callable[[str, Result], None] | None = None,
) -> DemoOutcome:
    """Run the MQ-ECN motivation experiment once per scheme and draw the figure.

    Each run is written to ``out/<scheme>/``; the figure to
    ``out/mqecn_motivation.png``. ``duration`` (e.g. ``"0.2s"``) shortens or
    lengthens the runs, with warm-up set to a fifth of it; ``overrides`` apply
    to every run (the marking scheme is set after them). ``on_run`` is called
    after each run.
    """
    root = Path(out)
    base = load_experiment(EXPERIMENT)
    common = [*(duration_overrides(duration) if duration is not None else []), *overrides]
    results: dict[str, Result] = {}
    ports: dict[str, int] = {}
    rows: list[SchemeRow] = []
    for scheme in SCHEMES:
        result = run(
            base,
            out=root / scheme,
            overrides=[*common, f"switch.marking={scheme}"],
            progress=progress,
        )
        port = result.port(*BOTTLENECK)
        results[scheme] = result
        ports[scheme] = port
        rows.append(summarize(scheme, result, port, _warmup_seconds(result)))
        if on_run is not None:
            on_run(scheme, result)
    warmup = _warmup_seconds(next(iter(results.values())))
    fig = scheme_comparison(
        results,
        ports,
        warmup=warmup,
        title="1 flow (service 0) vs 4 flows (service 1) on a 2-queue DWRR port",
    )
    figure = save_figure(fig, root / FIGURE_NAME)
    return DemoOutcome(out=root, figure=figure, results=results, rows=rows)
