"""The cross-check's perturbation spread (crosscheck/crosscheck.py,
`--perturb`): both simulators' deterministic runs are run again with the host
links a few nanoseconds longer, and a table gives each metric's range."""

from __future__ import annotations

from test_crosscheck_drops import load_crosscheck


def point(fcts_ms: list[float], timeouts: list[int], drops: int) -> dict:
    """A cached point: 50 KB (small) flows with these FCTs and timeouts."""
    rows = [[50_000, f / 1e3, t] for f, t in zip(fcts_ms, timeouts)]
    at = {"nic": drops // 2, "leaf up": 0, "spine down": 0, "leaf down": drops - drops // 2}
    return {"flows": rows, "wall_s": 1.0, "maxrss_mb": 1.0, "drops": drops, "drops_at": at}


def test_host_delay_is_the_authors_unperturbed_and_whole_ns_otherwise() -> None:
    cc = load_crosscheck()
    assert cc.ns2_host_delay(0) == "0.000020"  # run_simulation_diffserv.py's spelling
    assert cc.ns2_host_delay(1) == "0.000020001"
    assert cc.ns2_host_delay(3) == "0.000020003"
    cfg = cc.ecnlab_config("per-queue", 0.6, 100, 1, "ns2-replay-nic", 2)
    assert cfg["topology"]["host_delay"] == "20002ns"
    assert cc.perturbed(0) == "" and cc.perturbed(2) == "_hd+2ns"


def test_spread_is_the_range_over_the_run_and_its_perturbed_neighbours() -> None:
    cc = load_crosscheck()
    runs = {
        # ns-2: three runs; small timeouts 5, 9, 7 -> 5-9; drops 100-140.
        ("ns-2", 0): point([1.0, 2.0], [2, 3], 100),
        ("ns-2", 1): point([1.0, 4.0], [4, 5], 140),
        ("ns-2", 2): point([1.0, 3.0], [3, 4], 120),
        # ecnlab: only the unperturbed run, so no spread row for it.
        ("ns2-replay-nic", 0): point([1.0, 1.0], [0, 0], 90),
    }

    def have(sim, scheme, load, seed, perturb_ns=0):  # noqa: ANN001, ANN202
        return runs.get((sim, perturb_ns))

    text = "\n".join(cc.spread([(0.6, "per-queue")], [1], ["ns2-replay-nic"], [1, 2], have))
    rows = [r for r in text.splitlines() if r.startswith("| 0.6")]
    assert len(rows) == 1, text
    cells = [c.strip() for c in rows[0].strip("|").split("|")]
    head = [c.strip() for c in text.splitlines()[4].strip("|").split("|")]
    got = dict(zip(head, cells))
    assert got["run"] == "ns-2 (3 runs)"
    assert got["small mean (ms)"] == "1.500–2.500"
    assert got["timeouts"] == "5–9"
    assert got["small timeouts"] == "5–9"
    assert got["drops"] == "100–140"
    assert got["drops: nic"] == "50–70"


def test_no_perturbed_runs_no_table() -> None:
    cc = load_crosscheck()
    assert cc.spread([(0.6, "per-queue")], [1], ["ns2-replay-nic"], [1], lambda *a: None) == []


def test_bad_perturbation_is_refused_naming_the_option(monkeypatch) -> None:  # noqa: ANN001
    cc = load_crosscheck()
    for bad in ("x", "1,-2", "0"):
        monkeypatch.setattr("sys.argv", ["crosscheck.py", "--table-only", "--perturb", bad])
        try:
            cc.main()
        except SystemExit as e:
            assert "--perturb" in str(e.code) and "nanoseconds" in str(e.code), e.code
        else:
            raise AssertionError(f"--perturb {bad} accepted")
