"""Verdict rules of `ecnlab reproduce`, on hand-made numbers."""

from __future__ import annotations

import math

from ecnlab.reproduce.figure import Expect
from ecnlab.reproduce.verdict import judge_best, judge_point, judge_trend, rule_text


def e(rule: str, **kw: object) -> Expect:
    return Expect(panel=0, rule=rule, text="t", **kw)  # type: ignore[arg-type]


def test_value_rule() -> None:
    x = e("value", paper=0.80, tolerance=0.1)
    assert judge_point(x, 0.85, None, normalized=True)[0] == "matches"  # 6% off
    assert (
        judge_point(x, 0.95, None, normalized=True)[0] == "same direction"
    )  # below 1, like the paper
    assert judge_point(x, 1.05, None, normalized=True)[0] == "differs"  # above 1: the other side
    assert judge_point(x, math.nan, None, normalized=True)[0] == "differs"
    # Not normalised and no reference: only matches or differs.
    assert judge_point(e("value", paper=539.0), 487.0, None, normalized=False)[0] == "matches"
    assert (
        judge_point(e("value", paper=539.0, tolerance=0.05), 487.0, None, normalized=False)[0]
        == "differs"
    )


def test_below_and_above() -> None:
    below = e("below", than="std")
    assert judge_point(below, 0.9, 1.0, True)[0] == "matches"
    assert judge_point(below, 1.1, 1.0, True)[0] == "differs"
    # With the paper's amount: 43.7% lower ±10% of it.
    by = e("below", than="std", paper=0.437, tolerance=0.1)
    assert judge_point(by, 0.57, 1.0, True)[0] == "matches"  # 43% lower
    assert judge_point(by, 0.9, 1.0, True)[0] == "same direction"  # lower, not by that much
    # A tie within slack is "same direction", beyond it "differs".
    slack = e("above", than="std", slack=0.02)
    assert judge_point(slack, 1.01, 1.0, True)[0] == "same direction"
    assert judge_point(slack, 0.95, 1.0, True)[0] == "differs"
    assert judge_point(slack, 1.05, 1.0, True)[0] == "matches"
    # Against a fixed value instead of a series.
    assert judge_point(e("below", paper=42.8), 31.0, None, False)[0] == "matches"


def test_within() -> None:
    w = e("within", than="std", tolerance=0.027)
    assert judge_point(w, 1.02, 1.0, True)[0] == "matches"
    assert judge_point(w, 1.04, 1.0, True)[0] == "same direction"
    assert judge_point(w, 1.10, 1.0, True)[0] == "differs"


def test_trends() -> None:
    up = e("increasing", slack=0.02)
    assert judge_trend(up, [1, 2, 3, 4]) == "matches"
    assert judge_trend(up, [1, 2, 1.99, 4]) == "matches"  # a 0.5% dip is within slack
    assert judge_trend(up, [1, 3, 2, 4]) == "same direction"
    assert judge_trend(up, [4, 3, 2, 1]) == "differs"
    assert judge_trend(e("decreasing"), [4, 3, 2, 1]) == "matches"
    flat = e("flat", tolerance=0.01)
    assert judge_trend(flat, [1.0, 1.005, 0.996]) == "matches"
    assert judge_trend(flat, [1.0, 1.015, 0.99]) == "same direction"
    assert judge_trend(flat, [1.0, 1.2]) == "differs"
    assert judge_trend(up, [1.0]) == "differs"  # no trend from one point


def test_rule_text_names_the_thresholds() -> None:
    assert "±10%" in rule_text(e("value", paper=1.0), True)
    assert "43.7%" in rule_text(e("below", than="std", paper=0.437), True)
    assert "within ±3%" in rule_text(e("within", than="std", tolerance=0.03), True)


def test_best_gap_for_up_to_claims() -> None:
    # "up to 43.7% lower": our largest reduction over x, judged where it is.
    up_to = e("best_below", than="std", paper=0.437, tolerance=0.2)
    at, verdict = judge_best(up_to, [(0.9, 1.0), (0.6, 1.0), (0.8, 1.0)])
    assert (at, verdict) == (1, "matches")  # 40% lower at the second x
    assert judge_best(up_to, [(0.9, 1.0), (0.95, 1.0)]) == (0, "same direction")
    assert judge_best(up_to, [(1.1, 1.0), (1.05, 1.0)])[1] == "differs"
    above = e("best_above", than="std", paper=0.11, tolerance=0.3)
    assert judge_best(above, [(1.12, 1.0), (1.02, 1.0)]) == (0, "matches")
