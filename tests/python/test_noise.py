"""Seed noise of the reproduced figures: the Student-t interval, the paired
per-seed means of a panel, and the "within noise" verdict, on hand-made
numbers (docs/statistics.md, "Seeds and intervals of the reproduced
figures")."""

from __future__ import annotations

import math
from typing import Any

import pytest

from ecnlab.reproduce import _judge, _panel_values
from ecnlab.reproduce.figure import Expect, Panel
from ecnlab.reproduce.metrics import PointView
from ecnlab.reproduce.noise import mean_interval, t_quantile
from ecnlab.reproduce.verdict import VERDICTS, noise_check
from ecnlab.sweep import Point


@pytest.mark.parametrize(
    ("dof", "expected"),
    # The 97.5% points of Student's t, from the NIST/SEMATECH e-Handbook of
    # Statistical Methods, table 1.3.6.7.2 (three decimals there).
    [(1, 12.706), (2, 4.303), (3, 3.182), (4, 2.776), (9, 2.262), (29, 2.045), (100, 1.984)],
)
def test_t_quantile_matches_the_table(dof: int, expected: float) -> None:
    assert t_quantile(0.975, dof) == pytest.approx(expected, abs=5e-4)


def test_t_quantile_large_dof_tends_to_the_normal() -> None:
    # 1.95996 is the normal's 97.5% point; at 10,000 dof t is within 1e-3.
    assert t_quantile(0.975, 10_000) == pytest.approx(1.95996, abs=1e-3)


def test_interval_by_hand() -> None:
    # 1..5: mean 3, s = sqrt(2.5) (divisor n - 1 = 4), standard error
    # sqrt(2.5 / 5) = 0.707107; t(0.975, 4) = 2.776445, so the half-width is
    # 1.963243 and the interval [1.036757, 4.963243].
    iv = mean_interval([1.0, 2.0, 3.0, 4.0, 5.0])
    assert iv.n == 5 and iv.mean == 3.0
    assert iv.low == pytest.approx(1.036757, abs=1e-6)
    assert iv.high == pytest.approx(4.963243, abs=1e-6)


def test_interval_of_three_seeds_by_hand() -> None:
    # 10, 12, 14: s = 2, se = 2/sqrt(3) = 1.154701, t(0.975, 2) = 4.302653,
    # half-width 4.968275.
    iv = mean_interval([10.0, 12.0, 14.0])
    assert iv.low == pytest.approx(12 - 4.968275, abs=1e-5)
    assert iv.high == pytest.approx(12 + 4.968275, abs=1e-5)


def test_one_value_has_no_interval_and_nan_is_left_out() -> None:
    one = mean_interval([7.0, math.nan])
    assert one.n == 1 and one.mean == 7.0 and math.isnan(one.low) and math.isnan(one.high)
    assert mean_interval([]).n == 0


# --------------------------------------------------------------------------- panel values


def _points(values: dict[tuple[str, float, int], float]) -> tuple[list[Point], Any]:
    """Points of a (case, load, seed) grid whose metric ``m`` is given."""
    points, rows = [], {}
    for i, ((case, load, seed), v) in enumerate(values.items()):
        key = f"k{i}"
        points.append(Point(i, case, {"workload.load": load, "run.seed": seed}, {}, key=key))
        rows[key] = PointView(None, key, {"m": v})  # type: ignore[arg-type]
    return points, rows.get


def test_panel_means_over_seeds_with_an_interval() -> None:
    pts, view = _points({("a", 0.5, 1): 10.0, ("a", 0.5, 2): 12.0, ("a", 0.5, 3): 14.0})
    panel = Panel(title="t", metric="m", x="workload.load")
    [row] = _panel_values(panel, pts, view)["a"]
    assert row["ours"] == 12.0 and row["n"] == 3 and row["seeds"] == [1, 2, 3]
    assert row["ci_low"] == pytest.approx(12 - 4.968275, abs=1e-5)


def test_normalisation_is_paired_by_seed() -> None:
    # Seed 1: 2/1, seed 2: 40/20, seed 3: 6/3: the ratio is 2 on every seed,
    # so its interval has no width, while the ratio of the means (16/8 = 2)
    # would hide that the raw values spread widely.
    pts, view = _points(
        {
            ("base", 0.5, 1): 1.0,
            ("base", 0.5, 2): 20.0,
            ("base", 0.5, 3): 3.0,
            ("new", 0.5, 1): 2.0,
            ("new", 0.5, 2): 40.0,
            ("new", 0.5, 3): 6.0,
        }
    )
    panel = Panel(title="t", metric="m", x="workload.load", normalize="base")
    [row] = _panel_values(panel, pts, view)["new"]
    assert row["ours"] == pytest.approx(2.0)
    assert row["ci_low"] == pytest.approx(2.0) and row["ci_high"] == pytest.approx(2.0)
    assert row["raw"] == pytest.approx(16.0)


def test_seedless_points_have_no_interval() -> None:
    pts = [Point(0, "a", {"workload.load": 0.5}, {}, key="k0")]
    view = {"k0": PointView(None, "k0", {"m": 3.0})}.get  # type: ignore[arg-type]
    [row] = _panel_values(Panel(title="t", metric="m", x="workload.load"), pts, view)["a"]
    assert row["n"] == 1 and row["ci_low"] is None and row["ci_high"] is None


# --------------------------------------------------------------------------- within noise


def _row(values: list[float], seeds: list[int] | None = None) -> dict[str, Any]:
    iv = mean_interval(values)
    return {
        "x": 0.5,
        "ours": iv.mean,
        "ci_low": None if math.isnan(iv.low) else iv.low,
        "ci_high": None if math.isnan(iv.high) else iv.high,
        "n": iv.n,
        "seeds": seeds or list(range(1, len(values) + 1)),
        "per_seed": values,
    }


def test_within_noise_is_a_verdict() -> None:
    assert VERDICTS == ("matches", "within noise", "same direction", "differs")


def test_value_rule_within_noise() -> None:
    # Paper 14.5, tolerance 10%: our mean 12 is 17% off (differs at the
    # mean), but 14.5 lies inside [7.03, 16.97].
    e = Expect(panel=0, rule="value", paper=14.5, tolerance=0.1, text="t")
    panel = Panel(title="t", metric="m", x="workload.load")
    [check] = _judge(e, panel, {"a": [_row([10.0, 12.0, 14.0])]})
    assert check["verdict_point"] == "differs" and check["verdict"] == "within noise"
    assert check["noise"]["target"] == 14.5
    # A paper value outside the interval keeps the verdict at the mean.
    far = Expect(panel=0, rule="value", paper=20.0, tolerance=0.1, text="t")
    [check] = _judge(far, panel, {"a": [_row([10.0, 12.0, 14.0])]})
    assert check["verdict"] == "differs"
    # So does one seed: no interval, no noise to appeal to.
    [check] = _judge(e, panel, {"a": [_row([12.0])]})
    assert check["verdict"] == "differs" and "noise" not in check


def test_matches_stays_matches() -> None:
    e = Expect(panel=0, rule="value", paper=12.5, tolerance=0.1, text="t")
    [check] = _judge(e, Panel(title="t", metric="m", x="x"), {"a": [_row([10.0, 12.0, 14.0])]})
    assert check["verdict"] == "matches"


def test_relation_to_a_series_uses_the_paired_gap() -> None:
    # The paper: "a" is 20% below "b". Per seed a/b - 1 = -0.10, -0.15,
    # -0.20: amount below 0.15 on average (25% off 0.20, beyond the 10%
    # tolerance: same direction at the mean), interval 0.15 ± 4.302653 *
    # 0.05/sqrt(3) = 0.15 ± 0.124207 = [0.026, 0.274], which holds 0.20:
    # within noise.
    e = Expect(panel=0, rule="below", than="b", paper=0.2, tolerance=0.1, text="t")
    a = _row([0.9, 8.5, 0.8])
    b = _row([1.0, 10.0, 1.0])
    [check] = _judge(e, Panel(title="t", metric="m", x="x"), {"a": [a], "b": [b]})
    assert check["verdict_point"] == "same direction" and check["verdict"] == "within noise"
    assert check["noise"]["ci_low"] == pytest.approx(0.15 - 0.124207, abs=1e-5)
    # Unpaired seeds give no gap interval: the verdict at the mean stands.
    odd = _row([1.0, 10.0, 1.0], seeds=[4, 5, 6])
    assert noise_check(e, a, odd) is None


def test_relation_without_amount_within_noise_when_the_sign_is_unsure() -> None:
    # "a below b", but the gaps are -0.1, +0.05, +0.08: the mean is above
    # (differs), and 0 lies in the gap's interval.
    e = Expect(panel=0, rule="below", than="b", text="t")
    a, b = _row([0.9, 1.05, 1.08]), _row([1.0, 1.0, 1.0])
    [check] = _judge(e, Panel(title="t", metric="m", x="x"), {"a": [a], "b": [b]})
    assert check["verdict_point"] == "differs" and check["verdict"] == "within noise"


def test_an_exact_tie_across_seeds_is_not_noise() -> None:
    # "a below b" and every seed gives a = b (a long flow at line rate
    # whatever the threshold): the gap's interval is [0, 0]. It holds the
    # boundary, but nothing varies, so the verdict at the mean stands.
    e = Expect(panel=0, rule="below", than="b", text="t")
    a, b = _row([0.973, 0.973, 0.973]), _row([0.973, 0.973, 0.973])
    [check] = _judge(e, Panel(title="t", metric="m", x="x"), {"a": [a], "b": [b]})
    assert check["verdict"] == check["verdict_point"] != "within noise"
    assert check["noise"]["ci_low"] == check["noise"]["ci_high"] == 0.0


def test_trend_rules_have_no_noise_check() -> None:
    e = Expect(panel=0, rule="increasing", text="t")
    assert noise_check(e, _row([1.0, 2.0, 3.0]), None) is None
