"""How a figure declares its seeds (figure.toml's seeds, quick_seeds,
seedless), the errors for a wrong declaration, and that store keys keep
every seed's point apart while figures sharing a sweep share its points."""

from __future__ import annotations

from pathlib import Path

import pytest

from ecnlab.errors import ConfigError
from ecnlab.reproduce import figure_ids, load_figure
from ecnlab.reproduce.figure import MIN_SEEDS, SEED_KEY

FIGURE = """
id = "toy-fig1"
paper = "Toy"
figure = "Fig. 1"
title = "t"
description = "d"
source = "s"
{decl}
[sweep]
base = {{ run = {{ duration = "1ms" }} }}
[sweep.grid]
"workload.load" = [0.5]
{grid}
[[panel]]
title = "p"
metric = "m"
x = "workload.load"
[[expect]]
rule = "value"
paper = 1.0
text = "t"
"""


def toy(tmp_path: Path, decl: str, grid: str = "") -> Path:
    (tmp_path / "README.md").write_text("toy\n")
    (tmp_path / "toy-fig1").mkdir(exist_ok=True)
    (tmp_path / "toy-fig1" / "figure.toml").write_text(FIGURE.format(decl=decl, grid=grid))
    return tmp_path


def test_seeds_become_the_sweep_grid(tmp_path: Path) -> None:
    fig = load_figure("toy-fig1", toy(tmp_path, "seeds = [4, 5, 6]\nquick_seeds = [4, 5]"))
    assert fig.seeds == [4, 5, 6] and fig.quick_seeds == [4, 5] and not fig.seedless
    assert fig.sweep.grid[SEED_KEY] == [4, 5, 6]
    assert [p.params[SEED_KEY] for p in fig.sweep.points()] == [4, 5, 6]
    assert [p.params[SEED_KEY] for p in fig.sweep.quick().points()] == [4, 5]


def test_quick_runs_the_first_seed_by_default(tmp_path: Path) -> None:
    fig = load_figure("toy-fig1", toy(tmp_path, "seeds = [1, 2, 3]"))
    assert fig.quick_seeds == [1]


def test_seedless_runs_once(tmp_path: Path) -> None:
    fig = load_figure("toy-fig1", toy(tmp_path, 'seedless = "a star, no random element"'))
    assert fig.seedless == "a star, no random element" and fig.seeds == []
    assert SEED_KEY not in fig.sweep.grid and len(fig.sweep.points()) == 1


@pytest.mark.parametrize(
    ("decl", "grid", "message"),
    [
        ("", "", "seeds: missing"),
        ("seeds = [1, 2]", "", f"at least {MIN_SEEDS} seeds"),
        ("seeds = [1, 1, 2]", "", "distinct whole numbers"),
        ('seeds = ["a", "b", "c"]', "", "distinct whole numbers"),
        ("seeds = [1, 2, 3]\nquick_seeds = []", "", "quick_seeds"),
        ("seedless = true", "", "expected a string saying why"),
        ('seedless = "why"\nseeds = [1, 2, 3]', "", "one or the other"),
        ("seeds = [1, 2, 3]", '"run.seed" = [1, 2]', "declare a figure's seeds"),
    ],
)
def test_wrong_declarations_are_one_clear_error(
    tmp_path: Path, decl: str, grid: str, message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        load_figure("toy-fig1", toy(tmp_path, decl, grid))


def test_every_figure_declares_its_seeds() -> None:
    for fid in figure_ids():
        fig = load_figure(fid)
        assert fig.seedless or len(fig.seeds) >= MIN_SEEDS, fid


def test_store_keys_hold_the_seed_and_shared_sweeps_share_points() -> None:
    from ecnlab.runner import load_engine
    from ecnlab.sweep import resolve_points

    engine = load_engine()

    def keys(fid: str) -> dict[tuple[int, str], set[str]]:
        spec = load_figure(fid).sweep
        points = spec.points()
        resolve_points(spec, points, engine)
        out: dict[tuple[int, str], set[str]] = {}
        for p in points:
            wl = p.params["workload.distribution"]
            out.setdefault((p.params[SEED_KEY], wl), set()).add(p.key)
        return out

    # Figs. 4-15 of ML-ECN draw one sweep: Fig. 4 has all five workloads and
    # 3 seeds x 2 schedulers x 3 loads x 5 schemes of each; Fig. 5 sweeps only
    # the mix it plots, and its points are Fig. 4's own (one store runs them
    # once, and Fig. 5's record is whole once the mix has run).
    by_wl = keys("mlecn-fig4")
    assert {wl for _, wl in by_wl} == {"mix", "web_search", "cache", "data_mining", "hadoop"}
    assert all(len(ks) == 30 for ks in by_wl.values())
    fig5 = keys("mlecn-fig5")
    assert {wl for _, wl in fig5} == {"mix"}
    assert all(fig5[k] == by_wl[k] for k in fig5)
    # And every other figure's points are Fig. 4's: a figure whose sweep
    # drifted from the shared one would run points of its own.
    for n in range(6, 16):
        fig = keys(f"mlecn-fig{n}")
        assert all(fig[k] == by_wl[k] for k in fig), f"mlecn-fig{n}"
    fig4: dict[int, set[str]] = {}
    for (seed, _), ks in by_wl.items():
        fig4.setdefault(seed, set()).update(ks)
    # Each seed is its own point: no key is shared between seeds.
    seeds = sorted(fig4)
    assert seeds == [1, 2, 3]
    assert not (fig4[1] & fig4[2]) and not (fig4[2] & fig4[3])
