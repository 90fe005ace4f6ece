"""Calling the compiled engine: one experiment run (:func:`run`), and what
is answered without running one (:func:`validate`, :func:`resolve`,
:func:`flow_paths`, :func:`ideal_fcts`, :func:`table_schemas`)."""

from __future__ import annotations

import functools
import importlib
import json
import signal
import threading
from collections.abc import Sequence
from pathlib import Path
from types import FrameType, ModuleType
from typing import Any, Callable, Union

import pyarrow as pa

from ..config import ConfigSource, config_to_json, load_config, unset_value
from ..errors import ConfigError, EngineNotBuiltError, RunInterrupted
from ..fct import fct_stats, has_sized_flows, mss_from_config
from ..progress import ProgressBar
from ..slowdown import has_slowdown, slowdown_stats
from .columns import table_from_raw
from .result import PcapFiles, Result, TableFiles
from .writer import RunWriter

__all__ = [
    "engine_version",
    "flow_paths",
    "ideal_fcts",
    "load_engine",
    "resolve",
    "run",
    "table_schemas",
    "validate",
]

Progress = Union[bool, None, Callable[[float, float], Any]]

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


@functools.cache
def table_schemas() -> dict[str, pa.Schema]:
    """The engine's output tables: each one's columns and their types, by
    table name, as ``run`` writes them (for writers outside the engine,
    such as ``ecnlab testbed``, to follow)."""
    raw = load_engine().table_schemas()
    return {name: table_from_raw(columns, name).schema for name, columns in raw.items()}


def run(
    config: ConfigSource,
    out: str | Path | None = None,
    overrides: Sequence[str] = (),
    progress: Progress = None,
    unset: Sequence[str] = (),
) -> Result:
    """Run one experiment and return its :class:`Result`.

    ``config`` is a TOML file or a config mapping; ``overrides`` are
    ``key=value`` strings applied on top (see :func:`ecnlab.load_config`);
    ``unset`` names dotted keys removed after them, so that their defaults
    (or a profile's or recipe's values) apply (:func:`ecnlab.config.unset_value`).

    With ``out``, the tables stream into ``out/<table>.parquet`` while the
    run goes (a run's memory does not grow with its length), then
    ``config.json`` and, last, ``summary.json`` are written; the result's
    tables are read back from the files when used. Without ``out``, the
    tables are kept in memory. ``config.json`` and ``result.config`` are the
    resolved config, as the engine ran it (:func:`resolve`'s form: presets
    expanded, every default filled in), not the config as given.

    ``progress``: ``None`` shows a bar on a terminal for runs longer than
    1.5 s, ``True`` always shows one, ``False`` never does; a callable is
    called with ``(sim_seconds, fraction_done)`` a few times a second.

    Ctrl-C stops the run at its next progress report (within about a
    quarter of a second): what it has done is written as usual, with
    ``"complete": false`` in the summary, and :class:`ecnlab.RunInterrupted`
    (a ``KeyboardInterrupt``) is raised carrying that result. A second
    Ctrl-C, or any error, stops at once and leaves no output files.

    ``summary["fct"]`` holds :func:`ecnlab.fct.fct_stats` of the sized flows
    (one-packet flows judged by the config's ``transport.mss``), or ``None``
    when the run has no sized flow; ``summary["slowdown"]`` likewise
    :func:`ecnlab.slowdown.slowdown_stats` (FCT over ideal FCT).
    ``summary["warnings"]``, when present, lists settings that could not
    act (a profile's value that a key the experiment sets beat).

    Raises :class:`ecnlab.ConfigError` for any configuration problem, whether
    found here or by the engine (the resource guard's estimate included).
    """
    loaded = load_config(config, overrides)
    for key in unset:
        unset_value(loaded, key)
    payload = config_to_json(loaded)
    engine = load_engine()
    if callable(progress):
        report: Callable[[float, float], Any] | None = progress
        bar = None
    else:
        bar = None if progress is False else ProgressBar(force=bool(progress))
        report = bar
    writer = RunWriter(out)
    interrupts = _DeferredInterrupt()
    try:
        with interrupts:
            raw = _call_engine(engine, "run", payload, writer, interrupts.progress(report))
            tables = writer.close()
    except BaseException:
        writer.discard()
        raise
    finally:
        if bar is not None:
            bar.close()
    summary = dict(raw.get("summary", {}))
    # The engine's resolved form of what it ran (an engine that does not
    # hand it back is asked for it).
    resolved = raw.get("config") or json.loads(_call_engine(engine, "resolve", payload))
    if out is None:
        result = Result(summary=summary, tables=tables or {}, config=resolved)
        result.pcaps = {port: bytes(data) for port, data in writer.pcaps.items()}
    else:
        root = Path(out)
        result = Result(
            summary=summary,
            tables=TableFiles(root, writer.table_names),
            out=root,
            config=resolved,
            pcaps=PcapFiles(root),
        )
    result.summary["fct"] = _fct_summary(result, resolved)
    result.summary["slowdown"] = _slowdown_summary(result)
    _add_warnings(result.summary, resolved)
    if out is not None:
        result.write(out)  # config.json, then summary.json last
    stopped_by = raw.get("stopped_by")
    if stopped_by is not None:
        if isinstance(stopped_by, KeyboardInterrupt):
            raise RunInterrupted(result) from stopped_by
        raise stopped_by
    return result


ACTIVE_RUN: _DeferredInterrupt | None = None
"""The main thread's run in progress, which the command line's SIGTERM
handler (:mod:`ecnlab.cli.main`) may ask to stop even where SIGINT is ignored."""


class _DeferredInterrupt:
    """While the engine runs, the first Ctrl-C (SIGINT) only asks it to stop
    at its next progress report, so that it can finish its files; a second
    one interrupts at once. Signal handlers can only be set in the main
    thread, and a handler the program installed itself is left alone."""

    def __init__(self) -> None:
        self.requested = False
        self._previous: Any = None

    def __enter__(self) -> _DeferredInterrupt:
        global ACTIVE_RUN
        main = threading.current_thread() is threading.main_thread()
        if main and signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            self._previous = signal.signal(signal.SIGINT, self._handle)
        if main:
            ACTIVE_RUN = self
        return self

    def __exit__(self, *exc_info: object) -> None:
        global ACTIVE_RUN
        if ACTIVE_RUN is self:
            ACTIVE_RUN = None
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)
            self._previous = None

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        self.request()

    def request(self) -> None:
        """Ask the run to stop at its next report; a second request
        interrupts at once."""
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True

    def progress(
        self, report: Callable[[float, float], Any] | None
    ) -> Callable[[float, float], None]:
        def tick(sim_seconds: float, fraction: float) -> None:
            if self.requested:
                raise KeyboardInterrupt
            if report is not None:
                report(sim_seconds, fraction)

        return tick


def validate(config: ConfigSource, overrides: Sequence[str] = ()) -> dict[str, Any]:
    """Check a config with the engine without running it; return the resolved config."""
    resolved = load_config(config, overrides)
    _call_engine(load_engine(), "validate", config_to_json(resolved))
    return resolved


def resolve(config: ConfigSource, overrides: Sequence[str] = ()) -> dict[str, Any]:
    """The config as the engine runs it: checked, presets expanded and every
    default filled in (what ``ecnlab testbed`` plans from)."""
    loaded = load_config(config, overrides)
    text = _call_engine(load_engine(), "resolve", config_to_json(loaded))
    resolved: dict[str, Any] = json.loads(text)
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


def _add_warnings(summary: dict[str, Any], resolved: dict[str, Any]) -> None:
    """Settings that could not act, found from the resolved config, join the
    summary's ``warnings`` (after the engine's own, when it gives any)."""
    from ..transport import profile_warning

    found = [w for w in (profile_warning(resolved),) if w]
    if found:
        summary["warnings"] = [*(summary.get("warnings") or []), *found]


def _fct_summary(result: Result, config: dict[str, Any]) -> dict[str, Any] | None:
    flows = result.tables.get("flows")
    if flows is None or not has_sized_flows(flows):
        return None
    return fct_stats(flows, mss=mss_from_config(config))


def _slowdown_summary(result: Result) -> dict[str, Any] | None:
    flows = result.tables.get("flows")
    if flows is None or not has_slowdown(flows) or not has_sized_flows(flows):
        return None
    return slowdown_stats(flows)


def ideal_fcts(config: ConfigSource, overrides: Sequence[str] = ()) -> list[float]:
    """Each flow's ideal FCT in seconds, by flow id (the ``id`` of the flows
    table), NaN where a flow has none: the FCT it would have alone in the
    empty network, as the flows table's ``ideal_fct`` gives it; nothing is
    run."""
    resolved = load_config(config, overrides)
    return list(_call_engine(load_engine(), "ideal_fcts", config_to_json(resolved)))


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
