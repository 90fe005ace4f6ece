"""Whether a record was drawn from the figure's current sweep.

A record (``record/<id>/``) keeps the store index rows its figure was drawn
from, each with its point key: a hash of the point's resolved config and the
model version (:func:`ecnlab.sweep.spec.point_key`). When a figure's sweep (its
``figure.toml`` or base experiment) changes after the record was made, the
record shows numbers of runs the figure no longer makes.
:func:`sweep_drift` recomputes the keys the figure's sweep gives now, at the
record's own model version (so a record made at an older model still
compares config for config), and names the points that differ.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..config import config_to_json
from ..sweep import Point, point_key
from .figure import Figure

__all__ = ["Drift", "sweep_drift"]


@dataclass
class Drift:
    """How a record's points differ from its figure's sweep now.

    ``gone``: recorded points the sweep no longer makes; ``new``: points it
    makes that the record lacks; ``changed``: the labels of points whose
    swept values are the same on both sides but whose configs differ (the
    base experiment or a fixed value moved). Each entry is a label (case and
    swept values) and the key."""

    gone: list[str] = field(default_factory=list)
    new: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    moved: list[str] = field(default_factory=list)
    """Points whose config is the same but whose outputs a later model
    moved (the engine's ``model_of`` is past the record's model)."""

    def __bool__(self) -> bool:
        return bool(self.gone or self.new or self.changed or self.moved)

    def text(self, limit: int = 4) -> str:
        parts = []
        for what, items in (
            ("changed config", self.changed),
            ("no longer in the sweep", self.gone),
            ("not in the record", self.new),
            ("moved by a later model", self.moved),
        ):
            if items:
                shown = "; ".join(items[:limit])
                more = f"; and {len(items) - limit} more" if len(items) > limit else ""
                parts.append(f"{len(items)} {what}: {shown}{more}")
        return " | ".join(parts)


def _label(case: str, params: Mapping[str, Any]) -> str:
    values = ", ".join(f"{k}={params[k]}" for k in sorted(params))
    return f"{case}: {values}" if case else values


def _row_params(row: Mapping[str, Any]) -> dict[str, Any]:
    """A recorded row's swept values: its dotted config keys (summary
    columns have no dots) with a value."""
    return {k: v for k, v in row.items() if "." in k and v is not None}


def current_keys(fig: Figure, model_version: int, engine: Any) -> dict[str, Point]:
    """{key: point} of the figure's full sweep now, keyed at
    ``model_version`` or, where the engine says an earlier model last moved
    a point's outputs (``model_of``), at that one, as the store keys it."""
    points = fig.sweep.points()
    out: dict[str, Point] = {}
    model_of = getattr(engine, "model_of", None)
    for p in points:
        resolved = str(engine.resolve(config_to_json(p.config)))
        p.resolved = resolved
        # The store keys a run by the last model that moved its outputs
        # (model 5 on); a record stamped with a later model than that keeps
        # the run's own key, so key at the earlier of the two.
        at = int(model_version)
        if model_of is not None:
            at = min(at, int(model_of(resolved)))
        p.key = point_key(resolved, f"model {at}")
        out[p.key] = p
    return out


def sweep_drift(
    fig: Figure, rows: Sequence[Mapping[str, Any]], model_version: int, engine: Any
) -> Drift:
    """Compare a record's index ``rows`` (made at ``model_version``) with
    what ``fig``'s sweep generates now."""
    now = current_keys(fig, model_version, engine)
    recorded = {str(r["key"]): r for r in rows}
    now_labels = {k: _label(p.case, p.params) for k, p in now.items()}
    rec_labels = {k: _label(str(r.get("case") or ""), _row_params(r)) for k, r in recorded.items()}
    drift = Drift()
    gone = {k: rec_labels[k] for k in recorded if k not in now}
    new = {k: now_labels[k] for k in now if k not in recorded}
    # The same swept values under another key: the config under them moved.
    by_label = {label: k for k, label in new.items()}
    for key, label in sorted(gone.items(), key=lambda kv: kv[1]):
        if label in by_label:
            drift.changed.append(f"{label} (recorded {key}, now {by_label.pop(label)})")
        else:
            drift.gone.append(f"{label} ({key})")
    drift.new = sorted(f"{label} ({k})" for label, k in by_label.items())
    model_of = getattr(engine, "model_of", None)
    if model_of is not None:
        drift.moved = sorted(
            f"{now_labels[k]} ({k}, model {int(model_of(p.resolved))})"
            for k, p in now.items()
            if int(model_of(p.resolved)) > int(model_version)
        )
    return drift
