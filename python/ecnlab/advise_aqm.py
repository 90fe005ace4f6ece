"""``ecnlab advise`` for the delay-based AQMs, PIE and DualPI2: their RFCs'
times are made for Internet RTTs, so on a data-centre port they lie beyond
what the buffer holds and the AQM never acts. These are the values the
engine's recipes (``switch.recipe = "pie"`` / ``"dualpi2"``) derive from the
base RTT d, worked out here from the ``--rtt`` given:

* PIE (RFC 8033 §5.2): every time × d / 100 ms and both gains × 100 ms / d,
  so each update moves the probability as the RFC's does for the same delay
  counted in RTTs (the scaling is ecnlab's): target and T_UPDATE 15 ms · d /
  100 ms, burst allowance 150 ms · d / 100 ms, α = 0.125, β = 1.25 Hz times
  100 ms / d.
* DualPI2 (RFC 9332 A.1) at RTT_max = d: target 0.15·d, T_update =
  min(target, d/3), α = 0.1·T_update/d², β = 0.3/d; the L4S ramp from d/7
  (DCTCP's K > C×RTT/7, DCTCP §3.3, as a queueing time) over d/14 (the
  RFC's width of half the start).

With a buffer given, the most it can hold at the rate (B × 8 / C) is
compared with both the RFCs' defaults and these values: a target or ramp at
or above it never acts (the engine warns of the same when it runs).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["AqmSetting", "aqm_settings", "aqm_warnings", "fmt_duration"]

DESIGN_RTT_S = 0.1
"""The RTT the RFCs' defaults are made for: RFC 9332 A.1's RTT_max."""


@dataclass
class AqmSetting:
    """One delay-based AQM: its recipe, the values the recipe fills at this
    RTT (``(key, value)``, as ``--set`` takes them), and where they come from."""

    scheme: str
    recipe: str
    settings: list[tuple[str, str]]
    basis: str
    target_s: float
    """The delay it steers to or marks from (the ramp's start for DualPI2's L4S
    queue), seconds: what the buffer must be able to hold."""


def fmt_duration(seconds: float) -> str:
    """A time rounded to whole nanoseconds (at least one) in the largest unit
    that divides it, as the engine writes it ("15us", "14286ns")."""
    ns = max(1, round(seconds * 1e9))
    for unit, size in (("s", 10**9), ("ms", 10**6), ("us", 10**3)):
        if ns % size == 0:
            return f"{ns // size}{unit}"
    return f"{ns}ns"


def _gain(hz: float) -> str:
    return f"{hz:.6g}"


def aqm_settings(rtt_s: float) -> list[AqmSetting]:
    """PIE's and DualPI2's values for a base RTT of ``rtt_s`` seconds."""
    ratio = rtt_s / DESIGN_RTT_S
    pie_target = 0.015 * ratio
    pie = AqmSetting(
        "pie",
        "pie",
        [
            ("switch.marking", "pie"),
            ("switch.pie_target", fmt_duration(pie_target)),
            ("switch.pie_tupdate", fmt_duration(0.015 * ratio)),
            ("switch.pie_max_burst", fmt_duration(0.150 * ratio)),
            ("switch.pie_alpha", _gain(0.125 / ratio)),
            ("switch.pie_beta", _gain(1.25 / ratio)),
        ],
        "RFC 8033 §5.2's times × RTT / 100 ms, gains × 100 ms / RTT (scaled by ecnlab)",
        pie_target,
    )
    target = 0.15 * rtt_s
    tupdate = min(target, rtt_s / 3)
    min_th = rtt_s / 7
    dualpi2 = AqmSetting(
        "dualpi2",
        "dualpi2",
        [
            ("switch.qdisc", "dualpi2"),
            ("switch.dualpi2_target", fmt_duration(target)),
            ("switch.dualpi2_tupdate", fmt_duration(tupdate)),
            ("switch.dualpi2_alpha", _gain(0.1 * tupdate / rtt_s**2)),
            ("switch.dualpi2_beta", _gain(0.3 / rtt_s)),
            ("switch.dualpi2_min_th", fmt_duration(min_th)),
            ("switch.dualpi2_range", fmt_duration(rtt_s / 14)),
        ],
        "RFC 9332 A.1 at RTT_max = RTT; the L4S ramp from RTT/7 (DCTCP §3.3's K)",
        min(target, min_th),
    )
    return [pie, dualpi2]


def aqm_warnings(rate_bps: float, rtt_s: float, buffer_bytes: float | None) -> list[str]:
    """What cannot act in a buffer of ``buffer_bytes`` at ``rate_bps``: the
    RFCs' defaults (15 ms targets, DualPI2's 800 us ramp), and the scaled
    values themselves when even they do not fit."""
    if buffer_bytes is None:
        return []
    holds = buffer_bytes * 8 / rate_bps
    out = []
    if holds <= 0.0008:
        out.append(
            f"the buffer holds {holds * 1e6:,.4g} us at this rate: RFC 8033's and RFC 9332's "
            "15 ms targets and RFC 9332's 800 us L4S ramp never act, so PIE and DualPI2 at their "
            "defaults are drop-tail here; use their recipes (above)"
        )
    for s in aqm_settings(rtt_s):
        if s.target_s >= holds:
            out.append(
                f"even {s.scheme}'s scaled values need {s.target_s * 1e6:,.4g} us of queue, at or "
                f"above the {holds * 1e6:,.4g} us the buffer holds: it will not act"
            )
    return out
