"""The transport a run used, told from its resolved config: the congestion
control, the tuning profile (``transport.profile``) and what the profile
filled in, and the keys where the file's own value beat the profile's.

The engine lets a key the experiment gives explicitly win over the
profile's (``crates/ecnlab/src/host/profile.rs``), so ``--set
transport.profile=linux`` on a file with ``cc = "reno"`` runs Reno. The
resolved config keeps the profile's name and every value applied, and no
key but an explicit one beats a profile, so comparing the resolved values
with the profile's declared fills (``ecnlab keys profile``) tells both
what it filled and what it could not.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from typing import Any

__all__ = ["describe", "kept_over_profile", "profile_fills", "profile_warning"]

_NOT_JSON = object()
"""A fill the catalog describes in words (pFabric's max_cwnd: 'the [switch]
buffer in full packets, less one'): no value to compare with."""


@functools.cache
def _profiles() -> dict[str, tuple[tuple[str, Any], ...]]:
    from .keys import catalog

    out: dict[str, tuple[tuple[str, Any], ...]] = {}
    for group in catalog():
        if group["kind"] != "profile":
            continue
        fills = []
        for key, text in group.get("fills") or []:
            try:
                value = json.loads(text)
            except ValueError:
                value = _NOT_JSON
            fills.append((str(key), value))
        out[str(group["name"])] = tuple(fills)
    return out


def profile_fills(name: str) -> tuple[tuple[str, Any], ...]:
    """The ``[transport]`` keys profile ``name`` fills and its values (a
    fill the engine describes in words has no value here); empty for an
    unknown name."""
    return _profiles().get(name, ())


def _transport(resolved: Mapping[str, Any]) -> Mapping[str, Any]:
    table = resolved.get("transport") if isinstance(resolved, Mapping) else None
    return table if isinstance(table, Mapping) else {}


def kept_over_profile(resolved: Mapping[str, Any]) -> list[tuple[str, Any, Any]]:
    """``(key, value run, profile's value)`` for each key the profile fills
    whose resolved value is not the profile's: the experiment set it."""
    transport = _transport(resolved)
    profile = transport.get("profile")
    if not isinstance(profile, str):
        return []
    return [
        (key, transport.get(key), value)
        for key, value in profile_fills(profile)
        if value is not _NOT_JSON and key in transport and transport.get(key) != value
    ]


def _filled(resolved: Mapping[str, Any]) -> list[str]:
    transport = _transport(resolved)
    profile = transport.get("profile")
    if not isinstance(profile, str):
        return []
    kept = {key for key, _, _ in kept_over_profile(resolved)}
    return [key for key, _ in profile_fills(profile) if key not in kept]


def describe(resolved: Mapping[str, Any], *, keys: bool = True) -> str:
    """One line: ``cc dctcp, no profile``; ``cc cubic, profile linux
    (filled 19 keys: cc, linux_rto, ...)``; ``keys=False`` leaves the list
    of keys out (a table cell)."""
    transport = _transport(resolved)
    cc = transport.get("cc")
    profile = transport.get("profile")
    head = f"cc {cc if isinstance(cc, str) else '?'}"
    if not isinstance(profile, str):
        return f"{head}, no profile"
    filled = _filled(resolved)
    text = f"{head}, profile {profile}"
    if not keys:
        return text
    if not filled:
        return f"{text} (it filled nothing: the experiment sets every key it has)"
    return (
        f"{text} (filled {len(filled)} key{'s' if len(filled) != 1 else ''}: {', '.join(filled)})"
    )


def profile_warning(resolved: Mapping[str, Any]) -> str | None:
    """The warning for keys the experiment set that beat its profile's
    values (a profile fills only what is left out), or None."""
    kept = kept_over_profile(resolved)
    if not kept:
        return None
    profile = _transport(resolved).get("profile")
    ours = " and ".join(f"transport.{k} = {json.dumps(v)}" for k, v, _ in kept)
    theirs = " and ".join(json.dumps(p) for _, _, p in kept)
    unset = " ".join(f"--unset transport.{k}" for k, _, _ in kept)
    verb = "beats" if len(kept) == 1 else "beat"
    return (
        f"{ours}, set in the experiment, {verb} profile {profile}'s {theirs}: a profile fills "
        f"only the keys an experiment leaves out ({unset} to run the profile's)"
    )
