"""Loading experiment files and applying ``key=value`` overrides.

Python does not know the config schema: the engine validates every key. This
module only reads TOML, applies overrides, and turns the result into the JSON
the engine takes.
"""

from __future__ import annotations

import copy
import datetime as _dt
import hashlib
import json
import math
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Union

from .errors import ConfigError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised only on Python < 3.11
    import tomli as tomllib

__all__ = [
    "ConfigSource",
    "anchor_paths",
    "apply_override",
    "apply_overrides",
    "config_hash",
    "config_to_json",
    "load_config",
    "parse_override",
    "parse_toml",
    "read_toml_file",
    "set_value",
    "unset_value",
]

ConfigSource = Union[str, Path, Mapping[str, Any]]
"""What :func:`load_config` accepts: a path to a TOML file, or a config mapping."""

PathKey = Union[str, int]


def load_config(source: ConfigSource, overrides: Sequence[str] = ()) -> dict[str, Any]:
    """Return the resolved config: ``source`` with ``overrides`` applied.

    ``source`` is a path to a TOML experiment file, or a mapping (deep-copied,
    never modified). Each override is ``dotted.key=value``; see
    :func:`parse_override`. Raises :class:`ConfigError` for a missing or
    malformed file and for malformed overrides.
    """
    if isinstance(source, Mapping):
        cfg = _plain_copy(source)
    elif isinstance(source, (str, Path)):
        cfg = read_toml_file(Path(source), shown=str(source))
        anchor_paths(cfg, Path(source).resolve().parent)
    else:
        raise TypeError(f"config must be a path or a mapping, not {type(source).__name__}")
    return apply_overrides(cfg, overrides)


def _is_file_name(value: object) -> bool:
    return isinstance(value, str) and (value.endswith(".csv") or "/" in value)


def anchor_paths(cfg: dict[str, Any], base: Path) -> None:
    """Make relative CDF file names in ``[workload]`` relative to the
    experiment file's folder, so a run works from any working directory."""
    workload = cfg.get("workload")
    if not isinstance(workload, dict):
        return

    def anchor(value: object) -> object:
        if _is_file_name(value) and not Path(str(value)).is_absolute():
            return str(base / str(value))
        return value

    if "distribution" in workload:
        workload["distribution"] = anchor(workload["distribution"])
    if isinstance(workload.get("distributions"), list):
        workload["distributions"] = [anchor(v) for v in workload["distributions"]]


def parse_toml(text: str, name: str = "<string>") -> dict[str, Any]:
    """Parse TOML text; syntax errors become :class:`ConfigError` naming ``name``."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{name}: invalid TOML: {exc}") from None


def read_toml_file(path: Path, shown: str) -> dict[str, Any]:
    """Read and parse a TOML file; every failure is one :class:`ConfigError`
    line that names the file as ``shown``."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise ConfigError(f"{shown}: no such file") from None
    except IsADirectoryError:
        raise ConfigError(f"{shown}: is a directory, expected a TOML file") from None
    except OSError as exc:
        raise ConfigError(f"{shown}: cannot read: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{shown}: not valid UTF-8 (byte {exc.start})") from None
    return parse_toml(text, shown)


def _plain_copy(source: Mapping[str, Any]) -> dict[str, Any]:
    """Deep-copy a mapping, turning nested mappings into plain dicts."""
    out: dict[str, Any] = {}
    for key, value in source.items():
        if not isinstance(key, str):
            raise ConfigError(f"config keys must be strings, got {key!r}")
        out[key] = _plain_value(value)
    return out


def _plain_value(value: Any) -> Any:
    if isinstance(value, Mapping):
        return _plain_copy(value)
    if isinstance(value, (list, tuple)):
        return [_plain_value(item) for item in value]
    return copy.deepcopy(value)


# --------------------------------------------------------------------------- overrides


def parse_override(text: str) -> tuple[list[str], Any]:
    """Split ``"a.b.c=value"`` into its key path and parsed value.

    The value is read as a TOML value when it is one (``4``, ``0.5``,
    ``true``, ``"x"``, ``["1500B", "6000B"]``, ``{a = 1}``), and otherwise
    kept as the bare string (``mq-ecn``, ``65pkt``). Values that JSON cannot
    carry (``inf``, ``nan``, TOML dates and times) are kept as bare strings as
    well. Path segments are returned as strings; whether a segment indexes an
    array is decided when the override is applied.
    """
    if not isinstance(text, str):
        raise ConfigError(f"override {text!r}: expected a string of the form key=value")
    key, sep, raw = text.partition("=")
    if not sep:
        raise ConfigError(f"override {text!r}: missing '='; expected key=value")
    key = key.strip()
    if not key:
        raise ConfigError(f"override {text!r}: empty key; expected key=value")
    segments = [part.strip() for part in key.split(".")]
    if any(not part for part in segments):
        raise ConfigError(f"override {text!r}: empty part in dotted key {key!r}")
    raw = raw.strip()
    if not raw:
        raise ConfigError(f"override {text!r}: missing value after '='")
    return segments, _parse_value(raw)


def _parse_value(raw: str) -> Any:
    try:
        value = tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        return raw
    if not _json_safe(value):
        return raw
    return value


def _json_safe(value: Any) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, (_dt.date, _dt.time)):  # datetime is a subclass of date
        return False
    if isinstance(value, dict):
        return all(_json_safe(v) for v in value.values())
    if isinstance(value, list):
        return all(_json_safe(v) for v in value)
    return True


def apply_override(cfg: dict[str, Any], text: str) -> None:
    """Apply one ``key=value`` override to ``cfg`` in place.

    Missing tables along the path are created. A segment that meets an array
    must be an index within it (``flows.0.count=3``). Raises
    :class:`ConfigError`, naming the override, when the path cannot be
    followed.
    """
    segments, value = parse_override(text)
    _set_path(cfg, segments, value, f"override {text!r}")


def set_value(cfg: dict[str, Any], key: str, value: Any) -> None:
    """Set the dotted ``key`` of ``cfg`` to ``value`` (already typed), as an
    override would: missing tables are created, array segments are indexes.
    Raises :class:`ConfigError` naming the key when the path cannot be
    followed."""
    segments = [part.strip() for part in key.split(".")]
    if not key.strip() or any(not part for part in segments):
        raise ConfigError(f"key {key!r}: expected a dotted key such as switch.marking")
    _set_path(cfg, segments, value, f"key {key!r}")


def unset_value(cfg: dict[str, Any], key: str, shown: str | None = None) -> None:
    """Remove the dotted ``key`` from ``cfg`` in place, so the engine's
    default (or what a preset, recipe or profile fills) applies: what
    ``--unset KEY`` does. A key the config does not set is an error naming
    what its table does set (a typo must not pass for a removal); ``shown``
    is how the message names the request (default ``--unset KEY``)."""
    text = shown or f"--unset {key}"
    segments = [part.strip() for part in key.split(".")]
    if not key.strip() or any(not part for part in segments):
        raise ConfigError(f"{text}: expected a dotted key such as switch.threshold")
    node: Any = cfg
    for position, segment in enumerate(segments):
        where = ".".join(segments[:position]) or "the top level"
        if isinstance(node, list):
            index = _array_index(text, where, segment, len(node))
            if position == len(segments) - 1:
                raise ConfigError(f"{text}: {where}.{index} is an array entry; unset a key in it")
            node = node[index]
            continue
        if not isinstance(node, dict) or segment not in node:
            from .keys import nearest

            have = sorted(node) if isinstance(node, dict) else []
            near = [".".join([*segments[:position], n]) for n in nearest(segment, have)]
            hint = f"; did you mean {' or '.join(near)}?" if near else ""
            listed = f" ({where} sets {', '.join(have)})" if have else ""
            raise ConfigError(f"{text}: the config does not set {key}{hint}{listed}")
        if position == len(segments) - 1:
            del node[segment]
            return
        node = node[segment]


def _set_path(cfg: dict[str, Any], segments: list[str], value: Any, text: str) -> None:
    node: Any = cfg
    walked: list[str] = []
    for position, segment in enumerate(segments):
        last = position == len(segments) - 1
        where = ".".join(walked) or "the top level"
        if isinstance(node, dict):
            if last:
                node[segment] = value
                return
            child = node.get(segment)
            if child is None:
                child = node[segment] = {}
            elif not isinstance(child, (dict, list)):
                dotted = ".".join([*walked, segment])
                raise ConfigError(
                    f"{text}: {dotted} is {_describe(child)}, "
                    f"not a table or array, so it has no key {segments[position + 1]!r}"
                )
            node = child
        elif isinstance(node, list):
            index = _array_index(text, where, segment, len(node))
            if last:
                node[index] = value
                return
            child = node[index]
            if not isinstance(child, (dict, list)):
                raise ConfigError(
                    f"{text}: {where}.{index} is {_describe(child)}, "
                    f"not a table or array, so it has no key {segments[position + 1]!r}"
                )
            node = child
        else:  # pragma: no cover - guarded above when descending
            raise AssertionError("unreachable")
        walked.append(segment)


def _array_index(text: str, where: str, segment: str, length: int) -> int:
    if not (segment.isascii() and segment.isdigit()):
        raise ConfigError(
            f"{text}: {where} is an array; expected an index 0..{length - 1} instead of {segment!r}"
            if length
            else f"{text}: {where} is an empty array; it has no {segment!r}"
        )
    index = int(segment)
    if index >= length:
        entries = "entry" if length == 1 else "entries"
        raise ConfigError(f"{text}: index {index} is out of range; {where} has {length} {entries}")
    return index


def _describe(value: Any) -> str:
    if isinstance(value, bool):
        return f"a boolean ({str(value).lower()})"
    if isinstance(value, (int, float)):
        return f"a number ({value!r})"
    if isinstance(value, str):
        return f"a string ({value!r})"
    return f"a {type(value).__name__}"


def apply_overrides(cfg: dict[str, Any], overrides: Sequence[str]) -> dict[str, Any]:
    """Apply overrides in order to ``cfg`` (in place) and return it."""
    if isinstance(overrides, str):
        overrides = [overrides]
    for text in overrides:
        apply_override(cfg, text)
    return cfg


# --------------------------------------------------------------------------- JSON, hashing


def config_to_json(cfg: Mapping[str, Any], *, indent: int | None = None) -> str:
    """Serialise a config as the JSON the engine reads.

    Raises :class:`ConfigError` naming the key when a value has no JSON form
    (a TOML date or time, ``inf`` or ``nan``).
    """
    _check_json(cfg, [])
    return json.dumps(cfg, sort_keys=True, indent=indent, allow_nan=False, ensure_ascii=False)


def _check_json(value: Any, path: list[PathKey]) -> None:
    if isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, str):
                raise ConfigError(f"{_dotted(path) or 'config'}: key {key!r} is not a string")
            _check_json(item, [*path, key])
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            _check_json(item, [*path, index])
    elif isinstance(value, float) and not math.isfinite(value):
        raise ConfigError(f"{_dotted(path)} = {value!r}: not a finite number")
    elif isinstance(value, (_dt.date, _dt.time)):
        raise ConfigError(f"{_dotted(path)} = {value.isoformat()}: dates and times are not allowed")
    elif value is not None and not isinstance(value, (str, int, float, bool)):
        raise ConfigError(f"{_dotted(path)}: unsupported value of type {type(value).__name__}")


def _dotted(path: Sequence[PathKey]) -> str:
    return ".".join(str(part) for part in path)


def config_hash(cfg: Mapping[str, Any]) -> str:
    """Return the SHA-256 hex digest of the config's canonical JSON form.

    Key order does not matter; values do (``1`` and ``1.0`` differ). Used to
    name runs in sweeps, so it must stay stable across versions.
    """
    _check_json(cfg, [])
    canonical = json.dumps(
        cfg, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()
