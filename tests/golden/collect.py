"""Write the golden corpus's configs (tests/golden/configs/NAME.json), each
the engine's resolved form of one run:

- ``bench-*``: every file under bench/ (the ``make bench`` points);
- ``fig-ID-NN``: every point of every figure's ``--quick`` sweep under
  experiments/ (a point two figures share is kept once, under the first);
- ``small-*``: tests/golden/small/*.toml, small runs that between them use
  every scheme, scheduler, discipline, transport, offload and application.

Run it from the repository root after adding a figure, a bench point or a
small config, then ``make golden-update`` to fingerprint the new ones
(``ecnlab-golden write --filter NAME`` does one). The corpus keeps no
absolute path: a workload CSV is named relative to the repository.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ecnlab.config import config_to_json, load_config
from ecnlab.reproduce import figure_ids, load_figure
from ecnlab.runner import load_engine

ROOT = Path(__file__).resolve().parents[2]
OUT = Path(__file__).resolve().parent / "configs"


def resolved(engine, cfg: dict) -> dict:
    doc = json.loads(engine.resolve(config_to_json(cfg)))
    names = (doc.get("workload") or {}).get("distributions") or []
    for i, name in enumerate(names):
        if isinstance(name, str) and name.startswith(str(ROOT) + "/"):
            names[i] = name[len(str(ROOT)) + 1 :]
    return doc


def main() -> int:
    engine = load_engine()
    corpus: dict[str, dict] = {}
    for path in sorted((ROOT / "bench").glob("*.toml")):
        corpus[f"bench-{path.stem}"] = resolved(engine, load_config(path))
    seen: set[str] = set()
    for fid in figure_ids():
        spec = load_figure(fid).sweep.quick()
        for p in spec.points():
            doc = resolved(engine, p.config)
            text = json.dumps(doc, sort_keys=True)
            if text in seen:
                continue
            seen.add(text)
            corpus[f"fig-{fid}-{p.index:02d}"] = doc
    for path in sorted((Path(__file__).resolve().parent / "small").glob("*.toml")):
        corpus[f"small-{path.stem}"] = resolved(engine, load_config(path))
    OUT.mkdir(exist_ok=True)
    for old in OUT.glob("*.json"):
        if old.stem not in corpus:
            old.unlink()
    for name, doc in corpus.items():
        (OUT / f"{name}.json").write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    print(f"{len(corpus)} configs in {OUT.relative_to(ROOT)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
