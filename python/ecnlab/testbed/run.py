"""`ecnlab testbed`: one experiment on real Linux TCP. Builds the run's
namespaces, starts the switch process and one traffic agent per host,
waits out the duration, stops the switch (which writes its counters) and
writes the run directory; everything is torn down at the end, on an error
and on SIGINT/SIGTERM."""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import secrets
import selectors
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any

from ..runner import ideal_fcts, load_engine, resolve
from ..runner.result import Result
from .netns import Network, available_ccs, check_host
from .outputs import build_summary, build_tables
from .plan import TestbedPlan, make_plan
from .uplink import BUCKET_BYTES, WIRE_OVERHEAD

__all__ = ["run_testbed", "switch_command", "BUCKET_BYTES", "WIRE_OVERHEAD"]


AGENT_START_SECONDS = 60.0
"""How long the agents may take to start and listen (tens of ms on an
idle machine, seconds on a heavily loaded one) before the run fails."""

START_MARGIN = 0.2
"""Time from the last agent's "ready" to the common start: every agent
reads the start time and starts its threads before it."""

_HERE = Path(__file__).resolve().parent


def switch_command() -> list[str]:
    """The command that runs the testbed's switch, its spec path to follow:
    $ECNLAB_SWITCH (a path to an ``ecnlab-switch`` binary, `make switch`)
    when set; else this interpreter running ``ecnlab.switch``, the switch
    built into the engine's extension module, which every install of the
    package has. Raises FileNotFoundError when neither is there."""
    env = os.environ.get("ECNLAB_SWITCH")
    if env:
        if not os.access(env, os.X_OK):
            raise FileNotFoundError(f"ECNLAB_SWITCH={env}: not an executable file")
        return [env]
    engine = load_engine()
    if not hasattr(engine, "switch_main"):
        raise FileNotFoundError(
            "the installed engine has no testbed switch (it predates it): rebuild it "
            "(`make build` in a checkout, or reinstall ecnlab)"
        )
    return [sys.executable, "-m", "ecnlab.switch"]


def _die_with_parent() -> None:
    """In a child, before exec: SIGKILL when the orchestrator dies, so a
    killed run leaves no process behind (PR_SET_PDEATHSIG survives exec)."""
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)


@contextlib.contextmanager
def _signals_as_interrupt() -> Iterator[None]:
    """SIGTERM (and SIGHUP) raise KeyboardInterrupt as Ctrl-C does, so the
    teardown in ``finally`` runs whichever stops the run."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    old = {s: signal.signal(s, handler) for s in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def run_testbed(
    config: str | Path | dict[str, Any],
    out: str | Path,
    overrides: Sequence[str] = (),
    *,
    kernel_cc: str = "reno",
    allow_fast: bool = False,
    log: IO[str] | None = None,
    uplinks: bool = True,
) -> Result:
    """Run ``config`` on the testbed, write its files to ``out`` and return
    the result. Raises ConfigError for what the testbed cannot run,
    TestbedUnavailable where namespaces cannot be made. ``uplinks=False``
    runs the testbed without its hosts' uplinks (a veth hands every frame
    to the switch at once), as it was before they were emulated: for
    comparisons only, since the network is then not the file's."""
    # Every default filled in, as the engine runs it: the plan reads them.
    resolved = resolve(config, overrides)
    plan = make_plan(
        resolved,
        kernel_cc=kernel_cc,
        available_ccs=available_ccs(),
        allow_fast=allow_fast,
        uplinks=uplinks,
    )
    check_host()
    switch_cmd = switch_command()
    for w in plan.warnings:
        print(f"ecnlab testbed: warning: {w}", file=log or sys.stderr)
    run_id = secrets.token_hex(3)
    net = Network(run_id, plan)
    procs: list[subprocess.Popen[str]] = []
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix=f"ecnlab-tb-{run_id}-") as tmp, _signals_as_interrupt():
        work = Path(tmp)
        try:
            net.create(sys.executable)
            switch = _start_switch(switch_cmd, net, plan, resolved, work, procs)
            t0, agents = _run_agents(net, plan, work, procs)
            nics = net.nic_stats()
            switch.send_signal(signal.SIGTERM)
            _, err = switch.communicate(timeout=10)
            if switch.returncode != 0:
                raise RuntimeError(f"ecnlab-switch failed: {err.strip()}")
            report = json.loads((work / "switch-report.json").read_text(encoding="utf-8"))
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
                with contextlib.suppress(Exception):
                    p.wait(timeout=5)
            net.destroy()
    tables = build_tables(plan, agents, report, t0, ideal_fcts(resolved))
    summary = build_summary(plan, tables, agents, report, time.monotonic() - started, run_id, nics)
    result = Result(summary=summary, tables=tables, config=resolved)
    result.write(out)
    return result


def _start_switch(
    command: list[str],
    net: Network,
    plan: TestbedPlan,
    resolved: dict[str, Any],
    work: Path,
    procs: list[subprocess.Popen[str]],
) -> subprocess.Popen[str]:
    spec = {
        "config": resolved,
        "rate_bps": plan.rate_bps,
        "bucket_bytes": BUCKET_BYTES,
        "wire_overhead": WIRE_OVERHEAD,
        "ports": [
            {"ifname": net.switch_if(h), "host": h, "ip": [int(x) for x in plan.ip(h).split(".")]}
            for h in range(plan.hosts)
        ],
        "sample_interval_ps": round(plan.sample_interval * 1e12),
        "delay_ps": round(2 * plan.link_delay * 1e12),
        "report": str(work / "switch-report.json"),
        "realtime": True,
    }
    path = work / "switch.json"
    path.write_text(json.dumps(spec), encoding="utf-8")
    proc = subprocess.Popen(
        ["ip", "netns", "exec", net.switch_ns, *command, str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_die_with_parent,
    )
    procs.append(proc)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if line.strip() != "ready":
        _, err = proc.communicate(timeout=5)
        raise RuntimeError(f"ecnlab-switch did not start: {err.strip() or line.strip()}")
    return proc


def _run_agents(
    net: Network, plan: TestbedPlan, work: Path, procs: list[subprocess.Popen[str]]
) -> tuple[float, list[dict[str, Any]]]:
    """Run every host's agent to the end; the run's start (t0, on
    CLOCK_MONOTONIC) and what each agent wrote. The start is fixed once
    every agent listens (each says "ready"), and sent to them all."""
    ips = [plan.ip(h) for h in range(plan.hosts)]
    agents = []
    for h in range(plan.hosts):
        spec = {
            "host": h,
            "ips": ips,
            "duration": plan.duration,
            "goodput_interval": plan.goodput_interval,
            "flows": [f for f in plan.flows if f["src"] == h],
            "pings": [p for p in plan.pings if p["src"] == h],
            "incast_send": _incast_senders(plan, h),
            "incast_recv": [g for g in plan.incasts if g["receiver"] == h],
        }
        path = work / f"agent{h}.json"
        path.write_text(json.dumps(spec), encoding="utf-8")
        proc = subprocess.Popen(
            [
                "ip",
                "netns",
                "exec",
                net.host_ns(h),
                sys.executable,
                str(_HERE / "agent.py"),
                str(path),
                str(work / f"agent{h}-out.json"),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=_die_with_parent,
        )
        procs.append(proc)
        agents.append(proc)
    _wait_ready(agents)
    t0 = time.monotonic() + START_MARGIN
    for proc in agents:
        assert proc.stdin is not None
        proc.stdin.write(f"{t0!r}\n")
        proc.stdin.flush()
    results = []
    deadline = t0 + plan.duration + 10.0
    for h, proc in enumerate(agents):
        try:
            _, err = proc.communicate(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            raise RuntimeError(f"host {h}'s traffic agent did not finish") from None
        if proc.returncode != 0:
            raise RuntimeError(f"host {h}'s traffic agent failed: {err.strip()[-2000:]}")
        results.append(json.loads((work / f"agent{h}-out.json").read_text(encoding="utf-8")))
    return t0, results


def _wait_ready(agents: list[subprocess.Popen[str]]) -> None:
    """Return once every agent has printed "ready" (it listens); raise if
    one exits or stays silent for AGENT_START_SECONDS."""
    deadline = time.monotonic() + AGENT_START_SECONDS
    with selectors.DefaultSelector() as sel:
        for h, proc in enumerate(agents):
            assert proc.stdout is not None
            sel.register(proc.stdout, selectors.EVENT_READ, h)
        while sel.get_map():
            left = deadline - time.monotonic()
            events = sel.select(timeout=max(0.0, left))
            if not events and left <= 0:
                waiting = sorted(key.data for key in sel.get_map().values())
                raise RuntimeError(
                    f"the traffic agents of hosts {waiting} did not start within "
                    f"{AGENT_START_SECONDS:g} s"
                )
            for key, _ in events:
                h = key.data
                line = key.fileobj.readline()  # type: ignore[union-attr]
                sel.unregister(key.fileobj)
                if line.strip() != "ready":
                    _, err = agents[h].communicate(timeout=5)
                    raise RuntimeError(
                        f"host {h}'s traffic agent failed to start: "
                        f"{err.strip()[-2000:] or line.strip()}"
                    )


def _incast_senders(plan: TestbedPlan, host: int) -> list[dict[str, Any]]:
    """The incast connections host ``host`` sends on, with its own column
    of each round's response jitter."""
    out = []
    for g in plan.incasts:
        for k, (fid, src) in enumerate(zip(g["ids"], g["senders"])):
            if src == host:
                out.append(
                    {
                        "id": fid,
                        "dst": g["receiver"],
                        "service": g["service"],
                        "start": g["start"],
                        "block": g["block"],
                        "jitter": [row[k] for row in g["jitter"]],
                    }
                )
    return out
