"""The base RTT of an experiment's network (``ecnlab rtt FILE``), the round
trip with no queueing, measured by the engine: a ping across the longest
host-to-host path (host 0 to the last host: a star's one switch, a
leaf-spine's spine, a fat-tree's core) in the empty network, with probes of
an ACK's size and of a full data packet's. What ``ecnlab advise --rtt``
takes, without working it out from link delays, host delays and
store-and-forward by hand.

A packet of s bytes takes a fixed time (propagation, host delays) plus s
times the sum of 1/rate over the links it crosses, so the two probe sizes
give the fixed part and the round trip of a data packet out and its ACK
back: half of each probe's round trip.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .config import ConfigSource, load_config, unset_value
from .errors import ConfigError

__all__ = ["BaseRtt", "base_rtt", "format_base_rtt"]

_TRAFFIC = ("flows", "workload", "incast", "ping")
MIN_PROBE = 28
"""The smallest probe the engine sends (``[[ping]]`` size: IP and ICMP headers)."""


@dataclass(frozen=True)
class BaseRtt:
    """The round trips (seconds) from host ``src`` to host ``dst`` across
    ``path`` (the switches crossed), of probes of ``small`` and ``large``
    bytes both ways; ``fixed``: what takes no time per byte; ``data_ack``:
    a ``large`` packet out and a ``small`` one back; ``rate``: the host
    link rate as the config gives it."""

    src: int
    dst: int
    path: list[str]
    small: int
    large: int
    small_rtt: float
    large_rtt: float
    rate: str

    @property
    def fixed(self) -> float:
        per_byte = (self.large_rtt - self.small_rtt) / (self.large - self.small)
        return self.small_rtt - self.small * per_byte

    @property
    def data_ack(self) -> float:
        return (self.small_rtt + self.large_rtt) / 2


def _hosts(topology: dict[str, Any]) -> int:
    kind = topology.get("kind")
    if kind == "fat-tree":
        return int(topology["k"]) ** 3 // 4
    if kind == "leaf-spine":
        return int(topology["leaves"]) * int(topology["hosts_per_leaf"])
    return int(topology["hosts"])


def _probe_rtt(engine_config: dict[str, Any], src: int, dst: int, size: int) -> float:
    """The first probe's round trip, in seconds, in a run of pings only."""
    from .runner import run

    duration = 0.01
    while duration <= 100.0:
        cfg = copy.deepcopy(engine_config)
        cfg["run"] = {
            "seed": cfg.get("run", {}).get("seed", 1),
            "duration": f"{duration:g}s",
            "sample_ports": "none",
        }
        cfg["ping"] = [{"src": src, "dst": dst, "interval": f"{duration:g}s", "size": f"{size}B"}]
        rtt = run(cfg, progress=False).table("rtt").column("rtt").to_pylist()
        if rtt:
            return float(rtt[0])
        duration *= 10  # a round trip longer than the run: look longer
    raise ConfigError(f"no ping from host {src} to host {dst} came back within 100 s")


def base_rtt(
    config: ConfigSource, overrides: Sequence[str] = (), unset: Sequence[str] = ()
) -> BaseRtt:
    """Measure the base RTT of ``config``'s network (see the module doc):
    its traffic left out, pings from host 0 to the last host."""
    from .runner import flow_paths, resolve

    cfg = load_config(config, overrides)
    for key in unset:
        unset_value(cfg, key)
    for name in _TRAFFIC:
        cfg.pop(name, None)
    run_table = cfg.get("run") if isinstance(cfg.get("run"), dict) else {}
    cfg["run"] = {"seed": run_table.get("seed", 1), "duration": "1ms"}
    resolved = resolve(cfg)
    topology = resolved["topology"]
    transport = resolved.get("transport") or {}
    src, dst = 0, _hosts(topology) - 1
    probe = copy.deepcopy(cfg)
    probe["flows"] = [{"src": src, "dst": dst, "size": "1KB"}]
    ((path, _),) = flow_paths(probe)
    small = max(MIN_PROBE, int(transport.get("header", 40)))
    large = int(transport.get("mss", 1460)) + int(transport.get("header", 40))
    rate = topology.get("link_rate")
    if topology.get("kind") == "graph":
        # Resolved, every link carries its rate: the two hosts' own links.
        ends = [lk[2] for lk in topology["links"] if src in lk[:2] or dst in lk[:2]]
        rate = min(ends, key=_rate_bps)
    if isinstance(rate, list):
        rate = min(rate, key=_rate_bps)
    return BaseRtt(
        src,
        dst,
        list(path),
        small,
        large,
        _probe_rtt(cfg, src, dst, small),
        _probe_rtt(cfg, src, dst, large),
        str(rate),
    )


def _rate_bps(text: str) -> float:
    scale = {"Tbps": 1e12, "Gbps": 1e9, "Mbps": 1e6, "Kbps": 1e3, "bps": 1.0}
    for unit, factor in scale.items():
        if text.endswith(unit):
            return float(text[: -len(unit)]) * factor
    return float("inf")


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:,.2f} us"


def format_base_rtt(r: BaseRtt, title: str) -> str:
    """What ``ecnlab rtt`` prints."""
    route = " -> ".join([f"host{r.src}", *r.path, f"host{r.dst}"]) if r.path else ""
    rows = [
        (f"{r.small} B probes both ways", _us(r.small_rtt), ""),
        (f"{r.large} B probes both ways", _us(r.large_rtt), ""),
        (f"{r.large} B out, {r.small} B back", _us(r.data_ack), "a data packet and its ACK"),
        (
            "fixed part",
            _us(r.fixed),
            "what does not grow with size: propagation, host delays, per-packet overheads",
        ),
    ]
    name_width = max(len(n) for n, _, _ in rows)
    value_width = max(len(v) for _, v, _ in rows)
    lines = [
        f"base RTT of {title}, host {r.src} to host {r.dst} in the empty network"
        + (f" ({route})" if route else "")
    ]
    for name, value, note in rows:
        lines.append(
            f"  {name:<{name_width}}  {value:>{value_width}}" + (f"  ({note})" if note else "")
        )
    lines.append(f"  for advise: ecnlab advise --rate {r.rate} --rtt {r.data_ack * 1e6:.2f}us")
    return "\n".join(lines)
