"""Writes the sparse long-horizon benchmarks (issue 27): bench/scale/sparse_k*.toml.

A fat-tree on 320 Kbps links with rate-limited flows that each write one full
segment (1460 bytes) a second: every event lies milliseconds to seconds ahead
(37.5 ms to serialise a packet a hop, RTO and delayed-ACK timers, the next
write), far beyond the event queue's 67 us timing wheel. Flow i goes from host
i to host i + hosts/2 (another pod, through the core) and first writes at
i/flows of a second, so the writes are spread evenly over each second. With
more flows than hosts, host h sends flows h, h + hosts, ... (4 on k = 16).

Usage: python3 bench/scale/sparse.py  (rewrites the files beside it)
"""

from pathlib import Path

# (k, flows, simulated seconds): k = 32 is the scenario; k = 16 a
# quicker one for pairing builds, with as many flows (and pending timers).
POINTS = [(32, 4096, 300), (16, 4096, 60)]


def config(k: int, flows: int, seconds: int) -> str:
    hosts = k**3 // 4
    step_ns = 10**9 // flows
    lines = [
        "# Sparse long-horizon benchmark (issue 27), written by bench/scale/sparse.py: edit that.",
        f"# Fat-tree of k = {k} ({hosts} hosts), 320 Kbps links, {flows} flows of one",
        f"# 1460-byte segment a second (11,680 bps) for {seconds} s.",
        "flows = [",
    ]
    for i in range(flows):
        src, start = i % hosts, f'"{i * step_ns}ns"'
        dst = (src + hosts // 2) % hosts
        lines.append(f'  {{ src = {src}, dst = {dst}, start = {start}, rate = "11680bps" }},')
    lines += [
        "]",
        "",
        "[run]",
        "seed = 1",
        f'duration = "{seconds}s"',
        'sample_ports = "none"',
        "",
        "[topology]",
        'kind = "fat-tree"',
        f"k = {k}",
        'link_rate = "320Kbps"',
        'link_delay = "1us"',
        "",
        "[switch]",
        'buffer = "300KB"',
        'marking = "per-queue"',
        'threshold = "65pkt"',
        "",
        "[transport]",
        'cc = "dctcp"',
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    here = Path(__file__).parent
    for k, flows, seconds in POINTS:
        (here / f"sparse_k{k}.toml").write_text(config(k, flows, seconds))
