"""``ecnlab advise``: the marking thresholds and buffer sizes the papers derive.

For a bottleneck of rate C and round-trip time RTT (so C×RTT, the
bandwidth-delay product, in bytes and full packets), with an optional
per-port buffer B and number of queues N:

* ECN* (Tuning ECN §3.2): the threshold h must cover the pipe, h ≥ C×RTT
  (Eq. 1), and leave room for the slow-start overshoot of w_e ≤ h + C×RTT
  (Eq. 2), so h ≤ (B − C×RTT)/2 (Eq. 4) and B ≥ 2h + C×RTT ≥ 3·C×RTT (Eq. 5).
  The slow-start peak is then h + w_e ≤ 2h + C×RTT.
* Dequeue marking (Tuning ECN §4.2): news of congestion leaves with the
  packet at the head, so B ≥ h + C×RTT ≥ 2·C×RTT, and h ≤ B − C×RTT.
* DCTCP: K = λ·C×RTT with λ ≈ 0.17 (DCTCP's K > C×RTT/7 guideline, as the
  MQ-ECN paper's Eq. 1 writes it with λ per transport; λ = 1 for ECN*).
* MQ-ECN §2.2: the standard per-queue threshold is that K; the minimum
  threshold splits it by weight, K_i = w_i/Σw · K (Eq. 2); N queues each at
  the standard K can hold N·K, against B.
* With LSO at the senders (CEDM §III), N synchronised senders each send
  batches of β·w; the queue swings wider, so K must grow: for ECN*,
  K ≥ ((1+β)N − 2β)/((1−β)N)·C×RTT (Cor. 2, 1.5·C×RTT for N = 2, β = 1/3);
  for DCTCP, Cor. 4's two cases (C×RTT/4 + 25/12 packets for N = 2,
  β = 1/3). Both hold while β·w < L, the largest LSO segment. CEDM's K2
  for a given K1 is K1 + (N−1)·B with B = β·w at w = (C×RTT + K1)/(N(1−β))
  (§IV-C; 5/4·K1 + C×RTT/4 for N = 2, β = 1/3).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from .errors import ConfigError
from .units import parse_time

__all__ = ["Advice", "Row", "advise", "format_advice", "parse_bytes", "parse_rate"]

DCTCP_LAMBDA = 0.17
ECN_STAR_LAMBDA = 1.0


@dataclass
class Row:
    """One derived number, with the equation and where it comes from."""

    name: str
    bytes: float | None
    equation: str
    source: str
    note: str = ""


@dataclass
class Advice:
    rate_bps: float
    rtt_s: float
    packet_bytes: int
    rows: list[Row]
    warnings: list[str]

    def value(self, name: str) -> float:
        for r in self.rows:
            if r.name == name and r.bytes is not None:
                return r.bytes
        raise KeyError(name)


_RATE_UNITS = {"bps": 1.0, "Kbps": 1e3, "kbps": 1e3, "Mbps": 1e6, "Gbps": 1e9, "Tbps": 1e12}
_BYTE_UNITS = {"B": 1.0, "KB": 1e3, "MB": 1e6, "GB": 1e9, "KiB": 1024.0, "MiB": 1024.0**2}


def _split(text: str) -> tuple[float, str]:
    s = text.strip()
    i = len(s)
    while i > 0 and not (s[i - 1].isdigit() or s[i - 1] == "."):
        i -= 1
    try:
        return float(s[:i]), s[i:].strip()
    except ValueError:
        raise ValueError(f"{text!r}: expected a number and a unit") from None


def parse_rate(text: str) -> float:
    value, unit = _split(text)
    if unit not in _RATE_UNITS or value <= 0:
        raise ValueError(f"{text!r}: expected a positive rate such as 10Gbps")
    return value * _RATE_UNITS[unit]


def parse_bytes(text: str, packet_bytes: int) -> float:
    value, unit = _split(text)
    if unit == "pkts":
        raise ValueError(
            f"{text!r}: 'pkts' is ambiguous; write 'pkt' (bytes of full packets) or 'packets'"
        )
    if unit in ("pkt", "packet", "packets"):
        # A count of packets is taken as full-size ones: the advisor bounds
        # data queues, which hold full segments.
        scale = float(packet_bytes)
    elif unit in _BYTE_UNITS:
        scale = _BYTE_UNITS[unit]
    else:
        raise ValueError(f"{text!r}: expected a size such as 300KB or 200pkt")
    if value <= 0:
        raise ValueError(f"{text!r}: must be positive")
    return value * scale


def advise(
    rate: str,
    rtt: str,
    buffer: str | None = None,
    queues: int = 1,
    cc: str = "dctcp",
    mtu: int = 1500,
    weights: Sequence[float] | None = None,
    lso: bool = False,
    lso_fraction: float = 1 / 3,
    lso_max: str = "64KB",
    senders: int = 2,
) -> Advice:
    """The thresholds and buffer bounds for a bottleneck; raises
    :class:`ConfigError` naming the argument for bad input."""
    try:
        c = parse_rate(rate)
    except ValueError as exc:
        raise ConfigError(f"--rate {exc}") from None
    try:
        t = parse_time(rtt)
    except ValueError as exc:
        raise ConfigError(f"--rtt {rtt!r}: {exc}") from None
    if t <= 0:
        raise ConfigError(f"--rtt {rtt!r}: must be positive")
    if not 64 <= mtu <= 65_000:
        raise ConfigError(f"--mtu {mtu}: must be 64 to 65000 bytes")
    if queues < 1:
        raise ConfigError(f"--queues {queues}: must be at least 1")
    if cc not in ("dctcp", "ecn-star"):
        raise ConfigError(f"--cc {cc!r}: expected dctcp or ecn-star")
    if weights is not None and (len(weights) != queues or any(w <= 0 for w in weights)):
        raise ConfigError(f"--weights: need {queues} positive weights, one per queue")
    if lso and not 0 < lso_fraction <= 1:
        raise ConfigError(f"--lso-fraction {lso_fraction:g}: must be in (0, 1]")
    if lso and senders < 1:
        raise ConfigError(f"--senders {senders}: must be at least 1")
    try:
        lso_l = parse_bytes(lso_max, mtu)
    except ValueError as exc:
        raise ConfigError(f"--lso-max {exc}") from None
    b = None
    if buffer is not None:
        try:
            b = parse_bytes(buffer, mtu)
        except ValueError as exc:
            raise ConfigError(f"--buffer {exc}") from None

    bdp = c * t / 8.0
    lam = DCTCP_LAMBDA if cc == "dctcp" else ECN_STAR_LAMBDA
    k = lam * bdp
    rows = [
        Row("C×RTT", bdp, "C × RTT", "bandwidth-delay product"),
        Row(
            "DCTCP K",
            DCTCP_LAMBDA * bdp,
            "λ·C×RTT, λ ≈ 0.17",
            "DCTCP guideline K > C×RTT/7; MQ-ECN Eq. 1",
            note="a floor: DCTCP sets 65 pkt at 10 Gbps for bursts (MQ-ECN §2.2, note 3)",
        ),
        Row("ECN* h, lower bound", bdp, "h ≥ C×RTT", "Tuning ECN Eq. 1"),
        Row(
            "standard K",
            k,
            f"λ·C×RTT with λ = {lam:g} ({cc})",
            "MQ-ECN Eq. 1",
        ),
    ]
    weights = list(weights) if weights is not None else [1.0] * queues
    total = sum(weights)
    for i, w in enumerate(weights):
        if i > 0 and w == weights[0] and len(set(weights)) == 1:
            break  # equal weights: one row says it
        label = "per-queue minimum K_i" if len(set(weights)) == 1 else f"minimum K_{i}"
        rows.append(Row(label, w / total * k, "w_i/Σw · K", "MQ-ECN Eq. 2"))
    rows.append(
        Row(
            "ECN* slow-start peak at h = C×RTT",
            3 * bdp,
            "2h + C×RTT",
            "Tuning ECN Eq. 2, 3, 5",
        )
    )
    rows.append(
        Row("buffer for ECN* (enqueue marking)", 3 * bdp, "B ≥ 3·C×RTT", "Tuning ECN Eq. 5")
    )
    rows.append(Row("buffer for ECN* (dequeue marking)", 2 * bdp, "B ≥ 2·C×RTT", "Tuning ECN §4.2"))
    warnings: list[str] = []
    if lso:
        rows += _lso_rows(bdp / mtu, lso_fraction, senders, mtu, cc)
        # Cor. 2 and 4 assume batches of β·w below L; w at marking is at
        # most (C×RTT + K)/(N(1−β)) (Eq. 11).
        w = (bdp + k) / (senders * (1 - lso_fraction)) if lso_fraction < 1 else math.inf
        if lso_fraction * w >= lso_l:
            warnings.append(
                f"β·w ≈ {_pk(lso_fraction * w, mtu)} reaches the LSO limit {_pk(lso_l, mtu)}: "
                "batches are L, not β·w, and CEDM Cor. 2/4 do not apply as stated"
            )
    if b is not None:
        upper = (b - bdp) / 2
        rows.append(
            Row("ECN* h, upper bound (enqueue)", upper, "h ≤ (B − C×RTT)/2", "Tuning ECN Eq. 4")
        )
        rows.append(
            Row("ECN* h, upper bound (dequeue)", b - bdp, "h ≤ B − C×RTT", "Tuning ECN §4.2")
        )
        if upper < bdp:
            warnings.append(
                f"no ECN* threshold fits with enqueue marking: B = {_pk(b, mtu)} < 3·C×RTT = "
                f"{_pk(3 * bdp, mtu)}; dequeue marking needs only 2·C×RTT"
                + ("" if b >= 2 * bdp else ", which does not fit either")
            )
        rows.append(
            Row(
                f"N = {queues} queues at the standard K",
                queues * k,
                "N·K",
                "MQ-ECN §2.2.1 (buffer pressure)",
                note="" if queues * k <= b else "over the buffer",
            )
        )
        most = math.floor(b / k) if k > 0 else math.inf
        rows.append(
            Row(
                "queues at K before the buffer is full", None, "⌊B / K⌋", "MQ-ECN §2.2.1", str(most)
            )
        )
        if queues * k > b:
            warnings.append(
                f"{queues} busy queues at the standard K hold {_pk(queues * k, mtu)}, over the "
                f"{_pk(b, mtu)} buffer: MQ-ECN or the minimum threshold keep the port near K"
            )
    return Advice(c, t, mtu, rows, warnings)


def cor2_ecn_star_k(cd: float, beta: float, n: int) -> float:
    """CEDM Cor. 2 (Eq. 12), packets: K ≥ ((1+β)N − 2β)/((1−β)N)·C×RTT."""
    return ((1 + beta) * n - 2 * beta) / ((1 - beta) * n) * cd


def cor4_dctcp_k(cd: float, beta: float, n: int) -> float:
    """CEDM Cor. 4 (Eq. 23), packets: the smallest K that keeps DCTCP's
    queue from underflowing with batches of β·w. Case 1 holds when
    [N(N−β)/(β(N−1))]²·(1−β)/8 ≤ C×RTT + K; otherwise case 2."""
    case2 = (n * n * (1 - beta) + n * math.sqrt(n * n * (1 - beta) ** 2 + 8 * cd * (1 - beta))) / 4
    if n < 2:
        return case2
    k1 = beta * (n - 1) / (n * (1 - beta)) * cd + n * (n - beta) ** 2 / (8 * (n - 1) * beta)
    edge = (n * (n - beta) / (beta * (n - 1))) ** 2 * (1 - beta) / 8
    return k1 if edge <= cd + k1 else case2


def cedm_k2(k1: float, cd: float, beta: float, n: int) -> float:
    """CEDM §IV-C, packets: K2 = K1 + (N−1)·β·w with w = (C×RTT + K1)/(N(1−β))."""
    return k1 + (n - 1) * beta * (cd + k1) / (n * (1 - beta))


def _lso_rows(cd: float, beta: float, n: int, mtu: int, cc: str) -> list[Row]:
    """The LSO bounds of CEDM §III and the K2 guideline of §IV-C, in bytes."""
    where = f"N = {n} senders, β = {beta:.3g}"
    ecn = cor2_ecn_star_k(cd, beta, n)
    dc = cor4_dctcp_k(cd, beta, n)
    k1 = DCTCP_LAMBDA * cd if cc == "dctcp" else cd
    return [
        Row(f"ECN* K with LSO ({where})", ecn * mtu, "((1+β)N − 2β)/((1−β)N)·C×RTT", "CEDM Cor. 2"),
        Row(f"DCTCP K with LSO ({where})", dc * mtu, "Eq. 23 (two cases)", "CEDM Cor. 4"),
        Row(
            f"CEDM K2 for K1 = λ·C×RTT ({cc})",
            cedm_k2(k1, cd, beta, n) * mtu,
            "K1 + (N−1)·β·(C×RTT + K1)/(N(1−β))",
            "CEDM §IV-C",
        ),
    ]


def _pk(nbytes: float, mtu: int) -> str:
    return f"{nbytes / 1e3:,.1f} KB ({nbytes / mtu:,.1f} pkt)"


def format_advice(a: Advice) -> str:
    head = (
        f"bottleneck {a.rate_bps / 1e9:g} Gbps, RTT {a.rtt_s * 1e6:g} us, "
        f"packets of {a.packet_bytes} B"
    )
    width = max(len(r.name) for r in a.rows)
    lines = [head]
    for r in a.rows:
        value = r.note if r.bytes is None else _pk(r.bytes, a.packet_bytes)
        if r.bytes is not None and r.note:
            value += f"  [{r.note}]"
        lines.append(f"  {r.name:<{width}}  {value:<28}  {r.equation}   ({r.source})")
    for w in a.warnings:
        lines.append(f"  note: {w}")
    return "\n".join(lines)
