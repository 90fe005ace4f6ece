"""Run inside one namespace (``ip netns exec NS python prep.py ...``):
write its sysctls and turn its veths' offloads off.

Offloads: with checksum offload a veth hands its peer frames whose TCP
checksum is only partly computed, and with segmentation offload "frames"
of up to 64 KB; a raw socket would see both and forward them broken. This
machine has no ethtool, so the legacy ETHTOOL_S* ioctls are used directly:
checksumming, scatter-gather and TSO off. Generic segmentation (GSO) stays
on: the kernel still builds large segments and cuts them into frames just
before the veth, which costs the hosts far less CPU than sending each
1448-byte segment through the stack alone.

Usage: ``prep --sysctl KEY=VALUE ... --no-offload IFNAME ...``
"""

from __future__ import annotations

import argparse
import ctypes
import fcntl
import socket
import struct
import sys
from pathlib import Path

SIOCETHTOOL = 0x8946
# linux/ethtool.h: the legacy setters of one feature each.
ETHTOOL_STXCSUM = 0x17
ETHTOOL_SSG = 0x19
ETHTOOL_STSO = 0x1F
OFFLOADS = (ETHTOOL_STXCSUM, ETHTOOL_SSG, ETHTOOL_STSO)


def set_feature(ifname: str, command: int, value: int) -> None:
    """One ETHTOOL_S* ioctl on ``ifname``: struct ethtool_value {cmd, data}."""
    data = (ctypes.c_uint32 * 2)(command, value)
    ifreq = struct.pack("16sP", ifname.encode(), ctypes.addressof(data)) + bytes(16)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        fcntl.ioctl(sock, SIOCETHTOOL, ifreq)


def write_sysctl(key: str, value: str) -> None:
    Path("/proc/sys", *key.split(".")).write_text(value + "\n", encoding="ascii")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="ecnlab.testbed.prep")
    parser.add_argument("--sysctl", action="append", default=[])
    parser.add_argument("--no-offload", action="append", default=[])
    args = parser.parse_args(argv)
    try:
        for item in args.sysctl:
            key, _, value = item.partition("=")
            write_sysctl(key, value)
        for ifname in args.no_offload:
            for command in OFFLOADS:
                set_feature(ifname, command, 0)
    except OSError as exc:
        print(f"ecnlab.testbed.prep: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
