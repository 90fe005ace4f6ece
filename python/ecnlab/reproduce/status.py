"""Where the full-scale record stands: ``ecnlab reproduce --status``.

For each figure: its points at full scale, whether it has a current record,
how many of its points have rows in the repository (its record's, or the
rows a ``--record`` run would take: a carry file's or any record's with a
build, for a figure drawn from summary columns; :mod:`.carry` checks other
builds' rows at run time), and the machine time left, estimated from the
mean run time of the rows it has (or, with none, of the rows of the figures
that share its points). The record is planned in pieces across machines,
and this is the table to plan them from.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..sweep import resolve_points
from .carry import carried_rows
from .figure import load_figure
from .metrics import reads_tables
from .record import read_record, record_ids, stale_records

__all__ = ["format_points", "format_status", "point_counts", "record_status"]


def record_status(root: str | Path, ids: Iterable[str]) -> list[dict[str, Any]]:
    """One row per figure: ``id``, ``points``, ``record`` (its date,
    ``"stale"`` or ``""``), ``have`` (points with a row: a current record's
    own, else the rows a ``--record`` run would take), ``left`` and
    ``core_hours_left`` (None when no row gives a run time)."""
    from ..runner import load_engine

    engine = load_engine()
    model = int(engine.model_version())
    base = Path(root)
    rows = carried_rows(base)
    stale = stale_records(base, model, int(engine.unmoved_since()))
    recorded = set(record_ids(base))
    out = []
    for fid in ids:
        fig = load_figure(fid)
        spec = fig.sweep
        points = spec.points()
        resolve_points(spec, points, engine)
        keys = {p.key for p in points if not p.error}
        if fid in recorded and fid not in stale:
            # Its own rows, whatever their build; a record that does not
            # cover its sweep (the sweep changed since) shows points left.
            doc = read_record(base, fid)
            record = str(doc["record"].get("date", "?"))
            own = {str(r.get("key")): r for r in doc["index"] if isinstance(r, dict)}
            have = [own[k] for k in keys if k in own]
        else:
            record = "stale" if fid in stale else ""
            # What a --record run would take: rows with a build, and none
            # for a figure that reads per-flow tables (carry.py).
            usable = not reads_tables(fig.panels)
            have = [rows[k][0] for k in keys if k in rows] if usable else []
        left = len(keys) - len(have)
        taken = {str(r.get("key")) for r in have}
        walls = [float(r.get("wall_seconds") or 0.0) for r in have]
        mean = sum(walls) / len(walls) if walls else None
        out.append(
            {
                "id": fid,
                "points": len(keys),
                "record": record,
                "have": len(have),
                "left": left,
                "core_hours_left": mean * left / 3600 if mean is not None else None,
                # For the total: figures that share points count them once.
                "left_keys": sorted(keys - taken),
                "seconds_a_point": mean,
            }
        )
    return out


def format_status(rows: list[dict[str, Any]]) -> str:
    lines = [
        f"{'figure':<18} {'points':>6}  {'recorded':<12} {'rows':>5} {'left':>5} "
        f"{'core-hours left':>15}"
    ]
    cost: dict[str, float | None] = {}
    for r in rows:
        for key in r["left_keys"]:
            if cost.get(key) is None:
                cost[key] = r["seconds_a_point"]
    total = sum(c for c in cost.values() if c is not None) / 3600
    unknown = sum(1 for c in cost.values() if c is None)
    for r in rows:
        hours = r["core_hours_left"]
        if hours is None and r["left_keys"] and all(cost[k] is not None for k in r["left_keys"]):
            # No row of its own, but figures sharing its points timed them
            # (ML-ECN Fig. 6's points are Fig. 4's).
            hours = sum(cost[k] or 0.0 for k in r["left_keys"]) / 3600
        shown = "-" if not r["left"] else ("?" if hours is None else f"{hours:.1f}")
        lines.append(
            f"{r['id']:<18} {r['points']:>6}  {r['record'] or '-':<12} "
            f"{r['have']:>5} {r['left']:>5} {shown:>15}"
        )
    note = f", and {unknown} more with no row to time yet" if unknown else ""
    lines.append(
        f"{len(cost)} distinct points left (figures sharing a sweep count its points once): "
        f"about {total:.1f} core-hours for those timed{note}; times are the rows' own, "
        "taken on whatever machine and load ran them"
    )
    return "\n".join(lines)


def point_counts(ids: Iterable[str]) -> list[dict[str, Any]]:
    """``{id, points}`` per figure: its full-scale sweep's distinct points
    (what an install without the record can still tell)."""
    from ..runner import load_engine

    engine = load_engine()
    out = []
    for fid in ids:
        spec = load_figure(fid).sweep
        points = spec.points()
        resolve_points(spec, points, engine)
        out.append({"id": fid, "points": len({p.key for p in points if not p.error})})
    return out


def format_points(rows: list[dict[str, Any]], why: str) -> str:
    """``--status`` where no record is at hand: ``why``, then each figure's
    points at full scale."""
    lines = [why, f"{'figure':<18} {'points':>6}"]
    lines += [f"{r['id']:<18} {r['points']:>6}" for r in rows]
    return "\n".join(lines)
