"""Run the golden corpus through the installed engine (`make pgo`).

With an instrumented engine this is the profile's training run; with
``--summaries FILE`` it also writes each run's summary, less its wall-clock
fields, so that two builds of the engine can be compared run for run
(``--compare A B``). It goes through the Python engine, not a Rust binary:
profile counts are matched to functions by their symbol names, which differ
between the extension and the workspace's binaries (their dependencies are
built with other features), so a binary's profile would leave the
extension's hot code unprofiled, and so treated as cold. The jobs are
whole Python processes that exit normally: an instrumented engine writes
its counts at exit, which a pool's workers skip (they leave by `os._exit`).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "golden" / "configs"


def _one(path: str) -> tuple[str, dict[str, Any]]:
    from ecnlab.reproduce.carry import WALL_COLUMNS  # what times a run, not what it did
    from ecnlab.runner import run

    result = run(json.loads(Path(path).read_text()))
    summary = {k: v for k, v in result.summary.items() if k not in WALL_COLUMNS}
    return Path(path).stem, summary


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--filter", default="", help="only configs whose name contains this")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--part", type=int, help=argparse.SUPPRESS)  # one job's share
    ap.add_argument("--summaries", type=Path, help="write {config: summary} here")
    ap.add_argument(
        "--compare", nargs=2, type=Path, metavar=("A", "B"), help="compare two --summaries files"
    )
    args = ap.parse_args(argv)
    if args.compare:
        a, b = (json.loads(p.read_text()) for p in args.compare)
        differ = sorted(k for k in a.keys() | b.keys() if a.get(k) != b.get(k))
        for name in differ[:10]:
            print(f"pgo: {name}: the two builds' summaries differ", file=sys.stderr)
        print(f"pgo: {len(a) - len(differ)} of {len(a)} runs identical")
        return 1 if differ else 0
    os.chdir(ROOT)  # the corpus names workload files relative to the repository
    paths = sorted(str(p) for p in CORPUS.glob("*.json") if args.filter in p.stem)
    if args.part is not None:
        mine = paths[args.part :: args.jobs]
        out = dict(_one(p) for p in mine)
    else:
        out = {}
        with tempfile.TemporaryDirectory() as tmp:
            parts = [Path(tmp) / f"{k}.json" for k in range(args.jobs)]
            cmd = [sys.executable, __file__, "--filter", args.filter, "--jobs", str(args.jobs)]
            procs = [
                subprocess.Popen([*cmd, "--part", str(k), "--summaries", str(f)])
                for k, f in enumerate(parts)
            ]
            if any([proc.wait() != 0 for proc in procs]):  # wait for every one
                print("pgo: a training run failed", file=sys.stderr)
                return 1
            for f in parts:
                out.update(json.loads(f.read_text()))
        print(f"pgo: {len(out)} configs run")
    if args.summaries:
        args.summaries.write_text(json.dumps(out, sort_keys=True, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
