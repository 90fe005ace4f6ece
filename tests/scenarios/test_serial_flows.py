"""Serial flows (`[[flows]] serial = true`): one client opening a new
connection per transfer, the next when the previous one's data is all
acknowledged — Tuning ECN §5.2's stream of 20 KB flows."""

from __future__ import annotations

import numpy as np

from scenario_kit import run_checked, star


def test_each_flow_opens_when_the_previous_is_acknowledged() -> None:
    # 1 Gbps, 25 us links: base RTT 100 us plus serialisation. A 20 KB flow
    # (14 segments, IW 10) takes the handshake, two windows and the last
    # segment's trip: about 3 RTTs, ~0.35 ms on an empty path.
    cfg = star(
        hosts=2,
        rate="1Gbps",
        delay="25us",
        duration="1s",
        warmup="0s",
        flows=[{"src": 1, "dst": 0, "size": "20KB", "count": 50, "serial": True, "start": "1ms"}],
    )
    res = run_checked(cfg)
    flows = res["flows"].to_pylist()
    assert len(flows) == 50 and all(f["fct"] == f["fct"] for f in flows)  # all finished
    starts = np.array([f["start"] for f in flows])
    finishes = np.array([f["finish"] for f in flows])
    assert starts[0] == 1e-3
    gaps = starts[1:] - finishes[:-1]
    # The next flow opens when the sender sees the last ACK: after the
    # receiver got the last byte, by the ACK's one-way trip (50 us + 0.3 us
    # of ACK serialisation), never before.
    assert np.all(gaps > 0)
    assert np.allclose(gaps, 50.3e-6, atol=1e-6), gaps
    fct = np.array([f["fct"] for f in flows])
    assert 0.25e-3 < fct.mean() < 0.45e-3, fct.mean()
    # Nothing else is open: the run ends with the last flow.
    assert res.summary["ended_by"] == "finished"


def gaps(extra: dict[str, object], n: int = 200) -> np.ndarray:
    cfg = star(
        hosts=2,
        rate="1Gbps",
        delay="25us",
        duration="5s",
        warmup="0s",
        flows=[{"src": 1, "dst": 0, "size": "20KB", "count": n, "serial": True, **extra}],
    )
    flows = run_checked(cfg)["flows"].to_pylist()
    starts = np.array([f["start"] for f in flows])
    finishes = np.array([f["finish"] for f in flows])
    return starts[1:] - finishes[:-1]


def test_a_pause_between_serial_flows() -> None:
    # A fixed pause adds itself to the last ACK's 50.3 us trip.
    assert np.allclose(gaps({"serial_gap": "2ms"}, n=20), 2e-3 + 50.3e-6, atol=1e-6)
    # Exponential pauses of mean 1 ms: 199 draws have a mean within 3 standard
    # errors (1 ms / sqrt(199) = 71 us) and the spread of an exponential
    # (standard deviation = mean).
    g = gaps({"serial_gap": "1ms", "serial_gap_kind": "exponential"}) - 50.3e-6
    assert abs(g.mean() - 1e-3) < 3 * 1e-3 / np.sqrt(g.size), g.mean()
    assert 0.7e-3 < g.std() < 1.3e-3
    assert g.min() >= -1e-6


def test_serial_needs_sized_flows() -> None:
    import pytest

    import ecnlab

    cfg = star(flows=[{"src": 0, "dst": 2, "count": 3, "serial": True}])
    with pytest.raises(ecnlab.ConfigError, match=r"flows\[0\].serial = true: needs sized flows"):
        ecnlab.validate(cfg)
    cfg = star(flows=[{"src": 0, "dst": 2, "size": "1KB", "serial_gap": "1ms"}])
    with pytest.raises(ecnlab.ConfigError, match=r"flows\[0\].serial_gap = 0.001s: only applies"):
        ecnlab.validate(cfg)
    cfg = star(
        flows=[
            {"src": 0, "dst": 2, "size": "1KB", "serial": True, "serial_gap_kind": "exponential"}
        ]
    )
    with pytest.raises(ecnlab.ConfigError, match="needs a positive serial_gap"):
        ecnlab.validate(cfg)
