"""The Linux stack's keys on the testbed (`transport.profile = "linux"` and
the keys it fills): the testbed's hosts run Linux's own TCP, so each of
these keys describes what the kernel already does. A value that says so is
accepted; a value the kernel can be told to take inside the namespace (a
sysctl) is set; any other value is refused, naming what the kernel does.

A key left out keeps the testbed as it always was: the kernel's stack as it
is, whatever the simulator's default stack does (the docs list where the two
differ). Most of these keys are resolved only when given (`resolved Given`
in the engine), so a key spelt out at its "off" value is told apart from
one left out, and refused where the kernel cannot turn the mechanism off.

Sources are Linux 6.18 (this machine's kernel): include/net/tcp.h,
net/ipv4/tcp_input.c, tcp_output.c, tcp_recovery.c, sysctl_net_ipv4.c.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..units import parse_time

RTO_MAX_SYSCTL = "net.ipv4.tcp_rto_max_ms"
"""The per-namespace RTO ceiling (Linux 6.15 and later), in ms."""
RTO_MAX_RANGE_MS = (1_000, 120_000)
"""What the sysctl takes (sysctl_net_ipv4.c: one second to TCP_RTO_MAX)."""
KERNEL_RTO_MAX = 120.0
"""TCP_RTO_MAX: the ceiling of a kernel without the sysctl (seconds)."""
EARLY_RETRANS_SYSCTL = "net.ipv4.tcp_early_retrans"
"""3 (a namespace's default) sends tail loss probes, 0 does not
(tcp_schedule_loss_probe tests for 3 or 4)."""

FRTO_SYSCTL = "net.ipv4.tcp_frto"
"""2 (a namespace's default) runs F-RTO, SACK-enhanced (tcp_enter_loss);
0 does not."""


def rto_max_settable() -> bool:
    """Whether this kernel has the per-namespace RTO ceiling."""
    return Path("/proc/sys", *RTO_MAX_SYSCTL.split(".")).exists()


@dataclass(frozen=True)
class KernelKey:
    """A key whose value the kernel fixes: ``value`` (the engine's
    resolved form), and how the kernel does it."""

    value: Any
    how: str
    off: tuple[str, str] | None = None
    """The sysctl and value that turn the mechanism off in the namespace,
    where one exists (the key's explicit false sets it)."""
    cc: str | None = None
    """The congestion control the key belongs to, where it has one: with
    another the engine leaves it out of the resolved form and ignores it."""


KERNEL: dict[str, KernelKey] = {
    "profile": KernelKey(
        "linux",
        "the testbed's hosts run Linux's TCP, which only the linux profile describes (each "
        "key it fills is then checked against the kernel)",
    ),
    "linux_rto": KernelKey(
        True, "the kernel always runs its own RTT estimator and RTO (tcp_rtt_estimator)"
    ),
    "prr": KernelKey(
        "linux",
        "the kernel always runs PRR with its own reduction bound (tcp_cwnd_reduction), in "
        "loss recovery and after ECN cuts (CWR)",
    ),
    "lost_retransmit": KernelKey(
        True, "the kernel always detects a lost retransmission (RACK, tcp_rack_detect_loss)"
    ),
    "rto_keeps_sack": KernelKey(
        True, "the kernel keeps its SACK scoreboard across an RTO (tcp_enter_loss)"
    ),
    "sack_blocks": KernelKey(
        3,
        "the kernel's ACKs carry up to three SACK blocks beside their timestamps "
        "(tcp_established_options), the newest first",
    ),
    "rto_rearm_head": KernelKey(
        True,
        "the kernel restarts its timer when it retransmits the head of its queue "
        "(tcp_xmit_retransmit_queue)",
    ),
    "rack": KernelKey(
        True, "the kernel detects losses by time (RACK, net.ipv4.tcp_recovery = 1, its default)"
    ),
    "tlp": KernelKey(
        True,
        f"the kernel sends tail loss probes ({EARLY_RETRANS_SYSCTL} = 3, its default); "
        "false sets it to 0, which turns them off",
        off=(EARLY_RETRANS_SYSCTL, "0"),
    ),
    "frto": KernelKey(
        True,
        f"the kernel detects spurious RTOs with F-RTO ({FRTO_SYSCTL} = 2, its default: the "
        "SACK-enhanced algorithm); false sets it to 0, which turns it off",
        off=(FRTO_SYSCTL, "0"),
    ),
    "tlp_slack": KernelKey(
        "2ms",
        "the kernel adds TCP_TIMEOUT_MIN_US (2 ms) to 2·srtt when more than one segment is out, "
        "then rounds up to a jiffy (4 ms at this machine's HZ = 250)",
    ),
    "hystart": KernelKey(
        True,
        "the kernel's cubic runs HyStart (tcp_cubic's module parameter hystart = 1, its "
        "default; a parameter of the whole machine, not of a namespace)",
    ),
    "linux_cwnd": KernelKey(
        True,
        "the kernel counts each segment delivered once, when SACKed or else when cumulatively "
        "acknowledged, and grows cwnd by that count (tcp_cong_control); its ssthresh hooks "
        "work from cwnd (tcp_reno_ssthresh)",
    ),
    "dctcp_linux": KernelKey(True, "the kernel's DCTCP is tcp_dctcp.c, which this key models"),
    "cubic_linux": KernelKey(
        True,
        "the kernel's cubic is tcp_cubic.c, whose Reno-friendly estimate this key models",
        cc="cubic",
    ),
    "init_rto": KernelKey(
        "1s", "the kernel starts from TCP_TIMEOUT_INIT (1 s, RFC 6298 §2.1), not settable"
    ),
}
"""The kernel's value of each key it fixes (``transport.`` left out)."""


def _same(a: Any, b: Any) -> bool:
    """Equal in the resolved form, durations compared as times."""
    if a == b:
        return True
    try:
        return abs(parse_time(str(a)) - parse_time(str(b))) < 1e-12
    except (ValueError, ConfigError):
        return False


def _show(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else repr(value)


def _refuse(key: str, value: Any, why: str, allowed: str) -> ConfigError:
    return ConfigError(f"transport.{key} = {_show(value)}: {why}; allowed: {allowed}")


@functools.cache
def _declared() -> dict[str, Any]:
    """The engine's default of each key here that it resolves only when
    set (`ecnlab keys transport`); init_rto and profile are always resolved."""
    from ..keys import catalog

    return {
        p["key"]: json.loads(p["default"])
        for g in catalog()
        if g["section"] == "transport"
        for p in g["params"]
        if p["key"] in set(KERNEL) - {"init_rto", "profile"} | {"tlp_delack"}
    }


def _value(transport: dict[str, Any], key: str) -> Any:
    """What the simulator would run: the resolved value, else the default."""
    value = transport.get(key)
    return _declared().get(key) if value is None else value


def check(transport: dict[str, Any], default_rto_max: Any, *, rto_max: bool) -> dict[str, str]:
    """Refuse the first key of resolved ``[transport]`` the kernel does
    not do; return the sysctls that make the kernel do the rest.
    ``default_rto_max``: the engine's max_rto; ``rto_max``: whether the
    kernel has the per-namespace RTO ceiling.

    Without the profile a key left out is let through (the testbed runs
    the kernel's stack whatever the simulator's default does, as it always
    has). With it, a key missing from the resolved form was set to its
    "off" value over the profile's, and is judged like any set value."""
    sysctls: dict[str, str] = {}
    linux = transport.get("profile") == "linux"
    for key, kernel in KERNEL.items():
        given = transport.get(key) is not None
        if not given and not (linux and key != "profile"):
            continue
        if kernel.cc is not None and transport.get("cc") != kernel.cc:
            continue
        value = _value(transport, key)
        if key == "init_rto" and not linux and _same(value, transport["min_rto"]):
            # Its default (min_rto): the kernel's 1 s runs, as it always
            # has (seen only when a SYN is lost).
            continue
        if _same(value, kernel.value):
            continue
        if value is False and kernel.off is not None:
            sysctls[kernel.off[0]] = kernel.off[1]
            continue
        why = kernel.how
        if not given:
            why += " (the file sets it over the linux profile's value)"
        allowed = _show(kernel.value) + " (the kernel's)"
        if kernel.off is not None:
            allowed += " or false"
        if key == "init_rto" and not linux:
            allowed += f" or min_rto's {_show(transport['min_rto'])} (left out)"
        else:
            allowed += " or left out"
        raise _refuse(key, value, why, allowed)
    # A lone segment's probe waits 2·srtt + tcp_rto_min_us(sk): the route's
    # rto_min, which is transport.min_rto.
    delack = _value(transport, "tlp_delack")
    if _value(transport, "tlp") and not _same(delack, transport["min_rto"]):
        raise _refuse(
            "tlp_delack",
            delack,
            "with one segment out the kernel adds its minimum RTO (the route's rto_min, "
            "transport.min_rto) to 2·srtt",
            f"{_show(transport['min_rto'])} (transport.min_rto)",
        )
    value = transport["max_rto"]
    if rto_max:
        ms = parse_time(str(value)) * 1e3
        lo, hi = RTO_MAX_RANGE_MS
        if not (lo <= ms <= hi) or abs(ms - round(ms)) > 1e-6:
            raise _refuse(
                "max_rto",
                value,
                f"the kernel takes its RTO ceiling from {RTO_MAX_SYSCTL}, whole ms",
                '"1s" to "120s"',
            )
        sysctls[RTO_MAX_SYSCTL] = str(round(ms))
    elif not _same(value, default_rto_max) and not _same(value, f"{KERNEL_RTO_MAX:g}s"):
        raise _refuse(
            "max_rto",
            value,
            f"this kernel has no {RTO_MAX_SYSCTL} (Linux 6.15 and later): its RTO ceiling is "
            "TCP_RTO_MAX",
            '"120s" (the kernel\'s) or left out',
        )
    return sysctls
