"""``ecnlab plot`` over a sweep store (a 2 x 2 sweep of a tiny star
experiment, run once for the module)."""

from __future__ import annotations

import contextlib
import io
import math
from pathlib import Path

import pytest

from ecnlab.cli import main
from ecnlab.sweep.plot import PlotError, StorePlot, plot_store
from ecnlab.sweep.store import Store

BASE_TOML = """\
[run]
seed = 1
sample_ports = "none"
[topology]
kind = "star"
hosts = 3
link_rate = "10Gbps"
link_delay = "5us"
[switch]
queues = 2
marking = "per-queue"
threshold = "20pkt"
[[flows]]
src = 0
dst = 2
size = "60KB"
service = 0
[[flows]]
src = 1
dst = 2
size = "150KB"
service = 1
"""

SWEEP_TOML = """\
base = "base.toml"
[grid]
"switch.threshold" = ["5pkt", "40pkt"]
"switch.marking" = ["per-queue", "per-port"]
"""

PNG = b"\x89PNG\r\n\x1a\n"


def one_error_line(err: str) -> str:
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("ecnlab: error: "), err
    return lines[0]


def run_cli_sweep(folder: Path) -> tuple[Path, str]:
    """Run the 2 x 2 sweep with `ecnlab sweep` into ``folder/store``;
    return the store and what the command printed."""
    (folder / "base.toml").write_text(BASE_TOML, encoding="utf-8")
    (folder / "sweep.toml").write_text(SWEEP_TOML, encoding="utf-8")
    store = folder / "store"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = main(["sweep", str(folder / "sweep.toml"), "--out", str(store), "--workers", "1"])
    assert status == 0, out.getvalue()
    return store, out.getvalue()


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    return run_cli_sweep(tmp_path_factory.mktemp("plot"))


# ------------------------------------------------------------------ plot


def test_plot_writes_a_png(
    swept: tuple[Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store, _ = swept
    png = tmp_path / "fig" / "p99.png"
    argv = ["plot", str(store), "--x", "switch.threshold", "--y", "fct_small_p99"]
    assert main([*argv, "--series", "switch.marking", "--out", str(png)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"wrote {png}: fct_small_p99 against switch.threshold, 4 points")
    assert "2 lines (switch.marking)" in out
    assert png.read_bytes().startswith(PNG) and png.stat().st_size > 10_000


def test_plot_default_path_and_average(
    swept: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    """Without --series the other key is averaged over, and the output says so."""
    store, _ = swept
    assert main(["plot", str(store), "--x", "switch.marking", "--y", "fct_overall_mean"]) == 0
    out = capsys.readouterr().out
    path = store / "plots" / "fct_overall_mean-by-switch.marking.png"
    assert f"wrote {path}" in out and "mean over switch.threshold" in out
    assert path.read_bytes().startswith(PNG)


def test_plot_normalize_and_where(swept: tuple[Path, str], tmp_path: Path) -> None:
    store, _ = swept
    plot = plot_store(
        store,
        "switch.threshold",
        "fct_overall_mean",
        series="switch.marking",
        normalize="per-queue",
        out=tmp_path / "n.png",
    )
    assert set(plot.series) == {"per-queue", "per-port"}
    assert [r["x"] for r in plot.series["per-queue"]] == ["5pkt", "40pkt"]  # by size
    assert all(r["ours"] == 1.0 for r in plot.series["per-queue"])
    for r in plot.series["per-port"]:
        assert math.isclose(r["ours"] * _base(plot, r["x"]), r["raw"])
    assert "normalized to switch.marking = per-queue" in plot.title.lower()
    only = plot_store(
        store,
        "switch.threshold",
        "fct_overall_mean",
        where=["switch.marking=per-port"],
        out=tmp_path / "w.png",
    )
    assert only.points == 2 and only.averaged == {}


def _base(plot: StorePlot, x: str) -> float:
    rows = plot.series["per-queue"]
    return float(next(r["raw"] for r in rows if r["x"] == x))


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        (
            ["--x", "switch.threshold", "--y", "fct_p99"],
            ["--y 'fct_p99': not a metric", "did you mean fct_small_p99", "metrics: ", "ce_marks"],
        ),
        (
            ["--x", "switch.treshold", "--y", "ce_marks"],
            [
                "not a key",
                "did you mean switch.threshold?",
                "keys: switch.marking, switch.threshold",
            ],
        ),
        (["--x", "ce_marks", "--y", "ce_marks"], ["--x 'ce_marks' is a metric, not a key"]),
        (["--x", "switch.marking", "--y", "switch.threshold"], ["is a key, not a metric"]),
        (
            ["--x", "switch.threshold", "--y", "ce_marks", "--series", "switch.marking"]
            + ["--normalize", "per-qeue"],
            ["not a value of switch.marking", "did you mean per-queue?"],
        ),
        (
            ["--x", "switch.threshold", "--y", "ce_marks", "--normalize", "per-queue"],
            ["--normalize needs --series"],
        ),
        (
            ["--x", "switch.threshold", "--y", "ce_marks", "--where", "switch.marking=red"],
            ["no point left", "switch.marking has per-port, per-queue"],
        ),
        (
            ["--x", "switch.threshold", "--y", "ce_marks", "--where", "switch.marking"],
            ["expected KEY=VALUE"],
        ),
    ],
)
def test_plot_refuses_what_the_store_lacks(
    swept: tuple[Path, str],
    args: list[str],
    fragments: list[str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    store, _ = swept
    assert main(["plot", str(store), *args]) == 2
    captured = capsys.readouterr()
    line = one_error_line(captured.err)
    for fragment in fragments:
        assert fragment in line, line
    assert captured.out == ""
    assert not (store / "plots" / "ce_marks-by-switch.threshold.png").exists()


def test_plot_needs_a_store(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plot", str(tmp_path / "nothing"), "--x", "a.b", "--y", "c"]) == 2
    assert "no such store" in one_error_line(capsys.readouterr().err)


def test_plot_error_is_a_value_error() -> None:
    assert issubclass(PlotError, ValueError)


# ------------------------------------------------------------------ for a paper (issue 55, item 4)


def test_labels_come_from_the_declarations_and_the_title_names_no_store(
    swept: tuple[Path, str], tmp_path: Path
) -> None:
    store, _ = swept
    plot = plot_store(
        store, "switch.threshold", "fct_small_p99", series="switch.marking", out=tmp_path / "a.png"
    )
    # switch.threshold's doc: "The standard threshold K, or with per-queue
    # marking a list, one per queue."; its values are in packets.
    assert plot.xlabel == "Standard threshold K (packets)"
    assert plot.ylabel.startswith("Small flows' 99th-percentile FCT (")
    assert "store" not in plot.title  # nothing averaged, nothing to say
    assert plot.title == ""


def test_error_bars_are_95_percent_t_intervals_over_the_averaged_points(
    swept: tuple[Path, str], tmp_path: Path
) -> None:
    store, _ = swept
    plot = plot_store(store, "switch.threshold", "fct_overall_mean", out=tmp_path / "b.png")
    assert plot.averaged == {"switch.marking": 2}
    assert "95% intervals" in plot.title
    rows = [r for r in Store(store, create=False).index().to_pylist() if r["status"] == "ok"]
    for cell in plot.series["fct_overall_mean"]:
        values = [r["fct_overall_mean"] for r in rows if r["switch.threshold"] == cell["x"]]
        mean = sum(values) / 2
        sd = math.sqrt(sum((v - mean) ** 2 for v in values))  # n - 1 = 1
        # Student's t, 1 degree of freedom, 97.5%: 12.706 (any t table).
        half = 12.7062 * sd / math.sqrt(2)
        scale = cell["ours"] / mean  # ms or us as the axis shows them
        assert cell["n"] == 2
        assert cell["ci_low"] == pytest.approx((mean - half) * scale, rel=1e-4)
        assert cell["ci_high"] == pytest.approx((mean + half) * scale, rel=1e-4)


def _png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")


def test_formats_sizes_and_labels_given(
    swept: tuple[Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store, _ = swept
    argv = ["plot", str(store), "--x", "switch.threshold", "--y", "fct_small_p99"]
    assert main([*argv, "--format", "pdf", "--out", str(tmp_path / "f.pdf")]) == 0
    assert (tmp_path / "f.pdf").read_bytes().startswith(b"%PDF")
    assert main([*argv, "--format", "svg", "--out", str(tmp_path / "f.svg")]) == 0
    assert b"<svg" in (tmp_path / "f.svg").read_bytes()[:2000]
    # A column is 3.5 in wide, the page 7 in; PNGs at 200 dpi.
    assert main([*argv, "--size", "column", "--out", str(tmp_path / "c.png")]) == 0
    assert _png_size(tmp_path / "c.png")[0] == 700
    assert main([*argv, "--out", str(tmp_path / "d.png")]) == 0
    assert _png_size(tmp_path / "d.png")[0] == 1400
    capsys.readouterr()
    plot = plot_store(
        store,
        "switch.threshold",
        "fct_small_p99",
        title="K sweep",
        xlabel="K (packets)",
        ylabel="p99 FCT (ms)",
        out=tmp_path / "e.png",
    )
    assert (plot.title, plot.xlabel, plot.ylabel) == ("K sweep", "K (packets)", "p99 FCT (ms)")
    assert main([*argv, "--format", "pdf", "--out", str(tmp_path / "g.png")]) == 2
    assert "ends in .png but --format is pdf" in one_error_line(capsys.readouterr().err)
    assert main([*argv, "--out", str(tmp_path / "g.jpg")]) == 2
    assert "a .jpg file" in one_error_line(capsys.readouterr().err)


def test_lines_with_intervals_spread_about_each_x() -> None:
    from ecnlab.plots import line_series, new_figure

    ax = new_figure(3.5, 2.6).subplots()
    series = {n: [{"x": 0.3, "ours": 1.0}, {"x": 0.5, "ours": 2.0}] for n in "abc"}
    line_series(ax, series, dodge=0.1)
    xs = [list(line.get_xdata()) for line in ax.get_lines()]
    # A tenth of the 0.2 gap, spread over the three lines: -0.01, 0, +0.01.
    assert [round(x[0], 6) for x in xs] == [0.29, 0.3, 0.31]
