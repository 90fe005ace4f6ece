"""Running one experiment through the compiled engine."""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from .config import ConfigSource, config_to_json, load_config
from .errors import ConfigError, EngineNotBuiltError
from .fct import fct_stats, has_sized_flows, mss_from_config
from .progress import ProgressBar
from .results import Result

__all__ = ["engine_version", "flow_paths", "load_engine", "run", "validate"]

ENGINE_MODULE = "ecnlab._engine"


def load_engine() -> ModuleType:
    """Import the compiled engine, or raise :class:`EngineNotBuiltError`."""
    try:
        return importlib.import_module(ENGINE_MODULE)
    except ImportError as exc:
        if exc.name not in (ENGINE_MODULE, None):
            raise  # the engine exists but one of its own imports failed
        if isinstance(exc, ModuleNotFoundError):
            message = "the compiled engine ecnlab._engine is not built"
        else:
            message = f"the compiled engine ecnlab._engine cannot be loaded ({exc})"
        raise EngineNotBuiltError(f"{message}; build it with `maturin develop --release`") from exc


def engine_version() -> str | None:
    """The engine's version string, or ``None`` when it is not built."""
    try:
        return str(load_engine().version())
    except EngineNotBuiltError:
        return None


def run(
    config: ConfigSource,
    out: str | Path | None = None,
    overrides: Sequence[str] = (),
    progress: bool | None = None,
) -> Result:
    """Run one experiment and return its :class:`Result`.

    ``config`` is a TOML file or a config mapping; ``overrides`` are
    ``key=value`` strings applied on top (see :func:`ecnlab.load_config`).
    When ``out`` is given, the tables, ``config.json`` (the resolved config)
    and ``summary.json`` are written there. ``progress``: ``None`` shows a bar
    on a terminal for runs longer than 1.5 s, ``True`` always shows one,
    ``False`` never does.

    ``summary["fct"]`` holds :func:`ecnlab.fct.fct_stats` of the sized flows
    (one-packet flows judged by the config's ``transport.mss``), or ``None``
    when the run has no sized flow.

    Raises :class:`ecnlab.ConfigError` for any configuration problem, whether
    found here or by the engine.
    """
    resolved = load_config(config, overrides)
    payload = config_to_json(resolved)
    engine = load_engine()
    bar = None if progress is False else ProgressBar(force=bool(progress))
    try:
        raw = _call_engine(engine, "run", payload, bar)
    finally:
        if bar is not None:
            bar.close()
    result = Result.from_raw(raw, config=resolved)
    result.summary["fct"] = _fct_summary(result, resolved)
    if out is not None:
        result.write(out)
    return result


def validate(config: ConfigSource, overrides: Sequence[str] = ()) -> dict[str, Any]:
    """Check a config with the engine without running it; return the resolved config."""
    resolved = load_config(config, overrides)
    _call_engine(load_engine(), "validate", config_to_json(resolved))
    return resolved


def flow_paths(
    config: ConfigSource, overrides: Sequence[str] = ()
) -> list[tuple[list[str], list[str]]]:
    """The switches each flow's data and its ACKs cross, by flow id (the
    ``id`` of the flows table), as per-flow ECMP hashes them for this config
    and seed; nothing is run. Under ``topology.ecmp = "per-packet"`` the lists
    are empty: every packet picks its own path."""
    resolved = load_config(config, overrides)
    paths = _call_engine(load_engine(), "flow_paths", config_to_json(resolved))
    return [(list(data), list(acks)) for data, acks in paths]


def _fct_summary(result: Result, config: dict[str, Any]) -> dict[str, Any] | None:
    flows = result.tables.get("flows")
    if flows is None or not has_sized_flows(flows):
        return None
    return fct_stats(flows, mss=mss_from_config(config))


def _call_engine(engine: ModuleType, name: str, *args: Any) -> Any:
    engine_error: type[BaseException] | None = getattr(engine, "ConfigError", None)
    try:
        return getattr(engine, name)(*args)
    except ConfigError:
        raise
    except Exception as exc:
        if engine_error is not None and isinstance(exc, engine_error):
            raise ConfigError(str(exc)) from exc
        raise
