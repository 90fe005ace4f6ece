"""The HPCC simulator's input files read, and the units ecnlab writes.

config.txt is ``KEY value ...`` lines; the TOPOLOGY_FILE is ``nodes switches
links``, the switch ids, then ``a b rate delay loss`` per link; the FLOW_FILE
a count, then ``src dst pg dport size start_s`` per flow, with a flow id
first in this port (github kwzhao/High-Precision-Congestion-Control 0e2b031,
third.cc). Rates are ns-3 DataRate strings, delays ns-3 times.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path

from ..errors import ConfigError

__all__ = [
    "Flow",
    "Link",
    "fmt_ps",
    "fmt_rate",
    "parse_rate",
    "parse_time_ps",
    "rate_map",
    "read_config_txt",
    "read_flows",
    "read_topology",
]


@dataclass
class Link:
    a: int
    b: int
    rate: int  # bit/s
    delay_ps: int
    loss: float


@dataclass
class Flow:
    src: int
    dst: int
    pg: int
    dport: int
    size: int
    start_ps: int


def read_config_txt(path: Path) -> dict[str, list[str]]:
    """``KEY value ...`` lines, in file order (a later line wins, as in
    third.cc's loop). Blank lines are skipped."""
    out: dict[str, list[str]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        words = line.split()
        if words and not words[0].startswith("#"):
            out[words[0]] = words[1:]
    return out


_RATE_UNITS = {
    "bps": 1,
    "b/s": 1,
    "kbps": 10**3,
    "kb/s": 10**3,
    "mbps": 10**6,
    "mb/s": 10**6,
    "gbps": 10**9,
    "gb/s": 10**9,
    "tbps": 10**12,
    "tb/s": 10**12,
}
_TIME_UNITS = {"s": 10**12, "ms": 10**9, "us": 10**6, "ns": 10**3, "ps": 1}


def _split(text: str) -> tuple[Decimal, str]:
    i = len(text)
    while i > 0 and not (text[i - 1].isdigit() or text[i - 1] == "."):
        i -= 1
    try:
        return Decimal(text[:i]), text[i:]
    except InvalidOperation:
        raise ValueError(text) from None


def parse_rate(text: str, what: str) -> int:
    """An ns-3 DataRate string ("100Gbps", "20Mb/s") in bit/s."""
    try:
        n, unit = _split(text)
        scale = _RATE_UNITS[unit.lower()]
    except (ValueError, KeyError):
        raise ConfigError(f"{what} = {text}: not a rate (e.g. 100Gbps, 20Mb/s)") from None
    return int(n * scale)


def parse_time_ps(text: str, what: str) -> int:
    """An ns-3 time string ("1000ns", "1us") in picoseconds."""
    try:
        n, unit = _split(text)
        scale = _TIME_UNITS[unit.lower() or "s"]
    except (ValueError, KeyError):
        raise ConfigError(f"{what} = {text}: not a time (e.g. 1000ns, 1us)") from None
    return int(n * scale)


def _numbers(path: Path) -> list[list[str]]:
    return [ln.split() for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()]


def read_topology(path: Path) -> tuple[int, list[int], list[Link]]:
    """The node count, the switch ids and the links of a TOPOLOGY_FILE."""
    rows = _numbers(path)
    where = f"TOPOLOGY_FILE {path.name}"
    try:
        nodes, switches, count = (int(x) for x in rows[0][:3])
        ids = [int(x) for x in rows[1]] if switches else []
    except (IndexError, ValueError):
        raise ConfigError(f"{where}: expected 'nodes switches links' then the switch ids") from None
    if len(ids) != switches:
        raise ConfigError(f"{where}: line 2 lists {len(ids)} switch ids; line 1 says {switches}")
    links = []
    for i, r in enumerate(rows[2 : 2 + count], start=3):
        if len(r) < 4:
            raise ConfigError(
                f"{where} line {i}: expected 'a b rate delay [loss]', got {' '.join(r)!r}"
            )
        at = f"{where} line {i}"
        links.append(
            Link(
                int(r[0]),
                int(r[1]),
                parse_rate(r[2], at),
                parse_time_ps(r[3], at),
                float(r[4]) if len(r) > 4 else 0.0,
            )
        )
    if len(links) != count:
        raise ConfigError(f"{where}: {len(links)} links; line 1 says {count}")
    for i, lk in enumerate(links, start=3):
        for x in (lk.a, lk.b):
            if not 0 <= x < nodes:
                raise ConfigError(
                    f"{where} line {i}: node {x}; the file has nodes 0 to {nodes - 1}"
                )
    return nodes, ids, links


def read_flows(path: Path) -> list[Flow]:
    """A FLOW_FILE: a count, then ``src dst pg dport size start_s`` per flow,
    or with a flow id first (this port's format): 7 columns."""
    rows = _numbers(path)
    where = f"FLOW_FILE {path.name}"
    try:
        count = int(rows[0][0])
    except (IndexError, ValueError):
        raise ConfigError(f"{where}: expected the flow count on line 1") from None
    flows = []
    for i, r in enumerate(rows[1 : 1 + count], start=2):
        if len(r) not in (6, 7):
            raise ConfigError(
                f"{where} line {i}: {len(r)} columns; expected 'src dst pg dport size start' "
                "or 'id src dst pg dport size start'"
            )
        c = r[1:] if len(r) == 7 else r
        try:
            start = Decimal(c[5])
            flows.append(
                Flow(int(c[0]), int(c[1]), int(c[2]), int(c[3]), int(c[4]), int(start * 10**12))
            )
        except (ValueError, InvalidOperation):
            raise ConfigError(f"{where} line {i}: not numbers: {' '.join(r)!r}") from None
    if len(flows) != count:
        raise ConfigError(f"{where}: {len(flows)} flows; line 1 says {count}")
    return flows


def fmt_rate(bps: int) -> str:
    for unit, scale in (("Tbps", 10**12), ("Gbps", 10**9), ("Mbps", 10**6), ("Kbps", 10**3)):
        if bps % scale == 0:
            return f"{bps // scale}{unit}"
    return f"{bps}bps"


def fmt_ps(ps: int) -> str:
    for unit, scale in (("ms", 10**9), ("us", 10**6), ("ns", 10**3)):
        if ps % scale == 0 and ps:
            return f"{ps // scale}{unit}"
    return f"{ps}ps" if ps else "0s"


def rate_map(cfg: dict[str, list[str]], key: str) -> dict[int, float]:
    words = cfg.get(key)
    if not words:
        return {}
    try:
        n = int(words[0])
        pairs = words[1 : 1 + 2 * n]
        out = {int(pairs[2 * i]): float(pairs[2 * i + 1]) for i in range(n)}
    except (ValueError, IndexError):
        raise ConfigError(f"{key} = {' '.join(words)}: expected 'n rate value ...'") from None
    if len(out) != n:
        raise ConfigError(f"{key} = {' '.join(words)}: {n} entries announced, {len(out)} given")
    return out
