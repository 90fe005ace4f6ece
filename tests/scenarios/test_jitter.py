"""The hosts' timing jitter (`host.jitter`) against a drop-tail lock-out
(issue 30's table): a 3-host star at 200 Mbps with 100 us links and a
30-packet buffer; host 0 sends one long Reno flow and host 1 four, all to
host 2, for 6 s.

Host 1's NIC runs at the bottleneck's rate and, its four flows keeping it
backlogged, hands the switch a frame exactly as the port frees a slot: the
queue stays full, and every frame of flow 0 finds it so (a phase effect:
Floyd and Jacobson, 1991). Nothing on host 0's side can change that, since
host 1's frames leave a busy NIC back to back whatever its stack does; what
real hardware has and an exact simulator lacks is the wobble of each frame's
landing. Every run is checked for determinism and conservation."""

from __future__ import annotations

from typing import Any

import numpy as np

import ecnlab
from scenario_kit import run_checked

FAIR_MB = 200e6 / 8 * 6 / 5 / 1e6 * 0.95  # 5 flows, 6 s, 200 Mbps: ~28.5 MB each of payload


def lock(seed: int, jitter: str | None) -> dict[str, Any]:
    # The file as `ecnlab run` reads it: the engine's own defaults
    # elsewhere (not scenario_kit's star, which sets DCTCP's RTO and IW).
    cfg: dict[str, Any] = {
        "run": {"seed": seed, "duration": "6s", "sample_ports": "none"},
        "topology": {"kind": "star", "hosts": 3, "link_rate": "200Mbps", "link_delay": "100us"},
        "switch": {"buffer": "30pkt"},
        "transport": {"cc": "reno"},
        "flows": [{"src": 0, "dst": 2}, {"src": 1, "dst": 2, "count": 4}],
    }
    if jitter is not None:
        cfg["host"] = {"jitter": jitter}
    return cfg


def megabytes(r: ecnlab.Result) -> np.ndarray:
    return r["flows"].to_pandas()["bytes_received"].to_numpy() / 1e6


def test_without_jitter_flow_0_is_locked_out_whatever_the_seed() -> None:
    # Exact replay: flow 0 gets 0.04 MB of its ~28 MB share, and the seed
    # changes nothing (nothing in the run is drawn).
    runs = [megabytes(run_checked(lock(seed, "0us"))) for seed in (1, 2)]
    assert runs[0][0] < 0.01 * FAIR_MB, runs[0]
    assert np.array_equal(runs[0], runs[1])


def test_with_the_default_jitter_seeds_differ_and_flow_0_gets_in() -> None:
    # 100 ns, 0.17% of a 60 us packet time here. Measured (seeds 1-5):
    # flow 0 gets 14.1, 14.7, 0.04, 15.5, 15.2 MB: the lock holds only
    # where flow 0 lost its first window and backed off before the wobble
    # let a probe in. The remaining unfairness (Jain ~0.94 against the
    # kernel's 0.997) is loss recovery: flow 0 meets 210-245 RTOs, the kernel
    # 4-7 (RACK-TLP, SACK: issue 30).
    runs = [megabytes(run_checked(lock(seed, None))) for seed in (1, 2, 3, 4, 5)]
    assert len({tuple(r) for r in runs}) == 5, "every seed a different run"
    escaped = [r for r in runs if r[0] > 0.25 * FAIR_MB]
    assert len(escaped) >= 3, [r[0] for r in runs]


def test_a_packet_times_jitter_lets_flow_0_in_at_every_seed() -> None:
    # host.jitter = "1pkt": one packet's time at the NIC's rate, 60 us at
    # 200 Mbps (Floyd and Jacobson's size against phase effects; the option
    # is docs/model.md's comparison with the 100 ns default). Measured
    # (seeds 1-5): flow 0 gets 14.2, 14.4, 13.7, 15.2, 14.2 MB, Jain
    # 0.934-0.945, where 100 ns leaves seed 3 locked out (0.04 MB).
    runs = [megabytes(run_checked(lock(seed, "1pkt"))) for seed in (1, 3)]
    assert all(r[0] > 0.4 * FAIR_MB for r in runs), [r[0] for r in runs]
    jain = [r.sum() ** 2 / (len(r) * (r**2).sum()) for r in runs]
    assert min(jain) > 0.9, jain
