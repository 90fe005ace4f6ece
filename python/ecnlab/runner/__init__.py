"""One run: the engine called on a config, its outputs written while it goes,
and read back as a :class:`Result`.

- :mod:`.engine`: calling the compiled engine (:func:`run`, :func:`validate`,
  :func:`resolve`, :func:`flow_paths`, :func:`ideal_fcts`) and loading it;
- :mod:`.writer`: the engine's sink, streaming each table to its Parquet file
  and each capture to its pcap file as the run goes;
- :mod:`.result`: :class:`Result` and the run directory's files
  (``<table>.parquet``, ``config.json``, ``pcap/``, ``summary.json`` last);
- :mod:`.columns`: the engine's raw columns as pyarrow arrays.
"""

from __future__ import annotations

from .engine import (
    engine_version,
    flow_paths,
    ideal_fcts,
    load_engine,
    resolve,
    run,
    table_schemas,
    validate,
)
from .result import Result

__all__ = [
    "Result",
    "engine_version",
    "flow_paths",
    "ideal_fcts",
    "load_engine",
    "resolve",
    "run",
    "table_schemas",
    "validate",
]
