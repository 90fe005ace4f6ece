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


# --------------------------------------------------------------- issue 53's stricter rules


def _row(x: object, values: list[float]) -> dict[str, object]:
    from ecnlab.reproduce.noise import mean_interval

    iv = mean_interval(values)
    return {
        "x": x,
        "ours": iv.mean,
        "ci_low": iv.low,
        "ci_high": iv.high,
        "n": len(values),
        "seeds": list(range(1, len(values) + 1)),
        "per_seed": values,
    }


def _judged(expect: Expect, series: dict[str, dict[object, list[float]]]) -> list[dict]:
    from ecnlab.reproduce import _judge
    from ecnlab.reproduce.figure import Panel

    rows = {s: [_row(x, v) for x, v in by_x.items()] for s, by_x in series.items()}
    return _judge(expect, Panel(title="p"), rows)


def test_an_order_is_a_match_only_beyond_the_paired_interval() -> None:
    # fqcodel-fig2 in issue 53: "below" matched on a ratio of 1.00008. The
    # seeds pair the flows, so the gap A/B - 1 is taken seed by seed.
    below = e("below", than="B")
    tie = _judged(below, {"A": {1: [0.9999, 1.0002, 0.9998]}, "B": {1: [1.0, 1.0, 1.0]}})
    assert tie[0]["verdict_point"] == "matches"  # at the mean: 0.99997 < 1
    assert tie[0]["verdict"] == "within noise"  # the interval holds 0
    clear = _judged(below, {"A": {1: [0.90, 0.91, 0.92]}, "B": {1: [1.0, 1.0, 1.0]}})
    assert clear[0]["verdict"] == "matches"
    # Against a bound the paper gives (no series): the value's own interval.
    bound = _judged(e("below", paper=1.0), {"A": {1: [0.98, 1.01, 0.99]}})
    assert bound[0]["verdict"] == "within noise"


def test_a_trend_is_one_verdict_per_series() -> None:
    # Tuning ECN Figs. 5-8 in issue 53: one trend copied onto 32 points
    # counted 32 times; now once, with the points it was read from.
    up = e("increasing")
    checks = _judged(up, {"A": {x: [float(x)] * 3 for x in (1, 2, 3, 4)}, "B": {1: [1.0] * 3}})
    a = [c for c in checks if c["series"] == "A"]
    assert len(a) == 1 and a[0]["verdict"] == "matches"
    assert a[0]["xs"] == [1, 2, 3, 4] and a[0]["values"] == [1.0, 2.0, 3.0, 4.0]


def test_within_is_symmetric() -> None:
    # The same pair, judged from either side, gets one verdict (issue 53:
    # tuning-ecn-fig10's DCTCP/ECN* pair differed by side). Old rule:
    # 1/1.0295 - 1 = -2.87% matched ±2.9%, 1.0295/1 - 1 = +2.95% did not.
    w = e("within", than="B", tolerance=0.029)
    one = judge_point(w, 1.0, 1.0295, True)[0]
    other = judge_point(w, 1.0295, 1.0, True)[0]
    assert one == other == "same direction"
    assert judge_point(w, 1.0, 1.0289, True)[0] == judge_point(w, 1.0289, 1.0, True)[0] == "matches"


def test_a_loss_is_judged_as_the_loss() -> None:
    # cedm-fig10 in issue 53: ±5% on the total let 9.998 Gbps (a loss of
    # 0.002) match the paper's 9.79 (a loss of 0.210).
    loss = e("value", paper=9.79, tolerance=0.2, loss_from=10.0)
    assert judge_point(loss, 9.998, None, False)[0] == "same direction"
    assert judge_point(loss, 9.80, None, False)[0] == "matches"  # 0.200 of 0.210
    assert judge_point(loss, 10.0, None, False)[0] == "differs"  # no loss at all
    assert "loss from 10" in rule_text(loss, False)


def test_claims_the_paper_does_not_make_are_counted_apart() -> None:
    from ecnlab.reproduce import verdict_counts
    from ecnlab.reproduce.figure import implied_reason

    assert implied_reason("(inferred: the text gives no number) x") == "inferred"
    assert implied_reason("MQ-ECN design, not measured") == "design, not measured"
    assert implied_reason("MQ-ECN cuts the small-flow average by up to 23.7%") == ""
    ours = e("below", than="B", implied="inferred")
    checks = _judged(ours, {"A": {1: [0.5, 0.6, 0.55]}, "B": {1: [1.0] * 3}})
    assert checks[0]["implied"] == "inferred"
    stated, implied = verdict_counts(checks)
    assert stated["matches"] == 0 and implied["matches"] == 1
