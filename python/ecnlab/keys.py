"""Every key ecnlab accepts, as the engine declares it (type, default, what
is allowed, what it is, its paper and section), by section and by scheme:
the catalog (:func:`catalog`), the keys each table of an experiment file
takes (:func:`declared_keys`), the nearest names to a misspelled one
(:func:`nearest`), and the catalog as text (:func:`select`, :func:`render`;
``ecnlab keys``, :mod:`ecnlab.cli.keys`)."""

from __future__ import annotations

import json
import textwrap
from typing import Any

from .errors import ConfigError

__all__ = ["catalog", "declared_keys", "nearest", "render", "select"]

KINDS = ("qdisc", "scheduler", "marking", "cc", "recovery", "profile", "recipe")


def catalog() -> list[dict[str, Any]]:
    """The engine's catalog: sections, then schemes by kind."""
    from .runner import load_engine

    groups: list[dict[str, Any]] = json.loads(load_engine().keys_catalog())
    return groups


def _distance(a: str, b: str) -> int:
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a):
        diag, row[0] = row[0], i + 1
        for j, cb in enumerate(b):
            diag, row[j + 1] = row[j + 1], min(diag + (ca != cb), row[j] + 1, row[j + 1] + 1)
    return row[len(b)]


def nearest(given: str, names: list[str]) -> list[str]:
    """The names nearest ``given`` when near enough to be what was meant, as
    the engine judges a misspelled name: case and ``-``/``_`` do not count,
    and the edit distance is at most a third of the name's length (at least
    1). Ties all come back, in the list's order (at most three)."""

    def norm(s: str) -> str:
        return s.lower().replace("_", "-")

    g = norm(given)
    scored = [
        (d, n)
        for n in names
        if n != given and (d := _distance(g, norm(n))) <= max(1, -(-len(n) // 3))
    ]
    if not scored:
        return []
    best = min(d for d, _ in scored)
    return [n for d, n in scored if d == best][:3]


def declared_keys(groups: list[dict[str, Any]] | None = None) -> dict[str, list[str]]:
    """Every table of an experiment file and the keys the engine declares for
    it, its schemes' included: ``{"switch": [...], "fabric": [...], ...}``;
    ``""`` holds the tables themselves. ``[fabric]`` and ``[nic]`` take
    ``[switch]``'s per-port keys."""
    groups = catalog() if groups is None else groups
    out: dict[str, list[str]] = {}
    per_port: list[str] = []
    for g in groups:
        keys = out.setdefault(g["section"], [])
        for p in g["params"]:
            if p["key"] not in keys:
                keys.append(p["key"])
            if g["section"] == "switch" and p["per_port"] and p["key"] not in per_port:
                per_port.append(p["key"])
    out["fabric"] = list(per_port)
    out["nic"] = list(per_port)
    out[""] = [s for s in out if s]
    return out


def select(groups: list[dict[str, Any]], name: str | None) -> list[dict[str, Any]]:
    """The groups NAME asks for; every group without one. Raises
    :class:`ConfigError` naming the nearest names for one that matches
    nothing."""
    if not name:
        return groups
    bare = name.strip("[]")
    found = [g for g in groups if g["name"] == bare or g["kind"] == bare]
    if not found:
        found = [
            {**g, "params": [p for p in g["params"] if p["key"] == bare]}
            for g in groups
            if any(p["key"] == bare for p in g["params"])
        ]
    if found:
        return found
    names = sorted(
        {g["name"] for g in groups} | set(KINDS) | {p["key"] for g in groups for p in g["params"]}
    )
    near = sorted(names, key=lambda n: (_distance(bare, n), n))[:3]
    raise ConfigError(
        f"{name!r}: no section, scheme or key of that name; did you mean "
        + ", ".join(f"{n!r}" for n in near)
        + "? (`ecnlab keys` lists them all)"
    )


def _title(g: dict[str, Any]) -> str:
    if g["kind"] == "section":
        return f"[[{g['name']}]]" if g["name"] in ("flows", "ping", "incast") else f"[{g['name']}]"
    return f'{g["section"]}.{g["kind"]} = "{g["name"]}"'


def render(groups: list[dict[str, Any]], width: int = 100) -> str:
    """The groups as text: a head line per group, then each key with its
    type, default and range on one line and its doc indented below."""
    out: list[str] = []
    for g in groups:
        out.append(_title(g))
        wrap = textwrap.TextWrapper(width=width, initial_indent="  ", subsequent_indent="  ")
        out.extend(wrap.wrap(g["doc"] + "."))
        if g["source"]:
            out.extend(wrap.wrap(f"source: {g['source']}"))
        if g.get("fill_sources"):
            out.append("  fills in, where left out:")
            for (k, v), src in zip(g["fills"], g["fill_sources"]):
                out.extend(
                    textwrap.wrap(
                        f"{k} = {v} [{src}]",
                        width=width,
                        initial_indent="    ",
                        subsequent_indent="        ",
                    )
                )
        elif g.get("fills"):
            fills = ", ".join(f"{k} = {v}" for k, v in g["fills"])
            out.extend(wrap.wrap(f"fills in, where left out: {fills}"))
        if not g["params"] and not g.get("fills"):
            out.append("  (no keys of its own)")
        for p in g["params"]:
            facts = [p["type"], f"default {p['default']}"]
            if p["range"]:
                facts.append(f"allowed {p['range']}")
            if g["name"] == "switch" and not p["per_port"]:
                facts.append("[switch] only")
            out.append(f"  {p['key']}: " + "; ".join(facts))
            doc = p["doc"] + (f" [{p['source']}]" if p["source"] else "")
            out.extend(
                textwrap.wrap(doc, width=width, initial_indent="      ", subsequent_indent="      ")
            )
        out.append("")
    return "\n".join(out).rstrip() + "\n"
