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
  the standard K can hold N·K, against B. MQ-ECN (§3) moves each queue's
  threshold with its share of the link: K for a queue alone, down to
  w_i/Σw · K when every queue is busy.
* With LSO at the senders (CEDM §III), N synchronised senders each send
  batches of β·w; the queue swings wider, so K must grow: for ECN*,
  K ≥ ((1+β)N − 2β)/((1−β)N)·C×RTT (Cor. 2, 1.5·C×RTT for N = 2, β = 1/3);
  for DCTCP, Cor. 4's two cases (C×RTT/4 + 25/12 packets for N = 2,
  β = 1/3). Both hold while β·w < L, the largest LSO segment. CEDM's K2
  for a given K1 is K1 + (N−1)·B with B = β·w at w = (C×RTT + K1)/(N(1−β))
  (§IV-C; 5/4·K1 + C×RTT/4 for N = 2, β = 1/3).

* PIE and DualPI2 (``advise_aqm``): their RFCs' times scaled to the RTT, as
  their recipes (``switch.recipe``) scale them to a network's base RTT; with
  a buffer, whether its B×8/C holds their targets (the RFCs' defaults do not
  on a data-centre port).

The answer: one ``switch.threshold`` per marking scheme (per-queue,
per-port, per-queue-min, mq-ecn; cedm with ``--lso``), the standard K of the
chosen transport (the larger LSO bound with ``--lso``) rounded up to whole
packets, since each formula is a lower bound; each with the ``--set`` flags
that put it in a run. A threshold that holds a queue to fewer than
:data:`IMPRACTICAL_PKT` packets is flagged impractical (why: there).
"""

from __future__ import annotations

import math
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field

from .advise_aqm import AqmSetting, aqm_settings, aqm_warnings
from .errors import ConfigError
from .units import parse_time

__all__ = [
    "IMPRACTICAL_PKT",
    "Advice",
    "Recommendation",
    "Row",
    "advise",
    "format_advice",
    "parse_bytes",
    "parse_rate",
]

DCTCP_LAMBDA = 0.17  # DCTCP §3.3: K > C×RTT/7 ≈ 0.14·C×RTT; MQ-ECN Eq. 1 writes 0.17
ECN_STAR_LAMBDA = 1.0  # Tuning ECN Eq. 1: h ≥ C×RTT

IMPRACTICAL_PKT = 3.0
"""A threshold that holds a queue to fewer full packets than this is flagged
impractical. MQ-ECN §2.2.2 (Fig. 2) measured the minimum threshold at 2
packets (K = 16 split over 8 queues) on a real 1 GbE switch: K = 16 gave a
7.2-23.5% lower overall average FCT than K = 2. At that size one packet on
the wire and one waiting already cross it, so a mark says that two packets
met, not that a queue stands, and the fluid model behind DCTCP's
K > C×RTT/7 (DCTCP §3.3) no longer describes the queue. ecnlab's model,
whose hosts do not burst, shows the loss barely (experiments/mqecn-fig2/NOTES.md),
so a simulation alone will not warn you."""

HEADER_BYTES = 40  # transport.header's default: a packet is mss + 40 B


@dataclass
class Row:
    """One derived number, with the equation and where it comes from.

    ``flag`` is set where the number is a problem (e.g. ``"impractical"``).
    """

    name: str
    bytes: float | None
    equation: str
    source: str
    note: str = ""
    flag: str = ""


@dataclass
class Recommendation:
    """One marking scheme's threshold and the ``--set`` flags that set it.

    ``threshold`` (bytes) is ``switch.threshold``; ``queue_low`` and
    ``queue_high`` bound what one queue is held to (``None`` for per-port,
    which judges the port's total); ``settings`` are this scheme's own
    ``(key, value)`` pairs, to be used with :attr:`Advice.common`.
    """

    scheme: str
    threshold: float
    queue_low: float | None
    queue_high: float | None
    settings: list[tuple[str, str]]
    basis: str
    flag: str = ""


@dataclass
class Advice:
    rate_bps: float
    rtt_s: float
    packet_bytes: int
    rows: list[Row]
    warnings: list[str]
    recommendations: list[Recommendation] = field(default_factory=list)
    common: list[tuple[str, str]] = field(default_factory=list)
    """``(key, value)`` pairs every recommendation needs (queues, buffer, cc)."""
    standard_k: float = 0.0
    """The standard K before rounding, bytes (λ·C×RTT, or the LSO bound)."""
    cc: str = "dctcp"
    queues: int = 1
    buffer_bytes: float | None = None
    aqm: list[AqmSetting] = field(default_factory=list)
    """PIE's and DualPI2's values at this RTT (what their recipes fill)."""

    def value(self, name: str) -> float:
        for r in self.rows:
            if r.name == name and r.bytes is not None:
                return r.bytes
        raise KeyError(name)

    def recommendation(self, scheme: str) -> Recommendation:
        for rec in self.recommendations:
            if rec.scheme == scheme:
                return rec
        raise KeyError(scheme)

    def overrides(self, scheme: str) -> list[str]:
        """The ``KEY=VALUE`` overrides (for ``ecnlab.run``) of one scheme."""
        pairs = self.common + self.recommendation(scheme).settings
        return [f"{key}={value}" for key, value in pairs]

    def set_flags(self, scheme: str, common: bool = True) -> str:
        """The shell flags, ``--set KEY=VALUE ...``, of one scheme."""
        pairs = (self.common if common else []) + self.recommendation(scheme).settings
        return " ".join(f"--set {shlex.quote(f'{key}={value}')}" for key, value in pairs)


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
    """The thresholds and buffer bounds for a bottleneck, and one threshold
    per marking scheme; raises :class:`ConfigError` naming the argument for
    bad input."""
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
    k = lam * bdp  # MQ-ECN Eq. 1: the standard K of this transport
    weights = list(weights) if weights is not None else [1.0] * queues
    shares = [w / sum(weights) for w in weights]
    impractical = IMPRACTICAL_PKT * mtu
    warnings: list[str] = []

    rows = [
        Row(
            "C×RTT",
            bdp,
            "C × RTT",
            "bandwidth-delay product; ECN*'s h ≥ C×RTT (Tuning ECN Eq. 1)",
        )
    ]
    if cc == "dctcp":
        rows.append(
            Row("DCTCP K", k, "λ·C×RTT, λ ≈ 0.17", "DCTCP K > C×RTT/7 (§3.3); MQ-ECN Eq. 1")
        )
    # ECN*'s standard K is h = C×RTT itself: the C×RTT row says it.
    basis = f"{'DCTCP' if cc == 'dctcp' else 'ECN*'} K = λ·C×RTT = {_pkt(k, mtu)}"
    if lso:
        lso_rows, bound = _lso_rows(bdp / mtu, lso_fraction, senders, mtu, cc)
        rows += lso_rows
        if bound > k:
            k = bound
            basis = f"K with LSO = {_pkt(k, mtu)} (CEDM {'Cor. 4' if cc == 'dctcp' else 'Cor. 2'})"
        # Cor. 2 and 4 assume batches of β·w below L; w at marking is at
        # most (C×RTT + K)/(N(1−β)) (Eq. 11).
        w = (bdp + lam * bdp) / (senders * (1 - lso_fraction)) if lso_fraction < 1 else math.inf
        if lso_fraction * w >= lso_l:
            warnings.append(
                f"β·w ≈ {_pk(lso_fraction * w, mtu)} reaches the LSO limit {_pk(lso_l, mtu)}: "
                "batches are L, not β·w, and CEDM Cor. 2/4 do not apply as stated"
            )
    if queues > 1:
        # MQ-ECN Eq. 2: K_i = w_i/Σw · K, the minimum threshold.
        equal = len(set(weights)) == 1
        for i, share in enumerate(shares[:1] if equal else shares):
            label = "per-queue minimum K_i" if equal else f"minimum K_{i}"
            flag = "impractical" if share * k < impractical else ""
            rows.append(Row(label, share * k, "w_i/Σw · K", "MQ-ECN Eq. 2", flag=flag))

    # Tuning ECN Eq. 2, 3, 5: at h = C×RTT the slow-start peak 2h + C×RTT is
    # the 3·C×RTT that enqueue marking needs; §4.2: dequeue marking 2·C×RTT.
    rows.append(
        Row(
            "buffer for ECN*, enqueue marking",
            3 * bdp,
            "B ≥ 2h + C×RTT = 3·C×RTT (slow-start peak)",
            "Tuning ECN Eq. 2, 3, 5",
        )
    )
    rows.append(
        Row(
            "buffer for ECN*, dequeue marking",
            2 * bdp,
            "B ≥ h + C×RTT = 2·C×RTT",
            "Tuning ECN §4.2",
        )
    )
    k_pkts = max(1, math.ceil(k / mtu - 1e-9))
    k_set = k_pkts * mtu  # the recommended switch.threshold, whole packets
    dequeue = False
    if b is not None:
        rows.append(
            Row(
                "ECN* h, upper bound (enqueue)",
                (b - bdp) / 2,
                "h ≤ (B − C×RTT)/2",
                "Tuning ECN Eq. 4",
            )
        )
        rows.append(
            Row("ECN* h, upper bound (dequeue)", b - bdp, "h ≤ B − C×RTT", "Tuning ECN §4.2")
        )
        if queues > 1:
            rows.append(
                Row(
                    f"N = {queues} queues at K",
                    queues * k_set,
                    "N·K",
                    "MQ-ECN §2.2.1 (buffer pressure)",
                    flag="over the buffer" if queues * k_set > b else "",
                )
            )
        rows.append(
            Row(
                "queues at K before the buffer is full",
                None,
                "⌊B / K⌋",
                "MQ-ECN §2.2.1",
                note=f"{math.floor(b / k_set):,}",
            )
        )
        if cc == "ecn-star" and (b - bdp) / 2 < k_set:
            if b - bdp >= k_set:
                dequeue = True
                warnings.append(
                    f"ECN*'s enqueue marking needs B ≥ 3·C×RTT = {_pk(3 * bdp, mtu)}, over the "
                    f"{_pk(b, mtu)} buffer; dequeue marking needs 2·C×RTT and fits, so the "
                    "static schemes' lines below set switch.dequeue_marking=true (Tuning ECN §4.2)"
                )
            else:
                warnings.append(
                    f"no ECN* threshold fits: B = {_pk(b, mtu)} < 2·C×RTT = {_pk(2 * bdp, mtu)}, "
                    "what even dequeue marking needs (Tuning ECN §4.2); expect drops in slow start"
                )
        if queues > 1 and queues * k_set > b:
            warnings.append(
                f"{queues} busy queues at K hold {_pk(queues * k_set, mtu)}, over the "
                f"{_pk(b, mtu)} buffer: per-queue marking can fill the port; per-port, "
                "per-queue-min and mq-ecn keep it near K (MQ-ECN §2.2.1)"
            )
    if not lso and k_set < lso_l:
        warnings.append(
            f"if the senders use TSO/LSO, one burst of up to {_pk(lso_l, mtu)} reaches the queue "
            f"at once, over K = {k_pkts} pkt: --lso adds CEDM's bounds for that (§III)"
        )

    recs = _recommendations(k_set, shares, dequeue, impractical, basis, k_pkts)
    if lso:
        k1_pkts = max(1, math.ceil(lam * bdp / mtu - 1e-9))
        k2_pkts = math.ceil(cedm_k2(k1_pkts, bdp / mtu, lso_fraction, senders) - 1e-9)
        recs.append(
            Recommendation(
                "cedm",
                k1_pkts * mtu,
                k1_pkts * mtu,
                k2_pkts * mtu,
                [
                    ("switch.marking", "cedm"),
                    ("switch.threshold", f"{k1_pkts * mtu}B"),
                    ("switch.cedm_k2", f"{k2_pkts * mtu}B"),
                ],
                f"K1 = λ·C×RTT = {k1_pkts} pkt, K2 = {k2_pkts} pkt (CEDM §IV-C)",
            )
        )
    flagged = [r for r in recs if r.flag]
    if flagged:
        low = min(r.queue_low for r in flagged if r.queue_low is not None)
        names = " and ".join(
            r.scheme + (" (with every queue busy)" if r.scheme == "mq-ecn" else "") for r in flagged
        )
        warnings.append(
            f"impractical: {names} hold a queue to {_pkt(low, mtu)}, under {IMPRACTICAL_PKT:g} "
            "packets, where one packet on the wire and one waiting cross the threshold (MQ-ECN "
            "§2.2.2: on a real switch K = 16 gave 7-24% lower FCT than 2); raise K, use "
            "fewer queues, or use per-queue"
        )

    warnings += aqm_warnings(c, t, b)

    common = [("switch.queues", str(queues)), ("transport.cc", cc)]
    if b is not None:
        common.insert(1, ("switch.buffer", f"{round(b)}B"))
    if mtu != 1500:
        if mtu - HEADER_BYTES >= 64:
            common.append(("transport.mss", str(mtu - HEADER_BYTES)))
        else:
            common += [("transport.header", "0"), ("transport.mss", str(mtu))]
    if len(set(weights)) > 1:
        # DWRR's quantum is each queue's weight: one packet for the lightest.
        quanta = [f'"{round(w / min(weights) * mtu)}B"' for w in weights]
        common.append(("switch.quantum", "[" + ", ".join(quanta) + "]"))
    return Advice(
        c,
        t,
        mtu,
        rows,
        warnings,
        recommendations=recs,
        common=common,
        standard_k=k,
        cc=cc,
        queues=queues,
        buffer_bytes=b,
        aqm=aqm_settings(t),
    )


def _recommendations(
    k_set: float,
    shares: list[float],
    dequeue: bool,
    impractical: float,
    basis: str,
    k_pkts: int,
) -> list[Recommendation]:
    """One threshold per marking scheme, K in whole packets for every one.

    With one queue, per-port, per-queue-min and mq-ecn mark as per-queue
    does, so only per-queue is listed.
    """
    threshold = ("switch.threshold", f"{round(k_set)}B")
    static = [("switch.dequeue_marking", "true")] if dequeue else []
    recs = [
        Recommendation(
            "per-queue",
            k_set,
            k_set,
            k_set,
            [("switch.marking", "per-queue"), threshold, *static],
            f"each queue against K = {k_pkts} pkt ({basis})",
        )
    ]
    if len(shares) == 1:
        recs[0].basis += "; with one queue, per-port, per-queue-min and mq-ecn mark the same"
        return recs
    low, high = min(shares) * k_set, max(shares) * k_set
    flag = "impractical" if low < impractical else ""
    recs += [
        Recommendation(
            "per-port",
            k_set,
            None,
            None,
            [("switch.marking", "per-port"), threshold, *static],
            "the port's total against K (MQ-ECN §2.1)",
        ),
        Recommendation(
            "per-queue-min",
            k_set,
            low,
            high,
            [("switch.marking", "per-queue-min"), threshold, *static],
            "queue i against K·w_i/Σw (MQ-ECN Eq. 2)",
            flag=flag,
        ),
        Recommendation(
            "mq-ecn",
            k_set,
            low,
            k_set,
            [("switch.marking", "mq-ecn"), threshold],
            "K for a queue alone, K·w_i/Σw with every queue busy (MQ-ECN §3)",
            flag=f"{flag} when all busy" if flag else "",
        ),
    ]
    return recs


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


def _lso_rows(cd: float, beta: float, n: int, mtu: int, cc: str) -> tuple[list[Row], float]:
    """The LSO bounds of CEDM §III and the K2 guideline of §IV-C, in bytes,
    and the bound on K of ``cc`` (Cor. 4 for DCTCP, Cor. 2 for ECN*), bytes."""
    where = f"N = {n} senders, β = {beta:.3g}"
    ecn = cor2_ecn_star_k(cd, beta, n)
    dc = cor4_dctcp_k(cd, beta, n)
    k1 = DCTCP_LAMBDA * cd if cc == "dctcp" else cd
    rows = [
        Row(f"ECN* K with LSO ({where})", ecn * mtu, "((1+β)N − 2β)/((1−β)N)·C×RTT", "CEDM Cor. 2"),
        Row(f"DCTCP K with LSO ({where})", dc * mtu, "Eq. 23 (two cases)", "CEDM Cor. 4"),
        Row(
            f"CEDM K2 for K1 = λ·C×RTT ({cc})",
            cedm_k2(k1, cd, beta, n) * mtu,
            "K1 + (N−1)·β·(C×RTT + K1)/(N(1−β))",
            "CEDM §IV-C",
        ),
    ]
    return rows, (dc if cc == "dctcp" else ecn) * mtu


def _size(nbytes: float) -> str:
    if abs(nbytes) >= 1e6:
        return f"{nbytes / 1e6:,.2f} MB"
    return f"{nbytes / 1e3:,.1f} KB"


def _pkt(nbytes: float, mtu: int) -> str:
    packets = nbytes / mtu
    return f"{packets:,.0f} pkt" if packets == round(packets) else f"{packets:,.1f} pkt"


def _pk(nbytes: float, mtu: int) -> str:
    return f"{_size(nbytes)} ({_pkt(nbytes, mtu)})"


def _rate(bps: float) -> str:
    for unit, scale in (("Tbps", 1e12), ("Gbps", 1e9), ("Mbps", 1e6), ("Kbps", 1e3)):
        if bps >= scale:
            return f"{bps / scale:g} {unit}"
    return f"{bps:g} bps"


def _table(rows: list[list[str]], right: Sequence[int] = ()) -> list[str]:
    """Rows of cells as aligned lines: every column as wide as its widest cell."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for row in rows:
        cells = [
            cell.rjust(width) if i in right else cell.ljust(width)
            for i, (cell, width) in enumerate(zip(row, widths))
            if width > 0  # a column with nothing in it takes no room
        ]
        lines.append("  " + "  ".join(cells).rstrip())
    return lines


def format_advice(a: Advice) -> str:
    """What ``ecnlab advise`` prints: the derived numbers, one threshold per
    scheme with its ``--set`` flags, and the notes that apply."""
    mtu = a.packet_bytes
    head = (
        f"bottleneck {_rate(a.rate_bps)}, RTT {a.rtt_s * 1e6:g} us, packets of {mtu} B, "
        f"{a.queues} queue{'s' if a.queues > 1 else ''}"
        + ("" if a.buffer_bytes is None else f", buffer {_size(a.buffer_bytes)}")
        + f", {a.cc}"
    )
    table = [["quantity", "bytes", "packets", "", "equation", "source"]]
    for r in a.rows:
        if r.bytes is None:
            table.append([r.name, r.note, "", r.flag, r.equation, r.source])
        else:
            table.append([r.name, _size(r.bytes), _pkt(r.bytes, mtu), r.flag, r.equation, r.source])
    lines = [head, ""] + _table(table, right=(1, 2))
    lines += ["", "recommended threshold, one per marking scheme (K rounded up to whole packets)"]
    recs = [["scheme", "switch.threshold", "a queue held to", "", "basis"]]
    for rec in a.recommendations:
        if rec.queue_low is None or rec.queue_high is None:
            held = "(the port's total)"
        elif rec.queue_low == rec.queue_high:
            held = _pkt(rec.queue_low, mtu)
        else:
            held = f"{_pkt(rec.queue_low, mtu)} .. {_pkt(rec.queue_high, mtu)}"
        recs.append([rec.scheme, _pk(rec.threshold, mtu), held, rec.flag, rec.basis])
    lines += _table(recs)
    common = " ".join(f"--set {shlex.quote(f'{k}={v}')}" for k, v in a.common)
    lines += ["", f"to run one, add its flags to: ecnlab run EXPERIMENT.toml {common}"]
    lines += _table(
        [[f"  {r.scheme}:", a.set_flags(r.scheme, common=False)] for r in a.recommendations]
    )
    if a.aqm:
        lines += [
            "",
            "delay-based AQMs at this RTT (what switch.recipe fills where --rtt is the base RTT)",
        ]
        aqm = [["scheme", "run with", "values", "basis"]]
        for s in a.aqm:
            values = ", ".join(f"{k.split('.', 1)[1]} = {v}" for k, v in s.settings[1:])
            aqm.append([s.scheme, f"--set switch.recipe={s.recipe}", values, s.basis])
        lines += _table(aqm)
    if a.warnings:
        lines.append("")
        lines += [f"  note: {w}" for w in a.warnings]
    return "\n".join(lines)
