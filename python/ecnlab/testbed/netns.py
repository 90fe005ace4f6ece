"""The testbed's network: one namespace per host and one for the switch,
a veth pair from each host to the switch, all named after the run id so
that parallel runs never collide and a run's leftovers can be found."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .plan import SUBNET, TestbedPlan
from .uplink import nic_commands, nic_stats

__all__ = [
    "Network",
    "TestbedUnavailable",
    "check_host",
    "cleanup",
    "run_ids_left",
    "ip",
    "unavailable",
]

PREFIX = "ecnlab-tb-"
PREP = Path(__file__).resolve().parent / "prep.py"
"""Run as a file, not as ``-m ecnlab.testbed.prep``: the package's imports
(numpy, pyarrow) cost half a second per namespace, prep needs only the
standard library."""


class TestbedUnavailable(RuntimeError):
    """This machine (or user) cannot create the testbed's namespaces."""


def ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run ``ip ARGS``; a failure raises with ip's own message."""
    proc = subprocess.run(["ip", *args], capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)}: {proc.stderr.strip() or 'failed'}")
    return proc


def check_host() -> None:
    """Raise :class:`TestbedUnavailable` unless namespaces can be made here."""
    if sys.platform != "linux":
        raise TestbedUnavailable(
            f"ecnlab testbed needs Linux network namespaces (this is {sys.platform})"
        )
    if os.geteuid() != 0:
        raise TestbedUnavailable(
            "ecnlab testbed needs root to create network namespaces (run it as root)"
        )
    if shutil.which("ip") is None:
        raise TestbedUnavailable("ecnlab testbed needs the `ip` command (iproute2)")
    if shutil.which("tc") is None:
        raise TestbedUnavailable(
            "ecnlab testbed needs the `tc` command (iproute2) to emulate the hosts' uplinks"
        )


def unavailable() -> str | None:
    """Why the testbed cannot run here, or None: `check_host`'s checks, then
    a namespace actually made and removed (a container may refuse it to
    root). The tests that need the testbed skip on this."""
    try:
        check_host()
    except TestbedUnavailable as e:
        return str(e)
    probe = f"ecnlab-probe-{os.getpid()}"
    made = ip("netns", "add", probe, check=False)
    if made.returncode != 0:
        return f"cannot create a network namespace: {made.stderr.strip()}"
    ip("netns", "del", probe, check=False)
    return None


def netns_names() -> list[str]:
    out = ip("netns", "list", check=False).stdout
    return [line.split()[0] for line in out.splitlines() if line.strip()]


def run_ids_left() -> set[str]:
    """Run ids with a namespace still present."""
    pattern = re.compile(re.escape(PREFIX) + r"([0-9a-f]+)-")
    return {m.group(1) for name in netns_names() if (m := pattern.match(name))}


def cleanup(run_id: str | None = None) -> list[str]:
    """Delete the namespaces of run ``run_id`` (every testbed run's when
    None); returns their names. Deleting a namespace deletes its veths."""
    gone = []
    for name in netns_names():
        if name.startswith(PREFIX) and (run_id is None or name.startswith(f"{PREFIX}{run_id}-")):
            ip("netns", "del", name, check=False)
            gone.append(name)
    return gone


class Network:
    """The namespaces and links of one run; :meth:`destroy` is idempotent."""

    def __init__(self, run_id: str, plan: TestbedPlan) -> None:
        self.run_id = run_id
        self.plan = plan
        self.created: list[str] = []

    def host_ns(self, h: int) -> str:
        return f"{PREFIX}{self.run_id}-h{h}"

    @property
    def switch_ns(self) -> str:
        return f"{PREFIX}{self.run_id}-sw"

    def host_if(self, h: int) -> str:
        return f"e{self.run_id}h{h}"

    def switch_if(self, h: int) -> str:
        return f"e{self.run_id}s{h}"

    @staticmethod
    def mac(h: int) -> str:
        return f"02:ec:1a:b0:{(h >> 8) & 255:02x}:{h & 255:02x}"

    def create(self, python: str) -> None:
        """Build everything; on failure what was built stays listed in
        ``created`` for :meth:`destroy`."""
        plan = self.plan
        for name in [self.switch_ns] + [self.host_ns(h) for h in range(plan.hosts)]:
            ip("netns", "add", name)
            self.created.append(name)
        sw = self.switch_ns
        for h in range(plan.hosts):
            ns, hif, sif = self.host_ns(h), self.host_if(h), self.switch_if(h)
            # Created straight inside the namespaces: nothing of this run
            # ever appears in the caller's own namespace.
            ip(
                "link",
                "add",
                hif,
                "netns",
                ns,
                "address",
                self.mac(h),
                "type",
                "veth",
                "peer",
                "name",
                sif,
                "netns",
                sw,
            )
            ip("-n", ns, "addr", "add", f"{plan.ip(h)}/24", "dev", hif)
            self._prep(ns, python, plan.sysctls | _quiet_v6(), [hif])
            ip("-n", ns, "link", "set", "lo", "up")
            if plan.uplinks:
                self._make_nic(ns, hif)
            ip("-n", ns, "link", "set", hif, "up")
            # The connected route, with the transport's RTO floor, initial
            # window and ACK policy as route metrics.
            ip(
                "-n",
                ns,
                "route",
                "replace",
                f"{SUBNET}.0/24",
                "dev",
                hif,
                "src",
                plan.ip(h),
                *plan.route_options,
            )
            for g in range(plan.hosts):
                if g != h:
                    # Static neighbours: no ARP crosses the switch.
                    ip(
                        "-n",
                        ns,
                        "neigh",
                        "replace",
                        plan.ip(g),
                        "lladdr",
                        self.mac(g),
                        "dev",
                        hif,
                        "nud",
                        "permanent",
                    )
        self._prep(sw, python, _quiet_v6(), [self.switch_if(h) for h in range(plan.hosts)])
        for h in range(plan.hosts):
            # Promiscuous: the frames are addressed to the hosts, not to it.
            ip("-n", sw, "link", "set", self.switch_if(h), "up", "promisc", "on")

    def _make_nic(self, ns: str, ifname: str) -> None:
        """The host's uplink (uplink.py): a tbf at the link rate on its veth."""
        for cmd in nic_commands(ns, ifname, self.plan.rate_bps):
            proc = subprocess.run(cmd, capture_output=True, text=True)
            if proc.returncode != 0:
                hint = ""
                if cmd[0] == "tc":
                    hint = " (the hosts' uplinks need the kernel's tbf qdisc, CONFIG_NET_SCH_TBF)"
                raise RuntimeError(f"{' '.join(cmd)}: {proc.stderr.strip() or 'failed'}{hint}")

    def nic_stats(self) -> list[dict[str, Any]]:
        """Every host's uplink counters (uplink.nic_stats); [] without uplinks."""
        if not self.plan.uplinks:
            return []
        return [
            {"host": h, **nic_stats(self.host_ns(h), self.host_if(h))}
            for h in range(self.plan.hosts)
        ]

    @staticmethod
    def _prep(ns: str, python: str, sysctls: dict[str, str], ifnames: Sequence[str]) -> None:
        args = [f"--sysctl={k}={v}" for k, v in sysctls.items()] + [
            f"--no-offload={i}" for i in ifnames
        ]
        proc = subprocess.run(
            ["ip", "netns", "exec", ns, python, str(PREP), *args],
            capture_output=True,
            text=True,
        )
        if proc.returncode != 0:
            raise RuntimeError(f"preparing namespace {ns}: {proc.stderr.strip()}")

    def destroy(self) -> None:
        for name in reversed(self.created):
            ip("netns", "del", name, check=False)
        self.created.clear()


def _quiet_v6() -> dict[str, str]:
    """No IPv6 on the testbed's links: router solicitations and the like
    would only be frames the switch has to count and drop."""
    return {"net.ipv6.conf.all.disable_ipv6": "1", "net.ipv6.conf.default.disable_ipv6": "1"}


def available_ccs() -> tuple[str, ...]:
    """Congestion controls this kernel offers (a fresh namespace sees the
    same modules as the host)."""
    try:
        with open("/proc/sys/net/ipv4/tcp_available_congestion_control", encoding="ascii") as f:
            return tuple(f.read().split())
    except OSError:
        return ()
