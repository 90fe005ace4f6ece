"""``ecnlab advise`` and ``ecnlab rtt``: the papers' thresholds and buffer
bounds for a link (:mod:`ecnlab.advise`), and the base RTT of an
experiment's network, which ``advise --rtt`` takes (:mod:`ecnlab.base_rtt`)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from .common import EXIT_OK, InputError, add_set, add_unset, positive_int

__all__ = ["add_commands"]


def add_commands(commands: Any) -> None:
    """Register ``ecnlab advise`` and ``ecnlab rtt``."""
    p_adv = commands.add_parser(
        "advise",
        help="marking thresholds and buffer sizes the papers derive, with their equations",
        description=(
            "Print C×RTT, DCTCP's K, ECN*'s threshold bounds (Tuning ECN Eq. 1, 4, 5), dequeue "
            "marking's buffer bound (§4.2), the per-queue minimum threshold (MQ-ECN Eq. 2) and "
            "the buffer pressure of N queues each at K; then one switch.threshold per marking "
            "scheme (K rounded up to whole packets) with the --set flags that run it, flagged "
            "impractical where it holds a queue under 3 packets; and PIE's and DualPI2's "
            "settings scaled to the RTT (their recipes), with whether the buffer holds them."
        ),
    )
    p_adv.add_argument("--rate", required=True, help="bottleneck rate, e.g. 10Gbps")
    p_adv.add_argument("--rtt", required=True, help="round-trip time, e.g. 100us")
    p_adv.add_argument("--buffer", help="per-port buffer, e.g. 300KB or 200pkt")
    p_adv.add_argument("--queues", type=positive_int, default=1, help="queues per port")
    p_adv.add_argument(
        "--weights", help="queue weights, comma separated (default equal), e.g. 1,2,3"
    )
    p_adv.add_argument("--cc", default="dctcp", help="dctcp or ecn-star (its λ for the standard K)")
    p_adv.add_argument("--mtu", type=positive_int, default=1500, help="packet size on the wire")
    p_adv.add_argument(
        "--lso", action="store_true", help="senders batch with LSO: add CEDM's bounds (Cor. 2, 4)"
    )
    p_adv.add_argument(
        "--lso-fraction", type=float, default=1 / 3, help="β, the share of cwnd per LSO segment"
    )
    p_adv.add_argument("--lso-max", default="64KB", help="largest LSO segment L (default 64KB)")
    p_adv.add_argument(
        "--senders", type=positive_int, default=2, help="synchronised senders N (default 2)"
    )
    p_adv.set_defaults(handler=_cmd_advise)

    _add_rtt(commands)


def _cmd_advise(args: argparse.Namespace) -> int:
    from ..advise import advise, format_advice

    weights = None
    if args.weights:
        try:
            weights = [float(w) for w in args.weights.split(",")]
        except ValueError:
            raise InputError(f"--weights {args.weights!r}: expected numbers like 1,2,3") from None
    advice = advise(
        args.rate,
        args.rtt,
        args.buffer,
        args.queues,
        args.cc,
        args.mtu,
        weights=weights,
        lso=args.lso,
        lso_fraction=args.lso_fraction,
        lso_max=args.lso_max,
        senders=args.senders,
    )
    print(format_advice(advice))
    return EXIT_OK


def _cmd_rtt(args: argparse.Namespace) -> int:
    from ..base_rtt import base_rtt, format_base_rtt

    result = base_rtt(Path(args.config), args.overrides, args.unsets)
    print(format_base_rtt(result, str(args.config)))
    return 0


def _add_rtt(commands: Any) -> None:
    p = commands.add_parser(
        "rtt",
        help="the base RTT of an experiment's network (what `advise --rtt` takes)",
        description=(
            "Measure the round trip with no queueing across the longest host-to-host path "
            "of CONFIG's network (host 0 to the last host), with ACK-sized and full-sized "
            "probes, the experiment's traffic left out; print it and the `ecnlab advise` "
            "flags it gives."
        ),
    )
    p.add_argument("config", metavar="CONFIG", help="experiment TOML file")
    add_set(p)
    add_unset(p)
    p.set_defaults(handler=_cmd_rtt)
