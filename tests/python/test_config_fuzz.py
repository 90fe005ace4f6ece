"""Config fuzzing: valid experiment files with one to three values mutated,
run as a user would (`ecnlab run FILE --out DIR`), must each end with exit 0
(and a complete run directory, and on stderr nothing but the run's warnings,
those of its summary.json) or exit 2 with one short line on stderr,
never with a panic, an abort, a Python traceback or a run longer than
CASE_TIMEOUT_S. Each case runs in a worker process of its own (see
fuzz_worker.py) so that an abort or a hang is caught, not suffered.

The base files (BASES) are small valid experiments: the MQ-ECN 1-vs-4 star,
a leaf-spine with a Poisson workload and no duration, incast with pings, a
fat-tree with a packet capture, and a WRR star with per-queue thresholds.

Mutations, one to three per case, each at a key or table chosen at random:
- a value replaced by a plausible other (a number ±1, doubled or halved, a
  unit value scaled by 0.1 to 10, another scheme, scheduler, transport,
  topology, preset, distribution or port name, a boolean flipped);
- a value replaced by one of another type: integers (0, 1, -1, 7, 2^31,
  2^32, 2^53, 2^63 - 1, -2^63, 2^64), floats (0.0, -0.0, 0.5, 1e-300,
  1e300, nan, inf), booleans, strings (empty, blank, keywords such as
  "auto", "none", "infinite", short unicode text), lists (empty, one item,
  numbers, strings) and tables (empty, one key);
- a number-with-unit string rescaled by 10^k (k from -18 to 18, skipping
  the range where a valid run would merely be long), its unit swapped
  for another time, rate or size unit, dropped, respelled ("ms " with
  spaces, "MS", "µs", "msec") or its number made negative, zero, NaN or
  1e400;
- a key deleted (a whole table or array entry included);
- an unknown key added (an existing key with a letter dropped, or unicode);
- a list emptied, its first item doubled, or a scalar wrapped in a list;
- a table replaced by a scalar.

Cases found and fixed are kept in test_fuzz_regressions.py.
"""

from __future__ import annotations

import json
import math
import os
import select
import subprocess
import sys
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

import pytest

pytest.importorskip("ecnlab._engine")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

CASES = int(os.environ.get("ECNLAB_FUZZ_CASES", "2000"))
CASE_TIMEOUT_S = 60.0
MAX_LINE = 400

BASES: dict[str, str] = {
    "star": """
[run]
seed = 1
duration = "3ms"
warmup = "1ms"
sample_interval = "10us"
[topology]
kind = "star"
hosts = 3
link_rate = "10Gbps"
link_delay = "25us"
[switch]
buffer = "200pkt"
queues = 2
scheduler = "dwrr"
quantum = "1500B"
marking = "mq-ecn"
threshold = "65pkt"
[transport]
cc = "dctcp"
init_cwnd = 10
min_rto = "5ms"
[[flows]]
src = 0
dst = 2
service = 0
size = "infinite"
[[flows]]
src = 1
dst = 2
service = 1
count = 4
""",
    "leaf_spine": """
[run]
seed = 2
sample_ports = "hosts"
sample_interval = "20us"
goodput_interval = "500us"
[topology]
kind = "leaf-spine"
leaves = 2
spines = 2
hosts_per_leaf = 2
link_rate = "10Gbps"
uplink_rate = "10Gbps"
link_delay = "1us"
host_delay = "10us"
[switch]
buffer = "300KB"
queues = 2
marking = "mq-ecn"
threshold = "30pkt"
[fabric]
marking = "per-port"
[transport]
init_cwnd = 16
[workload]
kind = "poisson"
load = 0.5
flows = 12
services = 2
distribution = "web_search"
""",
    "incast": """
[run]
duration = "10ms"
sample_interval = "100us"
[topology]
kind = "star"
hosts = 5
link_rate = "1Gbps"
link_delay = "10us"
[switch]
buffer = "60pkt"
marking = "per-queue"
threshold = "20pkt"
dequeue_marking = true
[transport]
cc = "dctcp"
min_rto = "10ms"
delayed_ack = 2
[[incast]]
receiver = 0
senders = 3
block = "16KB"
rounds = 3
[[ping]]
src = 1
dst = 0
interval = "500us"
""",
    "fat_tree": """
[run]
duration = "2ms"
pcap = ["edge0:host0"]
sample_ports = ["edge0:host0", "agg0:edge0"]
[topology]
kind = "fat-tree"
k = 4
link_rate = "10Gbps"
link_delay = "1us"
[switch]
queues = 3
scheduler = "sp-dwrr"
sp_queues = 1
marking = "per-queue-min"
threshold = "40pkt"
[transport]
cc = "ecn-star"
[[flows]]
src = 5
dst = 0
service = 1
size = "200KB"
[[flows]]
src = 9
dst = 0
service = 2
size = "30KB"
start = "0.5ms"
""",
    "wrr": """
[run]
duration = "2ms"
lazy_departures = false
max_output = "1GB"
[topology]
kind = "star"
hosts = 4
link_rate = ["10Gbps", "10Gbps", "1Gbps", "10Gbps"]
link_delay = "5us"
[switch]
queues = 2
scheduler = "wrr"
quantum = ["1500B", "3000B"]
marking = "per-queue"
threshold = ["10pkt", "40KB"]
drop_not_ect = true
[transport]
cc = "reno"
slow_start_restart = true
ect_retransmits = false
[[flows]]
src = 0
dst = 3
service = 0
size = "100KB"
stop = "1ms"
[[flows]]
src = 1
dst = 3
service = 1
count = 2
""",
}

INTS = [0, 1, -1, 7, 2**31, 2**32, 2**53, 2**63 - 1, -(2**63), 2**64]
FLOATS = [0.0, -0.0, 0.5, 1e-300, 1e300, math.nan, math.inf]
WORDS = ["", " ", "auto", "all", "none", "hosts", "infinite", "mix", "dwrr", "10Gbps", "65pkt"]
UNITS = ["ps", "ns", "us", "ms", "s", "bps", "Kbps", "Mbps", "Gbps", "Tbps"]
UNITS += ["B", "KB", "MB", "GB", "KiB", "MiB", "pkt", "", "ms ", "MS", "µs", "msec", "%"]
# Scale factors: tiny and huge, but not 10^3..10^6, where a valid file would
# only ask for a long run (hours of simulation are a user's right, not a bug).
EXPONENTS = [-18, -12, -9, -6, -3, -1, 1, 9, 12, 15, 18]
PLAUSIBLE_SCALES = [0.1, 0.5, 2, 10]
# Every name a string key of the schema takes, for swapping one for another.
NAMES = [
    "star", "leaf-spine", "fat-tree", "mqecn", "cedm", "pfabric", "fqcodel",
    "sp", "wrr", "dwrr", "sp-dwrr", "wfq",
    "none", "per-queue", "per-queue-min", "per-port", "per-pool", "mq-ecn",
    "mm-ecn", "a-ecn", "deme-pro", "pmsb", "ml-ecn", "sent", "size",
    "reno", "ecn-star", "dctcp", "poisson", "by-pair", "weighted",
    "web_search", "data_mining", "cache", "hadoop", "mix", "infinite",
    "auto", "all", "hosts", "switch:host0", "leaf0:host1", "edge0:host0",
]  # fmt: skip


# --------------------------------------------------------------------------- TOML out


def _key(k: str) -> str:
    bare = k and all(c.isascii() and (c.isalnum() or c in "_-") for c in k)
    return k if bare else _string(k)


def _string(s: str) -> str:
    out = []
    for c in s:
        if c in '"\\':
            out.append("\\" + c)
        elif ord(c) < 0x20 or ord(c) == 0x7F:
            out.append(f"\\u{ord(c):04x}")
        else:
            out.append(c)
    return '"' + "".join(out) + '"'


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return _string(v)
    if isinstance(v, list):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{_key(k)} = {_value(x)}" for k, x in v.items()) + "}"
    raise TypeError(type(v))


def _is_table_array(v: Any) -> bool:
    return isinstance(v, list) and bool(v) and all(isinstance(x, dict) for x in v)


def toml_text(cfg: dict[str, Any]) -> str:
    lines = [
        f"{_key(k)} = {_value(v)}"
        for k, v in cfg.items()
        if not isinstance(v, dict) and not _is_table_array(v)
    ]
    for k, v in cfg.items():
        if isinstance(v, dict):
            lines.append(f"[{_key(k)}]")
            lines += [f"{_key(kk)} = {_value(vv)}" for kk, vv in v.items()]
        elif _is_table_array(v):
            for item in v:
                lines.append(f"[[{_key(k)}]]")
                lines += [f"{_key(kk)} = {_value(vv)}" for kk, vv in item.items()]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- mutations


def _paths(node: Any, prefix: tuple = ()) -> list[tuple]:
    """Every key and list index in the config, tables and arrays included."""
    out = []
    if isinstance(node, dict):
        for k, v in node.items():
            out.append((*prefix, k))
            out += _paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out.append((*prefix, i))
            out += _paths(v, (*prefix, i))
    return out


def _parent(cfg: Any, path: tuple) -> Any:
    for p in path[:-1]:
        cfg = cfg[p]
    return cfg


def _split_unit(s: str) -> tuple[float, str] | None:
    i = 0
    while i < len(s) and (s[i].isdigit() or s[i] in ".-+eE"):
        i += 1
    try:
        return float(s[:i]), s[i:]
    except ValueError:
        return None


def _odd_values(draw: Any) -> Any:
    simple = st.one_of(
        st.sampled_from(INTS),
        st.sampled_from(FLOATS),
        st.booleans(),
        st.sampled_from(WORDS),
        st.text(max_size=8),
    )
    return draw(
        st.one_of(
            simple,
            st.lists(simple, max_size=3),
            st.dictionaries(st.sampled_from(["x", "src", "kind", "é"]), simple, max_size=1),
        )
    )


def _unit_variant(draw: Any, text: str) -> str:
    parsed = _split_unit(text)
    if parsed is None:
        return draw(st.sampled_from(WORDS))
    number, unit = parsed
    how = draw(st.sampled_from(["scale", "unit", "sign", "number"]))
    if how == "scale":
        return f"{number * 10.0 ** draw(st.sampled_from(EXPONENTS)):g}{unit}"
    if how == "unit":
        return f"{number:g}{draw(st.sampled_from(UNITS))}"
    if how == "sign":
        return f"-{number:g}{unit}"
    return f"{draw(st.sampled_from(['0', 'nan', '1e400', '.', '1.5.2', '０']))}{unit}"


def _plausible(draw: Any, value: Any) -> Any:
    """Another value a user might well write here."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return draw(st.sampled_from([value - 1, value + 1, value * 2, value // 2, 0, 1]))
    if isinstance(value, float):
        return value * draw(st.sampled_from([0.0, 0.5, 2.0, 10.0]))
    if isinstance(value, str):
        parsed = _split_unit(value)
        if parsed is not None and parsed[1]:
            number, unit = parsed
            return f"{number * draw(st.sampled_from(PLAUSIBLE_SCALES)):g}{unit}"
        return draw(st.sampled_from(NAMES))
    if isinstance(value, list) and value:
        return [_plausible(draw, value[0]), *value[1:]]
    return value


def mutate(draw: Any, cfg: dict[str, Any]) -> str:
    paths = _paths(cfg)
    path = draw(st.sampled_from(paths))
    parent = _parent(cfg, path)
    key = path[-1]
    value = parent[key]
    kinds = ["plausible", "plausible", "replace", "rescale", "delete", "add", "list", "scalar"]
    kind = draw(st.sampled_from(kinds))
    if kind == "plausible":
        parent[key] = _plausible(draw, value)
    elif kind == "rescale" and isinstance(value, str):
        parent[key] = _unit_variant(draw, value)
    elif kind == "delete":
        del parent[key]
    elif kind == "add" and isinstance(parent, dict):
        name = str(key)
        typo = name[:-1] if len(name) > 1 else name + "x"
        parent[draw(st.sampled_from([typo, "ünknown", "Seed"]))] = _odd_values(draw)
    elif kind == "list" and isinstance(value, list):
        action = draw(st.sampled_from(["empty", "double"]))
        parent[key] = [] if action == "empty" or not value else [value[0], *value]
    elif kind == "list":
        parent[key] = [value]
    elif kind == "scalar" and isinstance(value, (dict, list)):
        parent[key] = draw(st.sampled_from(INTS + WORDS))
    else:
        parent[key] = _odd_values(draw)
    return f"{kind} {'.'.join(map(str, path))}"


# --------------------------------------------------------------------------- worker


class Worker:
    """The fuzz_worker.py process; restarted after a case kills it."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen[str] | None = None

    def _start(self) -> subprocess.Popen[str]:
        script = Path(__file__).with_name("fuzz_worker.py")
        return subprocess.Popen(
            [sys.executable, str(script)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            bufsize=1,
        )

    def run(self, toml: Path, out: Path) -> dict[str, Any]:
        if self.proc is None or self.proc.poll() is not None:
            self.proc = self._start()
        proc = self.proc
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(json.dumps({"toml": str(toml), "out": str(out)}) + "\n")
        proc.stdin.flush()
        ready, _, _ = select.select([proc.stdout], [], [], CASE_TIMEOUT_S)
        if not ready:
            proc.kill()
            proc.wait()
            return {"hang": True}
        line = proc.stdout.readline()
        if not line:
            return {"died": proc.wait()}
        return json.loads(line)

    def close(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture(scope="module")
def worker() -> Any:
    w = Worker()
    yield w
    w.close()


def check_case(worker: Worker, text: str, where: Path) -> dict[str, Any]:
    """Run one file; assert the outcome is a clean success or one clean line."""
    toml = where / "case.toml"
    toml.write_text(text, encoding="utf-8")
    out = where / "out"
    answer = worker.run(toml, out)
    assert "hang" not in answer, f"no answer within {CASE_TIMEOUT_S} s"
    assert "died" not in answer, f"the process died with status {answer.get('died')}"
    assert answer["traceback"] is None, answer["traceback"]
    assert answer["fd2"] == "", answer["fd2"]
    assert answer["code"] in (0, 2), answer
    if answer["code"] == 0:
        summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
        assert summary.get("complete", True) is True
        # A run that succeeds says nothing on stderr but its warnings (a
        # setting that cannot act), one line each, those of summary.json.
        warned = [f"ecnlab run: warning: {w}" for w in summary.get("warnings", [])]
        assert answer["stderr"].splitlines() == warned, answer["stderr"]
    else:
        err = answer["stderr"]
        assert err.endswith("\n") and err.count("\n") == 1, err
        assert err.startswith("ecnlab: error: ") and len(err) <= MAX_LINE, err
    return answer


def test_fuzz_mutated_experiment_files(worker: Worker, tmp_path: Path) -> None:
    bases = {name: tomllib.loads(text) for name, text in BASES.items()}
    outcomes: list[int] = []

    @settings(
        max_examples=CASES,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(st.data())
    def case(data: st.DataObject) -> None:
        name = data.draw(st.sampled_from(sorted(bases)), label="base")
        cfg = json.loads(json.dumps(bases[name]))
        for _ in range(data.draw(st.integers(1, 3), label="mutations")):
            if not cfg:
                break
            data.draw(st.just(mutate(data.draw, cfg)), label="mutation")
        text = toml_text(cfg)
        data.draw(st.just(text), label="file")
        outcomes.append(check_case(worker, text, tmp_path)["code"])

    case()
    assert len(outcomes) >= CASES
    # Both outcomes occur: the mutations are neither all harmless nor all fatal.
    assert outcomes.count(0) > CASES // 20 and outcomes.count(2) > CASES // 2


@pytest.mark.parametrize("name", sorted(BASES))
def test_base_files_run(worker: Worker, tmp_path: Path, name: str) -> None:
    assert check_case(worker, BASES[name], tmp_path)["code"] == 0
    assert tomllib.loads(toml_text(tomllib.loads(BASES[name]))) == tomllib.loads(BASES[name])


def test_worker_reports_an_abort(worker: Worker, tmp_path: Path) -> None:
    """The harness itself: a process that dies is reported, not hidden."""
    assert os.name == "posix"
    bad = Worker()
    bad._start = lambda: subprocess.Popen(  # type: ignore[method-assign]
        [sys.executable, "-c", "import os, sys; sys.stdin.readline(); os.abort()"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        answer = bad.run(tmp_path / "x.toml", tmp_path / "o")
    finally:
        bad.close()
    assert answer["died"] < 0
