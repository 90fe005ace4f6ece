"""fct_estimates and `ecnlab fct`'s percentile table: counts, intervals,
warnings on thin tails, and the slowdown column when the flows table has one."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from ecnlab.cli import main
from ecnlab.fct import Estimate, fct_estimates, fct_stats, flows_needed
from test_fct import flows_table, write_run

NAN = float("nan")
MS = 1e-3


def exponential_table(n: int, size: int = 20_000, seed: int = 0) -> pa.Table:
    """``n`` finished flows of one size, FCT exponential with a 1 ms mean."""
    fcts = np.random.default_rng(seed).exponential(MS, size=n)
    return flows_table([size] * n, list(fcts))


def with_slowdown(table: pa.Table, slowdown: list[float]) -> pa.Table:
    """The columns the engine's flows table gains: ideal_fct and slowdown
    (FCT over the ideal; NaN where undefined)."""
    fct = table.column("fct").to_numpy(zero_copy_only=False)
    ideal = [f / s if s == s and s > 0 else NAN for f, s in zip(fct, slowdown)]
    table = table.append_column("ideal_fct", pa.array(ideal, pa.float64()))
    return table.append_column("slowdown", pa.array(slowdown, pa.float64()))


def by_label(estimates: list[Estimate]) -> dict[str, Estimate]:
    return {e.label: e for e in estimates}


def test_each_percentile_has_its_count_tail_and_interval() -> None:
    table = exponential_table(2000)
    rows = by_label(fct_estimates(table))
    p99 = rows["fct small p99"]
    fcts = table.column("fct").to_numpy()
    assert p99.value == pytest.approx(np.quantile(fcts, 0.99))  # numpy's linear definition
    assert p99.value == pytest.approx(fct_stats(table)["small_p99"])  # as the summary stores
    assert p99.flows == 2000
    assert p99.above == 20  # h = 1999·0.99 = 1979.01: ranks 1981..2000 lie above
    assert p99.ci_low is not None and p99.ci_high is not None
    assert p99.ci_low < p99.value < p99.ci_high
    assert p99.warning is None
    # Every class with a finished flow gets p50, p99, p99.9; "all" holds every flow.
    assert [e.label for e in fct_estimates(table)] == [
        f"fct {cls} {stat}" for cls in ("small", "all") for stat in ("p50", "p99", "p99.9")
    ]
    assert rows["fct all p99"].value == p99.value
    json.dumps([e.as_dict() for e in fct_estimates(table)], allow_nan=False)


def test_intervals_are_deterministic_and_optional() -> None:
    table = exponential_table(500)
    assert fct_estimates(table) == fct_estimates(table)
    other_seed = by_label(fct_estimates(table, seed=1))["fct small p99"]
    assert other_seed.value == by_label(fct_estimates(table))["fct small p99"].value
    assert other_seed.ci_low != by_label(fct_estimates(table))["fct small p99"].ci_low
    bare = by_label(fct_estimates(table, resamples=0))["fct small p99"]
    assert bare.ci_low is None and bare.ci_high is None and bare.flows == 500
    with pytest.raises(ValueError, match="level"):
        fct_estimates(table, level=95)
    with pytest.raises(ValueError, match="resamples"):
        fct_estimates(table, resamples=-1)


def test_interval_covers_the_true_p99_in_about_95_percent_of_seeds() -> None:
    """FCTs exponential with a 1 ms mean: the true p99 is ln(100) ms. Over 200
    seeds of 3000 flows (30 above the p99), the 95% interval covers it in
    90-99% of them (deterministic: fixed seeds)."""
    truth = np.log(100.0) * MS
    hits = 0
    for seed in range(200):
        e = by_label(fct_estimates(exponential_table(3000, seed=seed), resamples=1000))
        p99 = e["fct small p99"]
        assert p99.ci_low is not None and p99.ci_high is not None
        hits += p99.ci_low <= truth <= p99.ci_high
    assert 0.90 <= hits / 200 <= 0.99


def test_a_thin_tail_is_warned_about() -> None:
    # 50 small flows: the p99 lies between the two largest, 1 flow above it.
    few = by_label(fct_estimates(exponential_table(50)))
    assert few["fct small p99"].above == 1
    warning = few["fct small p99"].warning
    assert warning is not None and "0-1 samples" in warning and "1,000 flows" in warning
    assert few["fct small p50"].warning is None
    # 500 flows: 5 above the p99, still under 10; 1500 flows: 15 above, no warning.
    middle = by_label(fct_estimates(exponential_table(500)))["fct small p99"]
    assert middle.above == 5 and middle.warning is not None and "only 5 above" in middle.warning
    enough = by_label(fct_estimates(exponential_table(1500)))
    assert enough["fct small p99"].warning is None
    assert enough["fct small p99.9"].warning is not None  # 1500 flows: 1 above the p99.9
    assert flows_needed(0.99) == 1000 and flows_needed(0.999) == 10_000 and flows_needed(0.5) == 20


def test_unfinished_and_other_flows_are_left_out() -> None:
    table = flows_table(
        [10_000, 10_000, 10_000, 1_000_000, -1],
        [1 * MS, 2 * MS, NAN, 5 * MS, NAN],
        kinds=["sized", "sized", "sized", "sized", "long"],
    )
    rows = by_label(fct_estimates(table))
    assert rows["fct small p50"].flows == 2 and rows["fct small p50"].value == pytest.approx(
        1.5 * MS
    )
    assert rows["fct medium p99"].flows == 1
    assert rows["fct all p50"].flows == 3
    assert "fct large p50" not in rows
    assert fct_estimates(flows_table([-1], [NAN], kinds=["long"])) == []


def test_slowdown_is_reported_when_the_column_is_there() -> None:
    sizes = [10_000] * 4 + [1_000_000] * 3 + [20_000_000]
    fcts = [1 * MS, 2 * MS, 3 * MS, NAN, 4 * MS, 5 * MS, 6 * MS, 7 * MS]
    slowdown = [1.0, 2.0, 6.0, NAN, 1.5, NAN, 2.5, 1.2]  # NaN: undefined (or unfinished)
    table = with_slowdown(flows_table(sizes, fcts), slowdown)
    rows = by_label(fct_estimates(table))
    small_mean = rows["slowdown small mean"]
    assert small_mean.value == pytest.approx(3.0) and small_mean.flows == 3
    assert small_mean.above is None and small_mean.warning is None
    assert small_mean.ci_low is not None and small_mean.ci_high is not None
    assert 1.0 <= small_mean.ci_low <= 3.0 <= small_mean.ci_high <= 6.0
    assert rows["slowdown small p50"].value == pytest.approx(2.0)
    assert rows["slowdown medium mean"].flows == 2  # one medium slowdown undefined
    assert rows["slowdown medium mean"].value == pytest.approx(2.0)
    assert rows["slowdown large p99"].flows == 1
    assert rows["slowdown all mean"].flows == 6
    assert rows["slowdown all p99"].warning is not None
    stats = ("mean", "p50", "p99", "p99.9")
    assert [e.label for e in fct_estimates(table) if e.metric == "slowdown"] == [
        f"slowdown {cls} {stat}" for cls in ("small", "medium", "large", "all") for stat in stats
    ]
    # A null slowdown counts as undefined, as NaN does.
    nulls = table.set_column(
        table.column_names.index("slowdown"), "slowdown", pa.array([None] * 8, pa.float64())
    )
    assert [e for e in fct_estimates(nulls) if e.metric == "slowdown"] == []


def test_no_slowdown_column_no_slowdown_rows() -> None:
    table = exponential_table(100)
    assert all(e.metric == "fct" for e in fct_estimates(table))
    assert "slowdown" not in table.column_names


# --------------------------------------------------------------------------- CLI


def estimate_lines(out: str) -> dict[str, list[str]]:
    """`ecnlab fct`'s percentile rows, by "metric class stat"."""
    rows: dict[str, list[str]] = {}
    for line in out.splitlines():
        cells = line.split()
        if (
            len(cells) > 3
            and cells[0] in ("fct", "slowdown")
            and cells[2].startswith(("p", "mean"))
        ):
            rows[" ".join(cells[:3])] = cells[3:]
    return rows


def test_cli_prints_counts_intervals_and_warnings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = write_run(tmp_path / "run", exponential_table(500))
    assert main(["fct", str(run)]) == 0
    out = capsys.readouterr().out
    assert "linear interpolation" in out and "95% percentile-bootstrap" in out
    rows = estimate_lines(out)
    # value, "..", CI: "<low> us .. <high> us"; then flows and above, then the mark.
    assert rows["fct small p99"][-3:] == ["500", "5", "!"]
    assert rows["fct small p50"][-2:] == ["500", "250"]
    assert ".." in rows["fct small p99"]
    # Every row marked '!' is told in one line (issue 55): how many, and
    # what a p99 needs; the per-row text is in --json.
    (note,) = [line for line in out.splitlines() if line.startswith("  ! ")]
    assert note.startswith("  ! 4 rows rest on fewer than 10 flows above the estimate")
    assert "a p99 1,000" in note
    assert not any(key.startswith("slowdown") for key in rows)
    assert main(["fct", str(run), "--resamples", "0"]) == 0
    bare = capsys.readouterr().out
    assert "no intervals" in bare and ".." not in estimate_lines(bare)["fct small p99"]


def test_cli_reports_slowdown_when_present(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = exponential_table(300)
    slowdown = list(np.random.default_rng(1).uniform(1.0, 5.0, size=300))
    slowdown[0] = NAN
    run = write_run(tmp_path / "run", with_slowdown(table, slowdown))
    assert main(["fct", str(run)]) == 0
    rows = estimate_lines(capsys.readouterr().out)
    assert rows["slowdown small mean"][-2:] == ["299", "-"]  # a mean has no "above"
    assert rows["slowdown small p99"][-3:] == ["299", "3", "!"]
    assert main(["fct", str(run), "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    labels = [f"{e['metric']} {e['size_class']} {e['stat']}" for e in document["estimates"]]
    assert "slowdown all p99.9" in labels and "fct small p99" in labels
    assert {"flows", "above", "ci_low", "ci_high", "warning"} <= set(document["estimates"][0])


def test_cli_baseline_gets_its_own_estimates(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ours = write_run(tmp_path / "ours", exponential_table(200, seed=1))
    base = write_run(tmp_path / "base", exponential_table(100, seed=2))
    assert main(["fct", str(ours), "--baseline", str(base), "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["estimates"][0]["flows"] == 200
    assert document["baseline"]["estimates"][0]["flows"] == 100
    assert main(["fct", str(ours), "--baseline", str(base)]) == 0
    out = capsys.readouterr().out
    assert f"percentiles of {ours}" in out and f"percentiles of {base}" in out


@pytest.mark.parametrize("argv", [["--resamples", "-1"], ["--seed", "x"]])
def test_cli_bad_bootstrap_arguments(
    tmp_path: Path, argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    run = write_run(tmp_path / "run", exponential_table(10))
    assert main(["fct", str(run), *argv]) == 2
    assert capsys.readouterr().err.startswith("ecnlab: error: ")
