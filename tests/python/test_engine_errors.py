"""Bad experiment configs, end to end through the engine: one clear line that
names the key, the value and what is allowed; never a traceback."""

from __future__ import annotations

import copy

import pytest

import ecnlab
from ecnlab.cli import main
from ecnlab.runner import resolve

pytest.importorskip("ecnlab._engine")

BASE = {
    "run": {"duration": "5ms"},
    "topology": {"kind": "star", "hosts": 3, "link_rate": "10Gbps", "link_delay": "25us"},
    "switch": {"queues": 2, "marking": "mq-ecn", "threshold": "65pkt"},
    "flows": [{"src": 0, "dst": 2}],
}

CASES = [
    ("switch.scheduler=dwr", ["switch.scheduler", "dwr", "sp-dwrr"]),
    ("switch.qeues=4", ["qeues", "unknown field", "queues"]),
    ("topology.link_rate=10Gb", ["topology.link_rate", "10Gb", "Gbps"]),
    ("run.duration=1", ["run.duration", "needs a unit"]),
    ("switch.threshold=65", ["switch.threshold", "an amount needs a unit", "65pkt"]),
    ("flows.0.service=5", ["flows[0].service = 5", "services are 0..1"]),
    ("flows.0.dst=7", ["flows[0].dst = 7", "hosts are 0..2"]),
    ("switch.scheduler=sp", ["switch.marking", "mq-ecn", "weighted scheduler", "wfq"]),
    ("switch.sp_queues=2", ["switch.sp_queues = 2", "only sp-dwrr", '"dwrr"']),
    ('switch.quantum=["1500B"]', ["switch.quantum", "one value per queue (2)"]),
    ("switch.queues=65", ["switch.queues = 65", "1 to 64"]),
    ("transport.cc=vegas", ["transport.cc", "vegas", "dctcp"]),
    ("switch.dequeue_marking=yes", ["switch.dequeue_marking", "yes"]),
    ("run.warmup=1s", ["run.warmup", "shorter than run.duration"]),
    ("topology.ecmp=random", ["topology.ecmp", "random", "per-flow", "per-packet"]),
    ("switch.buffer=200pkts", ["switch.buffer", "200pkts", '"200pkt"', '"200 packets"']),
    ("switch.buffer=200 pkt s", ["switch.buffer", "200 pkt s", "packets"]),
    ("switch.threshold=65 packets", ["switch.threshold", "65 packets", 'write "65pkt"']),
    ("fabric.buffer=2.5 packets", ["fabric.buffer", "2.5 packets", "whole number"]),
    # Issue 28: a value of the wrong kind is told in words, for every key.
    (
        'switch.queues="4"',
        ['switch.queues = "4": must be a whole number', "1 to 64", "without quotes: 4"],
    ),
    ("switch.mqecn_beta=yes", ['switch.mqecn_beta = "yes": must be a number', "(0, 1)"]),
    # Issue 28: a misspelled name of any closed set gets "did you mean".
    ("switch.marking=mqecn", ["switch.marking", "mqecn", "did you mean `mq-ecn`?"]),
    ("switch.qdisc=fq_codel", ["switch.qdisc", "did you mean `fq-codel`?"]),
    ("transport.cc=dctpc", ["transport.cc", "did you mean `dctcp`?"]),
    ("transport.profile=pfabrc", ["transport.profile", "did you mean `pfabric`?"]),
    ("topology.ecmp=perflow", ["topology.ecmp", "did you mean `per-flow`?"]),
    ("switch.recipe=mlecn", ["switch.recipe", "did you mean `ml-ecn`?"]),
    # Issue 28: a key of another table is pointed there.
    ('switch.stages=["100KB"]', ["switch.stages", "it is a key of [host]: host.stages"]),
]


@pytest.mark.parametrize(("override", "fragments"), CASES)
def test_bad_value_gets_one_clear_line(override: str, fragments: list[str]) -> None:
    with pytest.raises(ecnlab.ConfigError) as err:
        ecnlab.run(copy.deepcopy(BASE), overrides=[override], progress=False)
    msg = str(err.value)
    assert "\n" not in msg
    for f in fragments:
        assert f in msg, msg


def test_missing_section_is_named() -> None:
    cfg = copy.deepcopy(BASE)
    del cfg["topology"]
    with pytest.raises(
        ecnlab.ConfigError, match=r"^\[topology\]: missing; every experiment has one"
    ):
        ecnlab.run(cfg, progress=False)


def test_cli_reports_engine_error_in_one_line(tmp_path, capsys) -> None:
    path = tmp_path / "exp.toml"
    path.write_text(
        '[run]\nduration = "5ms"\n[topology]\nkind = "star"\nhosts = 3\n'
        'link_rate = "10Gbps"\nlink_delay = "25us"\n[switch]\nbufer = "1pkt"\n'
    )
    code = main(["run", str(path), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert len(err) == 1 and err[0].startswith("ecnlab: error: switch.bufer: unknown field"), err
    assert not (tmp_path / "out").exists()


WORKLOAD = {**copy.deepcopy(BASE), "workload": {"kind": "poisson", "flows": 10}}
del WORKLOAD["flows"]


def test_a_load_given_as_a_percentage_names_the_key_and_the_fraction() -> None:
    # Issue 28: serde's "invalid type: string, expected f64" no more; nothing
    # new is accepted, the message says what to write instead.
    cfg = copy.deepcopy(WORKLOAD)
    cfg["workload"]["load"] = "60%"
    with pytest.raises(ecnlab.ConfigError) as err:
        ecnlab.validate(cfg)
    assert str(err.value) == (
        'workload.load = "60%": must be a number (allowed: (0, 1]); for 60% write 0.6 (a fraction)'
    )


def test_a_misspelled_distribution_gets_did_you_mean() -> None:
    cfg = copy.deepcopy(WORKLOAD)
    cfg["workload"].update(load=0.5, distribution="datamining")
    with pytest.raises(ecnlab.ConfigError) as err:
        ecnlab.validate(cfg)
    assert str(err.value).endswith("; did you mean `data_mining`?"), str(err.value)


def test_an_incomplete_scheme_names_its_recipe_which_completes_it() -> None:
    # Issue 28: ML-ECN's marking alone lacks its classes and stages; the
    # refusal names the recipe, and the recipe gives the paper's set-up.
    cfg = copy.deepcopy(BASE)
    with pytest.raises(ecnlab.ConfigError) as err:
        ecnlab.validate(
            {**cfg, "switch": {"queues": 2, "marking": "ml-ecn", "threshold": "65pkt"}},
        )
    assert 'or set switch.recipe = "ml-ecn" for the paper\'s set-up' in str(err.value)
    resolved = resolve({**cfg, "switch": {"recipe": "ml-ecn", "threshold": "65pkt"}})
    assert resolved["switch"]["recipe"] == "ml-ecn"
    assert resolved["switch"]["quantum"] == ["6000B"] * 3 + ["3000B"] * 3 + ["1500B"] * 2
    assert resolved["host"]["stages"] == ["100000B", "10000000B"]
