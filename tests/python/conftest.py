"""Shared fixtures for the pure-Python tests.

``fake_engine`` installs a stand-in for the compiled ``ecnlab._engine`` that
follows the engine's contract (columnar raw tables, ``ConfigError``, progress
callback) with made-up numbers, so the runner, CLI and demo can be tested
without building Rust.
"""

from __future__ import annotations

import json
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest

try:
    import ecnlab  # noqa: F401
except ImportError:  # not installed: use the source tree
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))

from ecnlab.units import parse_time

MARKINGS = ("none", "per-queue", "per-queue-min", "per-port", "per-pool", "mq-ecn")


def raw_numeric(dtype: str, values: Any) -> tuple[str, bytes]:
    """Encode values the way the engine does: (dtype code, little-endian bytes)."""
    np_types = {"u8": "<u1", "u32": "<u4", "u64": "<u8", "i64": "<i8", "f64": "<f8"}
    return dtype, np.asarray(values, dtype=np_types[dtype]).tobytes()


def sample_raw_tables(duration: float = 0.05, interval: float = 0.01) -> dict[str, Any]:
    """A small but complete set of raw engine tables."""
    times = np.arange(1, int(round(duration / interval)) + 1) * interval
    n = len(times)
    goodput_time = np.repeat(times, 2)
    goodput_service = np.tile([0, 1], n)
    goodput_gbps = np.tile([4.0, 6.0], n)
    # two ports (2: switch->host2 with 2 queues, 0: switch->host0 with 2 queues)
    q_time = np.repeat(times, 4)
    q_port = np.tile([2, 2, 0, 0], n)
    q_queue = np.tile([0, 1, 0, 1], n)
    q_packets = np.tile([10, 30, 0, 1], n)
    return {
        "flows": {
            "id": raw_numeric("u32", [0, 1]),
            "src": raw_numeric("u32", [0, 1]),
            "dst": raw_numeric("u32", [2, 2]),
            "service": raw_numeric("u32", [0, 1]),
            "size": raw_numeric("i64", [-1, 15000]),
            "start": raw_numeric("f64", [0.0, 0.001]),
            "finish": raw_numeric("f64", [np.nan, 0.002]),
            "fct": raw_numeric("f64", [np.nan, 0.001]),
            "bytes_received": raw_numeric("u64", [123456789, 15000]),
            "timeouts": raw_numeric("u32", [0, 1]),
            "retransmits": raw_numeric("u32", [0, 2]),
            "ce_marks": raw_numeric("u32", [5, 1]),
            "drops": raw_numeric("u32", [0, 0]),
            "kind": ["long", "sized"],
        },
        "goodput": {
            "time": raw_numeric("f64", goodput_time),
            "service": raw_numeric("u32", goodput_service),
            "gbps": raw_numeric("f64", goodput_gbps),
        },
        "queues": {
            "time": raw_numeric("f64", q_time),
            "port": raw_numeric("u32", q_port),
            "queue": raw_numeric("u32", q_queue),
            "bytes": raw_numeric("u64", q_packets * 1500),
            "packets": raw_numeric("u32", q_packets),
        },
        "rtt": {
            "time": raw_numeric("f64", []),
            "src": raw_numeric("u32", []),
            "dst": raw_numeric("u32", []),
            "service": raw_numeric("u32", []),
            "rtt": raw_numeric("f64", []),
        },
        "ports": {
            "port": raw_numeric("u32", [0, 2, 2, 2, 5]),
            "node": ["switch", "switch", "switch", "switch", "host2"],
            "peer": ["host0", "host2", "host2", "host2", "switch"],
            "queue": raw_numeric("i64", [-1, -1, 0, 1, -1]),
            "enqueued": raw_numeric("u64", [10, 100, 40, 60, 7]),
            "marked": raw_numeric("u64", [0, 9, 3, 6, 0]),
            "dropped_overflow": raw_numeric("u64", [0, 0, 0, 0, 0]),
            "dropped_aqm": raw_numeric("u64", [0, 0, 0, 0, 0]),
            "max_bytes": raw_numeric("u64", [1500, 90000, 30000, 60000, 0]),
            "sent_packets": raw_numeric("u64", [10, 100, 40, 60, 7]),
            "sent_bytes": raw_numeric("u64", [15000, 150000, 60000, 90000, 700]),
        },
        "incast": {
            "round": raw_numeric("u32", []),
            "start": raw_numeric("f64", []),
            "finish": raw_numeric("f64", []),
            "goodput_gbps": raw_numeric("f64", []),
        },
    }


class FakeEngineConfigError(ValueError):
    """Stands in for ``ecnlab._engine.ConfigError``."""


class FakeEngine(types.ModuleType):
    """A module object with the engine's functions; records what it was given."""

    ConfigError = FakeEngineConfigError

    def __init__(self) -> None:
        super().__init__("ecnlab._engine")
        self.calls: list[dict[str, Any]] = []
        self.on_progress: Callable[[float, float], None] | None = None

    def version(self) -> str:
        return "fake-0.0"

    def resolve(self, config_json: str) -> str:
        self.validate(config_json)
        return json.dumps(json.loads(config_json), sort_keys=True)

    def validate(self, config_json: str) -> None:
        cfg = json.loads(config_json)
        marking = cfg.get("switch", {}).get("marking", "none")
        if marking not in MARKINGS:
            raise FakeEngineConfigError(
                f'switch.marking = "{marking}": unknown value; expected one of '
                + ", ".join(MARKINGS)
            )

    def run(
        self,
        config_json: str,
        sink: Any,
        progress: Callable[[float, float], None] | None = None,
    ) -> dict[str, Any]:
        """The engine's contract: tables go to ``sink.rows`` in batches, and
        an exception in ``progress`` stops the run, which still hands over
        its tables and returns it as ``stopped_by``."""
        self.validate(config_json)
        cfg = json.loads(config_json)
        self.calls.append(cfg)
        duration = parse_time(cfg.get("run", {}).get("duration", "0.05s"))
        stopped_by = None
        if progress is not None:
            for step in range(1, 5):
                try:
                    progress(duration * step / 4, step / 4)
                except (Exception, KeyboardInterrupt) as exc:
                    stopped_by = exc
                    break
        for name, columns in self.tables(duration).items():
            sink.rows(name, columns)
        summary = self.summary(cfg, duration)
        if stopped_by is not None:
            summary["complete"] = False
            summary["ended_by"] = "interrupted"
        return {"summary": summary, "stopped_by": stopped_by}

    def tables(self, duration: float) -> dict[str, Any]:
        return sample_raw_tables(duration)

    def summary(self, cfg: dict[str, Any], duration: float) -> dict[str, Any]:
        per_queue = 30 if cfg.get("switch", {}).get("marking") == "per-port" else 10
        summary = {
            "events": 1000,
            "wall_seconds": 0.01,
            "sim_seconds": duration,
            "events_per_second": 100000.0,
            "packets_sent": 50,
            "packets_delivered": 48,
            "packets_dropped": 1,
            "packets_in_flight": 1,
            "ce_marks": per_queue,
            "goodput_gbps_by_service": {"0": 4.0, "1": 6.0},
            "incast_goodput_gbps": None,
            "extra_key": [1, 2],
        }
        return summary


@pytest.fixture
def fake_engine(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeEngine]:
    """Replace ``ecnlab._engine`` with :class:`FakeEngine` for one test."""
    engine = FakeEngine()
    monkeypatch.setitem(sys.modules, "ecnlab._engine", engine)
    yield engine


@pytest.fixture
def no_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make ``import ecnlab._engine`` fail, as when the engine is not built."""
    monkeypatch.setitem(sys.modules, "ecnlab._engine", None)
