"""Most senders with goodput >= 600 Mbps per (request gap, jitter, scheme),
rounds 3-50 as the figure counts them, from a store filled by spread.toml."""

from __future__ import annotations

import sys

from ecnlab.reproduce.metrics import PointView, metric
from ecnlab.sweep.store import Store

store = Store(sys.argv[1], create=False)
table: dict[tuple[str, str, str], dict[int, float]] = {}
for rec in store.records():
    p = rec.params
    g = metric(PointView(store, rec.key, rec.row()), "incast_aggregate_gbps", {"skip_rounds": 2})
    key = (p["incast.0.request_gap"], p["incast.0.response_jitter"], rec.case)
    table.setdefault(key, {})[p["incast.0.senders"]] = g
print("| request gap | jitter | DCTCP | DCTCP dq | DCTCP h=0 |")
print("|---|---|---|---|---|")
for gap in ("0us", "3us", "6us"):
    for jitter in ("0us", "100us"):
        cells = []
        for case in ("DCTCP", "DCTCP dq", "DCTCP h=0"):
            best = 0
            for n, g in sorted(table[(gap, jitter, case)].items()):
                if g < 0.6:
                    break
                best = n
            above = [n for n, g in sorted(table[(gap, jitter, case)].items()) if g >= 0.6]
            cells.append(f"{best} (≥ 600 Mbps at {', '.join(map(str, above)) or 'none'})")
        print(f"| {gap} | {jitter} | " + " | ".join(cells) + " |")
