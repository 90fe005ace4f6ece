"""Config loading, overrides and hashing (no engine needed)."""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from typing import Any

import pytest

import ecnlab
from ecnlab.config import (
    apply_override,
    config_hash,
    config_to_json,
    load_config,
    parse_override,
)

BASE_TOML = """\
[run]
seed = 1
duration = "1s"

[switch]
queues = 2
marking = "per-queue"
quantum = "1500B"

[[flows]]
src = 0
dst = 2
count = 1

[[flows]]
src = 1
dst = 2
count = 4
"""


@pytest.fixture
def base_file(tmp_path: Path) -> Path:
    path = tmp_path / "exp.toml"
    path.write_text(BASE_TOML, encoding="utf-8")
    return path


# --------------------------------------------------------------------------- values


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("switch.queues=4", 4),
        ("switch.queues = 4", 4),
        ("run.frac=0.5", 0.5),
        ("run.big=1e3", 1000.0),
        ("switch.dequeue_marking=true", True),
        ("switch.dequeue_marking=false", False),
        ('switch.marking="per-port"', "per-port"),
        ("switch.marking='per-port'", "per-port"),
        ("switch.marking=mq-ecn", "mq-ecn"),
        ("switch.threshold=65pkt", "65pkt"),
        ("topology.link_rate=10Gbps", "10Gbps"),
        ('switch.quantum=["1500B","6000B"]', ["1500B", "6000B"]),
        ("switch.weights=[1, 2, 3]", [1, 2, 3]),
        ("switch.pool={size = 4, name = 'a'}", {"size": 4, "name": "a"}),
        ("run.note=two words", "two words"),
        ("run.eq=a=b", "a=b"),
        ("run.x=inf", "inf"),
        ("run.x=nan", "nan"),
        ("run.x=2024-01-02", "2024-01-02"),
    ],
)
def test_override_value_types(text: str, expected: Any) -> None:
    _, value = parse_override(text)
    assert value == expected
    assert type(value) is type(expected)


def test_override_path_is_split_on_dots() -> None:
    assert parse_override("a.b.c=1") == (["a", "b", "c"], 1)
    assert parse_override(" flows . 0 . count =3") == (["flows", "0", "count"], 3)


# --------------------------------------------------------------------------- applying


def test_overrides_apply_in_order(base_file: Path) -> None:
    cfg = load_config(
        base_file,
        ["switch.marking=per-port", "switch.queues=8", "switch.marking=mq-ecn"],
    )
    assert cfg["switch"]["marking"] == "mq-ecn"
    assert cfg["switch"]["queues"] == 8
    assert cfg["run"] == {"seed": 1, "duration": "1s"}


def test_override_indexes_array_of_tables(base_file: Path) -> None:
    cfg = load_config(base_file, ["flows.1.count=3", "flows.0.size=infinite"])
    assert cfg["flows"][0] == {"src": 0, "dst": 2, "count": 1, "size": "infinite"}
    assert cfg["flows"][1]["count"] == 3


def test_override_replaces_array_element_and_whole_array(base_file: Path) -> None:
    cfg = load_config(base_file, ['switch.quantum=["1500B", "3000B"]', "switch.quantum.1=6000B"])
    assert cfg["switch"]["quantum"] == ["1500B", "6000B"]


def test_override_creates_missing_tables(base_file: Path) -> None:
    cfg = load_config(base_file, ["transport.cc=dctcp", "a.b.c.d=1"])
    assert cfg["transport"] == {"cc": "dctcp"}
    assert cfg["a"] == {"b": {"c": {"d": 1}}}


def test_digit_key_in_a_table_is_a_key() -> None:
    cfg: dict[str, Any] = {"weights": {}}
    apply_override(cfg, "weights.0=3")
    assert cfg == {"weights": {"0": 3}}


def test_single_string_override_is_accepted(base_file: Path) -> None:
    cfg = load_config(base_file, "switch.queues=3")  # type: ignore[arg-type]
    assert cfg["switch"]["queues"] == 3


@pytest.mark.parametrize(
    ("override", "fragment"),
    [
        ("switch.queues", "missing '='"),
        ("=4", "empty key"),
        ("  =4", "empty key"),
        ("switch..queues=4", "empty part"),
        (".queues=4", "empty part"),
        ("switch.queues=", "missing value"),
        ("flows.2.count=3", "index 2 is out of range; flows has 2 entries"),
        ("flows.99=3", "index 99 is out of range"),
        ("flows.x.count=3", "flows is an array"),
        ("flows.-1.count=3", "flows is an array"),
        ("run.seed.x=1", "run.seed is a number"),
        ("switch.marking.kind=x", "switch.marking is a string"),
        ("flows.0.count.x=1", "flows.0.count is a number"),
        ("switch.quantum.0=1", "switch.quantum is a string"),
    ],
)
def test_malformed_override_names_itself(base_file: Path, override: str, fragment: str) -> None:
    with pytest.raises(ecnlab.ConfigError) as info:
        load_config(base_file, [override])
    message = str(info.value)
    assert repr(override) in message
    assert fragment in message
    assert "\n" not in message


def test_index_into_non_table_array_element() -> None:
    cfg: dict[str, Any] = {"switch": {"quantum": ["1500B", "3000B"]}}
    with pytest.raises(ecnlab.ConfigError, match=r"switch\.quantum\.1 is a string"):
        apply_override(cfg, "switch.quantum.1.x=2")


def test_empty_array_index_error() -> None:
    with pytest.raises(ecnlab.ConfigError, match="flows has 0 entries"):
        apply_override({"flows": []}, "flows.0.count=1")
    with pytest.raises(ecnlab.ConfigError, match="flows is an empty array"):
        apply_override({"flows": []}, "flows.x.count=1")


def test_config_error_is_a_value_error() -> None:
    assert issubclass(ecnlab.ConfigError, ValueError)


# --------------------------------------------------------------------------- sources


def test_dict_source_is_deep_copied() -> None:
    source = {"switch": {"quantum": ["1500B"]}, "flows": [{"count": 1}]}
    cfg = load_config(source, ["flows.0.count=5", "switch.quantum.0=3000B"])
    assert source == {"switch": {"quantum": ["1500B"]}, "flows": [{"count": 1}]}
    assert cfg["flows"][0]["count"] == 5
    cfg["switch"]["quantum"].append("x")
    assert source["switch"]["quantum"] == ["1500B"]


def test_str_and_path_sources_agree(base_file: Path) -> None:
    assert load_config(str(base_file)) == load_config(base_file)


def test_missing_file_names_the_file(tmp_path: Path) -> None:
    missing = tmp_path / "nope.toml"
    with pytest.raises(ecnlab.ConfigError, match=r"nope\.toml: no such file"):
        load_config(missing)


def test_directory_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(ecnlab.ConfigError, match="is a directory"):
        load_config(tmp_path)


def test_toml_syntax_error_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.toml"
    path.write_text('[run]\nseed = 1\nduration "1s"\n', encoding="utf-8")
    with pytest.raises(ecnlab.ConfigError) as info:
        load_config(path)
    message = str(info.value)
    assert str(path) in message
    assert "line 3" in message
    assert "\n" not in message


def test_duplicate_key_is_a_syntax_error(tmp_path: Path) -> None:
    path = tmp_path / "dup.toml"
    path.write_text("[run]\nseed = 1\nseed = 2\n", encoding="utf-8")
    with pytest.raises(ecnlab.ConfigError, match=r"dup\.toml: invalid TOML.*line 3"):
        load_config(path)


def test_non_utf8_file(tmp_path: Path) -> None:
    path = tmp_path / "latin.toml"
    path.write_bytes(b'[run]\nname = "\xe9"\n')
    with pytest.raises(ecnlab.ConfigError, match="not valid UTF-8"):
        load_config(path)


def test_bad_source_type() -> None:
    with pytest.raises(TypeError):
        load_config(42)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- JSON and hash


def test_config_to_json_round_trips(base_file: Path) -> None:
    cfg = load_config(base_file, ['switch.quantum=["1500B","6000B"]'])
    assert json.loads(config_to_json(cfg)) == cfg


@pytest.mark.parametrize("bad", [math.inf, math.nan])
def test_config_to_json_rejects_non_finite(bad: float) -> None:
    with pytest.raises(ecnlab.ConfigError, match=r"run\.x"):
        config_to_json({"run": {"x": bad}})


def test_config_to_json_rejects_toml_datetimes(tmp_path: Path) -> None:
    path = tmp_path / "date.toml"
    path.write_text("[run]\nwhen = 2024-01-02T03:04:05Z\n", encoding="utf-8")
    cfg = load_config(path)
    with pytest.raises(ecnlab.ConfigError, match=r"run\.when"):
        config_to_json(cfg)


def test_config_hash_is_stable_and_order_independent() -> None:
    a = {"run": {"seed": 1, "duration": "1s"}, "switch": {"queues": 2}}
    b = {"switch": {"queues": 2}, "run": {"duration": "1s", "seed": 1}}
    digest = config_hash(a)
    assert digest == config_hash(b)
    assert len(digest) == 64
    assert all(c in "0123456789abcdef" for c in digest)
    # pinned: sha256 of the compact, key-sorted JSON; changing the canonical form
    # would orphan every stored sweep result
    canonical = b'{"run":{"duration":"1s","seed":1},"switch":{"queues":2}}'
    assert digest == hashlib.sha256(canonical).hexdigest()
    assert digest == "39654b4d4b9a543f3b398aebe176bca90b64e626b60a93d2517eaa3fe754633a"
    assert config_hash({"run": {"seed": 2, "duration": "1s"}, "switch": {"queues": 2}}) != digest
    assert config_hash({"x": 1}) != config_hash({"x": 1.0})
    assert config_hash({"x": [1, 2]}) != config_hash({"x": [2, 1]})


def test_config_hash_matches_after_file_round_trip(base_file: Path) -> None:
    cfg = load_config(base_file, ["switch.marking=mq-ecn"])
    same = load_config(cfg)
    assert config_hash(cfg) == config_hash(same)


def test_workload_csv_paths_follow_the_experiment_file(tmp_path: Path) -> None:
    # A user's CDF file named next to the experiment resolves there, not in
    # the working directory; built-in names and absolute paths are kept.
    exp = tmp_path / "exp" / "e.toml"
    exp.parent.mkdir()
    exp.write_text(
        "[workload]\n"
        'distribution = "sizes.csv"\n'
        'distributions = ["web_search", "/abs/x.csv", "d/y.csv"]\n'
    )
    cfg = load_config(exp)
    assert cfg["workload"]["distribution"] == str(exp.parent.resolve() / "sizes.csv")
    assert cfg["workload"]["distributions"] == [
        "web_search",
        "/abs/x.csv",
        str(exp.parent.resolve() / "d/y.csv"),
    ]
