"""A sweep file and its points: parsed (:func:`load_sweep`), crossed into
points (:meth:`SweepSpec.points`), resolved by the engine and keyed for the
store (:func:`resolve_points`, :func:`point_key`).

A sweep file (TOML) names a base experiment and what varies::

    name = "mqecn-loads"          # optional; default: the file's stem
    base = "leafspine.toml"       # a path (relative to this file), or a [base] table
    [set]                          # fixed changes to the base (optional)
    "workload.flows" = 2000
    [grid]                         # every combination of these values
    "workload.load" = [0.3, 0.6, 0.9]
    "run.seed" = [1, 2]
    [[case]]                       # each case is crossed with the grid (optional)
    label = "per-queue K"
    "switch.marking" = "per-queue"
    [[case]]
    label = "MQ-ECN"
    "switch.marking" = "mq-ecn"
    [[case]]
    label = "PIE"
    "switch.marking" = "pie"
    unset = ["switch.threshold"]   # keys of the base this case removes
    [quick]                        # what --quick changes: a reduced run
    set = { "workload.flows" = 500 }
    grid = { "run.seed" = [1] }

Keys are dotted config paths, values are set whole (a table or list value
replaces the old one); a case's ``unset`` removes keys of the base (after
``[set]``), so their defaults apply, as ``--unset`` does for ``ecnlab run``.
Points are the cases (or one unnamed case) crossed with the grid's product.
Each is resolved by the engine (defaults, presets, units spelled one way)
and keyed by a hash of that form, the engine's version and the contents of
any flow-size CSV it reads; a key already in the store is not run again,
unless it was made by another engine build and the sweep asks for this
build's runs only (``same_build``: what a record needs,
:mod:`ecnlab.engine_build`; :mod:`.run`).
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..config import anchor_paths, config_to_json, read_toml_file, set_value, unset_value
from ..errors import ConfigError

__all__ = [
    "KEY_LENGTH",
    "Case",
    "Point",
    "SweepSpec",
    "check_keys_exist",
    "load_sweep",
    "model_key",
    "point_key",
    "resolve_points",
]

KEY_LENGTH = 20
"""Hex digits of a point key (80 bits of SHA-256)."""

_TOP_KEYS = {"name", "base", "set", "grid", "case", "quick", "description"}
_QUICK_KEYS = {"set", "grid"}


@dataclass(frozen=True)
class Case:
    """A named set of values crossed with the grid, and the base's keys it
    removes (``unset``)."""

    label: str
    values: dict[str, Any]
    unset: tuple[str, ...] = ()


@dataclass
class Point:
    """One run of a sweep, before it is keyed."""

    index: int
    case: str
    params: dict[str, Any]
    config: dict[str, Any]
    key: str = ""
    resolved: str = ""
    error: str = ""


@dataclass
class SweepSpec:
    """A parsed sweep (see the module docstring)."""

    name: str
    base: dict[str, Any]
    fixed: dict[str, Any] = field(default_factory=dict)
    grid: dict[str, list[Any]] = field(default_factory=dict)
    cases: list[Case] = field(default_factory=list)
    quick_fixed: dict[str, Any] = field(default_factory=dict)
    quick_grid: dict[str, list[Any]] = field(default_factory=dict)
    where: str = "sweep"

    def quick(self) -> SweepSpec:
        """The reduced form (``[quick]`` applied)."""
        grid = dict(self.grid)
        grid.update(self.quick_grid)
        fixed = dict(self.fixed)
        fixed.update(self.quick_fixed)
        return SweepSpec(self.name, self.base, fixed, grid, self.cases, {}, {}, self.where)

    def param_keys(self) -> list[str]:
        """Grid keys, then keys the cases set, in order of appearance."""
        keys = list(self.grid)
        for case in self.cases:
            keys += [k for k in case.values if k not in keys]
        return keys

    def points(self) -> list[Point]:
        """Every point, cases outermost, then the grid in key order."""
        base = copy.deepcopy(self.base)
        for key, value in self.fixed.items():
            set_value(base, key, copy.deepcopy(value))
        cases = self.cases or [Case("", {})]
        keys = list(self.grid)
        out: list[Point] = []
        for case in cases:
            for combo in itertools.product(*(self.grid[k] for k in keys)):
                cfg = copy.deepcopy(base)
                params: dict[str, Any] = {}
                for key in case.unset:
                    unset_value(cfg, key, f"{self.where}: case {case.label!r}: unset {key!r}")
                for key, value in case.values.items():
                    set_value(cfg, key, copy.deepcopy(value))
                    params[key] = value
                for key, value in zip(keys, combo):
                    set_value(cfg, key, copy.deepcopy(value))
                    params[key] = value
                out.append(Point(len(out), case.label, params, cfg))
        return out


# --------------------------------------------------------------------------- parsing


def load_sweep(
    source: str | Path | Mapping[str, Any],
    base_dir: str | Path | None = None,
    name: str | None = None,
    where: str | None = None,
) -> SweepSpec:
    """Parse a sweep file, or a sweep table (``base_dir`` anchors its paths).

    Raises :class:`ConfigError` with one line naming the offending key.
    """
    if isinstance(source, Mapping):
        data = dict(source)
        folder = Path(base_dir) if base_dir is not None else Path.cwd()
        shown = where or "sweep"
        default_name = name or "sweep"
    else:
        path = Path(source)
        data = read_toml_file(path, str(path))
        folder = path.resolve().parent
        shown = where or str(path)
        default_name = name or path.stem
    unknown = sorted(set(data) - _TOP_KEYS)
    if unknown:
        raise ConfigError(
            f"{shown}: unknown key {unknown[0]!r}; a sweep has "
            + ", ".join(sorted(_TOP_KEYS - {"description"}))
        )
    base = _load_base(data.get("base"), folder, shown)
    fixed = _assignments(data.get("set", {}), f"{shown}: set")
    grid = _grid(data.get("grid"), f"{shown}: grid")
    cases = _cases(data.get("case", []), shown)
    quick = data.get("quick", {})
    if not isinstance(quick, Mapping):
        raise ConfigError(f"{shown}: quick must be a table with set and/or grid")
    bad = sorted(set(quick) - _QUICK_KEYS)
    if bad:
        raise ConfigError(f"{shown}: quick.{bad[0]}: unknown key; quick takes set and grid")
    quick_fixed = _assignments(quick.get("set", {}), f"{shown}: quick.set")
    quick_grid = _grid(quick.get("grid", {}), f"{shown}: quick.grid", allow_empty_table=True)
    if data.get("grid") is None and not cases:
        raise ConfigError(
            f"{shown}: nothing to sweep: give a [grid] and/or [[case]] tables "
            "(for one run, use `ecnlab run`)"
        )
    for case in cases:
        for key in case.values:
            if key in grid:
                raise ConfigError(
                    f"{shown}: {key!r} is both a grid key and set by case {case.label!r}"
                )
        for key in case.unset:
            if key in grid or key in case.values:
                what = "a grid key" if key in grid else "set by the case too"
                raise ConfigError(
                    f"{shown}: case {case.label!r} unsets {key!r}, which is {what}; "
                    "unset a key the base sets"
                )
    spec_name = str(data.get("name", default_name))
    return SweepSpec(spec_name, base, fixed, grid, cases, quick_fixed, quick_grid, shown)


def _load_base(value: Any, folder: Path, shown: str) -> dict[str, Any]:
    if value is None:
        raise ConfigError(
            f"{shown}: base: missing; give a path to an experiment file or a [base] table"
        )
    if isinstance(value, str):
        path = (folder / value).resolve()
        cfg = read_toml_file(path, f"{shown}: base {value!r}")
        anchor_paths(cfg, path.parent)
        return cfg
    if isinstance(value, Mapping):
        cfg = json.loads(json.dumps(value))
        anchor_paths(cfg, folder)
        return dict(cfg)
    raise ConfigError(f"{shown}: base = {value!r}: expected a file path or a table")


def _assignments(table: Any, where: str) -> dict[str, Any]:
    if not isinstance(table, Mapping):
        raise ConfigError(f'{where}: expected a table of "dotted.key" = value')
    return {_check_key(k, where): v for k, v in table.items()}


def _check_key(key: Any, where: str) -> str:
    if not isinstance(key, str) or not key or any(not p.strip() for p in key.split(".")):
        raise ConfigError(
            f'{where}: bad key {key!r}; expected a dotted config key such as "switch.marking"'
        )
    return key


def _grid(table: Any, where: str, allow_empty_table: bool = False) -> dict[str, list[Any]]:
    if table is None:
        return {}
    if not isinstance(table, Mapping):
        raise ConfigError(f'{where}: expected a table of "dotted.key" = [values]')
    if not table and not allow_empty_table:
        raise ConfigError(f'{where}: empty grid; give at least one "dotted.key" = [values]')
    out: dict[str, list[Any]] = {}
    for key, values in table.items():
        _check_key(key, where)
        if not isinstance(values, list):
            raise ConfigError(
                f"{where}.{key!r} = {values!r}: expected a list of values, e.g. [{values!r}]"
            )
        if not values:
            raise ConfigError(f"{where}.{key!r}: empty list; a grid key needs at least one value")
        out[key] = values
    return out


def _cases(value: Any, shown: str) -> list[Case]:
    if not isinstance(value, list):
        raise ConfigError(f"{shown}: case must be an array of tables ([[case]])")
    out: list[Case] = []
    for i, table in enumerate(value):
        if not isinstance(table, Mapping):
            raise ConfigError(f"{shown}: case[{i}] must be a table")
        values = {k: v for k, v in table.items() if k not in ("label", "unset")}
        for key in values:
            _check_key(key, f"{shown}: case[{i}]")
        unset = _unset_list(table.get("unset", []), f"{shown}: case[{i}].unset")
        if not values and not unset:
            raise ConfigError(f"{shown}: case[{i}] sets nothing")
        label = table.get("label")
        if label is None:
            label = ", ".join([f"{k}={v}" for k, v in values.items()] + [f"no {k}" for k in unset])
        if not isinstance(label, str) or not label:
            raise ConfigError(f"{shown}: case[{i}].label = {label!r}: expected a non-empty string")
        if any(c.label == label for c in out):
            raise ConfigError(f"{shown}: case[{i}].label = {label!r}: used by another case")
        out.append(Case(label, values, unset))
    return out


def _unset_list(value: Any, where: str) -> tuple[str, ...]:
    """A case's ``unset``: a list of dotted keys (one key alone is taken too)."""
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list):
        raise ConfigError(f'{where} = {value!r}: expected a list of dotted keys, e.g. ["x.y"]')
    return tuple(_check_key(k, where) for k in items)


# --------------------------------------------------------------------------- keys


def point_key(resolved_json: str, engine: str) -> str:
    """The store key of a point: SHA-256 of its resolved config (with any
    flow-size CSV named by its contents, so moving or editing the file does
    what it should) and ``engine``, the model version (``model_key``): a
    refactor that moves no output keeps every stored point."""
    cfg = json.loads(resolved_json)
    files: list[str] = []
    workload = cfg.get("workload") or {}
    names = workload.get("distributions") or []
    for i, name in enumerate(names):
        if isinstance(name, str) and (name.endswith(".csv") or "/" in name):
            try:
                digest = hashlib.sha256(Path(name).read_bytes()).hexdigest()
            except OSError:
                digest = "missing"
            names[i] = f"csv-sha256:{digest}"
            files.append(digest)
    material = json.dumps({"config": cfg, "engine": engine}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(material.encode("utf-8")).hexdigest()[:KEY_LENGTH]


def check_keys_exist(spec: SweepSpec, engine: Any) -> None:
    """A grid or case key the config schema does not have is one error for
    the whole sweep, before anything runs."""
    base = copy.deepcopy(spec.base)
    try:
        for key, value in spec.fixed.items():
            set_value(base, key, copy.deepcopy(value))
        tree = json.loads(engine.resolve(config_to_json(base)))
    except Exception:  # the base alone may need a case's values; check per point
        return
    for key in spec.param_keys():
        node: Any = tree
        walked: list[str] = []
        for segment in key.split("."):
            if node is None:  # an optional section the base leaves out
                break
            if isinstance(node, dict):
                if segment not in node and _engine_takes(
                    base, key, _first_value(spec, key), engine
                ):
                    break  # a key the resolved form leaves out while unset
                if segment not in node:
                    raise ConfigError(_unknown_key(spec.where, key, walked, segment))
                node = node[segment]
            elif isinstance(node, list):
                if not segment.isdigit() or int(segment) >= len(node):
                    raise ConfigError(
                        f"{spec.where}: key {key!r}: {'.'.join(walked)} has {len(node)} entries"
                    )
                node = node[int(segment)]
            else:
                break
            walked.append(segment)


def _unknown_key(where: str, key: str, walked: list[str], segment: str) -> str:
    """The message for a grid or case key the engine does not take: what the
    table does take, from the engine's declared keys (set or not in the
    resolved form), the nearest as "did you mean", or the table the key
    belongs to."""
    from ..keys import declared_keys, nearest

    known = declared_keys()
    table = walked[0] if walked else ""
    names = known.get(table, [])
    prefix = ".".join(walked)

    def full(name: str) -> str:
        return f"{prefix}.{name}" if prefix else name

    shown = {"": "the top level", "flows": "[[flows]]", "ping": "[[ping]]"}.get(table)
    shown = shown or ("[[incast]]" if table == "incast" else f"[{table}]")
    text = f"{where}: unknown key {key!r}: {shown} has no {segment!r}"
    near = nearest(segment, names)
    homes = [t for t, keys in known.items() if t not in ("", table) and segment in keys]
    if near:
        text += "; did you mean " + " or ".join(repr(full(n)) for n in near) + "?"
    elif homes:
        home = "switch" if "switch" in homes else homes[0]
        text += f"; it is a key of [{home}]: {f'{home}.{segment}'!r}"
    what = "tables" if not table else "keys"
    if len(names) <= 25:
        return text + f" (its {what}: {', '.join(sorted(names))})"
    listed = "switch" if table in ("fabric", "nic") else table
    return text + f" (`ecnlab keys {listed}` lists all {len(names)})"


def _first_value(spec: SweepSpec, key: str) -> Any:
    """The first value the grid or a case gives ``key``."""
    if key in spec.grid and spec.grid[key]:
        return spec.grid[key][0]
    return next(case.values[key] for case in spec.cases if key in case.values)


def _engine_takes(base: dict[str, Any], key: str, value: Any, engine: Any) -> bool:
    """Whether the engine knows ``key``: the resolved form leaves some keys
    out while they are unset (a whole discipline's, the ``[nic]`` section),
    so ask with the key set. Any error but an unknown field means it does
    (the value may need a case's other keys)."""
    probe = copy.deepcopy(base)
    set_value(probe, key, copy.deepcopy(value))
    try:
        engine.resolve(config_to_json(probe))
    except Exception as exc:  # ConfigError from the engine
        return "unknown field" not in str(exc)
    return True


def model_key(engine: Any) -> str:
    """What the store keys by besides the config: the engine's model
    version, which moves only when some run's outputs do."""
    return f"model {int(engine.model_version())}"


def resolve_points(spec: SweepSpec, points: list[Point], engine: Any) -> None:
    """Key every point; a point whose config the engine rejects keeps its
    error (and a key from its unresolved form, so the failure is stored)."""
    version = model_key(engine)
    model_of = getattr(engine, "model_of", None)
    for p in points:
        try:
            p.resolved = str(engine.resolve(config_to_json(p.config)))
        except Exception as exc:  # ConfigError from Python or the engine
            p.error = f"config: {exc}"
            p.resolved = ""
            raw = json.dumps({"unresolved": p.config}, sort_keys=True)
            p.key = hashlib.sha256((raw + version).encode()).hexdigest()[:KEY_LENGTH]
            continue
        # Keyed by the last model that moved this run's outputs, so a run
        # a later change left alone keeps its stored result.
        at = f"model {int(model_of(p.resolved))}" if model_of is not None else version
        p.key = point_key(p.resolved, at)
