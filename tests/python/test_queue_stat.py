"""The `queue_stat` metric (python/ecnlab/reproduce/metrics.py): a port's
sampled queue, summed over its queues or one queue, from t0 on."""

from __future__ import annotations

import math
from typing import Any

import pyarrow as pa
import pytest

from ecnlab.reproduce.metrics import PointView, metric


class FakePoint(PointView):
    """A point with only a queues table: port 7 has queues 0 and 1, sampled
    at 0, 1 and 2 ms; port 8 is another port that must not count."""

    def __init__(self) -> None:  # no store
        self.key = "fake"
        self.row = {}
        self._tables = {
            "queues": pa.table(
                {
                    "time": [0.0, 0.0, 0.001, 0.001, 0.002, 0.002, 0.001],
                    "port": [7, 7, 7, 7, 7, 7, 8],
                    "queue": [0, 1, 0, 1, 0, 1, 0],
                    "bytes": [9000, 9000, 1000, 3000, 2000, 6000, 500_000],
                    "packets": [6, 6, 1, 2, 2, 4, 300],
                }
            )
        }

    def port_id(self, name: str) -> int:
        return {"switch:host3": 7}[name]


def stat(**args: Any) -> float:
    return metric(FakePoint(), "queue_stat", {"port": "switch:host3", **args})


def test_port_total_and_one_queue_after_t0() -> None:
    # From 1 ms on the port's totals are 4 and 8 KB: mean 6 KB; queue 1 alone 3 and 6 KB.
    assert stat(t0=0.001) == pytest.approx(6.0)
    assert stat(t0=0.001, queue=1) == pytest.approx(4.5)
    assert stat(t0=0.001, unit="packets") == pytest.approx(4.5)
    # Every sample: totals 18, 4 and 8 KB; the 99th percentile interpolates between 8 and 18.
    assert stat() == pytest.approx(10.0)
    assert stat(stat="p50") == pytest.approx(8.0)
    assert stat(stat="p99", scale=1000) == pytest.approx(17_800.0)


def test_no_samples_is_nan_and_a_bad_stat_is_named() -> None:
    assert math.isnan(stat(t0=1.0))
    assert math.isnan(stat(queue=3))
    with pytest.raises(ValueError, match="queue_stat: stat = 'max'"):
        stat(stat="max")
