"""A reproduced figure a reader can read (issue 29): the paper's numbers in
their series' colour, differing points flagged, intervals drawn, verdict
rows sorted by x, the notes linked. On a hand-made figure document."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from matplotlib.colors import to_rgba

from ecnlab.reproduce import _sorted_checks, x_order
from ecnlab.reproduce.draw import (
    DIFFERS_COLOR,
    SAME_DIRECTION_COLOR,
    render_figure,
    series_colors,
)
from ecnlab.reproduce.figure import Figure, Panel
from ecnlab.reproduce.report import write_report
from ecnlab.sweep import SweepSpec


def _row(x: Any, ours: float, lo: float | None = None, hi: float | None = None) -> dict[str, Any]:
    return {"x": x, "ours": ours, "ci_low": lo, "ci_high": hi, "n": 3 if lo else 1}


def _check(series: str, x: Any, ours: float, paper: float, verdict: str) -> dict[str, Any]:
    return {
        "panel": 0,
        "series": series,
        "x": x,
        "ours": ours,
        "ci_low": None,
        "ci_high": None,
        "n": 1,
        "paper": paper,
        "kind": "value",
        "claim": "c",
        "source": "s",
        "verdict": verdict,
        "rule": "r",
    }


def _figure(kind: str) -> tuple[Figure, dict[str, Any]]:
    panel = Panel(title="p", kind=kind, metric="m", x="switch.threshold")
    fig = Figure(
        id="toy-fig1",
        paper="Toy",
        figure="Fig. 1",
        title="a title",
        description="d",
        source="s",
        folder=Path("."),
        sweep=SweepSpec("toy", {}),
        panels=[panel],
        expects=[],
        seeds=[1, 2, 3],
    )
    series = {
        "TSO off": [_row("4pkt", 8.0, 7.5, 8.5), _row("83pkt", 9.9, 9.8, 10.0)],
        "TSO on": [_row("4pkt", 1.3, 1.0, 1.6), _row("83pkt", 9.8, 9.7, 9.9)],
    }
    checks = [
        _check("TSO on", "83pkt", 9.8, 9.9, "matches"),
        _check("TSO off", "83pkt", 9.9, 10.0, "matches"),
        _check("TSO on", "4pkt", 1.3, 5.0, "differs"),
    ]
    doc = {
        "id": "toy-fig1",
        "paper": "Toy",
        "figure": "Fig. 1",
        "title": "a title",
        "description": "d",
        "source": "s",
        "panels": [{"title": "p", "kind": kind, "x": "switch.threshold", "series": series}],
        "points": checks,
        "verdicts": {"matches": 2, "within noise": 0, "same direction": 0, "differs": 1},
        "sweep": {"points": 4},
        "notes": "experiments/toy-fig1/NOTES.md",
    }
    return fig, doc


def _collections(ax: Any, gid: str) -> list[Any]:
    return [c for c in ax.collections if c.get_gid() == gid]


def test_paper_points_take_their_series_colour_on_a_line_panel() -> None:
    fig, doc = _figure("line")
    colors = series_colors(doc)
    assert colors == {"TSO off": "C0", "TSO on": "C1"}
    ax = render_figure(fig, doc).axes[0]
    lines = {line.get_label(): line for line in ax.get_lines()}
    assert to_rgba(lines["TSO off"].get_color()) == to_rgba("C0")
    assert to_rgba(lines["TSO on"].get_color()) == to_rgba("C1")
    [paper] = _collections(ax, "paper")
    edges = [tuple(c) for c in paper.get_edgecolors()]
    paper_checks = [c for c in doc["points"]]
    # Each paper star's edge is its own series' line colour, not black.
    for edge, check in zip(edges, paper_checks):
        assert edge == to_rgba(lines[check["series"]].get_color()), check["series"]
    # The star is hollow, so our marker shows through where they agree.
    assert all(c[3] == 0 for c in paper.get_facecolors())


def test_differing_points_are_ringed_and_intervals_drawn() -> None:
    fig, doc = _figure("line")
    ax = render_figure(fig, doc).axes[0]
    [ring] = _collections(ax, "differs")
    assert len(ring.get_offsets()) == 1  # only the one "differs" check
    assert tuple(ring.get_edgecolors()[0]) == to_rgba(DIFFERS_COLOR)
    assert float(ring.get_offsets()[0][1]) == 1.3
    # Error bars: one LineCollection per series, a segment per point.
    bars = [c for c in ax.collections if c.get_gid() is None and len(c.get_segments()) == 2]
    spans = sorted(tuple(float(v) for v in seg[:, 1]) for c in bars for seg in c.get_segments())
    assert (1.0, 1.6) in spans and (7.5, 8.5) in spans


def test_same_direction_points_are_boxed_apart_from_differing_ones() -> None:
    # A "same direction" verdict (the paper's trend, not its size) is as much
    # a finding as "differs"; a reader must see which points it is without
    # the verdict table. One box per such point, in its own colour and
    # shape, at our value, on line and bar panels alike, with a key entry.
    for kind in ("line", "bar"):
        fig, doc = _figure(kind)
        doc["points"][1]["verdict"] = "same direction"
        doc["verdicts"].update({"matches": 1, "same direction": 1})
        figure = render_figure(fig, doc)
        ax = figure.axes[0]
        [box] = _collections(ax, "same-direction")
        assert len(box.get_offsets()) == 1, kind
        assert float(box.get_offsets()[0][1]) == 9.9, kind
        assert tuple(box.get_edgecolors()[0]) == to_rgba(SAME_DIRECTION_COLOR), kind
        [ring] = _collections(ax, "differs")
        assert len(ring.get_offsets()) == 1 and float(ring.get_offsets()[0][1]) == 1.3, kind
        # A square (4 corners and the closing vertex), not the ring's circle.
        assert len(box.get_paths()[0].vertices) == 5, kind
        assert len(ring.get_paths()[0].vertices) > 5, kind
        labels = [t.get_text() for t in ax.get_legend().get_texts()]
        assert labels[-2:] == ["verdict: differs", "verdict: same direction"], kind
    # No such point, no box and no key entry.
    fig, doc = _figure("line")
    ax = render_figure(fig, doc).axes[0]
    assert not _collections(ax, "same-direction")
    assert "verdict: same direction" not in [t.get_text() for t in ax.get_legend().get_texts()]


def test_paper_ticks_take_their_series_colour_on_a_bar_panel() -> None:
    fig, doc = _figure("bar")
    ax = render_figure(fig, doc).axes[0]
    [paper] = _collections(ax, "paper")
    got = [tuple(c) for c in paper.get_facecolors()]
    assert got == [to_rgba("C1"), to_rgba("C0"), to_rgba("C1")]
    assert _collections(ax, "differs")


def _two_panels(swap: bool) -> tuple[Figure, dict[str, Any]]:
    """The toy figure twice side by side; ``swap`` lists the second
    panel's series in the other order, so its markers differ."""
    fig, doc = _figure("line")
    fig.panels = [fig.panels[0], fig.panels[0]]
    second = dict(doc["panels"][0])
    if swap:
        second["series"] = dict(reversed(list(second["series"].items())))
    doc["panels"] = [doc["panels"][0], second]
    return fig, doc


def test_panels_drawn_alike_share_one_legend_under_them() -> None:
    # A key inside a panel hid the points under it (ML-ECN Fig. 12 (f)'s
    # A-ECN at load 0.4): one legend for the figure, no panel's own.
    fig, doc = _two_panels(swap=False)
    drawn = render_figure(fig, doc)
    assert all(ax.get_legend() is None for ax in drawn.axes)
    [legend] = drawn.legends
    labels = [t.get_text() for t in legend.get_texts()]
    # Each entry once, though both panels draw it.
    assert labels == ["TSO off", "TSO on", "paper (in the series' colour)", "verdict: differs"]


def test_panels_drawn_differently_keep_their_own_keys() -> None:
    # Markers follow a panel's series order: a shared key would show the
    # first panel's marker for the second panel's line.
    fig, doc = _two_panels(swap=True)
    drawn = render_figure(fig, doc)
    assert not drawn.legends
    assert all(ax.get_legend() is not None for ax in drawn.axes)


def test_repeated_colours_keep_the_keys_in_their_panels() -> None:
    # Eleven bar series: the eleventh takes the first one's colour (C0),
    # so one shared key would show two entries alike.
    fig, doc = _two_panels(swap=False)
    fig.panels = [Panel(title="p", kind="bar", metric="m", x="switch.threshold")] * 2
    series = {f"s{k}": [_row("4pkt", 1.0 + k)] for k in range(11)}
    for panel in doc["panels"]:
        panel["kind"], panel["series"] = "bar", series
    doc["points"] = []
    drawn = render_figure(fig, doc)
    assert not drawn.legends
    assert all(ax.get_legend() is not None for ax in drawn.axes)
    # Ten series are told apart: one key under the panels.
    for panel in doc["panels"]:
        panel["series"] = {k: v for k, v in series.items() if k != "s10"}
    assert len(render_figure(fig, doc).legends) == 1


def test_a_long_legend_wraps_to_the_figure_width() -> None:
    from ecnlab.reproduce.draw import _columns

    short = ["TSO off", "TSO on", "paper (in the series' colour)", "verdict: differs"]
    assert _columns(short, 8.6) == 4  # CEDM Fig. 4: one row
    many = [f"FQ-CoDel: cc: option {k}" for k in range(16)]
    k = _columns(many, 8.6)
    assert 1 < k < 8  # wraps, still more than one column
    assert _columns(many, 30.0) == 8  # capped at eight columns


def test_x_sorts_by_value() -> None:
    xs = ["83pkt", "100pkt", "125pkt", "150pkt", "4pkt", "8pkt"]
    assert sorted(xs, key=x_order) == ["4pkt", "8pkt", "83pkt", "100pkt", "125pkt", "150pkt"]
    assert sorted([0.9, 0.3, 0.6], key=x_order) == [0.3, 0.6, 0.9]
    assert sorted(["b", "a"], key=x_order) == ["a", "b"]


def test_checks_sort_by_panel_series_then_x() -> None:
    _, doc = _figure("line")
    ordered = _sorted_checks(doc["points"], doc["panels"])
    assert [(c["series"], c["x"]) for c in ordered] == [
        ("TSO off", "83pkt"),
        ("TSO on", "4pkt"),
        ("TSO on", "83pkt"),
    ]


def test_report_rows_sorted_and_notes_linked(tmp_path: Path) -> None:
    _, doc = _figure("line")
    notes = tmp_path / "NOTES.md"
    notes.write_text("notes\n")
    doc["notes_path"] = str(notes)
    out = tmp_path / "out"
    out.mkdir()
    (out / "toy-fig1.json").write_text(json.dumps(doc))
    md, page = write_report(out)
    text = md.read_text()
    rows = [line for line in text.splitlines() if line.startswith("| p |")]
    assert [r.split("|")[3].strip() for r in rows] == ["83pkt", "4pkt", "83pkt"]
    assert [r.split("|")[2].strip() for r in rows] == ["TSO off", "TSO on", "TSO on"]
    assert "[toy-fig1/NOTES.md](../NOTES.md)" in text
    assert "href='../NOTES.md'" in page.read_text()
    # Without the file on this machine, the repository's path is linked.
    doc["notes_path"] = None
    (out / "toy-fig1.json").write_text(json.dumps(doc))
    md, _ = write_report(out)
    assert "(experiments/toy-fig1/NOTES.md)" in md.read_text()
