"""How fast the testbed's switch keeps up (docs/testbed.md, "How fast the switch keeps up").

Runs MQ-ECN Fig. 3's star (1 vs 4 ECN* flows, per-port K = 16) on the
testbed at each rate given, with the link delay scaled so the
bandwidth-delay product stays the paper's (20 µs at 1 Gbps), and prints per
rate: the bottleneck port's `sustained` (the share of its backlogged time
it sent at the token bucket's rate), goodput against what the wire can
carry (1448 of every 1538 bytes), the switch's CPU and the machine's load.
Needs root and a built ecnlab-switch. Not a test: prints numbers.

    .venv/bin/python bench/testbed_rate.py 100Mbps 200Mbps 500Mbps 1Gbps
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from ecnlab.testbed import run_testbed
from ecnlab.testbed.plan import parse_rate

FIG3 = Path(__file__).resolve().parents[1] / "experiments" / "mqecn-fig3" / "base.toml"


def main(rates: list[str]) -> None:
    print("rate      sustained  goodput/ceiling  switch cpu (user+sys s)  load (1 min)")
    for rate in rates:
        bps = parse_rate(rate)
        delay_us = 20 * 1e9 / bps
        with tempfile.TemporaryDirectory() as out:
            r = run_testbed(
                FIG3,
                out,
                overrides=[
                    "transport.cc=ecn-star",
                    f"topology.link_rate={rate}",
                    f"topology.link_delay={delay_us:g}us",
                    "run.duration=4s",
                    "run.warmup=1s",
                ],
                allow_fast=True,
            )
        s = r.summary
        port = max(s["switch_ports"], key=lambda p: p["tx_wire_bytes"])
        goodput = sum(s["goodput_gbps_by_service"].values()) * 1e9
        ceiling = bps * 1448 / 1538
        cpu = s["switch"]["cpu_user_seconds"] + s["switch"]["cpu_system_seconds"]
        print(
            f"{rate:9} {port['sustained'] * 100:8.2f}%  {goodput / ceiling * 100:14.1f}%"
            f"  {cpu:23.1f}  {os.getloadavg()[0]:11.2f}"
        )


if __name__ == "__main__":
    main(sys.argv[1:] or ["100Mbps", "200Mbps", "500Mbps", "1Gbps"])
