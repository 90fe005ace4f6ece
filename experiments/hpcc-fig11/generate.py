"""Write experiments/hpcc-fig11/base.toml and fb_hadoop.csv: the HPCC
simulator's 320-host fat-tree and its FB_Hadoop flow sizes, with the switch
as that simulator's run.py sets it at 100 Gb/s (what `ecnlab import-hpcc`
writes for its configs: bench/hpcc_fig11/fig11.py makes them).

Run from the repository root: `python experiments/hpcc-fig11/generate.py`.
The fat-tree, the CDF and the incast's size come from bench/hpcc_fig11/fig11.py,
which writes the same network and flows for both simulators.
"""

import random
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "bench" / "hpcc_fig11"))
import fig11  # noqa: E402  (the comparison's own definitions)

# Two incasts over the 2 ms of arrivals at 30% load: 2% of the bytes as
# fig11.flows() counts them (60 × 500 KB each, at 0.5 and 1.5 ms).
INCASTS, WINDOW_MS = 2, 2.0


def links() -> str:
    rows = []
    for a, b, r in fig11.fat_tree():
        rows.append(f"[{a}, {b}]" if r == fig11.BW else f'[{a}, {b}, "{r}Gbps"]')
    return (
        "[\n" + "".join(f"  {', '.join(rows[i : i + 8])},\n" for i in range(0, len(rows), 8)) + "]"
    )


def incast_flows(seed: int = 1) -> str:
    rng = random.Random(seed)
    out = []
    for k in range(INCASTS):
        dst = rng.randrange(fig11.HOSTS)
        senders = rng.sample([h for h in range(fig11.HOSTS) if h != dst], fig11.INCAST_SENDERS)
        start = (k + 0.5) * WINDOW_MS / INCASTS
        out.append(f"# incast {k + 1}: 60 senders -> host {dst} at {start} ms, 500 KB each")
        for s in senders:
            out.append(
                f'[[flows]]\nsrc = {s}\ndst = {dst}\nservice = 1\nsize = "{fig11.INCAST_BYTES}B"\n'
                f'start = "{start}ms"\n'
            )
    return "\n".join(out)


def main() -> None:
    (HERE / "fb_hadoop.csv").write_text(
        "size_bytes,cdf\n" + "".join(f"{s},{c / 100:g}\n" for s, c in fig11.FB_HADOOP)
    )
    switches = [f'"sw{i}"' for i in range(fig11.HOSTS, fig11.HOSTS + 56)]
    names = (
        "[\n"
        + "".join(f"  {', '.join(switches[i : i + 8])},\n" for i in range(0, len(switches), 8))
        + "]"
    )
    text = f"""# HPCC Fig. 11 (Li et al., SIGCOMM 2019, §5.3): the HPCC simulator's
# 320-host fat-tree (its mix/fat.txt: 20 ToRs of 16 hosts at 100 Gb/s, 20
# aggregation and 16 core switches, 400 Gb/s fabric, 1 us links), 32 MiB
# shared buffers with PFC, FB_Hadoop flows (its traffic_gen CDF,
# fb_hadoop.csv). Written by generate.py; the switch and transport keys are
# what `ecnlab import-hpcc` writes for the simulator's run.py settings at
# 100 Gb/s (bench/hpcc_fig11/fig11.py). Service 1 carries the data (PFC),
# service 0 the ACKs, NACKs and CNPs of the schemes run.py gives
# ACK_HIGH_PRIO 1 (figure.toml's cases), served strictly first.
# The flows below are the incasts of the 30% case; the 50% cases unset them.
[run]
seed = 1
duration = "40ms"

[topology]
kind = "graph"
hosts = {fig11.HOSTS}
switches = 56
link_rate = "100Gbps"
link_delay = "1us"
switch_names = {names}
links = {links()}

[switch]
queues = 2
scheduler = "sp"
marking = "red"
red_min = "400000B"
red_max = "1600000B"
red_pmax = 0.2
red_wq = 1.0
red_spacing = false
red_at_dequeue = true
buffer_policy = "dynamic"
buffer_accounting = "hpcc"
dt_alpha = 1.0
shared_buffer = "32635312B"
buffer = "32635312B"
pfc = true
pfc_priorities = [1]
pfc_xon_offset = "2496B"
pfc_response = "3796B"

[fabric]
red_min = "1600000B"
red_max = "6400000B"

[host]
jitter = "0ns"

[nic]                    # ACKs first at the NICs too (the simulator's NIC)
scheduler = "sp"
marking = "none"

[transport]
mss = 1000
header = 48
rdma_ack_bytes = "1B"

[workload]
kind = "poisson"
load = 0.3
flows = 20000
services = 2
service_mapping = "weighted"
service_weights = [0, 1]
distribution = "fb_hadoop.csv"

{incast_flows()}"""
    (HERE / "base.toml").write_text(text)


if __name__ == "__main__":
    main()
