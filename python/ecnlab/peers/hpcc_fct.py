"""Per-flow results side by side with the HPCC simulator's.

The peer writes one line per finished flow to its FCT file: ``sip dip sport
dport size start_ns fct_ns ideal_fct_ns`` (addresses in hex, 0b00XXYY01
for node XXYY), this port with the flow id first. :func:`read_fct` reads
either form into a table with ecnlab's flows-table names (src, dst, size,
start, fct, ideal_fct, slowdown; seconds); :func:`write_fct` writes an
ecnlab run's finished flows in the peer's format; :func:`compare_fct` puts
the two slowdown distributions side by side by flow-size bin.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from ..errors import ConfigError

__all__ = ["SIZE_BINS", "compare_fct", "format_compare", "peer_ip", "read_fct", "write_fct"]

# Flow-size bin edges in bytes (the HPCC paper's FCT plots bin by size;
# these are round decades): (0, 10KB], (10KB, 100KB], (100KB, 1MB], (1MB, ...).
SIZE_BINS = (10_000, 100_000, 1_000_000)
PERCENTILES = (50, 95, 99)


def peer_ip(node: int) -> str:
    """The peer's address of node ``node`` (third.cc's node_id_to_ip), as
    its FCT file prints it."""
    return f"{0x0B000001 + (node // 256) * 0x10000 + (node % 256) * 0x100:08x}"


def _ip_node(text: str) -> int:
    v = int(text, 16)
    return ((v >> 16) & 0xFF) * 256 + ((v >> 8) & 0xFF)


def read_fct(path: str | Path, peer_ids: Sequence[int] | None = None) -> pa.Table:
    """The peer's FCT file as a table (src, dst, size, start, fct, ideal_fct,
    slowdown; times in seconds). ``peer_ids`` (``HpccImport.peer_ids``)
    renumbers the peer's node ids as the import did."""
    rows = [ln.split() for ln in Path(path).read_text(encoding="utf-8").splitlines() if ln.strip()]
    back = {p: i for i, p in enumerate(peer_ids)} if peer_ids is not None else None
    cols: dict[str, list[Any]] = {
        k: [] for k in ("src", "dst", "size", "start", "fct", "ideal_fct")
    }
    for i, r in enumerate(rows, start=1):
        if len(r) not in (8, 9):
            raise ConfigError(
                f"{path} line {i}: {len(r)} columns; expected 8 (or 9 with an id first)"
            )
        r = r[1:] if len(r) == 9 else r
        src, dst = _ip_node(r[0]), _ip_node(r[1])
        if back is not None:
            src, dst = back[src], back[dst]
        cols["src"].append(src)
        cols["dst"].append(dst)
        cols["size"].append(int(r[4]))
        cols["start"].append(int(r[5]) / 1e9)
        cols["fct"].append(int(r[6]) / 1e9)
        cols["ideal_fct"].append(int(r[7]) / 1e9)
    fct, ideal = np.asarray(cols["fct"]), np.asarray(cols["ideal_fct"])
    t = pa.table(cols)
    return t.append_column(
        "slowdown", pa.array(np.where(ideal > 0, fct / np.maximum(ideal, 1e-30), np.nan))
    )


def write_fct(flows: pa.Table, path: str | Path, peer_ids: Sequence[int] | None = None) -> int:
    """Write the finished sized flows of an ecnlab flows table in the peer's
    8-column FCT format (ports: the peer's first ones, 10000 upwards per
    source; dport 100), nodes as the peer's ids when ``peer_ids`` is given.
    Returns the number of lines."""
    d = flows.to_pydict()
    lines = []
    sport: dict[int, int] = {}
    for i in range(len(d["src"])):
        if d["kind"][i] != "sized" or not np.isfinite(d["fct"][i]):
            continue
        src, dst = int(d["src"][i]), int(d["dst"][i])
        if peer_ids is not None:
            src, dst = peer_ids[src], peer_ids[dst]
        p = sport.setdefault(src, 10000)
        sport[src] = p + 1
        lines.append(
            f"{peer_ip(src)} {peer_ip(dst)} {p} 100 {int(d['size'][i])} "
            f"{round(d['start'][i] * 1e9)} {round(d['fct'][i] * 1e9)} "
            f"{round(d['ideal_fct'][i] * 1e9)}"
        )
    Path(path).write_text("\n".join(lines) + ("\n" if lines else ""), encoding="utf-8")
    return len(lines)


def _bins(size: np.ndarray) -> dict[str, np.ndarray]:
    edges = (0, *SIZE_BINS, np.inf)
    out = {}
    for lo, hi in zip(edges[:-1], edges[1:]):
        name = f"{_b(lo)}-{_b(hi)}" if np.isfinite(hi) else f">{_b(lo)}"
        out[name] = (size > lo) & (size <= hi)
    out["all"] = np.ones(len(size), dtype=bool)
    return out


def _b(x: float) -> str:
    for unit, scale in (("MB", 1e6), ("KB", 1e3)):
        if x >= scale:
            return f"{x / scale:g}{unit}"
    return f"{x:g}B"


def _finished(t: pa.Table) -> tuple[np.ndarray, np.ndarray]:
    d = t.to_pydict()
    size = np.asarray(d["size"], dtype=float)
    slow = np.asarray(d["slowdown"], dtype=float)
    keep = np.isfinite(slow) & (size > 0)
    if "kind" in d:
        keep &= np.asarray(d["kind"], dtype=object) == "sized"
    return size[keep], slow[keep]


def compare_fct(ours: pa.Table, peer: pa.Table) -> list[dict[str, Any]]:
    """Slowdown percentiles (50, 95, 99) and flow counts by size bin of an
    ecnlab flows table and a peer FCT table (:func:`read_fct`), one row per
    bin: ``bin``, ``flows_ecnlab``, ``flows_peer``, ``p50_ecnlab``,
    ``p50_peer``, ... (None where a bin has no flow)."""
    rows = []
    (s1, d1), (s2, d2) = _finished(ours), _finished(peer)
    b1, b2 = _bins(s1), _bins(s2)
    for name in b1:
        row: dict[str, Any] = {
            "bin": name,
            "flows_ecnlab": int(b1[name].sum()),
            "flows_peer": int(b2[name].sum()),
        }
        for p in PERCENTILES:
            for who, d, m in (("ecnlab", d1, b1[name]), ("peer", d2, b2[name])):
                row[f"p{p}_{who}"] = float(np.percentile(d[m], p)) if m.any() else None
        rows.append(row)
    return rows


def format_compare(rows: list[dict[str, Any]]) -> str:
    """The rows of :func:`compare_fct` as a Markdown table."""
    cols = ["bin", "flows_ecnlab", "flows_peer"] + [
        f"p{p}_{w}" for p in PERCENTILES for w in ("ecnlab", "peer")
    ]
    out = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for r in rows:
        cells = []
        for c in cols:
            v = r[c]
            cells.append("–" if v is None else f"{v:.2f}" if isinstance(v, float) else str(v))
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"
