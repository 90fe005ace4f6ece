"""Judging our numbers against what a paper reports.

Four verdicts: ``matches`` (the number, or the stated relation with its
amount, holds within the tolerance; an order with no amount holds beyond
the 95% interval of the paired gap over seeds), ``within noise`` (the
paper's number, or the relation's boundary, lies inside our 95% interval:
the seeds cannot tell the two apart), ``same direction`` (the effect has
the paper's sign or trend, not its size), ``differs`` (it does not). Each
rule says which is which in the JSON it writes (``rule`` text), so a reader
can check the call; ``verdict_point`` keeps the call at the mean alone.

The rules are strict in four ways (issue 53): an order claim is a match
only when its gap clears the paired interval; ``within`` is symmetric (the
log of the ratio, so A against B and B against A agree); a value with
``loss_from`` is judged as the loss from that capacity (the quantity the
paper states), never as the total that hides it; a trend is one verdict
per series (:func:`judge_trend`; the caller counts it once).
"""

from __future__ import annotations

import math
from typing import Any

from .figure import Expect

__all__ = [
    "VERDICTS",
    "is_order",
    "judge_best",
    "judge_point",
    "judge_trend",
    "noise_check",
    "rule_text",
]

VERDICTS = ("matches", "within noise", "same direction", "differs")

_NOISE_TEXT = (
    "; within noise (over the verdict at our mean): the paper's value lies inside our 95% "
    "interval over seeds"
)


def _rel(a: float, b: float) -> float:
    return a / b - 1.0 if b else math.inf


def _log_gap(a: float, b: float) -> float:
    """|ln(a / b)|: the same for (a, b) and (b, a); infinite across zero."""
    if a == b:
        return 0.0
    if a <= 0 or b <= 0:
        return math.inf if a * b <= 0 else abs(math.log(a / b))
    return abs(math.log(a / b))


def is_order(e: Expect) -> bool:
    """A relation with no stated amount: below/above a series or a bound."""
    return e.rule in ("below", "above") and not (e.than and e.paper is not None)


def rule_text(e: Expect, normalized: bool) -> str:
    """The rule behind a verdict, in words."""
    text = _rule_text(e, normalized)
    if e.rule in ("increasing", "decreasing", "flat"):
        return text
    return text + _NOISE_TEXT


def _rule_text(e: Expect, normalized: bool) -> str:
    tol = f"{e.tolerance:.0%}"
    if e.rule == "value" and e.loss_from is not None:
        return (
            f"judged as the loss from {e.loss_from:g} (the paper's {e.loss_from - e.paper:.4g}): "
            f"matches: the loss within ±{tol} of the paper's; same direction: a loss, of another "
            "size; else differs"
        )
    if e.rule == "value":
        side = " (normalised: the side of 1)" if normalized else ""
        return (
            f"matches: within ±{tol} of the paper's value; same direction: on the same side "
            f"of {'1' if normalized else 'the reference'} as the paper{side}; else differs"
        )
    ref = f"series {e.than!r}" if e.than else f"{e.paper}"
    if e.rule in ("below", "above"):
        amount = f" by {abs(e.paper):.1%} ±{tol}" if e.than and e.paper is not None else ""
        slack = f" (ties within {e.slack:.1%} count as same direction)" if e.slack else ""
        if is_order(e):
            return (
                f"matches: {e.rule} {ref}, the 95% interval over seeds of the "
                f"{'paired gap' if e.than else 'value'} clear of the boundary; within noise: "
                f"{e.rule} it at the mean only{slack}; differs: not {e.rule} it"
            )
        return (
            f"matches: {e.rule} {ref}{amount}; same direction: {e.rule} it but not by that "
            f"amount{slack}; differs: not {e.rule} it"
        )
    if e.rule == "within":
        wide = f"{2 * e.tolerance:.0%}"
        return (
            f"matches: within ±{tol} of {ref} either way (|ln(ours / it)| <= ln(1 + {tol})); "
            f"same direction: within ±{wide}; else differs"
        )
    if e.rule in ("best_below", "best_above"):
        side = "below" if e.rule == "best_below" else "above"
        return (
            f"the paper's 'up to {abs(e.paper or 0):.1%} {side} {e.than}': our largest gap {side} "
            f"it over the plotted x, judged at that x. matches: within ±{tol} of the paper's; "
            f"same direction: {side} it somewhere, by another amount; else differs"
        )
    slack = f"{e.slack:.1%}" if e.slack else "0"
    if e.rule == "flat":
        wide = f"{2 * e.tolerance:.0%}"
        return (
            f"matches: every point within ±{tol} of the series mean; "
            f"same direction: within ±{wide}; else differs"
        )
    return (
        f"matches: {e.rule} at every step (steps against it under {slack} allowed); "
        f"same direction: last point {'above' if e.rule == 'increasing' else 'below'} "
        "the first; else differs"
    )


def judge_point(e: Expect, ours: float, than: float | None, normalized: bool) -> tuple[str, Any]:
    """Verdict of a point rule (value, below, above, within) and the paper's
    side of it (its number, or the relation it states)."""
    if ours is None or math.isnan(ours):
        return "differs", e.paper
    if e.rule == "value" and e.loss_from is not None:
        assert e.paper is not None
        loss, paper_loss = e.loss_from - ours, e.loss_from - e.paper
        if abs(loss - paper_loss) <= e.tolerance * abs(paper_loss):
            return "matches", e.paper
        return ("same direction" if loss * paper_loss > 0 else "differs"), e.paper
    if e.rule == "value":
        assert e.paper is not None
        if abs(ours - e.paper) <= e.tolerance * abs(e.paper):
            return "matches", e.paper
        ref = 1.0 if normalized else (than if than is not None else None)
        if ref is not None and (ours - ref) * (e.paper - ref) > 0:
            return "same direction", e.paper
        return "differs", e.paper
    reference = than if e.than else e.paper
    if reference is None or math.isnan(reference):
        return "differs", e.paper
    d = _rel(ours, reference)
    if e.rule == "within":
        gap = _log_gap(ours, reference)
        if gap <= math.log1p(e.tolerance) + 1e-12:
            return "matches", e.paper
        wide = math.log1p(2 * e.tolerance) + 1e-12
        return ("same direction" if gap <= wide else "differs"), e.paper
    want = -1.0 if e.rule == "below" else 1.0
    if d * want > e.slack:
        if e.than and e.paper is not None:  # the paper states by how much
            amount = abs(d)
            if abs(amount - abs(e.paper)) <= e.tolerance * max(abs(e.paper), 1e-9):
                return "matches", e.paper
            return "same direction", e.paper
        return "matches", e.paper
    if abs(d) <= e.slack:
        return "same direction", e.paper
    return "differs", e.paper


def judge_trend(e: Expect, values: list[float]) -> str:
    """Verdict of a series rule (increasing, decreasing, flat) over x."""
    vals = [v for v in values if v is not None and not math.isnan(v)]
    if len(vals) < 2:
        return "differs"
    if e.rule == "flat":
        mean = sum(vals) / len(vals)
        worst = max(abs(_rel(v, mean)) for v in vals)
        if worst <= e.tolerance:
            return "matches"
        return "same direction" if worst <= 2 * e.tolerance else "differs"
    sign = 1.0 if e.rule == "increasing" else -1.0
    steps = [_rel(b, a) * sign for a, b in zip(vals, vals[1:]) if a]
    if all(s >= -e.slack for s in steps):
        return "matches"
    if (vals[-1] - vals[0]) * sign > 0:
        return "same direction"
    return "differs"


def judge_best(e: Expect, pairs: list[tuple[float, float]]) -> tuple[int, str]:
    """An "up to X%" claim: the index of the pair (ours, than) with our
    largest gap in the stated direction, and its verdict."""
    sign = -1.0 if e.rule == "best_below" else 1.0
    gaps = [
        sign * _rel(o, t) if t and not math.isnan(o) and not math.isnan(t) else -math.inf
        for o, t in pairs
    ]
    if not gaps:
        return 0, "differs"
    best = max(range(len(gaps)), key=lambda i: gaps[i])
    gap, want = gaps[best], abs(e.paper or 0.0)
    if gap > 0 and abs(gap - want) <= e.tolerance * want:
        return best, "matches"
    return best, "same direction" if gap > 0 else "differs"


def noise_check(
    e: Expect, row: dict[str, Any], than_row: dict[str, Any] | None
) -> dict[str, Any] | None:
    """The interval a point rule's claim is tested against, and whether the
    paper's side of it lies inside: for ``value`` (or a relation to a paper
    number) the interval of our value; for a relation to another series, of
    the gap ours/theirs - 1 taken seed by seed (the seeds pair the flows),
    against the paper's amount, or 0 (the relation's boundary) where it
    states none. None where there is no interval (one seed, a trend rule)."""
    from .noise import mean_interval

    if e.rule in ("increasing", "decreasing", "flat"):
        return None
    if e.than is None:
        if e.paper is None or row.get("ci_low") is None or row.get("ci_high") is None:
            return None
        low, high, target = float(row["ci_low"]), float(row["ci_high"]), float(e.paper)
        quantity = "ours"
    else:
        if than_row is None:
            return None
        theirs = dict(zip(than_row.get("seeds", []), than_row.get("per_seed", [])))
        gaps = [
            _rel(v, theirs[k])
            for k, v in zip(row.get("seeds", []), row.get("per_seed", []))
            if k in theirs and theirs[k] and not math.isnan(v) and not math.isnan(theirs[k])
        ]
        sign = -1.0 if e.rule in ("below", "best_below") else 1.0
        amount = e.paper is not None and e.rule != "within"
        values = [sign * g for g in gaps] if amount else gaps
        iv = mean_interval(values)
        if math.isnan(iv.low):
            return None
        low, high = iv.low, iv.high
        target = abs(float(e.paper or 0.0)) if amount else 0.0
        quantity = (
            f"{'amount ' + ('below' if sign < 0 else 'above') if amount else 'gap'} to {e.than}"
        )
    return {
        "quantity": quantity,
        "ci_low": low,
        "ci_high": high,
        "target": target,
        # Seeds that all agree leave a zero-width interval: no noise to
        # appeal to (an exact tie on a relation's boundary stays a tie).
        "holds": low < high and low <= target <= high,
    }
