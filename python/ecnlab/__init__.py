"""ecnlab: a fast packet-level simulator for ECN marking in multi-queue switches.

Quick start::

    import ecnlab

    result = ecnlab.run("experiment.toml", overrides=["switch.marking=mq-ecn"])
    result.summary["goodput_gbps_by_service"]
    result.tables["flows"]          # a pyarrow.Table

The per-packet engine is the compiled module ``ecnlab._engine``; it is
imported only when a run starts, so configs and saved results can be handled
without it.
"""

from __future__ import annotations

from .config import config_hash, load_config
from .errors import ConfigError, EngineNotBuiltError, RunInterrupted
from .fct import fct_stats
from .runner import Result, flow_paths, ideal_fcts, run, validate
from .slowdown import slowdown_stats


def _package_version() -> str:
    from importlib import metadata

    try:
        return metadata.version("ecnlab")
    except metadata.PackageNotFoundError:
        return "0+unknown"


def __getattr__(name: str) -> str:
    # Looked up when first asked for: importlib.metadata costs a run 3 MiB.
    if name == "__version__":
        global __version__
        __version__ = _package_version()
        return __version__
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "ConfigError",
    "EngineNotBuiltError",
    "Result",
    "RunInterrupted",
    "__version__",
    "config_hash",
    "fct_stats",
    "flow_paths",
    "ideal_fcts",
    "load_config",
    "run",
    "slowdown_stats",
    "validate",
]
