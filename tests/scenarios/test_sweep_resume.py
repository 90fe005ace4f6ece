"""A sweep survives SIGKILL and runs the same on Dask (experiments issue).

3 schemes × 3 loads × 2 seeds on the MQ-ECN §5.2 preset at 500 flows: killed
with SIGKILL once some points are stored and rerun, the store holds all 18
points exactly once, the rerun runs only the missing ones, and every number
equals an uninterrupted sweep's. The same sweep on a 2-worker Dask
LocalCluster gives identical points."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from ecnlab.sweep import load_sweep, run_sweep
from ecnlab.sweep.store import Store
from scenario_kit import check_conservation

SWEEP = """\
name = "resume"
[base]
run = { seed = 1, sample_ports = "none" }
topology = { preset = "mqecn" }
switch = { buffer = "300KB", queues = 8, scheduler = "dwrr", threshold = "65pkt" }
transport = { cc = "dctcp", init_cwnd = 16, min_rto = "5ms" }
workload = { kind = "poisson", load = 0.5, flows = 500, services = 8, distribution = "web_search" }
[grid]
"workload.load" = [0.3, 0.6, 0.9]
"run.seed" = [1, 2]
[[case]]
label = "per-queue K"
"switch.marking" = "per-queue"
[[case]]
label = "per-queue min"
"switch.marking" = "per-queue-min"
[[case]]
label = "MQ-ECN"
"switch.marking" = "mq-ecn"
"""

# Columns that measure the machine, not the simulation.
WALL = ["wall_seconds", "events_per_second"]


def comparable(store: Path) -> pa.Table:
    return pq.read_table(store / "points.parquet").drop(WALL).sort_by("key")


def test_killed_sweep_resumes_without_loss_or_repeats(tmp_path: Path) -> None:
    path = tmp_path / "sweep.toml"
    path.write_text(SWEEP, encoding="utf-8")
    spec = load_sweep(path)

    whole = run_sweep(spec, tmp_path / "whole", workers=2, progress=False)
    assert (whole.total, whole.ran, len(whole.failed)) == (18, 18, 0)
    for rec in Store(tmp_path / "whole").records():
        check_conservation(Store(tmp_path / "whole").summary(rec.key))

    killed = tmp_path / "killed"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "ecnlab",
            "sweep",
            str(path),
            "--out",
            str(killed),
            "--workers",
            "2",
            "-q",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    points = killed / "points"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        done = len(list(points.glob("key=*"))) if points.is_dir() else 0
        if done >= 5:
            break
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    kept = {p.name for p in points.glob("key=*")}
    assert 5 <= len(kept) < 18, len(kept)
    # The workers died with the sweep: nothing more appears.
    time.sleep(1.0)
    assert {p.name for p in points.glob("key=*")} == kept
    # Every kept point is complete (a point folder appears whole or not at all).
    for p in points.glob("key=*"):
        assert (p / "point.json").is_file() and (p / "summary.json").is_file()

    ran: list[str] = []
    again = run_sweep(spec, killed, workers=2, progress=False, on_point=lambda r: ran.append(r.key))
    assert again.already == len(kept) and again.ran == 18 - len(kept) == len(ran)
    assert not {f"key={k}" for k in ran} & kept
    assert len(list(points.glob("key=*"))) == 18
    assert not any((killed / ".tmp").glob("*"))
    assert comparable(killed).equals(comparable(tmp_path / "whole"))


def test_dask_local_cluster_gives_identical_points(tmp_path: Path) -> None:
    path = tmp_path / "sweep.toml"
    path.write_text(SWEEP, encoding="utf-8")
    spec = load_sweep(path)
    local = run_sweep(spec, tmp_path / "local", workers=2, progress=False)
    dask = run_sweep(spec, tmp_path / "dask", workers=2, scheduler="local", progress=False)
    assert local.ran == dask.ran == 18
    assert comparable(tmp_path / "dask").equals(comparable(tmp_path / "local"))
    # Point files too, byte for byte (summary.json apart from its wall-clock keys).
    for key in Store(tmp_path / "local").keys():
        for f in (tmp_path / "local" / "points" / f"key={key}").glob("*.parquet"):
            other = tmp_path / "dask" / "points" / f"key={key}" / f.name
            assert f.read_bytes() == other.read_bytes(), f.name


def _start_sweep(tmp_path: Path, flows: int) -> tuple[subprocess.Popen[str], Path]:
    """The sweep above with ``flows`` flows a point, as a CLI process in a
    session of its own; returns it and its store."""
    path = tmp_path / "sweep.toml"
    path.write_text(SWEEP, encoding="utf-8")
    store = tmp_path / "st"
    proc = subprocess.Popen(
        [sys.executable, "-m", "ecnlab", "sweep", str(path), "--out", str(store), "--workers", "2"]
        + ["--set", f"workload.flows={flows}"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # Ctrl-C reaches the sweep and its workers, as in a terminal
    )
    return proc, store


def test_ctrl_c_keeps_finished_points_and_says_so(tmp_path: Path) -> None:
    proc, store = _start_sweep(tmp_path, 3000)
    points = store / "points"
    deadline = time.monotonic() + 120
    while (
        time.monotonic() < deadline
        and len(list(points.glob("key=*")) if points.is_dir() else []) < 2
    ):
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "interrupted" in err and "finished points are kept" in err
    assert "Traceback" not in err
    kept = list(points.glob("key=*"))
    assert 2 <= len(kept) < 18
    assert all((p / "point.json").is_file() for p in kept)
    assert not any((store / ".tmp").glob("*"))
    # The index lists exactly the kept points.
    assert pq.read_table(store / "points.parquet").num_rows == len(kept)


def test_ctrl_c_does_not_wait_for_the_points_in_flight(tmp_path: Path) -> None:
    # Points of 200,000 flows take minutes each: Ctrl-C must stop the
    # workers rather than wait for them (it used to wait, the pool's shutdown
    # blocking on the points in flight), and the sweep exits with 130.
    proc, store = _start_sweep(tmp_path, 200000)
    time.sleep(8)  # the workers are up and simulating
    assert proc.poll() is None
    sent = time.monotonic()
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    waited = time.monotonic() - sent
    assert proc.returncode == 130, err
    assert waited < 15, f"the sweep took {waited:.1f} s to stop after Ctrl-C"
    assert "finished points are kept" in err and "Traceback" not in err
    assert not (store / "points").is_dir() or not list((store / "points").glob("key=*"))
