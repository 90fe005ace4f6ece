"""Long-run stability (`make stability`; a benchmark, not a test): run about
10^8 events of MQ-ECN's 1-vs-4 star with 10 us queue samples through
`ecnlab.run(..., out=DIR)`, the way a user runs it, and report the process's
memory when 10% and when 100% of the run is done. Outputs stream to their
files, so memory should be flat: what the simulation holds plus a constant.

Prints, at 10% and at 100% of simulated time (the last progress report
before the files are closed): the resident memory then and the peak so far
(Linux VmRSS and VmHWM), plus the run's events and its queues file. The
peak rises once more after 10%: the second row group's write lands at
slightly different addresses than the first; it does not climb after that.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

import ecnlab

EXPERIMENT = Path(ecnlab.__file__).parent / "experiments" / "mqecn_motivation.toml"
# The star runs about 3.45 million events per simulated second.
EVENTS_PER_SIM_SECOND = 3.45e6


def memory() -> tuple[float, float]:
    """(resident MiB now, peak resident MiB so far)."""
    values = {}
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            key, _, rest = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                values[key] = int(rest.split()[0]) / 1024
    return values["VmRSS"], values["VmHWM"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=float, default=1e8, help="events to run (about)")
    args = parser.parse_args()
    seconds = args.events / EVENTS_PER_SIM_SECOND
    marks: dict[str, tuple[float, float, float]] = {}

    def progress(sim: float, fraction: float) -> None:
        if fraction >= 0.1 and "10%" not in marks:
            marks["10%"] = (sim, *memory())
        last[:] = [sim, *memory()]

    last: list[float] = []

    out = Path(tempfile.mkdtemp(prefix="ecnlab-stability-"))
    try:
        start = time.monotonic()
        result = ecnlab.run(
            EXPERIMENT,
            out=out,
            overrides=[f"run.duration={seconds:.3f}s", "run.sample_interval=10us"],
            progress=progress,
        )
        wall = time.monotonic() - start
        marks["100%"] = (last[0], last[1], last[2])  # the last report, still running
        after = memory()
        sizes = {p.name: p.stat().st_size for p in out.glob("*.parquet")}
    finally:
        shutil.rmtree(out, ignore_errors=True)
    events = result.summary["events"]
    print(f"{events:,} events, {seconds:.1f} s simulated, {wall:.1f} s wall")
    print(f"queues.parquet {sizes['queues.parquet'] / 2**20:.1f} MiB on disk")
    print(f"{'done':>5} {'sim s':>8} {'RSS MiB':>9} {'peak MiB':>9}")
    for name, (sim, rss, peak) in marks.items():
        print(f"{name:>5} {sim:8.2f} {rss:9.1f} {peak:9.1f}")
    print(f"after the files are closed: {after[0]:.1f} MiB resident, peak {after[1]:.1f} MiB")
    print(f"resident memory from 10% to 100%: {marks['100%'][1] - marks['10%'][1]:+.1f} MiB")


if __name__ == "__main__":
    main()
