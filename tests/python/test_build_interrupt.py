"""A run can be stopped while its network is built (issue 27): the engine
asks the progress callback at the start of the route computation and every
0.2 s of it, so Ctrl-C during a large fabric's build is seen at once."""

from __future__ import annotations

from pathlib import Path

import pytest

import ecnlab

# A k = 16 fat-tree (1,024 hosts): built in milliseconds, but the first
# question comes before any event.
CONFIG = {
    "run": {"duration": "1ms", "sample_ports": "none"},
    "topology": {"kind": "fat-tree", "k": 16, "link_rate": "10Gbps", "link_delay": "1us"},
    "flows": [{"src": 0, "dst": 5, "size": "100KB"}],
}


def test_interrupt_during_build_stops_before_any_event(tmp_path: Path) -> None:
    calls: list[tuple[float, float]] = []

    def stop(sim_seconds: float, fraction: float) -> None:
        calls.append((sim_seconds, fraction))
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        ecnlab.run(CONFIG, out=tmp_path / "run", progress=stop)
    # Asked once, during the build (nothing simulated yet), then no more.
    assert calls == [(0.0, 0.0)]
    # Nothing ran, so no run directory claims to be complete.
    assert not (tmp_path / "run" / "summary.json").exists()


def test_a_build_not_interrupted_runs(tmp_path: Path) -> None:
    calls: list[tuple[float, float]] = []
    result = ecnlab.run(CONFIG, progress=lambda s, f: calls.append((s, f)))
    assert calls[0] == (0.0, 0.0)
    assert result.summary["ended_by"] == "finished"
